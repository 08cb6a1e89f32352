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
    let mut cmd = crate::cli::Cli::command();
    cmd.build();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    // clap_mangen's own command list refers to a page per command (`toolbelt-call(1)`) that
    // is not installed; this page holds every command, with its usage and options, itself.
    let rendered = man
        .render_title(&mut page)
        .and_then(|()| man.render_name_section(&mut page))
        .and_then(|()| man.render_synopsis_section(&mut page))
        .and_then(|()| man.render_description_section(&mut page))
        .and_then(|()| man.render_options_section(&mut page));
    rendered.map_err(CliError::failed)?;
    let mut text = String::from_utf8_lossy(&page).into_owned();
    text.push_str(".SH COMMANDS\n");
    every_command(&mut cmd, "toolbelt", &mut text);
    text.push_str(&format!(".SH VERSION\nv{}\n", env!("CARGO_PKG_VERSION")));
    out(&text);
    Ok(EXIT_OK)
}

/// A section per command below `cmd`, depth first: its description, its usage and each of
/// its arguments and options with what it does.
fn every_command(cmd: &mut clap::Command, path: &str, text: &mut String) {
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let Some(sub) = cmd.find_subcommand_mut(&name) else { continue };
        let full = format!("{path} {name}");
        text.push_str(&format!(".SS \"{}\"\n", roff(&full).replace('"', "\\(dq")));
        let about = sub.get_long_about().or(sub.get_about()).map(|a| a.to_string());
        if let Some(about) = about {
            text.push_str(&format!("{}\n.PP\n", roff_text(&about)));
        }
        let usage = sub.render_usage().to_string();
        let usage = usage.trim_start_matches("Usage: ").replace("Usage: ", "");
        text.push_str(&format!(".nf\n{}\n.fi\n", roff_text(&usage)));
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            text.push_str(&format!(".TP\n\\fB{}\\fR\n", roff(&arg_names(arg))));
            let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string());
            text.push_str(&format!("{}\n", roff_text(help.as_deref().unwrap_or(""))));
        }
        every_command(sub, &full, text);
    }
}

/// How an argument is written: `-s, --sandbox`, `--root DIR`, or `ARGS` for a positional one.
fn arg_names(arg: &clap::Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|v| v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" "))
        .filter(|_| arg.get_action().takes_values());
    let mut names = Vec::new();
    if let Some(c) = arg.get_short() {
        names.push(format!("-{c}"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("--{l}"));
    }
    if names.is_empty() {
        return value.unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
    }
    let mut s = names.join(", ");
    if let Some(v) = value {
        s.push(' ');
        s.push_str(&v);
    }
    s
}

/// Text of several lines made safe for roff, line by line.
fn roff_text(s: &str) -> String {
    s.lines().map(roff).collect::<Vec<_>>().join("\n")
}

/// Text safe in a roff body line: backslashes escaped, a leading dot or quote guarded.
fn roff(s: &str) -> String {
    let s = s.replace('\\', "\\e");
    if s.starts_with('.') || s.starts_with('\'') { format!("\\&{s}") } else { s }
}
