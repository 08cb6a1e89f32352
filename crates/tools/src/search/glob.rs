//! `glob`: files whose paths match a glob pattern, recent ones first.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use toolbelt_core::sync::LockExt;
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::schema::rename_params;
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};
use toolbelt_core::workspace::walk::{Entry, Kind as WalkKind, Listed, Step, Visitor};
use toolbelt_core::workspace::{
    Access, FolderRules, IgnoreOptions, OpenError, PathError, Unreadable, Workspace, paths,
};

use super::GLOB_EXCLUDED_DIRS;
use super::unread::Verdict;
use crate::fs::shorten_path;

pub const NAME: &str = "glob";
const RECENT: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug, Deserialize)]
struct Params {
    pattern: String,
    dir_path: Option<String>,
    #[serde(default)]
    case_sensitive: bool,
    respect_git_ignore: Option<bool>,
    respect_gemini_ignore: Option<bool>,
}

pub struct Glob;

impl Tool for Glob {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "FindFiles"
    }
    fn kind(&self) -> Kind {
        Kind::Search
    }
    fn costly(&self) -> bool {
        true
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::Argument("pattern"), enables_auto_edit: false }
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/glob.md").into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The glob to match, e.g. '**/*.py' or 'docs/*.md'."},
                    "dir_path": {"type": "string", "description": "Optional: the folder to search in. Default: every workspace root."},
                    "case_sensitive": {"type": "boolean", "description": "Optional: whether letter case must match. Default false."},
                    "respect_git_ignore": {"type": "boolean", "description": "Optional: honour .gitignore (git repositories only). Default true."},
                    "respect_gemini_ignore": {"type": "boolean", "description": "Optional: honour .geminiignore. Default true."}
                },
                "required": ["pattern"]
            }),
        }
    }

    fn normalize_args(&self, args: &mut Value) {
        rename_params(args, &[("path", "dir_path")]);
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        let ws = &env.workspace;
        let dirs: Vec<PathBuf> = match &p.dir_path {
            Some(d) => {
                let r = ws.resolve_checked(d, Access::Read).map_err(|e| e.to_string())?;
                match std::fs::metadata(&r.real) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Err(format!("Search path does not exist {}", r.real.display()));
                    }
                    Err(e) => return Err(format!("Error accessing search path: {e}")),
                    Ok(m) if !m.is_dir() => {
                        return Err(format!(
                            "Search path is not a directory: {}",
                            r.real.display()
                        ));
                    }
                    Ok(_) => {}
                }
                vec![r.real]
            }
            None => ws.roots().iter().map(|r| r.real.clone()).collect(),
        };
        if p.pattern.trim().is_empty() {
            return Err("The 'pattern' parameter cannot be empty.".into());
        }
        toolbelt_core::limits::check_globs([p.pattern.as_str()])?;
        let description = match &p.dir_path {
            Some(d) => format!(
                "'{}' within {}",
                p.pattern,
                shorten_path(&ws.relative(&paths::lexical_resolve(ws.primary(), Path::new(d))))
            ),
            None => format!("'{}'", p.pattern),
        };
        Ok(Box::new(GlobCall {
            dirs,
            description,
            opts: ws.ignore_options(p.respect_git_ignore, p.respect_gemini_ignore),
            workspace: env.workspace.clone(),
            pattern: p.pattern,
            case_sensitive: p.case_sensitive,
        }))
    }
}

struct GlobCall {
    dirs: Vec<PathBuf>,
    description: String,
    opts: IgnoreOptions,
    workspace: Arc<Workspace>,
    pattern: String,
    case_sensitive: bool,
}

#[async_trait]
impl Invocation for GlobCall {
    fn description(&self) -> String {
        self.description.clone()
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let job = Job {
            dirs: self.dirs.clone(),
            opts: self.opts,
            workspace: self.workspace.clone(),
            pattern: self.pattern.clone(),
            case_sensitive: self.case_sensitive,
            cancel: ctx.cancel.clone(),
        };
        match ctx.spawn_blocking(move || job.run()).await {
            Ok(r) => r,
            Err(e) => error(&e.to_string()),
        }
    }
}

