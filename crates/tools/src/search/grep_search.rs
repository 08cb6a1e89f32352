//! `grep_search` (legacy name `search_file_content`): regex search over file contents, in
//! process, with ripgrep's own crates, in parallel across files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use toolbelt_core::sync::LockExt;
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};

use async_trait::async_trait;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::schema::rename_params;
use toolbelt_core::tool::{
    Declaration, ExecContext, Invocation, Location, ModelFamily, Tool, ToolEnv,
};
use toolbelt_core::workspace::{Access, IgnoreOptions, Workspace, paths};

use super::unread::Verdict;
use super::{GrepFile, GrepLine, GrepReport, format_grep, limit_files};
use crate::fs::shorten_path;

pub const NAME: &str = "grep_search";
pub const DEFAULT_TOTAL_MAX_MATCHES: usize = 100;
/// A single line longer than this makes the file unsearchable rather than exhausting memory.
const HEAP_LIMIT: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone, Deserialize)]
struct Params {
    pattern: String,
    dir_path: Option<String>,
    include_pattern: Option<String>,
    exclude_pattern: Option<String>,
    #[serde(default)]
    names_only: bool,
    max_matches_per_file: Option<u64>,
    total_max_matches: Option<u64>,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(default)]
    fixed_strings: bool,
    context: Option<u64>,
    after: Option<u64>,
    before: Option<u64>,
    #[serde(default)]
    no_ignore: bool,
}

pub struct GrepSearch;

impl Tool for GrepSearch {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "SearchText"
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

    fn declaration(&self, family: ModelFamily) -> Declaration {
        let description = match family {
            ModelFamily::Legacy => include_str!("descriptions/grep_search.legacy.md"),
            ModelFamily::Gemini3 => include_str!("descriptions/grep_search.gemini3.md"),
        };
        Declaration {
            name: NAME.into(),
            description: description.into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The regular expression to search for (Rust regex syntax), or the literal text when 'fixed_strings' is true."},
                    "dir_path": {"type": "string", "description": "Folder (searched recursively) or single file to search, relative to the workspace root. Default: the root ('.')."},
                    "include_pattern": {"type": "string", "description": "Glob that files must match to be searched (e.g. '*.ts', 'src/**'). Default: all files."},
                    "exclude_pattern": {"type": "string", "description": "Optional: a regular expression; lines that match it are left out of the results even when they match 'pattern'."},
                    "names_only": {"type": "boolean", "description": "Optional: if true, return only the paths of files with matches, without lines or line numbers."},
                    "max_matches_per_file": {"type": "integer", "minimum": 1, "description": "Optional: at most this many matches from each file."},
                    "total_max_matches": {"type": "integer", "minimum": 1, "description": "Optional: at most this many matches in all (default 100)."},
                    "case_sensitive": {"type": "boolean", "description": "If true, letter case must match. Default: false (case-insensitive)."},
                    "fixed_strings": {"type": "boolean", "description": "If true, 'pattern' is literal text rather than a regular expression. Default: false."},
                    "context": {"type": "integer", "minimum": 0, "description": "Lines of context to show before and after each match (like grep -C). Default 0."},
                    "after": {"type": "integer", "minimum": 0, "description": "Lines of context to show after each match (like grep -A). Default 0."},
                    "before": {"type": "integer", "minimum": 0, "description": "Lines of context to show before each match (like grep -B). Default 0."},
                    "no_ignore": {"type": "boolean", "description": "If true, also search files that ignore files and the default excludes (build/, dist/, node_modules ...) would skip. Default false."}
                },
                "required": ["pattern"]
            }),
        }
    }

    /// Older versions called the folder `path` and the file filter `include`.
    fn normalize_args(&self, args: &mut Value) {
        rename_params(args, &[("path", "dir_path"), ("include", "include_pattern")]);
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        super::patterns::check(
            &p.pattern,
            p.fixed_strings,
            p.case_sensitive,
            p.exclude_pattern.as_deref(),
        )?;
        toolbelt_core::limits::check_globs(p.include_pattern.as_deref())?;
        let ws = &env.workspace;
        let search = ws
            .resolve_checked(p.dir_path.as_deref().unwrap_or("."), Access::Read)
            .map_err(|e| e.to_string())?;
        match std::fs::metadata(&search.real) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("Path does not exist: {}", search.real.display()));
            }
            Err(e) => {
                return Err(format!(
                    "Failed to access path stats for {}: {e}",
                    search.real.display()
                ));
            }
            Ok(m) if !m.is_dir() && !m.is_file() => {
                return Err(format!(
                    "Path is not a valid directory or file: {}",
                    search.real.display()
                ));
            }
            Ok(_) => {}
        }
        let rel = ws.relative(&search.real);
        let within = if rel == "." { "./".to_string() } else { shorten_path(&rel) };
        let description = format!(
            "'{}'{} within {within}",
            p.pattern,
            p.include_pattern.as_ref().map(|i| format!(" in {i}")).unwrap_or_default()
        );
        // Without a dir_path every root is searched, as upstream's search does (the first
        // root only, before; issue 19).
        let roots: Vec<PathBuf> = if p.dir_path.is_none() && ws.roots().len() > 1 {
            ws.roots().iter().map(|r| r.real.clone()).collect()
        } else {
            Vec::new()
        };
        Ok(Box::new(GrepCall {
            roots,
            search: search.real,
            description,
            opts: ws.ignore_options(None, None),
            workspace: env.workspace.clone(),
            params: p,
        }))
    }
}

