//! `run_shell_command`: runs `bash -c <command>` in its own session and process group, with
//! stdin from /dev/null, bounded output, an inactivity limit, prompt detection, and the whole
//! group stopped on cancel or timeout; `is_background` hands a command to the session's
//! [`BackgroundRegistry`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::config::Config;
use toolbelt_core::result::{ErrorType, FullOutput, ToolResult, untrusted};
use toolbelt_core::shell::{
    command_roots, has_command_substitution, parse_command, strip_shell_wrapper,
};
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv,
};
use toolbelt_core::workspace::Access;

use super::background::BackgroundRegistry;
use super::output::{Capture, render_terminal, strip_ansi};
use super::running::{Exit, Limits, PumpEnd, Running, Stopped};
use super::spawn::{spawn, spawn_terminal, wrap_command};

pub const NAME: &str = "run_shell_command";
/// Upstream waits this long before moving a command to the background.
const DEFAULT_BACKGROUND_DELAY_MS: u64 = 200;

pub const INJECTION_MESSAGE: &str = "Command injection detected: command substitution syntax ($(), backticks, <() or >()) found in command arguments. On PowerShell, @() array subexpressions and $() subexpressions are also blocked. This is a security risk and the command was blocked.";

#[derive(Debug, Deserialize)]
struct Params {
    command: String,
    description: Option<String>,
    dir_path: Option<String>,
    #[serde(default)]
    is_background: bool,
    delay_ms: Option<u64>,
}

pub struct RunShellCommand {
    background: Arc<BackgroundRegistry>,
}

impl RunShellCommand {
    pub fn new(background: Arc<BackgroundRegistry>) -> Self {
        Self { background }
    }
}

impl Tool for RunShellCommand {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Shell"
    }
    fn kind(&self) -> Kind {
        Kind::Execute
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::CommandRoots("command"), enables_auto_edit: false }
    }
    fn truncates_output(&self) -> bool {
        true
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/run_shell_command.md").trim_end().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The exact bash command to run, as `bash -c <command>`."},
                    "description": {"type": "string", "description": "A short, specific description of the command for the user: one sentence, at most three, no line breaks."},
                    "dir_path": {"type": "string", "description": "(OPTIONAL) The directory to run the command in; it must exist and be inside the workspace. Default: the project root."},
                    "is_background": {"type": "boolean", "description": "Set to true for commands that keep running (servers, watchers): the command starts, is watched briefly for immediate errors, then moves to the background."},
                    "delay_ms": {"type": "integer", "description": "Optional. How long to wait, in milliseconds, before moving a background command to the background, so that its first output is included."}
                },
                "required": ["command"]
            }),
        }
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        if p.command.trim().is_empty() {
            return Err("Command cannot be empty.".into());
        }
        let ws = &env.workspace;
        let cwd = match &p.dir_path {
            Some(d) => ws.resolve_checked(d, Access::Write).map_err(|e| e.to_string())?.real,
            None => ws.primary().to_path_buf(),
        };
        Ok(Box::new(ShellCall {
            command: p.command,
            description: p.description,
            cwd,
            is_background: p.is_background,
            delay_ms: p.delay_ms,
            config: env.config.clone(),
            workspace: env.workspace.clone(),
            spill_dir: ws.temp_dir().join("tool-outputs"),
            background: self.background.clone(),
        }))
    }
}

struct ShellCall {
    command: String,
    description: Option<String>,
    cwd: PathBuf,
    is_background: bool,
    delay_ms: Option<u64>,
    config: Arc<Config>,
    /// The workspace the call was built in: the sandbox's rules come from its roots.
    workspace: Arc<toolbelt_core::Workspace>,
    spill_dir: PathBuf,
    background: Arc<BackgroundRegistry>,
}

/// Root commands for the confirmation: `mkdir, echo, redirection (>), ls`.
pub fn root_command_label(command: &str) -> String {
    match parse_command(command).filter(|p| !p.has_error) {
        Some(p) => p
            .details
            .iter()
            .filter(|d| !d.is_marker() || d.name.starts_with("redirection"))
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        None => {
            let first = command.split_whitespace().next().unwrap_or("").to_string();
            if command.contains(['<', '>']) { format!("{first}, redirection") } else { first }
        }
    }
}

fn stop_message(stopped: &Stopped) -> String {
    match stopped {
        Stopped::Cancelled => "Command was cancelled by user before it could complete.".into(),
        Stopped::TimedOut => "Command was stopped because the tool call ran out of time.".into(),
        Stopped::Inactive(d) => format!(
            "Command was automatically cancelled because it exceeded the timeout of {:.1} minutes without output.",
            d.as_secs_f64() / 60.0
        ),
        Stopped::WaitingForInput(line) => format!(
            "Command was stopped because it appears to be waiting for input: it printed {line:?} and then nothing more. Commands cannot be answered interactively; pass the answer another way (a flag such as --yes, an environment variable, or a file)."
        ),
    }
}

