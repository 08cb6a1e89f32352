//! Starting `bash -c` through the process layer (`toolbelt_core::process::Launch`: a session of
//! its own under a reaper, the sandbox when set), with stdin from /dev/null or a terminal and a
//! non-interactive environment.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Child;

/// Options bash may inherit that change how the command's words expand.
const SHOPT_GUARD: &str = "shopt -u promptvars nullglob extglob nocaseglob dotglob; ";

/// `bash` on PATH, else `/bin/bash`.
pub fn bash_path() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p).map(|d| d.join("bash")).find(|c| {
                c.metadata().is_ok_and(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.is_file() && m.permissions().mode() & 0o111 != 0
                })
            })
        })
        .unwrap_or_else(|| PathBuf::from("/bin/bash"))
}

/// Single-quotes a string for bash.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The script bash runs: the command in a subshell whose EXIT trap lists the jobs still
/// running into `bgpids_file`, then the subshell's exit code.
pub fn wrap_command(command: &str, bgpids_file: &Path) -> String {
    let mut command = command.trim().to_string();
    if command.ends_with('\\') {
        command.push(' ');
    }
    format!(
        "{SHOPT_GUARD}_bgpids_file={}\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{command}\n)\n__code=$?\nexit $__code",
        shell_quote(&bgpids_file.to_string_lossy())
    )
}

/// The variables set on top of the inherited environment (upstream's list): markers, no
/// pagers, no prompts, no git configuration or hooks from outside.
pub fn extra_env(inherited_git_count: Option<&str>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("GEMINI_CLI", "1"),
        ("TOOLBELT", "1"),
        ("TERM", "xterm-256color"),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_CONFIG_SYSTEM", "/dev/null"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_ASKPASS", ""),
        ("SSH_ASKPASS", ""),
        ("GH_PROMPT_DISABLED", "1"),
        ("GCM_INTERACTIVE", "never"),
        ("DISPLAY", ""),
        ("DBUS_SESSION_BUS_ADDRESS", ""),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let overrides = [
        ("credential.helper", ""),
        ("core.fsmonitor", ""),
        ("core.hooksPath", ""),
        ("core.sshCommand", ""),
        ("core.pager", "cat"),
        ("core.editor", ""),
        ("sequence.editor", ""),
        // A repository is used only where it is named `.git` (or given with --git-dir): a
        // bare repository the model wrote under another name (`x/HEAD`, `x/config` with
        // `diff.external`) is not picked up by `git -C x` (issue 34).
        ("safe.bareRepository", "explicit"),
        // Not `diff.external`, as upstream sets it: git runs the empty string as a program and
        // every `git diff`, `git log -p` and `git show` dies (docs/compat.md X14).
    ];
    let start: usize = inherited_git_count.and_then(|c| c.trim().parse().ok()).unwrap_or(0);
    for (i, (k, v)) in overrides.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{}", start + i), k.to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{}", start + i), v.to_string()));
    }
    env.push(("GIT_CONFIG_COUNT".into(), (start + overrides.len()).to_string()));
    env
}

pub use toolbelt_core::process::ChildEnv;
pub use toolbelt_core::process::tree::{TreeGuard, kill_tree_now, terminate_tree};
use toolbelt_core::process::{ExitPipe, Launch, Sandbox, Spawned};

/// The `GIT_CONFIG_COUNT` the child inherits, so toolbelt's own overrides come after.
fn git_config_count(env: &ChildEnv) -> Option<String> {
    env.iter()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.to_str().map(String::from))
}

fn bash<'a>(
    script: &str,
    cwd: &'a Path,
    env: &'a ChildEnv,
    sandbox: Option<&'a Sandbox>,
) -> Launch<'a> {
    Launch::new(bash_path(), cwd, env)
        .args(["-c", script])
        .envs(extra_env(git_config_count(env).as_deref()))
        .sandbox(sandbox)
}

/// Starts `bash -c script` in `cwd` under a reaper (its own session and process group, see
/// `toolbelt_core::process`), in `sandbox` if set: stdin from /dev/null, stdout and stderr piped.
pub fn spawn(
    script: &str,
    cwd: &Path,
    env: &ChildEnv,
    sandbox: Option<&Sandbox>,
) -> std::io::Result<Spawned<Child>> {
    bash(script, cwd, env, sandbox).spawn(Stdio::null(), Stdio::piped(), Stdio::piped())
}

/// A command started on a pseudo-terminal.
pub struct Terminal {
    /// The reaper's pid (the command's session and group).
    pub pid: i32,
    /// The reaper.
    pub child: std::process::Child,
    /// The command's exit.
    pub exit: ExitPipe,
    /// The terminal's output.
    pub reader: std::fs::File,
    /// The terminal itself, kept open while its output is read.
    pub master: std::os::fd::OwnedFd,
}

/// Terminal size, as upstream's (80 columns, 30 rows).
const COLS: u16 = 80;
const ROWS: u16 = 30;

/// Starts `bash -c script` on a new pseudo-terminal (its controlling terminal and
/// stdin/stdout/stderr). An end-of-file is typed first, so a command that reads its input gets
/// EOF instead of waiting.
pub fn spawn_terminal(
    script: &str,
    cwd: &Path,
    env: &ChildEnv,
    sandbox: Option<&Sandbox>,
) -> std::io::Result<Terminal> {
    use std::io::Write;
    let size = nix::pty::Winsize { ws_row: ROWS, ws_col: COLS, ws_xpixel: 0, ws_ypixel: 0 };
    let pty = nix::pty::openpty(Some(&size), None)?;
    let slave = std::fs::File::from(pty.slave);
    let stdio = |f: &std::fs::File| f.try_clone().map(Stdio::from);
    // The command's own terminal stays writable inside the sandbox (no other terminal is).
    let own = match sandbox {
        Some(s) => {
            use std::os::fd::AsFd;
            let name = nix::unistd::ttyname(&slave).unwrap_or_default();
            Some(s.with_terminal(slave.as_fd(), &name).map_err(std::io::Error::other)?)
        }
        None => None,
    };
    let spawned = bash(script, cwd, env, own.as_ref()).controlling_terminal().spawn_std(
        stdio(&slave)?,
        stdio(&slave)?,
        stdio(&slave)?,
    )?;
    drop(slave);
    let master = pty.master;
    let mut writer = std::fs::File::from(master.try_clone()?);
    let _ = writer.write_all(b"\x04");
    let reader = std::fs::File::from(master.try_clone()?);
    Ok(Terminal { pid: spawned.pid, child: spawned.child, exit: spawned.exit, reader, master })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_with_a_jobs_trap() {
        let w = wrap_command("cat << 'EOF'\nhello\nEOF", Path::new("/tmp/x/bgpids.tmp"));
        assert!(w.starts_with("shopt -u promptvars"));
        assert!(w.contains(
            "_bgpids_file='/tmp/x/bgpids.tmp'\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n"
        ));
        assert!(w.contains("\nEOF\n)\n__code=$?\nexit $__code"));
        assert!(wrap_command("echo a \\", Path::new("/f")).contains("echo a \\ \n)"));
    }

    #[test]
    fn git_overrides_continue_an_inherited_count() {
        let env = extra_env(Some("2"));
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("GIT_CONFIG_KEY_2").as_deref(), Some("credential.helper"));
        assert_eq!(get("GIT_CONFIG_VALUE_6").as_deref(), Some("cat"));
        assert_eq!(get("GIT_CONFIG_COUNT").as_deref(), Some("10"));
        assert_eq!(get("GIT_TERMINAL_PROMPT").as_deref(), Some("0"));
    }

    #[test]
    fn quotes_for_bash() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
