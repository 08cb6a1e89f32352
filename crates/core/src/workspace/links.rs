//! Hard links: a file with more than one name shares its content with every name. The platform
//! cannot list a file's other names, so toolbelt looks for them in the workspace roots (once,
//! the first time a file with several names is opened) and, at every open, counts how many of
//! them are the file now. A file is refused when another of its names is sensitive, or when
//! fewer of its names are in the roots than it has: then one lives outside the workspace
//! (`ln ~/.ssh/id_rsa notes.txt`), and the content is outside content.
//!
//! The count must not see one name twice. A name swapped back and forth between an inside file
//! and a link to an outside one would be found at two places at two moments, so the count only
//! stands when the file's status-change stamp, which every link, unlink and rename of one of
//! its names renews, is the same after the count as before it and was already older than the
//! file system's tick before it: then no name of the file changed while the names were
//! counted. Each name is reached from its root with no symlink on the way, and counted once
//! per folder.

use std::collections::{BTreeSet, HashMap};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, fstat, openat, statat};

use super::beneath::RootDir;
use super::{SensitiveHit, SensitiveRules};

/// What the roots hold of one file with several names.
#[derive(Debug, Default)]
struct Names {
    /// Its names in the roots, as found: the root's index and the path beneath it.
    paths: BTreeSet<(usize, PathBuf)>,
    /// The rule one of them matches, if any (the name itself is never shown: see
    /// [`LinkRefusal::Sensitive`]).
    sensitive: Option<SensitiveHit>,
}

/// How long a file's status must have stood still before its names are counted: longer than
/// the coarsest tick a file system stamps a change with on nanosecond file systems (the
/// kernel's coarse clock lags by at most one timer tick), so that any change while they are
/// counted gives a different stamp.
const SETTLE: Duration = Duration::from_millis(30);

/// The same for file systems that stamp whole seconds (the nanoseconds read zero).
const SETTLE_WHOLE_SECONDS: Duration = Duration::from_millis(2100);

/// A file's status-change stamp and link count: linking, unlinking or renaming any of its names
/// changes the stamp.
fn status(fd: BorrowedFd<'_>) -> Option<(i64, i64, u64)> {
    let st = fstat(fd).ok()?;
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    Some((st.st_ctime as i64, st.st_ctime_nsec as i64, st.st_nlink as u64))
}

/// How long to wait before the stamp `(secs, nanos)` is old enough (zero when it is).
fn unsettled_for((secs, nanos): (i64, i64)) -> Duration {
    let settle = if nanos == 0 { SETTLE_WHOLE_SECONDS } else { SETTLE };
    let stamp = match u64::try_from(secs) {
        Ok(s) => UNIX_EPOCH + Duration::new(s, u32::try_from(nanos).unwrap_or(0)),
        Err(_) => return Duration::ZERO,
    };
    (stamp + settle).duration_since(SystemTime::now()).unwrap_or(Duration::ZERO)
}

/// The names in `paths` that are the file `(dev, ino)` now, each reached from its root with no
/// symlink on the way (a folder swapped for a link to another folder cannot make one name count
/// twice) and counted once per folder and name (overlapping roots and bind mounts show one name
/// under several paths).
fn names_now(paths: &BTreeSet<(usize, PathBuf)>, roots: &[RootDir], (dev, ino): (u64, u64)) -> u64 {
    let mut seen = BTreeSet::new();
    for (root, rel) in paths {
        let (Some(root), Some(name)) = (roots.get(*root), rel.file_name()) else { continue };
        let Some(dir) = folder_of(root, rel) else { continue };
        let Ok(st) = statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) else { continue };
        #[allow(clippy::unnecessary_cast)]
        let same = FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
            && st.st_dev as u64 == dev
            && st.st_ino as u64 == ino;
        if let (true, false, Ok(d)) = (same, mount_root(&dir, name), fstat(&dir)) {
            #[allow(clippy::unnecessary_cast)]
            seen.insert((d.st_dev as u64, d.st_ino as u64, name.to_os_string()));
        }
    }
    seen.len() as u64
}

