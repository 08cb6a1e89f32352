//! The matcher against grep-regex's (a dev-dependency: the matcher grep_search used before),
//! on the same calls: every match from every offset, the shortest matches, the lines a
//! searcher reports, the line terminator, and whether the pattern compiles at all.

use grep_matcher::{LineTerminator, Match, Matcher, NoError};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{SearcherBuilder, sinks::Lossy};
use proptest::prelude::*;
use regex_syntax::hir::{Class, Hir, HirKind};

use super::{LineMatcher, fold::spelled_out};
use toolbelt_core::limits;

/// grep-regex's matcher for the same call, as grep_search built it before.
fn theirs(pattern: &str, fixed: bool, case_insensitive: bool) -> Option<RegexMatcher> {
    RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .fixed_strings(fixed)
        .line_terminator(Some(b'\n'))
        .size_limit(limits::PATTERN_PROGRAM_BYTES)
        .dfa_size_limit(limits::PATTERN_CACHE_BYTES)
        .build(pattern)
        .ok()
}

fn ours(pattern: &str, fixed: bool, case_insensitive: bool) -> Option<LineMatcher> {
    LineMatcher::new(pattern, fixed, case_insensitive).ok()
}

type Seen = (Vec<Option<Match>>, Vec<String>, Option<LineTerminator>, bool);

/// Every match from every start, the shortest match, the lines a searcher reports, the line
/// terminator, and whether `\n` can be in a match.
fn seen<M: Matcher<Error = NoError>>(m: &M, hay: &[u8]) -> Seen {
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
    let newline_free = m.non_matching_bytes().is_some_and(|s| s.contains(b'\n'));
    (found, lines, m.line_terminator(), newline_free)
}

fn same(pattern: &str, fixed: bool, case_insensitive: bool, hay: &[u8]) -> Result<(), String> {
    let (a, b) = (ours(pattern, fixed, case_insensitive), theirs(pattern, fixed, case_insensitive));
    match (a, b) {
        (None, None) => Ok(()),
        (Some(a), Some(b)) if seen(&a, hay) == seen(&b, hay) => Ok(()),
        (Some(a), Some(b)) => {
            Err(format!("{pattern:?}: {:?} vs {:?}", seen(&a, hay), seen(&b, hay)))
        }
        (a, b) => Err(format!("{pattern:?}: compiles {} vs {}", a.is_some(), b.is_some())),
    }
}

/// Letters whose case folds across bytes and scripts (Kelvin sign, long s, sharp s, final
/// sigma, a combining accent), line ends, and regex syntax: classes, repetitions, anchors,
/// word boundaries, groups, alternations, escapes of `\n`.
const PIECES: &[&str] = &[
    "k",
    "K",
    "\u{212A}",
    "s",
    "S",
    "\u{17F}",
    "ß",
    "\u{1E9E}",
    "ss",
    "σ",
    "Σ",
    "ς",
    "é",
    "É",
    "e\u{301}",
    "a",
    "b",
    " ",
    "\n",
    "\r\n",
    "ǅ",
    "İ",
    "i",
    "ı",
    ".",
    "*",
    "+",
    "?",
    "|",
    "^",
    "$",
    "\\b",
    "\\w",
    "\\s",
    "\\d",
    "[a-z]",
    "[^a]",
    "[\\n]",
    "\\n",
    "(",
    ")",
    "{1,2}",
    "\\A",
    "\\z",
    "(?m)",
    "(?s)",
    "[[:alpha:]]",
    "\\pL",
    "(?-u:\\w)",
    "\\xFF",
    "(?i)",
];

fn text(parts: &[usize]) -> String {
    parts.iter().map(|&i| PIECES[i % PIECES.len()]).collect()
}

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
            HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(past_ascii),
            _ => false,
        }
    }
    assert!(matches!(folded("s").kind(), HirKind::Alternation(_)));
    assert!(!past_ascii(&folded("getDirectoryContextString_kelvin")));
    // Nothing ASCII to keep apart: the class stays.
    assert!(past_ascii(&folded("σ")));
}

