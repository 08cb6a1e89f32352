//! Search tools (grep_search, glob) and what they share: the walker set-up and the text
//! format of grep results.

pub mod glob;
pub mod grep_search;
mod ignore_files;
mod js_syntax;
mod matcher;
mod opener;
mod patterns;
pub(crate) mod unread;
mod whole;

use std::fmt::Write;
use std::path::PathBuf;

use serde_json::{Value, json};
use toolbelt_core::result::ToolResult;

/// Folders glob never descends into (upstream's glob ignore list).
pub const GLOB_EXCLUDED_DIRS: &[&str] =
    &["node_modules", ".git", "bower_components", ".svn", ".hg"];

/// Whether a walked entry falls under grep_search's default excludes (upstream passes ripgrep
/// `**/NAME/**` for each of [`EXCLUDED_FOLDERS`], `*.log` and `*.tmp`), as ripgrep's overrides
/// apply them: a folder of one of those names (a file of that name is searched), or any entry
/// named `*.log` or `*.tmp` (case-sensitive). Only for entries below the search path: the path
/// itself is never excluded.
pub fn excluded_by_default(e: &ignore::DirEntry) -> bool {
    let name = e.file_name().as_encoded_bytes();
    if name.ends_with(b".log") || name.ends_with(b".tmp") {
        return true;
    }
    e.file_type().is_some_and(|t| t.is_dir())
        && EXCLUDED_FOLDERS.iter().any(|d| d.as_bytes() == name)
}

/// The folders grep_search leaves out unless `no_ignore`.
pub const EXCLUDED_FOLDERS: &[&str] = &[
    "node_modules",
    ".git",
    "bower_components",
    ".svn",
    ".hg",
    ".vscode",
    ".idea",
    "dist",
    "build",
    "coverage",
    "__pycache__",
];

/// Worker threads for a parallel walk: the machine's cores, at most 4 (upstream runs ripgrep
/// with `--threads 4`). Asked of the system once: the answer reads the cgroup's CPU quota, a
/// dozen system calls at every search otherwise.
pub fn walker_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()).min(4))
}

/// Longer result lines are cut (code points, as upstream's grep formatting counts).
pub const MAX_LINE_CHARS: usize = 2000;

/// One line of grep output.
#[derive(Clone, Debug, PartialEq)]
pub struct GrepLine {
    pub number: u64,
    /// The line without its trailing whitespace.
    pub text: String,
    pub is_context: bool,
}

/// The lines found in one file, in line order.
#[derive(Clone, Debug, PartialEq)]
pub struct GrepFile {
    /// Path shown to the model (relative to the search path, `/` separators).
    pub file_path: String,
    pub absolute: PathBuf,
    pub lines: Vec<GrepLine>,
}

/// How a grep result is worded.
pub struct GrepReport<'a> {
    pub pattern: &'a str,
    /// e.g. `in path "."`.
    pub place: String,
    pub include: Option<&'a str>,
    pub names_only: bool,
    pub limit: usize,
    /// Set when the search stopped early (cancelled or timed out).
    pub cut_short: Option<&'a str>,
    /// Files and folders that could not be searched: they may hold matches.
    pub unsearchable: &'a [Unsearchable],
    /// What the walk could not read, as a note (`""` when nothing).
    pub unread: &'a str,
}

/// A file or folder grep_search could not search, as shown, and why.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unsearchable {
    pub shown: String,
    pub why: String,
    /// A folder the walk did not enter (see `ignore_files`).
    pub folder: bool,
}

pub(crate) fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= MAX_LINE_CHARS {
        return line.into();
    }
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((i, _)) => format!("{}... [truncated]", &line[..i]).into(),
        None => line.into(),
    }
}

