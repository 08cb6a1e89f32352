//! Tools that change files (write_file, replace) and what they share: atomic writes,
//! keeping a file's line endings and BOM, diffs and "updated code" snippets.

mod correct;
pub mod matching;
pub mod placeholder;
pub mod replace;
mod target;
pub mod write_file;

pub use toolbelt_core::files::atomic_write;

use std::path::Path;

use similar::{DiffOp, TextDiff};

/// The time a line diff may take. Myers' algorithm is quadratic on texts that differ everywhere
/// (80,000 changed lines took 210 s); past the budget it stops refining, and the rest of the
/// change is shown as one replaced block: still a correct diff, only not the smallest.
const DIFF_BUDGET: std::time::Duration = std::time::Duration::from_millis(50);

/// Changed regions of more lines than this (old and new together) are not diffed line by
/// line: the whole region counts as replaced, and the patch names it without listing it. A
/// replacement that made a 60 KB file 19.5 million lines took 752 MB in line lists (issue 35).
const MAX_DIFF_LINES: usize = 200_000;

/// Lines of a changed region too large to diff shown in a snippet, at most.
const COARSE_SNIPPET: usize = 2_000;

/// Lines of a text as a line diff counts them (a last line without its newline counts).
fn diff_lines(s: &str) -> usize {
    memchr::memchr_iter(b'\n', s.as_bytes()).count()
        + usize::from(!s.is_empty() && !s.ends_with('\n'))
}

/// The line diff of two texts, within [`DIFF_BUDGET`].
fn line_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, 'a, str> {
    TextDiff::configure().deadline(std::time::Instant::now() + DIFF_BUDGET).diff_lines(old, new)
}

const UTF8_BOM: &str = "\u{feff}";

/// How an existing file is encoded, so a rewrite keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStyle {
    pub bom: bool,
    pub crlf: bool,
}

impl FileStyle {
    /// The style of existing text (a leading BOM, CRLF line ends anywhere).
    pub fn of(text: &str) -> Self {
        Self { bom: text.starts_with(UTF8_BOM), crlf: text.contains("\r\n") }
    }

    /// Applies the style to new content: `\r?\n` become `\r\n` for CRLF files; the BOM is put
    /// back if the file had one.
    pub fn apply(self, content: &str) -> String {
        let body = content.strip_prefix(UTF8_BOM).unwrap_or(content);
        let body = if self.crlf {
            body.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            body.to_string()
        };
        if self.bom { format!("{UTF8_BOM}{body}") } else { body }
    }
}

/// The refusal when a file changed since the model last saw it (`action`: "editing it, so the
/// edit" / "writing it, so the write").
pub fn stale_message(path: &Path, action: &str) -> String {
    format!(
        "{} changed on disk since it was last read in this session; read it again before {action} does not undo those changes.",
        path.display()
    )
}

/// Length of the common prefix of two byte strings (compared a block at a time).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 4096 <= n && a[i..i + 4096] == b[i..i + 4096] {
        i += 4096;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix, at most `max` bytes.
fn common_suffix(a: &[u8], b: &[u8], max: usize) -> usize {
    let n = a.len().min(b.len()).min(max);
    let mut i = 0;
    while i + 4096 <= n && a[a.len() - i - 4096..a.len() - i] == b[b.len() - i - 4096..b.len() - i]
    {
        i += 4096;
    }
    while i < n && a[a.len() - 1 - i] == b[b.len() - 1 - i] {
        i += 1;
    }
    i
}

fn count_newlines(s: &[u8]) -> usize {
    s.iter().filter(|c| **c == b'\n').count()
}

