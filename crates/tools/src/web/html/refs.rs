//! Character references (`&amp;`, `&#65;`, `&#x41;`) turned into the characters they stand
//! for, as upstream's parser reads them:
//!
//! - a name is the longest one of the HTML list that the text goes on with; in text the names
//!   the list also allows without `;` count without it (`&copy2` is `©2`), in an attribute
//!   value only names ending in `;` do;
//! - a number is decimal, or hexadecimal after `x`/`X`; in text it may end without `;`, in an
//!   attribute value it must end with one; a number with no digit stays as it is written;
//! - `&&amp;` is `&&`: the second `&` starts the reference.

use super::entities;

/// Where a text was: references read more loosely in text (and a title) than in attributes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Text,
    Attribute,
}

/// How a text ended, for a page that ends inside it: what was open at its end.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Open {
    /// Nothing, or a name (which was finished as well as it could be).
    Nothing,
    /// A `&` or a `&#`.
    Start,
    /// A number, with or without digits yet.
    Number { hex: bool, digits: bool },
}

/// Where decoding stopped: the text after `written` is not in the output yet, and `open` tells
/// what was open at the end.
pub struct Tail {
    pub written: usize,
    pub open: Open,
}

/// What a reference at a `&` came to.
enum Found {
    /// Text to put in place of `&` … `end`.
    Text(&'static str, usize),
    Char(char, usize),
    /// Not a reference: the text stays; the next `&` is looked for from `from`.
    No {
        from: usize,
    },
    /// The text ended inside it.
    Cut(Open),
}

/// `raw` with its references decoded into `out`, except the text after the last reference
/// (`raw[tail.written..]`), which is left to the caller. `may_start(i)` says whether the `&`
/// at `i` may start a reference (a title's end tag being read says no).
pub fn decode(
    raw: &str,
    place: Place,
    out: &mut String,
    mut may_start: impl FnMut(usize) -> bool,
) -> Tail {
    let mut written = 0;
    let mut from = 0;
    while let Some(n) = memchr::memchr(b'&', &raw.as_bytes()[from..]) {
        let amp = from + n;
        if !may_start(amp) {
            from = amp + 1;
            continue;
        }
        let (text, end) = match reference(raw.as_bytes(), amp + 1, place) {
            Found::Text(text, end) => (Some(text), end),
            Found::Char(c, end) => {
                out.push_str(&raw[written..amp]);
                out.push(c);
                written = end;
                from = end;
                continue;
            }
            Found::No { from: next } => {
                from = next;
                continue;
            }
            Found::Cut(open) => return Tail { written, open },
        };
        out.push_str(&raw[written..amp]);
        out.extend(text);
        written = end;
        from = end;
    }
    Tail { written, open: Open::Nothing }
}

/// `raw` decoded in full (no page ends inside it).
pub fn decoded(raw: &str, place: Place) -> String {
    let mut out = String::with_capacity(raw.len());
    let tail = decode(raw, place, &mut out, |_| true);
    out.push_str(&raw[tail.written..]);
    out
}

/// The reference whose `&` is just before `at`.
fn reference(b: &[u8], at: usize, place: Place) -> Found {
    match b.get(at) {
        None => Found::Cut(Open::Start),
        // The first `&` is text; the second may start a reference.
        Some(b'&') => Found::No { from: at },
        Some(b'#') => number(b, at + 1, place),
        Some(_) => name(b, at, place),
    }
}

fn number(b: &[u8], at: usize, place: Place) -> Found {
    let Some(&first) = b.get(at) else { return Found::Cut(Open::Start) };
    let hex = first | 0x20 == b'x';
    let (radix, start) = if hex { (16, at + 1) } else { (10, at) };
    let mut value: u32 = 0;
    let mut end = start;
    while let Some(digit) = b.get(end).and_then(|&c| char::from(c).to_digit(radix)) {
        value = value.saturating_mul(radix).saturating_add(digit);
        end += 1;
    }
    let digits = end > start;
    let c = entities::replace_code_point(value);
    match b.get(end) {
        None if place == Place::Text && digits => Found::Char(c, end),
        None => Found::Cut(Open::Number { hex, digits }),
        Some(b';') if digits => Found::Char(c, end + 1),
        Some(b';') => Found::No { from: end + 1 },
        Some(_) if place == Place::Text && digits => Found::Char(c, end),
        Some(_) => Found::No { from: end },
    }
}

/// The longest name the text goes on with (see the module's text), looked up a byte at a time.
fn name(b: &[u8], at: usize, place: Place) -> Found {
    let mut names = entities::all();
    let mut best = None;
    for end in at..b.len() {
        let so_far = &b[at..=end];
        names = entities::narrow(names, so_far);
        if names.is_empty() {
            break;
        }
        let last = b[end];
        if let Some(text) = entities::exact(&names, so_far)
            && (place == Place::Text || last == b';')
        {
            best = Some((text, end + 1));
        }
        if last == b';' {
            break;
        }
    }
    match best {
        Some((text, end)) => Found::Text(text, end),
        None => Found::No { from: at },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_read_as_upstream_reads_them() {
        let text = |raw: &str| decoded(raw, Place::Text);
        let attr = |raw: &str| decoded(raw, Place::Attribute);
        assert_eq!(
            text("a &amp; b &lt;c&gt; &copy2 &notit; &notin; &amp"),
            "a & b <c> ©2 ¬it; ∉ &"
        );
        assert_eq!(attr("a &amp; b &copy2 &notin; &amp"), "a & b &copy2 ∉ &amp");
        assert_eq!(
            text("&#65;&#x42;&#X43 &#0;&#128;&#x110000;&#; &#x;"),
            "ABC \u{fffd}€\u{fffd}&#; &#x;"
        );
        assert_eq!(attr("&#65;&#66 &#x43"), "A&#66 &#x43");
        assert_eq!(text("a&&amp;b&"), "a&&b&");
        assert_eq!(text("&#99999999999999;"), "\u{fffd}");
    }

    #[test]
    fn a_text_cut_inside_a_reference_says_what_was_open() {
        for (raw, open) in [
            ("x&", Open::Start),
            ("x&#", Open::Start),
            ("x&#x", Open::Number { hex: true, digits: false }),
            ("x&#1", Open::Number { hex: false, digits: true }),
            ("x&am", Open::Nothing),
        ] {
            let mut out = String::new();
            let tail = decode(raw, Place::Attribute, &mut out, |_| true);
            assert_eq!((tail.written, tail.open), (0, open), "{raw}");
        }
        let mut out = String::new();
        let tail = decode("x&amp;y&#12", Place::Text, &mut out, |_| true);
        assert_eq!((out.as_str(), tail.written, tail.open), ("x&y\u{c}", 11, Open::Nothing));
    }
}
