//! Opening the folders a sandbox grants, as handles, by the walk toolbelt uses for its own files
//! (`files::owned::walk`): from `/` one component at a time, no name followed by the kernel, a
//! symlink on the way followed only where nobody but root could have planted it. A link in a
//! folder a user or a command can write (`/tmp/x -> /`, `~/.cache -> ...`) is not followed, and
//! the path is not granted.

use std::io;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::fstat;

use super::{Grant, SandboxError};

fn setup(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(e.to_string())
}

/// The identity of an open file: (device, inode).
pub(super) fn identity(fd: BorrowedFd<'_>) -> Result<(u64, u64), SandboxError> {
    let st = fstat(fd).map_err(setup)?;
    #[allow(clippy::useless_conversion)]
    Ok((u64::from(st.st_dev), u64::from(st.st_ino)))
}

/// Opens `path` for a grant to read. `Ok(None)`: it does not exist, or the way to it leads
/// through a symlink that someone other than root could have planted (logged).
pub(super) fn open(path: &Path) -> Result<Option<Grant>, SandboxError> {
    open_with(path, crate::files::owned::Missing::Fail)
}

/// Opens `path` for a grant to write: no symlink followed on the way at all.
pub(super) fn open_writable(path: &Path) -> Result<Option<Grant>, SandboxError> {
    open_with(path, crate::files::owned::Missing::FailNoLinks)
}

fn open_with(
    path: &Path,
    how: crate::files::owned::Missing,
) -> Result<Option<Grant>, SandboxError> {
    match crate::files::owned::walk(path, how) {
        Ok((fd, real)) => Ok(Some(Grant { path: real, fd: Arc::new(fd) })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            tracing::warn!(
                "sandbox: {} is not granted: the way to it leads through a symbolic link that a user or a command could have planted",
                path.display()
            );
            Ok(None)
        }
        // Not a folder on the way, or not ours to reach (`/root/.cargo/bin` on a PATH of
        // another user): nothing a command could use either.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR) | Some(libc::EACCES)) => Ok(None),
        Err(e) => Err(setup(format!("{}: {e}", path.display()))),
    }
}

/// Whether a writable grant at `granted` would hand out the home folder or one of the state
/// folders (it is one of them or lies above one): the first such folder.
pub(super) fn covers<'a>(granted: &Path, home: &'a Path, state: &'a [PathBuf]) -> Option<&'a Path> {
    std::iter::once(home).chain(state.iter().map(PathBuf::as_path)).find(|p| p.starts_with(granted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_path_is_opened_and_named_as_it_is() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(real.join("a")).unwrap();
        let g = open(&real.join("a")).unwrap().unwrap();
        assert_eq!(g.path, real.join("a"));
        assert!(open(&real.join("missing")).unwrap().is_none());
        let root = open(Path::new("/")).unwrap().unwrap();
        assert_eq!(root.path, Path::new("/"));
    }

    #[test]
    fn a_link_in_a_folder_others_may_write_is_not_followed() {
        // /tmp is writable by everyone: a link there is never followed, whoever made it.
        let d = tempfile::tempdir_in("/tmp").unwrap();
        let link = d.path().with_extension("link");
        std::os::unix::fs::symlink(d.path(), &link).unwrap();
        let got = open(&link).unwrap();
        std::fs::remove_file(&link).unwrap();
        assert!(got.is_none(), "{got:?}");
    }

    #[test]
    fn what_the_grant_covers() {
        let state = [PathBuf::from("/h/.toolbelt")];
        assert_eq!(covers(Path::new("/"), Path::new("/h"), &state), Some(Path::new("/h")));
        assert_eq!(
            covers(Path::new("/h/.toolbelt"), Path::new("/h"), &state),
            Some(Path::new("/h/.toolbelt"))
        );
        assert_eq!(covers(Path::new("/h/.cache"), Path::new("/h"), &state), None);
    }

    #[test]
    fn identity_is_device_and_inode() {
        use std::os::fd::AsFd;
        let f = tempfile::tempfile().unwrap();
        let st = fstat(&f).unwrap();
        #[allow(clippy::useless_conversion)]
        let want = (u64::from(st.st_dev), u64::from(st.st_ino));
        assert_eq!(identity(f.as_fd()).unwrap(), want);
    }
}
