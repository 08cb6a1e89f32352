//! A started command being watched: output pumped into a bounded [`Capture`] (and to live
//! listeners), with the reasons it may be stopped: cancellation, the tool-call deadline,
//! inactivity, or a prompt that nobody will answer.

use std::os::unix::process::ExitStatusExt;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use tokio::io::AsyncReadExt;
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::output::{Capture, Decoder};
use super::spawn::{TreeGuard, terminate_tree};
use toolbelt_core::process::Spawned;

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
    /// No output for this long after a line that looks like a prompt stops the command
    /// (`None`: never).
    pub prompt_idle: Option<Duration>,
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

/// Output read from the command: which stream, and the bytes.
type Chunk = (bool, Vec<u8>);

/// A running command and its output. Readers (tasks for pipes, a thread for a terminal) send
/// chunks over a channel and a waiter reports the exit, so pipes and PTYs are watched alike.
pub struct Running {
    pub pid: i32,
    pub guard: TreeGuard,
    chunks: mpsc::Receiver<Chunk>,
    exited: Option<oneshot::Receiver<Exit>>,
    readers: Vec<tokio::task::JoinHandle<()>>,
    dec_out: Decoder,
    dec_err: Decoder,
    pub capture: Capture,
    last_output: Instant,
    exit: Option<Exit>,
}

pub fn exit_of(status: std::process::ExitStatus) -> Exit {
    Exit { code: status.code(), signal: status.signal() }
}

async fn pipe_reader<R: AsyncReadExt + Unpin>(mut r: R, stderr: bool, tx: mpsc::Sender<Chunk>) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 || tx.send((stderr, buf[..n].to_vec())).await.is_err() {
            break;
        }
    }
}

impl Running {
    fn with(
        pid: i32,
        chunks: mpsc::Receiver<Chunk>,
        exited: oneshot::Receiver<Exit>,
        capture: Capture,
    ) -> Self {
        Self {
            pid,
            guard: TreeGuard::new(pid),
            chunks,
            exited: Some(exited),
            readers: Vec::new(),
            dec_out: Decoder::default(),
            dec_err: Decoder::default(),
            capture,
            last_output: Instant::now(),
            exit: None,
        }
    }

    /// Watches a command whose stdout and stderr are pipes.
    pub fn from_pipes(spawned: Spawned<Child>, capture: Capture) -> Self {
        let Spawned { mut child, pid, exit } = spawned;
        let (tx, rx) = mpsc::channel(64);
        let (exit_tx, exit_rx) = oneshot::channel();
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(tokio::spawn(pipe_reader(out, false, tx.clone())));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(tokio::spawn(pipe_reader(err, true, tx)));
        }
        tokio::spawn(async move {
            let status = exit.wait().await;
            let _ = exit_tx.send(status.map(exit_of).unwrap_or_default());
            // The reaper goes when the last process of the tree does.
            let _ = child.wait().await;
        });
        let mut r = Self::with(pid, rx, exit_rx, capture);
        r.readers = readers;
        r
    }

    /// Watches a command on a terminal: its output is read, and its exit waited for, on
    /// threads of their own.
    pub fn from_terminal(t: super::spawn::Terminal, capture: Capture) -> Self {
        let super::spawn::Terminal { pid, mut child, exit, mut reader, master } = t;
        let (tx, rx) = mpsc::channel(64);
        let (exit_tx, exit_rx) = oneshot::channel();
        std::thread::spawn(move || {
            use std::io::Read as _;
            let _terminal = master;
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.blocking_send((false, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
        std::thread::spawn(move || {
            let status = exit.wait_blocking();
            let _ = exit_tx.send(status.map(exit_of).unwrap_or_default());
            let _ = child.wait();
        });
        Self::with(pid, rx, exit_rx, capture)
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
        let mut chunks_open = true;
        loop {
            if let Some(exit) = self.exit {
                self.drain(live).await;
                // Jobs the command left running (`cmd &`) outlive the call; the caller tracks
                // them so that they are stopped when the session ends.
                self.guard.disarm();
                return PumpEnd::Exited(exit);
            }
            let idle_deadline = limits.inactivity.map(|d| self.last_output + d);
            let prompt_deadline = limits
                .prompt_idle
                .filter(|_| looks_like_prompt(&self.capture.partial_line()))
                .map(|d| self.last_output + d);
            let far = Instant::now() + Duration::from_secs(86_400 * 365);
            let sleep_until = |t: Option<Instant>| tokio::time::sleep_until(t.unwrap_or(far));
            enum Ev {
                Chunk(Option<Chunk>),
                Exit(Exit),
                Stop(Stopped),
                Until,
            }
            let ev = tokio::select! {
                c = self.chunks.recv(), if chunks_open => Ev::Chunk(c),
                e = wait_exit(&mut self.exited) => Ev::Exit(e),
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
            match ev {
                Ev::Chunk(Some((is_err, bytes))) => self.take_bytes(&bytes, is_err, live),
                Ev::Chunk(None) => chunks_open = false,
                Ev::Exit(e) => self.exit = Some(e),
                Ev::Stop(reason) => {
                    let exit = self.stop(limits.grace, live).await;
                    return PumpEnd::Stopped(reason, exit);
                }
                Ev::Until => return PumpEnd::StillRunning,
            }
        }
    }

    /// Stops the whole group, reaps the shell and collects what was still buffered.
    pub async fn stop(&mut self, grace: Duration, live: &(dyn Fn(&str) + Sync)) -> Exit {
        terminate_tree(self.pid, grace).await;
        self.guard.disarm();
        let exit = match self.exit {
            Some(e) => e,
            None => tokio::time::timeout(Duration::from_secs(5), wait_exit(&mut self.exited))
                .await
                .unwrap_or_default(),
        };
        self.exit = Some(exit);
        self.drain(live).await;
        exit
    }

    /// Takes what is left in the channel for a short while: a job the command left running
    /// may hold its output open, and the call must not wait for it.
    async fn drain(&mut self, live: &(dyn Fn(&str) + Sync)) {
        let deadline = Instant::now() + DRAIN;
        loop {
            tokio::select! {
                c = self.chunks.recv() => match c {
                    Some((is_err, bytes)) => self.take_bytes(&bytes, is_err, live),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        for r in self.readers.drain(..) {
            r.abort();
        }
        self.chunks.close();
        for text in [self.dec_out.finish(), self.dec_err.finish()] {
            self.capture.push(&text);
        }
    }

    /// Takes the capture out (the command has finished or been stopped).
    pub fn take_capture(&mut self) -> Capture {
        std::mem::replace(&mut self.capture, Capture::discard())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for r in &self.readers {
            r.abort();
        }
    }
}

/// The exit, once; afterwards (or without a waiter) never resolves.
async fn wait_exit(rx: &mut Option<oneshot::Receiver<Exit>>) -> Exit {
    match rx.as_mut() {
        Some(r) => {
            let e = r.await.unwrap_or_default();
            *rx = None;
            e
        }
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