fn error(msg: &str) -> ToolResult {
    ToolResult::error(
        ErrorType::GlobExecutionError,
        format!("Error during glob search operation: {msg}"),
        format!("Error during glob search operation: {msg}"),
        "Error: An unexpected error occurred.",
    )
}

struct Job {
    dirs: Vec<PathBuf>,
    opts: IgnoreOptions,
    workspace: Arc<Workspace>,
    pattern: String,
    case_sensitive: bool,
    cancel: CancellationToken,
}

/// An error message cut to a readable length (a compile error quotes the whole pattern).
fn shorten(msg: &str) -> String {
    const MAX: usize = 300;
    match msg.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}... ({} characters)", &msg[..i], msg.chars().count()),
        None => msg.to_string(),
    }
}

impl Job {
    /// The pattern as a one-glob set: a set reports a pattern too large to compile as an
    /// error, where a single matcher panics.
    fn matcher(&self, dir: &Path) -> Result<GlobSet, String> {
        // A pattern naming an existing path is taken literally (so `[id]/page.tsx` works): a
        // path the workspace may read, asked through its file layer, so that the answer says
        // nothing about what lies outside.
        let ws = &self.workspace;
        let literal = ws
            .resolve_checked(&dir.join(&self.pattern).to_string_lossy(), Access::Read)
            .is_ok_and(|named| ws.metadata(&named).is_ok());
        let pat = if literal { globset::escape(&self.pattern) } else { self.pattern.clone() };
        let pat = pat.strip_prefix("./").unwrap_or(&pat).to_string();
        GlobBuilder::new(&pat)
            .case_insensitive(!self.case_sensitive)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .and_then(|g| GlobSetBuilder::new().add(g).build())
            .map_err(|e| {
                format!("invalid glob pattern {:?}: {}", self.pattern, shorten(&e.to_string()))
            })
    }

    fn run(self) -> ToolResult {
        let tally = Tally::default();
        // "Recent" is judged as of the call's start (each thread keeps its first hits in the
        // answer's order as it goes).
        let now = SystemTime::now();
        for dir in &self.dirs {
            let matcher = match self.matcher(dir) {
                Ok(m) => m,
                Err(e) => return error(&e),
            };
            let absolute = Path::new(&self.pattern).is_absolute();
            let shared = Shared { job: &self, dir, matcher: &matcher, absolute, now };
            self.workspace.walk(dir, super::walker_threads(), || Seeker {
                shared: &shared,
                tally: &tally,
                cancel: super::CancelCheck::new(&self.cancel),
                rules: None,
                found: Vec::new(),
            });
        }
        toolbelt_core::timings::mark("glob: walk");
        let Tally { found, ignored, hidden, unread, dropped } = tally;
        let mut files = found.into_value();
        let ignored = ignored.into_inner();
        let hidden = match hidden.into_inner() {
            0 => String::new(),
            n => format!("\n\n({n} hidden by sensitive-path rules; see allow_sensitive_paths)"),
        };
        let place = if self.dirs.len() == 1 {
            format!("within {}", self.dirs[0].display())
        } else {
            String::new()
        };
        let mut note = unread.note();
        if self.cancel.is_cancelled() {
            note.push_str("\n\n(The search was cut short: it was cancelled or ran out of time. These results are partial.)");
        }
        if files.is_empty() {
            let place = if self.dirs.len() == 1 {
                place
            } else {
                format!("within {} workspace directories", self.dirs.len())
            };
            let ign = if ignored > 0 {
                format!(" ({ignored} files were ignored)")
            } else {
                String::new()
            };
            return ToolResult::text(
                format!(
                    "No files found matching pattern \"{}\" {place}{ign}{hidden}{note}",
                    self.pattern
                ),
                "No files found",
            );
        }
        let total = files.len() + dropped.into_inner();
        keep_first(&mut files, now, LISTED_FILES);
        sort_entries(&mut files, now);
        toolbelt_core::timings::mark("glob: sort");
        let place = if self.dirs.len() == 1 {
            place
        } else {
            format!("across {} workspace directories", self.dirs.len())
        };
        let ign = if ignored > 0 {
            format!(" ({ignored} additional files were ignored)")
        } else {
            String::new()
        };
        // The first LISTED_FILES only, written as they are: a million hits took 431 MB for an
        // answer that shows some 15,000 (issue 35).
        let mut text = format!(
            "Found {} file(s) matching \"{}\" {place}{ign}, sorted by modification time (newest first):",
            total, self.pattern
        );
        for (p, _) in files.iter().take(LISTED_FILES) {
            text.push('\n');
            text.push_str(&p.display().to_string());
        }
        if total > files.len() {
            text.push_str(&format!(
                "\n\n({} more files are not listed; narrow the pattern or the folder)",
                total - files.len()
            ));
        }
        text.push_str(&hidden);
        text.push_str(&note);
        toolbelt_core::timings::mark("glob: format");
        ToolResult::text(text, format!("Found {total} matching file(s)"))
    }
}