struct GrepCall {
    search: PathBuf,
    description: String,
    opts: IgnoreOptions,
    workspace: Arc<Workspace>,
    params: Params,
    /// Every root, when no dir_path was given and there are several.
    roots: Vec<PathBuf>,
}

#[async_trait]
impl Invocation for GrepCall {
    fn description(&self) -> String {
        self.description.clone()
    }

    fn locations(&self) -> Vec<Location> {
        vec![Location { path: self.search.display().to_string(), line: None }]
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        // Compiled now, in the call's turn among the costly calls (see `patterns::check`).
        let p = &self.params;
        let (matcher, exclude) = match super::patterns::compile(
            &p.pattern,
            p.fixed_strings,
            p.case_sensitive,
            p.exclude_pattern.as_deref(),
        ) {
            Ok(m) => m,
            Err(refused) => return refused.answer(),
        };
        toolbelt_core::timings::mark("grep: pattern");
        let positions = toolbelt_core::limits::pattern_positions(
            &p.pattern,
            p.fixed_strings,
            !p.case_sensitive,
        )
        .unwrap_or(0);
        let single_file = self.search.is_file();
        let job = Job {
            line_cap: toolbelt_core::limits::searchable_line(positions, line_most(single_file)),
            single_file,
            search: self.search.clone(),
            opts: self.opts,
            workspace: self.workspace.clone(),
            matcher,
            exclude,
            params: self.params.clone(),
            cancel: ctx.cancel.clone(),
            roots: self.roots.clone(),
            unsearchable: Mutex::default(),
            unread: super::unread::Unread::default(),
            kept_bytes: AtomicUsize::new(0),
        };
        match ctx.spawn_blocking(move || job.run()).await {
            Ok(r) => r,
            Err(e) => ToolResult::simple_error(
                ErrorType::GrepExecutionError,
                format!("Error during grep search operation: {e}"),
            ),
        }
    }
}

struct Job {
    /// The longest line searched ([`line_most`], less for a costly pattern).
    line_cap: usize,
    search: PathBuf,
    /// Every root to search in turn (several roots, no dir_path); empty: `search` only.
    roots: Vec<PathBuf>,
    /// The search path is one file (checked once, not per searched file).
    single_file: bool,
    opts: IgnoreOptions,
    workspace: Arc<Workspace>,
    matcher: super::matcher::LineMatcher,
    exclude: Option<regex::Regex>,
    params: Params,
    cancel: CancellationToken,
    /// Files the searcher gave up on (a line over [`HEAP_LIMIT`], a read error), as shown,
    /// with why.
    unsearchable: Mutex<Vec<super::Unsearchable>>,
    /// Folders and files the walk could not read (the answer is then partial).
    unread: super::unread::Unread,
    /// The text of the lines kept so far, in bytes: past [`KEPT_LINES_BYTES`] the search stops.
    kept_bytes: AtomicUsize,
}

