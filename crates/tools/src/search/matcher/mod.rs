//! grep_search's matcher: a pattern compiled for a search line by line, read as ripgrep reads
//! it (wrapped in a group, bytes rather than UTF-8, a nest limit of 250; a fixed string taken
//! as it is), with the line end taken out of what can match ([`line_end`]), the strings every
//! match holds looked for first ([`required`]), on regex-automata's engine without a full DFA.
//!
//! The full DFA is left out on purpose: regex-automata's default features (which ripgrep's
//! grep-regex asks for) switch on `dfa-build`, and with it every small regular expression in
//! the process is determinized up front: a case-folded word (200 µs of a cold compile) and the
//! glob sets of every ignore file a walk reads (the ten of the bench's ignore-heavy tree:
//! 1.43 ms with it, 0.68 ms without). The lazy DFA finds the same matches; `tests.rs` holds
//! this matcher to grep-regex's (a dev-dependency) on random patterns and texts.
//!
//! Left out: what grep_search never asks for (smart case, whole words or lines, multi-line,
//! CRLF, banned bytes).

mod fold;
mod line_end;
mod required;
#[cfg(test)]
mod tests;

use grep_matcher::{ByteSet, LineMatchKind, LineTerminator, Match, Matcher, NoCaptures, NoError};
use regex_automata::{Input, meta};
use regex_syntax::hir::Hir;
use toolbelt_core::limits;

/// The longest case-folded word whose letters are spelled out (see [`fold::spelled_out`]).
const SPELLED_OUT_BYTES: usize = 256;

/// A compiled grep_search pattern.
#[derive(Debug)]
pub(crate) struct LineMatcher {
    regex: meta::Regex,
    /// `\n`, unless the pattern holds an anchor of the whole text (`\A`, `\z`, or `^`/`$`,
    /// which grep_search does not read in multi-line mode): such a pattern is run on each line
    /// alone, as grep-regex has it.
    line_terminator: Option<LineTerminator>,
    /// Bytes no match can hold (`\n` among them, unless an anchor of the whole text is there).
    non_matching: ByteSet,
    /// The strings one of which every match holds, when the engine would not look for them
    /// itself (see [`required`]): lines without one are not searched.
    fast_line: Option<meta::Regex>,
}

/// Why a pattern did not compile: its syntax, or its size.
#[derive(Debug)]
pub(crate) enum BuildError {
    Invalid(String),
    TooLarge,
}

impl LineMatcher {
    /// `pattern` as grep_search reads it: a regular expression, or a fixed string.
    pub(crate) fn new(
        pattern: &str,
        fixed: bool,
        case_insensitive: bool,
    ) -> Result<Self, BuildError> {
        let plain = fixed || !pattern.chars().any(regex_syntax::is_meta_character);
        let hir = if plain && !case_insensitive && !pattern.contains('\n') {
            // A plain string: nothing to parse.
            Hir::literal(pattern.as_bytes())
        } else {
            let wrapped = if fixed {
                format!("(?:{})", regex_syntax::escape(pattern))
            } else {
                format!("(?:{pattern})")
            };
            let parser = || {
                regex_syntax::ParserBuilder::new()
                    .nest_limit(250)
                    .octal(false)
                    .utf8(false)
                    .case_insensitive(case_insensitive)
                    .unicode(true)
                    .build()
            };
            // The error as ripgrep shows it: of the pattern as given, not of its wrapping.
            let parsed = parser().parse(&wrapped).map_err(|e| {
                let bare = if fixed { None } else { parser().parse(pattern).err() };
                BuildError::Invalid(bare.map_or_else(|| e.to_string(), |b| b.to_string()))
            })?;
            let stripped = line_end::strip(&parsed, b'\n').map_err(BuildError::Invalid)?;
            if plain && case_insensitive && pattern.len() <= SPELLED_OUT_BYTES {
                fold::spelled_out(stripped)
            } else {
                stripped
            }
        };
        let config = meta::Config::new()
            .utf8_empty(false)
            .nfa_size_limit(Some(limits::PATTERN_PROGRAM_BYTES))
            .onepass_size_limit(Some(10 * (1 << 20)))
            .hybrid_cache_capacity(limits::PATTERN_CACHE_BYTES)
            .dfa(false)
            // One cache per walker thread (the engine would ask the system for the machine's
            // cores again).
            .pool_capacity(super::walker_threads());
        let regex = meta::Builder::new().configure(config).build_from_hir(&hir).map_err(|e| {
            if e.size_limit().is_some() {
                BuildError::TooLarge
            } else {
                BuildError::Invalid(e.to_string())
            }
        })?;
        let anchored = hir.properties().look_set().contains_anchor_haystack();
        let fast_line = if plain { None } else { required::of(&hir).and_then(strings_first) };
        Ok(Self {
            fast_line,
            regex,
            line_terminator: (!anchored).then(|| LineTerminator::byte(b'\n')),
            non_matching: line_end::never_matched(&hir, b'\n'),
        })
    }
}

/// A search for any of `strings` (the engine makes it a substring or multi-string search).
fn strings_first(strings: Vec<Vec<u8>>) -> Option<meta::Regex> {
    let any = Hir::alternation(strings.into_iter().map(Hir::literal).collect());
    let config =
        meta::Config::new().utf8_empty(false).dfa(false).pool_capacity(super::walker_threads());
    meta::Builder::new().configure(config).build_from_hir(&any).ok()
}

/// The haystack searched from `at` on (what comes before still counts for look-behind).
fn from(haystack: &[u8], at: usize) -> Input<'_> {
    let mut input = Input::new(haystack);
    input.set_start(at);
    input
}

/// grep-searcher's view of the matcher: the line terminator and the bytes never matched let it
/// search line by line, and the candidate lines come from the required strings when there are.
impl Matcher for LineMatcher {
    type Captures = NoCaptures;
    type Error = NoError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, NoError> {
        let found = self.regex.find(from(haystack, at));
        Ok(found.map(|m| Match::new(m.range().start, m.range().end)))
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, NoError> {
        let end = self.regex.search_half(&from(haystack, at));
        Ok(end.map(|half| half.offset()))
    }

    /// No capture groups: grep_search reports whole matches only.
    fn new_captures(&self) -> Result<NoCaptures, NoError> {
        Ok(NoCaptures::new())
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        self.line_terminator
    }

    fn non_matching_bytes(&self) -> Option<&ByteSet> {
        Some(&self.non_matching)
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, NoError> {
        let Some(strings) = &self.fast_line else {
            return Ok(self.shortest_match(haystack)?.map(LineMatchKind::Confirmed));
        };
        Ok(strings.find(haystack).map(|hit| LineMatchKind::Candidate(hit.start())))
    }
}
