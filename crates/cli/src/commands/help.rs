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
    let mut text = String::from_utf8_lossy(&page).into_owned();
    // clap_mangen renders one level of subcommands; the nested ones (`mcp auth`, `tools
    // schema`, ...) get a section of their own so the page names every command there is.
    text.push_str(".SH \"ALL COMMANDS\"\n");
    let mut cmd = crate::cli::Cli::command();
    cmd.build();
    every_command(&cmd, "toolbelt", &mut text);
    out(&text);
    Ok(EXIT_OK)
}

/// One `.TP` entry per command below `cmd`, depth first, with its one-line description.
fn every_command(cmd: &clap::Command, path: &str, text: &mut String) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let full = format!("{path} {}", sub.get_name());
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        text.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(&full), roff(&about)));
        every_command(sub, &full, text);
    }
}

/// Text safe in a roff body line: backslashes escaped, a leading dot or quote guarded.
fn roff(s: &str) -> String {
    let s = s.replace('\\', "\\e");
    if s.starts_with('.') || s.starts_with('\'') { format!("\\&{s}") } else { s }
}
