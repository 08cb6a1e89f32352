//! The one ignore service every file tool shares: `.gitignore` (nested, plus
//! `.git/info/exclude`, only inside git repositories) and `.geminiignore` at the root, with the
//! `ignore` crate's gitignore matcher. Per-directory files are loaded lazily and cached.

use crate::sync::LockExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Which ignore sources a call honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IgnoreOptions {
    /// Honour `.gitignore` (and git's other ignore files).
    pub respect_git_ignore: bool,
    /// Honour `.geminiignore`.
    pub respect_gemini_ignore: bool,
}

impl Default for IgnoreOptions {
    fn default() -> Self {
        Self { respect_git_ignore: true, respect_gemini_ignore: true }
    }
}

/// The custom ignore file name, as upstream.
pub const GEMINI_IGNORE: &str = ".geminiignore";

/// Ignore rules of one root, cached per folder.
#[derive(Debug)]
pub struct IgnoreService {
    root: PathBuf,
    git_repo: bool,
    exclude: Option<Gitignore>,
    gemini: Option<Gitignore>,
    per_dir: Mutex<HashMap<PathBuf, Option<Arc<Gitignore>>>>,
}

impl IgnoreService {
    /// Captures git detection and `.geminiignore` now, as upstream does at construction.
    pub fn new(root: &Path) -> Self {
        let git_repo = root.ancestors().any(|a| a.join(".git").exists());
        let exclude = git_repo.then(|| load(root, root, &root.join(".git/info/exclude"))).flatten();
        let gemini = load(root, root, &root.join(GEMINI_IGNORE));
        Self { root: root.to_path_buf(), git_repo, exclude, gemini, per_dir: Mutex::default() }
    }

    /// The root the rules belong to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the root is inside a git repository.
    pub fn is_git_repo(&self) -> bool {
        self.git_repo
    }

    /// Whether `abs` (under the root) is ignored. Paths outside the root never are.
    pub fn is_ignored(&self, abs: &Path, is_dir: bool, opts: IgnoreOptions) -> bool {
        let Some(rel) = super::paths::below(abs, &self.root) else { return false };
        if rel.as_os_str().is_empty() {
            return false;
        }
        let mut ignored = false;
        if self.git_repo && opts.respect_git_ignore {
            if rel.components().any(|c| c.as_os_str() == ".git") {
                return true;
            }
            if let Some(ex) = &self.exclude {
                ignored = apply(ignored, ex.matched_path_or_any_parents(rel, is_dir));
            }
            let mut dir = self.root.clone();
            let parents: Vec<_> =
                rel.parent().map(|p| p.components().collect()).unwrap_or_default();
            for depth in 0..=parents.len() {
                if depth > 0 {
                    dir.push(parents[depth - 1].as_os_str());
                }
                if let Some(gi) = self.gitignore_in(&dir) {
                    ignored = apply(ignored, gi.matched_path_or_any_parents(abs, is_dir));
                }
            }
        }
        if opts.respect_gemini_ignore
            && let Some(g) = &self.gemini
        {
            ignored = apply(ignored, g.matched_path_or_any_parents(rel, is_dir));
        }
        ignored
    }

    fn gitignore_in(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        let mut cache = self.per_dir.locked();
        cache
            .entry(dir.to_path_buf())
            .or_insert_with(|| load(&self.root, dir, &dir.join(".gitignore")).map(Arc::new))
            .clone()
    }
}

fn apply(current: bool, m: Match<&ignore::gitignore::Glob>) -> bool {
    match m {
        Match::None => current,
        Match::Ignore(_) => true,
        Match::Whitelist(_) => false,
    }
}

/// The most of an ignore file that is read.
const MAX_IGNORE_FILE: u64 = 4 << 20;

