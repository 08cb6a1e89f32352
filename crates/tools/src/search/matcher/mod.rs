//! grep_search's matcher: a pattern compiled for a search line by line, as grep-regex
//! configures one for ripgrep (the same translation, `\n` taken out of what can match, the
//! line terminator, the bytes no match holds), on regex-automata's engine without a full DFA.
//!
//! grep-regex asked for regex-automata's default features, `dfa-build` among them, and with
//! it every small regular expression in the process was determinized up front: a case-folded
//! word (200 µs of a cold compile) and the glob sets of every ignore file a walk reads (the
//! ten of the bench's ignore-heavy tree: 1.43 ms with it, 0.68 ms without). The lazy DFA finds
//! the same matches; nothing the search reports changes (`tests.rs` holds this matcher to
//! grep-regex's on random patterns and texts).
//!
//! Left out of grep-regex: what grep_search never asks for (smart case, whole words or lines,
//! multi-line, CRLF, banned bytes). Its "fast line regex" is kept ([`literal`]).

mod hir;
mod literal;
#[cfg(test)]
mod tests;

use grep_matcher::{ByteSet, LineMatchKind, LineTerminator, Match, Matcher, NoCaptures, NoError};
use regex_automata::{Input, meta};
use toolbelt_core::limits;

/// The longest case-folded word whose letters are spelled out (see [`hir::spelled_out`]).
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
    /// The literals a match must hold, when the engine would not look for them itself (see
    /// [`literal`]): lines without one are not searched.
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
            // grep-regex's fixed-string path: nothing to parse.
            regex_syntax::hir::Hir::literal(pattern.as_bytes())
        } else {
            let wrapped = if fixed {
                format!("(?:{})", regex_syntax::escape(pattern))
            } else {
                format!("(?:{pattern})")
            };
            let parsed = regex_syntax::ParserBuilder::new()
                .nest_limit(250)
                .octal(false)
                .utf8(false)
                .case_insensitive(case_insensitive)
                .unicode(true)
                .build()
                .parse(&wrapped)
                .map_err(|e| BuildError::Invalid(e.to_string()))?;
            let stripped = hir::strip_from_match(parsed, b'\n').map_err(BuildError::Invalid)?;
            if plain && case_insensitive && pattern.len() <= SPELLED_OUT_BYTES {
                hir::spelled_out(stripped)
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
        Ok(Self {
            fast_line: literal::InnerLiterals::new(&hir, &regex).one_regex(),
            regex,
            line_terminator: (!anchored).then(|| LineTerminator::byte(b'\n')),
            non_matching: hir::non_matching_bytes(&hir),
        })
    }
}

impl Matcher for LineMatcher {
    type Captures = NoCaptures;
    type Error = NoError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, NoError> {
        let input = Input::new(haystack).span(at..haystack.len());
        Ok(self.regex.find(input).map(|m| Match::new(m.start(), m.end())))
    }

    /// grep_search reads no capture groups.
    fn new_captures(&self) -> Result<NoCaptures, NoError> {
        Ok(NoCaptures::new())
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, NoError> {
        let input = Input::new(haystack).span(at..haystack.len());
        Ok(self.regex.search_half(&input).map(|m| m.offset()))
    }

    fn non_matching_bytes(&self) -> Option<&ByteSet> {
        Some(&self.non_matching)
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        self.line_terminator
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, NoError> {
        Ok(match &self.fast_line {
            Some(fast) => fast
                .search_half(&Input::new(haystack))
                .map(|m| LineMatchKind::Candidate(m.offset())),
            None => self.shortest_match(haystack)?.map(LineMatchKind::Confirmed),
        })
    }
}
