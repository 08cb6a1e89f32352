//! `read_background_output`: the tail of a background process's log.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

use super::background::BackgroundRegistry;

pub const NAME: &str = "read_background_output";
/// Only the end of a log is read (upstream: 64 KiB).
const TAIL_BYTES: u64 = 64 * 1024;

#[derive(Debug, Deserialize)]
struct Params {
    pid: i64,
    lines: Option<u64>,
    delay_ms: Option<u64>,
}

pub struct ReadBackgroundOutput {
    background: Arc<BackgroundRegistry>,
}

impl ReadBackgroundOutput {
    pub fn new(background: Arc<BackgroundRegistry>) -> Self {
        Self { background }
    }
}

impl Tool for ReadBackgroundOutput {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Read Background Output"
    }
    fn kind(&self) -> Kind {
        Kind::Read
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/read_background_output.md").trim_end().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pid": {"type": "integer", "description": "The PID of the background process, as run_shell_command reported it."},
                    "lines": {"type": "integer", "minimum": 1, "description": "Optional. How many lines to return from the end of the log. Default 100."},
                    "delay_ms": {"type": "integer", "description": "Optional. Milliseconds to wait before reading, so a process that just started can print something."},
                    "wait_for_previous": {"type": "boolean", "description": "Set to true to run this call only after the calls before it in the same turn have finished."}
                },
                "required": ["pid"]
            }),
        }
    }

    fn build(&self, params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        Ok(Box::new(ReadCall { p, background: self.background.clone() }))
    }
}

struct ReadCall {
    p: Params,
    background: Arc<BackgroundRegistry>,
}

fn failure(llm: String, display: &str, message: String) -> ToolResult {
    ToolResult::error(ErrorType::ExecutionFailed, message, llm, display)
}

#[async_trait]
impl Invocation for ReadCall {
    fn description(&self) -> String {
        format!("Reading output for background process {}", self.p.pid)
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        if let Some(ms) = self.p.delay_ms.filter(|ms| *ms > 0) {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = ctx.cancel.cancelled() => {}
            }
        }
        let pid = self.p.pid;
        let Some(info) = i32::try_from(pid).ok().and_then(|p| self.background.get(p)) else {
            return failure(
                format!(
                    "Access denied. Background process ID {pid} not found in this session's history."
                ),
                "Access denied.",
                format!("Background process history lookup failed for PID {pid}"),
            );
        };
        let log = info.log;
        let opened =
            std::fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_NOFOLLOW).open(&log);
        let mut file = match opened {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return failure(
                    format!(
                        "No output log found for process ID {pid}. It might not have produced output or was cleaned up."
                    ),
                    &format!("No log found for PID {pid}"),
                    format!("Log file not found at {}", log.display()),
                );
            }
            Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
                let m = "Symbolic link detected at predicted log path. Access is denied for security reasons.";
                return failure(m.into(), m, m.into());
            }
            Err(e) => {
                return failure(
                    format!("Error reading background log: {e}"),
                    "Failed to read log.",
                    e.to_string(),
                );
            }
        };
        let read = (|| -> std::io::Result<(String, bool)> {
            let len = file.metadata()?.len();
            let start = len.saturating_sub(TAIL_BYTES);
            file.seek(SeekFrom::Start(start))?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok((String::from_utf8_lossy(&bytes).into_owned(), start > 0))
        })();
        let (text, cut) = match read {
            Ok(x) => x,
            Err(e) => {
                return failure(
                    format!("Error reading background log: {e}"),
                    "Failed to read log.",
                    e.to_string(),
                );
            }
        };
        let mut lines: Vec<&str> = text.split('\n').collect();
        if cut && lines.len() > 1 {
            lines.remove(0);
        }
        if lines.last() == Some(&"") {
            lines.pop();
        }
        if lines.is_empty() {
            return ToolResult::text("Log is empty.", "Log is empty.");
        }
        let want = usize::try_from(self.p.lines.unwrap_or(100).max(1)).unwrap_or(usize::MAX);
        let total = lines.len();
        let shown = &lines[total.saturating_sub(want)..];
        let head = if shown.len() < total {
            format!("Showing last {} of {total} lines:\n", shown.len())
        } else {
            "Full Log Output:\n".to_string()
        };
        let out = format!("{head}{}", shown.join("\n"));
        // The command's output is outside content, as run_shell_command's is.
        ToolResult::text(toolbelt_core::result::untrusted(&out), out)
    }
}
