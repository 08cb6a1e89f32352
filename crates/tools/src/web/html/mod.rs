//! HTML to text, as upstream's web_fetch makes it (html-to-text 9.0.5 over htmlparser2 8.0.2,
//! `wordwrap: false`, its default selectors and upstream's link options), bounded: a page of
//! too many nodes or nested too deeply is read as text without layout (issue 35: html2text,
//! used before, took 2.1 GB for 2.6 million `<br>` and minutes for 300,000 unclosed `<div>`s).
//! The conversion runs off the async threads.

mod dom;
mod entities;
mod format;
mod text;
mod tokenizer;

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
        .and_then(|dom| format::document(&dom, links, max_text(html.len())))
        .unwrap_or_else(|| stripped(html))
}

/// The page's text without layout: what htmlparser2 reads as text (entities decoded, comments,
/// scripts and styles left out), a space for each tag, and runs of blank lines made one. It
/// costs about the page's size, whatever the page.
fn stripped(html: &[u8]) -> String {
    let text = String::from_utf8_lossy(html);
    let mut plain = Plain { html: &text, out: String::with_capacity(text.len() / 2), skip: None };
    tokenizer::tokenize(text.as_bytes(), &mut plain);
    let decoded = plain.out;
    let mut result = String::with_capacity(decoded.len());
    let mut blank = false;
    for line in decoded.lines().map(str::trim) {
        if line.is_empty() {
            blank = !result.is_empty();
            continue;
        }
        if blank {
            result.push('\n');
            blank = false;
        }
        // Runs of spaces (where tags were) made one.
        let mut last_space = false;
        for c in line.chars() {
            if c == ' ' {
                if !last_space {
                    result.push(' ');
                }
                last_space = true;
            } else {
                result.push(c);
                last_space = false;
            }
        }
        result.push('\n');
    }
    result
}

/// The text of a page as its tokens come, for [`stripped`].
struct Plain<'a> {
    html: &'a str,
    out: String,
    /// Inside a `script` or `style` (named), whose text is left out.
    skip: Option<&'static str>,
}

impl tokenizer::Sink for Plain<'_> {
    fn text(&mut self, start: usize, end: usize) {
        if self.skip.is_none() {
            self.out.push_str(self.html.get(start..end).unwrap_or(""));
        }
    }
    fn text_char(&mut self, c: char) {
        if self.skip.is_none() {
            self.out.push(c);
        }
    }
    fn open_tag_name(&mut self, start: usize, end: usize) {
        let name = self.html.get(start..end).unwrap_or("");
        self.skip = ["script", "style"].into_iter().find(|s| name.eq_ignore_ascii_case(s));
        self.out.push(' ');
    }
    fn close_tag(&mut self, start: usize, end: usize) {
        let name = self.html.get(start..end).unwrap_or("");
        if self.skip.is_some_and(|s| name.eq_ignore_ascii_case(s)) {
            self.skip = None;
        }
        self.out.push(' ');
    }
    fn open_tag_end(&mut self) {}
    fn self_closing_tag(&mut self) {}
    fn attrib_name(&mut self, _: usize, _: usize) {}
    fn attrib_data(&mut self, _: usize, _: usize) {}
    fn attrib_char(&mut self, _: char) {}
    fn attrib_end(&mut self) {}
    fn other(&mut self) {}
}

#[cfg(test)]
mod tests;
