//! Integration tests of the built-in tools, run through the engine's registry as the
//! scheduler runs them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(unix)]
mod activate_skill;
mod confined;
mod declarations;
mod discovered;
mod editor;
mod escape;
mod generated;
mod glob;
mod grep_fidelity;
mod grep_search;
mod harness;
mod ignore_budget;
mod list_directory;
mod odd_names;
mod older_params;
mod path_correction;
mod read_file;
mod read_many_files;
mod replace;
mod session;
#[cfg(unix)]
mod shell;
mod shell_git;
mod shell_hostile;
mod special_files;
mod update_topic;
mod web;
mod write_file;
