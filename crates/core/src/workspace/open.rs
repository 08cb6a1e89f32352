//! The file layer: tools get files from here, as handles opened beneath a root (see
//! [`super::beneath`]), never by opening a name themselves. Every open re-resolves the path
//! beneath its root and re-applies the sensitive-path rules to what it really reached, so a path
//! approved earlier cannot be swapped for a way out before it is used.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, CWD, Mode, OFlags, fstat, linkat, mkdirat, openat, renameat, unlinkat};

use super::beneath::{self, Found, WalkError, Want};
use super::links::LinkRefusal;
use super::{PathError, ResolvedPath, Workspace};

/// Why a file could not be opened: a path the rules refuse, or the file system's answer.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Outside the workspace, sensitive, or unresolvable.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The file system's error (not found, permission denied, ...).
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// What an edit tool may read and replace: a regular file no larger than the cap.
#[derive(Debug, thiserror::Error)]
pub enum FileKindError {
    /// A FIFO, socket or device: reading it could block or never end.
    #[error("not a regular file")]
    Special,
    /// A folder.
    #[error("a directory")]
    Directory,
    /// Larger than the cap.
    #[error("{size} bytes, over the limit of {limit}")]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The cap.
        limit: u64,
    },
}

impl Workspace {
    /// The root `p` lies under (by its absolute, lexical form) and the rest of it.
    pub(super) fn locate(&self, p: &Path) -> Option<(usize, PathBuf)> {
        self.root_dirs
            .iter()
            .enumerate()
            .find_map(|(i, r)| p.strip_prefix(&r.real).ok().map(|rest| (i, rest.to_path_buf())))
    }

    /// The real path of a lexical one: walked beneath its root when it is under one (symlinks
    /// followed by the layer's rules; an escape comes back as the outside path it reaches, for
    /// the containment check to refuse), otherwise resolved by name.
    pub(super) fn real_path(&self, lexical: &Path) -> Result<PathBuf, PathError> {
        let (root, rel) = match self.locate(lexical) {
            Some(located) => located,
            // Not under a root by its spelling: by name, then beneath the root it reaches.
            None => {
                let real = super::paths::robust_realpath(lexical)
                    .map_err(|e| PathError::Resolve(e.to_string()))?;
                match self.locate(&real) {
                    Some(located) => located,
                    None => return Ok(real),
                }
            }
        };
        match beneath::walk(&self.root_dirs, root, &rel, Want::Open(OFlags::PATH), true) {
            Ok(found) => Ok(found.real),
            Err(WalkError::Escape(outside)) => Ok(outside),
            Err(e) => Err(walk_error(e)),
        }
    }

    /// Walks to `path` beneath its root, checks what was reached, and returns it.
    pub(super) fn reach(
        &self,
        path: &ResolvedPath,
        want: Want,
        allow_missing: bool,
    ) -> Result<Found, OpenError> {
        let temp;
        let (roots, root, rel) = match self.locate(&path.real) {
            Some((root, rel)) => (&self.root_dirs[..], root, rel),
            None => {
                // Outside every root only the project temp folder is allowed, beneath its own
                // handle.
                self.check_real_as(&path.real, &path.lexical)?;
                let rel = path
                    .real
                    .strip_prefix(&self.temp_dir)
                    .map_err(|_| OpenError::Io(io::Error::other("not beneath a workspace root")))?;
                // A write may be the first thing in the temp folder; a read of it finds nothing.
                if matches!(want, Want::Parent) {
                    crate::files::private_dir(&self.temp_dir)?;
                }
                temp = [beneath::RootDir::open(&self.temp_dir)?];
                (&temp[..], 0, rel.to_path_buf())
            }
        };
        let found = match beneath::walk(roots, root, &rel, want, allow_missing) {
            Ok(f) => f,
            Err(WalkError::Escape(outside)) => {
                self.check_real_as(&outside, &path.lexical)?;
                return Err(PathError::Resolve(outside.display().to_string()).into());
            }
            Err(WalkError::Io(e)) => return Err(OpenError::Io(e)),
            Err(e) => return Err(walk_error(e).into()),
        };
        self.check_real(&found.real)?;
        // Checked on what the walk reached: a link in a writable root that leads into a
        // read-only one must not make it writable.
        if matches!(want, Want::Parent) {
            self.check_writable(&found.real, &path.lexical)?;
        }
        if let (Some(fd), Want::Open(flags)) = (&found.fd, want)
            && !flags.contains(OFlags::PATH)
        {
            self.check_links(fd.as_fd(), &fstat(fd).map_err(io::Error::from)?, &found.real)?;
        }
        Ok(found)
    }