#[test]
fn words_and_regexes_match_what_grep_regex_matched() {
    let mut hay =
        "x\nKelvin \u{212A}ELVIN kelvin\nſtring STRING\nÿþstring nothing\n".as_bytes().to_vec();
    hay.extend_from_slice(b"bytes \xff\xfe STRING\r\nfn  main() {}\n\nend");
    let cases = [
        ("kelvin", false),
        ("string", false),
        ("g s", true),
        ("a.b", true),
        ("fn\\s+main", false),
        ("^\\w+$", false),
        ("\\Akelvin", false),
        ("string\\z", false),
        ("(?m)^end$", false),
        ("[^x]+", false),
        ("\\bS\\w+", false),
        ("STRING|kelvin", false),
    ];
    for (pattern, fixed) in cases {
        for ci in [false, true] {
            same(pattern, fixed, ci, &hay).unwrap();
        }
    }
    let lines = seen(&ours("kelvin", false, true).unwrap(), &hay).1;
    assert_eq!(lines, ["2:Kelvin \u{212A}ELVIN kelvin\n"]);
    // A long word keeps its classes (not spelled out).
    let long = "\u{212A}elvin ſtring ".repeat(20);
    let hay = format!("a\n{}\n{}\nb\n", long.to_uppercase(), long.replace('\u{212A}', "k"));
    assert_eq!(seen(&ours(&long, false, true).unwrap(), hay.as_bytes()).1.len(), 2);
    same(&long, false, true, hay.as_bytes()).unwrap();
}

#[test]
fn a_pattern_that_needs_a_line_end_is_refused_as_grep_regex_refused_it() {
    for (pattern, fixed) in [("a\\nb", false), ("a\nb", true), ("[\\n]", false)] {
        let ours = LineMatcher::new(pattern, fixed, false);
        let theirs = theirs(pattern, fixed, false);
        assert!(theirs.is_none(), "{pattern:?}");
        match ours {
            Err(super::BuildError::Invalid(e)) => {
                assert_eq!(e, "the literal \"\\n\" is not allowed in a regex")
            }
            other => panic!("{pattern:?}: {other:?}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]
    #[test]
    fn random_patterns_match_as_grep_regex_matched_them(
        pattern in proptest::collection::vec(0usize..1000, 1..6),
        hay in proptest::collection::vec(0usize..1000, 0..24),
        bad in proptest::collection::vec(any::<u8>(), 0..4),
        fixed in any::<bool>(),
        case_insensitive in any::<bool>(),
    ) {
        let pattern = text(&pattern);
        let mut hay = text(&hay).into_bytes();
        let at = hay.len() / 2;
        hay.splice(at..at, bad);
        prop_assert_eq!(same(&pattern, fixed, case_insensitive, &hay), Ok(()));
    }
}

/// A helper's attack on the first version of this matcher, which left grep-regex's inner
/// literals out: these patterns ran 15–450× slower than with grep-regex (`\w+Handler\b` on
/// text with Chinese comments, where the lazy DFA gives up at the first non-ASCII byte;
/// `.{3000}Handler`, too big for its cache; alternations of inner literals).
#[test]
fn a_pattern_the_engine_cannot_speed_up_has_its_inner_literals_searched_first() {
    for p in
        ["\\w+Handler\\b", "\\b\\w*Error\\b", ".{3000}Handler", "\\w*a\\w{20}QQQ|\\w*a\\w{20}RRR"]
    {
        assert!(LineMatcher::new(p, false, false).unwrap().fast_line.is_some(), "{p}");
    }
    // The engine finds a plain word by itself.
    assert!(
        LineMatcher::new("getDirectoryContextString", false, true).unwrap().fast_line.is_none()
    );
}
