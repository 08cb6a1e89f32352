//! The one ignore service every file tool shares: `.gitignore` (nested, plus
//! `.git/info/exclude`, only inside git repositories) and `.geminiignore` at the root, with the
//! `ignore` crate's gitignore matcher. Per-directory files are loaded lazily and cached.
//!
//! An ignore file that may not be read (see [`check_ignore_file`]) is never passed over: what
//! it would hide cannot be told, so every path it applies to is an [`Unreadable`] error that
//! the tools turn into "left out, and why" (a file the user keeps to hide secrets from the model
//! must not stop hiding them because it is a link or a pipe).

use crate::sync::LockExt;
// Keyed by paths from the repository: a hasher seeded per process, faster than SipHash.
use foldhash::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

mod file;
mod rule;
use file::read_ignore_file;
pub use file::{check_ignore_file, check_ignore_file_lines};

/// Which ignore sources a call honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IgnoreOptions {
    /// Honour `.gitignore` (and git's other ignore files).
    pub respect_git_ignore: bool,
    /// Honour `.geminiignore`.
    pub respect_gemini_ignore: bool,
}

impl Default for IgnoreOptions {
    fn default() -> Self {
        Self { respect_git_ignore: true, respect_gemini_ignore: true }
    }
}

/// The custom ignore file name, as upstream.
pub const GEMINI_IGNORE: &str = ".geminiignore";

/// An ignore file that applies to a path but may not be read: whether the path is hidden
/// cannot be told.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Unreadable {
    /// The ignore file.
    pub file: PathBuf,
    /// Why it is not read, e.g. `is a link that leads outside the workspace`.
    pub why: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.file.display(), self.why)
    }
}

/// One ignore file's rules.
#[derive(Debug)]
enum Rules {
    /// No file, or nothing in it.
    None,
    Read(Gitignore),
    /// There, but not to be read: why.
    Unreadable(String),
}

impl Rules {
    /// How many rules (a file that is not read has none).
    fn count(&self) -> usize {
        match self {
            Rules::Read(g) => g.num_ignores() as usize + g.num_whitelists() as usize,
            _ => 0,
        }
    }

    /// `current` after these rules, for `path` (as the matcher wants it) in `file`.
    fn apply(
        &self,
        current: bool,
        path: &Path,
        is_dir: bool,
        file: impl FnOnce() -> PathBuf,
    ) -> Result<bool, Unreadable> {
        match self {
            Rules::None => Ok(current),
            Rules::Read(g) => Ok(apply(current, g.matched(path, is_dir))),
            Rules::Unreadable(why) => Err(Unreadable { file: file(), why: why.clone() }),
        }
    }
}

/// Ignore rules of one root, cached per folder, each file looked at again (by a `stat`) once
/// in each batch of calls (see [`IgnoreService::refresh`]).
#[derive(Debug)]
pub struct IgnoreService {
    root: PathBuf,
    /// Every root of the workspace: an ignore file may be a link to a file in any of them.
    roots: Vec<PathBuf>,
    git_repo: bool,
    /// Git's exclude file (in a repository only).
    exclude: Option<Mutex<Cached>>,
    gemini: Mutex<Cached>,
    /// Each folder's `.gitignore`, and how many rules they hold together (past
    /// [`IGNORE_RULES_CACHED`](crate::limits::IGNORE_RULES_CACHED) the cache starts again).
    per_dir: Mutex<(HashMap<PathBuf, Cached>, usize)>,
    /// Whether each folder's own rules ignore it, for the current batch: every file below a
    /// folder asked again (a file 14 folders deep cost some hundred rule lookups; issue 37).
    folders: Mutex<FolderVerdicts>,
    /// The batch of calls now running: a file's rules last made sure of in an earlier batch
    /// are checked against the file again.
    batch: AtomicU64,
}

/// One ignore file's rules as last read, with what the file was then and the batch that last
/// made sure it still is.
#[derive(Debug)]
struct Cached {
    rules: Arc<Rules>,
    stamp: Stamp,
    checked: u64,
}

impl Cached {
    /// `file`'s rules, relative to `base`, read now (what the file is taken first: a change
    /// while it is read shows at the next look).
    fn read(roots: &[PathBuf], base: &Path, file: &Path, batch: u64) -> Self {
        let stamp = Stamp::of(file);
        Self { rules: Arc::new(load(roots, base, file)), stamp, checked: batch }
    }

