//! The document tree htmlparser2 8.0.2 and domhandler build from the tokens: htmlparser2's
//! own repairs (an open tag closing the ones it implies, void elements, `</p>` and `</br>`
//! alone), not HTML5's tree construction; no `html`, `head` or `body` is added.

use std::collections::HashMap;

use super::tokenizer::{Sink, tokenize};

pub enum Kind {
    /// Text as it is in the page (`start..end` of it): most text is.
    Slice(u32, u32),
    /// Text with decoded entities.
    Text(String),
    /// `name` indexes [`Dom::names`]; its attributes are `attrs` of [`Dom::attrs`] from
    /// `first_attr`.
    Element { name: u32, first_attr: u32, attrs: u32 },
    /// A comment, doctype, processing instruction or CDATA section.
    Other,
}

/// No node (a link of [`Node`]).
const NONE: u32 = u32::MAX;

/// No open tag being read (`Builder::tag`).
const NO_TAG: u32 = u32::MAX;

/// A node, linked to its parent, first and last child and next sibling: 48 bytes and no
/// allocation of its own for most (a list of children each, and a string for each text, made a
/// page of small tags cost 20 times its size).
pub struct Node {
    pub kind: Kind,
    parent: u32,
    first: u32,
    last: u32,
    next: u32,
}

/// The tree: node 0 is the document.
pub struct Dom<'a> {
    html: &'a str,
    pub nodes: Vec<Node>,
    /// Element names, each once.
    names: Vec<String>,
    /// Every element's attributes (those the text uses), in order: the name and where the
    /// value is in `attr_text` (no allocation for each).
    attrs: Vec<(&'static str, u32, u32)>,
    attr_text: String,
}

impl Dom<'_> {
    pub fn parent(&self, id: usize) -> usize {
        self.nodes[id].parent as usize
    }

    pub fn children(&self, id: usize) -> impl Iterator<Item = usize> + '_ {
        let first = self.nodes[id].first;
        std::iter::successors((first != NONE).then_some(first), |&c| {
            let next = self.nodes[c as usize].next;
            (next != NONE).then_some(next)
        })
        .map(|c| c as usize)
    }

    /// The node's text, if it is a text.
    pub fn text(&self, id: usize) -> Option<&str> {
        match &self.nodes[id].kind {
            Kind::Slice(start, end) => self.html.get(*start as usize..*end as usize),
            Kind::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn name(&self, id: usize) -> Option<&str> {
        match &self.nodes[id].kind {
            Kind::Element { name, .. } => self.names.get(*name as usize).map(String::as_str),
            _ => None,
        }
    }

    /// The first value of attribute `name` (htmlparser2 keeps the first of repeated ones).
    pub fn attr(&self, id: usize, name: &str) -> Option<&str> {
        match &self.nodes[id].kind {
            Kind::Element { first_attr, attrs, .. } => {
                let (first, n) = (*first_attr as usize, *attrs as usize);
                let (_, start, end) =
                    self.attrs.get(first..first + n)?.iter().find(|a| a.0 == name)?;
                self.attr_text.get(*start as usize..*end as usize)
            }
            _ => None,
        }
    }
}

/// Why a page was not made a tree.
#[derive(Debug, PartialEq, Eq)]
pub struct TooBig;

/// Parses `html`; a page of more than `max_nodes` nodes (elements, texts, comments), or
/// nesting deeper than `max_depth`, is refused as soon as it shows (the text walk recurses
/// once per level).
pub fn parse(html: &str, max_nodes: usize, max_depth: usize) -> Result<Dom<'_>, TooBig> {
    let mut b = Builder {
        dom: Dom {
            html,
            nodes: vec![Node { kind: Kind::Other, parent: 0, first: NONE, last: NONE, next: NONE }],
            names: Vec::new(),
            attrs: Vec::new(),
            attr_text: String::new(),
        },
        interned: HashMap::new(),
        names: Vec::new(),
        open: Vec::new(),
        lower: String::new(),
        elems: vec![0],
        foreign: Vec::new(),
        tag: NO_TAG,
        attrs: None,
        attr_kept: None,
        attr_value: String::new(),
        last_text: None,
        max_nodes,
        max_depth,
        too_big: false,
    };
    tokenize(html.as_bytes(), &mut b);
    if b.too_big {
        return Err(TooBig);
    }
    Ok(b.dom)
}