/// Files one answer lists at most (what a million characters of answer can hold).
const LISTED_FILES: usize = 20_000;

/// Keeps the first `n` of `files` in the answer's order (unordered), found without ordering
/// them all (collation keys for every hit were most of a million-hit glob's memory).
fn keep_first(files: &mut Vec<(PathBuf, Option<SystemTime>)>, now: SystemTime, n: usize) {
    if files.len() <= n {
        return;
    }
    let recent = |t: &Option<SystemTime>| recent(now, *t);
    let mut collator = crate::collate::collator();
    files.select_nth_unstable_by(n - 1, |a, b| match (recent(&a.1), recent(&b.1)) {
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (true, true) => {
            b.1.cmp(&a.1)
                .then_with(|| crate::collate::compare(&mut collator, path_text(a), path_text(b)))
        }
        (false, false) => crate::collate::compare(&mut collator, path_text(a), path_text(b)),
    });
    files.truncate(n);
}

fn path_text(f: &(PathBuf, Option<SystemTime>)) -> &str {
    f.0.to_str().unwrap_or("\u{fffd}")
}

/// Whether a file changed at `t` counts as recent (the last 24 hours).
fn recent(now: SystemTime, t: Option<SystemTime>) -> bool {
    t.and_then(|t| now.duration_since(t).ok()).is_some_and(|age| age < RECENT)
}

/// Files changed in the last 24 hours first, newest first; the rest by path in collation order.
fn sort_entries(files: &mut Vec<(PathBuf, Option<SystemTime>)>, now: SystemTime) {
    let (mut new, mut old): (Vec<_>, Vec<_>) = files.drain(..).partition(|f| recent(now, f.1));
    // By time first, then each run of one time by path: files written together share their
    // time (the clock of the file system ticks every few milliseconds), and comparing paths
    // only within a run was a quarter of the comparisons (1.1 ms of a 2,800-file answer).
    new.sort_unstable_by_key(|f| std::cmp::Reverse(f.1));
    for run in new.chunk_by_mut(|a, b| a.1 == b.1) {
        crate::collate::sort_by_text(run, path_text);
    }
    crate::collate::sort_by_text(&mut old, path_text);
    files.extend(new);
    files.extend(old);
}

/// What the threads of one folder's walk share: the question.
struct Shared<'a> {
    job: &'a Job,
    /// The folder walked.
    dir: &'a Path,
    matcher: &'a GlobSet,
    /// Whether the pattern is matched against whole paths (else against paths below `dir`).
    absolute: bool,
    /// When the call started (what counts as recent).
    now: SystemTime,
}

/// What the walker threads find, over every folder walked: the answer.
#[derive(Default)]
struct Tally {
    found: Mutex<Vec<(PathBuf, Option<SystemTime>)>>,
    ignored: AtomicUsize,
    /// Left out by the sensitive-path rules.
    hidden: AtomicUsize,
    unread: super::unread::Unread,
    /// Hits counted but not kept: past the first [`LISTED_FILES`] in the answer's order.
    dropped: AtomicUsize,
}

