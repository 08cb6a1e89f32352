//! Finding and stopping everything a command started. A command runs under a reaper (see
//! [`super::reaper`]), so its whole tree is the reaper's descendants, whatever sessions or
//! groups they moved to: stopping is SIGTERM to the tree, a grace period, then SIGKILL to the
//! tree round after round (a process forked meanwhile becomes the reaper's child and is found
//! on the next round), and finally the reaper is told to go.

use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

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

/// `(pid, parent)` of every process that is not a zombie.
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

/// The descendants of `reaper` still in its process group (the command's group): what the
/// command left running in the background without detaching (`sh -c 'sleep 1 & exit 1'`),
/// reported as background processes, as upstream lists its process group.
pub fn group_members(reaper: i32) -> Vec<i32> {
    descendants(reaper)
        .into_iter()
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // pid (comm) state ppid pgrp ...
            stat.rsplit_once(") ")
                .and_then(|(_, rest)| rest.split_whitespace().nth(2)?.parse::<i32>().ok())
                == Some(reaper)
        })
        .collect()
}

/// Kills (SIGKILL) every descendant of `reaper` except `keep` and their descendants: what a
/// finished command left behind without being asked to (`setsid -f`, double forks).
/// Returns how many were killed.
pub fn prune(reaper: i32, keep: &[i32]) -> usize {
    let parents = parent_map();
    let children = |p: i32| parents.iter().filter(move |(_, pp)| *pp == p).map(|(c, _)| *c);
    let mut kept: Vec<i32> = keep.to_vec();
    let mut i = 0;
    while i < kept.len() {
        let more: Vec<i32> = children(kept[i]).filter(|c| !kept.contains(c)).collect();
        kept.extend(more);
        i += 1;
    }
    let mut killed = 0;
    for p in descendants(reaper) {
        if !kept.contains(&p) && kill(Pid::from_raw(p), Signal::SIGKILL).is_ok() {
            killed += 1;
        }
    }
    killed
}

/// Stops the tree under `reaper`: SIGTERM to its group and every descendant, then after
/// `grace` (or as soon as all are gone) [`kill_tree_now`]. The caller reaps its own child.
pub async fn terminate_tree(reaper: i32, grace: Duration) {
    let _ = killpg(Pid::from_raw(reaper), Signal::SIGTERM);
    for p in descendants(reaper) {
        let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
    }
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline && !descendants(reaper).is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    kill_tree_now(reaper);
}

/// SIGKILL to every descendant of `reaper`, round after round until none is left (bounded),
/// then the reaper is told to stop (it kills anything that slipped through and exits).
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
