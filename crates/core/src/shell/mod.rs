//! Understanding shell commands, for policy and for the shell tool: the bash grammar
//! ([`parse`]), a shell-quote style word splitter with wrapper stripping and the
//! command-substitution guard ([`words`]), and the "known safe" / "dangerous" command lists
//! ([`safety`]).

pub mod assignments;
pub mod expansion;
pub mod parse;
pub mod safety;
pub mod words;

pub use parse::{CommandDetail, ParsedCommand, command_roots, has_redirection, parse_command};
pub use words::{has_command_substitution, split_words, strip_shell_wrapper};

/// The tool names that are shell tools for policy purposes.
pub use crate::names::SHELL_TOOL_NAMES;
