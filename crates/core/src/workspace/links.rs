//! Hard links: a file with more than one name is refused when another of its names is one the
//! sensitive-path rules refuse (so `ln ~/.ssh/id_rsa notes.txt` does not make the key readable).
//! The platform cannot list a file's other names, so toolbelt knows the sensitive files that
//! have more than one: those in the workspace roots and those in the user's secret folders
//! (`~/.ssh`, `~/.aws`, ...), found once, the first time a file with several names is opened.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::SensitiveRules;

/// Folders under the user's home whose every file is a secret.
const HOME_SECRET_DIRS: &[&str] =
    &[".ssh", ".gnupg", ".aws", ".azure", ".docker", ".kube", ".config/gcloud", ".config/gh"];
/// Files under the user's home that are secrets.
const HOME_SECRET_FILES: &[&str] = &[".netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc"];

/// The sensitive files with more than one name, by (device, inode): the name to report.
#[derive(Debug, Default)]
pub(crate) struct SensitiveInodes {
    index: OnceLock<HashMap<(u64, u64), String>>,
}

impl SensitiveInodes {
    /// The sensitive name of the file `(dev, ino)`, if it is another name of a sensitive file.
    pub(crate) fn other_name(
        &self,
        dev: u64,
        ino: u64,
        roots: &[PathBuf],
        rules: &SensitiveRules,
    ) -> Option<String> {
        self.index.get_or_init(|| build(roots, rules)).get(&(dev, ino)).cloned()
    }
}

fn build(roots: &[PathBuf], rules: &SensitiveRules) -> HashMap<(u64, u64), String> {
    let mut index = HashMap::new();
    for root in roots {
        let walk = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .hidden(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != "node_modules")
            .build();
        for entry in walk.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() || meta.nlink() < 2 {
                continue;
            }
            let rel = super::paths::relative_to(entry.path(), root);
            if rules.check(&rel).is_some() {
                index.insert((meta.dev(), meta.ino()), rel);
            }
        }
    }
    if let Some(home) = crate::files::user_home() {
        for dir in HOME_SECRET_DIRS {
            add_all(&mut index, &home.join(dir), &home);
        }
        for file in HOME_SECRET_FILES {
            add_all(&mut index, &home.join(file), &home);
        }
    }
    index
}

/// Every file with several names under `path` (a file or a folder, three levels deep).
fn add_all(index: &mut HashMap<(u64, u64), String>, path: &Path, home: &Path) {
    if std::fs::symlink_metadata(path).is_err() {
        return;
    }
    let walk = ignore::WalkBuilder::new(path)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .max_depth(Some(3))
        .build();
    for entry in walk.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() && meta.nlink() >= 2 {
            let shown = format!("~/{}", super::paths::relative_to(entry.path(), home));
            index.insert((meta.dev(), meta.ino()), shown);
        }
    }
}