/// The jobs the command's shell listed, other than the shell itself. The file is the command's
/// to write, so it is read as untrusted: no link followed, nothing but a regular file (a FIFO
/// put in its place hung toolbelt, issue 18), and no more than a few kilobytes.
fn background_pids(file: &Path, shell_pid: i32) -> Vec<i32> {
    let bytes = toolbelt_core::files::read_regular(file, 64 * 1024, false).map(|r| r.0);
    let text = String::from_utf8_lossy(bytes.as_deref().unwrap_or_default());
    text.lines().filter_map(|l| l.trim().parse::<i32>().ok()).filter(|p| *p != shell_pid).collect()
}

impl ShellCall {
    fn limits(&self) -> Limits {
        let ms = |v: u64| (v > 0).then(|| Duration::from_millis(v));
        Limits {
            inactivity: ms(self.config.shell_inactivity_timeout_ms),
            prompt_idle: ms(self.config.shell_prompt_idle_ms),
            grace: Duration::from_millis(self.config.shell_kill_grace_ms),
        }
    }

    fn spawn_error(&self, message: String) -> ToolResult {
        let llm = untrusted(&format!("Output: (empty)\nError: {message}"));
        ToolResult::error(
            ErrorType::ShellExecuteError,
            message.clone(),
            llm,
            format!("Command failed: {message}"),
        )
    }
}

