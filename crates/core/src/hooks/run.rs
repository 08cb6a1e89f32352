//! Running one command hook: `bash -c <command>` in the project folder, the input JSON on
//! stdin, a timeout (SIGTERM to the hook's process group, SIGKILL 5 s later), and its output.

use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::HookContext;
use crate::settings::HookEntry;

/// Output kept per stream.
const MAX_OUTPUT: usize = 1024 * 1024;
/// Between SIGTERM and SIGKILL for a hook past its timeout (upstream: 5 s).
const KILL_GRACE: Duration = Duration::from_secs(5);

/// What a hook printed, how it ended, and — when it did not finish normally — why.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ran {
    /// What the hook printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
    /// Its exit code; `None` when it was killed.
    pub exit_code: Option<i32>,
    /// Could not start, timed out, or was killed by a signal.
    pub failure: Option<String>,
}

/// `2026-11-22T08:33:33.123Z`.
pub fn timestamp() -> String {
    timestamp_at(SystemTime::now())
}

/// [`timestamp`] of the time `t`.
pub fn timestamp_at(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command with the session variables replaced by their (quoted) values, as upstream.
pub fn expand(command: &str, ctx: &HookContext) -> String {
    let dir = ctx.project_dir.display().to_string();
    let plans = ctx.project_dir.join(".toolbelt").join("plans").display().to_string();
    let mut out = command.to_string();
    for (name, value) in [
        ("GEMINI_PROJECT_DIR", &dir),
        ("CLAUDE_PROJECT_DIR", &dir),
        ("TOOLBELT_PROJECT_DIR", &dir),
        ("GEMINI_CWD", &dir),
        ("GEMINI_PLANS_DIR", &plans),
        ("GEMINI_SESSION_ID", &ctx.session_id),
    ] {
        out = out
            .replace(&format!("${{{name}}}"), &quote(value))
            .replace(&format!("${name}"), &quote(value));
    }
    out
}

async fn read_capped<R: AsyncReadExt + Unpin>(r: Option<R>) -> String {
    let Some(mut r) = r else { return String::new() };
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = r.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        if buf.len() < MAX_OUTPUT {
            buf.extend_from_slice(&chunk[..n.min(MAX_OUTPUT - buf.len())]);
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Runs a command hook to completion or its timeout.
pub async fn run_command(
    hook: &HookEntry,
    input: &Value,
    ctx: &HookContext,
    workspace: &crate::Workspace,
) -> Ran {
    let env = crate::process::child_env(&ctx.env_redaction, crate::process::ChildPurpose::Tool);
    // In the sandbox, a hook is granted the workspace's roots as they are now.
    let sandbox = match ctx.sandbox.as_ref().map(|s| workspace.confine(s)).transpose() {
        Ok(s) => s,
        Err(e) => return Ran { failure: Some(format!("could not start: {e}")), ..Ran::default() },
    };
    let dir = ctx.project_dir.as_os_str();
    let spawned = crate::process::Launch::new("bash", &ctx.project_dir, &env)
        .args([std::ffi::OsString::from("-c"), expand(&hook.command, ctx).into()])
        .envs([
            ("GEMINI_PROJECT_DIR", dir),
            ("CLAUDE_PROJECT_DIR", dir),
            ("TOOLBELT_PROJECT_DIR", dir),
            ("GEMINI_CWD", dir),
            ("GEMINI_SESSION_ID", ctx.session_id.as_ref()),
        ])
        .envs(&hook.env)
        .sandbox(sandbox.as_ref())
        .spawn(Stdio::piped(), Stdio::piped(), Stdio::piped());
    let crate::process::Spawned { mut child, pid, exit } = match spawned {
        Ok(s) => s,
        Err(e) => return Ran { failure: Some(format!("could not start: {e}")), ..Ran::default() },
    };
    // Whatever happens below, nothing the hook started outlives it.
    let _tree = crate::process::tree::TreeGuard::new(pid);
    let text = serde_json::to_vec(input).unwrap_or_default();
    let mut stdin = child.stdin.take();
    let feed = async move {
        if let Some(s) = stdin.as_mut() {
            // A hook that does not read its input closes the pipe early: not an error.
            let _ = s.write_all(&text).await;
            let _ = s.shutdown().await;
        }
    };
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let work = async {
        let (_, stdout, stderr, status) =
            tokio::join!(feed, read_capped(out), read_capped(err), exit.wait());
        (stdout, stderr, status)
    };
    tokio::pin!(work);
    let timeout = Duration::from_millis(hook.timeout_ms);
    match tokio::time::timeout(timeout, &mut work).await {
        Ok((stdout, stderr, status)) => {
            let exit_code = status.and_then(|s| s.code());
            let failure = match (status, exit_code) {
                (None, _) => Some("could not be waited for".to_string()),
                (Some(_), None) => Some("was killed by a signal".to_string()),
                _ => None,
            };
            Ran { stdout, stderr, exit_code, failure }
        }
        Err(_) => {
            let grace = crate::process::tree::terminate_tree(pid, KILL_GRACE);
            let finished = tokio::time::timeout(KILL_GRACE * 2, async {
                grace.await;
                (&mut work).await
            })
            .await;
            let (stdout, stderr) = match finished {
                Ok((o, e, _)) => (o, e),
                Err(_) => (String::new(), String::new()),
            };
            Ran {
                stdout,
                stderr,
                exit_code: None,
                failure: Some(format!("Hook timed out after {}ms", hook.timeout_ms)),
            }
        }
    }
}
