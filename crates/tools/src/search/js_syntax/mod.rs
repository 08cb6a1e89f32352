//! Upstream checks grep_search's patterns with JavaScript's `new RegExp(pattern)` before it runs
//! ripgrep, and the model reads that check's message (`Invalid regular expression: /foo(/:
//! Unterminated group`). This is that check: the ECMAScript pattern grammar as V8 reads it
//! without flags (Annex B: a `{` that is no quantifier, a lone `]` or `}`, an unknown escape are
//! text), reporting the first error with V8's words. A pattern it accepts is still compiled by
//! the matcher, as upstream then hands it to ripgrep (issue 48, S4).

/// V8's message for the first error in `pattern`, or `None` when JavaScript accepts it.
pub(super) fn error(pattern: &str) -> Option<&'static str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut p = Parser {
        named: has_named_groups(&chars),
        chars,
        at: 0,
        names: Vec::new(),
        refs: Vec::new(),
    };
    // Names are judged once the whole pattern has parsed: a repeated name, then a reference
    // to a name no group has.
    p.disjunction(0).err().or_else(|| {
        let mut names = p.names.clone();
        names.sort();
        names.dedup();
        if names.len() < p.names.len() {
            return Some("Duplicate capture group name");
        }
        p.refs.iter().any(|r| !p.names.contains(r)).then_some("Invalid named capture referenced")
    })
}