    /// The rules, read again first when the file has changed since (looked at once a batch;
    /// `file` is only named then).
    fn fresh(
        &mut self,
        roots: &[PathBuf],
        base: &Path,
        file: impl FnOnce() -> PathBuf,
        batch: u64,
    ) -> Arc<Rules> {
        if self.checked != batch {
            let file = file();
            let now = Stamp::of(&file);
            if now != self.stamp {
                *self = Self::read(roots, base, &file, batch);
            }
            self.checked = batch;
        }
        self.rules.clone()
    }
}

/// `p`'s folder, unless `p` is a single name.
fn nonempty_parent(p: &Path) -> Option<&Path> {
    p.parent().filter(|f| !f.as_os_str().is_empty())
}

/// The ignore rules for the names in one folder, from [`IgnoreService::folder_rules`]: what
/// [`IgnoreService::check`] decides for a path in that folder, without looking anything up
/// again. Valid for the batch it was made in.
#[derive(Debug)]
pub struct FolderRules<'s> {
    /// The folder below the root (`None`: outside it, or above it).
    rel: Option<PathBuf>,
    /// Git's ignore files apply.
    git: bool,
    /// The folder is in a `.git` folder (and git's ignore files apply).
    in_git_dir: bool,
    /// Whether the folder or one above it is ignored.
    ignored: Result<bool, Unreadable>,
    /// The rules naming what is in it (none when it is ignored).
    rules: Option<RuleSet<'s>>,
}

impl FolderRules<'_> {
    /// Whether `abs`, a name in this folder, is ignored (as [`IgnoreService::check`]).
    pub fn check(&self, abs: &Path, is_dir: bool) -> Result<bool, Unreadable> {
        let (Some(folder_rel), Some(name)) = (&self.rel, abs.file_name()) else { return Ok(false) };
        if self.git && (self.in_git_dir || name == ".git") {
            return Ok(true);
        }
        match (&self.ignored, &self.rules) {
            (Err(e), _) => Err(e.clone()),
            (Ok(false), Some(rules)) => rules.decide(&folder_rel.join(name), abs, is_dir),
            (Ok(_), _) => Ok(true),
        }
    }
}

/// The rules that name a path itself (not its folders), in the order they apply.
#[derive(Debug)]
struct RuleSet<'s> {
    root: &'s Path,
    /// Git's exclude file (a repository's, when git's files apply).
    exclude: Option<Arc<Rules>>,
    /// The `.gitignore` files from the root down to the folder, when git's files apply.
    chain: Result<Option<Chain>, Unreadable>,
    gemini: Option<Arc<Rules>>,
}

impl RuleSet<'_> {
    /// Whether the rules ignore `rel` (`abs`): git's exclude file, then each `.gitignore` from
    /// the root down to its folder, then `.geminiignore`, the last match winning (as upstream's
    /// combined parser).
    fn decide(&self, rel: &Path, abs: &Path, is_dir: bool) -> Result<bool, Unreadable> {
        let mut ignored = false;
        if let Some(rules) = &self.exclude {
            ignored = rules.apply(ignored, rel, is_dir, || self.root.join(EXCLUDE))?;
        }
        let chain = self.chain.as_ref().map_err(Clone::clone)?;
        for (dir, rules) in chain.iter().flat_map(|c| c.iter()) {
            ignored = rules.apply(ignored, abs, is_dir, || dir.join(".gitignore"))?;
        }
        if let Some(rules) = &self.gemini {
            ignored = rules.apply(ignored, rel, is_dir, || self.root.join(GEMINI_IGNORE))?;
        }
        Ok(ignored)
    }
}

/// Folders whose verdict a batch remembers, at most (past it the memory starts again).
const FOLDER_VERDICTS: usize = 100_000;

/// Folder verdicts of one batch, per combination of the ignore options.
#[derive(Debug, Default)]
struct FolderVerdicts {
    batch: u64,
    verdicts: HashMap<PathBuf, [Option<bool>; 4]>,
    /// The `.gitignore` files that hold rules from the root down to each folder.
    chains: HashMap<PathBuf, Chain>,
}

/// Folders and their `.gitignore` rules, the root's first.
type Chain = Arc<Vec<(PathBuf, Arc<Rules>)>>;

/// What an ignore file is, told without reading it: its identity, size, times and mode, and
/// those of what it leads to when it is a link (none: there is nothing there). A file edited,
/// replaced, removed, created or swapped for a link or a pipe changes it.
#[derive(Debug, PartialEq, Eq)]
struct Stamp([Option<FileStamp>; 2]);

