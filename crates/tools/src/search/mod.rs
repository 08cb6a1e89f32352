//! Search tools (grep_search, glob) and what they share: the walker set-up and the text
//! format of grep results.

pub mod glob;
pub mod grep_search;

use std::path::PathBuf;

use serde_json::json;
use toolbelt_core::result::ToolResult;

/// Folders glob never descends into (upstream's glob ignore list).
pub const GLOB_EXCLUDED_DIRS: &[&str] =
    &["node_modules", ".git", "bower_components", ".svn", ".hg"];

/// Globs grep_search excludes unless `no_ignore` (upstream passes them to ripgrep).
pub const GREP_EXCLUDES: &[&str] = &[
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
    "*.log",
    "*.tmp",
];

/// Longer result lines are cut (code points, as upstream's grep formatting counts).
pub const MAX_LINE_CHARS: usize = 2000;

/// One line of grep output.
#[derive(Clone, Debug, PartialEq)]
pub struct GrepEntry {
    /// Path shown to the model (relative to the search path, `/` separators).
    pub file_path: String,
    pub absolute: PathBuf,
    pub line_number: u64,
    /// The line without its trailing whitespace.
    pub line: String,
    pub is_context: bool,
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
}

fn cut_line(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((i, _)) => format!("{}... [truncated]", &line[..i]),
        None => line.to_string(),
    }
}

/// Upstream's `formatGrepResults`: grouped by file in first-seen order, sorted by line within
/// a file. `entries` must already be in the order files should appear.
pub fn format_grep(entries: &[GrepEntry], r: &GrepReport<'_>) -> ToolResult {
    let filter = r.include.map(|i| format!(" (filter: \"{i}\")")).unwrap_or_default();
    let note = r
        .cut_short
        .map(|why| format!("\n\n(The search was cut short: {why}. These results are partial.)"))
        .unwrap_or_default();
    let matches: Vec<&GrepEntry> = entries.iter().filter(|e| !e.is_context).collect();
    let count = matches.len();
    let display_matches: Vec<serde_json::Value> = matches
        .iter()
        .map(|e| json!({"filePath": e.file_path, "absolutePath": e.absolute.display().to_string(), "lineNumber": e.line_number, "line": e.line}))
        .collect();
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
    // Group by file, first-seen order.
    let mut order: Vec<&str> = Vec::new();
    let mut groups: std::collections::HashMap<&str, Vec<&GrepEntry>> =
        std::collections::HashMap::new();
    for e in entries {
        let g = groups.entry(e.file_path.as_str()).or_default();
        if g.is_empty() {
            order.push(e.file_path.as_str());
        }
        g.push(e);
    }
    if r.names_only {
        let mut files: Vec<&str> = order.clone();
        files.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        let text = format!(
            "Found {} files with matches for pattern \"{}\" {}{filter}{limited}:\n{}",
            files.len(),
            r.pattern,
            r.place,
            files.join("\n")
        );
        return ToolResult {
            llm_content: toolbelt_core::Content::Text(format!("{}{note}", text.trim())),
            return_display: json!({
                "summary": format!("Found {} files{}", files.len(), if truncated { " (limited)" } else { "" }),
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
    for f in &order {
        text.push_str(&format!("File: {f}\n"));
        let mut lines = groups[f].clone();
        lines.sort_by_key(|e| e.line_number);
        for e in lines {
            let sep = if e.is_context { '-' } else { ':' };
            text.push_str(&format!("L{}{sep} {}\n", e.line_number, cut_line(&e.line)));
        }
        text.push_str("---\n");
    }
    ToolResult {
        llm_content: toolbelt_core::Content::Text(format!("{}{note}", text.trim())),
        return_display: json!({
            "summary": format!("Found {count} {term}{}", if truncated { " (limited)" } else { "" }),
            "matches": display_matches,
        }),
        ..ToolResult::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(f: &str, n: u64, line: &str, ctx: bool) -> GrepEntry {
        GrepEntry {
            file_path: f.into(),
            absolute: PathBuf::from("/r").join(f),
            line_number: n,
            line: line.into(),
            is_context: ctx,
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
        }
    }

    #[test]
    fn formats_groups_and_context_markers() {
        let entries = [
            e("a.txt", 2, "second", false),
            e("a.txt", 1, "first", true),
            e("b/c.txt", 1, "x world", false),
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
        let entries = [e("b.txt", 1, "w", false), e("a.txt", 1, "w", false)];
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
