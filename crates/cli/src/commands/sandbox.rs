//! `toolbelt sandbox --check` says what this machine supports; `toolbelt sandbox [--profile P]
//! -- CMD` runs one command in the sandbox, as a tool's command would run (cleaned environment,
//! a reaper, Landlock and seccomp), with the terminal's stdin, stdout and stderr.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;

use toolbelt_core::process::sandbox::{Profile, Sandbox, support};
use toolbelt_core::process::{ChildPurpose, EnvRedaction, Launch, child_env};

use super::{EXIT_OK, EXIT_TOOL_FAILED};
use crate::cli::SandboxArgs;
use crate::error::{CliError, CliResult};
use crate::output::out_line;

pub fn run(args: SandboxArgs) -> CliResult {
    let support = support();
    if args.check {
        out_line(support.report().trim_end());
        return Ok(if support.usable() { EXIT_OK } else { EXIT_TOOL_FAILED });
    }
    let Some((program, rest)) = args.command.split_first() else {
        return Err(CliError::usage(
            "name the command to run after `--` (toolbelt sandbox -- CMD ARGS...), or use --check",
        ));
    };
    support.require().map_err(CliError::failed)?;
    let name = args.profile.or_else(|| std::env::var("SEATBELT_PROFILE").ok());
    let profile = match name.as_deref().filter(|n| !n.trim().is_empty()) {
        None => Profile::DEFAULT,
        Some(n) => Profile::named(n).map_err(CliError::usage)?,
    };
    let cwd = std::env::current_dir()?;
    let roots: Vec<PathBuf> = if args.roots.is_empty() {
        vec![cwd.clone()]
    } else {
        args.roots.iter().map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone())).collect()
    };
    let home = toolbelt_core::files::user_home();
    let mut state = vec![toolbelt_core::config::default_home_dir()];
    state.extend(home.as_ref().map(|h| h.join(".gemini")));
    let base = Sandbox::new(profile, home.as_deref(), &state, &[]).map_err(CliError::failed)?;
    let workspace =
        toolbelt_core::Workspace::new(&roots, &toolbelt_core::config::Config::default())
            .map_err(CliError::failed)?;
    let sandbox = workspace.confine(&base).map_err(CliError::failed)?;
    let env = child_env(&EnvRedaction::default(), ChildPurpose::Tool);
    let spawned = Launch::new(program, &cwd, &env)
        .args(rest)
        .sandbox(Some(&sandbox))
        .spawn_std(Stdio::inherit(), Stdio::inherit(), Stdio::inherit())
        .map_err(|e| {
            CliError::failed(format!("could not start {}: {e}", program.to_string_lossy()))
        })?;
    let status = spawned.exit.wait_blocking();
    toolbelt_core::process::tree::kill_tree_now(spawned.pid);
    let mut reaper = spawned.child;
    let _ = reaper.wait();
    Ok(match status {
        Some(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
        None => EXIT_TOOL_FAILED,
    })
}
