//! The layout upstream's converter gives elements (its default selectors, upstream's options): which
//! elements are blocks and with how many line breaks around them, headings in upper case,
//! lists with their markers, and links and images as web_fetch asks for them.

use super::dom::{Dom, Kind};
use super::text::Layout;

/// How links and images are written (upstream's two calls of `convert`).
#[derive(Clone, Copy)]
pub enum Links<'a> {
    /// The fallback of a prompt: link targets and images left out.
    Hidden,
    /// The page itself: `text [target]`, a target starting with `/` put after `base`; images
    /// as `alt [src]`.
    Shown { base: &'a str },
}

/// The text of the document: its `body` elements if it has any, else all of it; `None` if
/// its layout would cost too much (see `text::Layout`).
pub fn document(dom: &Dom, links: Links<'_>, max_text: usize, budget: usize) -> Option<String> {
    let mut bodies = Vec::new();
    find_bodies(dom, 0, &mut bodies);
    let start = if bodies.is_empty() { dom.children(0).collect() } else { bodies };
    let mut b = Layout::new(max_text, budget);
    walk(dom, start, &mut b, links);
    b.finish()
}

fn find_bodies(dom: &Dom, id: usize, found: &mut Vec<usize>) {
    for child in dom.children(id) {
        match dom.name(child) {
            Some("script" | "style") | None => {}
            Some("body") => found.push(child),
            Some(_) => find_bodies(dom, child, found),
        }
    }
}

fn walk(dom: &Dom, ids: impl IntoIterator<Item = usize>, b: &mut Layout, links: Links<'_>) {
    for id in ids {
        match &dom.nodes[id].kind {
            Kind::Slice(..) | Kind::Text(_) => b.text(dom.text(id).unwrap_or(""), true),
            Kind::Element { .. } => element(dom, id, dom.name(id).unwrap_or(""), b, links),
            Kind::Other => {}
        }
    }
}

fn children(dom: &Dom, id: usize, b: &mut Layout, links: Links<'_>) {
    walk(dom, dom.children(id), b, links);
}

fn element(dom: &Dom, id: usize, name: &str, b: &mut Layout, links: Links<'_>) {
    let block = |b: &mut Layout, leading, trailing| {
        b.begin_block(leading, false);
        children(dom, id, b, links);
        b.end_block(trailing, false);
    };
    match name {
        "script" | "style" | "wbr" => {}
        "a" => anchor(dom, id, b, links),
        "article" | "aside" | "div" | "footer" | "form" | "header" | "main" | "nav" | "section" => {
            block(b, 1, 1)
        }
        "blockquote" => {
            b.begin_block(2, false);
            children(dom, id, b, links);
            b.end_block(2, true);
        }
        "br" => b.line_break(),
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            b.begin_block(if matches!(name, "h1" | "h2" | "h3") { 3 } else { 2 }, false);
            b.upper_case(true);
            children(dom, id, b, links);
            b.upper_case(false);
            b.end_block(2, false);
        }
        "hr" => {
            b.begin_block(2, false);
            b.text(&"-".repeat(40), true);
            b.end_block(2, false);
        }
        "img" => {
            if let Links::Shown { .. } = links {
                image(dom, id, b);
            }
        }
        "ol" => {
            let mut next =
                js::number(dom.attr(id, "start").filter(|s| !s.is_empty()).unwrap_or("1"));
            let kind = dom.attr(id, "type").unwrap_or("1").to_owned();
            list(dom, id, b, links, &mut || {
                let index = js::list_index(next, &kind);
                next += 1.0;
                format!(" {index}. ")
            });
        }
        "ul" => list(dom, id, b, links, &mut || " * ".to_owned()),
        "p" | "table" => block(b, 2, 2),
        "pre" => {
            b.begin_block(2, true);
            children(dom, id, b, links);
            b.end_block(2, false);
        }
        _ => children(dom, id, b, links),
    }
}

fn anchor(dom: &Dom, id: usize, b: &mut Layout, links: Links<'_>) {
    let href = match links {
        Links::Hidden => String::new(),
        Links::Shown { base } => {
            let href = dom.attr(id, "href").unwrap_or("");
            let href = href.strip_prefix("mailto:").unwrap_or(href);
            if href.starts_with('#') { String::new() } else { rewrite(href, base) }
        }
    };
    if href.is_empty() {
        children(dom, id, b, links);
        return;
    }
    b.begin_link();
    children(dom, id, b, links);
    let text = b.end_link();
    b.text(&if text { format!(" [{href}]") } else { href }, false);
}

