//! A folder's checks, made once for the many files a walk finds in it. A search opens
//! thousands of files in a few hundred folders; checking every segment of every file's path
//! again (and building its real path to do so) cost more than reading the file. Here the
//! folder's path is checked once, and each of its files with the checks that depend on its own
//! name. Every file is still opened beneath its root at the moment it is used (Linux: one
//! `openat2` from the root's handle with `RESOLVE_BENEATH` and no symlinks at all, by the very
//! path whose segments were checked): no folder handle is kept, so a folder moved into `.git`
//! or out of the workspace after its checks cannot lend its files to a later open (an
//! adversarial review of issue 22 raced exactly that against a first version that kept
//! handles). Whatever the fast way cannot decide alone (a symlink on the way, an unusual name,
//! a sensitive name that an allowance of the whole path might lift, a file with several names,
//! another system) goes the whole way.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, FileType, OFlags, fstat, statat};

use super::beneath::open_beneath;
use super::open::{OpenError, changed_while_walked};
use super::{ResolvedPath, Workspace, paths};

/// A folder of the workspace whose path has been checked, for opening its files by name.
#[derive(Debug)]
pub struct Folder<'w> {
    ws: &'w Workspace,
    /// The folder as the walk named it.
    path: PathBuf,
    /// What the fast way needs, when it applies to this folder's files.
    fast: Option<Fast>,
}

#[derive(Debug)]
struct Fast {
    /// The root the folder lies under (by its spelling) and the folder's path beneath it.
    root: usize,
    rel: PathBuf,
}

impl Workspace {
    /// The folder `path` (an absolute path a walk found, as for [`Self::confirm_walked`]).
    /// Never fails: what cannot be decided here is decided for each file, the whole way.
    pub fn folder(&self, path: &Path) -> Folder<'_> {
        Folder { ws: self, path: path.to_path_buf(), fast: self.fast_folder(path) }
    }

    /// The fast way applies when the folder's path, taken as its real path (the open follows
    /// no symlink, so it is one when the open succeeds), passes every check on its own: the
    /// pre-flight check for any plain name below it, and each of its segments the sensitive
    /// rules (see [`super::sensitive::SensitiveRules::segments_pass`]).
    /// (The sensitive rules read a path relative to the first root it lies under: the root
    /// `locate` finds.) Where the file layer has no `openat2`, every file goes the whole way.
    fn fast_folder(&self, path: &Path) -> Option<Fast> {
        if cfg!(not(any(target_os = "linux", target_os = "android"))) {
            return None;
        }
        let (root, rel) = self.locate(path)?;
        let plain = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        let pass = plain
            && paths::preflight_folder(path.to_str()?)
            && self.sensitive.segments_pass(&paths::relative_to(path, &self.root_dirs[root].real));
        pass.then_some(Fast { root, rel })
    }
}

impl Folder<'_> {
    /// The folder as the walk named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the file `name` in this folder for reading, as [`Workspace::open_read`] opens
    /// `path/name`, with the file's size when the open learned it (a regular file opened the
    /// fast way, whose link count is read from its handle anyway): a reader can then take the
    /// whole file in one read instead of reading on until the end.
    pub fn open_read(&self, name: &OsStr) -> Result<(File, Option<u64>), OpenError> {
        let whole = || self.ws.open_read(&self.whole(name)).map(|file| (file, None));
        let Some(fast) = self.fast_for(name) else { return whole() };
        let flags = OFlags::RDONLY | OFlags::NONBLOCK;
        let Some(fd) = self.open_beneath(fast, name, flags) else { return whole() };
        let st = fstat(&fd).map_err(io::Error::from)?;
        if st.st_nlink > 1 {
            self.ws.check_links(fd.as_fd(), &st, &self.path.join(name))?;
        }
        let regular = FileType::from_raw_mode(st.st_mode) == FileType::RegularFile;
        let size = regular.then(|| u64::try_from(st.st_size).ok()).flatten();
        Ok((File::from(fd), size))
    }

    /// Confirms the file `name` this folder listed through its handle `dir` (opened beneath its
    /// root by this path, with no symlink on the way), as [`Workspace::confirm_walked`] does for
    /// `path/name`, and returns its modification time.
    pub(super) fn confirm_listed(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        ino: u64,
    ) -> Result<Option<SystemTime>, OpenError> {
        let whole = || {
            let path = self.path.join(name);
            self.ws.confirm_walked(&path, Some(ino)).map(|meta| meta.modified().ok())
        };
        if self.fast_for(name).is_none() {
            return whole();
        }
        let st = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)?;
        if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
            return whole();
        }
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        if ino != st.st_ino as u64 {
            return Err(changed_while_walked(&self.path.join(name)));
        }
        if st.st_nlink > 1 {
            self.ws.check_sensitive_links(&st, &self.path.join(name))?;
        }
        #[allow(clippy::unnecessary_cast)]
        Ok(modified(st.st_mtime as i64, st.st_mtime_nsec as u32))
    }

    /// The fast way's data when `name` can be decided by itself: a plain name that passes the
    /// sensitive rules on its own, in a folder that passes. Anything else is decided on the
    /// whole path.
    fn fast_for(&self, name: &OsStr) -> Option<&Fast> {
        let fast = self.fast.as_ref()?;
        let name = name.to_str()?;
        let fits = self.path.as_os_str().len() + 1 + name.len() <= paths::MAX_PATH_CHARS;
        let pass = fits
            && paths::plain_name(name)
            && self.ws.sensitive.segment_hit(name).is_none()
            && !super::sensitive::SensitiveRules::ends_a_secret_path(name);
        pass.then_some(fast)
    }

    /// `name` in this folder, opened from its root by the path whose segments were checked.
    fn open_beneath(&self, fast: &Fast, name: &OsStr, flags: OFlags) -> Option<OwnedFd> {
        open_beneath(&self.ws.root_dirs[fast.root], &fast.rel.join(name), flags)
    }

    /// `path/name` for the whole way: the walk's path, resolved beneath the root again.
    fn whole(&self, name: &OsStr) -> ResolvedPath {
        let path = self.path.join(name);
        ResolvedPath { lexical: path.clone(), real: path }
    }
}