#[async_trait]
impl Invocation for ShellCall {
    fn description(&self) -> String {
        let blank = self.description.as_deref().is_none_or(|d| d.trim().is_empty());
        if self.command.chars().count() <= 150 || blank {
            self.command.clone()
        } else {
            self.description.clone().unwrap_or_default()
        }
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        let stripped = strip_shell_wrapper(&self.command);
        let mut roots = command_roots(&stripped);
        let mut seen = std::collections::HashSet::new();
        roots.retain(|r| seen.insert(r.clone()));
        if roots.is_empty() {
            roots.extend(stripped.split_whitespace().next().map(str::to_string));
        }
        Some(ConfirmationDetails::Exec {
            title: "Confirm Shell Command".into(),
            command: self.command.clone(),
            root_commands: roots,
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let stripped = strip_shell_wrapper(&self.command);
        if has_command_substitution(&self.command) || has_command_substitution(&stripped) {
            return ToolResult::text(
                INJECTION_MESSAGE,
                "Blocked: command substitution detected in shell command.",
            );
        }
        if ctx.cancel.is_cancelled() {
            return ToolResult::text(
                "Command was cancelled by user before it could start.",
                "Command cancelled by user.",
            );
        }
        match std::fs::metadata(&self.cwd) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return self.spawn_error(format!("The directory to run in is not a directory: {} (ENOTDIR)", self.cwd.display())),
            Err(_) => {
                return self.spawn_error(format!(
                    "The directory to run in does not exist: {} (ENOENT). Create it first or choose another dir_path.",
                    self.cwd.display()
                ))
            }
        }
        let temp = match toolbelt_core::files::scratch_dir("toolbelt-shell-") {
            Ok(t) => t,
            Err(e) => {
                return self.spawn_error(format!("could not create a temporary directory: {e}"));
            }
        };
        let bgpids = temp.path().join("bgpids.tmp");
        let script = wrap_command(&self.command, &bgpids);
        let spill = |pid: i32| {
            let name = format!("shell-{pid}.log");
            Capture::new(self.config.shell_output_cap_bytes, &self.spill_dir, &name)
                .kept_under(self.config.home_dir.join("tmp"))
        };
        let terminal = self.config.shell_pty;
        let mut env = toolbelt_core::process::child_env(
            &self.config.env_redaction,
            toolbelt_core::process::ChildPurpose::Tool,
        );
        if ctx.confine {
            // git's optional index refresh would try to write in a read-only sandbox.
            env.push(("GIT_OPTIONAL_LOCKS".into(), "0".into()));
        }
        // Allowed only by the known-safe table: read-only, no network (issue 34), wherever the
        // kernel can confine; otherwise the session's own sandbox, if any.
        let confined = ctx.confine && toolbelt_core::process::sandbox::usable();
        let sandbox = if confined {
            // The wrapper writes its list of background jobs in the call's own scratch folder.
            Some(self.workspace.confine_read_only().and_then(|s| s.with_scratch(temp.path())))
        } else {
            self.config.sandbox.as_ref().map(|s| self.workspace.confine(s))
        };
        let sandbox = match sandbox.transpose() {
            Ok(s) => s,
            Err(e) => return self.spawn_error(e.to_string()),
        };
        let sandbox = sandbox.as_ref();
        let running = if terminal {
            spawn_terminal(&script, &self.cwd, &env, sandbox).map(|t| {
                let pid = t.pid;
                Running::from_terminal(t, spill(pid))
            })
        } else {
            spawn(&script, &self.cwd, &env, sandbox).map(|c| {
                let pid = c.pid;
                Running::from_pipes(c, spill(pid))
            })
        };
        let mut running = match running {
            Ok(r) => r,
            Err(e) => return self.spawn_error(format!("could not start bash: {e}")),
        };
        let pid = running.pid;
        let live = |chunk: &str| ctx.emit(chunk);
        let timed_out = || ctx.timed_out();
        let until = self.is_background.then(|| {
            tokio::time::Instant::now()
                + Duration::from_millis(self.delay_ms.unwrap_or(DEFAULT_BACKGROUND_DELAY_MS))
        });
        let end = running.pump(&ctx.cancel, &timed_out, self.limits(), until, &live).await;
        if let PumpEnd::StillRunning = end {
            let initial = strip_ansi(&running.capture.snapshot());
            let initial = if terminal { render_terminal(&initial) } else { initial };
            self.background.adopt(running, &self.command, &initial, &self.config.home_dir);
            let msg = format!(
                "Command moved to background (PID: {pid}). Read its output with read_background_output; list_background_processes shows whether it is still running."
            );
            let mut r =
                ToolResult::text(untrusted(&msg), msg.clone()).with_summary(format!("PID: {pid}"));
            r.data = Some(json!({"pid": pid, "command": self.command, "initialOutput": initial}));
            return r;
        }
        let binary = running.capture.binary_bytes();
        let captured = running.take_capture().finish();
        let text = strip_ansi(&captured.text);
        let mut output = if terminal { render_terminal(&text) } else { text }.trim().to_string();
        if let Some(n) = binary {
            if !output.is_empty() {
                output.push('\n');
            }
            output.push_str(&format!("[Binary output detected: {n} bytes not shown.]"));
        }
        let full_output = captured.spill_file.clone().map(|path| FullOutput {
            path,
            chars: captured.total_chars,
            only_first_bytes: (captured.spilled_bytes < captured.total_bytes)
                .then_some(captured.spilled_bytes),
        });
        if full_output.is_some() {
            // What toolbelt keeps stays within its total, the oldest going first.
            let kept = self.config.home_dir.join("tmp");
            toolbelt_core::files::prune_kept(&kept, toolbelt_core::limits::KEPT_TOTAL_BYTES);
        }
        let (exit, stopped) = match end {
            PumpEnd::Exited(e) => (e, None),
            PumpEnd::Stopped(s, e) => (e, Some(s)),
            PumpEnd::StillRunning => (Exit::default(), None),
        };
        if let Some(stopped) = stopped {
            let mut text = stop_message(&stopped);
            if output.is_empty() {
                text.push_str(" There was no output before it was cancelled.");
            } else {
                text.push_str(" Below is the output before it was cancelled:\n");
                text.push_str(&output);
            }
            let display = if output.is_empty() {
                stop_message(&stopped)
            } else {
                format!("{}\n\nOutput before cancellation:\n{output}", stop_message(&stopped))
            };
            let mut r = ToolResult::text(untrusted(&text), display);
            r.full_output = full_output;
            r.data = Some(json!({"stopped": format!("{stopped:?}"), "pid": pid}));
            return r;
        }
        let mut pids = background_pids(&bgpids, pid);
        // Also what stayed in the command's process group (a job of a nested shell). Only after
        // a normal exit: the shell waits for its wrapper subshell then, while a shell killed by
        // a signal (`kill -9 $$`) leaves that subshell on its way out.
        let procs = toolbelt_core::process::tree::Procs::read();
        if exit.signal.is_none() {
            for p in procs.group_members(pid) {
                if !pids.contains(&p) {
                    pids.push(p);
                }
            }
        }
        // What the command left running without making it a job (`setsid -f`, a double fork,
        // `( cmd & )`) is stopped now; jobs (`cmd &`) are meant to run and are stopped when the
        // session ends.
        procs.prune(pid, &pids);
        if pids.is_empty() {
            // Everything under it was just killed; the reaper catches any late fork and goes.
            toolbelt_core::process::tree::stop_reaper(pid);
        } else {
            self.background.track_group(pid);
        }
        if self.is_background {
            self.background.record_finished(
                pid,
                &self.command,
                &output,
                exit,
                &self.config.home_dir,
            );
        }
        let mut lines =
            vec![format!("Output: {}", if output.is_empty() { "(empty)" } else { &output })];
        if let Some(code) = exit.code.filter(|c| *c != 0) {
            lines.push(format!("Exit Code: {code}"));
        }
        if let Some(sig) = exit.signal {
            lines.push(format!("Signal: {sig}"));
        }
        if !pids.is_empty() {
            lines.push(format!(
                "Background PIDs: {}",
                pids.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ));
        }
        lines.push(format!("Process Group PGID: {pid}"));
        let display = if !output.is_empty() {
            output.clone()
        } else if let Some(sig) = exit.signal {
            format!("Command terminated by signal: {sig}")
        } else if let Some(code) = exit.code.filter(|c| *c != 0) {
            format!("Command exited with code: {code}")
        } else {
            String::new()
        };
        let mut r = ToolResult::text(untrusted(&lines.join("\n")), display);
        r.full_output = full_output;
        if let Some(code) = exit.code.filter(|c| *c != 0) {
            r.summary = Some(format!("Exit Code: {code}"));
            r.data = Some(json!({"exitCode": code, "isError": true}));
        }
        r
    }
}