/// A path starting with `/` is put after `base` (its trailing `/`s cut), as html-to-text does
/// (whatever `base`'s own path is).
fn rewrite(path: &str, base: &str) -> String {
    if path.starts_with('/') && !base.is_empty() {
        format!("{}{path}", base.trim_end_matches('/'))
    } else {
        path.to_owned()
    }
}

fn image(dom: &Dom, id: usize, b: &mut Layout) {
    let alt = dom.attr(id, "alt").unwrap_or("");
    let src = dom.attr(id, "src").unwrap_or("");
    let text = match (alt.is_empty(), src.is_empty()) {
        (_, true) => alt.to_owned(),
        (true, false) => format!("[{src}]"),
        (false, false) => format!("{alt} [{src}]"),
    };
    b.text(&text, false);
}

/// A list. Its entries are its children other than white space text; an `li` among them is
/// marked (`marker` gives the next marker), anything else gets an empty marker. A list that
/// is the child of an `li` sits closer (single breaks around it) and its markers lose their
/// leading spaces.
fn list(
    dom: &Dom,
    id: usize,
    b: &mut Layout,
    links: Links<'_>,
    marker: &mut dyn FnMut() -> String,
) {
    let in_entry = id != 0 && dom.name(dom.parent(id)) == Some("li");
    let mut entries = Vec::new();
    for child in dom.children(id) {
        if dom.text(child).is_some_and(|t| t.chars().all(js::is_space)) {
            continue;
        }
        let mark = match dom.name(child) {
            Some("li") if in_entry => marker().trim_start_matches(js::is_space).to_owned(),
            Some("li") => marker(),
            _ => String::new(),
        };
        entries.push((child, mark));
    }
    let Some(width) = entries.iter().map(|(_, m)| m.chars().count()).max() else { return };
    let breaks = if in_entry { 1 } else { 2 };
    b.begin_list(breaks, width);
    for (child, mark) in entries {
        b.begin_entry(mark);
        walk(dom, [child], b, links);
        b.end_entry();
    }
    b.end_list(breaks);
}

/// JavaScript's reading and writing of numbers, for ordered lists' `start` and markers.
mod js {
    /// JavaScript's `\s` (and `trim`'s white space).
    pub fn is_space(c: char) -> bool {
        matches!(
            c,
            '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200a}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202f}'
                    | '\u{205f}'
                    | '\u{3000}'
                    | '\u{feff}'
        )
    }