/// The part of two texts worth diffing: equal leading and trailing lines are cut off, keeping
/// `margin` of them as context. Returns the number of lines cut from the start and the middles.
/// Diffing a 10 MB file with one change then costs about as much as diffing the change.
fn trim_common<'a>(old: &'a str, new: &'a str, margin: usize) -> (usize, &'a str, &'a str) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let p = common_prefix(a, b);
    // Whole equal lines at the start: up to the last newline inside the common prefix.
    let mut head = a[..p].iter().rposition(|c| *c == b'\n').map_or(0, |i| i + 1);
    for _ in 0..margin {
        if head == 0 {
            break;
        }
        head = a[..head - 1].iter().rposition(|c| *c == b'\n').map_or(0, |i| i + 1);
    }
    let s = common_suffix(a, b, a.len().min(b.len()) - head);
    // Whole equal lines at the end start after a newline that is itself inside the suffix.
    let from = a.len() - s;
    let mut tail = match a[from..].iter().position(|c| *c == b'\n') {
        Some(i) => from + i + 1,
        None => a.len(),
    };
    for _ in 0..margin {
        if tail >= a.len() {
            break;
        }
        tail = a[tail..].iter().position(|c| *c == b'\n').map_or(a.len(), |i| tail + i + 1);
    }
    let cut_tail = a.len() - tail;
    let offset = count_newlines(&a[..head]);
    (offset, &old[head..tail], &new[head..new.len() - cut_tail])
}

/// Adds `offset` to both start lines of a hunk header.
fn shift_hunk(line: &str, offset: usize) -> String {
    let full = full_hunk_header(line);
    if offset == 0 {
        return full;
    }
    let parts: Vec<String> = full
        .trim_end()
        .split(' ')
        .enumerate()
        .map(|(i, p)| {
            if i == 1 || i == 2 {
                let (sign, rest) = p.split_at(1);
                let (start, count) = rest.split_once(',').unwrap_or((rest, "1"));
                let start: usize = start.parse().unwrap_or(0);
                format!("{sign}{},{count}", start + offset)
            } else {
                p.to_string()
            }
        })
        .collect();
    format!("{}\n", parts.join(" "))
}

/// A unified diff in jsdiff's `createPatch` layout (`Index:` header, 3 lines of context).
pub fn create_patch(
    file_name: &str,
    old: &str,
    new: &str,
    old_header: &str,
    new_header: &str,
) -> String {
    DiffView::new(old, new).patch(file_name, old_header, new_header)
}

/// Two texts with their common head and tail cut off (three lines of context kept), computed
/// once and shared by the patch, the statistics and the snippet.
pub struct DiffView<'a> {
    old_empty: bool,
    new: &'a str,
    offset: usize,
    old_mid: &'a str,
    new_mid: &'a str,
    /// The diff of the middles, computed once when first needed.
    diff: std::cell::OnceCell<TextDiff<'a, 'a, 'a, str>>,
    /// The middles' lines, when there are too many to diff (see [`MAX_DIFF_LINES`]).
    coarse: Option<(usize, usize)>,
}

impl<'a> DiffView<'a> {
    pub fn new(old: &'a str, new: &'a str) -> Self {
        let (offset, old_mid, new_mid) = trim_common(old, new, 3);
        let lines = (diff_lines(old_mid), diff_lines(new_mid));
        Self {
            old_empty: old.is_empty(),
            new,
            offset,
            old_mid,
            new_mid,
            diff: std::cell::OnceCell::new(),
            coarse: (lines.0 + lines.1 > MAX_DIFF_LINES).then_some(lines),
        }
    }

    fn diff(&self) -> &TextDiff<'a, 'a, 'a, str> {
        self.diff.get_or_init(|| line_diff(self.old_mid, self.new_mid))
    }

    pub fn patch(&self, file_name: &str, old_header: &str, new_header: &str) -> String {
        let offset = self.offset;
        let head = format!(
            "Index: {file_name}\n===================================================================\n--- {file_name}\t{old_header}\n+++ {file_name}\t{new_header}\n"
        );
        if let Some((old, new)) = self.coarse {
            return format!(
                "{head}@@ -{},{old} +{},{new} @@\n(the {old} old and {new} new lines of this change are not listed: too many to show as a diff)\n",
                offset + 1,
                offset + 1
            );
        }
        // Its own diff: the formatter cannot borrow the cached one for the view's lifetime.
        let diff = line_diff(self.old_mid, self.new_mid);
        let body: String = diff
            .unified_diff()
            .context_radius(3)
            .to_string()
            .split_inclusive('\n')
            .map(|l| if l.starts_with("@@ ") { shift_hunk(l, offset) } else { l.to_string() })
            .collect();
        format!("{head}{body}")
    }

    pub fn stat(&self) -> DiffStat {
        if let Some((old, new)) = self.coarse {
            // The whole region as replaced: its characters without the line ends.
            let chars =
                |s: &str| s.chars().count() - memchr::memchr_iter(b'\n', s.as_bytes()).count();
            return DiffStat {
                added_lines: new,
                removed_lines: old,
                added_chars: chars(self.new_mid),
                removed_chars: chars(self.old_mid),
            };
        }
        stat_of(self.diff())
    }

    /// Upstream's `getDiffContextSnippet`: the changed lines of the new text with `context`
    /// lines around them, gaps shown as `...`; the whole new text for new files.
    pub fn snippet(&self, context: usize) -> String {
        if self.old_empty {
            return self.new.to_string();
        }
        if let Some((_, new)) = self.coarse {
            // The start of the changed region, with its context before.
            let anchor = self.new_mid.as_ptr() as usize - self.new.as_ptr() as usize;
            let (s, e) =
                (self.offset.saturating_sub(context), self.offset + new.min(COARSE_SNIPPET));
            return format!("{}\n...", lines_between(self.new, self.offset, anchor, s, e));
        }
        snippet_of(self.new, self.offset, self.new_mid, self.diff(), context)
    }
}