    /// For a name a walk shows: a hard link to a sensitive file is hidden like the file's own
    /// name, but one whose other name lies outside is shown (the name is the workspace's own;
    /// reading it is refused, and the refusal says why).
    pub(super) fn check_sensitive_links(
        &self,
        st: &rustix::fs::Stat,
        real: &Path,
    ) -> Result<(), PathError> {
        if !several_names(st) {
            return Ok(());
        }
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        let key = (st.st_dev as u64, st.st_ino as u64);
        match self.linked.sensitive(key, &self.root_dirs, &self.sensitive) {
            None => Ok(()),
            Some(hit) => Err(PathError::Sensitive {
                path: real.display().to_string(),
                rule: hit.rule,
                origin: hit.origin,
                link: true,
            }),
        }
    }

    /// The open file `fd` (`st` its status) is refused when it has several names and another of
    /// them is sensitive or lies outside the roots (see [`super::links`]).
    pub(super) fn check_links(
        &self,
        fd: BorrowedFd<'_>,
        st: &rustix::fs::Stat,
        real: &Path,
    ) -> Result<(), PathError> {
        if !several_names(st) {
            return Ok(());
        }
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        let key = (st.st_dev as u64, st.st_ino as u64);
        let shown = real.display().to_string();
        match self.linked.check(fd, key, &self.root_dirs, &self.sensitive) {
            None => Ok(()),
            Some(LinkRefusal::Sensitive(hit)) => Err(PathError::Sensitive {
                path: shown,
                rule: hit.rule,
                origin: hit.origin,
                link: true,
            }),
            Some(LinkRefusal::Outside) => {
                Err(self
                    .outside(format!("{shown} (a hard link: the same file has a name outside)")))
            }
            Some(LinkRefusal::Changing) => Err(self.outside(format!(
                "{shown} (a hard link whose names were changing while they were counted; \
                 try again once they stand still)"
            ))),
        }
    }

    /// Opens a file for reading (without blocking on a FIFO): the handle is the file the path
    /// reaches now, beneath a root and allowed by the sensitive-path rules.
    pub fn open_read(&self, path: &ResolvedPath) -> Result<File, OpenError> {
        let found = self.reach(path, Want::Open(OFlags::RDONLY | OFlags::NONBLOCK), false)?;
        found.fd.map(File::from).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound).into())
    }

    /// Opens a folder for reading its entries.
    pub fn open_dir(&self, path: &ResolvedPath) -> Result<OwnedFd, OpenError> {
        let want = Want::Open(OFlags::RDONLY | OFlags::DIRECTORY);
        let found = self.reach(path, want, false)?;
        found.fd.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound).into())
    }

    /// The metadata of what `path` reaches now beneath its root (symlinks followed by the layer's
    /// rules), from a handle: never from a second lookup by name.
    pub fn metadata(&self, path: &ResolvedPath) -> Result<std::fs::Metadata, OpenError> {
        let found = self.reach(path, Want::Open(OFlags::PATH), false)?;
        let fd = found.fd.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        Ok(File::from(fd).metadata()?)
    }

    /// Confirms what a walk by name yielded: `path` is resolved and checked like any tool path,
    /// reached beneath its root, and must be the very file the walk saw (`ino`, the inode its
    /// folder listed); a hard link to a sensitive file is refused as [`Self::open_read`]
    /// refuses it. A folder swapped for a symlink while the walk ran can make a walk list
    /// another folder; whatever it yields from there is refused here, names included.
    pub fn confirm_walked(
        &self,
        path: &Path,
        ino: Option<u64>,
    ) -> Result<std::fs::Metadata, OpenError> {
        use std::os::unix::fs::MetadataExt as _;
        // One walk beneath the root: the walk's path is already absolute and under a root, and
        // `reach` checks what it reaches (containment, sensitive rules).
        let asked = ResolvedPath { lexical: path.to_path_buf(), real: path.to_path_buf() };
        let found = self.reach(&asked, Want::Open(OFlags::PATH), false)?;
        let file = File::from(found.fd.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?);
        let meta = file.metadata()?;
        if meta.nlink() > 1 {
            self.check_sensitive_links(&fstat(&file).map_err(io::Error::from)?, &found.real)?;
        }
        match ino {
            Some(ino) if ino != meta.ino() => Err(changed_while_walked(path)),
            _ => Ok(meta),
        }
    }

    /// The place to write `path`: its folder's handle (missing folders created when
    /// `create_parents`) and its name there. A symlink at the name is followed by the layer's
    /// rules, so a write can never land outside.
    pub fn write_target(
        &self,
        path: &ResolvedPath,
        create_parents: bool,
    ) -> Result<WriteTarget, OpenError> {
        let found = self.reach(path, Want::Parent, true)?;
        let mut dir = found.dir.ok_or_else(|| io::Error::other("no folder for the write"))?;
        let mut name = found.name;
        if found.missing > 0 {
            if !create_parents && found.missing > 1 {
                return Err(io::Error::from(io::ErrorKind::NotFound).into());
            }
            // The missing components after the existing folder: all folders but the last.
            let rel = path_tail(&found.real, found.missing);
            let mut parts: Vec<OsString> = rel.iter().map(|c| c.to_os_string()).collect();
            let last = parts.pop();
            for part in parts {
                match mkdirat(&dir, part.as_os_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(io::Error::from(e).into()),
                }
                let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY;
                dir = openat(&dir, part.as_os_str(), flags, Mode::empty())
                    .map_err(io::Error::from)?;
            }
            name = last;
        }
        let name = name.ok_or_else(|| io::Error::from(io::ErrorKind::IsADirectory))?;
        Ok(WriteTarget { dir, name, real: found.real })
    }
}

