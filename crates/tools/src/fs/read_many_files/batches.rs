//! The files of a read_many_files call, read a batch at a time.

/// Files read at once, together at most this many bytes (a file larger alone is read alone):
/// ten 20 MB files were read in one go before the output budget was looked at, 94 MB a call
/// (issue 35, fifth attack).
const BATCH_BYTES: u64 = 8 << 20;

/// `files` in order, in batches of at most `most` files and [`BATCH_BYTES`] by their `sizes`
/// (as the walk's checks found them).
pub(super) fn batches<'a, T>(
    files: &'a [T],
    sizes: &'a [u64],
    most: usize,
) -> impl Iterator<Item = &'a [T]> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= files.len() {
            return None;
        }
        let (mut end, mut bytes) = (start, 0u64);
        while end < files.len() && end - start < most {
            let size = sizes.get(end).copied().unwrap_or(0);
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
        let files = ["f0", "f1", "f2", "f3", "f4", "f5"];
        let bytes = [3 << 20, 3 << 20, 3 << 20, 20 << 20, 10, 10];
        let sizes: Vec<usize> = batches(&files, &bytes, 64).map(<[&str]>::len).collect();
        assert_eq!(sizes, [2, 1, 1, 2]);
        let sizes: Vec<usize> = batches(&files, &bytes, 1).map(<[&str]>::len).collect();
        assert_eq!(sizes, [1; 6]);
    }
}
