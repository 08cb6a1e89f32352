//! Resolution beneath a root handle: the one way from a path to a file. Each component is
//! opened relative to the folder handle before it, without following symlinks; a symlink is read
//! and followed by hand: a relative target continues from where it stands, an absolute one only
//! when it lies under one of the roots (it continues from that root's handle). `..` never climbs
//! above the root it started from. So no spelling of a path, no symlink and no folder swapped for
//! a symlink while the walk runs can lead outside the roots: every step holds a handle, and the
//! name is never looked up again.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, fstat, openat, readlinkat};

/// Symlinks followed in one resolution before it counts as a loop (as the kernel's limit).
pub(crate) const MAX_LINK_HOPS: usize = 40;

/// A root folder, opened once.
#[derive(Debug)]
pub(crate) struct RootDir {
    /// The root with every symlink resolved.
    pub real: PathBuf,
    /// The open folder.
    pub fd: OwnedFd,
}

impl RootDir {
    /// Opens `real` (already resolved) as a folder handle.
    pub(crate) fn open(real: &Path) -> io::Result<Self> {
        let fd = rustix::fs::open(real, dir_flags(), Mode::empty())?;
        Ok(Self { real: real.to_path_buf(), fd })
    }

    /// Opens the folder `given` names (following its symlinks: the user chose it) and takes
    /// its real path from the handle, not from a second lookup of the name: a parent swapped
    /// for a link between the two could otherwise give a handle on one folder and the path of
    /// another.
    pub(crate) fn open_given(given: &Path) -> io::Result<Self> {
        use std::os::fd::AsRawFd;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(given, flags, Mode::empty())?;
        let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .ok()
            .filter(|p| p.is_absolute() && !p.to_string_lossy().ends_with(" (deleted)"));
        let real = match real {
            Some(r) => r,
            // No /proc: resolve by name, then make sure it is the folder we hold.
            None => {
                let r = std::fs::canonicalize(given)?;
                let (a, b) = (fstat(&fd)?, rustix::fs::stat(&r)?);
                if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
                    return Err(io::Error::other("the folder changed while it was opened"));
                }
                r
            }
        };
        Ok(Self { real, fd })
    }
}

/// What the last component should become.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Want {
    /// Opened with these flags (plus no-follow and close-on-exec).
    Open(OFlags),
    /// Only located: its folder is opened, the last name is not (to create or replace it).
    Parent,
}

/// Where a walk ended.
#[derive(Debug)]
pub(crate) struct Found {
    /// The last component, opened (`Want::Open`, when it exists).
    pub fd: Option<OwnedFd>,
    /// The folder holding the last component (the fast path of an open leaves it out).
    pub dir: Option<OwnedFd>,
    /// The last component's name in `dir` (none when the path is a root itself).
    pub name: Option<OsString>,
    /// The path with every symlink resolved (missing components appended as given).
    pub real: PathBuf,
    /// Components that do not exist (the first of them and everything after it).
    pub missing: usize,
}

/// Why a walk stopped.
#[derive(Debug)]
pub(crate) enum WalkError {
    /// The path leads outside every root: here.
    Escape(PathBuf),
    /// More than [`MAX_LINK_HOPS`] symlinks.
    Loop(PathBuf),
    /// The file system said no.
    Io(io::Error),
}

impl From<rustix::io::Errno> for WalkError {
    fn from(e: rustix::io::Errno) -> Self {
        WalkError::Io(e.into())
    }
}

fn dir_flags() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let base = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let base = OFlags::RDONLY;
    base | OFlags::DIRECTORY | OFlags::CLOEXEC
}

fn dup(fd: &OwnedFd) -> Result<OwnedFd, WalkError> {
    fd.try_clone().map_err(WalkError::Io)
}

/// The components of a relative path, `.` dropped.
fn components(p: &Path) -> impl Iterator<Item = OsString> + '_ {
    p.components().filter_map(|c| match c {
        Component::Normal(s) => Some(s.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        _ => None,
    })
}