    /// `Number(s)`.
    pub fn number(s: &str) -> f64 {
        let s = s.trim_matches(is_space);
        if s.is_empty() {
            return 0.0;
        }
        let radix = |p: &str, r: u32| {
            s.get(2..).filter(|d| !d.is_empty() && s[..2].eq_ignore_ascii_case(p)).map(|d| {
                // Exact while it fits, rounded once (as JavaScript does); past 128 bits,
                // rounded at each digit.
                let exact = d.chars().try_fold(0u128, |n, c| {
                    n.checked_mul(u128::from(r))?.checked_add(u128::from(c.to_digit(r)?))
                });
                #[allow(clippy::cast_precision_loss)]
                exact.map(|n| n as f64).or_else(|| {
                    d.chars().try_fold(0.0, |n, c| {
                        c.to_digit(r).map(|v| n * f64::from(r) + f64::from(v))
                    })
                })
            })
        };
        for (p, r) in [("0x", 16), ("0o", 8), ("0b", 2)] {
            if let Some(n) = radix(p, r) {
                return n.unwrap_or(f64::NAN);
            }
        }
        let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
        if unsigned == "Infinity" {
            return if s.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY };
        }
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
            None => (unsigned, None),
        };
        let digits = |d: &str| d.bytes().all(|c| c.is_ascii_digit());
        let mantissa_ok =
            mantissa.split_once('.').map_or(digits(mantissa) && !mantissa.is_empty(), |(a, b)| {
                digits(a) && digits(b) && !(a.is_empty() && b.is_empty())
            });
        let exponent_ok = exponent.is_none_or(|e| {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && digits(e)
        });
        if mantissa_ok && exponent_ok { s.parse().unwrap_or(f64::NAN) } else { f64::NAN }
    }

    /// `String(n)`.
    pub fn string(n: f64) -> String {
        if n.is_nan() {
            return "NaN".into();
        }
        if n.is_infinite() {
            return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
        }
        if n == 0.0 {
            return "0".into();
        }
        let a = n.abs();
        if (1e-6..1e21).contains(&a) {
            format!("{n}")
        } else {
            let e = format!("{n:e}");
            match e.split_once('e') {
                Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
                _ => e,
            }
        }
    }

    /// `ToInt32(n)`.
    fn int32(n: f64) -> f64 {
        if !n.is_finite() {
            return 0.0;
        }
        let m = n.trunc().rem_euclid(4_294_967_296.0);
        if m >= 2_147_483_648.0 { m - 4_294_967_296.0 } else { m }
    }

    /// `String.fromCharCode(n)` (a lone surrogate becomes U+FFFD).
    fn from_char_code(n: f64) -> char {
        let unit = if n.is_finite() { n.trunc().rem_euclid(65_536.0) } else { 0.0 };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        char::from_u32(unit as u32).unwrap_or('\u{fffd}')
    }

    /// An ordered list's marker for `n` and the list's `type`.
    pub fn list_index(n: f64, kind: &str) -> String {
        match kind {
            "a" => letters(n, 'a'),
            "A" => letters(n, 'A'),
            "i" => roman(n).to_lowercase(),
            "I" => roman(n),
            _ => string(n),
        }
    }

    /// Letter markers: `n` in base 26 with the digits 1 to 26 (`a` … `z`, then `aa`), worked
    /// out in JavaScript's arithmetic as upstream's list formatter does (so that odd starts,
    /// `0`, negative or fractional, give its odd markers): take one off, keep the remainder by
    /// 26 as a letter, carry the quotient cut to a 32-bit integer while it is positive.
    fn letters(n: f64, first: char) -> String {
        let base = f64::from(u32::from(first));
        let lefts = std::iter::successors(Some(n - 1.0), |&left| {
            let carried = int32(left / 26.0);
            (carried > 0.0).then_some(carried - 1.0)
        });
        let mut marker: Vec<char> = lefts.map(|left| from_char_code(base + left % 26.0)).collect();
        marker.reverse();
        marker.into_iter().collect()
    }

    /// Roman markers as upstream's list formatter writes them: each character of `String(n)`
    /// is a digit for its place (units, tens, hundreds, thousands), written with that place's
    /// letters. A place past the thousands, or a character that is not a digit (`-`, `.`,
    /// `e`), gets JavaScript's `undefined` for a letter it lacks; where upstream throws
    /// instead (a digit other than 4 or 9 past the thousands), the number is written as is.
    fn roman(n: f64) -> String {
        let text = string(n);
        let places: Option<Vec<String>> =
            text.chars().rev().enumerate().map(|(place, c)| roman_place(place, c)).collect();
        match places {
            Some(mut places) => {
                places.reverse();
                places.concat()
            }
            None => text,
        }
    }

    fn roman_place(place: usize, c: char) -> Option<String> {
        const ONE: [&str; 4] = ["I", "X", "C", "M"];
        const FIVE: [&str; 3] = ["V", "L", "D"];
        // JavaScript's `+` of two letters: a missing one is `undefined`, two missing are NaN.
        let pair = |a: Option<&str>, b: Option<&str>| match (a, b) {
            (None, None) => "NaN".to_owned(),
            _ => format!("{}{}", a.unwrap_or("undefined"), b.unwrap_or("undefined")),
        };
        let one = ONE.get(place).copied();
        Some(match c.to_digit(10) {
            Some(4) => pair(one, FIVE.get(place).copied()),
            // A non-digit is NaN there, which takes the branch of 9.
            Some(9) | None => pair(one, ONE.get(place + 1).copied()),
            Some(d) => {
                // `undefined.repeat(…)` throws, even for no letters.
                let ones = one?.repeat(d as usize % 5);
                if d >= 5 {
                    format!("{}{ones}", FIVE.get(place).copied().unwrap_or("undefined"))
                } else {
                    ones
                }
            }
        })
    }
}
