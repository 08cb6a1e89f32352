//! Small file-system helpers shared by the crates: atomic replacement of a file, toolbelt's own
//! files made beneath folders reached with no planted link ([`owned`]), reading a file someone
//! else may have planted, a stable FNV-1a hash for ids and folder names, and the user's home
//! folder.

use std::io::Write;
use std::path::{Path, PathBuf};

mod kept;
#[cfg(unix)]
pub mod owned;

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed and
/// synced, then renamed over the target, keeping the old file's permissions. A crash leaves the
/// old or the new content, never a mix.
///
/// A read-only target is refused (`PermissionDenied`) rather than replaced: renaming over it
/// would succeed where writing into it would not.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return Err(std::io::Error::from_raw_os_error(13));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".toolbelt-write-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// [`atomic_write`] for toolbelt's own state files (saved approvals, trusted folders, OAuth
/// tokens): the folder is reached and created by [`owned::private_dir`] (no planted link on the
/// way), the new content goes to a fresh file beneath that handle and is renamed over the old
/// one there. The file is private to the user (0600) whatever mode it had.
pub fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags, openat, renameat};
        let (dir, name) = split(path)?;
        let dir = owned::private_dir(dir)?;
        let tmp = format!(".toolbelt-write-{}-{:x}", std::process::id(), fnv1a(unique_bytes()));
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(&dir, tmp.as_str(), flags, Mode::from_raw_mode(0o600))?;
        let mut file = std::fs::File::from(fd);
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        let renamed = written.and_then(|()| Ok(renameat(&dir, tmp.as_str(), &dir, name)?));
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), rustix::fs::AtFlags::empty());
        }
        renamed?;
        let _ = rustix::fs::fsync(&dir);
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
        atomic_write(path, bytes)
    }
}

/// Bytes that differ between calls (for temporary names).
fn unique_bytes() -> [u8; 16] {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&n.to_le_bytes());
    out[8..].copy_from_slice(&t.to_le_bytes());
    out
}

/// A path's folder and file name (a path without a file name is an error).
fn split(path: &Path) -> std::io::Result<(&Path, &std::ffi::OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => {
            Ok((if dir.as_os_str().is_empty() { Path::new(".") } else { dir }, name))
        }
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )),
    }
}

/// Creates `dir` and its missing parents, private to the user (0700), and makes `dir` itself
/// private: toolbelt's state and temp folders hold command output, tokens and approvals. No
/// symlink a user or a command could have planted is followed on the way
/// ([`owned::private_dir`]).
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        owned::private_dir(dir).map(|_| ())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Creates `path` afresh (a file already there is replaced; a symlink planted there is removed,
/// never followed) in a private folder reached as [`private_dir`] reaches it, readable and
/// writable by the user only (0600), made beneath the folder's handle with `O_EXCL` and
/// `O_NOFOLLOW`.
pub fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use rustix::fs::{AtFlags, Mode, OFlags, openat, unlinkat};
        let (dir, name) = split(path)?;
        let dir = owned::private_dir(dir)?;
        match unlinkat(&dir, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(std::fs::File::from(openat(&dir, name, flags, Mode::from_raw_mode(0o600))?))
    }
    #[cfg(not(unix))]
    {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let _ = std::fs::remove_file(path);
        std::fs::OpenOptions::new().write(true).create_new(true).open(path)
    }
}

/// A new private folder in the temp folder for a command's scratch files (its job list), made
/// in the temp folder as it really is: a `TMPDIR` replaced by a symlink (from inside a sandbox,
/// where the temp folder is writable) is not followed, so toolbelt never makes a folder where
/// such a link leads. Then the system's `/tmp` is used.
pub fn scratch_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    #[cfg(unix)]
    {
        let temp = std::env::temp_dir();
        let real = match owned::walk(&temp, owned::Missing::Fail) {
            Ok((_, real)) => real,
            Err(_) => owned::walk(Path::new("/tmp"), owned::Missing::Fail)?.1,
        };
        tempfile::Builder::new().prefix(prefix).tempdir_in(real)
    }
    #[cfg(not(unix))]
    {
        tempfile::Builder::new().prefix(prefix).tempdir()
    }
}

pub use kept::{KeptFile, prune_kept};

/// Writes `bytes` to a new private file at `path` (see [`create_private`]).
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    create_private(path)?.write_all(bytes)
}

/// A file that something else may have put in place (a repository, a command), read from one
/// handle: opened without blocking (a FIFO would never end), checked to be a regular file on
/// that handle, and read up to `limit` bytes. `follow_links: false` refuses a symbolic link at
/// `path` itself. Returns the bytes read and the file's whole size.
pub fn read_regular(
    path: &Path,
    limit: u64,
    follow_links: bool,
) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::Read;
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow_links { 0 } else { rustix::fs::OFlags::NOFOLLOW.bits() };
        open.custom_flags((rustix::fs::OFlags::NONBLOCK.bits() | nofollow) as i32);
    }
    let file = open.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok((bytes, meta.len()))
}

/// A UTF-8 text file of at most `limit` bytes, read as [`read_regular`] reads (links followed:
/// a settings file may be a link into a dotfiles folder). A longer file is an `InvalidData`
/// error that names the limit, not a file read whole.
pub fn read_text_bounded(path: &Path, limit: usize) -> std::io::Result<String> {
    let most = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let (bytes, size) = read_regular(path, most, true)?;
    if bytes.len() > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{size} bytes, over the limit of {limit} bytes"),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// FNV-1a, 64 bits, of a byte sequence (stable across runs and platforms).
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// toolbelt's state folder: `$TOOLBELT_HOME`, else `~/.toolbelt`, else a folder in the temp
/// dir.
pub fn state_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("TOOLBELT_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    match user_home() {
        Some(home) => home.join(".toolbelt"),
        None => std::env::temp_dir().join("toolbelt"),
    }
}

/// `$HOME`, if set and not empty.
pub fn user_home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_content_and_keeps_permissions() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f.txt");
        std::fs::write(&f, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
        atomic_write(&f, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, 0o640);
        }
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temporary file left behind"
        );
    }

    /// Issue 35, finding 6: saved outputs were never pruned. The oldest go first, the total
    /// stays under the cap, and a file written in the last minute stays.
    #[test]
    fn kept_files_are_pruned_oldest_first() {
        let d = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for (i, name) in
            ["p/tool-outputs/a.txt", "p/tool-outputs/b.txt", "q/c.log"].iter().enumerate()
        {
            let p = d.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, vec![b'x'; 1000]).unwrap();
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64)).unwrap();
        }
        std::fs::write(d.path().join("p/new.txt"), vec![b'x'; 1000]).unwrap();
        assert_eq!(prune_kept(d.path(), 2500), 2000);
        assert!(!d.path().join("p/tool-outputs/a.txt").exists());
        assert!(!d.path().join("p/tool-outputs/b.txt").exists());
        assert!(d.path().join("q/c.log").exists() && d.path().join("p/new.txt").exists());
        assert_eq!(prune_kept(d.path(), 2500), 0);
    }

    #[test]
    fn fnv1a_is_the_standard_hash() {
        assert_eq!(fnv1a(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(*b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
