//! HTML to text, bounded: html2text's time grows with the square of how deeply elements
//! nest, so a page of unclosed `<div>`s (300,000 in 1.5 MB) held a call past its deadline
//! and the whole MCP server with it (issue 35). Deeply nested pages are reduced to their text
//! without layout; the conversion runs off the async threads either way.

/// Nesting deeper than this is read as text without layout (real pages stay far below).
const MAX_DEPTH: usize = 1_000;

/// A page of more elements than this is read as text without layout: html2text keeps some
/// 800 bytes per element (a 10 MB page of 2.6 million `<br>` took 2.1 GB; issue 35).
const MAX_ELEMENTS: usize = 100_000;

/// HTML to plain text (no wrapping); with `links`, link targets are listed as footnotes.
pub async fn to_text(html: Vec<u8>, links: bool) -> String {
    match tokio::task::spawn_blocking(move || convert(&html, links)).await {
        Ok(text) => text,
        Err(e) => format!("[the page could not be converted to text: {e}]"),
    }
}

/// [`to_text`], on this thread.
pub fn convert(html: &[u8], links: bool) -> String {
    let (deepest, elements) = shape(html);
    if deepest > MAX_DEPTH || elements > MAX_ELEMENTS {
        return stripped(html);
    }
    let config =
        if links { html2text::config::plain() } else { html2text::config::plain_no_decorate() };
    config
        .link_footnotes(links)
        .string_from_read(html, 100_000)
        .unwrap_or_else(|_| String::from_utf8_lossy(html).into_owned())
}

/// Elements with no end tag, or whose end tag is usually left out.
const NOT_NESTING: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "tbody", "thead",
    "tfoot", "colgroup", "rb", "rt", "rp",
];

/// How deeply the page's elements nest at most, and how many there are, counted from its tags
/// (an over-estimate for sloppy pages, which only makes them read as plain text).
fn shape(html: &[u8]) -> (usize, usize) {
    let (mut depth, mut deepest, mut elements) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'<', &html[i..]) {
        i += at + 1;
        match html.get(i) {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(c) if c.is_ascii_alphabetic() => {
                elements += 1;
                let end = html[i..]
                    .iter()
                    .position(|b| !b.is_ascii_alphanumeric())
                    .map_or(html.len(), |n| i + n);
                let name = String::from_utf8_lossy(&html[i..end]).to_ascii_lowercase();
                let close = memchr::memchr(b'>', &html[end..]).map_or(html.len(), |n| end + n);
                let self_closed = close > 0 && html.get(close - 1) == Some(&b'/');
                if !self_closed && !NOT_NESTING.contains(&name.as_str()) {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
            }
            _ => {}
        }
    }
    (deepest, elements)
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
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_elements_that_stay_open() {
        let page = b"<html><body><div><p>a<p>b<br><img src=x/></div></body></html>";
        assert_eq!(shape(page), (3, 7));
        assert_eq!(shape(&b"<div>".repeat(5000)), (5000, 5000));
        assert_eq!(shape(b"<!doctype html><div></div><div></div>"), (1, 2));
    }

    /// Issue 35 (fourth attack, N1): a 10 MB page of 2.6 million `<br>` took 2.1 GB in
    /// html2text (`<li>` 1.96 GB). A page of that many elements is read as text, without
    /// layout (here: no list bullets).
    #[test]
    fn a_page_of_very_many_elements_is_read_as_text() {
        let list =
            |n: usize| [b"<ul>".to_vec(), b"<li>item ".repeat(n), b"</ul>".to_vec()].concat();
        let text = convert(&list(MAX_ELEMENTS + 1), true);
        assert!(text.starts_with("item item"), "{}", &text[..40]);
        assert!(!text.contains("* item"), "{}", &text[..40]);
        // Under the ceiling the layout stays.
        assert!(convert(&list(100), true).contains("* item"));
    }

    /// Issue 35 (third attack): 300,000 unclosed `<div>`s held web_fetch for minutes; the
    /// page is read as text at once.
    #[test]
    fn a_page_nested_without_end_is_read_as_text_at_once() {
        let mut page = b"<html><body><script>var x = '<b>';</script>".to_vec();
        page.extend(b"<div>x &amp; y ".repeat(300_000));
        let started = std::time::Instant::now();
        let text = convert(&page, true);
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
        assert!(text.starts_with("x & y x & y"), "{}", &text[..60]);
        assert!(!text.contains("var x"), "scripts are left out");
    }

    #[test]
    fn ordinary_pages_keep_their_layout() {
        let text = convert(
            b"<h1>Title</h1><ul><li>one<li>two</ul><a href=\"https://e.x/\">link</a>",
            true,
        );
        assert!(
            text.contains("# Title") && text.contains("* one") && text.contains("[link][1]"),
            "{text}"
        );
    }
}
