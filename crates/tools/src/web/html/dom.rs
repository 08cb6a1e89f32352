//! The document tree upstream's parser builds (htmlparser2 8 with domhandler): its own
//! repairs, not HTML5's tree construction. A start tag first closes the open elements it
//! implies closed (`<li>` an open `li`, a block an open `p`), void elements hold nothing,
//! `</p>` with no `p` open is an empty `p` and `</br>` a `br`, an end tag closes everything
//! opened after the element it names, and one naming nothing open is passed over. No `html`,
//! `head` or `body` is added.

use std::collections::HashMap;
use std::ops::{ControlFlow, Range};

use super::refs::{self, Place};
use super::scan::{Attr, TagEnd, Token, scan};

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
    let mut tree = Tree {
        dom: Dom {
            html,
            nodes: vec![Node { kind: Kind::Other, parent: 0, first: NONE, last: NONE, next: NONE }],
            names: Vec::new(),
            attrs: Vec::new(),
            attr_text: String::new(),
        },
        ids: HashMap::new(),
        lower: String::new(),
        open_names: Vec::new(),
        open_count: Vec::new(),
        parents: vec![0],
        foreign: Vec::new(),
        joins: None,
        max_nodes,
        max_depth,
        too_big: false,
    };
    scan(html, |token| {
        match token {
            Token::Raw(at) => tree.text(Piece::Page(at)),
            Token::Made(text) => tree.text(Piece::Made(&text)),
            Token::Start { name, attrs, end } => tree.start(name, attrs, end),
            Token::End(name) => tree.end(name),
            Token::Other => {
                tree.node(Kind::Other);
            }
        }
        if tree.too_big { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    });
    if tree.too_big { Err(TooBig) } else { Ok(tree.dom) }
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

/// A text arriving: a piece of the page, or text made from it.
enum Piece<'t> {
    Page(Range<usize>),
    Made(&'t str),
}

/// The tree being built from the page's tokens.
struct Tree<'a> {
    dom: Dom<'a>,
    /// Each element name's place in `dom.names`.
    ids: HashMap<String, u32>,
    /// A tag's name in lower case (one buffer for every tag).
    lower: String,
    /// The names of the tags open, innermost last (the parser's stack: a void tag is never on
    /// it, a tag the page ended in is).
    open_names: Vec<u32>,
    /// How many times each name is in `open_names` (an end tag naming nothing open is told at
    /// once).
    open_count: Vec<u32>,
    /// The elements that take new nodes, innermost last (the document first).
    parents: Vec<usize>,
    /// For each open `svg` or `math` (true) and each HTML island in them (false): where a
    /// `/>` closes an element.
    foreign: Vec<bool>,
    /// The text node a text arriving now joins, if nothing came between.
    joins: Option<usize>,
    max_nodes: usize,
    max_depth: usize,
    too_big: bool,
}

impl<'a> Tree<'a> {
    /// A new node, the last child of the innermost element.
    fn node(&mut self, kind: Kind) -> usize {
        let id = self.dom.nodes.len();
        self.too_big |= id > self.max_nodes;
        let parent = self.parents.last().copied().unwrap_or(0);
        // The page is at most 4 GiB (10 MiB are fetched), so are the node numbers.
        #[allow(clippy::cast_possible_truncation)]
        let (parent32, id32) = (parent as u32, id as u32);
        self.dom.nodes.push(Node { kind, parent: parent32, first: NONE, last: NONE, next: NONE });
        let before = std::mem::replace(&mut self.dom.nodes[parent].last, id32);
        match before {
            NONE => self.dom.nodes[parent].first = id32,
            sibling => self.dom.nodes[sibling as usize].next = id32,
        }
        self.joins = None;
        id
    }

    fn text(&mut self, piece: Piece<'_>) {
        let html = self.dom.html;
        let Some(id) = self.joins else {
            #[allow(clippy::cast_possible_truncation)] // a page of at most 4 GiB
            let kind = match piece {
                Piece::Page(at) => Kind::Slice(at.start as u32, at.end as u32),
                Piece::Made(text) => Kind::Text(text.to_owned()),
            };
            self.joins = Some(self.node(kind));
            return;
        };
        let node = &mut self.dom.nodes[id].kind;
        match (node, piece) {
            // The page's next piece: the slice grows.
            #[allow(clippy::cast_possible_truncation)]
            (Kind::Slice(_, end), Piece::Page(at)) if *end as usize == at.start => {
                *end = at.end as u32;
            }
            (Kind::Text(text), piece) => text.push_str(piece_text(html, &piece)),
            (node, piece) => {
                let before = match node {
                    Kind::Slice(s, e) => html.get(*s as usize..*e as usize).unwrap_or(""),
                    _ => "",
                };
                *node = Kind::Text([before, piece_text(html, &piece)].concat());
            }
        }
    }

