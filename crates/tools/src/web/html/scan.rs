//! The page cut into what upstream's parser (htmlparser2 8, HTML mode) sees in it: texts,
//! start and end tags, and the rest (comments, doctypes, processing instructions, CDATA).
//!
//! The page is read a construct at a time: text runs to the next `<`, and what follows the `<`
//! decides what comes next. A `<` that starts nothing is text. Four elements hold raw text up
//! to their end tag: `script` and `style` (as it is) and `title` (with its references decoded).
//!
//! A page can end anywhere. What upstream makes of a construct cut short is kept, quirks
//! included: a cut comment is a comment if it holds anything, a cut declaration is the text
//! after `<!`, a cut `<script` or `<title` name is text, a tag cut after its name has had its
//! name seen (it closes what it implies) but makes no element, and a few cuts leave the page's
//! last character as text.

use std::ops::{ControlFlow, Range};

use super::refs::{self, Open, Place};

/// What the scanner reports.
pub enum Token<'a> {
    /// Text of the page as it is (no reference in it, or none to decode).
    Raw(Range<usize>),
    /// Text made from the page: references decoded, or a last character.
    Made(String),
    /// A start tag. `name` as written; `attrs` (name, value as written) only where the tag
    /// got that far.
    Start { name: &'a str, attrs: &'a [Attr<'a>], end: TagEnd },
    /// An end tag, its name as written.
    End(&'a str),
    /// A comment, declaration, processing instruction or CDATA section.
    Other,
}

/// How a start tag ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TagEnd {
    /// `>`.
    Open,
    /// `/>`.
    SelfClosing,
    /// The page ended after its name.
    Cut,
}

/// An attribute as written: its name and its value (references not decoded yet).
#[derive(Clone, Copy)]
pub struct Attr<'a> {
    pub name: &'a str,
    pub value: &'a str,
}

/// HTML's white space, as upstream's tokenizer has it.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\t' | 0x0c | b'\r')
}

/// Reports the tokens of `page` to `sink` in order, until it breaks.
pub fn scan(page: &str, mut sink: impl FnMut(Token<'_>) -> ControlFlow<()>) {
    let mut scanner = Scanner { page, b: page.as_bytes(), attrs: Vec::new() };
    let _ = scanner.run(&mut sink);
}

struct Scanner<'p> {
    page: &'p str,
    b: &'p [u8],
    /// The attributes of the tag being read (one buffer for every tag).
    attrs: Vec<Attr<'p>>,
}

/// What a `<` turned out to start.
enum After {
    /// Nothing: the `<` is text.
    Text,
    /// A construct, handed to the sink; the page goes on at this index.
    Next(usize),
    /// A construct the page ended in, handed to the sink.
    End,
}

type Flow = ControlFlow<()>;