fn implied_closes(name: &str) -> &'static [&'static str] {
    const FORM: &[&str] =
        &["input", "option", "optgroup", "select", "button", "datalist", "textarea"];
    const P: &[&str] = &["p"];
    match name {
        "tr" => &["tr", "th", "td"],
        "th" => &["th"],
        "td" => &["thead", "th", "td"],
        "body" => &["head", "link", "script"],
        "li" => &["li"],
        "select" | "input" | "output" | "button" | "datalist" | "textarea" => FORM,
        "option" => &["option"],
        "optgroup" => &["optgroup", "option"],
        "dd" | "dt" => &["dd", "dt"],
        "rt" | "rp" => &["rt", "rp"],
        "tbody" | "tfoot" => &["thead", "tbody"],
        "p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "address" | "article" | "aside"
        | "blockquote" | "details" | "div" | "dl" | "fieldset" | "figcaption" | "figure"
        | "footer" | "form" | "header" | "hr" | "main" | "nav" | "ol" | "pre" | "section"
        | "table" | "ul" => P,
        _ => &[],
    }
}

/// The attribute `attr` of element `tag` if the text uses it (as its name, static).
fn kept_attribute(tag: &str, attr: &str) -> Option<&'static str> {
    let kept: &[&'static str] = match tag {
        "a" => &["href"],
        "img" => &["src", "alt"],
        "ol" => &["start", "type"],
        _ => &[],
    };
    // Names are lower-cased as JavaScript does; no other letter lower-cases into these.
    kept.iter().copied().find(|k| attr.eq_ignore_ascii_case(k))
}

fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "basefont"
            | "br"
            | "col"
            | "command"
            | "embed"
            | "frame"
            | "hr"
            | "img"
            | "input"
            | "isindex"
            | "keygen"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
    )
}

fn is_html_integration(name: &str) -> bool {
    matches!(
        name,
        "mi" | "mo" | "mn" | "ms" | "mtext" | "annotation-xml" | "foreignobject" | "desc" | "title"
    )
}

struct Builder<'a> {
    dom: Dom<'a>,
    /// htmlparser2's stack of open tag names (as indexes of `dom.names`).
    names: Vec<u32>,
    /// How many of each name `names` holds, by name (a close tag of a name not open costs
    /// nothing).
    open: Vec<u32>,
    /// A tag's name in lower case, as it is read (one buffer for every tag).
    lower: String,
    /// Where each element name is in `dom.names`.
    interned: HashMap<String, u32>,
    /// domhandler's stack of open elements (node 0 first).
    elems: Vec<usize>,
    /// In `svg`/`math` (true) or an HTML integration point inside them (false).
    foreign: Vec<bool>,
    /// The open tag being read (`NO_TAG` between tags).
    tag: u32,
    /// Where the attributes of the open tag being read start in `dom.attrs` (none: no tag).
    attrs: Option<usize>,
    /// The attribute being read, if the text uses it (its value is gathered only then).
    attr_kept: Option<&'static str>,
    attr_value: String,
    /// The text node that text arriving now joins.
    last_text: Option<usize>,
    max_nodes: usize,
    max_depth: usize,
    too_big: bool,
}

