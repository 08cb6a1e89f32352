//! Hard links: a file with more than one name shares its content with every name. The platform
//! cannot list a file's other names, so toolbelt counts the names it can see: those in the
//! workspace roots (found once, the first time a file with several names is opened). A file is
//! refused when another of its names is sensitive, or when not all of its names are in the
//! roots: then one lives outside the workspace (`ln ~/.ssh/id_rsa notes.txt`), and the content
//! is outside content.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::SensitiveRules;

/// What the roots hold of one file with several names.
#[derive(Debug, Default)]
struct Names {
    /// How many of its names are in the roots.
    seen: u64,
    /// One of them that the sensitive rules refuse, if any.
    sensitive: Option<String>,
}

/// Files with more than one name in the roots, by (device, inode).
#[derive(Debug, Default)]
pub(crate) struct LinkIndex {
    index: OnceLock<HashMap<(u64, u64), Names>>,
}

/// Why a file with several names is refused.
pub(crate) enum LinkRefusal {
    /// Another name of it is sensitive.
    Sensitive(String),
    /// Not all of its names are in the workspace.
    Outside,
}

impl LinkIndex {
    /// Checks a file with `nlink` names: `None` when every name is in the roots and none is
    /// sensitive.
    pub(crate) fn check(
        &self,
        (dev, ino, nlink): (u64, u64, u64),
        roots: &[PathBuf],
        rules: &SensitiveRules,
    ) -> Option<LinkRefusal> {
        let index = self.index.get_or_init(|| build(roots, rules));
        match index.get(&(dev, ino)) {
            Some(Names { sensitive: Some(name), .. }) => Some(LinkRefusal::Sensitive(name.clone())),
            Some(Names { seen, .. }) if *seen >= nlink => None,
            _ => Some(LinkRefusal::Outside),
        }
    }
}

fn build(roots: &[PathBuf], rules: &SensitiveRules) -> HashMap<(u64, u64), Names> {
    let mut index: HashMap<(u64, u64), Names> = HashMap::new();
    for root in roots {
        // node_modules is refused whole, so its names are not counted: a link into it counts
        // as a link to outside.
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
            let names = index.entry((meta.dev(), meta.ino())).or_default();
            names.seen += 1;
            let rel = super::paths::relative_to(entry.path(), root);
            if names.sensitive.is_none() && rules.check(&rel).is_some() {
                names.sensitive = Some(rel);
            }
        }
    }
    index
}