impl<'p> Scanner<'p> {
    fn run(&mut self, sink: &mut impl FnMut(Token<'_>) -> Flow) -> Flow {
        // Where the text being gathered starts, and where the next `<` is looked for.
        let (mut text, mut from) = (0, 0);
        while let Some(n) = memchr::memchr(b'<', &self.b[from..]) {
            let lt = from + n;
            self.text(text..lt, sink)?;
            match self.markup(lt, sink)? {
                After::Text => (text, from) = (lt, lt + 1),
                After::Next(next) => (text, from) = (next, next),
                After::End => return ControlFlow::Continue(()),
            }
        }
        self.text_to_end(text, sink)
    }

    /// Text that ends before a tag: its references decoded.
    fn text(&self, at: Range<usize>, sink: &mut impl FnMut(Token<'_>) -> Flow) -> Flow {
        if at.is_empty() {
            return ControlFlow::Continue(());
        }
        let raw = &self.page[at.clone()];
        if !raw.contains('&') {
            return sink(Token::Raw(at));
        }
        sink(Token::Made(refs::decoded(raw, Place::Text)))
    }

    /// The page's last text, to its end: a `&#x` left open there loses the text since the
    /// last reference (upstream ends in a state that writes nothing).
    fn text_to_end(&self, start: usize, sink: &mut impl FnMut(Token<'_>) -> Flow) -> Flow {
        let raw = &self.page[start..];
        if raw.is_empty() {
            return ControlFlow::Continue(());
        }
        if !raw.contains('&') {
            return sink(Token::Raw(start..self.b.len()));
        }
        let mut out = String::with_capacity(raw.len());
        let tail = refs::decode(raw, Place::Text, &mut out, |_| true);
        if tail.open != (Open::Number { hex: true, digits: false }) {
            out.push_str(&raw[tail.written..]);
        }
        if out.is_empty() { ControlFlow::Continue(()) } else { sink(Token::Made(out)) }
    }

    /// The text from `start` to the page's end as it is, if any.
    fn rest(&self, start: usize, sink: &mut impl FnMut(Token<'_>) -> Flow) -> Flow {
        if start < self.b.len() {
            sink(Token::Raw(start..self.b.len()))?;
        }
        ControlFlow::Continue(())
    }

    /// The page's last UTF-16 unit as text (upstream keeps it where it has no text section
    /// left at a cut): half of a character past U+FFFF is U+FFFD.
    fn last_unit(&self, sink: &mut impl FnMut(Token<'_>) -> Flow) -> Flow {
        match self.page.chars().next_back() {
            Some(c) if c.len_utf16() == 1 => {
                sink(Token::Raw(self.b.len() - c.len_utf8()..self.b.len()))
            }
            Some(_) => sink(Token::Made('\u{fffd}'.to_string())),
            None => ControlFlow::Continue(()),
        }
    }

    /// The first `>` at or after `from`.
    fn gt(&self, from: usize) -> Option<usize> {
        memchr::memchr(b'>', self.b.get(from..)?).map(|n| from + n)
    }

    /// What starts at the `<` at `lt`.
    fn markup(
        &mut self,
        lt: usize,
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> ControlFlow<(), After> {
        let b = self.b;
        let after = match b.get(lt + 1) {
            Some(b'!') => self.bang(lt + 2, sink)?,
            Some(b'?') => self.until_gt(lt + 2, lt + 2, sink)?,
            Some(b'/') => self.end_tag(lt, sink)?,
            Some(c) if c.is_ascii_alphabetic() => self.start_tag(lt + 1, sink)?,
            _ => After::Text,
        };
        ControlFlow::Continue(after)
    }

    /// A construct that ends at the first `>` from `search` (a declaration, a processing
    /// instruction, a bogus comment); cut, its text from `text` on is text.
    fn until_gt(
        &self,
        text: usize,
        search: usize,
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> ControlFlow<(), After> {
        ControlFlow::Continue(match self.gt(search) {
            Some(gt) => {
                sink(Token::Other)?;
                After::Next(gt + 1)
            }
            None => {
                self.rest(text, sink)?;
                After::End
            }
        })
    }

    /// A comment-like section whose body starts at `body` and which ends with `close`, looked
    /// for from `search` (a comment's `--` may be the ones of `<!--`: `<!-->` is a comment).
    fn commented(
        &self,
        body: usize,
        search: usize,
        close: &[u8],
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> ControlFlow<(), After> {
        ControlFlow::Continue(match memchr::memmem::find(&self.b[search..], close) {
            Some(n) => {
                sink(Token::Other)?;
                After::Next(search + n + close.len())
            }
            None => {
                if body < self.b.len() {
                    sink(Token::Other)?;
                }
                After::End
            }
        })
    }

    /// What follows `<!` (at `at`): a comment, CDATA, or a declaration. The character right
    /// after `<!` or `<!-` is passed over before a declaration's `>` is looked for.
    fn bang(&self, at: usize, sink: &mut impl FnMut(Token<'_>) -> Flow) -> ControlFlow<(), After> {
        let b = self.b;
        match (b.get(at), b.get(at + 1)) {
            (None, _) => ControlFlow::Continue(After::End),
            (Some(b'-'), Some(b'-')) => self.commented(at + 2, at, b"-->", sink),
            (Some(b'-'), None) => {
                self.rest(at, sink)?;
                ControlFlow::Continue(After::End)
            }
            (Some(b'-'), Some(_)) => self.until_gt(at, at + 2, sink),
            (Some(b'['), _) => {
                let word = b"CDATA[";
                for (i, &want) in word.iter().enumerate() {
                    match b.get(at + 1 + i) {
                        None => {
                            self.rest(at, sink)?;
                            return ControlFlow::Continue(After::End);
                        }
                        // The character that differs is where the declaration's `>` is
                        // looked for from.
                        Some(&c) if c != want => return self.until_gt(at, at + 1 + i, sink),
                        Some(_) => {}
                    }
                }
                let body = at + 1 + word.len();
                self.commented(body, body, b"]]>", sink)
            }
            (Some(_), _) => self.until_gt(at, at + 1, sink),
        }
    }

    /// `</…` at `lt`.
    fn end_tag(
        &self,
        lt: usize,
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> ControlFlow<(), After> {
        let b = self.b;
        let name = lt + 2 + b[lt + 2..].iter().take_while(|&&c| is_space(c)).count();
        ControlFlow::Continue(match b.get(name) {
            // Cut: the `</` and its spaces are text.
            None => {
                self.rest(lt, sink)?;
                After::End
            }
            // `</>` and `</ >` are text.
            Some(b'>') => After::Text,
            Some(c) if c.is_ascii_alphabetic() => {
                let len = b[name..].iter().take_while(|&&c| c != b'>' && !is_space(c)).count();
                if name + len == b.len() {
                    return ControlFlow::Continue(After::End);
                }
                sink(Token::End(&self.page[name..name + len]))?;
                self.past_gt(name + len, sink)?
            }
            Some(_) => self.until_gt(name, name + 1, sink)?,
        })
    }

    /// After an end tag's name: the rest up to `>` is passed over; cut, the page's last
    /// character is text.
    fn past_gt(
        &self,
        from: usize,
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> ControlFlow<(), After> {
        ControlFlow::Continue(match self.gt(from) {
            Some(gt) => After::Next(gt + 1),
            None => {
                self.last_unit(sink)?;
                After::End
            }
        })
    }

    /// A start tag whose name starts at `at`.
    fn start_tag(
        &mut self,
        at: usize,
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> ControlFlow<(), After> {
        let b = self.b;
        let len = b[at..].iter().take_while(|&&c| c != b'/' && c != b'>' && !is_space(c)).count();
        let name = &self.page[at..at + len];
        let raw = Raw::of(name);
        if at + len == b.len() {
            // Cut in its name: what could still be `script`, `style` or `title` is text.
            if Raw::could_be(name) {
                self.rest(at, sink)?;
            }
            return ControlFlow::Continue(After::End);
        }
        self.attrs.clear();
        let read = self.attributes(at + len);
        let end = read.as_ref().map_or(TagEnd::Cut, |(end, _)| *end);
        let attrs = std::mem::take(&mut self.attrs);
        let flow = sink(Token::Start { name, attrs: &attrs, end });
        self.attrs = attrs;
        flow?;
        ControlFlow::Continue(match read {
            Ok((TagEnd::Open, next)) => match raw {
                Some(raw) => self.raw_text(raw, next, sink)?,
                None => After::Next(next),
            },
            Ok((_, next)) => After::Next(next),
            Err(left) => {
                self.cut_in_tag(left, sink)?;
                After::End
            }
        })
    }

    /// The page ended inside a start tag, after its name: what is left of it as text.
    fn cut_in_tag(&self, left: Left, sink: &mut impl FnMut(Token<'_>) -> Flow) -> Flow {
        match left {
            Left::Nothing => ControlFlow::Continue(()),
            Left::LastUnit => self.last_unit(sink),
            Left::From(start) => self.rest(start, sink),
        }
    }

    /// The attributes from `at` (right after the name) into `self.attrs`, up to the tag's
    /// end: how it ended and where the page goes on, or what is left of a cut tag.
    fn attributes(&mut self, mut at: usize) -> Result<(TagEnd, usize), Left> {
        let (b, page) = (self.b, self.page);
        let skip = |at: usize| at + b[at..].iter().take_while(|&&c| is_space(c)).count();
        loop {
            at = skip(at);
            match b.get(at) {
                None => return Err(Left::Nothing),
                Some(b'>') => return Ok((TagEnd::Open, at + 1)),
                Some(b'/') => {
                    at = skip(at + 1);
                    match b.get(at) {
                        None => return Err(Left::LastUnit),
                        Some(b'>') => return Ok((TagEnd::SelfClosing, at + 1)),
                        // Read again as the start of an attribute.
                        Some(_) => continue,
                    }
                }
                Some(_) => {}
            }
            // A name: its first character whatever it is (`=` too), then up to `=`, a
            // space, `/` or `>`.
            let len = 1 + b[at + 1..]
                .iter()
                .take_while(|&&c| c != b'=' && c != b'/' && c != b'>' && !is_space(c))
                .count();
            let name = &page[at..at + len];
            at = skip(at + len);
            match b.get(at) {
                None => return Err(Left::Nothing),
                Some(b'=') => {}
                // No value: what follows is read again.
                Some(_) => {
                    self.attrs.push(Attr { name, value: "" });
                    continue;
                }
            }
            at = skip(at + 1);
            let value = match b.get(at) {
                None => return Err(Left::Nothing),
                Some(&quote @ (b'"' | b'\'')) => {
                    let start = at + 1;
                    let Some(n) = memchr::memchr(quote, &b[start..]) else {
                        return Err(cut_value(&page[start..], start));
                    };
                    at = start + n + 1;
                    start..start + n
                }
                Some(_) => {
                    let n = b[at..].iter().take_while(|&&c| c != b'>' && !is_space(c)).count();
                    if at + n == b.len() {
                        return Err(cut_value(&page[at..], at));
                    }
                    at += n;
                    at - n..at
                }
            };
            self.attrs.push(Attr { name, value: &page[value] });
        }
    }

    /// The raw text of `script`, `style` or `title` from `at`, then its end tag.
    fn raw_text(
        &self,
        raw: Raw,
        at: usize,
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> ControlFlow<(), After> {
        let body = &self.b[at..];
        let mut end = EndSearch::new(raw);
        let mut found = None;
        let mut i = 0;
        while i < body.len() {
            match end.step(body[i]) {
                Step::Ended => {
                    found = Some(i);
                    break;
                }
                Step::SkipToLt if !raw.decodes() => match memchr::memchr(b'<', &body[i + 1..]) {
                    Some(n) => {
                        i += n + 1;
                        end.at = 1;
                    }
                    None => break,
                },
                _ => {}
            }
            i += 1;
        }
        let Some(stop) = found else {
            // Cut: the rest is the element's text.
            self.raw_body(raw, at, self.b.len(), true, sink)?;
            return ControlFlow::Continue(After::End);
        };
        let text_end = at + stop - raw.end_tag().len();
        self.raw_body(raw, at, text_end, false, sink)?;
        sink(Token::End(&self.page[text_end + 2..at + stop]))?;
        self.past_gt(at + stop, sink)
    }

    /// The text of a raw-text element, `at..end`: a title's references decoded (but for a `&`
    /// read while its end tag seemed to begin).
    fn raw_body(
        &self,
        raw: Raw,
        at: usize,
        end: usize,
        cut: bool,
        sink: &mut impl FnMut(Token<'_>) -> Flow,
    ) -> Flow {
        let text = &self.page[at..end];
        if text.is_empty() {
            return ControlFlow::Continue(());
        }
        if !raw.decodes() || !text.contains('&') {
            return sink(Token::Raw(at..end));
        }
        let mut search = EndSearch::new(raw);
        let mut fed = 0;
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let tail = refs::decode(text, Place::Text, &mut out, |amp| {
            for &c in &bytes[fed..amp] {
                search.step(c);
            }
            fed = amp + 1;
            matches!(search.step(b'&'), Step::Reference)
        });
        if !(cut && tail.open == (Open::Number { hex: true, digits: false })) {
            out.push_str(&text[tail.written..]);
        }
        if out.is_empty() { ControlFlow::Continue(()) } else { sink(Token::Made(out)) }
    }
}

/// What is left as text of a tag the page ends in.
enum Left {
    Nothing,
    /// The page's last character (upstream had no text section left).
    LastUnit,
    /// The page from here on.
    From(usize),
}

/// What is left of an attribute value cut by the page's end (from `start` in the page): the
/// text after its last reference when it ends in an open `&`, `&#` or number.
fn cut_value(value: &str, start: usize) -> Left {
    let tail = refs::decode(value, Place::Attribute, &mut String::new(), |_| true);
    match tail.open {
        Open::Start | Open::Number { .. } => Left::From(start + tail.written),
        Open::Nothing => Left::Nothing,
    }
}

/// The elements whose text is raw.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Raw {
    Script,
    Style,
    Title,
}

impl Raw {
    fn of(name: &str) -> Option<Raw> {
        [("script", Raw::Script), ("style", Raw::Style), ("title", Raw::Title)]
            .into_iter()
            .find(|(n, _)| name.eq_ignore_ascii_case(n))
            .map(|(_, raw)| raw)
    }

    /// Whether a name cut by the page's end was still being read as one of these: upstream
    /// keeps such a name as text.
    fn could_be(name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        ["script", "style", "title"].iter().any(|n| n.starts_with(lower.as_str()))
    }

    fn end_tag(self) -> &'static [u8] {
        match self {
            Raw::Script => b"</script",
            Raw::Style => b"</style",
            Raw::Title => b"</title",
        }
    }

    fn decodes(self) -> bool {
        self == Raw::Title
    }
}

/// The search for a raw-text element's end tag, a byte at a time, as upstream's tokenizer runs
/// it: letters matched by setting bit 5 (so a byte 0x1C passes for `<` and 0x0F for `/`), the
/// whole name then `>` or a space.
struct EndSearch {
    raw: Raw,
    /// How many bytes of the end tag are matched.
    at: usize,
}

enum Step {
    Going,
    /// The end tag is complete: this byte is the `>` or space after it.
    Ended,
    /// Nothing matched: a script or style passes over to the next `<`.
    SkipToLt,
    /// A `&` with nothing matched: in a title, a reference may start.
    Reference,
}

impl EndSearch {
    fn new(raw: Raw) -> Self {
        EndSearch { raw, at: 0 }
    }

    fn step(&mut self, c: u8) -> Step {
        let seq = self.raw.end_tag();
        if self.at == seq.len() {
            if c == b'>' || is_space(c) {
                return Step::Ended;
            }
            self.at = 0;
        }
        if c | 0x20 == seq[self.at] {
            self.at += 1;
            Step::Going
        } else if self.at == 0 {
            match (self.raw.decodes(), c) {
                (true, b'&') => Step::Reference,
                (true, _) => Step::Going,
                (false, _) => Step::SkipToLt,
            }
        } else {
            self.at = usize::from(c == b'<');
            Step::Going
        }
    }
}
