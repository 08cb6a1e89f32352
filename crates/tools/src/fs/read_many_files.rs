//! `read_many_files`: the contents of every file matching some globs, one after another.

use crate::search::unread::Unread;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use toolbelt_core::sync::LockExt as _;
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::Kind;
use toolbelt_core::result::{Content, ErrorType, ToolResult};
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};
use toolbelt_core::workspace::{IgnoreOptions, Workspace};

use super::file_type;

mod answer;
mod batches;
mod each_file;
mod finder;
use finder::Finder;
mod patterns;

use patterns::glob_set;

use answer::{Answer, fits, left_out_notice};
use each_file::{Checked, Read};

pub const NAME: &str = "read_many_files";

/// Excluded unless `useDefaultExcludes` is false (upstream's list).
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "**/node_modules/**",
    "**/.git/**",
    "**/bower_components/**",
    "**/.svn/**",
    "**/.hg/**",
    "**/.vscode/**",
    "**/.idea/**",
    "**/dist/**",
    "**/build/**",
    "**/coverage/**",
    "**/__pycache__/**",
    "**/*.bin",
    "**/*.exe",
    "**/*.dll",
    "**/*.so",
    "**/*.dylib",
    "**/*.class",
    "**/*.jar",
    "**/*.war",
    "**/*.zip",
    "**/*.tar",
    "**/*.gz",
    "**/*.bz2",
    "**/*.rar",
    "**/*.7z",
    "**/*.pak",
    "**/*.rpa",
    "**/*.doc",
    "**/*.docx",
    "**/*.xls",
    "**/*.xlsx",
    "**/*.ppt",
    "**/*.pptx",
    "**/*.odt",
    "**/*.ods",
    "**/*.odp",
    "**/*.pyc",
    "**/*.pyo",
    "**/.DS_Store",
    "**/.env",
    "**/GEMINI.md",
];

/// Files one call considers at most: a folder of 1,000,000 empty files took 1.8 GB (issue
/// 35); what the model can be shown (a million characters) holds far fewer.
const READ_MANY_FILES: usize = 10_000;

const NOTHING: &str = "No files matching the criteria were found or all were skipped.";
const END: &str = "\n--- End of content ---";
const TRUNCATION_WARNING: &str = "[WARNING: This file was truncated. To view the full content, use the 'read_file' tool on this specific file.]\n\n";
const ASSET_SKIP: &str =
    "asset file (image/pdf/audio) was not explicitly requested by name or extension";

