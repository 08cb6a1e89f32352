//! Everything about the programs toolbelt starts, in one place:
//!
//! - [`mod@env`]: the environment a child gets ([`child_env`]);
//! - [`spawn`]: the one way to start a program ([`Launch`]): a session of its own under a
//!   [`reaper`], and the [`sandbox`] when one is set;
//! - [`tree`]: finding and stopping everything a command started;
//! - [`harden`]: nothing of toolbelt's own secrets readable by its children through `/proc`.
//!
//! Shell commands, background commands, hooks and discovered tools all start through
//! [`Launch`]; the house test checks that no other code builds a command.

pub mod allocator;
pub mod env;
#[cfg(unix)]
pub mod harden;
pub mod reaper;
pub mod sandbox;
pub mod spawn;
pub mod tree;

pub use env::{ChildPurpose, EnvRedaction, child_env};
#[cfg(unix)]
pub use harden::harden_process;
pub use sandbox::{Profile, Sandbox, SandboxError};
pub use spawn::{ChildEnv, ExitPipe, ForeignSpawn, Launch, Spawned};
