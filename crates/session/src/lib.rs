//! toolbelt-session: one place that turns "these roots, these settings, this approval mode, this
//! front end" into a ready [`Scheduler`]. Every front end (`toolbelt call`, `run`, `mcp`) and any
//! program that embeds toolbelt builds its sessions here; the binary only parses arguments,
//! talks to the terminal and picks exit codes.
//!
//! Why a crate of its own: assembling a session needs the built-in tools (`toolbelt-tools`) and
//! the MCP client (`toolbelt-mcp`), which the engine (`toolbelt-core`) must not know about, and
//! embedders want it without the command line's dependencies (clap, the terminal, the agent).
//!
//! - [`builder`]: [`SessionBuilder`], the layers in order: defaults < settings files (user,
//!   then project; project keys that run commands only in trusted folders) < environment <
//!   the front end's overrides; policies from every tier plus settings-derived rules; built-in,
//!   discovered and MCP tools in one registry; hooks; the scheduler
//! - [`session`]: [`Session`], what was built, with live root changes and shutdown
//! - [`settings`]: settings files and folder trust for a root
//! - [`error`]: why a session could not be built ([`SessionError`])
//! - [`lint`]: every problem in the policy a session would load, without running anything

pub mod builder;
pub mod error;
pub mod lint;
pub mod sandbox;
pub mod session;
pub mod settings;

pub use builder::{SessionBuilder, SettingsSources};
pub use error::SessionError;
pub use session::Session;
pub use settings::{load_settings, load_settings_from, primary_root, root_trusted};
pub use toolbelt_core::Scheduler;