impl<'a> Builder<'a> {
    fn add(&mut self, kind: Kind) -> usize {
        let parent = self.elems.last().copied().unwrap_or(0);
        let id = self.dom.nodes.len();
        if id > self.max_nodes {
            self.too_big = true;
        }
        // The page is at most 4 GiB (10 MiB are fetched), so are the node numbers.
        let (parent32, id32) = (parent as u32, id as u32);
        self.dom.nodes.push(Node { kind, parent: parent32, first: NONE, last: NONE, next: NONE });
        match self.dom.nodes[parent].last {
            NONE => self.dom.nodes[parent].first = id32,
            last => self.dom.nodes[last as usize].next = id32,
        }
        self.dom.nodes[parent].last = id32;
        self.last_text = None;
        id
    }

    fn push_name(&mut self, name: u32) {
        self.names.push(name);
        self.open[name as usize] += 1;
    }

    fn pop_name(&mut self) -> Option<u32> {
        let name = self.names.pop()?;
        self.open[name as usize] -= 1;
        Some(name)
    }

    fn name_of(&self, name: u32) -> &str {
        self.dom.names.get(name as usize).map_or("", String::as_str)
    }

    /// The name of the tag at `start..end` in lower case, interned.
    fn lower_name(&mut self, start: usize, end: usize) -> u32 {
        let mut lower = std::mem::take(&mut self.lower);
        lower.clear();
        let name = self.slice(start, end);
        if name.is_ascii() {
            lower.push_str(name);
            lower.make_ascii_lowercase();
        } else {
            lower.push_str(&name.to_lowercase());
        }
        let id = self.intern(&lower);
        self.lower = lower;
        id
    }

    /// domhandler's `onclosetag`: the element on top ends, whatever its name.
    fn close_element(&mut self) {
        self.last_text = None;
        self.elems.pop();
    }

    fn emit_open_tag(&mut self, tag: u32) {
        let implied = implied_closes(self.name_of(tag));
        while self.names.last().is_some_and(|&top| implied.contains(&self.name_of(top))) {
            self.pop_name();
            self.close_element();
        }
        let name = self.name_of(tag);
        if !is_void(name) {
            let foreign = match name {
                "math" | "svg" => Some(true),
                n if is_html_integration(n) => Some(false),
                _ => None,
            };
            self.push_name(tag);
            self.foreign.extend(foreign);
        }
        self.tag = tag;
        self.attrs = Some(self.dom.attrs.len());
    }

    fn end_open_tag(&mut self) {
        if let Some(attrs) = self.attrs.take() {
            if self.elems.len() > self.max_depth {
                self.too_big = true;
            }
            let name = self.tag;
            #[allow(clippy::cast_possible_truncation)] // a page of at most 4 GiB
            let (first_attr, attrs) = (attrs as u32, (self.dom.attrs.len() - attrs) as u32);
            let id = self.add(Kind::Element { name, first_attr, attrs });
            self.elems.push(id);
        }
        if is_void(self.name_of(self.tag)) {
            self.close_element();
        }
        self.tag = NO_TAG;
    }

    fn close_current_tag(&mut self) {
        let name = self.tag;
        self.end_open_tag();
        if self.names.last() == Some(&name) {
            self.close_element();
            self.pop_name();
        }
    }

    /// `start..end` of the page (it outlives the builder, so the builder stays free to change).
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.dom.html.get(start..end).unwrap_or("")
    }
}