/// Device, inode, size, modification and change times (ns), mode.
type FileStamp = (u64, u64, u64, i128, i128, u32);

impl Stamp {
    fn of(file: &Path) -> Self {
        let own = std::fs::symlink_metadata(file).ok();
        let link = own.as_ref().is_some_and(|m| m.file_type().is_symlink());
        let target = if link { std::fs::metadata(file).ok() } else { None };
        Self([own.as_ref().map(Self::one), target.as_ref().map(Self::one)])
    }

    #[cfg(unix)]
    fn one(m: &std::fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        let time = |s: i64, ns: i64| i128::from(s) * 1_000_000_000 + i128::from(ns);
        let (mtime, ctime) = (time(m.mtime(), m.mtime_nsec()), time(m.ctime(), m.ctime_nsec()));
        (m.dev(), m.ino(), m.size(), mtime, ctime, m.mode())
    }

    #[cfg(not(unix))]
    fn one(m: &std::fs::Metadata) -> FileStamp {
        let mtime = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        (0, 0, m.len(), mtime, 0, u32::from(m.is_dir()))
    }
}

const EXCLUDE: &str = ".git/info/exclude";

impl IgnoreService {
    /// Captures git detection now, as upstream does at construction; the ignore files are
    /// read now and looked at again in each batch (see [`IgnoreService::refresh`]).
    pub fn new(root: &Path) -> Self {
        Self::within(root, &[root.to_path_buf()])
    }

    /// [`IgnoreService::new`] for one root of a workspace with `roots` (real paths).
    pub fn within(root: &Path, roots: &[PathBuf]) -> Self {
        let git_repo = root.ancestors().any(|a| a.join(".git").exists());
        let read = |file: &str| Mutex::new(Cached::read(roots, root, &root.join(file), 0));
        // Outside a repository git's exclude file is never consulted.
        let exclude = git_repo.then(|| read(EXCLUDE));
        Self {
            root: root.to_path_buf(),
            roots: roots.to_vec(),
            git_repo,
            exclude,
            gemini: read(GEMINI_IGNORE),
            per_dir: Mutex::default(),
            folders: Mutex::default(),
            batch: AtomicU64::new(0),
        }
    }

    /// Starts a batch of calls: each ignore file is looked at again (one `stat`) the first time
    /// the batch needs it, and read again if it changed, so that a long-running server applies
    /// a rule the user added (or stops applying one taken away) from the next batch on.
    pub fn refresh(&self) {
        self.batch.fetch_add(1, Ordering::Relaxed);
    }

    /// The rules of the root's own `name` (git's exclude file or `.geminiignore`), fresh.
    fn root_rules(&self, slot: &Mutex<Cached>, name: &str) -> Arc<Rules> {
        let batch = self.batch.load(Ordering::Relaxed);
        slot.locked().fresh(&self.roots, &self.root, || self.root.join(name), batch)
    }

    /// The root the rules belong to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the root is inside a git repository.
    pub fn is_git_repo(&self) -> bool {
        self.git_repo
    }

    /// Whether `abs` (under the root) is ignored; paths outside the root never are. An ignore
    /// file on the way that may not be read is the error: the caller leaves the path out and
    /// says why.
    ///
    /// As git decides: a path inside an ignored folder is ignored, whatever a later rule says
    /// (`build/` then `!build/keep.txt` leaves `keep.txt` hidden, since git never looks inside
    /// `build`); so each folder on the way is judged first, from the top.
    pub fn check(&self, abs: &Path, is_dir: bool, opts: IgnoreOptions) -> Result<bool, Unreadable> {
        match abs.parent() {
            Some(folder) => self.folder_rules(folder, opts).check(abs, is_dir),
            None => Ok(false),
        }
    }

