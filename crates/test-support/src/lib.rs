//! Dev-only helpers: temporary folder trees and a fake model server for tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fake_model;
pub mod web_server;

use std::path::{Path, PathBuf};

/// A temporary folder tree (the workspace root) plus a separate state folder (`home`).
pub struct TempTree {
    _dir: tempfile::TempDir,
    _home: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Default for TempTree {
    fn default() -> Self {
        Self::new()
    }
}

impl TempTree {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical root");
        let home_path = std::fs::canonicalize(home.path()).expect("canonical home");
        Self { _dir: dir, _home: home, root, home: home_path }
    }

    /// The workspace root, resolved (no symlinks).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A state folder outside the root (use as `TOOLBELT_HOME`).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// `root/rel` as a string.
    pub fn abs(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }

    /// Writes a file, creating parent folders.
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
        self
    }

    pub fn dir(&self, rel: &str) -> &Self {
        std::fs::create_dir_all(self.root.join(rel)).expect("mkdir");
        self
    }

    /// Creates `root/rel` pointing at `target` (taken as is).
    #[cfg(unix)]
    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) -> &Self {
        std::os::unix::fs::symlink(target, self.root.join(rel)).expect("symlink");
        self
    }
}