impl Job {
    fn run(mut self) -> ToolResult {
        let limit = self
            .params
            .total_max_matches
            .map_or(DEFAULT_TOTAL_MAX_MATCHES, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let (before, after) = context_of(&self.params);
        let dirs =
            if self.roots.is_empty() { vec![self.search.clone()] } else { self.roots.clone() };
        let mut files = Vec::new();
        let mut found = 0;
        for dir in &dirs {
            if found >= limit {
                break;
            }
            self.search = dir.clone();
            let mut more = match self.search_tree(before, after, limit - found) {
                Ok(f) => f,
                Err(msg) => {
                    let m = format!("Error during grep search operation: {msg}");
                    return ToolResult::text(m.clone(), format!("Error: {msg}"));
                }
            };
            found += more
                .iter()
                .map(|f| f.lines.iter().filter(|l| !l.is_context).count())
                .sum::<usize>();
            files.append(&mut more);
        }
        toolbelt_core::timings::mark("grep: walk and search");
        let p = &self.params;
        let mut files = limit_files(files, limit);
        let matches: usize =
            files.iter().map(|f| f.lines.iter().filter(|l| !l.is_context).count()).sum();
        let auto = !p.names_only && p.context.is_none() && p.after.is_none() && p.before.is_none();
        if auto && (1..=3).contains(&matches) && !self.cancel.is_cancelled() {
            let n = if matches == 1 { 50 } else { 15 };
            let paths: Vec<PathBuf> = files.iter().map(|f| f.absolute.clone()).collect();
            let again = paths
                .iter()
                .filter_map(|path| self.search_file(path, n, n, limit))
                .filter(|f| !f.lines.is_empty())
                .collect();
            files = limit_files(again, limit);
        }
        toolbelt_core::timings::mark("grep: context of 1-3 matches");
        let place = if dirs.len() > 1 {
            format!("across {} workspace directories", dirs.len())
        } else {
            format!("in path \"{}\"", p.dir_path.as_deref().unwrap_or("."))
        };
        let mut unsearchable = std::mem::take(&mut *self.unsearchable.locked());
        unsearchable.sort();
        unsearchable.dedup();
        let result = format_grep(
            &files,
            &GrepReport {
                pattern: &p.pattern,
                place,
                include: p.include_pattern.as_deref(),
                names_only: p.names_only,
                limit,
                cut_short: if self.cancel.is_cancelled() {
                    Some("it was cancelled or ran out of time")
                } else if self.kept_bytes.load(Ordering::Relaxed) > KEPT_LINES_BYTES {
                    Some(
                        "the lines found passed 8 MiB (far more than an answer shows); narrow the pattern or lower total_max_matches",
                    )
                } else {
                    None
                },
                unsearchable: &unsearchable,
                unread: &self.unread.note(),
            },
        );
        toolbelt_core::timings::mark("grep: format");
        result
    }

    /// Walks the search path in parallel and searches every file that passes the filters,
    /// stopping once `limit` matches are in (or on cancellation).
    fn search_tree(
        &self,
        before: usize,
        after: usize,
        limit: usize,
    ) -> Result<Vec<GrepFile>, String> {
        let p = &self.params;
        let mut walk = WalkBuilder::new(&self.search);
        walk.follow_links(false);
        // The ignore files the walker itself reads, each checked before it does.
        let ignore_files = super::ignore_files::IgnoreFiles::new(&self.workspace, self.opts);
        if p.no_ignore {
            walk.standard_filters(false).hidden(true);
        } else {
            ignore_files.configure(&mut walk, &self.search)?;
        }
        if let Some(inc) = &p.include_pattern {
            let mut ov = OverrideBuilder::new(&self.search);
            ov.add(inc).map_err(|e| format!("invalid include_pattern {inc:?}: {e}"))?;
            walk.overrides(ov.build().map_err(|e| e.to_string())?);
        }
        // The default excludes, by name below the search path: compiling them as override
        // globs and matching every path against them cost more than the rest of a small
        // search's set-up. Past the first files of a crowded folder, files are set aside by
        // name (see `QUEUED_PER_FOLDER`).
        let aside: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
        {
            let (ignore_files, aside, no_ignore) =
                (ignore_files.clone(), aside.clone(), p.no_ignore);
            walk.filter_entry(move |e| {
                if e.depth() == 0 {
                    return true;
                }
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if !no_ignore
                    && (super::excluded_by_default(e)
                        || (is_dir
                            && (ignore_files.gemini_ignores(e.path())
                                || !ignore_files.may_enter(e.path()))))
                {
                    return false;
                }
                if e.file_type().is_some_and(|t| t.is_file()) && crowded(e.path()) {
                    aside.locked().push(e.path().to_path_buf());
                    return false;
                }
                true
            });
        }
        walk.threads(super::walker_threads());
        toolbelt_core::timings::mark("grep: walker set-up");

        let found = AtomicUsize::new(0);
        let results: Mutex<Vec<GrepFile>> = Mutex::new(Vec::new());
        // `no_ignore` searches node_modules as `rg --no-ignore` does (S3): on each thread that
        // opens files, for this search only.
        let lift = || p.no_ignore.then(toolbelt_core::workspace::lift_node_modules);
        walk.build_parallel().run(|| {
            let found = &found;
            let results = &results;

            let mut searcher = self.searcher(before, after);
            let mut buf = Vec::new();
            let mut opener = super::opener::Opener::new(&self.workspace, &self.unread);
            let mut cancel = super::CancelCheck::new(&self.cancel);
            Box::new(move |entry| {
                let _lifted = lift();
                if self.stops(&mut cancel, found, limit) {
                    return WalkState::Quit;
                }
                let Some(entry) = self.unread.entry(entry) else { return WalkState::Continue };
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    let file = (&mut searcher, &mut buf, &mut opener);
                    self.visit_file(file, entry.path(), limit, found, results);
                }
                WalkState::Continue
            })
        });
        // The files set aside, searched in turn (they passed the walker's filters).
        let aside = std::mem::take(&mut *aside.locked());
        if !aside.is_empty() {
            let _lifted = lift();
            let mut searcher = self.searcher(before, after);
            let mut buf = Vec::new();
            let mut opener = super::opener::Opener::new(&self.workspace, &self.unread);
            let mut cancel = super::CancelCheck::new(&self.cancel);
            for path in aside {
                if self.stops(&mut cancel, &found, limit) {
                    break;
                }
                let file = (&mut searcher, &mut buf, &mut opener);
                self.visit_file(file, &path, limit, &found, &results);
            }
        }
        let refused = ignore_files.refused().into_iter().map(|(dir, why)| super::Unsearchable {
            shown: paths::relative_to(&dir, &self.search),
            why,
            folder: true,
        });
        self.unsearchable.locked().extend(refused);
        let mut files = results.into_value();
        files.sort_by(|a, b| a.absolute.cmp(&b.absolute));
        Ok(files)
    }

