//! Folders and files toolbelt makes for itself (saved outputs, logs, settings it writes, trust
//! decisions, approvals), reached without a symlink anyone but root could have planted: the
//! path is walked from `/` one component at a time, no name is followed by the kernel, and a
//! symlink on the way is followed only when it and the folder it sits in belong to root, that
//! folder is not writable by group or others, and it lies outside the user's home and
//! toolbelt's state folders (`/tmp -> /private/tmp`, `/home -> /usr/home`). A link planted in a folder a command can write (`~/.toolbelt/tmp/<project> ->
//! /elsewhere`) stops the walk: toolbelt never writes through it (issue 33).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, fstat, mkdirat, openat, readlinkat, statat};

/// Symlinks followed on one walk before it counts as a loop.
const MAX_HOPS: usize = 40;

/// What the walk does with a missing folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// It is an error (`NotFound`).
    Fail,
    /// It is created, private to the user (0700).
    Create,
    /// It is an error, and no symlink is followed at all (`ELOOP`): for what a sandbox grants
    /// for writing, where a link inside a writable folder could have been planted by a command
    /// run as root (issue 33, second review).
    FailNoLinks,
}

/// Folders in which no symlink is ever followed, whoever owns it: the user's home folder and
/// toolbelt's state folder (as they really are), where a command running as the user (as root,
/// too) could plant one.
fn private_prefixes() -> &'static [PathBuf] {
    static P: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        [super::user_home(), Some(super::state_dir())]
            .into_iter()
            .flatten()
            .filter_map(|p| std::fs::canonicalize(&p).ok().or(Some(p)))
            .collect()
    })
}

/// Whether a symlink found in `dir` (at `here`) as `name` is one only root could have made, in
/// a system folder: root's link, in a folder of root's that group and others cannot write,
/// outside the home and state folders.
fn trusted_link(dir: &OwnedFd, here: &Path, name: &OsStr) -> io::Result<bool> {
    if private_prefixes().iter().any(|p| here.starts_with(p)) {
        return Ok(false);
    }
    let link = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    let folder = fstat(dir)?;
    Ok(link.st_uid == 0 && folder.st_uid == 0 && folder.st_mode & 0o022 == 0)
}

fn components(p: &Path) -> VecDeque<OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

fn root() -> io::Result<OwnedFd> {
    Ok(rustix::fs::open("/", OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?)
}

/// Walks `path` (absolute) from `/` as the module says. Returns an `O_PATH` handle of what it
/// names (any kind of file) and its real path. A symlink that may not be followed is `ELOOP`.
pub fn walk(path: &Path, missing: Missing) -> io::Result<(OwnedFd, PathBuf)> {
    if !path.is_absolute() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not an absolute path"));
    }
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut queue = components(path);
    let mut stack: Vec<(OwnedFd, PathBuf)> = vec![(root()?, PathBuf::from("/"))];
    let mut hops = 0;
    while let Some(name) = queue.pop_front() {
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
            }
            continue;
        }
        let (dir, here) = stack.last().ok_or_else(|| io::Error::other("empty walk"))?;
        let fd = match openat(dir, name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) if missing == Missing::Create => {
                match mkdirat(dir, name.as_os_str(), Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                openat(dir, name.as_os_str(), flags, Mode::empty())?
            }
            Err(e) => return Err(e.into()),
        };
        if FileType::from_raw_mode(fstat(&fd)?.st_mode) == FileType::Symlink {
            hops += 1;
            if hops > MAX_HOPS
                || missing == Missing::FailNoLinks
                || !trusted_link(dir, here, &name)?
            {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            let target = readlinkat(dir, name.as_os_str(), Vec::new())?;
            let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
            if target.is_absolute() {
                stack.truncate(1);
            }
            let mut rest = components(&target);
            rest.extend(queue.drain(..));
            queue = rest;
            continue;
        }
        let next = here.join(&name);
        stack.push((fd, next));
    }
    let (fd, real) = stack.pop().ok_or_else(|| io::Error::other("empty walk"))?;
    Ok((fd, real))
}

/// Opens the folder `dir` for toolbelt's own files: walked as the module says, missing folders
/// created private (0700), and `dir` itself a real folder of this user, made private if its
/// mode is loose. The handle is a real (not `O_PATH`) one: files are made beneath it.
pub fn private_dir(dir: &Path) -> io::Result<OwnedFd> {
    let dir =
        if dir.is_absolute() { dir.to_path_buf() } else { std::env::current_dir()?.join(dir) };
    let (fd, real) = walk(&dir, Missing::Create)?;
    let st = fstat(&fd)?;
    let uid = rustix::process::geteuid().as_raw();
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory || st.st_uid != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a folder of this user; refusing to save there", real.display()),
        ));
    }
    // Reopened for real through its own handle (`.` beneath the O_PATH one).
    let dirfd =
        openat(&fd, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    if st.st_mode & 0o077 != 0 {
        rustix::fs::fchmod(&dirfd, Mode::from_raw_mode(0o700))?;
    }
    Ok(dirfd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_made_private_and_a_planted_link_stops_the_walk() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        let made = base.join("a/b/c");
        private_dir(&made).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&made).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // A link in a folder of ours is not followed: it could have been planted.
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), base.join("a/link")).unwrap();
        if rustix::process::geteuid().is_root() {
            // As root every link is root's: make it one another user could have planted.
            std::os::unix::fs::lchown(base.join("a/link"), Some(65534), None).unwrap();
        }
        let err = private_dir(&base.join("a/link/sub")).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
        assert!(!outside.path().join("sub").exists());
    }
}
