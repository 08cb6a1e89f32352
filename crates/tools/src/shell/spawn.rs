//! Starting `bash -c` in a session of its own (so it has no controlling terminal and leads its
//! own process group), with stdin from /dev/null and a non-interactive environment; and
//! stopping the whole group: SIGTERM to the group and every descendant, then SIGKILL.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

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

/// A child's environment (see `toolbelt_core::process::env`).
pub type ChildEnv = Vec<(std::ffi::OsString, std::ffi::OsString)>;

/// The `GIT_CONFIG_COUNT` the child inherits, so toolbelt's own overrides come after.
fn git_config_count(env: &ChildEnv) -> Option<String> {
    env.iter()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.to_str().map(String::from))
}

/// Starts `bash -c script` in `cwd`: its own session and process group, stdin from /dev/null,
/// stdout and stderr piped.
pub fn spawn(script: &str, cwd: &Path, env: &ChildEnv) -> std::io::Result<Child> {
    let mut cmd = Command::new(bash_path());
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().cloned())
        .envs(extra_env(git_config_count(env).as_deref()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    new_session(&mut cmd);
    cmd.spawn()
}

fn other(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// A command started on a pseudo-terminal.
pub struct Terminal {
    pub pid: i32,
    pub child: std::process::Child,
    /// The terminal's output.
    pub reader: Box<dyn std::io::Read + Send>,
    /// The terminal itself, kept open while its output is read.
    pub master: Box<dyn portable_pty::MasterPty + Send>,
}

/// Terminal size, as upstream's (80 columns, 30 rows).
const COLS: u16 = 80;
const ROWS: u16 = 30;

/// Starts `bash -c script` on a new pseudo-terminal (its own session, the terminal as its
/// controlling terminal and stdin/stdout/stderr). An end-of-file is typed first, so a command
/// that reads its input gets EOF instead of waiting.
pub fn spawn_terminal(script: &str, cwd: &Path, env: &ChildEnv) -> std::io::Result<Terminal> {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let pair = native_pty_system()
        .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
        .map_err(other)?;
    let mut cmd = CommandBuilder::new(bash_path());
    cmd.arg("-c");
    cmd.arg(script);
    cmd.cwd(cwd);
    cmd.env_clear();
    for (k, v) in env {
        cmd.env(k, v);
    }
    for (k, v) in extra_env(git_config_count(env).as_deref()) {
        cmd.env(k, v);
    }
    let child = pair.slave.spawn_command(cmd).map_err(other)?;
    drop(pair.slave);
    // On Unix the terminal's child is a std::process::Child, whose status has the numeric
    // signal that the result reports.
    let child: Box<dyn portable_pty::Child> = child;
    let child = child
        .downcast::<std::process::Child>()
        .map_err(|_| std::io::Error::other("unexpected child type from the terminal"))?;
    let pid = i32::try_from(child.id()).map_err(std::io::Error::other)?;
    let reader = pair.master.try_clone_reader().map_err(other)?;
    if let Ok(mut w) = pair.master.take_writer() {
        use std::io::Write;
        let _ = w.write_all(b"\x04");
    }
    Ok(Terminal { pid, child: *child, reader, master: pair.master })
}

/// Makes the child a session leader: no controlling terminal (so `sudo`, `ssh` and friends
/// cannot open /dev/tty and wait on a person) and its own process group (PGID = PID).
#[allow(unsafe_code)]
fn new_session(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls setsid(2),
    // which is async-signal-safe; it touches no memory shared with the parent.
    unsafe {
        cmd.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(std::io::Error::from));
    }
}

/// Every live descendant of `pid` (children first), however they regrouped.
pub fn descendants(pid: i32) -> Vec<i32> {
    let parents = parent_map();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for (child, parent) in &parents {
            if *parent == p && !out.contains(child) {
                out.push(*child);
                frontier.push(*child);
            }
        }
    }
    out
}

#[cfg(target_os = "linux")]
fn parent_map() -> Vec<(i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        // pid (comm) state ppid ... ; comm may contain spaces and parentheses.
        let after = &stat[stat.rfind(')')? + 2..];
        let mut f = after.split_whitespace();
        let state = f.next()?;
        let ppid: i32 = f.next()?.parse().ok()?;
        (state != "Z").then_some((pid, ppid))
    })
    .collect()
}

#[cfg(not(target_os = "linux"))]
fn parent_map() -> Vec<(i32, i32)> {
    let Ok(out) = std::process::Command::new("ps").args(["-A", "-o", "pid=,ppid=,stat="]).output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pid = f.next()?.parse().ok()?;
            let ppid = f.next()?.parse().ok()?;
            (!f.next().unwrap_or("").starts_with('Z')).then_some((pid, ppid))
        })
        .collect()
}

/// Whether any process of the group (other than a zombie) or any of `pids` is alive.
fn any_alive(pgid: i32, pids: &[i32]) -> bool {
    let alive = |p: i32| {
        kill(Pid::from_raw(p), None).is_ok()
            && !std::fs::read_to_string(format!("/proc/{p}/stat"))
                .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
    };
    pids.iter().any(|p| alive(*p)) || group_has_live_member(pgid)
}

fn group_has_live_member(pgid: i32) -> bool {
    if killpg(Pid::from_raw(pgid), None).is_err() {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        // Zombies keep the group "alive" for kill(2); only count running members.
        let Ok(dir) = std::fs::read_dir("/proc") else { return true };
        dir.filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .any(|stat| {
                let Some((_, after)) = stat.rsplit_once(") ") else { return false };
                let f: Vec<&str> = after.split_whitespace().take(3).collect();
                f.len() == 3 && f[0] != "Z" && f[2].parse() == Ok(pgid)
            })
    }
    #[cfg(not(target_os = "linux"))]
    true
}

/// Stops the group led by `pgid` and every descendant of it: SIGTERM, then after `grace`
/// (or as soon as all are gone) SIGKILL. The caller reaps its own child afterwards.
pub async fn terminate_group(pgid: i32, grace: Duration) {
    let mut pids = descendants(pgid);
    pids.push(pgid);
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGTERM);
    for p in &pids {
        let _ = kill(Pid::from_raw(*p), Signal::SIGTERM);
    }
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline && any_alive(pgid, &pids) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    kill_group_now(pgid, &pids);
}

/// SIGKILL to the group, `pids`, and any descendant found now.
pub fn kill_group_now(pgid: i32, pids: &[i32]) {
    let mut all = descendants(pgid);
    all.extend_from_slice(pids);
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    for p in all {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
}

/// Kills the group when dropped, unless disarmed: a call the scheduler abandons (its future
/// dropped) still leaves nothing running.
pub struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    pub fn new(pgid: i32) -> Self {
        Self { pgid: Some(pgid) }
    }

    pub fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            kill_group_now(pgid, &[]);
        }
    }
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
        assert_eq!(get("GIT_CONFIG_COUNT").as_deref(), Some("9"));
        assert_eq!(get("GIT_TERMINAL_PROMPT").as_deref(), Some("0"));
    }

    #[test]
    fn quotes_for_bash() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
