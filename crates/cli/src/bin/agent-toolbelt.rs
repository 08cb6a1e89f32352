//! `agent-toolbelt`: the name toolbelt is published under on PyPI and npm (`uvx agent-toolbelt`
//! and `npx -y agent-toolbelt` run the command named like the package). It runs the `toolbelt`
//! beside it with the same arguments, in its place (exec), so signals, stdio and the exit
//! status are toolbelt's own.
#![allow(clippy::print_stderr)]

use std::process::Command;

fn main() {
    let me = std::env::current_exe().ok();
    let name = if cfg!(windows) { "toolbelt.exe" } else { "toolbelt" };
    let beside = me.as_deref().and_then(|p| p.parent()).map(|d| d.join(name));
    let program = beside.filter(|p| p.is_file()).unwrap_or_else(|| name.into());
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
