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
        let exclude = git_repo.then(|| load(root, &root.join(".git/info/exclude"))).flatten();
        let gemini = load(root, &root.join(GEMINI_IGNORE));
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
            .or_insert_with(|| load(dir, &dir.join(".gitignore")).map(Arc::new))
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

fn load(root: &Path, file: &Path) -> Option<Gitignore> {
    if !file.is_file() {
        return None;
    }
    let mut b = GitignoreBuilder::new(root);
    if let Some(err) = b.add(file) {
        tracing::warn!("ignore file {}: {err}", file.display());
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
}