/// jsdiff always writes both counts (`@@ -0,0 +1,1 @@`); `similar` leaves out a count of 1.
fn full_hunk_header(line: &str) -> String {
    let mut parts: Vec<String> = line.trim_end().split(' ').map(String::from).collect();
    for p in parts.iter_mut().skip(1).take(2) {
        if !p.contains(',') {
            p.push_str(",1");
        }
    }
    format!("{}\n", parts.join(" "))
}

/// Build and dependency files (upstream marks them in write results).
pub fn is_build_file(path: &Path) -> bool {
    const NAMES: &[&str] = &[
        "BUILD",
        "BUILD.bazel",
        "WORKSPACE",
        "WORKSPACE.bazel",
        "MODULE.bazel",
        ".bazelrc",
        ".blazerc",
        "Makefile",
        "makefile",
        "GNUmakefile",
        "CMakeLists.txt",
        "package.json",
        "package-lock.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "bun.lockb",
        "setup.py",
        "setup.cfg",
        "pyproject.toml",
        "go.mod",
        "go.sum",
        "Cargo.toml",
        "Cargo.lock",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "Dockerfile",
        "Containerfile",
    ];
    const EXTENSIONS: &[&str] = &["bzl", "bazel", "bzlmod", "mk", "cmake"];
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    NAMES.contains(&name.as_str())
        || path.extension().is_some_and(|e| EXTENSIONS.iter().any(|x| e == *x))
}

/// Lines and characters added and removed (line terminators not counted as characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffStat {
    pub added_lines: usize,
    pub removed_lines: usize,
    pub added_chars: usize,
    pub removed_chars: usize,
}

impl DiffStat {
    /// Upstream's `diffStat` object (the person's own edits are always zero here).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "model_added_lines": self.added_lines,
            "model_removed_lines": self.removed_lines,
            "model_added_chars": self.added_chars,
            "model_removed_chars": self.removed_chars,
            "user_added_lines": 0,
            "user_removed_lines": 0,
            "user_added_chars": 0,
            "user_removed_chars": 0,
        })
    }
}

/// The costly turns an edit of the file at `path` (or of `content`, when larger) takes: an
/// edit holds its file several times over while it works (a 20 MB file: some 90 MB), so 30
/// edits of large files at once over HTTP took 2.6 GB (issue 35, fifth attack). Files over
/// 1 MiB take three turns: one such edit at a time in the process, beside one search.
pub(crate) fn edit_turns(path: &std::path::Path, content: usize) -> u32 {
    turns_for(std::fs::metadata(path).map_or(0, |m| m.len()).max(content as u64))
}

/// The costly turns an edit holding `bytes` takes (see [`edit_turns`]).
pub(crate) fn turns_for(bytes: u64) -> u32 {
    if bytes > 1 << 20 { 3 } else { 0 }
}

