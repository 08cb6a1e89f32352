//! Everything about the programs toolbelt starts, in one place:
//!
//! - [`mod@env`]: the environment a child gets ([`child_env`]);
//! - [`spawn`]: the one way to start a program ([`Launch`]): a session of its own under a
//!   [`reaper`], and the [`sandbox`] when one is set;
//! - [`tree`]: finding and stopping everything a command started.
//!
//! Shell commands, background commands, hooks and discovered tools all start through
//! [`Launch`]; the house test checks that no other code builds a command.

pub mod env;
pub mod reaper;
pub mod sandbox;
pub mod spawn;
pub mod tree;

pub use env::{ChildPurpose, EnvRedaction, child_env};
pub use sandbox::{Profile, Sandbox, SandboxError};
pub use spawn::{ChildEnv, ExitPipe, ForeignSpawn, Launch, Spawned};
