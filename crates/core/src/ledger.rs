//! What the model has seen of each file in this session, so edits can tell when a file changed
//! on disk behind its back.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A content fingerprint (stable within one process).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Fingerprints of file contents as the model last saw them (read or written).
#[derive(Debug, Default)]
pub struct FileLedger {
    seen: Mutex<HashMap<PathBuf, u64>>,
}

impl FileLedger {
    /// Records the content the model now knows for `path`.
    pub fn record(&self, path: &Path, bytes: &[u8]) {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.to_path_buf(), fingerprint(bytes));
    }

    /// `true` when the model saw this file and its content has changed since.
    pub fn is_stale(&self, path: &Path, current: &[u8]) -> bool {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.get(path).is_some_and(|f| *f != fingerprint(current))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_only_when_seen_and_changed() {
        let l = FileLedger::default();
        let p = Path::new("/x");
        assert!(!l.is_stale(p, b"anything"), "never seen: cannot tell");
        l.record(p, b"v1");
        assert!(!l.is_stale(p, b"v1"));
        assert!(l.is_stale(p, b"v2"));
    }
}