/// Upstream's `formatGrepResults`: one block per file, in the order given.
pub fn format_grep(files: &[GrepFile], r: &GrepReport<'_>) -> ToolResult {
    let filter = r.include.map(|i| format!(" (filter: \"{i}\")")).unwrap_or_default();
    let mut note = r
        .cut_short
        .map(|why| format!("\n\n(The search was cut short: {why}. These results are partial.)"))
        .unwrap_or_default();
    note.push_str(r.unread);
    if !r.unsearchable.is_empty() {
        let folders = r.unsearchable.iter().filter(|u| u.folder).count();
        let what = match (r.unsearchable.len() - folders, folders) {
            (files, 0) => format!("{files} file(s)"),
            (0, folders) => format!("{folders} folder(s)"),
            (files, folders) => format!("{files} file(s) and {folders} folder(s)"),
        };
        let _ = write!(
            note,
            "\n\n({what} could not be searched and may hold matches; search them with run_shell_command, e.g. grep -c:"
        );
        for u in r.unsearchable {
            let _ = write!(note, "\n- {}: {}", u.shown, u.why);
        }
        note.push(')');
    }
    let count: usize = files.iter().map(|f| f.lines.iter().filter(|l| !l.is_context).count()).sum();
    if count == 0 {
        return ToolResult {
            llm_content: toolbelt_core::Content::Text(format!(
                "No matches found for pattern \"{}\" {}{filter}.{note}",
                r.pattern, r.place
            )),
            return_display: json!({"summary": "No matches found", "matches": []}),
            ..ToolResult::default()
        };
    }
    let truncated = count >= r.limit;
    let limited = if truncated {
        format!(" (results limited to {} matches for performance)", r.limit)
    } else {
        String::new()
    };
    if r.names_only {
        let mut names: Vec<&str> = files.iter().map(|f| f.file_path.as_str()).collect();
        names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        names.dedup();
        let text = format!(
            "Found {} files with matches for pattern \"{}\" {}{filter}{limited}:\n{}",
            names.len(),
            r.pattern,
            r.place,
            names.join("\n")
        );
        return ToolResult {
            llm_content: toolbelt_core::Content::Text(format!("{}{note}", text.trim())),
            return_display: json!({
                "summary": format!("Found {} files{}", names.len(), if truncated { " (limited)" } else { "" }),
                "matches": [],
            }),
            ..ToolResult::default()
        };
    }
    let term = if count == 1 { "match" } else { "matches" };
    let mut text = format!(
        "Found {count} {term} for pattern \"{}\" {}{filter}{limited}:\n---\n",
        r.pattern, r.place
    );
    // The display lists the first matches only: one object per match took a gigabyte for
    // 490,000 matches (issue 35); the text says how many there were.
    const DISPLAY_MATCHES: usize = 1_000;
    let mut display = Vec::with_capacity(count.min(DISPLAY_MATCHES));
    let shown = count.min(DISPLAY_MATCHES);
    for f in files {
        text.push_str("File: ");
        text.push_str(&f.file_path);
        text.push('\n');
        let absolute = f.absolute.display().to_string();
        for l in &f.lines {
            let sep = if l.is_context { '-' } else { ':' };
            let _ = writeln!(text, "L{}{sep} {}", l.number, cut_line(&l.text));
            if !l.is_context && display.len() < DISPLAY_MATCHES {
                // Made field by field into a map of the right size (the `json!` macro's map grows
                // from empty and converts each value through the serializer).
                let mut m = serde_json::Map::with_capacity(4);
                m.insert("filePath".into(), Value::String(f.file_path.clone()));
                m.insert("absolutePath".into(), Value::String(absolute.clone()));
                m.insert("lineNumber".into(), Value::from(l.number));
                m.insert("line".into(), Value::String(l.text.clone()));
                display.push(Value::Object(m));
            }
        }
        text.push_str("---\n");
    }
    ToolResult {
        llm_content: toolbelt_core::Content::Text(format!("{}{note}", text.trim())),
        return_display: crate::fs::list_directory::not_listed(
            json!({
                "summary": format!("Found {count} {term}{}", if truncated { " (limited)" } else { "" }),
                "matches": display,
            }),
            "matchesNotListed",
            count - shown,
        ),
        ..ToolResult::default()
    }
}

/// The cancellation check of a walker thread's hot loop. The token's own check takes a lock
/// that every walker thread shares (1.4% of a 200,000-file glob, found with perf); a thread
/// asks at its first entry and then every 64.
pub(crate) struct CancelCheck<'a> {
    token: &'a tokio_util::sync::CancellationToken,
    seen: u32,
}

impl<'a> CancelCheck<'a> {
    pub(crate) fn new(token: &'a tokio_util::sync::CancellationToken) -> Self {
        Self { token, seen: 0 }
    }

    /// Whether the call was cancelled (asked of the token at the first call and every 64th).
    pub(crate) fn cancelled(&mut self) -> bool {
        self.seen = self.seen.wrapping_add(1);
        self.seen % 64 == 1 && self.token.is_cancelled()
    }
}

/// Keeps files in order and stops right after the `limit`-th match.
pub(crate) fn limit_files(files: Vec<GrepFile>, limit: usize) -> Vec<GrepFile> {
    let mut out = Vec::with_capacity(files.len());
    let mut count = 0;
    for mut f in files {
        if count >= limit {
            break;
        }
        let mut keep = 0;
        for l in &f.lines {
            if count >= limit {
                break;
            }
            if !l.is_context {
                count += 1;
            }
            keep += 1;
        }
        f.lines.truncate(keep);
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(f: &str, lines: &[(u64, &str, bool)]) -> GrepFile {
        GrepFile {
            file_path: f.into(),
            absolute: PathBuf::from("/r").join(f),
            lines: lines
                .iter()
                .map(|(n, t, c)| GrepLine { number: *n, text: (*t).into(), is_context: *c })
                .collect(),
        }
    }

    fn report(names_only: bool, limit: usize) -> GrepReport<'static> {
        GrepReport {
            pattern: "world",
            place: "in path \".\"".into(),
            include: None,
            names_only,
            limit,
            cut_short: None,
            unsearchable: &[],
            unread: "",
        }
    }

    #[test]
    fn formats_groups_and_context_markers() {
        let entries = [
            file("a.txt", &[(1, "first", true), (2, "second", false)]),
            file("b/c.txt", &[(1, "x world", false)]),
        ];
        let r = format_grep(&entries, &report(false, 100));
        assert_eq!(
            r.llm_content,
            toolbelt_core::Content::Text("Found 2 matches for pattern \"world\" in path \".\":\n---\nFile: a.txt\nL1- first\nL2: second\n---\nFile: b/c.txt\nL1: x world\n---".into())
        );
        assert_eq!(r.return_display["summary"], "Found 2 matches");
    }

    #[test]
    fn limits_names_only_and_empty_results() {
        let entries = [file("b.txt", &[(1, "w", false)]), file("a.txt", &[(1, "w", false)])];
        let r = format_grep(&entries, &report(true, 2));
        assert_eq!(
            r.llm_content,
            toolbelt_core::Content::Text("Found 2 files with matches for pattern \"world\" in path \".\" (results limited to 2 matches for performance):\na.txt\nb.txt".into())
        );
        assert_eq!(r.return_display["summary"], "Found 2 files (limited)");
        let r = format_grep(&[], &report(false, 100));
        assert_eq!(
            r.llm_content,
            toolbelt_core::Content::Text(
                "No matches found for pattern \"world\" in path \".\".".into()
            )
        );
    }

    #[test]
    fn long_lines_are_cut_at_2000_code_points() {
        assert_eq!(cut_line(&"é".repeat(2001)), format!("{}... [truncated]", "é".repeat(2000)));
        assert_eq!(cut_line("short"), "short");
    }
}
