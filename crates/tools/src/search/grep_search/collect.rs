//! The sink that keeps a file's matching and context lines, within the call's budget.

use std::sync::atomic::{AtomicUsize, Ordering};

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};
use tokio_util::sync::CancellationToken;

use super::GrepLine;

pub(super) struct Collect<'a> {
    pub(super) entries: Vec<GrepLine>,
    pub(super) matches: usize,
    pub(super) max: Option<usize>,
    /// After-context lines, and the line of the last counted match: once the per-file maximum
    /// is reached, lines inside that window are still shown (as context) and then the file ends.
    pub(super) after: u64,
    pub(super) last_match: u64,
    pub(super) exclude: Option<&'a regex::Regex>,
    pub(super) cancel: &'a CancellationToken,
    pub(super) kept_bytes: &'a AtomicUsize,
}

/// The text of matching and context lines a call keeps, at most: 400,000 matches asked for
/// took 889 MB for an answer cut at a million characters (issue 35).
pub(super) const KEPT_LINES_BYTES: usize = 8 << 20;

impl Collect<'_> {
    fn full(&self) -> bool {
        self.max.is_some_and(|max| self.matches >= max)
    }

    /// Keeps a line unless the exclude pattern matches it. A line that is not UTF-8 (a Latin-1
    /// file, a stray byte) is kept as ripgrep prints it, each byte that is not UTF-8 shown as
    /// U+FFFD (upstream drops ripgrep's `bytes` lines, and with them the match; issue 48).
    fn keep(&mut self, number: Option<u64>, bytes: &[u8], context: bool) -> bool {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end();
        if self.exclude.is_some_and(|x| x.is_match(text)) {
            return false;
        }
        // Kept only as far as an answer shows it: three minified files of one 4.8 MB line
        // filled the budget of kept text and crowded out every other match (issue 35).
        let text = crate::search::cut_line(text).into_owned();
        self.kept_bytes.fetch_add(text.len() + 16, Ordering::Relaxed);
        self.entries.push(GrepLine { number: number.unwrap_or(0), text, is_context: context });
        true
    }

    fn over_budget(&self) -> bool {
        self.kept_bytes.load(Ordering::Relaxed) > KEPT_LINES_BYTES
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.cancel.is_cancelled() || self.over_budget() {
            return Ok(false);
        }
        let line = m.line_number().unwrap_or(0);
        if self.full() {
            if line <= self.last_match + self.after {
                self.keep(m.line_number(), m.bytes(), true);
                return Ok(true);
            }
            return Ok(false);
        }
        if self.keep(m.line_number(), m.bytes(), false) {
            self.matches += 1;
            self.last_match = line;
        }
        Ok(!self.full() || self.after > 0)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let line = c.line_number().unwrap_or(0);
        if self.full()
            && (matches!(c.kind(), SinkContextKind::Before) || line > self.last_match + self.after)
        {
            return Ok(line <= self.last_match + self.after);
        }
        self.keep(c.line_number(), c.bytes(), true);
        Ok(!self.cancel.is_cancelled() && !self.over_budget())
    }
}