impl Sink for Builder<'_> {
    fn text(&mut self, start: usize, end: usize) {
        if self.too_big || start >= end {
            return;
        }
        if let Some(id) = self.last_text
            && let Kind::Slice(_, e) = &mut self.dom.nodes[id].kind
            && *e as usize == start
        {
            *e = end as u32;
            return;
        }
        self.join_text(self.slice(start, end), Some((start, end)));
    }

    fn text_char(&mut self, c: char) {
        if !self.too_big {
            self.join_text(c.encode_utf8(&mut [0; 4]), None);
        }
    }

    fn open_tag_name(&mut self, start: usize, end: usize) {
        if !self.too_big {
            let tag = self.lower_name(start, end);
            self.emit_open_tag(tag);
        }
    }

    fn open_tag_end(&mut self) {
        if !self.too_big {
            self.end_open_tag();
        }
    }

    fn self_closing_tag(&mut self) {
        if self.too_big {
        } else if self.foreign.last() == Some(&true) {
            self.close_current_tag();
        } else {
            self.end_open_tag();
        }
    }

    fn close_tag(&mut self, start: usize, end: usize) {
        if self.too_big {
            return;
        }
        let tag = self.lower_name(start, end);
        let name = self.name_of(tag);
        let foreign = name == "math" || name == "svg" || is_html_integration(name);
        let (void, br, p) = (is_void(name), name == "br", name == "p");
        if foreign {
            self.foreign.pop();
        }
        if void {
            if br {
                self.add(Kind::Element { name: tag, first_attr: 0, attrs: 0 });
            }
        } else if self.open[tag as usize] > 0 {
            while let Some(top) = self.pop_name() {
                self.close_element();
                if top == tag {
                    break;
                }
            }
        } else if p {
            self.emit_open_tag(tag);
            self.close_current_tag();
        }
    }

    fn attrib_name(&mut self, start: usize, end: usize) {
        // Only the attributes the text is made from are kept, on the elements that use them
        // (a page's others cost memory: 10 MiB of `<img src=a alt=b href=c>` took 228 MB), and
        // only their values are gathered.
        self.attr_kept = kept_attribute(self.name_of(self.tag), self.slice(start, end));
    }

    fn attrib_data(&mut self, start: usize, end: usize) {
        if self.attr_kept.is_some() {
            self.attr_value.push_str(self.slice(start, end));
        }
    }

    fn attrib_char(&mut self, c: char) {
        if self.attr_kept.is_some() {
            self.attr_value.push(c);
        }
    }

    fn attrib_end(&mut self) {
        let value = std::mem::take(&mut self.attr_value);
        let Some(name) = self.attr_kept.take() else { return };
        if let Some(first) = self.attrs
            && !self.dom.attrs[first..].iter().any(|a| a.0 == name)
        {
            #[allow(clippy::cast_possible_truncation)] // a page of at most 4 GiB
            let start = self.dom.attr_text.len() as u32;
            self.dom.attr_text.push_str(&value);
            #[allow(clippy::cast_possible_truncation)]
            let end = self.dom.attr_text.len() as u32;
            self.dom.attrs.push((name, start, end));
        }
    }

    fn other(&mut self) {
        if !self.too_big {
            self.add(Kind::Other);
        }
    }
}

impl Builder<'_> {
    /// The index of element name `name` in the document's names.
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.interned.get(name) {
            return i;
        }
        let i = u32::try_from(self.dom.names.len()).unwrap_or(u32::MAX);
        self.dom.names.push(name.to_owned());
        self.open.push(0);
        self.interned.insert(name.to_owned(), i);
        i
    }

    /// Text joins the text node before it, if there is one; else it starts one, as the slice
    /// `at` of the page when it is one (most text is), owned otherwise (decoded entities).
    fn join_text(&mut self, add: &str, at: Option<(usize, usize)>) {
        if let Some(id) = self.last_text {
            let html = self.dom.html;
            let node = &mut self.dom.nodes[id].kind;
            match node {
                Kind::Text(t) => t.push_str(add),
                Kind::Slice(s, e) => {
                    let before = html.get(*s as usize..*e as usize).unwrap_or("");
                    *node = Kind::Text(format!("{before}{add}"));
                }
                _ => {}
            }
            return;
        }
        #[allow(clippy::cast_possible_truncation)] // a page of at most 4 GiB
        let kind = match at {
            Some((start, end)) => Kind::Slice(start as u32, end as u32),
            None => Kind::Text(add.to_owned()),
        };
        let id = self.add(kind);
        self.last_text = Some(id);
    }
}