/// Runs an edit's blocking work (reading, matching, diffing, writing) on the blocking pool,
/// off the scheduler's thread, so the call's deadline and cancellation can always answer; a call
/// cancelled before it starts does nothing.
pub(crate) async fn off_the_scheduler(
    tool: &str,
    ctx: &toolbelt_core::tool::ExecContext,
    work: impl FnOnce() -> toolbelt_core::result::ToolResult + Send + 'static,
) -> toolbelt_core::result::ToolResult {
    if ctx.cancel.is_cancelled() {
        return toolbelt_core::result::ToolResult::simple_error(
            toolbelt_core::result::ErrorType::Cancelled,
            "Operation cancelled.",
        );
    }
    ctx.spawn_blocking(work).await.unwrap_or_else(|e| {
        toolbelt_core::result::ToolResult::simple_error(
            toolbelt_core::result::ErrorType::UnhandledException,
            format!("{tool} worker failed: {e}"),
        )
    })
}

fn stat_of(diff: &TextDiff<'_, '_, '_, str>) -> DiffStat {
    let mut s = DiffStat::default();
    let chars = |lines: &[&str]| {
        lines.iter().map(|l| l.trim_end_matches('\n').chars().count()).sum::<usize>()
    };
    let old_lines: Vec<&str> = diff.old_slices().to_vec();
    let new_lines: Vec<&str> = diff.new_slices().to_vec();
    for op in diff.ops() {
        let (o, n) = (op.old_range(), op.new_range());
        if matches!(op, DiffOp::Equal { .. }) {
            continue;
        }
        s.removed_lines += o.len();
        s.added_lines += n.len();
        s.removed_chars += chars(&old_lines[o]);
        s.added_chars += chars(&new_lines[n]);
    }
    s
}

