//! The ignore files grep_search's walker reads itself (the `ignore` crate opens each folder's
//! `.gitignore` and `.ignore` as it enters it, and those of the folders above the search path):
//! each is checked first, as the workspace's ignore service checks the ones it reads
//! ([`check_ignore_file`]). A named pipe there would hold the walk until the call's timeout, and
//! a link to a file outside the workspace would let that file decide what is searched. A folder
//! whose ignore file cannot be read is not entered, and the answer names it; one above the
//! search path makes the search fail, saying which file and what to do.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::WalkBuilder;
use toolbelt_core::Workspace;
use toolbelt_core::sync::LockExt as _;
use toolbelt_core::workspace::{GEMINI_IGNORE, IgnoreOptions, check_ignore_file};

/// Shared by the walker's threads (the entry filter must own what it uses).
#[derive(Clone, Debug)]
pub(crate) struct IgnoreFiles {
    roots: Arc<Vec<PathBuf>>,
    /// The roots, open: a folder's files are looked up from its root's handle, which costs
    /// less than from `/` (a walk checks every folder it enters).
    #[cfg(unix)]
    handles: Arc<Vec<Option<std::fs::File>>>,
    opts: IgnoreOptions,
    /// The workspace's `.geminiignore`.
    gemini: PathBuf,
    names: &'static [&'static str],
    /// Folders not entered, and why.
    refused: Arc<Mutex<Vec<(PathBuf, String)>>>,
}

impl IgnoreFiles {
    /// The files a walk reads: `.ignore`, and `.gitignore` when git's ignore files count.
    pub(crate) fn new(ws: &Workspace, opts: IgnoreOptions) -> Self {
        let roots = ws.roots().iter().map(|r| r.real.clone()).collect();
        let git = opts.respect_git_ignore;
        let names: &[&str] = if git { &[".gitignore", ".ignore"] } else { &[".ignore"] };
        let gemini = ws.primary().join(GEMINI_IGNORE);
        #[cfg(unix)]
        let handles =
            Arc::new(ws.roots().iter().map(|r| std::fs::File::open(&r.real).ok()).collect());
        Self {
            roots: Arc::new(roots),
            #[cfg(unix)]
            handles,
            opts,
            gemini,
            names,
            refused: Arc::default(),
        }
    }

    /// Sets `walk` up to honour the ignore files (ripgrep's standard filters, git's only in a
    /// repository, the workspace's `.geminiignore` when it may be read), after checking those
    /// above `search`.
    pub(crate) fn configure(&self, walk: &mut WalkBuilder, search: &Path) -> Result<(), String> {
        self.check_above(search)?;
        walk.standard_filters(true).require_git(true);
        if !self.opts.respect_git_ignore {
            walk.git_ignore(false).git_exclude(false).git_global(false);
        }
        if self.opts.respect_gemini_ignore
            && check_ignore_file(&self.roots, &self.gemini) == Ok(true)
            && let Some(e) = walk.add_ignore(&self.gemini)
        {
            tracing::warn!("{}: {e}", self.gemini.display());
        }
        Ok(())
    }

    /// Why `dir`'s ignore files cannot be read, if one cannot.
    fn problem(&self, dir: &Path) -> Option<String> {
        self.names.iter().find_map(|name| {
            if self.plainly_fine(dir, name) {
                return None;
            }
            let why = check_ignore_file(&self.roots, &dir.join(name)).err()?;
            Some(format!("its {name} {why}"))
        })
    }

    /// The common case answered cheaply: no file `name` in `dir`, or a regular one (looked up
    /// from the root's handle without following links). Anything else gets the full check.
    #[cfg(unix)]
    fn plainly_fine(&self, dir: &Path, name: &str) -> bool {
        use rustix::fs::{AtFlags, FileType, statat};
        let Some((i, rel)) =
            self.roots.iter().enumerate().find_map(|(i, r)| Some((i, dir.strip_prefix(r).ok()?)))
        else {
            return false;
        };
        let Some(Some(root)) = self.handles.get(i) else { return false };
        let rel = if rel.as_os_str().is_empty() { PathBuf::from(name) } else { rel.join(name) };
        match statat(root, &rel, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => FileType::from_raw_mode(st.st_mode) == FileType::RegularFile,
            Err(e) => e == rustix::io::Errno::NOENT,
        }
    }

    #[cfg(not(unix))]
    fn plainly_fine(&self, _: &Path, _: &str) -> bool {
        false
    }

    /// Checks the search path and every folder above it (their ignore files, and git's
    /// `info/exclude` of a repository there): the walk reads all of them, up to `/`. Inside the
    /// workspace a link must stay inside it; above it, the folders are the user's own, and only
    /// a file that would block (a named pipe, a device) is refused.
    fn check_above(&self, search: &Path) -> Result<(), String> {
        let everywhere = [PathBuf::from("/")];
        for dir in search.ancestors().filter(|d| d.is_dir()) {
            let inside = self.roots.iter().any(|r| dir.starts_with(r));
            let roots: &[PathBuf] = if inside { &self.roots } else { &everywhere };
            let names = self.names.iter().copied().chain([".git/info/exclude"]);
            let problem = names.into_iter().find_map(|name| {
                if inside && self.plainly_fine(dir, name) {
                    return None;
                }
                let why = check_ignore_file(roots, &dir.join(name)).err()?;
                Some(format!("{} {why}", dir.join(name).display()))
            });
            if let Some(why) = problem {
                return Err(format!(
                    "Cannot search: a search reads the ignore files of the folders it is in, and {why}. Remove or replace that file, or search with no_ignore: true."
                ));
            }
        }
        Ok(())
    }

    /// Whether the walk may enter the folder `dir` (when not, it is noted with the reason).
    pub(crate) fn may_enter(&self, dir: &Path) -> bool {
        match self.problem(dir) {
            None => true,
            Some(why) => {
                self.refused.locked().push((dir.to_path_buf(), format!("not searched: {why}")));
                false
            }
        }
    }

    /// The folders not entered, and why.
    pub(crate) fn refused(&self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut *self.refused.locked())
    }
}
