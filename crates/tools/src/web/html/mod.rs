//! HTML to text, as upstream's web_fetch makes it (html-to-text 9.0.5 over htmlparser2 8.0.2,
//! `wordwrap: false`, its default selectors and upstream's link options), written from their
//! outputs (`scan` cuts the page, `dom` builds the tree, `format` lays it out), bounded: a page of
//! too many nodes or nested too deeply is read as text without layout (issue 35: html2text,
//! used before, took 2.1 GB for 2.6 million `<br>` and minutes for 300,000 unclosed `<div>`s).
//! The conversion runs off the async threads.

mod dom;
mod entities;
mod format;
mod refs;
mod scan;
mod text;

pub use format::Links;

/// Nesting deeper than this is read as text without layout (real pages stay far below; the
/// walk recurses once per level).
const MAX_DEPTH: usize = 1_000;

/// A page of more nodes than this (elements, texts, comments) is read as text without layout:
/// the tree costs 48 bytes a node, about 12 MB at most (a long article has some 100,000).
const MAX_NODES: usize = 250_000;

/// The longest text a page's layout may make, from the page's size (a page's text is much
/// shorter than the page; quotes and list items around many lines widen each).
fn max_text(page: usize) -> usize {
    2 * page + (1 << 20)
}

/// How many bytes of text the layout may make in all, from the page's size: real pages copy
/// their text once per level of blocks (a 400 KB page some 3 MB).
fn budget(page: usize) -> usize {
    2 * page + (8 << 20)
}

/// HTML to plain text; `base` given, link targets and images are shown (the page fetched
/// itself), else left out (a prompt's fallback).
pub async fn to_text(html: Vec<u8>, base: Option<String>) -> String {
    let converted = tokio::task::spawn_blocking(move || {
        let links = base.as_deref().map_or(Links::Hidden, |base| Links::Shown { base });
        convert(&html, links)
    });
    match converted.await {
        Ok(text) => text,
        Err(e) => format!("[the page could not be converted to text: {e}]"),
    }
}

/// [`to_text`], on this thread.
pub fn convert(html: &[u8], links: Links<'_>) -> String {
    let text = String::from_utf8_lossy(html);
    dom::parse(&text, MAX_NODES, MAX_DEPTH)
        .ok()
        .and_then(|dom| format::document(&dom, links, max_text(html.len()), budget(html.len())))
        .unwrap_or_else(|| stripped(&text))
}

/// The page's text without layout: what upstream's parser reads as text (references decoded,
/// comments, scripts and styles left out), a space for each tag, and runs of blank lines made
/// one. It costs about the page's size, whatever the page.
fn stripped(page: &str) -> String {
    let mut out = String::with_capacity(page.len() / 2);
    // Inside a `script` or `style` (named): its text is left out.
    let mut skip: Option<&'static str> = None;
    scan::scan(page, |token| {
        match token {
            scan::Token::Raw(at) if skip.is_none() => out.push_str(&page[at]),
            scan::Token::Made(text) if skip.is_none() => out.push_str(&text),
            scan::Token::Start { name, .. } => {
                skip = ["script", "style"].into_iter().find(|s| name.eq_ignore_ascii_case(s));
                out.push(' ');
            }
            scan::Token::End(name) => {
                if skip.is_some_and(|s| name.eq_ignore_ascii_case(s)) {
                    skip = None;
                }
                out.push(' ');
            }
            _ => {}
        }
        std::ops::ControlFlow::Continue(())
    });
    collapse(out)
}

/// `text`'s lines trimmed, runs of spaces in them made one, runs of blank lines made one
/// (none at the start), each line ending in `\n`; done in place, as it only removes.
fn collapse(text: String) -> String {
    let mut b = text.into_bytes();
    let (mut r, mut w, len) = (0, 0, b.len());
    let put = |b: &mut Vec<u8>, w: &mut usize, c: u8| {
        if *w < b.len() {
            b[*w] = c;
        } else {
            b.push(c);
        }
        *w += 1;
    };
    let mut blank = false;
    while r < len {
        let end = memchr::memchr(b'\n', &b[r..len]).map_or(len, |n| r + n);
        let (from, to) = {
            let line = std::str::from_utf8(&b[r..end]).unwrap_or("");
            let start = line.trim_start();
            let from = r + (line.len() - start.len());
            (from, from + start.trim_end().len())
        };
        r = (end + 1).min(len);
        if from == to {
            blank = w > 0;
            continue;
        }
        if blank {
            put(&mut b, &mut w, b'\n');
            blank = false;
        }
        let mut last_space = false;
        for i in from..to {
            let c = b[i];
            if c != b' ' || !last_space {
                put(&mut b, &mut w, c);
            }
            last_space = c == b' ';
        }
        put(&mut b, &mut w, b'\n');
    }
    b.truncate(w);
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests;
