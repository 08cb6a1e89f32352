//! The document tree htmlparser2 8.0.2 and domhandler build from the tokens: htmlparser2's
//! own repairs (an open tag closing the ones it implies, void elements, `</p>` and `</br>`
//! alone), not HTML5's tree construction; no `html`, `head` or `body` is added.

use std::collections::HashMap;

use super::tokenizer::{Sink, tokenize};

pub enum Kind {
    Text(String),
    /// `name` indexes [`Dom::names`].
    Element {
        name: u32,
        attrs: Vec<(String, String)>,
    },
    /// A comment, doctype, processing instruction or CDATA section.
    Other,
}

pub struct Node {
    pub kind: Kind,
    pub parent: usize,
    pub children: Vec<usize>,
}

/// The tree: node 0 is the document.
pub struct Dom {
    pub nodes: Vec<Node>,
    /// Element names, each once.
    names: Vec<String>,
}

impl Dom {
    pub fn name(&self, id: usize) -> Option<&str> {
        match &self.nodes[id].kind {
            Kind::Element { name, .. } => self.names.get(*name as usize).map(String::as_str),
            _ => None,
        }
    }

    /// The first value of attribute `name` (htmlparser2 keeps the first of repeated ones).
    pub fn attr(&self, id: usize, name: &str) -> Option<&str> {
        match &self.nodes[id].kind {
            Kind::Element { attrs, .. } => {
                attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
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
pub fn parse(html: &str, max_nodes: usize, max_depth: usize) -> Result<Dom, TooBig> {
    let mut b = Builder {
        html,
        dom: Dom {
            nodes: vec![Node { kind: Kind::Other, parent: 0, children: Vec::new() }],
            names: Vec::new(),
        },
        interned: HashMap::new(),
        names: Vec::new(),
        open: HashMap::new(),
        elems: vec![0],
        foreign: Vec::new(),
        tag_name: String::new(),
        attrs: None,
        attr_name: String::new(),
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
    html: &'a str,
    dom: Dom,
    /// htmlparser2's stack of open tag names.
    names: Vec<String>,
    /// How many of each name `names` holds (a close tag of a name not open costs nothing).
    open: HashMap<String, usize>,
    /// Where each element name is in `dom.names`.
    interned: HashMap<String, u32>,
    /// domhandler's stack of open elements (node 0 first).
    elems: Vec<usize>,
    /// In `svg`/`math` (true) or an HTML integration point inside them (false).
    foreign: Vec<bool>,
    tag_name: String,
    attrs: Option<Vec<(String, String)>>,
    attr_name: String,
    attr_value: String,
    /// The text node that text arriving now joins.
    last_text: Option<usize>,
    max_nodes: usize,
    max_depth: usize,
    too_big: bool,
}

impl Builder<'_> {
    fn add(&mut self, kind: Kind) -> usize {
        let parent = self.elems.last().copied().unwrap_or(0);
        let id = self.dom.nodes.len();
        if id > self.max_nodes {
            self.too_big = true;
        }
        self.dom.nodes.push(Node { kind, parent, children: Vec::new() });
        self.dom.nodes[parent].children.push(id);
        self.last_text = None;
        id
    }

    fn push_name(&mut self, name: &str) {
        self.names.push(name.to_owned());
        *self.open.entry(name.to_owned()).or_default() += 1;
    }

    fn pop_name(&mut self) -> Option<String> {
        let name = self.names.pop()?;
        if let Some(n) = self.open.get_mut(&name) {
            *n -= 1;
        }
        Some(name)
    }

    /// domhandler's `onclosetag`: the element on top ends, whatever its name.
    fn close_element(&mut self) {
        self.last_text = None;
        self.elems.pop();
    }

    fn emit_open_tag(&mut self, name: String) {
        let implied = implied_closes(&name);
        while self.names.last().is_some_and(|top| implied.contains(&top.as_str())) {
            self.pop_name();
            self.close_element();
        }
        if !is_void(&name) {
            self.push_name(&name);
            if name == "math" || name == "svg" {
                self.foreign.push(true);
            } else if is_html_integration(&name) {
                self.foreign.push(false);
            }
        }
        self.tag_name = name;
        self.attrs = Some(Vec::new());
    }

    fn end_open_tag(&mut self) {
        if let Some(attrs) = self.attrs.take() {
            if self.elems.len() > self.max_depth {
                self.too_big = true;
            }
            let (name, mut attrs) = (self.intern(), attrs);
            attrs.shrink_to_fit();
            let id = self.add(Kind::Element { name, attrs });
            self.elems.push(id);
        }
        if is_void(&self.tag_name) {
            self.close_element();
        }
        self.tag_name.clear();
    }

    fn close_current_tag(&mut self) {
        let name = self.tag_name.clone();
        self.end_open_tag();
        if self.names.last() == Some(&name) {
            self.close_element();
            self.pop_name();
        }
    }

    fn slice(&self, start: usize, end: usize) -> &str {
        self.html.get(start..end).unwrap_or("")
    }
}

impl Sink for Builder<'_> {
    fn text(&mut self, start: usize, end: usize) {
        if self.too_big || start >= end {
            return;
        }
        let text = self.slice(start, end).to_owned();
        self.join_text(text);
    }

    fn text_char(&mut self, c: char) {
        if !self.too_big {
            self.join_text(c.to_string());
        }
    }

    fn open_tag_name(&mut self, start: usize, end: usize) {
        if !self.too_big {
            let name = self.slice(start, end).to_lowercase();
            self.emit_open_tag(name);
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
        let name = self.slice(start, end).to_lowercase();
        if name == "math" || name == "svg" || is_html_integration(&name) {
            self.foreign.pop();
        }
        if is_void(&name) {
            if name == "br" {
                self.tag_name = name;
                let name = self.intern();
                self.tag_name.clear();
                self.add(Kind::Element { name, attrs: Vec::new() });
            }
        } else if self.open.get(&name).copied().unwrap_or(0) > 0 {
            while let Some(top) = self.pop_name() {
                self.close_element();
                if top == name {
                    break;
                }
            }
        } else if name == "p" {
            self.emit_open_tag(name);
            self.close_current_tag();
        }
    }

    fn attrib_name(&mut self, start: usize, end: usize) {
        self.attr_name = self.slice(start, end).to_lowercase();
    }

    fn attrib_data(&mut self, start: usize, end: usize) {
        let data = self.slice(start, end).to_owned();
        self.attr_value.push_str(&data);
    }

    fn attrib_char(&mut self, c: char) {
        self.attr_value.push(c);
    }

    fn attrib_end(&mut self) {
        let value = std::mem::take(&mut self.attr_value);
        // Only the attributes the text is made from are kept (a page's others cost memory).
        let used = matches!(self.attr_name.as_str(), "href" | "src" | "alt" | "start" | "type");
        if let Some(attrs) = self.attrs.as_mut().filter(|_| used)
            && !attrs.iter().any(|(n, _)| *n == self.attr_name)
        {
            attrs.push((self.attr_name.clone(), value));
        }
    }

    fn other(&mut self) {
        if !self.too_big {
            self.add(Kind::Other);
        }
    }
}

impl Builder<'_> {
    /// The index of `tag_name` in the document's names.
    fn intern(&mut self) -> u32 {
        if let Some(&i) = self.interned.get(&self.tag_name) {
            return i;
        }
        let i = u32::try_from(self.dom.names.len()).unwrap_or(u32::MAX);
        self.dom.names.push(self.tag_name.clone());
        self.interned.insert(self.tag_name.clone(), i);
        i
    }

    fn join_text(&mut self, text: String) {
        if let Some(id) = self.last_text
            && let Kind::Text(t) = &mut self.dom.nodes[id].kind
        {
            t.push_str(&text);
            return;
        }
        let id = self.add(Kind::Text(text));
        self.last_text = Some(id);
    }
}