/// Whether the pattern names a group anywhere: only then is `\k` a reference (V8 looks ahead
/// for `(?<` that opens no lookbehind, outside classes and escapes).
fn has_named_groups(chars: &[char]) -> bool {
    let (mut i, mut in_class) = (0, false);
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => in_class = true,
            ']' => in_class = false,
            '(' if !in_class
                && chars.get(i + 1) == Some(&'?')
                && chars.get(i + 2) == Some(&'<')
                && !matches!(chars.get(i + 3), Some('=' | '!')) =>
            {
                return true;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

type Step = Result<(), &'static str>;

/// What the term before a quantifier was.
#[derive(Clone, Copy, PartialEq)]
enum Before {
    /// Nothing that can repeat: the start, `|`, `(`, or a quantifier already.
    Nothing,
    /// A character, class, group, escape or lookahead.
    Atom,
    /// `^`, `$`, `\b`, `\B`: a quantifier after one has nothing to repeat.
    Anchor,
    /// A lookbehind: V8 calls a quantifier after it invalid.
    Lookbehind,
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    named: bool,
    names: Vec<String>,
    refs: Vec<String>,
}

impl Parser {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek(0) == Some(c);
        self.at += usize::from(found);
        found
    }

    /// Alternatives up to the end (`depth` 0) or the `)` that closes the group being read.
    fn disjunction(&mut self, depth: usize) -> Step {
        let mut before = Before::Nothing;
        loop {
            let Some(c) = self.peek(0) else {
                return if depth > 0 { Err("Unterminated group") } else { Ok(()) };
            };
            if let Some(out_of_order) = self.quantifier() {
                before = match before {
                    Before::Nothing | Before::Anchor => return Err("Nothing to repeat"),
                    Before::Lookbehind => return Err("Invalid quantifier"),
                    Before::Atom if out_of_order => {
                        return Err("numbers out of order in {} quantifier");
                    }
                    Before::Atom => Before::Nothing,
                };
                continue;
            }
            self.at += 1;
            before = match c {
                '|' => Before::Nothing,
                ')' if depth == 0 => return Err("Unmatched ')'"),
                ')' => return Ok(()),
                '^' | '$' => Before::Anchor,
                '\\' => self.escape()?,
                '(' => self.group(depth)?,
                '[' => {
                    self.class()?;
                    Before::Atom
                }
                _ => Before::Atom,
            };
        }
    }

    /// A quantifier at the current place, consumed (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`,
    /// each perhaps followed by `?`), and whether its bounds are out of order; `None` when
    /// there is none (a `{` that is no quantifier is text).
    fn quantifier(&mut self) -> Option<bool> {
        let mut out_of_order = false;
        match self.peek(0) {
            Some('*' | '+' | '?') => self.at += 1,
            Some('{') => {
                let (end, low, high) = self.braces()?;
                out_of_order = high.is_some_and(|h| h < low);
                self.at = end;
            }
            _ => return None,
        }
        self.eat('?');
        Some(out_of_order)
    }

    /// `{n}`, `{n,}` or `{n,m}` at the current place: where it ends and its bounds (numbers
    /// compared as their digits say, however long).
    fn braces(&self) -> Option<(usize, Number, Option<Number>)> {
        let mut i = self.at + 1;
        let low = self.number(&mut i)?;
        let high = match self.chars.get(i) {
            Some('}') => Some(low.clone()),
            Some(',') => {
                i += 1;
                if self.chars.get(i) == Some(&'}') { None } else { Some(self.number(&mut i)?) }
            }
            _ => return None,
        };
        (self.chars.get(i) == Some(&'}')).then(|| (i + 1, low, high))
    }

    fn number(&self, i: &mut usize) -> Option<Number> {
        let start = *i;
        while self.chars.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
        (*i > start).then(|| Number::of(&self.chars[start..*i]))
    }

    /// After `\`.
    fn escape(&mut self) -> Result<Before, &'static str> {
        let Some(c) = self.peek(0) else { return Err("\\ at end of pattern") };
        self.at += 1;
        match c {
            'b' | 'B' => Ok(Before::Anchor),
            'k' if self.named => {
                if !self.eat('<') {
                    return Err("Invalid named reference");
                }
                let name = self.group_name()?;
                self.refs.push(name);
                Ok(Before::Atom)
            }
            _ => Ok(Before::Atom),
        }
    }

    /// After `(`: the group's kind, then its alternatives up to its `)`.
    fn group(&mut self, depth: usize) -> Result<Before, &'static str> {
        let mut kind = Before::Atom;
        if self.eat('?') {
            match (self.peek(0), self.peek(1)) {
                (Some(':' | '=' | '!'), _) => self.at += 1,
                (Some('<'), Some('=' | '!')) => {
                    self.at += 2;
                    kind = Before::Lookbehind;
                }
                (Some('<'), _) => {
                    self.at += 1;
                    let name = self.group_name()?;
                    self.names.push(name);
                }
                _ => return Err("Invalid group"),
            }
        }
        self.disjunction(depth + 1)?;
        Ok(kind)
    }

    /// A group name and its closing `>`.
    fn group_name(&mut self) -> Result<String, &'static str> {
        const BAD: &str = "Invalid capture group name";
        let mut name = String::new();
        loop {
            match self.peek(0) {
                Some('>') if !name.is_empty() => {
                    self.at += 1;
                    return Ok(name);
                }
                Some(c) if c == '$' || c == '_' || c.is_alphabetic() => name.push(c),
                Some(c)
                    if !name.is_empty()
                        && (c.is_alphanumeric() || "\u{200c}\u{200d}".contains(c)) =>
                {
                    name.push(c);
                }
                _ => return Err(BAD),
            }
            self.at += 1;
        }
    }

    /// After `[`: the class up to its `]`, each range in order.
    fn class(&mut self) -> Step {
        self.eat('^');
        loop {
            let Some(first) = self.class_atom()? else { return Ok(()) };
            if self.peek(0) == Some('-') && !matches!(self.peek(1), Some(']') | None) {
                self.at += 1;
                let Some(last) = self.class_atom()? else { return Ok(()) };
                if let (Some(a), Some(b)) = (first, last)
                    && a > b
                {
                    return Err("Range out of order in character class");
                }
            }
        }
    }

    /// One member of a class: `Ok(None)` at its closing `]`; `Some(None)` for a class escape
    /// (`\d`), which stands in no range's order.
    fn class_atom(&mut self) -> Result<Option<Option<u32>>, &'static str> {
        let Some(c) = self.peek(0) else { return Err("Unterminated character class") };
        self.at += 1;
        match c {
            ']' => Ok(None),
            '\\' => {
                let Some(e) = self.peek(0) else { return Err("\\ at end of pattern") };
                self.at += 1;
                if e == 'k' && self.named {
                    return Err("Invalid escape");
                }
                Ok(Some(self.class_escape(e)))
            }
            c => Ok(Some(Some(u32::from(c)))),
        }
    }

    /// The character an escape in a class stands for (`None`: a class of its own).
    fn class_escape(&mut self, e: char) -> Option<u32> {
        match e {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => None,
            'b' => Some(8),
            't' => Some(9),
            'n' => Some(10),
            'v' => Some(11),
            'f' => Some(12),
            'r' => Some(13),
            'c' => match self.peek(0) {
                Some(l) if l.is_ascii_alphanumeric() || l == '_' => {
                    self.at += 1;
                    Some(u32::from(l) % 32)
                }
                _ => Some(u32::from('\\')),
            },
            'x' => self.hex(2).or(Some(u32::from('x'))),
            'u' => self.hex(4).or(Some(u32::from('u'))),
            '0'..='7' => {
                // Annex B: up to three octal digits, at most \377.
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek(0).and_then(|d| d.to_digit(8)) {
                        Some(d) if v * 8 + d <= 0o377 => {
                            v = v * 8 + d;
                            self.at += 1;
                        }
                        _ => break,
                    }
                }
                Some(v)
            }
            other => Some(u32::from(other)),
        }
    }

    /// `n` hexadecimal digits at the current place, consumed when all are there.
    fn hex(&mut self, n: usize) -> Option<u32> {
        let digits: String = self.chars.get(self.at..self.at + n)?.iter().collect();
        let v = u32::from_str_radix(&digits, 16)
            .ok()
            .filter(|_| digits.chars().all(|c| c.is_ascii_hexdigit()))?;
        self.at += n;
        Some(v)
    }
}

/// A quantifier's bound as written: compared by length, then digit by digit (leading zeros
/// dropped), so that `{99999999999999999999,1}` is out of order as V8 says.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Number(usize, Vec<char>);

impl Number {
    fn of(digits: &[char]) -> Self {
        let start = digits.iter().position(|d| *d != '0').unwrap_or(digits.len());
        Self(digits.len() - start, digits[start..].to_vec())
    }
}

#[cfg(test)]
mod tests;
