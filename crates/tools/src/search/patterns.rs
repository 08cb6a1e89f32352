//! grep_search's patterns, compiled with a ceiling: a 13-byte pattern compiled to about
//! 230 MiB, and 64 at once aborted `toolbelt mcp` (issue 35). A pattern is first refused by its
//! size (`toolbelt_core::limits::check_pattern`, nothing compiled), then compiled with the
//! program and cache limits of `toolbelt_core::limits`; either way the error names the limit.

use grep_matcher::{ByteSet, LineMatchKind, LineTerminator, Match, Matcher, NoCaptures, NoError};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use regex_automata::{Input, meta};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};
use toolbelt_core::limits;

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Checks the patterns when the call is built, compiling nothing: their price (the estimate
/// of `toolbelt_core::limits`, case folding included) and their syntax. The compile waits for
/// the call's turn among the costly calls (64 calls compiling at once took 510 MB, issue 35).
pub(super) fn check(
    pattern: &str,
    fixed: bool,
    case_sensitive: bool,
    exclude: Option<&str>,
) -> Result<(), String> {
    limits::check_pattern_with(pattern, fixed, !case_sensitive)?;
    if let Some(x) = exclude {
        limits::check_pattern_with(x, false, !case_sensitive)?;
        regex_syntax::Parser::new().parse(x).map_err(|e| {
            format!(
                "Invalid exclude regular expression pattern provided: {x}. Error: {}",
                one_line(&e.to_string())
            )
        })?;
    }
    if !fixed {
        // Upstream's message (the matcher's own says less).
        regex_syntax::Parser::new().parse(pattern).map_err(|e| {
            format!(
                "Invalid regular expression pattern provided: {pattern}. Error: {}",
                one_line(&e.to_string())
            )
        })?;
    }
    Ok(())
}

/// The search pattern's matcher and the exclude pattern, if any (after [`check`]).
pub(super) fn compile(
    pattern: &str,
    fixed: bool,
    case_sensitive: bool,
    exclude: Option<&str>,
) -> Result<(LineMatcher, Option<regex::Regex>), String> {
    check(pattern, fixed, case_sensitive, exclude)?;
    let exclude = match exclude {
        Some(x) => Some(
            regex::RegexBuilder::new(x)
                .case_insensitive(!case_sensitive)
                .size_limit(limits::PATTERN_PROGRAM_BYTES)
                .dfa_size_limit(limits::PATTERN_CACHE_BYTES)
                .build()
                .map_err(|e| match e {
                    regex::Error::CompiledTooBig(_) => limits::too_large(None),
                    e => format!(
                        "Invalid exclude regular expression pattern provided: {x}. Error: {}",
                        one_line(&e.to_string())
                    ),
                })?,
        ),
        None => None,
    };
    if let Some(folded) = Folded::new(pattern, fixed, case_sensitive) {
        return Ok((LineMatcher::Folded(folded?), exclude));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(!case_sensitive)
        .fixed_strings(fixed)
        .line_terminator(Some(b'\n'))
        .size_limit(limits::PATTERN_PROGRAM_BYTES)
        .dfa_size_limit(limits::PATTERN_CACHE_BYTES)
        .build(pattern)
        .map_err(|e| {
            let text = e.to_string();
            if text.contains("size limit") || text.contains("exceeds") {
                return limits::too_large(None);
            }
            format!(
                "Invalid regular expression pattern provided: {pattern}. Error: {}",
                one_line(&text)
            )
        })?;
    Ok((LineMatcher::Regex(matcher), exclude))
}

/// A search pattern's matcher: the regex crate's line matcher (grep-regex), or, for the most
/// common pattern of all, a word searched without regard to case, the same automaton built
/// without the full DFA grep-regex adds to it.
pub(crate) enum LineMatcher {
    Folded(Folded),
    Regex(RegexMatcher),
}

/// A pattern with no regex syntax (or `fixed_strings`) searched without regard to case, as
/// grep-regex builds it (the same translation, the same engine and limits) but for one
/// thing: grep-regex also determinizes the whole automaton up front (a full DFA of up to
/// 1,000 states, with a case-folded word of 25 letters 200 µs of a call's 600 µs compile),
/// where the lazy DFA the engine builds anyway finds a literal's matches after its
/// prefilter as fast. Case-sensitive words already skip the automaton in grep-regex.
pub(crate) struct Folded {
    regex: meta::Regex,
    /// Only the line terminator: a match never holds one (the pattern has none), which is
    /// all the searcher asks of this set.
    non_matching: ByteSet,
}

impl Folded {
    /// `None` when the pattern is not such a word.
    fn new(pattern: &str, fixed: bool, case_sensitive: bool) -> Option<Result<Self, String>> {
        let plain = fixed || !pattern.chars().any(regex_syntax::is_meta_character);
        if case_sensitive || !plain || pattern.contains('\n') {
            return None;
        }
        let built = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .case_insensitive(true)
            .build()
            .parse(&regex_syntax::escape(pattern))
            .map_err(|e| {
                format!(
                    "Invalid regular expression pattern provided: {pattern}. Error: {}",
                    one_line(&e.to_string())
                )
            })
            .and_then(|hir| {
                // grep-regex's configuration (its `to_regex`), without the full DFA.
                let config = meta::Config::new()
                    .utf8_empty(false)
                    .nfa_size_limit(Some(limits::PATTERN_PROGRAM_BYTES))
                    .onepass_size_limit(Some(10 * (1 << 20)))
                    .hybrid_cache_capacity(limits::PATTERN_CACHE_BYTES)
                    .dfa(false)
                    // One cache per walker thread (the engine would ask the system for the
                    // machine's cores again).
                    .pool_capacity(super::walker_threads());
                // A long pattern keeps its classes: the table is made once either way, and
                // the alternations take more memory than the classes (20,000 letters: +9 MB).
                let hir = if pattern.len() <= 256 { spelled_out(hir) } else { hir };
                meta::Builder::new()
                    .configure(config)
                    .build_from_hir(&hir)
                    .map_err(|_| limits::too_large(None))
            });
        let mut non_matching = ByteSet::empty();
        non_matching.add(b'\n');
        Some(built.map(|regex| Self { regex, non_matching }))
    }
}

/// The case-folded word with each letter's class that reaches past ASCII (`s` is `[Ssſ]`, `k`
/// is `[Kk\u{212A}]`) written as the alternation of its ASCII part and its other characters'
/// bytes: the same strings (UTF-8 is prefix-free, so the alternatives never compete), but the
/// engine compiles a class past ASCII through a UTF-8 automaton builder whose table (10,000
/// entries, 400 KB) is made and filled for each pattern: 100 of the 350 µs of a cold compile
/// of a word with an `s` or a `k`. A class with no ASCII part (`[Σςσ]`) is kept: an
/// alternation of single characters is folded back into a class.
fn spelled_out(hir: Hir) -> Hir {
    match hir.kind() {
        HirKind::Concat(parts) => Hir::concat(parts.iter().cloned().map(spelled_out).collect()),
        HirKind::Class(Class::Unicode(class)) if !class.is_ascii() => {
            let ascii = class.iter().filter(|r| r.start().is_ascii());
            let ascii = ClassUnicode::new(
                ascii.map(|r| ClassUnicodeRange::new(r.start(), r.end().min(char::from(0x7f)))),
            );
            let others: Vec<char> =
                class.iter().flat_map(|r| r.start().max('\u{80}')..=r.end()).take(5).collect();
            if ascii.ranges().is_empty() || others.len() > 4 {
                return hir;
            }
            let mut alternatives = vec![Hir::class(Class::Unicode(ascii))];
            for c in others {
                alternatives.push(Hir::literal(c.encode_utf8(&mut [0; 4]).as_bytes()));
            }
            Hir::alternation(alternatives)
        }
        _ => hir,
    }
}

impl Matcher for Folded {
    type Captures = NoCaptures;
    type Error = NoError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, NoError> {
        let input = Input::new(haystack).span(at..haystack.len());
        Ok(self.regex.find(input).map(|m| Match::new(m.start(), m.end())))
    }

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
        Some(LineTerminator::byte(b'\n'))
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, NoError> {
        Ok(self.shortest_match(haystack)?.map(LineMatchKind::Confirmed))
    }
}

/// Each method is the matcher's own: the searcher sees the one it would see alone.
impl Matcher for LineMatcher {
    type Captures = NoCaptures;
    type Error = NoError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, NoError> {
        match self {
            Self::Folded(m) => m.find_at(haystack, at),
            Self::Regex(m) => m.find_at(haystack, at),
        }
    }

    /// grep_search reads no capture groups.
    fn new_captures(&self) -> Result<NoCaptures, NoError> {
        Ok(NoCaptures::new())
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, NoError> {
        match self {
            Self::Folded(m) => m.shortest_match_at(haystack, at),
            Self::Regex(m) => m.shortest_match_at(haystack, at),
        }
    }

    fn non_matching_bytes(&self) -> Option<&ByteSet> {
        match self {
            Self::Folded(m) => m.non_matching_bytes(),
            Self::Regex(m) => m.non_matching_bytes(),
        }
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        match self {
            Self::Folded(m) => m.line_terminator(),
            Self::Regex(m) => m.line_terminator(),
        }
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, NoError> {
        match self {
            Self::Folded(m) => m.find_candidate_line(haystack),
            Self::Regex(m) => m.find_candidate_line(haystack),
        }
    }
}

#[cfg(test)]
mod tests {
    use grep_searcher::{SearcherBuilder, sinks::Lossy};
    use proptest::prelude::*;

    use super::*;

    /// grep-regex's matcher for the same call, as grep_search built it before.
    fn theirs(pattern: &str, fixed: bool) -> RegexMatcher {
        RegexMatcherBuilder::new()
            .case_insensitive(true)
            .fixed_strings(fixed)
            .line_terminator(Some(b'\n'))
            .size_limit(limits::PATTERN_PROGRAM_BYTES)
            .dfa_size_limit(limits::PATTERN_CACHE_BYTES)
            .build(pattern)
            .unwrap()
    }

    fn ours(pattern: &str, fixed: bool) -> Folded {
        Folded::new(pattern, fixed, false).unwrap().unwrap()
    }

    /// Every match from every start, the shortest match, and the lines a searcher reports.
    fn seen<M: Matcher<Error = NoError>>(m: &M, hay: &[u8]) -> (Vec<Option<Match>>, Vec<String>) {
        let mut found = Vec::new();
        for at in 0..=hay.len() {
            found.push(m.find_at(hay, at).unwrap());
            found.push(m.shortest_match_at(hay, at).unwrap().map(|e| Match::new(0, e)));
        }
        let mut lines = Vec::new();
        SearcherBuilder::new()
            .line_number(true)
            .build()
            .search_slice(
                m,
                hay,
                Lossy(|n, line| {
                    lines.push(format!("{n}:{line}"));
                    Ok(true)
                }),
            )
            .unwrap();
        (found, lines)
    }

    /// Letters whose case folds across bytes and scripts (Kelvin sign, long s, sharp s,
    /// final sigma, a combining accent), bytes that are not UTF-8, and line ends.
    const PIECES: &[&str] = &[
        "k", "K", "\u{212A}", "s", "S", "\u{17F}", "ß", "\u{1E9E}", "ss", "σ", "Σ", "ς", "é", "É",
        "e\u{301}", "a", "b", ".", "*", " ", "\n", "\r\n", "ǅ", "ǆ", "Ǆ", "İ", "i", "ı",
    ];

    fn text(parts: &[usize]) -> String {
        parts.iter().map(|&i| PIECES[i % PIECES.len()]).collect()
    }

    #[test]
    fn only_a_case_folded_word_is_built_without_grep_regex() {
        assert!(Folded::new("getDirectoryContextString", false, false).is_some());
        assert!(Folded::new("a.b(c", true, false).is_some());
        assert!(Folded::new("getDirectoryContextString", false, true).is_none());
        assert!(Folded::new("get.*String", false, false).is_none());
        assert!(Folded::new("two\nlines", true, false).is_none());
        let (m, _) = compile("getDirectoryContextString", false, false, None).unwrap();
        assert!(matches!(m, LineMatcher::Folded(_)));
        let (m, _) = compile("get.*String", false, false, None).unwrap();
        assert!(matches!(m, LineMatcher::Regex(_)));
    }

    /// The compile-time saving: no class past ASCII is left in a word of ASCII letters (the
    /// differential tests check that the strings matched stay the same).
    #[test]
    fn letters_folding_past_ascii_are_spelled_out() {
        fn folded(word: &str) -> Hir {
            let mut parser = regex_syntax::ParserBuilder::new();
            parser.case_insensitive(true).utf8(false);
            spelled_out(parser.build().parse(word).unwrap())
        }
        fn past_ascii(hir: &Hir) -> bool {
            match hir.kind() {
                HirKind::Class(Class::Unicode(c)) => !c.is_ascii(),
                HirKind::Concat(parts) | HirKind::Alternation(parts) => {
                    parts.iter().any(past_ascii)
                }
                _ => false,
            }
        }
        assert!(matches!(folded("s").kind(), HirKind::Alternation(_)));
        assert!(!past_ascii(&folded("getDirectoryContextString_kelvin")));
        // Nothing ASCII to keep apart: the class stays.
        assert!(past_ascii(&folded("σ")));
    }

    #[test]
    fn a_case_folded_word_matches_what_grep_regex_matched() {
        let hay = "x\nKelvin \u{212A}ELVIN kelvin\nſtring STRING\nÿþstring nothing\n".as_bytes();
        let mut hay = hay.to_vec();
        hay.extend_from_slice(b"bytes \xff\xfe STRING\n");
        for (pattern, fixed) in [("kelvin", false), ("string", false), ("g s", true), ("a.b", true)]
        {
            assert_eq!(
                seen(&ours(pattern, fixed), &hay),
                seen(&theirs(pattern, fixed), &hay),
                "{pattern}"
            );
        }
        let (_, lines) = seen(&ours("kelvin", false), &hay);
        assert_eq!(lines, ["2:Kelvin \u{212A}ELVIN kelvin\n"]);
        // A long word keeps its classes (not spelled out).
        let long = "\u{212A}elvin ſtring ".repeat(20);
        let hay = format!("a\n{}\n{}\nb\n", long.to_uppercase(), long.replace('\u{212A}', "k"));
        let (_, lines) = seen(&ours(&long, false), hay.as_bytes());
        assert_eq!(lines.len(), 2);
        assert_eq!(
            seen(&ours(&long, false), hay.as_bytes()),
            seen(&theirs(&long, false), hay.as_bytes())
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn random_words_match_as_grep_regex_matched_them(
            word in proptest::collection::vec(0usize..100, 1..5),
            hay in proptest::collection::vec(0usize..100, 0..30),
            bad in proptest::collection::vec(any::<u8>(), 0..4),
            fixed in any::<bool>(),
        ) {
            let word: String = text(&word).replace(['\n', '\r'], "");
            prop_assume!(!word.is_empty() && (fixed || !word.chars().any(regex_syntax::is_meta_character)));
            let mut hay = text(&hay).into_bytes();
            let at = hay.len() / 2;
            hay.splice(at..at, bad);
            prop_assert_eq!(seen(&ours(&word, fixed), &hay), seen(&theirs(&word, fixed), &hay));
        }
    }
}