/// Whether `name` in `dir` is a mount's root (a file bind-mounted there): not a name of its own,
/// whatever inode it shows (found by an attack on the count: a file bind-mounted into the
/// workspace counted as a second inside name of a file linked from outside).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn mount_root(dir: &OwnedFd, name: &std::ffi::OsStr) -> bool {
    use rustix::fs::{StatxAttributes, StatxFlags, statx};
    let flags = AtFlags::NO_AUTOMOUNT | AtFlags::SYMLINK_NOFOLLOW;
    statx(dir, name, flags, StatxFlags::empty()).is_ok_and(|x| {
        x.stx_attributes_mask.contains(StatxAttributes::MOUNT_ROOT)
            && x.stx_attributes.contains(StatxAttributes::MOUNT_ROOT)
    })
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn mount_root(_: &OwnedFd, _: &std::ffi::OsStr) -> bool {
    false
}

/// The folder holding `rel` beneath `root`, opened one plain component at a time without
/// following a symlink.
fn folder_of(root: &RootDir, rel: &Path) -> Option<OwnedFd> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::io::fcntl_dupfd_cloexec(&root.fd, 0).ok()?;
    for part in rel.parent()?.components() {
        let Component::Normal(part) = part else { return None };
        dir = openat(&dir, part, flags, Mode::empty()).ok()?;
    }
    Some(dir)
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
    /// Its names changed while they were counted (or moments before).
    Changing,
}

impl LinkIndex {
    /// The rule another name of the file `(dev, ino)` matches, if any.
    pub(crate) fn sensitive(
        &self,
        key: (u64, u64),
        roots: &[RootDir],
        rules: &SensitiveRules,
    ) -> Option<SensitiveHit> {
        self.index.get_or_init(|| build(roots, rules)).get(&key)?.sensitive.clone()
    }

    /// Checks the open file `fd`, `(dev, ino)`, which had several names when it was opened:
    /// `None` when every name is in the roots and none is sensitive.
    pub(crate) fn check(
        &self,
        fd: BorrowedFd<'_>,
        key: (u64, u64),
        roots: &[RootDir],
        rules: &SensitiveRules,
    ) -> Option<LinkRefusal> {
        let names = match self.index.get_or_init(|| build(roots, rules)).get(&key) {
            Some(Names { sensitive: Some(hit), .. }) => {
                return Some(LinkRefusal::Sensitive(hit.clone()));
            }
            Some(names) => names,
            None => return Some(LinkRefusal::Outside),
        };
        let Some(mut before) = status(fd) else { return Some(LinkRefusal::Outside) };
        let wait = unsettled_for((before.0, before.1));
        if !wait.is_zero() {
            // Changed moments ago (a link just made): wait once for the stamp to settle; a
            // file whose names keep changing is refused.
            std::thread::sleep(wait);
            let now = status(fd);
            if now != Some(before) {
                return Some(LinkRefusal::Changing);
            }
            before = now.unwrap_or(before);
        }
        let count = names_now(&names.paths, roots, key);
        match status(fd) {
            Some(after) if after != before => Some(LinkRefusal::Changing),
            Some(_) if count >= before.2 => None,
            _ => Some(LinkRefusal::Outside),
        }
    }
}

fn build(roots: &[RootDir], rules: &SensitiveRules) -> HashMap<(u64, u64), Names> {
    let mut index: HashMap<(u64, u64), Names> = HashMap::new();
    for (i, root) in roots.iter().enumerate() {
        // node_modules is refused whole, so its names are not counted: a link into it counts
        // as a link to outside.
        let walk = ignore::WalkBuilder::new(&root.real)
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
            let Ok(rel) = entry.path().strip_prefix(&root.real) else { continue };
            let names = index.entry((meta.dev(), meta.ino())).or_default();
            // A set: a list look-up was quadratic with tens of thousands of links to one file.
            names.paths.insert((i, rel.to_path_buf()));
            if names.sensitive.is_none() {
                names.sensitive = rules.check(&super::paths::relative_to(entry.path(), &root.real));
            }
        }
    }
    index
}
