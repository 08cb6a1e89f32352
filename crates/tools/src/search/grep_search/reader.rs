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

/// Why a file was not searched, from the searcher's error: a line past the cap (`caps`: this
/// search's, a simple pattern's, a file's alone) says which cap and what to do.
pub(super) fn why_unsearchable(
    error: &str,
    (cap, most, whole): (usize, usize, usize),
    single_file: bool,
) -> String {
    let mib = |n: usize| n as f64 / f64::from(1 << 20);
    if !error.contains("allocation limit") {
        return error.to_string();
    }
    if cap < most {
        // The searcher holds its 64 KiB buffer beyond the limit it is given.
        let cap = cap + (64 << 10);
        let size = if cap >= 1 << 20 {
            format!("{:.1} MiB", mib(cap))
        } else {
            format!("{} KiB", cap >> 10)
        };
        format!(
            "a line is longer than the {size} this pattern may search in one piece (a costly pattern's limit; simpler patterns search lines up to {:.0} MiB)",
            mib(most)
        )
    } else if !single_file {
        format!(
            "a line is longer than the {:.0} MiB each search thread holds in memory (search the file alone, with its path as dir_path, for lines up to {} MiB)",
            mib(cap),
            whole >> 20
        )
    } else {
        format!("a line is longer than the {} MiB a search holds in memory", whole >> 20)
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