    /// The name of a tag in lower case (as JavaScript lower-cases it), as a number.
    fn name_id(&mut self, name: &str) -> u32 {
        let mut lower = std::mem::take(&mut self.lower);
        lower.clear();
        if name.is_ascii() {
            lower.push_str(name);
            lower.make_ascii_lowercase();
        } else {
            lower.push_str(&name.to_lowercase());
        }
        let id = match self.ids.get(lower.as_str()) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.dom.names.len()).unwrap_or(u32::MAX);
                self.dom.names.push(lower.clone());
                self.open_count.push(0);
                self.ids.insert(lower.clone(), id);
                id
            }
        };
        self.lower = lower;
        id
    }

    fn name(&self, id: u32) -> &str {
        self.dom.names.get(id as usize).map_or("", String::as_str)
    }

    /// The innermost element ends.
    fn close_element(&mut self) {
        self.joins = None;
        self.parents.pop();
    }

    /// The innermost open name leaves the stack, its element with it.
    fn close_innermost(&mut self) -> Option<u32> {
        let id = self.open_names.pop()?;
        self.open_count[id as usize] -= 1;
        self.close_element();
        Some(id)
    }

    fn start(&mut self, name: &str, attrs: &[Attr<'_>], end: TagEnd) {
        let tag = self.name_id(name);
        self.name_seen(tag);
        match end {
            TagEnd::Cut => {}
            TagEnd::Open => self.element(tag, attrs),
            TagEnd::SelfClosing => {
                self.element(tag, attrs);
                if self.foreign.last() == Some(&true) && self.open_names.last() == Some(&tag) {
                    self.close_innermost();
                }
            }
        }
    }

    /// A start tag's name is read: it closes what it implies, and is open unless void.
    fn name_seen(&mut self, tag: u32) {
        let closes = implied_closes(self.name(tag));
        while let Some(&top) = self.open_names.last()
            && closes.contains(&self.name(top))
        {
            self.close_innermost();
        }
        let name = self.name(tag);
        if is_void(name) {
            return;
        }
        let foreign = match name {
            "svg" | "math" => Some(true),
            other => is_html_integration(other).then_some(false),
        };
        self.foreign.extend(foreign);
        self.open_names.push(tag);
        self.open_count[tag as usize] += 1;
    }

    /// The element of a complete start tag, with the attributes the text uses; a void one
    /// is closed at once.
    fn element(&mut self, tag: u32, attrs: &[Attr<'_>]) {
        self.too_big |= self.parents.len() > self.max_depth;
        let first = self.dom.attrs.len();
        for attr in attrs {
            let Some(kept) = kept_attribute(self.name(tag), attr.name) else { continue };
            // The first of a repeated attribute counts.
            if self.dom.attrs[first..].iter().any(|a| a.0 == kept) {
                continue;
            }
            let value = refs::decoded(attr.value, Place::Attribute);
            #[allow(clippy::cast_possible_truncation)] // a page of at most 4 GiB
            let start = self.dom.attr_text.len() as u32;
            self.dom.attr_text.push_str(&value);
            #[allow(clippy::cast_possible_truncation)]
            let end = self.dom.attr_text.len() as u32;
            self.dom.attrs.push((kept, start, end));
        }
        #[allow(clippy::cast_possible_truncation)]
        let (first_attr, count) = (first as u32, (self.dom.attrs.len() - first) as u32);
        let id = self.node(Kind::Element { name: tag, first_attr, attrs: count });
        self.parents.push(id);
        if is_void(self.name(tag)) {
            self.close_element();
        }
    }

    fn end(&mut self, name: &str) {
        let tag = self.name_id(name);
        let name = self.name(tag);
        let (foreign, void, br, p) = (
            matches!(name, "svg" | "math") || is_html_integration(name),
            is_void(name),
            name == "br",
            name == "p",
        );
        if foreign {
            self.foreign.pop();
        }
        if void {
            if br {
                // `</br>` is a `br`, made without closing anything.
                self.node(Kind::Element { name: tag, first_attr: 0, attrs: 0 });
            }
        } else if self.open_count[tag as usize] > 0 {
            while self.close_innermost().is_some_and(|closed| closed != tag) {}
        } else if p {
            // `</p>` alone is an empty `p`.
            self.name_seen(tag);
            self.element(tag, &[]);
            if self.open_names.last() == Some(&tag) {
                self.close_innermost();
            }
        }
    }
}

fn piece_text<'t>(html: &'t str, piece: &Piece<'t>) -> &'t str {
    match piece {
        Piece::Page(at) => html.get(at.clone()).unwrap_or(""),
        Piece::Made(text) => text,
    }
}
