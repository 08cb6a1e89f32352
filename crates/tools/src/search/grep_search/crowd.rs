//! Crowded folders: past a folder's first files, the walker's filter sets files aside.

use std::path::{Path, PathBuf};

/// Files of one folder the walker queues as it lists it, at most: the `ignore` crate's
/// parallel walker queues every entry of a folder before any is searched (a folder of a
/// million files took 282 MB; issue 35), so the rest of a larger folder are set aside by name
/// and searched after the walk.
const QUEUED_PER_FOLDER: usize = 10_000;

thread_local! {
    /// The folder this walker thread is listing, and how many of its files it has queued.
    static LISTING: std::cell::RefCell<Option<(PathBuf, usize)>> = const { std::cell::RefCell::new(None) };
}

/// Whether `path`, a file its folder's listing gives now, is past the first
/// [`QUEUED_PER_FOLDER`] of that folder (a thread lists a folder's names one after another).
pub(super) fn crowded(path: &Path) -> bool {
    let Some(folder) = path.parent() else { return false };
    LISTING.with(|l| {
        let mut l = l.borrow_mut();
        match &mut *l {
            Some((f, n)) if f == folder => {
                *n += 1;
                *n > QUEUED_PER_FOLDER
            }
            _ => {
                *l = Some((folder.to_path_buf(), 1));
                false
            }
        }
    })
}
