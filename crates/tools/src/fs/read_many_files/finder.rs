//! One thread of the walk for the files to read.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;
use toolbelt_core::sync::LockExt as _;
use toolbelt_core::workspace::OpenError;
use toolbelt_core::workspace::walk::{Entry, Kind as WalkKind, Listed, Step, Visitor};

use super::patterns::excludes_dir;
use super::{READ_MANY_FILES, Walked};
use crate::search::unread::Unread;

/// One thread of the walk for the files to read.
pub(super) struct Finder<'a> {
    pub(super) dir: &'a Path,
    pub(super) includes: &'a globset::GlobSet,
    pub(super) excludes: &'a globset::GlobSet,
    pub(super) gathered: &'a Mutex<Vec<Walked>>,
    /// Files found by every thread, to stop at [`READ_MANY_FILES`].
    pub(super) count: &'a AtomicUsize,
    pub(super) unread: &'a Unread,
    pub(super) cancel: &'a CancellationToken,
    /// What this thread found, added to `gathered` when it ends.
    pub(super) mine: Vec<Walked>,
}

impl Drop for Finder<'_> {
    fn drop(&mut self) {
        self.gathered.locked().append(&mut self.mine);
    }
}

impl Visitor for Finder<'_> {
    fn visit(&mut self, _folder: &Listed<'_>, entry: &Entry<'_>) -> Step {
        if self.cancel.is_cancelled() || self.count.load(Ordering::Relaxed) >= READ_MANY_FILES {
            return Step::Quit;
        }
        let Ok(rel) = entry.path.strip_prefix(self.dir) else { return Step::Go };
        if entry.kind == WalkKind::Folder {
            let rel = rel.to_string_lossy().replace('\\', "/");
            return if excludes_dir(self.excludes, &rel) { Step::Skip } else { Step::Go };
        }
        if self.includes.is_match(rel) && !self.excludes.is_match(rel) {
            if self.count.fetch_add(1, Ordering::Relaxed) >= READ_MANY_FILES {
                return Step::Quit;
            }
            let ino = (entry.kind != WalkKind::Symlink).then(|| entry.ino());
            self.mine.push((entry.path.to_path_buf(), ino));
        }
        Step::Go
    }

    fn failed(&mut self, _path: &Path, error: OpenError) {
        self.unread.open(&error);
    }

    fn changed(&mut self, _path: &Path) {
        self.unread.changed();
    }
}
