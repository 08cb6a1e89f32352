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

/// A page of more nodes than this (elements, texts, comments) is read as text without layout.
const MAX_NODES: usize = 500_000;

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
        .and_then(|dom| format::document(&dom, links))
        .unwrap_or_else(|| stripped(html))
}

/// The page's text with its tags, scripts and styles left out, a few entities decoded, and
/// runs of blank lines made one.
fn stripped(html: &[u8]) -> String {
    let text = String::from_utf8_lossy(html);
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len() / 2);
    let mut i = 0;
    while i < text.len() {
        let Some(at) = text[i..].find('<') else {
            out.push_str(&text[i..]);
            break;
        };
        out.push_str(&text[i..i + at]);
        i += at;
        let skip_to = ["script", "style"].iter().find_map(|t| {
            lower[i + 1..].starts_with(t).then(|| {
                let end = format!("</{t}");
                lower[i..].find(&end).map_or(text.len(), |n| i + n + end.len())
            })
        });
        let from = skip_to.unwrap_or(i);
        i = text[from..].find('>').map_or(text.len(), |n| from + n + 1);
        out.push(' ');
    }
    let decoded = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
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

#[cfg(test)]
mod tests;
