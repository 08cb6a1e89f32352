//! Test helpers for this workspace's tests and benchmarks (feature `testing`; never in a
//! release build): the one way to build a test environment ([`TempTree`], [`test_env`]) and
//! tools with predictable behaviour ([`fake`]).
// Helpers fail loudly: a test environment that cannot be built is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fake;

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::tool::ToolEnv;
use crate::workspace::Workspace;

pub use fake::{Behaviour, EchoTool, FakeTool, Journal};

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
    /// A new empty tree and state folder.
    pub fn new() -> Self {
        Self::new_in(&std::env::temp_dir())
    }

    /// A new empty tree and state folder inside `base` (sandbox tests need them outside the
    /// temp folder, which every sandbox profile may write).
    pub fn new_in(base: &Path) -> Self {
        let dir = tempfile::tempdir_in(base).unwrap_or_else(|e| panic!("temp dir: {e}"));
        let home = tempfile::tempdir_in(base).unwrap_or_else(|e| panic!("temp dir: {e}"));
        let root =
            std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("canonical root: {e}"));
        let home_path =
            std::fs::canonicalize(home.path()).unwrap_or_else(|e| panic!("canonical home: {e}"));
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
        std::fs::create_dir_all(p.parent().unwrap_or_else(|| panic!("{rel} has no parent")))
            .unwrap_or_else(|e| panic!("mkdir {rel}: {e}"));
        std::fs::write(p, content).unwrap_or_else(|e| panic!("write {rel}: {e}"));
        self
    }

    /// Creates the folder `root/rel` with its parents.
    pub fn dir(&self, rel: &str) -> &Self {
        std::fs::create_dir_all(self.root.join(rel)).unwrap_or_else(|e| panic!("mkdir {rel}: {e}"));
        self
    }

    /// Creates `root/rel` pointing at `target` (taken as is).
    #[cfg(unix)]
    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) -> &Self {
        std::os::unix::fs::symlink(target, self.root.join(rel))
            .unwrap_or_else(|e| panic!("symlink {rel}: {e}"));
        self
    }

    /// The tool environment over this tree: the root (then `extra_roots`) as the workspace,
    /// the state folder as toolbelt's home.
    pub fn env(&self, extra_roots: &[&Path]) -> ToolEnv {
        let config = Config {
            home_dir: self.home.clone(),
            memory_file: self.home.join(".gemini/GEMINI.md"),
            ..Config::default()
        };
        let mut roots = vec![self.root.clone()];
        roots.extend(extra_roots.iter().map(|p| p.to_path_buf()));
        let workspace =
            Workspace::new(&roots, &config).unwrap_or_else(|e| panic!("workspace: {e}"));
        ToolEnv::new(workspace, config)
    }
}

/// A temporary workspace and its tool environment (the tree must outlive the environment).
pub fn test_env() -> (TempTree, ToolEnv) {
    let tree = TempTree::new();
    let env = tree.env(&[]);
    (tree, env)
}

/// Cases per generated-input property: 1,000, or `TOOLBELT_PROPTEST_CASES` for longer runs.
pub fn proptest_cases() -> u32 {
    std::env::var("TOOLBELT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}