/// The refusal of a file a walk listed that is no longer the file at its path.
pub(super) fn changed_while_walked(path: &Path) -> OpenError {
    PathError::Resolve(format!("{} changed while the folder was walked", path.display())).into()
}

/// The last `n` components of `p`.
fn path_tail(p: &Path, n: usize) -> PathBuf {
    let comps: Vec<_> = p.components().collect();
    comps[comps.len().saturating_sub(n)..].iter().collect()
}

fn walk_error(e: WalkError) -> PathError {
    match e {
        WalkError::Loop(at) => PathError::Resolve(format!(
            "Infinite recursion detected in robustRealpath: {}",
            at.display()
        )),
        WalkError::Escape(p) => PathError::Resolve(p.display().to_string()),
        WalkError::Io(e) => PathError::Resolve(e.to_string()),
    }
}

/// A file to be written: its folder's handle and its name there.
#[derive(Debug)]
pub struct WriteTarget {
    dir: OwnedFd,
    name: OsString,
    real: PathBuf,
}

const TEMP_PREFIX: &str = ".toolbelt-write-";

impl WriteTarget {
    /// The path the write lands on, every symlink resolved.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// The file's bytes as they are now (`None` when it does not exist), refused unless it is a
    /// regular file of at most `limit` bytes; nothing is read before that is known.
    pub fn read_existing(
        &self,
        ws: &Workspace,
        limit: u64,
    ) -> Result<Result<Option<Vec<u8>>, FileKindError>, OpenError> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match openat(&self.dir, self.name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(Ok(None)),
            // A socket cannot be opened at all.
            Err(rustix::io::Errno::NXIO) => return Ok(Err(FileKindError::Special)),
            Err(e) => return Err(io::Error::from(e).into()),
        };
        let st = fstat(&fd).map_err(io::Error::from)?;
        match rustix::fs::FileType::from_raw_mode(st.st_mode) {
            rustix::fs::FileType::RegularFile => {}
            rustix::fs::FileType::Directory => return Ok(Err(FileKindError::Directory)),
            _ => return Ok(Err(FileKindError::Special)),
        }
        // On the handle that is read: another name of a secret would show the secret.
        ws.check_links(fd.as_fd(), &st, &self.real)?;
        let size = u64::try_from(st.st_size).unwrap_or(0);
        if size > limit {
            return Ok(Err(FileKindError::TooLarge { size, limit }));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        File::from(fd).take(limit + 1).read_to_end(&mut bytes).map_err(OpenError::Io)?;
        if bytes.len() as u64 > limit {
            return Ok(Err(FileKindError::TooLarge { size: bytes.len() as u64, limit }));
        }
        Ok(Ok(Some(bytes)))
    }

