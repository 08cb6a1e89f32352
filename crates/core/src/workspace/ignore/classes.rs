//! Git's character classes (`[[:digit:]]`, `[![:space:]]`, ...), which the `ignore` crate's
//! matcher does not know (it reads `[[:digit:]]` as a set of `[`, `:`, `d`, ... followed by a
//! `]`, so the rule hid nothing), spelled out as the ranges git matches. A class git does not
//! know makes its whole bracket expression `?`: any one character (git would match nothing,
//! but a rule meant to hide must not fail open).

use std::borrow::Cow;

/// `rule` with the classes in its bracket expressions spelled out.
pub(super) fn spell_out(rule: &str) -> Cow<'_, str> {
    if !rule.contains("[:") {
        return Cow::Borrowed(rule);
    }
    let mut out = String::with_capacity(rule.len() + 16);
    let mut rest = rule;
    while let Some(c) = rest.chars().next() {
        let len = match c {
            // An escape and what it escapes.
            '\\' => 1 + rest[1..].chars().next().map_or(0, char::len_utf8),
            '[' => match bracket(rest) {
                Some((spelled, len)) => {
                    out.push_str(&spelled);
                    rest = &rest[len..];
                    continue;
                }
                None => 1,
            },
            _ => c.len_utf8(),
        };
        out.push_str(&rest[..len]);
        rest = &rest[len..];
    }
    Cow::Owned(out)
}

/// The bracket expression `s` starts with, its classes spelled out, and its length in `s`;
/// `None` when it holds no class or is not closed.
fn bracket(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut out = String::from("[");
    let mut i = 1;
    if matches!(b.get(i), Some(b'!' | b'^')) {
        out.push(char::from(b[i]));
        i += 1;
    }
    // A `]` first is one of the set.
    if b.get(i) == Some(&b']') {
        out.push(']');
        i += 1;
    }
    let (mut classes, mut unknown) = (0, false);
    while i < b.len() {
        if b[i] == b']' {
            out.push(']');
            let spelled = if unknown { "?".to_owned() } else { out };
            return (classes > 0).then_some((spelled, i + 1));
        }
        if s[i..].starts_with("[:")
            && let Some(end) = s[i + 2..].find(":]")
        {
            match range(&s[i + 2..i + 2 + end]) {
                Some(r) => out.push_str(r),
                None => unknown = true,
            }
            classes += 1;
            i += end + 4;
            continue;
        }
        let len =
            if b[i] == b'\\' { 1 + s[i + 1..].chars().next().map_or(0, char::len_utf8) } else { 0 };
        let len = len.max(s[i..].chars().next()?.len_utf8());
        out.push_str(&s[i..i + len]);
        i += len;
    }
    None
}

/// The characters of a class as ranges (none starting with `!` or `^`, which would negate the
/// set when first in it).
fn range(class: &str) -> Option<&'static str> {
    Some(match class {
        "digit" => "0-9",
        "upper" => "A-Z",
        "lower" => "a-z",
        "alpha" => "a-zA-Z",
        "alnum" => "a-zA-Z0-9",
        "xdigit" => "0-9A-Fa-f",
        "blank" => " \t",
        "space" => " \t\n\r\u{b}\u{c}",
        "punct" => ":-@\"-/!\\[-`{-~",
        "graph" => "\"-~!",
        "print" => " -~",
        "cntrl" => "\u{1}-\u{1f}\u{7f}",
        _ => return None,
    })
}