/// One walker thread.
struct Seeker<'a> {
    shared: &'a Shared<'a>,
    tally: &'a Tally,
    cancel: super::CancelCheck<'a>,
    /// The ignore rules of the folder whose names are being visited (a folder's names come
    /// one after another), and that folder.
    rules: Option<(PathBuf, FolderRules<'a>)>,
    /// What this thread found, added to the tally when it ends.
    found: Vec<(PathBuf, Option<SystemTime>)>,
}

impl Drop for Seeker<'_> {
    fn drop(&mut self) {
        self.tally.found.locked().append(&mut self.found);
    }
}

impl Seeker<'_> {
    /// Whether the ignore files hide `path`, a file.
    fn ignored(&mut self, path: &Path) -> Result<bool, Unreadable> {
        let folder = path.parent().unwrap_or(path);
        let job = self.shared.job;
        let rules = match &self.rules {
            Some((f, rules)) if f == folder => rules,
            _ => {
                let rules = job.workspace.ignore().folder_rules(folder, job.opts);
                &self.rules.insert((folder.to_path_buf(), rules)).1
            }
        };
        rules.check(path, false)
    }
}

impl Visitor for Seeker<'_> {
    fn visit(&mut self, folder: &Listed<'_>, entry: &Entry<'_>) -> Step {
        if self.cancel.cancelled() {
            return Step::Quit;
        }
        let path = entry.path;
        match entry.kind {
            WalkKind::Folder => {
                let excluded =
                    GLOB_EXCLUDED_DIRS.iter().any(|x| path.file_name() == Some(x.as_ref()));
                return if excluded { Step::Skip } else { Step::Go };
            }
            WalkKind::File => {}
            // Regular files only: symlinks are dropped as upstream's realpath check does.
            WalkKind::Symlink | WalkKind::Other => return Step::Go,
        }
        let Shared { dir, matcher, absolute, .. } = *self.shared;
        let hit = if absolute {
            matcher.is_match(path)
        } else {
            paths::below(path, dir).is_some_and(|rel| matcher.is_match(rel))
        };
        if !hit {
            return Step::Go;
        }
        let checked = self.ignored(path);
        let c = self.tally;
        match c.unread.verdict(checked) {
            Verdict::Kept => {}
            Verdict::Ignored => {
                c.ignored.fetch_add(1, Ordering::Relaxed);
                return Step::Go;
            }
            Verdict::LeftOut => return Step::Go,
        }
        // The file layer's rules: names of sensitive files are left out (counted). The name
        // was listed through a handle on its folder: its metadata comes through the same one.
        let mtime = match folder.confirm(entry) {
            Ok(mtime) => mtime,
            Err(OpenError::Path(PathError::Sensitive { .. })) => {
                c.hidden.fetch_add(1, Ordering::Relaxed);
                return Step::Go;
            }
            Err(e) => {
                c.unread.open(&e);
                return Step::Go;
            }
        };
        self.found.push((path.to_path_buf(), mtime));
        // Only the first hits in the answer's order are kept; the rest are counted (a root of
        // `/` made glob keep five million paths, 596 MB; issue 35).
        if self.found.len() >= 2 * LISTED_FILES {
            let before = self.found.len();
            keep_first(&mut self.found, self.shared.now, LISTED_FILES);
            c.dropped.fetch_add(before - self.found.len(), Ordering::Relaxed);
        }
        Step::Go
    }

    fn failed(&mut self, _path: &Path, error: OpenError) {
        self.tally.unread.open(&error);
    }

    fn changed(&mut self, _path: &Path) {
        self.tally.unread.changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_first_then_by_path() {
        let now = SystemTime::now();
        let old = now - Duration::from_secs(3 * 24 * 3600);
        let mut v = vec![
            (PathBuf::from("/r/b"), Some(old)),
            (PathBuf::from("/r/A"), Some(old)),
            (PathBuf::from("/r/new1"), Some(now - Duration::from_secs(60))),
            (PathBuf::from("/r/new2"), Some(now - Duration::from_secs(10))),
            (PathBuf::from("/r/none"), None),
        ];
        sort_entries(&mut v, now);
        let names: Vec<_> = v.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(names, ["/r/new2", "/r/new1", "/r/A", "/r/b", "/r/none"]);
    }
}