#[derive(Debug, Default, Deserialize)]
struct Filtering {
    respect_git_ignore: Option<bool>,
    respect_gemini_ignore: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params {
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    /// Older versions (compat T5): a line range applied to every file, and line numbers.
    #[serde(rename = "start_line")]
    start_line: Option<u64>,
    #[serde(rename = "end_line")]
    end_line: Option<u64>,
    #[serde(default, rename = "enable_line_numbers")]
    enable_line_numbers: bool,
    use_default_excludes: Option<bool>,
    #[serde(rename = "file_filtering_options")]
    file_filtering_options: Option<Filtering>,
}

pub struct ReadManyFiles;

impl Tool for ReadManyFiles {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "ReadManyFiles"
    }
    fn kind(&self) -> Kind {
        Kind::Read
    }
    fn costly(&self) -> bool {
        true
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::Argument("include"), enables_auto_edit: false }
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/read_many_files.md").into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "include": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "description": "Glob patterns or paths of the files to read, e.g. [\"src/**/*.ts\"] or [\"README.md\", \"docs/**\"]."},
                    "exclude": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Optional: glob patterns of files or folders to leave out, on top of the default excludes, e.g. [\"**/*.log\", \"temp/**\"].", "default": []},
                    "recursive": {"type": "boolean", "description": "Optional: kept for compatibility; recursion is decided by '**' in the patterns.", "default": true},
                    "useDefaultExcludes": {"type": "boolean", "description": "Optional: apply the default excludes (node_modules, .git, build output, archives and other binaries). Default true.", "default": true},
                    "file_filtering_options": {
                        "type": "object",
                        "description": "Optional: whether .gitignore and .geminiignore hide files.",
                        "properties": {
                            "respect_git_ignore": {"type": "boolean", "description": "Optional: honour .gitignore (git repositories only). Default true."},
                            "respect_gemini_ignore": {"type": "boolean", "description": "Optional: honour .geminiignore. Default true."}
                        }
                    }
                },
                "required": ["include"]
            }),
        }
    }

    /// Older versions named the list `file_paths`.
    fn normalize_args(&self, args: &mut Value) {
        toolbelt_core::schema::rename_params(args, &[("file_paths", "include")]);
    }

    /// The declared schema plus the older shared `start_line`, `end_line` and
    /// `enable_line_numbers`.
    fn accepted_parameters(&self) -> Option<Value> {
        Some(toolbelt_core::schema::with_properties(
            self.declaration(ModelFamily::Legacy).parameters,
            &[
                ("start_line", json!({"type": "integer", "minimum": 1})),
                ("end_line", json!({"type": "integer", "minimum": 1})),
                ("enable_line_numbers", json!({"type": "boolean"})),
            ],
        ))
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        if let (Some(s), Some(e)) = (p.start_line, p.end_line)
            && s > e
        {
            return Err("start_line cannot be greater than end_line".into());
        }
        // Each pattern is compiled for the walk: their number is bounded (500 exclude globs,
        // 300 calls at once, took 385 MB; issue 35).
        let max = toolbelt_core::limits::GLOB_PATTERNS;
        if p.include.len() + p.exclude.len() > max {
            return Err(format!(
                "Too many patterns: {} include and {} exclude patterns; at most {max} in all. Use fewer, broader patterns (`src/**/*.rs`).",
                p.include.len(),
                p.exclude.len()
            ));
        }
        toolbelt_core::limits::check_globs(p.include.iter().chain(&p.exclude).map(String::as_str))?;
        let mut excludes: Vec<String> = if p.use_default_excludes != Some(false) {
            DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        };
        excludes.extend(p.exclude.iter().cloned());
        let f = p.file_filtering_options.unwrap_or_default();
        Ok(Box::new(ReadManyCall {
            seen: env.files.clone(),
            include: p.include.iter().map(|i| i.replace('\\', "/")).collect(),
            excludes,
            opts: env.workspace.ignore_options(f.respect_git_ignore, f.respect_gemini_ignore),
            workspace: env.workspace.clone(),
            lines: (p.start_line, p.end_line, p.enable_line_numbers),
        }))
    }
}

struct ReadManyCall {
    seen: Arc<toolbelt_core::ledger::FileLedger>,
    include: Vec<String>,
    excludes: Vec<String>,
    opts: IgnoreOptions,
    workspace: Arc<Workspace>,
    /// The line range for every file and whether lines are numbered.
    lines: (Option<u64>, Option<u64>, bool),
}

#[async_trait]
impl Invocation for ReadManyCall {
    fn description(&self) -> String {
        let ex = if self.excludes.is_empty() {
            "none specified".to_string()
        } else {
            format!(
                "patterns like\n{}{}",
                self.excludes.iter().take(2).cloned().collect::<Vec<_>>().join("`, `"),
                if self.excludes.len() > 2 { "...`" } else { "`" }
            )
        };
        format!(
            "Will attempt to read and concatenate files using patterns:\n{}\n (within target directory:\n{}\n) . Excluding: {ex}. File encoding: utf-8. Separator: \"--- path/to/file.ext ---\".",
            self.include.join("`, `"),
            self.workspace.primary().display()
        )
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let job = Job {
            seen: self.seen.clone(),
            include: self.include.clone(),
            excludes: self.excludes.clone(),
            opts: self.opts,
            workspace: self.workspace.clone(),
            cancel: ctx.cancel.clone(),
            lines: self.lines,
        };
        match ctx.spawn_blocking(move || job.run()).await {
            Ok(r) => r,
            Err(e) => search_error(&e.to_string()),
        }
    }
}

