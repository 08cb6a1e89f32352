//! web_fetch's HTML reading: a long article-like page (headings, paragraphs with references,
//! links, nested lists, tables, code, scripts, styles, comments) converted to text with links
//! shown and hidden. Run with `cargo bench -p toolbelt-tools --bench html`.

use criterion::{Criterion, criterion_group, criterion_main};
use toolbelt_tools::web::html::{Links, convert};

/// About 400 KB of varied markup.
fn page() -> Vec<u8> {
    let mut page = String::from(
        "<!DOCTYPE html><html><head><title>Bench &amp; page</title><style>p{color:red}</style>\
         <script>var a = 1 < 2 && \"</div>\";</script></head><body>",
    );
    for i in 0..400 {
        page.push_str(&format!(
            "<h2 id=s{i}>Section {i} &mdash; <a href=\"#s{i}\">§</a></h2>\
             <p>Some <b>bold</b> and <i>italic</i> text &lt;with&gt; references &copy; &#8212; \
             and a <a href=\"/docs/page-{i}.html?x=1&amp;y=2\">relative link</a>, \
             <a href=\"https://example.org/{i}\">an absolute one</a>.<br>A second line.</p>\
             <!-- a comment {i} -->\
             <ul><li>one<li>two <ol start=\"{i}\" type=\"a\"><li>nested<li>list</ol><li>three</ul>\
             <table><tr><th>h1<th>h2<tr><td>a {i}<td>b</table>\
             <pre>  code {{\n    indented &amp; kept\n  }}</pre>\
             <blockquote><p>A quote with <code>code</code></p></blockquote>\
             <img src=\"/img/{i}.png\" alt=\"picture {i}\"><div><span>x</span> <span>y</span></div>"
        ));
    }
    page.push_str("</body></html>");
    page.into_bytes()
}

fn bench(c: &mut Criterion) {
    let page = page();
    let shown = Links::Shown { base: "https://example.com/docs/" };
    c.bench_function("html_to_text_400kb_links_shown", |b| b.iter(|| convert(&page, shown)));
    c.bench_function("html_to_text_400kb_links_hidden", |b| {
        b.iter(|| convert(&page, Links::Hidden))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