/// A modification time as the standard library reads it: `secs` (negative before 1970) plus
/// `nanos`.
fn modified(secs: i64, nanos: u32) -> Option<SystemTime> {
    use std::time::Duration;
    let whole = if secs >= 0 {
        SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs.unsigned_abs()))
    } else {
        SystemTime::UNIX_EPOCH.checked_sub(Duration::from_secs(secs.unsigned_abs()))
    };
    whole?.checked_add(Duration::from_nanos(u64::from(nanos)))
}

#[cfg(test)]
pub(super) mod tests {
    use std::fs;
    use std::io::Read as _;
    use std::os::unix::fs::symlink;

    use rustix::fs::Mode;
    use std::os::fd::AsFd as _;

    use super::*;
    use crate::config::Config;
    use crate::workspace::PathError;

    /// A workspace root and a folder outside it (kept while the test runs), by their real
    /// paths.
    pub(in crate::workspace) fn root_and_outside() -> ([tempfile::TempDir; 2], PathBuf, PathBuf) {
        let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let r = dirs[0].path().canonicalize().unwrap();
        let o = dirs[1].path().canonicalize().unwrap();
        (dirs, r, o)
    }

    /// What an open gave: the content, or that it was refused (and whether as sensitive).
    fn outcome<T>(r: Result<(File, T), OpenError>) -> String {
        match r.map(|(file, _)| file) {
            Ok(mut f) => {
                let mut s = String::new();
                f.read_to_string(&mut s)
                    .map(|_| format!("read {s:?}"))
                    .unwrap_or_else(|e| e.to_string())
            }
            Err(OpenError::Path(PathError::Sensitive { rule, .. })) => format!("sensitive {rule}"),
            Err(OpenError::Path(PathError::Outside { .. })) => "outside".into(),
            Err(e) => format!("error {e}"),
        }
    }