fn search_error(msg: &str) -> ToolResult {
    ToolResult::error(
        ErrorType::ReadManyFilesSearchError,
        format!("Error during file search: {msg}"),
        format!("Error during file search: {msg}"),
        format!("Error: {msg}"),
    )
}

/// A file the walk found, with the inode it saw (none for a symlink).
type Walked = (PathBuf, Option<u64>);

struct Job {
    seen: Arc<toolbelt_core::ledger::FileLedger>,
    include: Vec<String>,
    excludes: Vec<String>,
    opts: IgnoreOptions,
    workspace: Arc<Workspace>,
    cancel: CancellationToken,
    lines: (Option<u64>, Option<u64>, bool),
}

impl Job {
    /// Files matching the include globs (paths naming an existing file are taken literally).
    /// Matching files with the inode the walk saw (none for a symlink, which leads to another),
    /// and what the walk could not read.
    fn find(&self) -> Result<(Vec<Walked>, Unread), String> {
        let excludes = glob_set(&self.excludes)?;
        let mut found: Vec<Walked> = Vec::new();
        let unread = Unread::default();
        for root in self.workspace.roots() {
            let dir = root.real.clone();
            // An absolute path or pattern counts in the root it is in, relative to it (it
            // matched nothing before; upstream reads it).
            let prefix = format!("{}/", dir.display());
            let pats: Vec<String> = self
                .include
                .iter()
                .filter_map(|p| match p.strip_prefix(&prefix) {
                    Some(rel) => Some(rel.to_string()),
                    None if Path::new(p).is_absolute() => None,
                    None => Some(p.clone()),
                })
                .map(|p| if dir.join(&p).is_file() { globset::escape(&p) } else { p })
                .collect();
            if pats.is_empty() {
                continue;
            }
            let includes = glob_set(&pats)?;
            // The workspace's walk, on several threads: it lists a folder as it goes (the
            // `ignore` crate's parallel walker queued every entry of a folder at once: a
            // folder of a million entries took 312 MB; its one-thread walk was slower).
            let count = AtomicUsize::new(found.len());
            let gathered = Mutex::new(std::mem::take(&mut found));
            let (includes, excludes) = (&includes, &excludes);
            self.workspace.walk(&dir, crate::search::walker_threads(), || Finder {
                dir: &dir,
                includes,
                excludes,
                gathered: &gathered,
                count: &count,
                unread: &unread,
                cancel: &self.cancel,
                mine: Vec::new(),
            });
            found = gathered.into_value();
        }
        let mut files = found;
        files.sort();
        files.dedup_by(|a, b| a.0 == b.0);
        Ok((files, unread))
    }