    /// Whether the search ends here: cancelled, the match limit reached, or the kept text
    /// over its budget.
    fn stops(
        &self,
        cancel: &mut super::CancelCheck<'_>,
        found: &AtomicUsize,
        limit: usize,
    ) -> bool {
        cancel.cancelled()
            || found.load(Ordering::Relaxed) >= limit
            || self.kept_bytes.load(Ordering::Relaxed) > KEPT_LINES_BYTES
    }

    /// Searches one file the walk found and keeps its matches unless the ignore service
    /// hides it.
    fn visit_file(
        &self,
        (searcher, buf, opener): (&mut Searcher, &mut Vec<u8>, &mut super::opener::Opener<'_>),
        path: &Path,
        limit: usize,
        found: &AtomicUsize,
        results: &Mutex<Vec<GrepFile>>,
    ) {
        let Some(hits) = self.search_with(searcher, buf, opener, path, limit) else { return };
        let n = hits.lines.iter().filter(|l| !l.is_context).count();
        // The walker already applied the ignore files; the shared ignore service has the last
        // word, as upstream post-filters ripgrep's results. Only files with matches are
        // checked, which keeps it off the hot path.
        let p = &self.params;
        let ignored = || {
            !self.single_file
                && !p.no_ignore
                && self.unread.verdict(self.workspace.ignore().check(path, false, self.opts))
                    != Verdict::Kept
        };
        if n > 0 && !ignored() {
            found.fetch_add(n, Ordering::Relaxed);
            results.locked().push(hits);
        }
    }

    fn searcher(&self, before: usize, after: usize) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .before_context(before)
            .after_context(after)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .heap_limit(Some(self.line_cap))
            .build()
    }