    /// What decides the names in the folder `folder_abs`, worked out once for all of them (a
    /// walk judging a folder's names one [`IgnoreService::check`] at a time looked its
    /// folders and rules up again for each).
    pub fn folder_rules(&self, folder_abs: &Path, opts: IgnoreOptions) -> FolderRules<'_> {
        let git = self.git_repo && opts.respect_git_ignore;
        let mut f =
            FolderRules { rel: None, git, in_git_dir: false, ignored: Ok(false), rules: None };
        // Paths outside the root (and the root itself) are never ignored.
        let Some(rel) = super::paths::below(folder_abs, &self.root) else { return f };
        f.in_git_dir = git && rel.components().any(|c| c.as_os_str() == ".git");
        if !rel.as_os_str().is_empty() {
            f.ignored = self.under_ignored(rel, folder_abs, opts);
        }
        // Inside an ignored folder the rules are never asked (nor its ignore files read).
        if matches!(f.ignored, Ok(false)) {
            f.rules = Some(self.rule_set(folder_abs, rel.iter().count() + 1, opts));
        }
        f.rel = Some(rel.to_path_buf());
        f
    }

    /// Whether the folder `rel` (`abs`) or one above it is ignored, remembered for the batch:
    /// every file below a folder asked again (a file 14 folders deep cost some hundred rule
    /// lookups; issue 37). The folders not yet known are worked out from the top down.
    fn under_ignored(
        &self,
        rel: &Path,
        abs: &Path,
        opts: IgnoreOptions,
    ) -> Result<bool, Unreadable> {
        let batch = self.batch.load(Ordering::Relaxed);
        let slot =
            usize::from(opts.respect_git_ignore) * 2 + usize::from(opts.respect_gemini_ignore);
        let known = |abs: &Path| self.remembered(batch).verdicts.get(abs).and_then(|k| k[slot]);
        let mut unknown = Vec::new();
        let (mut r, mut a) = (rel, abs);
        let mut ignored = false;
        loop {
            if let Some(k) = known(a) {
                ignored = k;
                break;
            }
            unknown.push((r, a));
            match (nonempty_parent(r), a.parent()) {
                (Some(pr), Some(pa)) => (r, a) = (pr, pa),
                _ => break,
            }
        }
        for (r, a) in unknown.into_iter().rev() {
            if !ignored {
                ignored = self.rules_ignore(r, a, true, opts)?;
            }
            let mut v = self.remembered(batch);
            if v.batch == batch {
                if v.verdicts.len() >= FOLDER_VERDICTS {
                    v.verdicts.clear();
                }
                v.verdicts.entry(a.to_path_buf()).or_default()[slot] = Some(ignored);
            }
        }
        Ok(ignored)
    }

    /// Whether the rules that name `rel` itself (not its folders) ignore it: git's exclude
    /// file, then each `.gitignore` from the root down to its folder, then `.geminiignore`, the
    /// last match winning (as upstream's combined parser).
    fn rules_ignore(
        &self,
        rel: &Path,
        abs: &Path,
        is_dir: bool,
        opts: IgnoreOptions,
    ) -> Result<bool, Unreadable> {
        let Some(folder) = abs.parent() else { return Ok(false) };
        self.rule_set(folder, rel.iter().count(), opts).decide(rel, abs, is_dir)
    }

    /// The rules for the names in `folder`, `depth` folders below the root counting the
    /// names' own level.
    fn rule_set(&self, folder: &Path, depth: usize, opts: IgnoreOptions) -> RuleSet<'_> {
        let git = self.git_repo && opts.respect_git_ignore;
        RuleSet {
            root: &self.root,
            exclude: (git)
                .then(|| self.exclude.as_ref().map(|slot| self.root_rules(slot, EXCLUDE)))
                .flatten(),
            // The folders from the root down to the names' own, their rules remembered
            // together for the batch.
            chain: if git { self.chain(folder, depth).map(Some) } else { Ok(None) },
            gemini: opts
                .respect_gemini_ignore
                .then(|| self.root_rules(&self.gemini, GEMINI_IGNORE)),
        }
    }

    /// The `.gitignore` rules of the `depth` folders from `dir` up, the root's first. The
    /// rules on one path together have a ceiling (1000 nested folders of 200 rules each cost
    /// 1.3 GB, issue 35).
    fn chain(&self, dir: &Path, depth: usize) -> Result<Chain, Unreadable> {
        let batch = self.batch.load(Ordering::Relaxed);
        if let Some(c) = self.remembered(batch).chains.get(dir) {
            return Ok(c.clone());
        }
        let folders: Vec<&Path> = dir.ancestors().take(depth).collect();
        let mut chain = Vec::with_capacity(folders.len());
        let mut on_path = 0usize;
        for d in folders.into_iter().rev() {
            let rules = self.gitignore_in(d);
            on_path += rules.count();
            if on_path > crate::limits::IGNORE_RULES_ON_PATH {
                return Err(Unreadable {
                    file: d.join(".gitignore"),
                    why: format!(
                        "is not read: with the .gitignore files of the folders above it, it makes more than {} rules, the limit",
                        crate::limits::IGNORE_RULES_ON_PATH
                    ),
                });
            }
            if !matches!(*rules, Rules::None) {
                chain.push((d.to_path_buf(), rules));
            }
        }
        let chain: Chain = Arc::new(chain);
        let mut v = self.remembered(batch);
        if v.batch == batch {
            if v.chains.len() >= FOLDER_VERDICTS {
                v.chains.clear();
            }
            v.chains.insert(dir.to_path_buf(), chain.clone());
        }
        Ok(chain)
    }

    /// What this service remembers, forgotten when a newer batch than the one it was worked
    /// out in asks. A call of an older batch still running reads what a newer one worked out
    /// but does not store (its rules may be stale).
    fn remembered(&self, batch: u64) -> std::sync::MutexGuard<'_, FolderVerdicts> {
        let mut v = self.folders.locked();
        if v.batch < batch {
            v.verdicts.clear();
            v.chains.clear();
            v.batch = batch;
        }
        v
    }

    fn gitignore_in(&self, dir: &Path) -> Arc<Rules> {
        let batch = self.batch.load(Ordering::Relaxed);
        let file = || dir.join(".gitignore");
        let mut cache = self.per_dir.locked();
        let (folders, held) = &mut *cache;
        match folders.get_mut(dir) {
            Some(cached) => cached.fresh(&self.roots, dir, file, batch),
            None => {
                let cached = Cached::read(&self.roots, dir, &file(), batch);
                let rules = cached.rules.clone();
                // A cache of every folder ever looked at grows with the repository: past its
                // ceiling it starts again (the files are read again as they are needed).
                *held += rules.count();
                if *held > crate::limits::IGNORE_RULES_CACHED {
                    folders.clear();
                    *held = rules.count();
                }
                folders.insert(dir.to_path_buf(), cached);
                rules
            }
        }
    }
}

