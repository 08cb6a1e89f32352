//! Small file-system helpers shared by the crates: atomic replacement of a file, reading a
//! file someone else may have planted, a stable FNV-1a hash for ids and folder names, and the
//! user's home folder.

use std::io::Write;
use std::path::{Path, PathBuf};

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

/// [`atomic_write`], creating the file's folder first: for toolbelt's own state files (saved
/// approvals, trusted folders, OAuth tokens). A new file is private to the user (0600).
pub fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    private_dir(path.parent().unwrap_or(Path::new(".")))?;
    atomic_write(path, bytes)?;
    // Private whatever mode the file had (a world-writable trust list would let anyone trust
    // a folder).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Creates `dir` and its missing parents, the folders created private to the user (0700),
/// and makes `dir` itself private: toolbelt's state and temp folders hold command output,
/// tokens and approvals.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        // The folder must be a real folder of this user: a symlink planted there
        // (`tmp/<project>/tool-outputs -> /somewhere/readable`) would send what toolbelt saves
        // elsewhere. A loose mode found on it is tightened.
        let uid = rustix::process::geteuid().as_raw();
        let meta = std::fs::symlink_metadata(dir)?;
        if !meta.is_dir() || meta.uid() != uid {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a folder of this user (a symlink?); refusing to save there",
                    dir.display()
                ),
            ));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Creates `path` afresh (a file already there is replaced; a symlink planted there is removed,
/// never followed) in a private folder, readable and writable by the user only (0600).
pub fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        private_dir(dir)?;
    }
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    o.open(path)
}

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

/// FNV-1a, 64 bits, of a byte sequence (stable across runs and platforms).
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
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

    #[test]
    fn fnv1a_is_the_standard_hash() {
        assert_eq!(fnv1a(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(*b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