/// Whether an ignore file may be read (`Ok(true)`), is absent or not a file (`Ok(false)`:
/// nothing to read, a folder of that name included), or must not be read (`Err`, saying why):
/// a named pipe, socket or device (reading one blocks or never ends), or a link that leads
/// outside `roots` or to something other than a file. A repository can hold any of these, and
/// a walk reads the ignore file of every folder it enters.
pub fn check_ignore_file<R: AsRef<Path>>(roots: &[R], file: &Path) -> Result<bool, String> {
    let Ok(meta) = std::fs::symlink_metadata(file) else { return Ok(false) };
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(true);
    }
    if kind.is_dir() {
        return Ok(false);
    }
    if !kind.is_symlink() {
        return Err("is not a regular file (a named pipe, socket or device)".into());
    }
    let target = std::fs::canonicalize(file)
        .map_err(|e| format!("is a link that cannot be followed ({e})"))?;
    if !roots.iter().any(|r| target.starts_with(r.as_ref())) {
        return Err("is a link that leads outside the workspace".into());
    }
    match std::fs::metadata(&target) {
        Ok(m) if m.is_file() => Ok(true),
        Ok(m) if m.is_dir() => Ok(false),
        _ => Err("is a link to something other than a regular file".into()),
    }
}

impl super::Workspace {
    /// [`check_ignore_file`] with the workspace's roots, for the many folders a walk enters:
    /// the common answers (no such file, a plain file) come from one lookup beneath the root's
    /// handle that follows no link at the end; anything else gets the whole check.
    pub fn check_ignore_file(&self, file: &Path) -> Result<bool, String> {
        #[cfg(unix)]
        if let Some((root, rel)) = self.locate(file) {
            use rustix::fs::{AtFlags, FileType, statat};
            match statat(&self.root_dirs[root].fd, &rel, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                    return Ok(true);
                }
                Err(rustix::io::Errno::NOENT) => return Ok(false),
                _ => {}
            }
        }
        let roots: Vec<&Path> = self.roots.iter().map(|r| r.real.as_path()).collect();
        check_ignore_file(&roots, file)
    }
}

/// The text of an ignore file that [`check_ignore_file`] lets be read (its first 4 MiB, read
/// as [`crate::files::read_regular`] reads a file something else put in place).
fn read_ignore_file(roots: &[&Path], file: &Path) -> Option<Vec<u8>> {
    match check_ignore_file(roots, file) {
        Ok(true) => {}
        Ok(false) => return None,
        Err(why) => {
            tracing::warn!("ignore file {} not read: it {why}", file.display());
            return None;
        }
    }
    match crate::files::read_regular(file, MAX_IGNORE_FILE, true) {
        Ok((text, _)) => Some(text),
        Err(e) => {
            tracing::warn!("ignore file {}: {e}", file.display());
            None
        }
    }
}