/// Walks `rel` beneath `roots[start]`. With `allow_missing`, a component that does not exist
/// ends the walk there (`Found::missing` counts what is left); otherwise it is an error.
pub(crate) fn walk(
    roots: &[RootDir],
    start: usize,
    rel: &Path,
    want: Want,
    allow_missing: bool,
) -> Result<Found, WalkError> {
    let root = &roots[start];
    if let Some(found) = fast_path(root, rel, want)? {
        return Ok(found);
    }
    let mut queue: VecDeque<OsString> = components(rel).collect();
    let mut stack: Vec<(OwnedFd, PathBuf)> = vec![(dup(&root.fd)?, root.real.clone())];
    let mut hops = 0;
    while let Some(name) = queue.pop_front() {
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
                continue;
            }
            let here = &stack[0].1;
            return Err(WalkError::Escape(here.parent().unwrap_or(here).to_path_buf()));
        }
        let last = queue.is_empty();
        let (dir, dir_real) = stack
            .last()
            .map(|(f, p)| (f, p.clone()))
            .ok_or_else(|| WalkError::Io(io::Error::other("empty walk stack")))?;
        let real = dir_real.join(&name);
        if last && matches!(want, Want::Parent) {
            // The last name itself may be a symlink: follow it, so that replacing it cannot
            // write through a link to outside.
            match readlinkat(dir, name.as_os_str(), Vec::new()) {
                Ok(target) => {
                    follow(roots, &mut stack, &mut queue, &mut hops, &real, target.as_bytes())?;
                    continue;
                }
                Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => {
                    return Ok(Found {
                        fd: None,
                        dir: Some(dup(dir)?),
                        name: Some(name),
                        real,
                        missing: 0,
                    });
                }
                Err(e) => return Err(e.into()),
            }
        }
        let flags = match want {
            Want::Open(f) if last => f | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            _ => dir_flags() | OFlags::NOFOLLOW,
        };
        match openat(dir, name.as_os_str(), flags, Mode::empty()) {
            // With `O_PATH` a symlink opens as itself: follow it.
            Ok(fd) if last && file_type(&fd)? == FileType::Symlink => {
                let target = readlinkat(dir, name.as_os_str(), Vec::new())?;
                follow(roots, &mut stack, &mut queue, &mut hops, &real, target.as_bytes())?;
            }
            Ok(fd) if last => {
                return Ok(Found {
                    fd: Some(fd),
                    dir: Some(dup(dir)?),
                    name: Some(name),
                    real,
                    missing: 0,
                });
            }
            Ok(fd) => stack.push((fd, real)),
            Err(rustix::io::Errno::NOENT) if allow_missing => {
                return missing_from(dir, name, real, queue);
            }
            // A symlink (ELOOP with no-follow; ENOTDIR when a folder was asked for; EMLINK on
            // some BSDs), or something that is not a folder.
            Err(
                e
                @ (rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR | rustix::io::Errno::MLINK),
            ) => {
                match readlinkat(dir, name.as_os_str(), Vec::new()) {
                    Ok(target) => {
                        follow(roots, &mut stack, &mut queue, &mut hops, &real, target.as_bytes())?
                    }
                    // A file where a folder should be: as missing, when that is allowed.
                    Err(_) if allow_missing && e == rustix::io::Errno::NOTDIR => {
                        return missing_from(dir, name, real, queue);
                    }
                    Err(_) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    // The path was a root (or came back to one): open it as asked.
    let (dir, real) = stack.pop().ok_or_else(|| WalkError::Io(io::Error::other("empty walk")))?;
    let fd = match want {
        Want::Open(f) => Some(openat(&dir, ".", f | OFlags::CLOEXEC, Mode::empty())?),
        Want::Parent => None,
    };
    Ok(Found { fd, dir: Some(dir), name: None, real, missing: 0 })
}

/// Linux 5.6+: one `openat2` that the kernel keeps beneath the root and that follows no symlink
/// at all. Then the real path is the root's joined with `rel`. `None` when it does not apply (a
/// symlink or `..` on the way, an old kernel, another system): the walk decides.
fn fast_path(root: &RootDir, rel: &Path, want: Want) -> Result<Option<Found>, WalkError> {
    let Want::Open(flags) = want else { return Ok(None) };
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    let Some(name) = rel.file_name().filter(|_| plain) else { return Ok(None) };
    match open_beneath(root, rel, flags) {
        // `O_PATH | O_NOFOLLOW` opens a trailing symlink as itself: the walk follows it.
        Some(fd) if flags.contains(OFlags::PATH) && file_type(&fd)? == FileType::Symlink => {
            Ok(None)
        }
        Some(fd) => Ok(Some(Found {
            fd: Some(fd),
            dir: None,
            name: Some(name.to_os_string()),
            real: root.real.join(rel),
            missing: 0,
        })),
        None => Ok(None),
    }
}

/// `rel` opened beneath `root` with one `openat2` (Linux 5.6+) that the kernel keeps beneath
/// the root and that follows no symlink at all (a trailing one is opened as itself with
/// `O_PATH`, refused otherwise). `None` when that fails for any reason (a symlink or `..` on the
/// way, a missing file, an old kernel, another system): the walk decides.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn open_beneath(root: &RootDir, rel: &Path, flags: OFlags) -> Option<OwnedFd> {
    use rustix::fs::{ResolveFlags, openat2};
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    openat2(&root.fd, rel, flags, Mode::empty(), resolve).ok()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn open_beneath(_: &RootDir, _: &Path, _: OFlags) -> Option<OwnedFd> {
    None
}

/// The walk stopped at `name`, which does not exist (or is a file where a folder should be):
/// the rest of the path is appended as given.
fn missing_from(
    dir: &OwnedFd,
    name: OsString,
    mut real: PathBuf,
    queue: VecDeque<OsString>,
) -> Result<Found, WalkError> {
    let missing = 1 + queue.len();
    real.extend(queue);
    Ok(Found { fd: None, dir: Some(dup(dir)?), name: Some(name), real, missing })
}

/// Follows a symlink found at `at`: its target's components go in front of the queue, from the
/// folder that holds it (relative) or from the root it lies under (absolute).
fn follow(
    roots: &[RootDir],
    stack: &mut Vec<(OwnedFd, PathBuf)>,
    queue: &mut VecDeque<OsString>,
    hops: &mut usize,
    at: &Path,
    target: &[u8],
) -> Result<(), WalkError> {
    *hops += 1;
    if *hops > MAX_LINK_HOPS {
        return Err(WalkError::Loop(at.to_path_buf()));
    }
    let target = Path::new(OsStr::from_bytes(target));
    let rest: Vec<OsString> = if target.is_absolute() {
        let lexical = super::paths::lexical_resolve(Path::new("/"), target);
        let Some(i) = roots.iter().position(|r| lexical.starts_with(&r.real)) else {
            // Report the whole path it would reach, as a realpath would.
            let rest: PathBuf = queue.iter().collect();
            return Err(WalkError::Escape(super::paths::lexical_resolve(&lexical, &rest)));
        };
        *stack = vec![(dup(&roots[i].fd)?, roots[i].real.clone())];
        components(lexical.strip_prefix(&roots[i].real).unwrap_or(Path::new(""))).collect()
    } else {
        components(target).collect()
    };
    for c in rest.into_iter().rev() {
        queue.push_front(c);
    }
    Ok(())
}

/// What kind of file a handle refers to.
fn file_type(fd: impl AsFd) -> Result<FileType, WalkError> {
    Ok(FileType::from_raw_mode(fstat(fd)?.st_mode))
}
