//! Understanding shell commands, for policy and for the shell tool: the bash grammar
//! ([`parse`]), a shell-quote style word splitter with wrapper stripping and the
//! command-substitution guard ([`words`]), the "known safe" command list ([`safety`]) and the
//! dangerous-command table ([`danger`]).

pub mod assignments;
pub mod danger;
pub mod expansion;
pub(crate) mod git;
pub mod parse;
pub mod place;
pub mod safety;
pub mod words;

pub use parse::{
    CommandDetail, ParsedCommand, command_roots, has_redirection, parse_command,
    redirection_targets,
};
pub use words::{has_command_substitution, split_words, strip_shell_wrapper};

/// The tool names that are shell tools for policy purposes.
pub use crate::names::SHELL_TOOL_NAMES;
