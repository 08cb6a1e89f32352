//! The shell tools: `run_shell_command` and the background-process tools, sharing one
//! [`BackgroundRegistry`] per session.
//!
//! - [`spawn`]: bash in its own session, the environment, stopping a process group
//! - [`running`]: watching a command (output, exit, cancellation, inactivity, prompts)
//! - [`output`]: bounded capture, binary detection, ANSI stripping
//! - [`background`]: the session's background processes

pub mod background;
pub mod list_background_processes;
pub mod output;
pub mod read_background_output;
pub mod run_shell_command;
pub mod running;
pub mod spawn;

pub use background::BackgroundRegistry;
