//! What toolbelt keeps under its state folder's `tmp/` (saved outputs, shell and background
//! logs) stays within [`KEPT_TOTAL_BYTES`](crate::limits::KEPT_TOTAL_BYTES): files being
//! written (by this process) are registered, each has its own cap and they share what is left
//! of the total; finished files go oldest first when room is needed. (A minute's grace for
//! "recent" files let one session keep 641 MiB in ten calls, and 300 background commands
//! 1.1 GB, issue 35.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::sync::LockExt as _;

/// Files being written now, with the bytes written so far.
static LIVE: Mutex<Option<HashMap<PathBuf, u64>>> = Mutex::new(None);

fn live_total() -> u64 {
    LIVE.locked().as_ref().map_or(0, |m| m.values().sum())
}

fn is_live(path: &Path) -> bool {
    LIVE.locked().as_ref().is_some_and(|m| m.contains_key(path))
}

/// A kept file being written: registered while it lives, so pruning leaves it alone; each
/// write asks [`KeptFile::room`] first.
#[derive(Debug)]
pub struct KeptFile {
    path: PathBuf,
    cap: u64,
    total: u64,
}

impl KeptFile {
    /// Registers `path` (under `tmp`) as written from now on, at most `cap` bytes, with the
    /// files already there pruned to make room.
    pub fn start(tmp: &Path, path: &Path, cap: u64) -> Self {
        LIVE.locked().get_or_insert_with(HashMap::new).insert(path.to_path_buf(), 0);
        let total = crate::limits::KEPT_TOTAL_BYTES;
        prune_kept(tmp, total);
        Self { path: path.to_path_buf(), cap, total }
    }

    /// How many of `wanted` bytes may be written now (the file's cap, and what the files
    /// being written have left of the total), counted as written.
    pub fn room(&self, wanted: u64) -> u64 {
        let mut live = LIVE.locked();
        let map = live.get_or_insert_with(HashMap::new);
        let others: u64 = map.iter().filter(|(p, _)| **p != self.path).map(|(_, n)| *n).sum();
        let mine = map.get(&self.path).copied().unwrap_or(0);
        let left = self.cap.saturating_sub(mine).min(self.total.saturating_sub(others + mine));
        let granted = wanted.min(left);
        map.insert(self.path.clone(), mine + granted);
        granted
    }

    /// The bytes written (granted) so far.
    pub fn written(&self) -> u64 {
        LIVE.locked().as_ref().and_then(|m| m.get(&self.path).copied()).unwrap_or(0)
    }
}

impl Drop for KeptFile {
    fn drop(&mut self) {
        if let Some(m) = LIVE.locked().as_mut() {
            m.remove(&self.path);
        }
    }
}

/// Keeps what toolbelt saved under `tmp` within `keep` bytes in all, counting the files being
/// written: the oldest finished files go first (files another toolbelt process is writing are
/// not known here; removing one only unlinks it). Folders more than four levels down are not
/// looked into. Returns the bytes removed.
pub fn prune_kept(tmp: &Path, keep: u64) -> u64 {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<(std::time::SystemTime, u64, PathBuf)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let Ok(meta) = e.path().symlink_metadata() else { continue };
            if meta.is_dir() && depth < 4 {
                walk(&e.path(), depth + 1, out);
            } else if meta.is_file() {
                let when = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                out.push((when, meta.len(), e.path()));
            }
        }
    }
    let mut files = Vec::new();
    walk(tmp, 0, &mut files);
    files.retain(|(_, _, p)| !is_live(p));
    let live = live_total();
    let mut total: u64 = files.iter().map(|f| f.1).sum::<u64>() + live;
    if total <= keep {
        return 0;
    }
    files.sort();
    let mut removed = 0;
    for (_, len, path) in files {
        if total <= keep {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
            removed += len;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_being_written_share_the_total_and_are_not_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path();
        let a = tmp.join("a.log");
        let b = tmp.join("b.log");
        std::fs::write(tmp.join("old.txt"), vec![b'x'; 100]).unwrap();
        let ka = KeptFile { path: a.clone(), cap: 60, total: 100 };
        LIVE.locked().get_or_insert_with(HashMap::new).insert(a.clone(), 0);
        let kb = KeptFile { path: b.clone(), cap: 60, total: 100 };
        LIVE.locked().get_or_insert_with(HashMap::new).insert(b.clone(), 0);
        assert_eq!(ka.room(50), 50);
        assert_eq!(ka.room(50), 10, "its own cap");
        assert_eq!(kb.room(50), 40, "what is left of the total");
        assert_eq!(kb.room(1), 0);
        std::fs::write(&a, vec![b'a'; 60]).unwrap();
        // A finished file older than the live ones goes when room is needed; live ones stay.
        prune_kept(tmp, 100);
        assert!(!tmp.join("old.txt").exists() && a.exists());
        drop(ka);
        assert_eq!(kb.written(), 40);
        drop(kb);
        assert!(!is_live(&b));
    }
}
