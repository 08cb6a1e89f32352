//! The files of a read_many_files call, read a batch at a time.

use toolbelt_core::workspace::ResolvedPath;

/// Files read at once, together at most this many bytes (a file larger alone is read alone):
/// ten 20 MB files were read in one go before the output budget was looked at, 94 MB a call
/// (issue 35, fifth attack).
const BATCH_BYTES: u64 = 8 << 20;

/// `files` in order, in batches of at most `most` files and [`BATCH_BYTES`] (by their size now).
pub(super) fn batches(
    files: &[ResolvedPath],
    most: usize,
) -> impl Iterator<Item = &[ResolvedPath]> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= files.len() {
            return None;
        }
        let (mut end, mut bytes) = (start, 0u64);
        while end < files.len() && end - start < most {
            let size = std::fs::metadata(&files[end].real).map_or(0, |m| m.len());
            if end > start && bytes + size > BATCH_BYTES {
                break;
            }
            bytes += size;
            end += 1;
        }
        let batch = &files[start..end];
        start = end;
        Some(batch)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 (fifth attack): ten files of 19.9 MB were read at once (94 MB a call, four
    /// calls 365 MB). Files go in batches of at most 8 MiB; a larger file alone.
    #[test]
    fn files_are_read_in_batches_bounded_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (i, size) in [3 << 20, 3 << 20, 3 << 20, 20 << 20, 10, 10].iter().enumerate() {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, vec![b'x'; *size]).unwrap();
            files.push(ResolvedPath { lexical: p.clone(), real: p });
        }
        let sizes: Vec<usize> = batches(&files, 64).map(<[ResolvedPath]>::len).collect();
        assert_eq!(sizes, [2, 1, 1, 2]);
        let sizes: Vec<usize> = batches(&files, 1).map(<[ResolvedPath]>::len).collect();
        assert_eq!(sizes, [1; 6]);
    }
}
