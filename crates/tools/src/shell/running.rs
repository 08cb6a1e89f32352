//! A started command being watched: output pumped into a bounded [`Capture`] (and to live
//! listeners), with the reasons it may be stopped: cancellation, the tool-call deadline,
//! inactivity, or a prompt that nobody will answer.

use std::os::unix::process::ExitStatusExt;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdout};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::output::{Capture, Decoder};
use super::spawn::{terminate_group, GroupGuard};

/// How long output may keep arriving after the shell exits (a background job can hold the
/// pipes open forever; we stop waiting instead of hanging).
const DRAIN: Duration = Duration::from_millis(100);

/// Why a command was stopped before it finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stopped {
    Cancelled,
    TimedOut,
    Inactive(Duration),
    WaitingForInput(String),
}

/// How a command ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// The limits a command runs under.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// No output for this long stops the command (`None`: never).
    pub inactivity: Option<Duration>,
    /// No output for this long after a line that looks like a prompt stops the command.
    pub prompt_idle: Duration,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
}

/// What a pump ended with.
#[derive(Debug)]
pub enum PumpEnd {
    Exited(Exit),
    Stopped(Stopped, Exit),
    /// The `until` instant passed with the command still running.
    StillRunning,
}

static PROMPT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(password|passphrase|passcode|\bpin\b|token|username|login|verification code|one-time code|otp)[^\n]*[:?]\s*$|\[y/n\]\s*$|\(y/n\)\s*$|\(yes/no(/\[fingerprint\])?\)\??\s*$|continue\?\s*$|press (enter|return|any key)[^\n]*$",
    )
    .ok()
});

/// Whether a partial last line looks like a question waiting for an answer.
pub fn looks_like_prompt(line: &str) -> bool {
    let line = line.trim_end_matches(['\r']);
    !line.trim().is_empty() && PROMPT.as_ref().is_some_and(|re| re.is_match(line))
}

/// A running command and its output.
pub struct Running {
    pub child: Child,
    pub pid: i32,
    pub guard: GroupGuard,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    dec_out: Decoder,
    dec_err: Decoder,
    pub capture: Capture,
    last_output: Instant,
    exit: Option<Exit>,
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    Exit { code: status.code(), signal: status.signal() }
}

impl Running {
    pub fn new(mut child: Child, capture: Capture) -> Option<Self> {
        let pid = i32::try_from(child.id()?).ok()?;
        Some(Self {
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            child,
            pid,
            guard: GroupGuard::new(pid),
            dec_out: Decoder::default(),
            dec_err: Decoder::default(),
            capture,
            last_output: Instant::now(),
            exit: None,
        })
    }

    fn take_bytes(&mut self, raw: &[u8], stderr: bool, live: &(dyn Fn(&str) + Sync)) {
        self.last_output = Instant::now();
        if !self.capture.sniff(raw) {
            return;
        }
        let dec = if stderr { &mut self.dec_err } else { &mut self.dec_out };
        let text = dec.push(raw);
        if !text.is_empty() {
            live(&text);
            self.capture.push(&text);
        }
    }