/// Lines `s..e` of `text` (split on `\n`, `\r` dropped), walking from a known line start:
/// line `anchor_line` begins at byte `anchor`. Only the lines near the change are visited.
fn lines_between(text: &str, anchor_line: usize, anchor: usize, s: usize, e: usize) -> String {
    let b = text.as_bytes();
    let mut pos = anchor;
    if s < anchor_line {
        for _ in s..anchor_line {
            pos = b[..pos.saturating_sub(1)].iter().rposition(|c| *c == b'\n').map_or(0, |i| i + 1);
        }
    } else {
        for _ in anchor_line..s {
            pos = b[pos..].iter().position(|c| *c == b'\n').map_or(b.len(), |i| pos + i + 1);
        }
    }
    text[pos..]
        .split('\n')
        .take(e - s)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

fn snippet_of(
    new: &str,
    offset: usize,
    new_mid: &str,
    diff: &TextDiff<'_, '_, '_, str>,
    context: usize,
) -> String {
    // Where the changed region starts in `new` (it is a subslice of it).
    let anchor = new_mid.as_ptr() as usize - new.as_ptr() as usize;
    let n = offset + count_newlines(&new.as_bytes()[anchor..]) + 1;
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Insert { new_index, new_len, .. }
            | DiffOp::Replace { new_index, new_len, .. } => {
                ranges.push((offset + new_index, offset + new_index + new_len));
            }
            DiffOp::Delete { new_index, .. } => {
                ranges.push((offset + new_index, offset + new_index));
            }
            DiffOp::Equal { .. } => {}
        }
    }
    if ranges.is_empty() {
        return new.to_string();
    }
    let mut widened: Vec<(usize, usize)> =
        ranges.iter().map(|(s, e)| (s.saturating_sub(context), (e + context).min(n))).collect();
    widened.sort();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for r in widened {
        match merged.last_mut() {
            Some(last) if r.0 <= last.1 => last.1 = last.1.max(r.1),
            _ => merged.push(r),
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut prev_end = 0;
    for (s, e) in &merged {
        if *s > prev_end {
            out.push("...".into());
        }
        out.push(lines_between(new, offset, anchor, *s, *e));
        prev_end = *e;
    }
    if prev_end < n {
        out.push("...".into());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff_stat(old: &str, new: &str) -> DiffStat {
        DiffView::new(old, new).stat()
    }

    /// Issue 35 (fifth attack): 30 HTTP sessions each editing a 20 MB file took 2.6 GB at
    /// once. An edit of a file (or of content) over 1 MiB takes three costly turns.
    #[test]
    fn edits_of_large_files_take_three_turns() {
        let dir = tempfile::tempdir().unwrap();
        let (small, big) = (dir.path().join("s"), dir.path().join("b"));
        std::fs::write(&small, "x").unwrap();
        std::fs::write(&big, vec![b'x'; (1 << 20) + 1]).unwrap();
        assert_eq!(edit_turns(&small, 10), 0);
        assert_eq!(edit_turns(&big, 0), 3);
        assert_eq!(edit_turns(&small, 2 << 20), 3, "content written counts too");
        assert_eq!(edit_turns(&dir.path().join("new"), 0), 0);
    }

    /// Issue 35 (fourth attack, F1): a replacement that made a 60 KB file 19.5 million lines
    /// took 752 MB in the line diff's lists. A region that large is counted, not diffed, and
    /// what is shown of it is bounded.
    #[test]
    fn a_change_too_large_to_diff_is_counted_and_named() {
        let old = "keep\nab\nab\nend\n";
        let new = format!("keep\n{}end\n", "x\n".repeat(300_000));
        let v = DiffView::new(old, &new);
        let st = v.stat();
        assert_eq!((st.added_lines, st.removed_lines), (300_002, 4));
        assert_eq!((st.added_chars, st.removed_chars), (300_007, 11));
        let patch = v.patch("f.txt", "Original", "Written");
        assert!(patch.contains("@@ -1,4 +1,300002 @@\n(the 4 old and 300002 new lines"), "{patch}");
        assert!(patch.len() < 400, "{}", patch.len());
        let snippet = v.snippet(4);
        assert!(snippet.starts_with("keep\nx\nx") && snippet.ends_with("\n..."));
        assert_eq!(snippet.lines().count(), 2_001);
        // A small change is diffed as before.
        assert!(
            DiffView::new(old, "keep\nab\nAB\nend\n").patch("f", "a", "b").contains("-ab\n+AB")
        );
    }

    fn context_snippet(original: &str, new: &str, context: usize) -> String {
        DiffView::new(original, new).snippet(context)
    }

    #[test]
    fn styles_keep_crlf_and_bom() {
        let s = FileStyle::of("\u{feff}a\r\nb\r\n");
        assert_eq!(s, FileStyle { bom: true, crlf: true });
        assert_eq!(s.apply("x\ny\r\nz"), "\u{feff}x\r\ny\r\nz");
        assert_eq!(
            FileStyle::default().apply("x\r\ny"),
            "x\r\ny",
            "new files keep what they are given"
        );
    }

    #[test]
    fn wf11_snippet_shows_changed_lines_with_context() {
        let old: Vec<String> = (1..=100).map(|i| format!("Line {i}")).collect();
        let mut new = old.clone();
        new[50] = "Line 51 Modified".into();
        let s = context_snippet(&old.join("\n"), &new.join("\n"), 5);
        assert_eq!(
            s,
            "...\nLine 46\nLine 47\nLine 48\nLine 49\nLine 50\nLine 51 Modified\nLine 52\nLine 53\nLine 54\nLine 55\nLine 56\n..."
        );
        assert_eq!(context_snippet("", "all new", 5), "all new");
    }

    #[test]
    fn trimmed_diffs_match_full_diffs() {
        let old: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 25\n", "line twenty-five\nextra\n");
        let p = create_patch("f", &old, &new, "a", "b");
        assert!(p.contains("@@ -22,7 +22,8 @@\n line 22\n line 23\n line 24\n-line 25\n+line twenty-five\n+extra\n line 26\n"), "{p}");
        let s = diff_stat(&old, &new);
        assert_eq!((s.added_lines, s.removed_lines), (2, 1));
        let snip = context_snippet(&old, &new, 1);
        assert_eq!(snip, "...\nline 24\nline twenty-five\nextra\nline 26\n...");
        let p = create_patch("f", "a\nb", "a\nc", "x", "y");
        assert!(p.ends_with("@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"), "{p}");
    }

    #[test]
    fn patches_and_stats() {
        let p = create_patch("a.txt", "one\ntwo\n", "one\nthree\n", "Current", "Proposed");
        assert!(p.starts_with("Index: a.txt\n===================================================================\n--- a.txt\tCurrent\n+++ a.txt\tProposed\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"), "{p}");
        let s = diff_stat("a\nb\n", "a\ncc\nd\n");
        assert_eq!((s.added_lines, s.removed_lines, s.added_chars, s.removed_chars), (2, 1, 3, 1));
    }
}