fn apply(current: bool, m: Match<&ignore::gitignore::Glob>) -> bool {
    match m {
        Match::None => current,
        Match::Ignore(_) => true,
        Match::Whitelist(_) => false,
    }
}

/// The rules of `file`, relative to `base` (see [`read_ignore_file`]), a BOM at the start
/// dropped. Every line is read (the `ignore` crate stops at the first that is not UTF-8,
/// dropping every rule after it: a Latin-1 comment would un-hide what the rest names); one
/// that is not UTF-8 is widened ([`rule::widen`]), since git matches its bytes.
fn load(roots: &[PathBuf], base: &Path, file: &Path) -> Rules {
    let text = match read_ignore_file(roots, file) {
        Ok(Some(text)) => text,
        Ok(None) => return Rules::None,
        Err(why) => return Rules::Unreadable(why),
    };
    let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&text);
    let gemini = file.file_name().is_some_and(|n| n == GEMINI_IGNORE);
    let mut b = GitignoreBuilder::new(base);
    for (i, line) in text.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let widened;
        let line = match std::str::from_utf8(line) {
            Ok(line) => line,
            Err(_) => {
                let Some(wide) = rule::widen(line) else { continue };
                tracing::warn!(
                    "ignore file {}: line {} is not UTF-8; applied as {wide:?}, which hides at least what it does",
                    file.display(),
                    i + 1
                );
                widened = wide;
                &widened
            }
        };
        add_rule(&mut b, file, i + 1, line);
        if gemini {
            for reading in rule::upstream_readings(line) {
                add_rule(&mut b, file, i + 1, &reading);
            }
        }
    }
    match b.build() {
        Ok(g) if !g.is_empty() => Rules::Read(g),
        Ok(_) => Rules::None,
        Err(e) => Rules::Unreadable(format!("cannot be used ({e})")),
    }
}

/// Adds `line` (line `number` of `file`) to `b`, spelled for the matcher. A rule the matcher
/// cannot take must still hide what it names (git would apply it): its segments with anything
/// but plain characters and `*`, `?` widened to `*`. A negation is passed over (un-hiding less).
fn add_rule(b: &mut GitignoreBuilder, file: &Path, number: usize, line: &str) {
    let source = Some(file.to_path_buf());
    if let Err(err) = b.add_line(source.clone(), &rule::for_matcher(line)) {
        let coarse = rule::coarsen(line);
        let applied = !line.starts_with('!') && b.add_line(source, &coarse).is_ok();
        let how = if applied { format!("applied as {coarse:?}") } else { "passed over".into() };
        tracing::warn!("ignore file {}: line {number}: {err}; {how}", file.display());
    }
}

#[cfg(test)]
mod tests;