    /// Pumps output until the command exits, is stopped, or `until` passes.
    pub async fn pump(
        &mut self,
        cancel: &CancellationToken,
        timed_out: &(dyn Fn() -> bool + Sync),
        limits: Limits,
        until: Option<Instant>,
        live: &(dyn Fn(&str) + Sync),
    ) -> PumpEnd {
        let mut out_buf = vec![0u8; 64 * 1024];
        let mut err_buf = vec![0u8; 64 * 1024];
        loop {
            if let Some(exit) = self.exit {
                self.drain(live).await;
                // Jobs the command left running (`cmd &`) outlive the call; the caller tracks
                // them so that they are stopped when the session ends.
                self.guard.disarm();
                return PumpEnd::Exited(exit);
            }
            let idle_deadline = limits.inactivity.map(|d| self.last_output + d);
            let prompt_deadline = looks_like_prompt(&self.capture.partial_line())
                .then(|| self.last_output + limits.prompt_idle);
            let far = Instant::now() + Duration::from_secs(86_400 * 365);
            let sleep_until = |t: Option<Instant>| tokio::time::sleep_until(t.unwrap_or(far));
            enum Ev {
                Out(Option<usize>),
                Err(Option<usize>),
                Exit(Exit),
                Stop(Stopped),
                Until,
            }
            let ev = tokio::select! {
                n = read_opt(&mut self.stdout, &mut out_buf) => Ev::Out(n),
                n = read_opt(&mut self.stderr, &mut err_buf) => Ev::Err(n),
                status = self.child.wait() => Ev::Exit(status.map(exit_of).unwrap_or_default()),
                () = cancel.cancelled() => {
                    Ev::Stop(if timed_out() { Stopped::TimedOut } else { Stopped::Cancelled })
                }
                () = sleep_until(idle_deadline) => {
                    Ev::Stop(Stopped::Inactive(limits.inactivity.unwrap_or_default()))
                }
                () = sleep_until(prompt_deadline) => {
                    Ev::Stop(Stopped::WaitingForInput(self.capture.partial_line().trim().to_string()))
                }
                () = sleep_until(until) => Ev::Until,
            };
            let stop = match ev {
                Ev::Out(Some(n)) if n > 0 => {
                    self.take_bytes(&out_buf[..n], false, live);
                    None
                }
                Ev::Out(_) => {
                    self.stdout = None;
                    None
                }
                Ev::Err(Some(n)) if n > 0 => {
                    self.take_bytes(&err_buf[..n], true, live);
                    None
                }
                Ev::Err(_) => {
                    self.stderr = None;
                    None
                }
                Ev::Exit(e) => {
                    self.exit = Some(e);
                    None
                }
                Ev::Stop(s) => Some(s),
                Ev::Until => return PumpEnd::StillRunning,
            };
            if let Some(reason) = stop {
                let exit = self.stop(limits.grace, live).await;
                return PumpEnd::Stopped(reason, exit);
            }
        }
    }

    /// Stops the whole group, reaps the shell and collects what was still buffered.
    pub async fn stop(&mut self, grace: Duration, live: &(dyn Fn(&str) + Sync)) -> Exit {
        terminate_group(self.pid, grace).await;
        self.guard.disarm();
        let exit = match tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(Ok(status)) => exit_of(status),
            _ => Exit::default(),
        };
        self.exit = Some(exit);
        self.drain(live).await;
        exit
    }

    /// Reads what is left in the pipes for a short while.
    async fn drain(&mut self, live: &(dyn Fn(&str) + Sync)) {
        let deadline = Instant::now() + DRAIN;
        let mut out_buf = vec![0u8; 64 * 1024];
        let mut err_buf = vec![0u8; 64 * 1024];
        while self.stdout.is_some() || self.stderr.is_some() {
            let (n, is_err) = tokio::select! {
                n = read_opt(&mut self.stdout, &mut out_buf) => (n, false),
                n = read_opt(&mut self.stderr, &mut err_buf) => (n, true),
                () = tokio::time::sleep_until(deadline) => break,
            };
            let buf = if is_err { &err_buf } else { &out_buf };
            match n {
                Some(n) if n > 0 => {
                    let chunk = buf[..n].to_vec();
                    self.take_bytes(&chunk, is_err, live);
                }
                _ if is_err => self.stderr = None,
                _ => self.stdout = None,
            }
        }
        self.stdout = None;
        self.stderr = None;
        for text in [self.dec_out.finish(), self.dec_err.finish()] {
            self.capture.push(&text);
        }
    }

    /// Takes the capture out (the command has finished or been stopped).
    pub fn take_capture(&mut self) -> Capture {
        let empty = Capture::new(2, std::path::Path::new("."), "unused");
        std::mem::replace(&mut self.capture, empty)
    }

    pub fn exit(&self) -> Option<Exit> {
        self.exit
    }
}

/// Reads from a pipe that may be gone (then never resolves).
async fn read_opt<R: AsyncReadExt + Unpin>(r: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    match r {
        Some(r) => r.read(buf).await.ok(),
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_recognised() {
        for p in [
            "Password: ",
            "[sudo] password for bob:",
            "Enter passphrase for key '/k': ",
            "Continue? [y/N] ",
            "Are you sure (yes/no)? ",
            "Username for 'https://github.com': ",
        ] {
            assert!(looks_like_prompt(p), "{p}");
        }
        for p in ["Compiling foo", "progress: 50%", "", "error: token expected"] {
            assert!(!looks_like_prompt(p), "{p}");
        }
    }
}
