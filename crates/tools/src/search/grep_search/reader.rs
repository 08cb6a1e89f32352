//! The file a search reads, through the call's token.

use tokio_util::sync::CancellationToken;

/// A file read only while the call's token is live: each read of the searcher's buffer checks
/// it, so a cancelled or timed-out search stops within one buffer's work (issue 35).
pub(super) struct Cancellable<'a> {
    pub(super) file: &'a std::fs::File,
    pub(super) cancel: &'a CancellationToken,
}

impl std::io::Read for Cancellable<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.is_cancelled() {
            return Err(std::io::Error::other("the search was cancelled"));
        }
        std::io::Read::read(&mut &*self.file, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    #[test]
    fn a_cancelled_search_reads_no_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'a'; 100]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let cancel = CancellationToken::new();
        let mut r = Cancellable { file: &file, cancel: &cancel };
        let mut buf = [0u8; 10];
        assert_eq!(r.read(&mut buf).unwrap(), 10);
        cancel.cancel();
        let e = r.read(&mut buf).unwrap_err();
        assert!(e.to_string().contains("cancelled"), "{e}");
    }
}
