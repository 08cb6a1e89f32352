//! Finding and stopping everything a command started. A command runs under a reaper (see
//! [`super::reaper`]), so its whole tree is the reaper's descendants, whatever sessions or
//! groups they moved to: stopping is SIGTERM to the tree, a grace period, then SIGKILL to the
//! tree round after round (a process forked meanwhile becomes the reaper's child and is found
//! on the next round), and finally the reaper is told to go.

use std::collections::HashMap;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// One look at the process table: the parent and process group of every live process.
#[derive(Debug, Default)]
pub struct Procs {
    /// pid -> (parent, process group), zombies left out.
    procs: HashMap<i32, (i32, i32)>,
}

impl Procs {
    /// Reads `/proc` once.
    pub fn read() -> Self {
        let Ok(dir) = std::fs::read_dir("/proc") else { return Self::default() };
        let procs = dir
            .filter_map(|e| {
                let e = e.ok()?;
                let pid: i32 = e.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                // pid (comm) state ppid pgrp ... ; comm may contain spaces and parentheses.
                let mut f = stat[stat.rfind(')')? + 2..].split_whitespace();
                let state = f.next()?;
                let ppid: i32 = f.next()?.parse().ok()?;
                let pgrp: i32 = f.next()?.parse().ok()?;
                (state != "Z").then_some((pid, (ppid, pgrp)))
            })
            .collect();
        Self { procs }
    }

    /// Every descendant of `pid` (children first), however they regrouped.
    pub fn descendants(&self, pid: i32) -> Vec<i32> {
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (child, (parent, _)) in &self.procs {
            children.entry(*parent).or_default().push(*child);
        }
        let mut out = Vec::new();
        let mut frontier = vec![pid];
        while let Some(p) = frontier.pop() {
            for c in children.get(&p).into_iter().flatten() {
                out.push(*c);
                frontier.push(*c);
            }
        }
        out
    }

    /// The descendants of `reaper` still in its process group (the command's group): what the
    /// command left running in the background without detaching (`sh -c 'sleep 1 & exit 1'`),
    /// reported as background processes, as upstream lists its process group.
    pub fn group_members(&self, reaper: i32) -> Vec<i32> {
        let in_group = |p: &i32| self.procs.get(p).is_some_and(|(_, g)| *g == reaper);
        self.descendants(reaper).into_iter().filter(in_group).collect()
    }

    /// Kills (SIGKILL) every descendant of `reaper` except `keep` and their descendants: what
    /// a finished command left behind without being asked to (`setsid -f`, double forks).
    pub fn prune(&self, reaper: i32, keep: &[i32]) {
        let kept: Vec<i32> =
            keep.iter().flat_map(|k| std::iter::once(*k).chain(self.descendants(*k))).collect();
        for p in self.descendants(reaper) {
            if !kept.contains(&p) {
                let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
            }
        }
    }
}

/// Every live descendant of `pid` (children first), however they regrouped.
pub fn descendants(pid: i32) -> Vec<i32> {
    Procs::read().descendants(pid)
}

/// Stops the tree under `reaper`: SIGTERM to its group and every descendant, then after
/// `grace` (or as soon as all are gone) [`kill_tree_now`]. The caller reaps its own child.
pub async fn terminate_tree(reaper: i32, grace: Duration) {
    let _ = killpg(Pid::from_raw(reaper), Signal::SIGTERM);
    for p in descendants(reaper) {
        let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
    }
    gone_within(reaper, grace, Duration::from_millis(20)).await;
    kill_tree_now(reaper);
}

/// Waits until every descendant of `reaper` has exited, looking every `poll`, for at most
/// `within`.
pub async fn gone_within(reaper: i32, within: Duration, poll: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline && !descendants(reaper).is_empty() {
        tokio::time::sleep(poll).await;
    }
}

/// SIGKILL to every descendant of `reaper`, round after round until none is left (bounded),
/// then [`stop_reaper`]. Done here, not only by the reaper: something else may kill the
/// reaper meanwhile (rmcp kills a dropped server's process), and its orphans would be lost.
pub fn kill_tree_now(reaper: i32) {
    for _ in 0..50 {
        let all = descendants(reaper);
        if all.is_empty() {
            break;
        }
        for p in all {
            let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    stop_reaper(reaper);
    // The reaper acts on the signal when it is next scheduled; wait (bounded) so that "the
    // tree was stopped" includes the reaper itself.
    for _ in 0..1000 {
        if !running(reaper) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether `pid` is a process that has not exited (a zombie has).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// Tells the reaper to kill whatever is left under it and exit.
pub fn stop_reaper(reaper: i32) {
    let stop = Signal::try_from(super::reaper::STOP_SIGNAL).unwrap_or(Signal::SIGKILL);
    let _ = kill(Pid::from_raw(reaper), stop);
}

/// Leaves the tree under `reaper` running when toolbelt exits (`--keep-background`).
pub fn detach(reaper: i32) {
    if let Ok(sig) = Signal::try_from(super::reaper::DETACH_SIGNAL) {
        let _ = kill(Pid::from_raw(reaper), sig);
    }
}

/// Kills the tree when dropped, unless disarmed: a call the scheduler abandons (its future
/// dropped) still leaves nothing running.
#[derive(Debug)]
pub struct TreeGuard {
    reaper: Option<i32>,
}

impl TreeGuard {
    /// Guards the tree under `reaper`.
    pub fn new(reaper: i32) -> Self {
        Self { reaper: Some(reaper) }
    }

    /// Leaves the tree running when dropped.
    pub fn disarm(&mut self) {
        self.reaper = None;
    }
}

impl Drop for TreeGuard {
    fn drop(&mut self) {
        if let Some(reaper) = self.reaper {
            kill_tree_now(reaper);
        }
    }
}
