//! The lines of a text file a read shows.

use super::{MAX_LINE_LENGTH, MAX_LINES, utf16_len, utf16_prefix};

/// Lines picked from a text file.
pub(crate) struct Selection {
    pub body: String,
    /// 1-based first line shown, last line shown, total lines.
    pub first: usize,
    pub last: usize,
    pub total: usize,
    /// Some lines were cut at 2000 characters.
    pub shortened: bool,
    /// Not every line was shown.
    pub ranged: bool,
}

/// Selects lines as upstream: CRLF becomes LF, ranges are 1-based and inclusive, without a
/// range the first 2000 lines are shown, long lines are cut. `numbered`: each line prefixed
/// with its number, right-aligned in six columns (`     1|text`), a last empty line left bare.
pub(crate) fn select_lines(
    content: &str,
    start_line: Option<u64>,
    end_line: Option<u64>,
    numbered: bool,
) -> Selection {
    // Counted, cut and numbered in one pass into one buffer, never a list of every line: a
    // 20 MB file of short lines made a list of ten million (217 MB for one read; 641 MB with
    // a range over all of them; issue 35).
    let lines = || content.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    // Counted by a plain loop the compiler vectorizes: `memchr` first asks the processor what
    // it supports, several `cpuid` instructions that a virtual machine traps (~60 µs, a
    // twentieth of a small call's start-up; issue 37).
    let n = content.bytes().filter(|b| *b == b'\n').count() + 1;
    let to_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let (slice_start, slice_end) = if start_line.is_some() || end_line.is_some() {
        let s = start_line.map_or(0, |s| to_usize(s) - 1);
        let e = match end_line {
            Some(e) => to_usize(e).min(n),
            None => s.saturating_add(MAX_LINES).min(n),
        };
        (s, e)
    } else {
        (0, MAX_LINES.min(n))
    };
    let actual_start = slice_start.min(n);
    let count = slice_end.max(actual_start) - actual_start;
    let mut shortened = false;
    let mut body = String::new();
    for (i, l) in lines().skip(actual_start).take(count).enumerate() {
        if i > 0 {
            body.push('\n');
        }
        let last = i + 1 == count;
        if numbered && !(last && l.is_empty()) {
            use std::fmt::Write as _;
            let _ = write!(body, "{:>6}|", actual_start + 1 + i);
        }
        if utf16_len(l) > MAX_LINE_LENGTH {
            shortened = true;
            body.push_str(utf16_prefix(l, MAX_LINE_LENGTH));
            body.push_str("... [truncated]");
        } else {
            body.push_str(l);
        }
    }
    Selection {
        body,
        first: actual_start + 1,
        last: slice_end,
        total: n,
        shortened,
        ranged: actual_start > 0 || slice_end < n,
    }
}
