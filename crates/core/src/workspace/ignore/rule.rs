//! A rule of an ignore file as git reads it, spelled for the `ignore` crate's matcher, whose
//! glob syntax differs where a rule would otherwise hide less than git's: braces are plain
//! characters to git (the matcher took `{a,b}` for alternatives, and an unclosed one dropped
//! the line); in a bracket expression a backslash escapes, a `-` after a class and a range
//! running backwards are literal, and git's character classes (`[[:digit:]]`, ...) name sets
//! (the matcher knew none of this); a NUL ends the line. A class git does not know makes its
//! whole bracket expression `?` (git would match nothing, but a rule meant to hide must not
//! fail open), and so does a bracket expression that is not closed. A rule that is not UTF-8
//! ([`widen`]) or that the matcher still rejects ([`coarsen`]) is widened until it hides at
//! least what git's reading of it does.

use std::borrow::Cow;
use std::fmt::Write as _;

/// For `.geminiignore`, which upstream reads with node's `ignore` package: the other readings
/// of `rule` by which that package hides what git's reading does not (a leading space is
/// trimmed; `x/**/` hides everything below `x`; `!` and `^` after a `[` are plain), so that a
/// rule hides at least what it hides upstream. None for a negation or a comment (un-hiding
/// more than git would is not wanted).
pub(super) fn upstream_readings(rule: &str) -> Vec<String> {
    let mut readings = Vec::new();
    if rule.starts_with(['!', '#']) {
        return readings;
    }
    let trimmed = rule.trim_start_matches(' ');
    if trimmed.len() != rule.len() && !trimmed.is_empty() && !trimmed.starts_with(['!', '#']) {
        readings.push(trimmed.to_owned());
    }
    if let Some(stem) = rule.strip_suffix("/**/") {
        readings.push(format!("{stem}/**"));
    }
    if rule.contains("[!") || rule.contains("[^") {
        readings.push(rule.replace("[!", "[\\!").replace("[^", "[\\^"));
    }
    readings
}

/// `rule` as the matcher must read it to match what git matches.
pub(super) fn for_matcher(rule: &str) -> Cow<'_, str> {
    let rule = rule.split('\0').next().unwrap_or_default();
    if !rule.contains(['[', '{', '}']) {
        return Cow::Borrowed(rule);
    }
    let mut out = String::with_capacity(rule.len() + 16);
    let mut at = 0;
    while let Some(c) = rule[at..].chars().next() {
        at += c.len_utf8();
        match c {
            // An escape and what it escapes, as they are.
            '\\' => {
                out.push('\\');
                if let Some(escaped) = rule[at..].chars().next() {
                    out.push(escaped);
                    at += escaped.len_utf8();
                }
            }
            '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '[' => match bracket(&rule[at..]) {
                Some((set, used)) => {
                    out.push_str(&set);
                    at += used;
                }
                None => out.push('?'),
            },
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A rule that is not UTF-8, as a UTF-8 rule that hides at least what git's byte-wise match of
/// it hides (`None`: a comment, or a negation, which is passed over: un-hiding less). Each run
/// of bytes that are not UTF-8 becomes `*` (`caf\xe9.txt` hides `caf*.txt`); a segment with a
/// class or an escape, whose meaning a `*` inside could change, becomes `*` whole.
pub(super) fn widen(line: &[u8]) -> Option<String> {
    if matches!(line.first(), None | Some(b'#' | b'!')) {
        return None;
    }
    let segments = line.split(|b| *b == b'/').map(|segment| {
        if std::str::from_utf8(segment).is_ok() {
            return String::from_utf8_lossy(segment).into_owned();
        }
        if segment.contains(&b'[') || segment.contains(&b'\\') {
            return "*".to_owned();
        }
        let mut out = String::new();
        let mut chunks = segment.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            out.push_str(chunk.valid());
            let next_star = chunks.peek().is_some_and(|c| c.valid().starts_with('*'));
            if !chunk.invalid().is_empty() && !out.ends_with('*') && !next_star {
                out.push('*');
            }
        }
        out
    });
    Some(segments.collect::<Vec<_>>().join("/"))
}

/// `rule` with each segment that holds a bracket, brace or escape made `*`.
pub(super) fn coarsen(rule: &str) -> String {
    let special = |segment: &&str| segment.contains(['[', ']', '{', '}', '\\']);
    let segments = rule.split('/').map(|segment| if special(&segment) { "*" } else { segment });
    segments.collect::<Vec<_>>().join("/")
}

/// One member of a bracket expression.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Member {
    Char(char),
    Range(char, char),
}

