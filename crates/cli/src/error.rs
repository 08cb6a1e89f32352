//! [`CliError`]: a message for stderr and the exit status that goes with it. Commands return it
//! with `?`; `main` prints `toolbelt: <message>` and exits with its code.

use crate::commands::{EXIT_TOOL_FAILED, EXIT_USAGE};

/// A command that ends in an error: what to say and which exit status to use.
#[derive(Debug)]
pub struct CliError {
    /// The exit status (see the README's exit codes).
    pub code: i32,
    /// The message, without the `toolbelt: ` prefix.
    pub message: String,
}

impl CliError {
    /// The command line or its setting up is wrong (exit 2): bad arguments, unusable settings,
    /// a root that is not a folder.
    pub fn usage(message: impl std::fmt::Display) -> Self {
        Self { code: EXIT_USAGE, message: message.to_string() }
    }

    /// The work itself failed (exit 1).
    pub fn failed(message: impl std::fmt::Display) -> Self {
        Self { code: EXIT_TOOL_FAILED, message: message.to_string() }
    }
}

impl From<toolbelt_session::SessionError> for CliError {
    /// A session that cannot be built is a usage error, with every cause named.
    fn from(e: toolbelt_session::SessionError) -> Self {
        Self::usage(toolbelt_core::result::error_chain(&e))
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        Self::failed(format!("{e:#}"))
    }
}

impl From<serde_json::Error> for CliError {
    fn from(e: serde_json::Error) -> Self {
        Self::failed(e)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        Self::failed(e)
    }
}

/// What commands return: an exit status, or an error that carries its own.
pub type CliResult = Result<i32, CliError>;
