//! `agent-toolbelt`: the name toolbelt is published under on PyPI and npm (`uvx agent-toolbelt`
//! and `npx -y agent-toolbelt` run the command named like the package). It runs the `toolbelt`
//! of its own package, the one beside it, with the same arguments, in its place (exec), so
//! signals, stdio and the exit status are toolbelt's own. It never looks for another one on
//! PATH: a `toolbelt` planted earlier on PATH would run in its place (issue 46, G14).
#![allow(clippy::print_stderr)]

use std::process::Command;

fn main() {
    let name = if cfg!(windows) { "toolbelt.exe" } else { "toolbelt" };
    // The real path: a link to agent-toolbelt (a `.bin` entry) still finds its own package.
    let me = std::env::current_exe().and_then(std::fs::canonicalize);
    let beside = me.as_ref().ok().and_then(|p| p.parent()).map(|d| d.join(name));
    let Some(program) = beside.filter(|p| p.is_file()) else {
        let at = me.map_or_else(|e| format!("(unknown: {e})"), |p| p.display().to_string());
        eprintln!(
            "agent-toolbelt: the toolbelt program of this package is missing (looked beside {at}); reinstall the package (pip, uv, pipx or npm)"
        );
        std::process::exit(127);
    };
    let mut cmd = Command::new(&program);
    cmd.args(std::env::args_os().skip(1));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let e = cmd.exec();
        eprintln!("agent-toolbelt: cannot run {}: {e}", program.display());
        std::process::exit(127);
    }
    #[cfg(not(unix))]
    match cmd.status() {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("agent-toolbelt: cannot run {}: {e}", program.display());
            std::process::exit(127);
        }
    }
}
