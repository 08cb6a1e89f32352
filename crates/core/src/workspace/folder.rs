//! A folder reached once for the many files a walk finds in it. A search opens thousands of
//! files in a few hundred folders; reaching each file from its root again (and checking every
//! segment of its path again) cost more than reading it. Here the folder is reached beneath its
//! root and checked once, and each of its files is opened from the folder's handle by its name,
//! with the checks that depend on that name. The checks are the same as a whole-path open's:
//! whatever the fast way cannot decide alone (a symlink, an unusual name, a sensitive name that
//! an allowance of the whole path might lift, a file with several names) goes the whole way.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, fstat, openat, statat};

use super::beneath::Want;
use super::open::OpenError;
use super::{PathError, ResolvedPath, Workspace, paths};

/// A folder of the workspace, reached and checked, for opening its files by name.
#[derive(Debug)]
pub struct Folder<'w> {
    ws: &'w Workspace,
    /// The folder as the walk named it.
    path: PathBuf,
    /// Its handle, when the fast way applies to its files; otherwise every file goes the whole
    /// way (a folder the rules refuse may hold a file an allowance lets through).
    fast: Option<Fast>,
}

#[derive(Debug)]
struct Fast {
    fd: OwnedFd,
    /// The folder's real path.
    real: PathBuf,
    /// Its path as the checks read it.
    shown: String,
    /// The pre-flight check passes on it and on any plain name joined to it.
    preflight_ok: bool,
}

impl Workspace {
    /// The folder `path` (an absolute path a walk found, as for [`Self::confirm_walked`]),
    /// reached beneath its root. Never fails: what cannot be decided here is decided for each
    /// file, the whole way.
    pub fn folder(&self, path: &Path) -> Folder<'_> {
        let asked = ResolvedPath { lexical: path.to_path_buf(), real: path.to_path_buf() };
        let want = Want::Open(OFlags::PATH | OFlags::DIRECTORY);
        // `reach` applies the containment and sensitive checks to the folder's real path; the
        // fast way also needs each of its segments to pass on its own (see `segments_pass`).
        let fast = self.reach(&asked, want, false).ok().and_then(|found| {
            let fd = found.fd?;
            let shown = found.real.to_string_lossy().into_owned();
            let base = self.check_base(&found.real)?;
            self.sensitive.segments_pass(&paths::relative_to(&found.real, base)).then(|| Fast {
                fd,
                preflight_ok: paths::preflight_folder(&shown),
                shown,
                real: found.real,
            })
        });
        Folder { ws: self, path: path.to_path_buf(), fast }
    }
}