    /// Replaces the file with `bytes` atomically: written to an unnamed file in the same folder
    /// (Linux `O_TMPFILE`; elsewhere a temporary name), synced, given the old file's mode and
    /// owner (a new file: `0666` less the umask), then renamed over the name. A write stopped at
    /// any point leaves the old file or the new one, and no temporary file.
    ///
    /// The rename, the one step that makes the change visible, happens through `gate`: a call
    /// the scheduler gave up (timed out, cancelled) renames nothing and leaves no temporary file.
    pub fn write(&self, bytes: &[u8], gate: &crate::commit::CommitGate) -> io::Result<()> {
        // The file being replaced (a regular file; not a link, which the rename replaces).
        let old = rustix::fs::statat(&self.dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .filter(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
            });
        if old.as_ref().is_some_and(|st| st.st_mode & 0o222 == 0) {
            return Err(io::Error::from_raw_os_error(13)); // EACCES, as writing it would
        }
        self.remove_stale_temps();
        let (file, temp_name) = self.temp_file()?;
        let cleanup = |e: io::Error| {
            if let Some(n) = &temp_name {
                let _ = unlinkat(&self.dir, n.as_os_str(), AtFlags::empty());
            }
            e
        };
        let mut file = File::from(file);
        file.write_all(bytes).map_err(cleanup)?;
        if let Some(st) = &old {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(st.st_mode & 0o7777))
                .map_err(|e| cleanup(e.into()))?;
            // Keeping another user's ownership needs privileges; without them the file is ours.
            let _ = rustix::fs::fchown(
                &file,
                Some(rustix::fs::Uid::from_raw(st.st_uid)),
                Some(rustix::fs::Gid::from_raw(st.st_gid)),
            );
        }
        file.sync_all().map_err(cleanup)?;
        let temp_name = match temp_name {
            Some(n) => n,
            None => self.link_unnamed(&file)?,
        };
        gate.commit(|| {
            Ok(renameat(&self.dir, temp_name.as_os_str(), &self.dir, self.name.as_os_str())?)
        })
        .inspect_err(|_| {
            let _ = unlinkat(&self.dir, temp_name.as_os_str(), AtFlags::empty());
        })?;
        let _ = rustix::fs::fsync(&self.dir);
        Ok(())
    }

    /// An unnamed file in the folder (`None` name), or, where the system has none, a named one.
    fn temp_file(&self) -> io::Result<(OwnedFd, Option<OsString>)> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
            if let Ok(fd) = openat(&self.dir, ".", flags, Mode::from_raw_mode(0o666)) {
                return Ok((fd, None));
            }
        }
        for attempt in 0..100u32 {
            let name = OsString::from(format!("{TEMP_PREFIX}{}-{attempt}", writer_id()));
            let flags =
                OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
            match openat(&self.dir, name.as_os_str(), flags, Mode::from_raw_mode(0o666)) {
                Ok(fd) => return Ok((fd, Some(name))),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::other("no free temporary name"))
    }

    /// Gives an unnamed file a temporary name in the folder (the last step before the rename).
    fn link_unnamed(&self, file: &File) -> io::Result<OsString> {
        use std::os::fd::AsRawFd;
        let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
        for attempt in 0..100u32 {
            let name = OsString::from(format!("{TEMP_PREFIX}{}-{attempt}", writer_id()));
            match linkat(
                CWD,
                proc_path.as_str(),
                &self.dir,
                name.as_os_str(),
                AtFlags::SYMLINK_FOLLOW,
            ) {
                Ok(()) => return Ok(name),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::other("no free temporary name"))
    }

    /// Temporary files an earlier write left when it was killed: only those whose writer is
    /// gone. A name carries its writer's pid and start time (`.toolbelt-write-PID.START-N`), so
    /// a file of a write still running, or of another program, is never touched (issue 35: any
    /// `.toolbelt-write-*` older than a minute was deleted, whoever made it).
    fn remove_stale_temps(&self) {
        let Ok(dir) = openat(
            &self.dir,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return;
        };
        let Ok(entries) = rustix::fs::Dir::read_from(&dir) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name().to_bytes();
            let Some(rest) = name.strip_prefix(TEMP_PREFIX.as_bytes()) else { continue };
            let Ok(rest) = std::str::from_utf8(rest) else { continue };
            let Some((writer, _)) = rest.rsplit_once('-') else { continue };
            if writer_gone(writer) {
                let _ = unlinkat(&self.dir, name, AtFlags::empty());
            }
        }
    }
}

/// This process as a writer of temporary files: `PID.START` (its start time in clock ticks
/// since boot, from `/proc/self/stat`; `0` where there is none).
fn writer_id() -> String {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let pid = std::process::id();
        format!("{pid}.{}", start_time(pid).unwrap_or(0))
    })
    .clone()
}

/// A process's start time (`/proc/PID/stat`, field 22).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.get(stat.rfind(')')? + 2..)?.split(' ').nth(19)?.parse().ok()
}

/// Whether the writer named `PID.START` is gone: no such process, or one that started at
/// another time (the pid was reused). A name in any other form is not ours: kept.
fn writer_gone(writer: &str) -> bool {
    let Some((pid, start)) = writer.split_once('.') else { return false };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else { return false };
    let Ok(raw) = i32::try_from(pid) else { return false };
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None) {
        Err(nix::errno::Errno::ESRCH) => true,
        _ => start != 0 && start_time(pid).is_some_and(|now| now != start),
    }
}

/// A regular file with more than one name.
fn several_names(st: &rustix::fs::Stat) -> bool {
    rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
        && st.st_nlink > 1
}
