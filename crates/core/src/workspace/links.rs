//! Hard links: a file with more than one name shares its content with every name. The platform
//! cannot list a file's other names, so toolbelt looks for them in the workspace roots (once,
//! the first time a file with several names is opened) and, at every open, checks again that
//! each name it found still is that file, several times over. A file is refused when another
//! of its names is sensitive, or when not all of its names are in the roots: then one lives
//! outside the workspace (`ln ~/.ssh/id_rsa notes.txt`), and the content is outside content.
//! Checking the names again matters: a name swapped back and forth between an inside file and
//! a link to an outside one could otherwise be counted twice while the roots were walked.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::{SensitiveHit, SensitiveRules};

/// What the roots hold of one file with several names.
#[derive(Debug, Default)]
struct Names {
    /// Its names in the roots, as found (once each, also where roots overlap).
    paths: std::collections::BTreeSet<PathBuf>,
    /// The rule one of them matches, if any (the name itself is never shown: see
    /// [`LinkRefusal::Sensitive`]).
    sensitive: Option<SensitiveHit>,
}

/// How many times every name is checked again, in alternating order: a name swapped between
/// two files would have to be swapped at just the right moment in every round.
const ROUNDS: usize = 3;

/// How many of `paths` are the file (dev, ino) in every one of [`ROUNDS`] checks.
fn stable_names(paths: &std::collections::BTreeSet<PathBuf>, dev: u64, ino: u64) -> u64 {
    let paths: Vec<&PathBuf> = paths.iter().collect();
    let mut ok = vec![true; paths.len()];
    for round in 0..ROUNDS {
        let order: Box<dyn Iterator<Item = usize>> = if round % 2 == 0 {
            Box::new(0..paths.len())
        } else {
            Box::new((0..paths.len()).rev())
        };
        for i in order {
            let same = std::fs::symlink_metadata(paths[i])
                .is_ok_and(|m| m.is_file() && m.dev() == dev && m.ino() == ino);
            ok[i] &= same;
        }
    }
    ok.iter().filter(|b| **b).count() as u64
}

/// Files with more than one name in the roots, by (device, inode).
#[derive(Debug, Default)]
pub(crate) struct LinkIndex {
    index: OnceLock<HashMap<(u64, u64), Names>>,
}

/// Why a file with several names is refused.
pub(crate) enum LinkRefusal {
    /// Another name of it is sensitive: the rule it matches (the name is not shown; it may be
    /// the secret itself).
    Sensitive(SensitiveHit),
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
            Some(Names { sensitive: Some(hit), .. }) => Some(LinkRefusal::Sensitive(hit.clone())),
            Some(Names { paths, .. }) if stable_names(paths, dev, ino) >= nlink => None,
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
            // A set: overlapping roots yield a path twice, and a list look-up was quadratic
            // with tens of thousands of links to one file.
            names.paths.insert(entry.path().to_path_buf());
            let rel = super::paths::relative_to(entry.path(), root);
            if names.sensitive.is_none() {
                names.sensitive = rules.check(&rel);
            }
        }
    }
    index
}
