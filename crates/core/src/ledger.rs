//! What the model has seen of each file in this session, so edits can tell when a file changed
//! on disk behind its back.

use crate::sync::LockExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A content fingerprint: a fast 64-bit word-at-a-time hash (several GB/s), enough to notice
/// that a file changed; not cryptographic.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = bytes.len() as u64 ^ K;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(23) ^ w).wrapping_mul(K);
    }
    for b in chunks.remainder() {
        h = (h.rotate_left(23) ^ u64::from(*b)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// Fingerprints of file contents as the model last saw them (read or written).
#[derive(Debug, Default)]
pub struct FileLedger {
    seen: Mutex<HashMap<PathBuf, u64>>,
}

impl FileLedger {
    /// Records the content the model now knows for `path`.
    pub fn record(&self, path: &Path, bytes: &[u8]) {
        self.seen.locked().insert(path.to_path_buf(), fingerprint(bytes));
    }

    /// Takes over what `other` recorded (a read made on another thread, kept apart until the
    /// model is known to get it).
    pub fn absorb(&self, other: FileLedger) {
        let theirs = other.seen.into_value();
        self.seen.locked().extend(theirs);
    }

    /// `true` when the model saw this file and its content has changed since.
    pub fn is_stale(&self, path: &Path, current: &[u8]) -> bool {
        let seen = self.seen.locked();
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
        assert_ne!(fingerprint(b"abcdefgh1"), fingerprint(b"abcdefgh2"));
        assert_ne!(fingerprint(b""), fingerprint(b"\0"));
    }
}