    fn run(self) -> ToolResult {
        let (files, unread) = match self.find() {
            Ok(found) => found,
            Err(e) => return search_error(&e),
        };
        toolbelt_core::timings::mark("read_many: walk");
        let too_many = files.len() >= READ_MANY_FILES;
        let ws = &self.workspace;
        let threads = crate::search::walker_threads();
        let mut skipped: Vec<(String, String)> = Vec::new();
        let (mut ignored, mut outside, mut hidden) = (0usize, 0usize, 0usize);
        let mut kept = Vec::new();
        let checks = crate::parallel::map(&files, threads, |(f, ino)| self.check(f, *ino, &unread));
        for checked in checks {
            match checked {
                Checked::Kept(r, size) => kept.push((r, size)),
                Checked::Ignored => ignored += 1,
                Checked::LeftOut => {}
                Checked::Hidden => hidden += 1,
                Checked::Outside => outside += 1,
                Checked::Gone => {}
            }
        }
        if too_many {
            skipped.push((
                "files past the first 10000".into(),
                "more files matched than one call considers (10,000): the search stopped there; narrow the include patterns".into(),
            ));
        }
        if ignored > 0 {
            skipped.push((format!("{ignored} file(s)"), "ignored by project ignore files".into()));
        }
        let ignore_note = unread.ignore_note("file(s)");
        if !ignore_note.is_empty() {
            skipped.push((format!("{} file(s)", unread.left_out()), ignore_note.trim().into()));
        }
        if outside > 0 {
            let why = "Security: not in the workspace (links or hard links to outside)";
            skipped.push((format!("{outside} file(s)"), why.into()));
        }
        if hidden > 0 {
            let why = "Security: hidden by sensitive-path rules; see allow_sensitive_paths";
            skipped.push((format!("{hidden} file(s)"), why.into()));
        }
        toolbelt_core::timings::mark("read_many: confirm each file");
        kept.sort_by(|(a, _), (b, _)| {
            a.real.to_string_lossy().encode_utf16().cmp(b.real.to_string_lossy().encode_utf16())
        });
        let (kept, sizes): (Vec<_>, Vec<_>) = kept.into_iter().unzip();
        // The files read fill at most the budget; the notices after them are short.
        let mut answer = Answer::with_room(toolbelt_core::truncate::MAX_OUTPUT_CHARS + (64 << 10));
        let mut read_files: Vec<String> = Vec::new();
        // What the model gets is bounded: once the files read fill the budget, the rest are
        // named as left out (never silently absent). Files are read in parallel a chunk at a
        // time and taken in order, so at most one chunk is read past the budget, and only
        // what is taken is recorded as seen by the model.
        let mut budget = toolbelt_core::truncate::MAX_OUTPUT_CHARS;
        let mut left_out: Vec<String> = Vec::new();
        let chunk = (threads * 32).max(64);
        for batch in batches::batches(&kept, &sizes, chunk) {
            if budget == 0 {
                left_out.extend(batch.iter().map(|f| ws.relative(&f.real)));
                continue;
            }
            let reads = crate::parallel::map(batch, threads, |f| self.read_one(f));
            for (f, one) in batch.iter().zip(reads) {
                let shown = ws.relative(&f.real);
                if budget == 0 {
                    left_out.push(shown);
                    continue;
                }
                let (r, seen) = match one {
                    Read::Cancelled => {
                        skipped.push((shown, "cancelled before it was read".into()));
                        continue;
                    }
                    Read::Asset => {
                        skipped.push((shown, ASSET_SKIP.into()));
                        continue;
                    }
                    Read::Done { result, seen } => (*result, seen),
                };
                if let Some(e) = &r.error {
                    skipped.push((shown, format!("Read error: {}", e.message)));
                    continue;
                }
                match r.llm_content {
                    Content::Text(mut text) => {
                        if text.len() > budget {
                            if !read_files.is_empty() {
                                budget = 0;
                                left_out.push(shown);
                                continue;
                            }
                            // The first file alone is over the budget: its beginning.
                            let mut cut = budget;
                            while !text.is_char_boundary(cut) {
                                cut -= 1;
                            }
                            text.truncate(cut);
                            text.push_str(&format!(
                                "\n\n[WARNING: the output limit of {} characters was reached inside this file; read the rest with read_file and start_line.]\n\n",
                                toolbelt_core::truncate::MAX_OUTPUT_CHARS
                            ));
                        }
                        budget = budget.saturating_sub(text.len());
                        answer.push_text(&text);
                    }
                    Content::Part(p) => {
                        if !fits(&mut budget, std::slice::from_ref(&p)) {
                            left_out.push(shown);
                            continue;
                        }
                        answer.push(p);
                    }
                    Content::Parts(ps) => {
                        if !fits(&mut budget, &ps) {
                            left_out.push(shown);
                            continue;
                        }
                        ps.into_iter().for_each(|p| answer.push(p));
                    }
                    Content::Shared(t) => {
                        let Some(rest) = budget.checked_sub(t.as_str().len()) else {
                            left_out.push(shown);
                            continue;
                        };
                        budget = rest;
                        t.texts().into_iter().for_each(|p| answer.push_text(p));
                    }
                }
                self.seen.absorb(seen);
                read_files.push(shown);
            }
        }
        toolbelt_core::timings::mark("read_many: read and format");
        if !left_out.is_empty() {
            answer.push_text(&left_out_notice(&left_out));
            let why = format!(
                "output limit: the files read before it filled {} characters",
                toolbelt_core::truncate::MAX_OUTPUT_CHARS
            );
            skipped.extend(left_out.iter().map(|f| (f.clone(), why.clone())));
        }
        // Said before the end marker, or after "nothing found".
        let read_note = unread.read_note("file(s)");
        if !read_note.is_empty() {
            skipped.push(("folders".into(), read_note.trim().into()));
        }
        // Files passed over one by one (too large, a FIFO or device, an asset not asked for, a
        // read error) are named to the model too, not only in the display (issue 35).
        let not_read: Vec<&(String, String)> = skipped
            .iter()
            .filter(|(p, r)| {
                p != "folders" && !p.ends_with(" file(s)") && !r.starts_with("output limit")
            })
            .collect();
        let mut notes = ignore_note + &read_note;
        if !not_read.is_empty() {
            notes.push_str(&format!("\n({} file(s) not read:", not_read.len()));
            for (p, r) in not_read.iter().take(50) {
                notes.push_str(&format!("\n- {p}: {r}"));
            }
            if not_read.len() > 50 {
                notes.push_str(&format!("\n- ...and {} more", not_read.len() - 50));
            }
            notes.push_str(")\n");
        }
        let nothing = answer.is_empty();
        if nothing {
            answer.push_text(NOTHING);
        }
        if !notes.is_empty() {
            answer.push_text(if nothing { notes.trim_start() } else { &notes });
        }
        if !nothing {
            answer.push_text(END);
        }
        let summary = self.summary(&read_files, &skipped);
        ToolResult {
            llm_content: answer.into_content(),
            return_display: json!({
                "summary": summary,
                "files": read_files,
                "skipped": skipped.iter().map(|(p, r)| json!({"path": p, "reason": r})).collect::<Vec<_>>(),
                "include": self.include,
                "excludes": self.excludes,
                "targetDir": ws.primary().display().to_string(),
            }),
            ..ToolResult::default()
        }
    }

