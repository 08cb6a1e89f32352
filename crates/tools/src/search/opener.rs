//! How a search opens the files its walk finds: through the workspace's file layer, each
//! folder's path checked once for its files ([`toolbelt_core::workspace::Folder`]; every file
//! is still opened beneath its root when it is used, and no folder is held open). A parallel
//! walk visits a folder's files close together, though not always in one run (a subfolder's
//! files can come between), so the checks of the few folders used last are kept.
//!
//! Every check runs before a byte is read: a check left until a match is found would make the
//! search of a refused file take longer when the pattern matches it, and a deadline turn that
//! into a different answer (found by an adversarial review of issue 22).

use std::fs::File;
use std::path::Path;

use toolbelt_core::Workspace;
#[cfg(unix)]
use toolbelt_core::workspace::Folder;
use toolbelt_core::workspace::OpenError;

/// Folders whose checks one walker thread keeps.
#[cfg(unix)]
const KEPT: usize = 8;

/// Opens files for one walker thread.
pub(crate) struct Opener<'w> {
    ws: &'w Workspace,
    /// Where failures that leave the answer partial are counted.
    unread: &'w super::unread::Unread,
    /// The folders used last, the latest at the end.
    #[cfg(unix)]
    recent: Vec<Folder<'w>>,
}

impl<'w> Opener<'w> {
    pub(crate) fn new(ws: &'w Workspace, unread: &'w super::unread::Unread) -> Self {
        Self {
            ws,
            unread,
            #[cfg(unix)]
            recent: Vec::with_capacity(KEPT),
        }
    }

    /// The file at `path` (absolute, as the walk found it), opened for reading, with its size
    /// when the open learned it (see [`Folder::open_read`]); `None` when the layer refuses it
    /// (outside the roots, a sensitive file, a hard link to one) or it cannot be opened
    /// (counted in the search's [`Unread`](super::unread::Unread) when that leaves the answer
    /// partial).
    pub(crate) fn open(&mut self, path: &Path) -> Option<(File, Option<u64>)> {
        let opened = self.open_file(path);
        opened.map_err(|e| self.unread.open(&e)).ok()
    }

    fn open_file(&mut self, path: &Path) -> Result<(File, Option<u64>), OpenError> {
        #[cfg(unix)]
        if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
            return self.folder(dir).open_read(name);
        }
        let resolved = toolbelt_core::workspace::ResolvedPath {
            lexical: path.to_path_buf(),
            real: path.to_path_buf(),
        };
        #[cfg(unix)]
        {
            self.ws.open_read(&resolved).map(|file| (file, None))
        }
        #[cfg(not(unix))]
        {
            self.ws.check_access(&resolved, toolbelt_core::workspace::Access::Read)?;
            Ok((File::open(path)?, None))
        }
    }

    /// The folder `dir`, from the kept ones or checked now (the oldest kept one let go).
    #[cfg(unix)]
    fn folder(&mut self, dir: &Path) -> &Folder<'w> {
        let kept = self.recent.iter().rposition(|f| f.path().as_os_str() == dir.as_os_str());
        match kept {
            Some(i) => self.recent[i..].rotate_left(1),
            None => {
                if self.recent.len() == KEPT {
                    self.recent.remove(0);
                }
                self.recent.push(self.ws.folder(dir));
            }
        }
        &self.recent[self.recent.len() - 1]
    }
}