impl Folder<'_> {
    /// The folder as the walk named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the file `name` in this folder for reading, as [`Workspace::open_read`] opens
    /// `path/name`.
    pub fn open_read(&self, name: &OsStr) -> Result<File, OpenError> {
        let Some(fast) = self.fast_for(name) else { return self.ws.open_read(&self.whole(name)) };
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match openat(&fast.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            // A symlink: followed by the file layer's rules, the whole way.
            Err(rustix::io::Errno::LOOP) => return self.ws.open_read(&self.whole(name)),
            Err(e) => return Err(io::Error::from(e).into()),
        };
        let st = fstat(&fd).map_err(io::Error::from)?;
        if st.st_nlink > 1 {
            self.ws.check_links(&st, &fast.real.join(name))?;
        }
        Ok(File::from(fd))
    }

    /// Confirms the file `name` a walk found in this folder, as [`Workspace::confirm_walked`]
    /// does for `path/name`, and returns its modification time.
    pub fn confirm_walked(
        &self,
        name: &OsStr,
        ino: Option<u64>,
    ) -> Result<Option<SystemTime>, OpenError> {
        let whole = || {
            let path = self.path.join(name);
            self.ws.confirm_walked(&path, ino).map(|meta| meta.modified().ok())
        };
        let Some(fast) = self.fast_for(name) else { return whole() };
        let st = statat(&fast.fd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)?;
        if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
            return whole();
        }
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        if ino.is_some_and(|ino| ino != st.st_ino as u64) {
            return Err(PathError::Resolve(format!(
                "{} changed while the folder was walked",
                self.path.join(name).display()
            ))
            .into());
        }
        #[allow(clippy::unnecessary_cast)]
        Ok(modified(st.st_mtime as i64, st.st_mtime_nsec as u32))
    }

    /// The folder's handle when `name` can be decided by itself: a plain name that passes the
    /// sensitive rules on its own. Anything else is decided on the whole path.
    fn fast_for(&self, name: &OsStr) -> Option<&Fast> {
        let fast = self.fast.as_ref()?;
        let name = name.to_str()?;
        let plain = paths::plain_name(name) && fast.preflight_ok;
        let fits = fast.shown.len() + 1 + name.len() <= paths::MAX_PATH_CHARS;
        (plain && fits && self.ws.sensitive.segment_hit(name).is_none()).then_some(fast)
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
mod tests {
    use std::fs;
    use std::io::Read as _;
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::config::Config;

    /// What an open gave: the content, or that it was refused (and whether as sensitive).
    fn outcome(r: Result<File, OpenError>) -> String {
        match r {
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
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = root.path().canonicalize().unwrap();
        let o = outside.path().canonicalize().unwrap();
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
            AtFlags::empty(),
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
            for entry in fs::read_dir(&dir).unwrap() {
                let name = entry.unwrap().file_name();
                let whole = dir.join(&name);
                let asked = ResolvedPath { lexical: whole.clone(), real: whole.clone() };
                let (ours, theirs) =
                    (outcome(folder.open_read(&name)), outcome(ws.open_read(&asked)));
                assert_eq!(ours, theirs, "{}", whole.display());
                let ino = fs::symlink_metadata(&whole)
                    .ok()
                    .map(|m| std::os::unix::fs::MetadataExt::ino(&m));
                let ours = folder.confirm_walked(&name, ino).map_err(|e| e.to_string());
                let theirs = ws
                    .confirm_walked(&whole, ino)
                    .map(|m| m.modified().ok())
                    .map_err(|e| e.to_string());
                assert_eq!(ours, theirs, "{}", whole.display());
                compared += 1;
                read += usize::from(outcome(ws.open_read(&asked)).starts_with("read"));
            }
        }
        // The comparison saw both answers many times over.
        assert!(compared >= 140 && read >= 25 && compared - read >= 100, "{compared} {read}");
        // The old mtime came out as the standard library reads it.
        let f = ws.folder(&r.join("src"));
        let t = f.confirm_walked(OsStr::new("plain.txt"), None).unwrap().unwrap();
        assert!(t < SystemTime::UNIX_EPOCH);
    }

    /// The folder is the one that was checked: swapped for a link to outside after it was
    /// reached, its handle still opens the files of the folder that was checked, never the
    /// outside ones; a folder reached after the swap is reached through the link's rules.
    #[test]
    fn a_folder_swapped_for_a_link_outside_is_still_the_folder_checked() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = root.path().canonicalize().unwrap();
        fs::create_dir(r.join("a")).unwrap();
        fs::write(r.join("a/f.txt"), "inside").unwrap();
        fs::write(outside.path().join("f.txt"), "outside").unwrap();
        let cfg = Config { home_dir: outside.path().join("home"), ..Config::default() };
        let ws = Workspace::new(std::slice::from_ref(&r), &cfg).unwrap();
        let folder = ws.folder(&r.join("a"));
        fs::rename(r.join("a"), r.join("moved")).unwrap();
        symlink(outside.path(), r.join("a")).unwrap();
        assert_eq!(outcome(folder.open_read(OsStr::new("f.txt"))), "read \"inside\"");
        let later = ws.folder(&r.join("a"));
        assert_eq!(outcome(later.open_read(OsStr::new("f.txt"))), "outside");
    }
}