    /// Media files are read only when a pattern names their extension or their name.
    fn requested(&self, f: &Path) -> bool {
        let ext = file_type::extension(f).map(|e| format!(".{e}"));
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        self.include.iter().any(|p| {
            ext.as_ref().is_some_and(|e| p.to_lowercase().contains(e))
                || (!stem.is_empty() && p.contains(&stem))
        })
    }

    fn summary(&self, files: &[String], skipped: &[(String, String)]) -> String {
        let mut s = format!(
            "### ReadManyFiles Result (Target Dir: `{}`)\n\n",
            self.workspace.primary().display()
        );
        if !files.is_empty() {
            s.push_str(&format!(
                "Successfully read and concatenated content from **{} file(s)**.\n",
                files.len()
            ));
            if files.len() > 10 {
                s.push_str("\n**Processed Files (first 10 shown):**\n");
                for f in &files[..10] {
                    s.push_str(&format!("- `{f}`\n"));
                }
                s.push_str(&format!("- ...and {} more.\n", files.len() - 10));
            } else {
                s.push_str("\n**Processed Files:**\n");
                for f in files {
                    s.push_str(&format!("- `{f}`\n"));
                }
            }
        }
        if !skipped.is_empty() {
            if files.is_empty() {
                s.push_str("No files were read and concatenated based on the criteria.\n");
            }
            if skipped.len() > 5 {
                s.push_str(&format!("\n**Skipped {} item(s) (first 5 shown):**\n", skipped.len()));
            } else {
                s.push_str(&format!("\n**Skipped {} item(s):**\n", skipped.len()));
            }
            for (p, r) in skipped.iter().take(5) {
                s.push_str(&format!("- `{p}` (Reason: {r})\n"));
            }
            if skipped.len() > 5 {
                s.push_str(&format!("- ...and {} more.\n", skipped.len() - 5));
            }
        } else if files.is_empty() {
            s.push_str("No files were read and concatenated based on the criteria.\n");
        }
        s.trim().to_string()
    }
}
