//! Output truncation: text over the threshold keeps its first 20% and last 80%
//! and the full text is saved to a file the notice names.

use std::path::{Path, PathBuf};

/// The shortened text and where the full text went.
#[derive(Clone, Debug, PartialEq)]
pub struct Truncated {
    /// The text to keep.
    pub text: String,
    /// Where the full output was saved, if it was cut.
    pub output_file: Option<PathBuf>,
}

/// `8000` -> `8,000`, as `toLocaleString()` in an English locale.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// File name for a call's saved output: `<callid>.txt` when the sanitized id already starts
/// with the sanitized tool name, else `<tool>_<callid>.txt`.
pub fn output_file_name(tool: &str, call_id: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect::<String>()
            .to_lowercase()
    };
    let (t, id) = (clean(tool), clean(call_id));
    if id.starts_with(&t) { format!("{id}.txt") } else { format!("{t}_{id}.txt") }
}

/// The most text any tool call gives the model (about 250,000 tokens): beyond it the output is
/// cut like any truncated output and the whole of it saved to a file.
pub const MAX_OUTPUT_CHARS: usize = 1_000_000;

/// Cuts `text` when it has more than `threshold` characters (0 disables). The full text is
/// written to `dir/<name>`; if that fails the notice says so instead of naming a file.
pub fn truncate(
    text: &str,
    threshold: usize,
    dir: &Path,
    tool: &str,
    call_id: &str,
) -> Option<Truncated> {
    let len = text.chars().count();
    if threshold == 0 || len <= threshold {
        return None;
    }
    let file = dir.join(output_file_name(tool, call_id));
    let saved = crate::files::write_private(&file, text.as_bytes());
    let where_ = match &saved {
        Ok(()) => format!("For full output see: {}", file.display()),
        Err(e) => format!("The full output could not be saved ({e})."),
    };
    let text = cut(text, len, threshold, &where_, len);
    Some(Truncated { text, output_file: saved.ok().map(|()| file) })
}

/// Like [`truncate`] for a tool that already saved its full output (`total_chars` long) to
/// `file` and kept only its beginning and end in `text`: nothing is written again.
pub fn truncate_saved(
    text: &str,
    threshold: usize,
    saved: &crate::result::FullOutput,
) -> Option<Truncated> {
    let len = text.chars().count();
    if threshold == 0 || len <= threshold {
        return None;
    }
    let total = usize::try_from(saved.chars).unwrap_or(usize::MAX).max(len);
    let file = saved.path.display();
    // A capped file is not called the full output (issue 35).
    let where_ = match saved.only_first_bytes {
        None => format!("For full output see: {file}"),
        Some(n) => format!(
            "The output's first {} MiB (not all of it; the rest was not kept) are in: {file}",
            n >> 20
        ),
    };
    Some(Truncated {
        text: cut(text, len, threshold, &where_, total),
        output_file: Some(saved.path.clone()),
    })
}

fn cut(text: &str, len: usize, threshold: usize, where_: &str, total: usize) -> String {
    let head = threshold / 5;
    let tail = threshold - head;
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text.char_indices().nth(len - tail).map_or(text.len(), |(i, _)| i);
    format!(
        "Output too large. Showing first {} and last {} characters. {where_}\n{}\n\n... [{} characters omitted] ...\n\n{}",
        thousands(head),
        thousands(tail),
        &text[..head_end],
        thousands(total - head - tail),
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers_with_thousands_separators() {
        assert_eq!(thousands(8000), "8,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }

    #[test]
    fn file_names_are_sanitized() {
        assert_eq!(
            output_file_name("run_shell_command", "run_shell_command__abc.1"),
            "run_shell_command__abc_1.txt"
        );
        assert_eq!(output_file_name("mcp/x", "Call 1"), "mcp_x_call_1.txt");
    }

    #[test]
    fn keeps_head_and_tail_and_saves_the_full_text() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..100).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        assert!(truncate(&text, 100, dir.path(), "t", "t__1").is_none());
        assert!(truncate(&text, 0, dir.path(), "t", "t__1").is_none());
        let t = truncate(&text, 50, dir.path(), "t", "t__1").unwrap();
        let file = t.output_file.clone().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        let expected = format!(
            "Output too large. Showing first 10 and last 40 characters. For full output see: {}\n{}\n\n... [50 characters omitted] ...\n\n{}",
            file.display(),
            &text[..10],
            &text[60..]
        );
        assert_eq!(t.text, expected);
    }

    #[test]
    fn already_saved_output_is_named_not_rewritten() {
        let file = Path::new("/tmp/run.log");
        let text = "a".repeat(60);
        let mut saved =
            crate::result::FullOutput { path: file.into(), chars: 1000, only_first_bytes: None };
        assert!(truncate_saved(&text, 100, &saved).is_none());
        let t = truncate_saved(&text, 50, &saved).unwrap();
        assert_eq!(t.output_file.as_deref(), Some(file));
        assert!(t.text.starts_with("Output too large. Showing first 10 and last 40 characters. For full output see: /tmp/run.log\n"));
        assert!(t.text.contains("... [950 characters omitted] ..."), "{}", t.text);
        // Issue 35: a file cut at its cap is not called the full output.
        saved.only_first_bytes = Some(64 << 20);
        let t = truncate_saved(&text, 50, &saved).unwrap();
        assert!(t.text.contains("Showing first 10 and last 40 characters. The output's first 64 MiB (not all of it; the rest was not kept) are in: /tmp/run.log\n"), "{}", t.text);
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let text = "é".repeat(30);
        let t = truncate(&text, 10, dir.path(), "t", "c").unwrap();
        assert!(t.text.contains(&format!(
            "\n{}\n\n... [20 characters omitted] ...\n\n{}",
            "é".repeat(2),
            "é".repeat(8)
        )));
    }
}
