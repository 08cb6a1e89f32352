//! The session's background processes: commands moved to the background keep running in their
//! own process group while a task copies their output (ANSI-stripped) to a log file; jobs a
//! foreground command left behind (`cmd &`) are tracked too. Everything still running is
//! stopped by [`BackgroundRegistry::shutdown`] (and, as a last resort, when the registry is
//! dropped) unless the user asked to keep it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolbelt_core::sync::LockExt;

use tokio_util::sync::CancellationToken;

use super::output::{Capture, strip_ansi};
use super::running::{Exit, Limits, PumpEnd, Running};
use super::spawn::{kill_tree_now, terminate_tree};

/// Processes remembered per session (upstream: 100).
const HISTORY: usize = 100;

/// A background process's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    Exited(Exit),
}

#[derive(Debug)]
struct Entry {
    pid: i32,
    command: String,
    status: Arc<Mutex<Status>>,
    log: PathBuf,
}

/// A snapshot of one entry, for listings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    pub pid: i32,
    pub command: String,
    pub status: Status,
    pub log: PathBuf,
}

/// The background processes of one session.
#[derive(Debug, Default)]
pub struct BackgroundRegistry {
    entries: Mutex<Vec<Entry>>,
    /// Process groups left behind by foreground commands (`cmd &`).
    leftovers: Mutex<Vec<i32>>,
    stop: CancellationToken,
    /// Keep processes running when toolbelt exits.
    keep: std::sync::atomic::AtomicBool,
}

/// Opens a log for writing without following a symlink planted at its path.
fn create_log(path: &Path) -> std::io::Result<File> {
    toolbelt_core::files::create_private(path)
}

impl BackgroundRegistry {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Where the log of `pid` lives under `home`.
    pub fn log_path(home: &Path, pid: i32) -> PathBuf {
        home.join("tmp").join("background-processes").join(format!("background-{pid}.log"))
    }

    /// Leaves running processes alone when toolbelt exits.
    pub fn keep_on_exit(&self, keep: bool) {
        self.keep.store(keep, std::sync::atomic::Ordering::SeqCst);
    }

    fn remember(&self, entry: Entry) {
        let mut e = self.entries.locked();
        e.retain(|x| x.pid != entry.pid);
        e.push(entry);
        if e.len() > HISTORY {
            let drop_n = e.len() - HISTORY;
            e.drain(..drop_n);
        }
    }

    /// Takes over a running command: its output so far starts the log, the rest is copied as it
    /// arrives, and its exit is recorded.
    pub fn adopt(&self, mut running: Running, command: &str, initial: &str, home: &Path) -> i32 {
        let pid = running.pid;
        let log = Self::log_path(home, pid);
        // The log is one of the files toolbelt keeps: its own cap, and a share of their total
        // (a background command printing without end filled the disk, issue 35).
        let kept = toolbelt_core::files::KeptFile::start(
            &home.join("tmp"),
            &log,
            toolbelt_core::limits::SPILL_FILE_BYTES,
        );
        let status = Arc::new(Mutex::new(Status::Running));
        let file = create_log(&log).ok();
        let log_writer = Mutex::new((file, kept, false));
        let write = move |text: &str| {
            let mut w = log_writer.locked();
            let (file, kept, cut) = &mut *w;
            let Some(f) = file.as_mut() else { return };
            if *cut {
                return;
            }
            let text = strip_ansi(text);
            let mut n = usize::try_from(kept.room(text.len() as u64)).unwrap_or(0);
            while n < text.len() && !text.is_char_boundary(n) {
                n -= 1;
            }
            let _ = f.write_all(&text.as_bytes()[..n]);
            if n < text.len() {
                *cut = true;
                let _ = f.write_all(
                    format!(
                        "\n[toolbelt: the rest of the output is not kept: a log holds at most {} MiB, and all that toolbelt keeps {} MiB]\n",
                        toolbelt_core::limits::SPILL_FILE_BYTES >> 20,
                        toolbelt_core::limits::KEPT_TOTAL_BYTES >> 20
                    )
                    .as_bytes(),
                );
            }
        };
        if !initial.is_empty() {
            write(initial);
            write("\n");
        }
        self.remember(Entry { pid, command: command.to_string(), status: status.clone(), log });
        let stop = self.stop.clone();
        running.guard.disarm();
        tokio::spawn(async move {
            let live = |text: &str| write(text);
            let limits =
                Limits { inactivity: None, prompt_idle: None, grace: Duration::from_millis(500) };
            let never = || false;
            // A background process is only stopped at shutdown (no inactivity or prompt
            // checks), and its record is the log file, not a capture.
            running.capture = Capture::discard();
            let end = loop {
                match running.pump(&stop, &never, limits, None, &live).await {
                    PumpEnd::StillRunning => continue,
                    other => break other,
                }
            };
            let exit = match end {
                PumpEnd::Exited(e) | PumpEnd::Stopped(_, e) => e,
                PumpEnd::StillRunning => Exit::default(),
            };
            *status.locked() = Status::Exited(exit);
        });
        pid
    }

    /// Records a command that finished before it could be moved to the background, so that
    /// it is listed and its output can be read.
    pub fn record_finished(&self, pid: i32, command: &str, output: &str, exit: Exit, home: &Path) {
        let log = Self::log_path(home, pid);
        if let Ok(mut f) = create_log(&log) {
            let _ = f.write_all(output.as_bytes());
        }
        let status = Arc::new(Mutex::new(Status::Exited(exit)));
        self.remember(Entry { pid, command: command.to_string(), status, log });
    }

    /// Remembers a process group a foreground command left running.
    pub fn track_group(&self, pgid: i32) {
        let mut l = self.leftovers.locked();
        if !l.contains(&pgid) {
            l.push(pgid);
        }
    }

    pub fn list(&self) -> Vec<Info> {
        self.entries
            .locked()
            .iter()
            .map(|e| Info {
                pid: e.pid,
                command: e.command.clone(),
                status: *e.status.locked(),
                log: e.log.clone(),
            })
            .collect()
    }

    pub fn get(&self, pid: i32) -> Option<Info> {
        self.list().into_iter().find(|i| i.pid == pid)
    }

    fn running_groups(&self) -> Vec<i32> {
        let mut groups: Vec<i32> = self
            .entries
            .locked()
            .iter()
            .filter(|e| *e.status.locked() == Status::Running)
            .map(|e| e.pid)
            .collect();
        groups.extend(self.leftovers.locked().drain(..));
        groups
    }

    /// Stops every background process and left-behind group (SIGTERM, then SIGKILL after
    /// `grace`), unless the user asked to keep them. Returns how many groups were stopped.
    pub async fn shutdown(&self, grace: Duration) -> usize {
        if self.keep.load(std::sync::atomic::Ordering::SeqCst) {
            self.detach_all();
            return 0;
        }
        let groups = self.running_groups();
        futures::future::join_all(groups.iter().map(|g| terminate_tree(*g, grace))).await;
        self.stop.cancel();
        groups.len()
    }

    /// Tells every reaper to leave its tree running when toolbelt exits.
    fn detach_all(&self) {
        for g in self.running_groups() {
            toolbelt_core::process::tree::detach(g);
        }
    }
}

impl Drop for BackgroundRegistry {
    fn drop(&mut self) {
        if self.keep.load(std::sync::atomic::Ordering::SeqCst) {
            self.detach_all();
        } else {
            for g in self.running_groups() {
                kill_tree_now(g);
            }
        }
    }
}
