//! The ignore files grep_search's walker reads itself (the `ignore` crate opens each folder's
//! `.gitignore`, `.ignore` and `.rgignore` as it enters it, and those of the folders above the
//! search path): each is checked first, as the workspace's ignore service checks the ones it reads
//! ([`check_ignore_file`]). A named pipe there would hold the walk until the call's timeout, and
//! a link to a file outside the workspace would let that file decide what is searched. A folder
//! whose ignore file cannot be read is not entered, and the answer names it; one above the
//! search path makes the search fail, saying which file and what to do.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::WalkBuilder;
use toolbelt_core::Workspace;
use toolbelt_core::sync::LockExt as _;
use toolbelt_core::workspace::{IgnoreOptions, check_ignore_file, check_ignore_file_lines};

/// ripgrep's own ignore file, which upstream's grep (ripgrep) honours above `.ignore`.
const RG_IGNORE: &str = ".rgignore";

/// Shared by the walker's threads (the entry filter must own what it uses).
#[derive(Clone, Debug)]
pub(crate) struct IgnoreFiles {
    ws: Arc<Workspace>,
    opts: IgnoreOptions,
    names: &'static [&'static str],
    /// Folders not entered, and why.
    refused: Arc<Mutex<Vec<(PathBuf, String)>>>,
    /// The rules of each folder's ignore files (folders with some), to bound those on the way
    /// to any folder (`toolbelt_core::limits::IGNORE_RULES_ON_PATH`).
    rules: Arc<Mutex<std::collections::HashMap<PathBuf, usize>>>,
}

impl IgnoreFiles {
    /// The files a walk reads: `.ignore` and `.rgignore`, and `.gitignore` when git's ignore
    /// files count.
    pub(crate) fn new(ws: &Arc<Workspace>, opts: IgnoreOptions) -> Self {
        let names: &[&str] = if opts.respect_git_ignore {
            &[".gitignore", ".ignore", RG_IGNORE]
        } else {
            &[".ignore", RG_IGNORE]
        };
        Self { ws: ws.clone(), opts, names, refused: Arc::default(), rules: Arc::default() }
    }

    /// Sets `walk` up to honour the ignore files (ripgrep's standard filters, git's only in a
    /// repository), after checking those above `search`. Git's `info/exclude` files and the
    /// workspace's `.geminiignore` are left to the workspace's ignore service (the search's
    /// last word on every file with matches, and [`IgnoreFiles::gemini_ignores`] for folders),
    /// which reads each from a handle it judged: the walker would read them by name after the
    /// check (a file swapped meanwhile would be read), and the exclude file of every repository
    /// nested in the search path, through a `.git` link or a `.git` file's `gitdir:`, unchecked.
    pub(crate) fn configure(&self, walk: &mut WalkBuilder, search: &Path) -> Result<(), String> {
        self.check_above(search)?;
        walk.standard_filters(true).require_git(true).git_exclude(false);
        walk.add_custom_ignore_filename(RG_IGNORE);
        if !self.opts.respect_git_ignore {
            walk.git_ignore(false).git_global(false);
        }
        Ok(())
    }

    /// The ignore files `dir` has, or the first that may not be read, and why. Inside the
    /// workspace the workspace's check applies (a link must stay inside it); above it, the
    /// folders are the user's own, and only a file that would block (a named pipe, a device),
    /// that leads nowhere or is over the size limit is refused.
    fn present(&self, dir: &Path) -> Result<Vec<&'static str>, (&'static str, String)> {
        let inside = self.ws.roots().iter().any(|r| dir.starts_with(&r.real));
        let mut present = Vec::new();
        for &name in self.names {
            let file = dir.join(name);
            let checked = if inside {
                self.ws.check_ignore_file(&file)
            } else {
                check_ignore_file(&[Path::new("/")], &file)
            };
            // The walker stops reading a file at a line that is not UTF-8. The ignore service
            // reads a `.gitignore` inside the workspace too, and its last word applies every
            // rule; a `.ignore` or `.rgignore` (which only the walker reads) has its lines
            // checked here.
            let checked = match checked {
                Ok(true) if inside && name != ".gitignore" => {
                    let roots: Vec<&Path> =
                        self.ws.roots().iter().map(|r| r.real.as_path()).collect();
                    check_ignore_file_lines(&roots, &file)
                }
                other => other,
            };
            match checked {
                Ok(true) => present.push(name),
                Ok(false) => {}
                Err(why) => return Err((name, why)),
            }
        }
        Ok(present)
    }

    /// Checks the search path and every folder above it: the walk reads their ignore files, up
    /// to `/`.
    fn check_above(&self, search: &Path) -> Result<(), String> {
        for dir in search.ancestors().filter(|d| d.is_dir()) {
            match self.present(dir) {
                Err((name, why)) => {
                    return Err(format!(
                        "Cannot search: a search reads the ignore files of the folders it is in, and {} {why}. Ask the user to remove or replace that file.",
                        dir.join(name).display()
                    ));
                }
                Ok(present) => self.count_rules(dir, &present),
            }
        }
        if let Some(why) = self.too_many_rules(search) {
            return Err(format!("Cannot search {}: {why}", search.display()));
        }
        Ok(())
    }

    /// Notes how many rules `dir`'s ignore files (`present`, as [`IgnoreFiles::present`] found
    /// them: most folders have none, and are not asked for them again) hold.
    fn count_rules(&self, dir: &Path, present: &[&str]) {
        let n: usize = present
            .iter()
            .filter_map(|name| std::fs::read(dir.join(name)).ok())
            .map(|text| {
                text.split(|b| *b == b'\n')
                    .filter(|l| {
                        let l = l.trim_ascii();
                        !l.is_empty() && !l.starts_with(b"#")
                    })
                    .count()
            })
            .sum();
        if n > 0 {
            self.rules.locked().insert(dir.to_path_buf(), n);
        }
    }

    /// Why the walk may not go into `dir`: the ignore files on the way hold too many rules
    /// together (1000 nested folders of 200 rules each cost 1.3 GB, issue 35).
    fn too_many_rules(&self, dir: &Path) -> Option<String> {
        let rules = self.rules.locked();
        let on_path: usize = dir.ancestors().filter_map(|a| rules.get(a)).sum();
        let limit = toolbelt_core::limits::IGNORE_RULES_ON_PATH;
        (on_path > limit).then(|| {
            format!("its ignore files and those of the folders above it hold {on_path} rules together, more than the limit of {limit}")
        })
    }

    /// Whether the workspace's `.geminiignore` hides the folder `dir` (not entered; a file
    /// that cannot be read hides nothing here: the files below are left out, and named, when
    /// they match).
    pub(crate) fn gemini_ignores(&self, dir: &Path) -> bool {
        let opts = IgnoreOptions { respect_git_ignore: false, ..self.opts };
        self.opts.respect_gemini_ignore && self.ws.ignore().check(dir, true, opts) == Ok(true)
    }

    /// Whether the walk may enter the folder `dir` (when not, it is noted with the reason).
    pub(crate) fn may_enter(&self, dir: &Path) -> bool {
        let why = match self.present(dir) {
            Err((name, why)) => format!("not searched: its {name} {why}"),
            Ok(present) => {
                self.count_rules(dir, &present);
                match self.too_many_rules(dir) {
                    None => return true,
                    Some(why) => format!("not searched: {why}"),
                }
            }
        };
        self.refused.locked().push((dir.to_path_buf(), why));
        false
    }

    /// The folders not entered, and why.
    pub(crate) fn refused(&self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut *self.refused.locked())
    }
}
