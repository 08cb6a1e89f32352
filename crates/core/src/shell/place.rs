//! Where a shell command runs and what it may touch, for the known-safe table and git's
//! checks: the workspace, the folder the command runs in, the file layer's judgement of paths,
//! whether commands run confined, and the PATH names are looked up in.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// Judges a path a command would read, as the file tools would: `Err` with the reason when
/// they would refuse it (outside the workspace, a sensitive file, a hard link to either).
pub trait ReadJudge: Send + Sync {
    /// Whether a command may read `path` (absolute, not yet resolved).
    fn may_read(&self, path: &Path) -> Result<(), String>;
    /// Whether a redirection may write `path` in `auto_edit` without asking: as write_file may
    /// there (inside, not sensitive, not read-only), and not a file that decides what runs.
    fn may_write(&self, path: &Path) -> Result<(), String>;
    /// Why `path` (absolute, not yet resolved) is a file that decides what runs (settings,
    /// policies, hooks, `.git/config`, context files), if it is one.
    fn control(&self, path: &Path) -> Option<String> {
        let _ = path;
        None
    }
    /// Whether the name rules refuse `path` (absolute, taken as it is: no file is looked at),
    /// or it lies outside the workspace. For many paths at once (a repository's index).
    fn sensitive_name(&self, path: &Path) -> bool {
        let _ = path;
        false
    }
}

/// Where a command runs and what it may read.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    /// The workspace's primary root.
    pub workspace: &'a Path,
    /// Where the command runs.
    pub cwd: &'a Path,
    /// The file layer's judgement of a path the command would read; `None`: only lexical and
    /// symlink checks.
    pub files: Option<&'a dyn ReadJudge>,
    /// Whether what the table allows runs confined (read-only, no network).
    pub confined: bool,
    /// The `PATH` commands are looked up in (`None`: the process's own).
    pub search_path: Option<&'a OsStr>,
}

impl std::fmt::Debug for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Place")
            .field("workspace", &self.workspace)
            .field("cwd", &self.cwd)
            .field("files", &self.files.is_some())
            .field("confined", &self.confined)
            .finish()
    }
}

impl<'a> Place<'a> {
    /// A place with no file layer, commands confined, the process's PATH.
    pub fn new(workspace: &'a Path, cwd: &'a Path) -> Self {
        Place { workspace, cwd, files: None, confined: true, search_path: None }
    }
}

/// `p` with `.` and `..` taken lexically.
pub fn normalized(p: &Path) -> PathBuf {
    normalize(p)
}

pub(super) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether a path-like argument may point outside the workspace: variables, `~user`, absolute
/// or relative paths that leave it, or a symlink on the way that does.
pub fn path_escapes(arg: &str, at: Place<'_>) -> bool {
    if arg.is_empty() {
        return false;
    }
    if arg.contains(['$', '`']) || (arg.starts_with('~') && arg != "~" && !arg.starts_with("~/")) {
        return true;
    }
    let joined = if arg == "~" || arg.starts_with("~/") {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(arg.trim_start_matches('~').trim_start_matches('/'))
    } else {
        at.cwd.join(arg)
    };
    // The kernel follows a link before it takes the `..` after it (`r/..` with `r -> /` is
    // `/`), where a lexical fold drops both (issue 34): a `..` after a link is not judged.
    if dotdot_after_link(&joined) {
        return true;
    }
    let target = normalize(&joined);
    if !target.starts_with(at.workspace) {
        return true;
    }
    // The file layer's rules: sensitive files, hard links, links out.
    if let Some(files) = at.files
        && files.may_read(&target).is_err()
    {
        return true;
    }
    let mut cur = target.as_path();
    while cur.starts_with(at.workspace) && cur != at.workspace {
        if cur.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            match std::fs::canonicalize(cur) {
                Ok(real) if real.starts_with(at.workspace) => {}
                _ => return true,
            }
        }
        let Some(parent) = cur.parent() else { break };
        cur = parent;
    }
    false
}

/// Whether a `..` in `path` comes after a component that is a symbolic link (or that cannot be
/// looked at): then where `..` leads depends on the link, not on the text.
fn dotdot_after_link(path: &Path) -> bool {
    let mut prefix = PathBuf::new();
    let mut seen_link = false;
    for c in path.components() {
        match c {
            Component::ParentDir if seen_link => return true,
            Component::ParentDir => {
                prefix.pop();
            }
            Component::CurDir => {}
            other => {
                prefix.push(other);
                if !seen_link && matches!(other, Component::Normal(_)) {
                    seen_link = prefix.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
                }
            }
        }
    }
    false
}

pub(super) fn cwd_inside(at: Place<'_>) -> bool {
    path_inside(at.cwd, at.workspace)
}

/// Whether `p` (made absolute and without `..`) is the workspace or inside it.
pub fn path_inside(p: &Path, workspace: &Path) -> bool {
    normalize(p).starts_with(workspace)
}
