//! Upstream's correction of a `replace` path (issue 48, S5): a relative `file_path` that names
//! no file (`deep/util.py` for `src/deep/util.py`) is looked for deeper in the workspace, and
//! when exactly one file's path ends with the given text, the edit goes to that file. As
//! upstream: a breadth-first walk of each root, at most 50 folders each, for files of the given
//! name, passing over what the ignore files hide and symlinks; the match is on the path's text
//! (`eep/util.py` matches too), case-sensitive; none or several found leave the path as it was
//! (the edit then reports the file missing).
//!
//! Folders are listed through the file layer, beneath a root: a folder the layer refuses
//! (`node_modules`, `.git`, a sensitive folder) is not listed, so a copy there is neither found
//! nor counted (upstream counts it, then refuses it); a sensitive file found by its name is
//! refused when the corrected path is checked, as any path is.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use toolbelt_core::Workspace;

/// Folders read in each root at most (upstream's `maxDirs`).
const MAX_FOLDERS: usize = 50;

/// The one file `given` (as the model wrote it) means, when it names no file itself.
pub(super) fn corrected(ws: &Workspace, given: &str) -> Option<PathBuf> {
    let rel = given.strip_prefix('@').unwrap_or(given);
    if rel.is_empty() || Path::new(rel).is_absolute() || ws.primary().join(rel).exists() {
        return None;
    }
    let name = Path::new(rel).file_name()?.to_str()?;
    let wanted = rel.replace('\\', "/");
    let mut found = Vec::new();
    for root in ws.roots() {
        for file in files_named(ws, &root.real, name) {
            if file.to_string_lossy().ends_with(&wanted) {
                found.push(file);
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// The files called `name` in the first [`MAX_FOLDERS`] folders of `root`, breadth first.
fn files_named(ws: &Workspace, root: &Path, name: &str) -> Vec<PathBuf> {
    let opts = ws.ignore_options(None, None);
    let mut queue = VecDeque::from([root.to_path_buf()]);
    let (mut read, mut found) = (0, Vec::new());
    while let Some(dir) = queue.pop_front() {
        if read == MAX_FOLDERS {
            break;
        }
        read += 1;
        for (entry, is_dir) in entries(ws, &dir) {
            let path = dir.join(&entry);
            if ws.ignore().check(&path, is_dir, opts).unwrap_or(true) {
                continue;
            }
            if is_dir {
                queue.push_back(path);
            } else if entry == name {
                found.push(path);
            }
        }
    }
    found
}

/// The folders and regular files of `dir` (symlinks, special files and names that are not
/// UTF-8 left out), listed as
/// list_directory lists it: from a handle the file layer opened beneath its root; nothing when
/// it refuses the folder.
fn entries(ws: &Workspace, dir: &Path) -> Vec<(String, bool)> {
    let names = crate::fs::list_directory::read_names(ws, dir).unwrap_or_default();
    names
        .into_iter()
        .filter(|n| n.utf8 && !n.link)
        .filter_map(|n| {
            let is_dir = n.stat.is_some_and(|(d, _)| d);
            (is_dir || n.regular).then_some((n.name, is_dir))
        })
        .collect()
}
