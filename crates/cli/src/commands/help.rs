//! `toolbelt completions SHELL` and `toolbelt man`: generated from the command line's own
//! definition, so they never drift from it.

use clap::CommandFactory as _;

use super::EXIT_OK;
use crate::error::{CliError, CliResult};
use crate::output::out;

pub fn completions(shell: clap_complete::Shell) -> CliResult {
    let mut cmd = crate::cli::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "toolbelt", &mut script);
    out(&String::from_utf8_lossy(&script));
    Ok(EXIT_OK)
}

pub fn man() -> CliResult {
    let mut page = Vec::new();
    clap_mangen::Man::new(crate::cli::Cli::command())
        .render(&mut page)
        .map_err(CliError::failed)?;
    out(&String::from_utf8_lossy(&page));
    Ok(EXIT_OK)
}
