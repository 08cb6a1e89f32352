//! toolbelt-core: the engine that runs a model's tool calls.
//!
//! - [`tool`]: the `Tool` / `Invocation` traits, declarations, model families
//! - [`result`]: `ToolResult`, content parts, upstream's error types
//! - [`schema`]: argument validation with Ajv-compatible messages
//! - [`names`]: tool names the engine and policy share (aliases, the MCP prefix, shell names)
//! - [`registry`]: the read-only tool registry, legacy aliases, "did you mean"
//! - [`scheduler`]: build -> policy -> confirmation -> execution, with deadlines and cancellation
//! - [`shell`]: shell commands parsed with the bash grammar, wrappers, safe and dangerous lists
//! - [`policy`]: rules, the TOML loader, the pure `evaluate` function, approval modes
//! - [`approver`]: the confirmation trait and its outcomes
//! - [`response`]: what the model receives for a call
//! - [`workspace`]: roots, path rules, sensitive paths, the shared ignore service
//! - [`ledger`]: what the model has seen of each file (stale-edit detection)
//! - [`config`]: typed settings
//! - [`truncate`]: bounded output with the full text saved to a file
//! - [`timings`]: where a process spends its time (`TOOLBELT_TIMINGS`)
//! - [`testing`]: small tools for tests and benchmarks

#![warn(missing_docs)]

pub mod approver;
pub mod commit;
pub mod config;
pub mod editor;
pub mod files;
pub mod hooks;
pub mod json_in;
pub mod kind;
pub mod ledger;
pub mod limits;
pub mod memory;
pub mod mode;
pub mod model;
pub mod names;
pub mod policy;
pub mod process;
pub mod registry;
pub mod response;
pub mod result;
pub mod scheduler;
pub mod schema;
pub mod settings;
pub mod shell;
pub mod spelling;
pub mod sync;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod timings;
pub mod tls;
pub mod tool;
pub mod truncate;
pub mod trust;
pub mod untrusted;
pub mod url_secrets;
pub mod workspace;

pub use approver::{Approver, ConfirmationRequest, Outcome};
pub use config::Config;
pub use kind::Kind;
pub use registry::{Registry, RegistryBuilder};
pub use result::{Content, ErrorType, Part, ToolError, ToolResult};
pub use scheduler::{CallRequest, CallState, CompletedCall, Scheduler, SchedulerOptions};
pub use tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};
pub use workspace::Workspace;
