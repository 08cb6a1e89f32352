//! What every program toolbelt starts gets: one place for a child's environment (see [`mod@env`]).
//! Shell commands, background commands, hooks, discovered tools and MCP stdio servers all take
//! their environment from [`child_env`]; the house test checks that no other code starts a
//! program with the inherited environment.

pub mod env;

pub use env::{ChildPurpose, EnvRedaction, child_env};