/// The rules of `file`, relative to `base`, when it may be read (see [`check_ignore_file`];
/// links may lead anywhere beneath `root`). Read as the `ignore` crate reads one: a BOM at the
/// start dropped, and reading stops at the first line that is not UTF-8.
fn load(root: &Path, base: &Path, file: &Path) -> Option<Gitignore> {
    let text = read_ignore_file(&[root], file)?;
    let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&text);
    let mut b = GitignoreBuilder::new(base);
    for line in text.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            tracing::warn!(
                "ignore file {}: a line is not UTF-8; the rest is not read",
                file.display()
            );
            break;
        };
        if let Err(err) = b.add_line(Some(file.to_path_buf()), line) {
            tracing::warn!("ignore file {}: {err}", file.display());
        }
    }
    match b.build() {
        Ok(g) if !g.is_empty() => Some(g),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("ignore file {}: {e}", file.display());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(d.path()).unwrap();
        for (p, c) in files {
            let path = root.join(p);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, c).unwrap();
        }
        (d, root)
    }

    #[test]
    fn gitignore_applies_only_inside_git_repos() {
        let (_d, root) = setup(&[(".gitignore", "*.log\n"), ("a.log", "")]);
        let s = IgnoreService::new(&root);
        assert!(!s.is_git_repo());
        assert!(!s.is_ignored(&root.join("a.log"), false, IgnoreOptions::default()));

        let (_d, root) = setup(&[(".git", ""), (".gitignore", "*.log\n"), ("a.log", "")]);
        let s = IgnoreService::new(&root);
        assert!(s.is_ignored(&root.join("a.log"), false, IgnoreOptions::default()));
        assert!(s.is_ignored(&root.join(".git"), false, IgnoreOptions::default()));
        let off = IgnoreOptions { respect_git_ignore: false, ..Default::default() };
        assert!(!s.is_ignored(&root.join("a.log"), false, off));
    }

    #[test]
    fn nested_gitignore_is_rooted_at_its_directory_and_can_negate() {
        let (_d, root) = setup(&[
            (".git/HEAD", ""),
            (".gitignore", "*.tmp\n"),
            ("a/b/.gitignore", "c\n!keep.tmp\n"),
        ]);
        let s = IgnoreService::new(&root);
        let o = IgnoreOptions::default();
        assert!(s.is_ignored(&root.join("a/b/c"), false, o));
        assert!(s.is_ignored(&root.join("a/b/x/c"), false, o));
        assert!(!s.is_ignored(&root.join("a/c"), false, o));
        assert!(s.is_ignored(&root.join("a/b/other.tmp"), false, o));
        assert!(!s.is_ignored(&root.join("a/b/keep.tmp"), false, o));
    }

    #[test]
    fn geminiignore_applies_everywhere_and_dir_patterns_need_is_dir() {
        let (_d, root) = setup(&[(".geminiignore", "foo.*\nignored/\n")]);
        let s = IgnoreService::new(&root);
        let o = IgnoreOptions::default();
        assert!(s.is_ignored(&root.join("foo.bar"), false, o));
        assert!(s.is_ignored(&root.join("ignored"), true, o));
        assert!(!s.is_ignored(&root.join("ignored"), false, o));
        assert!(s.is_ignored(&root.join("ignored/inner.txt"), false, o));
        let off = IgnoreOptions { respect_gemini_ignore: false, ..Default::default() };
        assert!(!s.is_ignored(&root.join("foo.bar"), false, off));
        assert!(!s.is_ignored(Path::new("/elsewhere/foo.bar"), false, o));
    }

    /// Found by the second review of issue 22: a `.gitignore` that is a link to a file outside
    /// the workspace was read, so a file out there decided what tools list; one inside is
    /// still followed (as upstream reads it). A named pipe is never opened.
    #[cfg(unix)]
    #[test]
    fn an_ignore_file_is_read_only_when_it_is_a_file_in_the_workspace() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("rules"), "leak_*\n").unwrap();
        let (_d, root) = setup(&[(".git/HEAD", ""), ("shared/rules", "kept_*\n"), ("a/x", "")]);
        let o = IgnoreOptions::default();
        std::os::unix::fs::symlink(outside.path().join("rules"), root.join("a/.gitignore"))
            .unwrap();
        std::os::unix::fs::symlink("shared/rules", root.join(".gitignore")).unwrap();
        let s = IgnoreService::new(&root);
        assert!(!s.is_ignored(&root.join("a/leak_1"), false, o), "rules from outside applied");
        assert!(s.is_ignored(&root.join("a/kept_1"), false, o), "a link inside is followed");
        assert_eq!(
            check_ignore_file(&[&root], &root.join("a/.gitignore")),
            Err("is a link that leads outside the workspace".into())
        );
        nix::unistd::mkfifo(&root.join("a/b/.gitignore"), nix::sys::stat::Mode::S_IRWXU)
            .or_else(|_| {
                fs::create_dir_all(root.join("a/b")).unwrap();
                nix::unistd::mkfifo(&root.join("a/b/.gitignore"), nix::sys::stat::Mode::S_IRWXU)
            })
            .unwrap();
        assert!(!s.is_ignored(&root.join("a/b/leak_1"), false, o));
        assert!(check_ignore_file(&[&root], &root.join("a/b/.gitignore")).is_err());
        assert_eq!(check_ignore_file(&[&root], &root.join("a/none")), Ok(false));
        assert_eq!(check_ignore_file(&[&root], &root.join("shared/rules")), Ok(true));
    }
}