    fn search_file(
        &self,
        path: &Path,
        before: usize,
        after: usize,
        limit: usize,
    ) -> Option<GrepFile> {
        let mut s = self.searcher(before, after);
        let _lifted = self.params.no_ignore.then(toolbelt_core::workspace::lift_node_modules);
        self.search_with(
            &mut s,
            &mut Vec::new(),
            &mut super::opener::Opener::new(&self.workspace, &self.unread),
            path,
            limit,
        )
    }

    /// Searches the file at `path`; `buf` holds a small file whole (kept for the next). A file
    /// gives at most `limit` matches (the answer shows no more in all): every line of a 20 MB
    /// file matching was kept, 745 MB for one call (issue 35).
    fn search_with(
        &self,
        searcher: &mut Searcher,
        buf: &mut Vec<u8>,
        opener: &mut super::opener::Opener<'_>,
        path: &Path,
        limit: usize,
    ) -> Option<GrepFile> {
        let per_file =
            self.params.max_matches_per_file.map(|m| usize::try_from(m).unwrap_or(usize::MAX));
        let max = Some(per_file.map_or(limit, |m| m.min(limit)));
        let after = u64::try_from(searcher.after_context()).unwrap_or(u64::MAX);
        let mut sink = Collect {
            entries: Vec::new(),
            matches: 0,
            max,
            after,
            last_match: 0,
            exclude: self.exclude.as_ref(),
            cancel: &self.cancel,
            kept_bytes: &self.kept_bytes,
        };
        // Through the workspace's file layer: beneath a root, sensitive files refused.
        let (file, size) = opener.open(path)?;
        let searched = match size.filter(|&n| n <= super::whole::MAX) {
            Some(size) => {
                super::whole::search(searcher, &self.matcher, &file, size, buf, &mut sink)
            }
            // Read through the call's token: a search with no match never reaches the sink,
            // so a cancelled one would otherwise read the file to its end.
            None => {
                let reader = reader::Cancellable { file: &file, cancel: &self.cancel };
                searcher.search_reader(&self.matcher, reader, &mut sink)
            }
        };
        // Named only when there is something to say about it (most files searched have no
        // match).
        if searched.is_ok() && sink.entries.is_empty() {
            return None;
        }
        let file_path = if self.single_file {
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        } else if let Some(root) = self.roots.iter().find(|r| path.starts_with(r)) {
            // Several roots: the path starts with its root's folder name.
            let name = root.file_name().map(|n| n.to_string_lossy().into_owned());
            format!("{}/{}", name.unwrap_or_default(), paths::relative_to(path, root))
        } else {
            paths::relative_to(path, &self.search)
        };
        if let Err(e) = searched {
            let why = reader::why_unsearchable(
                &e.to_string(),
                (self.line_cap, line_most(self.single_file), HEAP_LIMIT),
                self.single_file,
            );
            let unsearchable = super::Unsearchable { shown: file_path, why, folder: false };
            self.unsearchable.locked().push(unsearchable);
            return None;
        }
        Some(GrepFile { file_path, absolute: path.to_path_buf(), lines: sink.entries })
    }
}

/// The longest line a simple pattern searches: [`HEAP_LIMIT`] in a single file; in a tree every
/// search thread holds a line of its own, so a quarter of it.
fn line_most(single_file: bool) -> usize {
    if single_file { HEAP_LIMIT } else { HEAP_LIMIT / 4 }
}

/// ripgrep's rule: -A/-B win over -C for their side.
fn context_of(p: &Params) -> (usize, usize) {
    let c = p.context.unwrap_or(0);
    let to = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    (to(p.before.unwrap_or(c)), to(p.after.unwrap_or(c)))
}

mod collect;
mod crowd;
mod reader;
use collect::{Collect, KEPT_LINES_BYTES};
use crowd::crowded;