    /// A hostile tree: links out and in, sensitive names, names only a path-wide allowance
    /// lets through, hard links to a secret and outside, unusual names, a FIFO. Every file of
    /// every folder must come out of its folder exactly as out of the whole-path open, and be
    /// confirmed with the same modification time.
    #[test]
    fn a_folder_opens_each_name_exactly_as_the_whole_path_would() {
        let (_dirs, r, o) = root_and_outside();
        fs::write(o.join("secret.txt"), "outside").unwrap();
        fs::create_dir_all(o.join("dir")).unwrap();
        fs::write(o.join("dir/f.txt"), "outside dir").unwrap();
        for d in ["", "src", "cfg", ".git", ".aws", "deep/node_modules/x", "q\"uote...", "FAIL x"] {
            fs::create_dir_all(r.join(d)).unwrap();
            for (name, text) in [
                ("plain.txt", "plain"),
                (".env", "env"),
                (".env.example", "template"),
                ("id_rsa", "key"),
                ("HEAD", "head"),
                ("a\\.env", "backslash"),
                ("FAIL log.txt", "log"),
                ("q\"uote...txt", "quote"),
                ("gha-creds-1.json", "gha"),
                ("x.pem", "pem"),
            ] {
                fs::write(r.join(d).join(name), text).unwrap();
            }
            symlink(o.join("secret.txt"), r.join(d).join("out-abs")).unwrap();
            symlink(
                "../../../../../../../../../../../..".to_string() + o.to_str().unwrap(),
                r.join(d).join("out-rel"),
            )
            .unwrap();
            symlink(r.join("src/plain.txt"), r.join(d).join("in-abs")).unwrap();
            symlink(r.join(".aws/plain.txt"), r.join(d).join("in-sensitive")).unwrap();
            symlink("loop", r.join(d).join("loop")).unwrap();
            fs::hard_link(o.join("secret.txt"), r.join(d).join(format!("hard-out-{}", d.len())))
                .ok();
            rustix::fs::mknodat(
                rustix::fs::CWD,
                r.join(d).join("fifo"),
                FileType::Fifo,
                Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap();
        }
        fs::hard_link(r.join(".aws/id_rsa"), r.join("src/innocent")).unwrap();
        symlink(o.join("dir"), r.join("dir-out")).unwrap();
        rustix::fs::utimensat(
            rustix::fs::CWD,
            r.join("src/plain.txt"),
            &rustix::fs::Timestamps {
                last_access: rustix::fs::Timespec { tv_sec: 0, tv_nsec: 0 },
                last_modification: rustix::fs::Timespec { tv_sec: -86_401, tv_nsec: 5 },
            },
            rustix::fs::AtFlags::empty(),
        )
        .unwrap();
        let cfg = Config {
            home_dir: o.join("home"),
            allow_sensitive_paths: vec!["cfg/.env".into(), ".git/HEAD".into(), "*.pem".into()],
            ..Config::default()
        };
        let ws = Workspace::new(std::slice::from_ref(&r), &cfg).unwrap();
        let mut compared = 0;
        let mut read = 0;
        for d in [
            "",
            "src",
            "cfg",
            ".git",
            ".aws",
            "deep/node_modules/x",
            "q\"uote...",
            "FAIL x",
            "dir-out",
        ] {
            let dir = if d.is_empty() { r.clone() } else { r.join(d) };
            let folder = ws.folder(&dir);
            let handle =
                rustix::fs::open(&dir, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
            for entry in fs::read_dir(&dir).unwrap() {
                let name = entry.unwrap().file_name();
                let whole = dir.join(&name);
                let asked = ResolvedPath { lexical: whole.clone(), real: whole.clone() };
                let (ours, theirs) = (
                    outcome(folder.open_read(&name)),
                    outcome(ws.open_read(&asked).map(|f| (f, ()))),
                );
                assert_eq!(ours, theirs, "{}", whole.display());
                let ino =
                    std::os::unix::fs::MetadataExt::ino(&fs::symlink_metadata(&whole).unwrap());
                // (A walk never lists a folder through a link: `dir-out` is opened only.)
                if d != "dir-out" {
                    let ours = folder
                        .confirm_listed(handle.as_fd(), &name, ino)
                        .map_err(|e| e.to_string());
                    let theirs = ws
                        .confirm_walked(&whole, Some(ino))
                        .map(|m| m.modified().ok())
                        .map_err(|e| e.to_string());
                    assert_eq!(ours, theirs, "{}", whole.display());
                }
                compared += 1;
                read +=
                    usize::from(outcome(ws.open_read(&asked).map(|f| (f, ()))).starts_with("read"));
            }
        }
        // The comparison saw both answers many times over.
        assert!(compared >= 140 && read >= 25 && compared - read >= 100, "{compared} {read}");
        // The old mtime came out as the standard library reads it.
        let f = ws.folder(&r.join("src"));
        let handle =
            rustix::fs::open(r.join("src"), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
                .unwrap();
        let ino =
            std::os::unix::fs::MetadataExt::ino(&fs::metadata(r.join("src/plain.txt")).unwrap());
        let t = f.confirm_listed(handle.as_fd(), OsStr::new("plain.txt"), ino).unwrap().unwrap();
        assert!(t < SystemTime::UNIX_EPOCH);
    }

    /// Found by an adversarial review of issue 22 against a first version that kept folder
    /// handles: a folder moved into `.git` (or out of the workspace) after it was checked lent
    /// its files to later opens through the kept handle. Each file is now opened from the root
    /// at the moment it is used: a moved folder's files are gone from the path that was
    /// checked, and a link put in its place is followed by the layer's rules.
    #[test]
    fn a_folder_moved_after_its_checks_lends_nothing_to_later_opens() {
        let (_dirs, r, o) = root_and_outside();
        fs::create_dir_all(r.join("a")).unwrap();
        fs::create_dir_all(r.join(".git")).unwrap();
        fs::write(r.join("a/f.txt"), "inside").unwrap();
        let cfg = Config { home_dir: o.join("home"), ..Config::default() };
        let ws = Workspace::new(std::slice::from_ref(&r), &cfg).unwrap();
        let folder = ws.folder(&r.join("a"));
        assert_eq!(outcome(folder.open_read(OsStr::new("f.txt"))), "read \"inside\"");
        // Moved into .git: the checked path no longer has it.
        fs::rename(r.join("a"), r.join(".git/a")).unwrap();
        assert!(outcome(folder.open_read(OsStr::new("f.txt"))).starts_with("error"));
        // Moved outside, a link to it in its place: outside.
        fs::rename(r.join(".git/a"), o.join("a")).unwrap();
        symlink(o.join("a"), r.join("a")).unwrap();
        assert_eq!(outcome(folder.open_read(OsStr::new("f.txt"))), "outside");
    }
}
