//! One ignore file: whether it may be read (judged on one handle: where it really is, what it
//! is, its size) and its text, read from that very file.

use std::path::{Path, PathBuf};

/// The largest ignore file that is read (a larger one is not read at all: its rules cut off
/// in the middle could hide less, or more, and a walker would hold all of it).
pub(super) const MAX_IGNORE_FILE: u64 = 4 << 20;

fn too_large() -> String {
    format!("is larger than {} MiB", MAX_IGNORE_FILE >> 20)
}

/// Whether an ignore file may be read (`Ok(true)`), is absent or not a file (`Ok(false)`:
/// nothing to read, a folder of that name included), or must not be read (`Err`, saying why):
/// a named pipe, socket or device (reading one blocks or never ends), a file over 4 MiB, or a
/// link (or a folder on the way) that leads outside `roots`, nowhere, or to something other
/// than a file. A repository can hold any of these, and a walk reads the ignore file of every
/// folder it enters. Judged on one handle that reads nothing and opens no device, as the
/// workspace's ignore service judges the files it reads.
pub fn check_ignore_file<R: AsRef<Path>>(roots: &[R], file: &Path) -> Result<bool, String> {
    judge(roots, file).map(|found| found.is_some())
}

/// An ignore file judged on one handle that reads nothing and opens no device (`O_PATH` on
/// Linux): where it really is (the kernel's answer for the handle, so a link or a folder linked
/// out of the workspace cannot lead elsewhere), what it is and its size. `None`: there is none.
/// Elsewhere than Linux the path is resolved again to judge it.
pub(super) fn judge<R: AsRef<Path>>(
    roots: &[R],
    file: &Path,
) -> Result<Option<std::fs::File>, String> {
    use std::io::ErrorKind;
    let linked = || std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink());
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(rustix::fs::OFlags::PATH.bits() as i32);
    }
    #[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        open.custom_flags(flags.bits() as i32);
    }
    let f = match open.open(file) {
        Ok(f) => f,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return if linked() {
                Err(format!("is a link that cannot be followed ({e})"))
            } else {
                Ok(None)
            };
        }
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(format!("is a link that cannot be followed ({e})"));
        }
        Err(e) => return Err(format!("cannot be read ({e})")),
    };
    let meta = f.metadata().map_err(|e| format!("cannot be read ({e})"))?;
    let real =
        where_open(&f, file).map_err(|e| format!("cannot be followed to where it is ({e})"))?;
    if !roots.iter().any(|r| real.starts_with(r.as_ref())) {
        return Err(if linked() {
            "is a link that leads outside the workspace"
        } else {
            "is reached through a link that leads outside the workspace"
        }
        .into());
    }
    if meta.is_dir() {
        return Ok(None);
    }
    if !meta.is_file() {
        return Err(if linked() {
            "is a link to something other than a regular file"
        } else {
            "is not a regular file (a named pipe, socket or device)"
        }
        .into());
    }
    if meta.len() > MAX_IGNORE_FILE {
        return Err(too_large());
    }
    Ok(Some(f))
}

/// [`check_ignore_file`] for a reader that stops at the first line that is not UTF-8 (the
/// `ignore` crate's, which grep_search's walker uses for `.gitignore` and `.ignore`): such a
/// line is refused too, since every rule after it would be dropped without a word. Reads the
/// file (from the handle judged); meant for the few ignore files a walk finds.
pub fn check_ignore_file_lines<R: AsRef<Path>>(roots: &[R], file: &Path) -> Result<bool, String> {
    let Some(text) = read_ignore_file(roots, file)? else { return Ok(false) };
    match text.split(|b| *b == b'\n').position(|line| std::str::from_utf8(line).is_err()) {
        None => Ok(true),
        Some(i) => Err(format!(
            "has a line that is not UTF-8 (line {}), and the search's reader of ignore files would drop every rule after it; fix or remove that line",
            i + 1
        )),
    }
}

impl super::super::Workspace {
    /// [`check_ignore_file`] with the workspace's roots, for the many folders a walk enters:
    /// the common answers (no such file, a plain file) come from one lookup beneath the root's
    /// handle that follows no link at the end; anything else gets the whole check.
    pub fn check_ignore_file(&self, file: &Path) -> Result<bool, String> {
        // One `statat` beneath the root's handle, as for every folder a walk enters. It
        // follows a link among the folders on the way, which a walk does not make (it follows
        // none): only a race can put one there, and the walker reads the file by this same
        // path right after, so a stricter lookup here would guard nothing.
        #[cfg(unix)]
        if let Some((root, rel)) = self.locate(file) {
            use rustix::fs::{AtFlags, FileType, statat};
            match statat(&self.root_dirs[root].fd, &rel, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                    #[allow(clippy::unnecessary_cast)] // the field's type differs
                    let large = st.st_size as u64 > MAX_IGNORE_FILE;
                    return if large { Err(too_large()) } else { Ok(true) };
                }
                Err(rustix::io::Errno::NOENT) => return Ok(false),
                _ => {}
            }
        }
        let roots: Vec<&Path> = self.roots.iter().map(|r| r.real.as_path()).collect();
        check_ignore_file(&roots, file)
    }
}

/// The text of an ignore file (`None`: there is none), read from the very file [`judge`]
/// judged, so nothing swapped in between is read (a named pipe is refused, never waited on).
pub(super) fn read_ignore_file<R: AsRef<Path>>(
    roots: &[R],
    file: &Path,
) -> Result<Option<Vec<u8>>, String> {
    use std::io::Read;
    let Some(judged) = judge(roots, file)? else { return Ok(None) };
    let mut text = Vec::new();
    reopen(judged, file)
        .and_then(|f| f.take(MAX_IGNORE_FILE + 1).read_to_end(&mut text))
        .map_err(|e| format!("cannot be read ({e})"))?;
    if text.len() as u64 > MAX_IGNORE_FILE {
        return Err(too_large());
    }
    Ok(Some(text))
}

/// The judged file `f` opened for reading: on Linux through its handle (the same file, whatever
/// `path` names now); elsewhere `f` was opened for reading already.
fn reopen(f: std::fs::File, path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let mut open = std::fs::OpenOptions::new();
        open.read(true);
        open.custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
        match open.open(format!("/proc/self/fd/{}", f.as_raw_fd())) {
            Ok(read) => Ok(read),
            // No /proc: by name, and only if that is still the file judged.
            Err(_) => {
                let (read, judged) = (open.open(path)?, f.metadata()?);
                let now = read.metadata()?;
                if (now.dev(), now.ino()) != (judged.dev(), judged.ino()) {
                    return Err(std::io::Error::other("it changed while it was read"));
                }
                Ok(read)
            }
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = path;
        Ok(f)
    }
}

/// Where the file open as `f` (opened as `path`) is now: on Linux the kernel's own answer for
/// the handle; elsewhere `path` resolved again.
fn where_open(f: &std::fs::File, path: &Path) -> std::io::Result<PathBuf> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())) {
            return Ok(real);
        }
    }
    let _ = f;
    std::fs::canonicalize(path)
}