/// The bracket expression after a `[` (`s`), as the matcher's syntax, and how many bytes of `s`
/// it used; `None` when it is not closed. A class git does not know makes it `?`.
fn bracket(s: &str) -> Option<(String, usize)> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let negated = matches!(chars.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut members: Vec<Member> = Vec::new();
    let mut unknown = false;
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        if c == '[' && chars.get(i + 1) == Some(&':') {
            let name_end = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == ':' && chars[j + 1] == ']');
            if let Some(end) = name_end {
                let name: String = chars[i + 2..end].iter().collect();
                match class(&name) {
                    Some(m) => members.extend_from_slice(m),
                    None => unknown = true,
                }
                i = end + 2;
                // A `-` after a class is itself (git starts no range there).
                continue;
            }
        }
        // The member's first character, an escaped one taken as it is.
        let (lo, next) = if c == '\\' { (*chars.get(i + 1)?, i + 2) } else { (c, i + 1) };
        i = next;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&d| d != ']') {
            let d = chars[i + 1];
            let (hi, next) = if d == '\\' { (*chars.get(i + 2)?, i + 3) } else { (d, i + 2) };
            i = next;
            // A range running backwards matches its start (as git's does).
            members.push(if lo <= hi { Member::Range(lo, hi) } else { Member::Char(lo) });
        } else {
            members.push(Member::Char(lo));
        }
    }
    let used = chars[..i].iter().map(|c| c.len_utf8()).sum();
    let set = if unknown { "?".to_owned() } else { spell(negated, &members) };
    Some((set, used))
}

/// A set in the matcher's syntax: special characters (`]`, `-`, `!`, `^`, `\`) are taken out of
/// ranges and written where they are plain (`]` first, `-` last or first, `!` and `^` never
/// first); a set of one character is that character, escaped. A set of only `!` and `^` has no
/// such spelling and is `?` (any one character: hiding more, never less).
fn spell(negated: bool, members: &[Member]) -> String {
    const SPECIAL: [char; 5] = ['!', '-', '\\', ']', '^']; // ascending
    let mut singles: Vec<char> = Vec::new();
    let mut ranges: Vec<(char, char)> = Vec::new();
    for m in members {
        match *m {
            Member::Char(c) => singles.push(c),
            Member::Range(lo, hi) => {
                // Peel special characters off the range into singles.
                let mut start = lo;
                for c in SPECIAL.iter().copied().filter(|&c| lo <= c && c <= hi) {
                    if start < c {
                        ranges.push((start, prev(c)));
                    }
                    singles.push(c);
                    start = next(c);
                }
                if start <= hi && start != '\u{0}' {
                    ranges.push((start, hi));
                }
            }
        }
    }
    singles.sort_unstable();
    singles.dedup();
    if !negated && ranges.is_empty() && singles.len() == 1 {
        return format!("\\{}", singles[0]);
    }
    let mut body = String::new();
    for (lo, hi) in &ranges {
        let _ = write!(body, "{lo}-{hi}");
    }
    body.extend(singles.iter().filter(|c| !matches!(c, ']' | '-' | '!' | '^')));
    body.extend(singles.iter().filter(|c| matches!(c, '!' | '^')));
    let (bracket, dash) = (singles.contains(&']'), singles.contains(&'-'));
    let open = if negated { "[!" } else { "[" };
    let bracket = if bracket { "]" } else { "" };
    // A `!` or `^` just after the opening `[` would negate the set.
    if negated || !bracket.is_empty() || !body.starts_with(['!', '^']) {
        let dash = if dash { "-" } else { "" };
        format!("{open}{bracket}{body}{dash}]")
    } else if dash {
        format!("{open}-{body}]")
    } else {
        "?".to_owned()
    }
}

fn prev(c: char) -> char {
    char::from_u32(u32::from(c) - 1).unwrap_or(c)
}

fn next(c: char) -> char {
    char::from_u32(u32::from(c) + 1).unwrap_or('\u{0}')
}

/// The members of one of git's character classes (ASCII, as git's matching in the C locale).
fn class(name: &str) -> Option<&'static [Member]> {
    use Member::{Char, Range};
    Some(match name {
        "digit" => &[Range('0', '9')],
        "upper" => &[Range('A', 'Z')],
        "lower" => &[Range('a', 'z')],
        "alpha" => &[Range('a', 'z'), Range('A', 'Z')],
        "alnum" => &[Range('a', 'z'), Range('A', 'Z'), Range('0', '9')],
        "xdigit" => &[Range('0', '9'), Range('A', 'F'), Range('a', 'f')],
        "blank" => &[Char(' '), Char('\t')],
        "space" => &[Range('\t', '\r'), Char(' ')],
        "punct" => &[Range('!', '/'), Range(':', '@'), Range('[', '`'), Range('{', '~')],
        "graph" => &[Range('!', '~')],
        "print" => &[Range(' ', '~')],
        "cntrl" => &[Range('\u{1}', '\u{1f}'), Char('\u{7f}')],
        _ => return None,
    })
}
