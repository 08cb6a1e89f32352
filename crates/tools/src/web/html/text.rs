//! The text a page's blocks make, as upstream's converter lays it out with `wordwrap: false`:
//! blocks, lists and list items on a stack, each with its finished text and the line being
//! built, and line breaks asked for before and after each block, the larger one winning.
//! Texts are appended in place (a block's text is never copied into its parent's anew).

/// html-to-text's white space: words are what lies between these.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\u{c}' | '\u{200b}')
}

/// The line being built, as text: words joined by single spaces, lines by `\n`.
#[derive(Default)]
struct Inline {
    text: String,
    /// Something was added since the last clear (an empty line counts).
    used: bool,
    /// The current line has a word.
    line_has_words: bool,
    /// The last text added ended in white space: the next word starts a new word.
    stashed_space: bool,
}

impl Inline {
    fn push_word(&mut self, word: &str) {
        if self.line_has_words {
            self.text.push(' ');
        }
        self.concat_word(word);
    }

    fn concat_word(&mut self, word: &str) {
        self.text.push_str(word);
        self.line_has_words = true;
        self.used = true;
    }

    fn start_new_line(&mut self, n: usize) {
        self.text.extend(std::iter::repeat_n('\n', n));
        self.line_has_words = false;
        self.used = true;
    }

    /// Clears the text; `stashed_space` stays, as in the original.
    fn clear(&mut self) {
        self.text.clear();
        self.used = false;
        self.line_has_words = false;
    }
}

enum Kind {
    Block,
    List { max_prefix: usize },
    Item { prefix: String },
}

struct Item {
    kind: Kind,
    leading: usize,
    inline: Inline,
    raw: String,
    stashed: usize,
    is_pre: bool,
}

impl Item {
    fn new(kind: Kind, leading: usize, is_pre: bool) -> Self {
        Item { kind, leading, inline: Inline::default(), raw: String::new(), stashed: 0, is_pre }
    }

    /// The item's text so far, moved into `raw`.
    fn flush(&mut self) {
        if self.inline.used {
            if self.raw.is_empty() {
                std::mem::swap(&mut self.raw, &mut self.inline.text);
            } else {
                self.raw.push_str(&self.inline.text);
            }
        }
        self.inline.clear();
    }

    /// Adds a closed child's text (`addText`).
    fn add_text(&mut self, text: String, leading: usize, trailing: usize) {
        self.flush();
        let breaks = self.stashed.max(leading);
        if self.raw.is_empty() {
            self.raw = text;
            self.leading = breaks;
        } else {
            self.raw.extend(std::iter::repeat_n('\n', breaks));
            self.raw.push_str(&text);
        }
        self.stashed = trailing;
    }
}

/// How words are changed on their way in: upper case in headings; inside links, each link
/// notes that it has text.
#[derive(Default)]
struct Transforms {
    upper: usize,
    links: Vec<bool>,
}

pub struct Builder {
    stack: Vec<Item>,
    transforms: Transforms,
    /// Bytes the closing of blocks may still copy: each level of nesting copies its text once,
    /// and list items and quotes widen each line (a page of 400,000 `<br>` in 500 nested lists
    /// would make 600 MB). As every text made counts, this bounds what open blocks hold
    /// together too (twelve list levels each holding a text just under `max_text` held
    /// 283 MB). Past it the page is read without layout.
    budget: usize,
    /// The longest text a block may have (quotes and list items widen every line: a list
    /// item around a `pre` of ten million empty lines made a text of 115 MB).
    max_text: usize,
    overflow: bool,
}

impl Builder {
    pub fn new(max_text: usize, budget: usize) -> Self {
        Builder {
            stack: vec![Item::new(Kind::Block, 1, false)],
            transforms: Transforms::default(),
            budget,
            max_text,
            overflow: false,
        }
    }

    /// Takes `copied` bytes from the budget for a text of `size` bytes; false (and the builder
    /// given up) past the budget or [`Builder::max_text`].
    fn spend(&mut self, copied: usize, size: usize) -> bool {
        if self.overflow || copied > self.budget || size > self.max_text {
            self.overflow = true;
            return false;
        }
        self.budget -= copied;
        true
    }

    /// Adds a closed child's text to the block on top, within the budget.
    fn add_to_top(&mut self, text: String, leading: usize, trailing: usize) {
        let top = self.top();
        let size = top.raw.len() + top.inline.text.len() + leading.max(top.stashed) + text.len();
        if self.spend(text.len(), size) {
            self.top().add_text(text, leading, trailing);
        }
    }

    fn top(&mut self) -> &mut Item {
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    /// The item on top, taken off (never the root: every open has its close, in the walk).
    fn pop(&mut self) -> Item {
        if self.stack.len() > 1
            && let Some(item) = self.stack.pop()
        {
            return item;
        }
        Item::new(Kind::Block, 1, false)
    }

    pub fn upper_case(&mut self, on: bool) {
        if on {
            self.transforms.upper += 1;
        } else {
            self.transforms.upper -= 1;
        }
    }

    pub fn start_link(&mut self) {
        self.transforms.links.push(false);
    }

    /// Ends the innermost link; true if words were added inside it.
    pub fn end_link(&mut self) -> bool {
        self.transforms.links.pop().unwrap_or(false)
    }

    /// Text in the flow (`addInline`): white space runs become one space; in `pre`, as is.
    pub fn add_inline(&mut self, text: &str, transform: bool) {
        if self.overflow {
            return;
        }
        let transforms = &mut self.transforms;
        let last = self.stack.len() - 1;
        let item = &mut self.stack[last];
        if item.is_pre {
            item.raw.push_str(text);
            return;
        }
        if text.is_empty() || (item.stashed > 0 && text.chars().all(is_space)) {
            return;
        }
        if item.stashed > 0 {
            item.inline.start_new_line(item.stashed);
        }
        let inline = &mut item.inline;
        let previously_stashed = inline.stashed_space;
        let mut any = false;
        for word in text.split(is_space).filter(|w| !w.is_empty()) {
            let upper;
            let word = if transform && (transforms.upper > 0 || !transforms.links.is_empty()) {
                transforms.links.iter_mut().for_each(|l| *l = true);
                if transforms.upper > 0 {
                    upper = word.to_uppercase();
                    &upper
                } else {
                    word
                }
            } else {
                word
            };
            if any || previously_stashed || text.starts_with(is_space) {
                inline.push_word(word);
            } else {
                inline.concat_word(word);
            }
            any = true;
        }
        inline.stashed_space = (previously_stashed && !any) || text.ends_with(is_space);
        item.stashed = 0;
    }

    pub fn add_line_break(&mut self) {
        let item = self.top();
        if item.is_pre {
            item.raw.push('\n');
        } else {
            item.inline.start_new_line(1);
        }
    }

    pub fn open_block(&mut self, leading: usize, pre: bool) {
        let is_pre = pre || self.top().is_pre;
        self.stack.push(Item::new(Kind::Block, leading, is_pre));
    }

    /// Closes a block; `quote` prefixes its lines with `> ` (a `blockquote`).
    pub fn close_block(&mut self, trailing: usize, quote: bool) {
        let mut block = self.pop();
        block.flush();
        let mut text = block.raw;
        if quote {
            let lines = text.matches('\n').count() + 1;
            if !self.spend(text.len(), text.len() + 2 * lines) {
                return;
            }
            let end = text.trim_end_matches('\n').len();
            text.truncate(end);
            let start = text.len() - text.trim_start_matches('\n').len();
            text.drain(..start);
            text = widen(text, "> ", "> ");
        }
        let trailing = block.stashed.max(trailing);
        self.add_to_top(text, block.leading, trailing);
    }

    pub fn open_list(&mut self, leading: usize, max_prefix: usize) {
        let is_pre = self.top().is_pre;
        self.stack.push(Item::new(Kind::List { max_prefix }, leading, is_pre));
    }

    pub fn open_list_item(&mut self, prefix: String) {
        let is_pre = self.top().is_pre;
        self.stack.push(Item::new(Kind::Item { prefix }, 1, is_pre));
    }

    pub fn close_list_item(&mut self) {
        let mut item = self.pop();
        item.flush();
        let lines = item.raw.matches('\n').count() + 1;
        let prefix = match item.kind {
            Kind::Item { prefix } => prefix,
            _ => String::new(),
        };
        let max_prefix = match self.top().kind {
            Kind::List { max_prefix } => max_prefix,
            _ => 0,
        };
        let width = prefix.chars().count().max(max_prefix);
        if !self.spend(item.raw.len(), item.raw.len() + lines * width + prefix.len() + width) {
            return;
        }
        let text = widen(item.raw, &format!("{prefix:<width$}"), &" ".repeat(width));
        self.add_to_top(text, item.leading, item.stashed.max(1));
    }

    pub fn close_list(&mut self, trailing: usize) {
        let mut list = self.pop();
        list.flush();
        if !list.raw.is_empty() {
            self.add_to_top(list.raw, list.leading, trailing);
        }
    }

    /// The text; `None` if the page was given up (see [`Builder::budget`]).
    pub fn finish(mut self) -> Option<String> {
        if self.overflow {
            return None;
        }
        let root = self.top();
        root.flush();
        Some(std::mem::take(&mut root.raw))
    }
}

/// `text` with `first` in front and `after` after each line break, made in place (one
/// buffer, lines moved from the back): a text of millions of lines is not held twice, nor
/// split into a string per line.
fn widen(text: String, first: &str, after: &str) -> String {
    let mut b = text.into_bytes();
    let old = b.len();
    let breaks = memchr::memchr_iter(b'\n', &b).count();
    let (mut r, mut w) = (old, old + breaks * after.len() + first.len());
    b.resize(w, 0);
    loop {
        let at = memchr::memrchr(b'\n', &b[..r]);
        let start = at.map_or(0, |p| p + 1);
        w -= r - start;
        b.copy_within(start..r, w);
        let Some(p) = at else { break };
        w -= after.len();
        b[w..w + after.len()].copy_from_slice(after.as_bytes());
        w -= 1;
        b[w] = b'\n';
        r = p;
    }
    b[..w].copy_from_slice(first.as_bytes());
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn widen_puts_its_marks_where_the_original_did() {
        for text in ["", "a", "\n", "a\nb", "\n\na\n", "é\nü\n\n€"] {
            let list = format!(" 1. {}", text.replace('\n', "\n    "));
            assert_eq!(super::widen(text.into(), " 1. ", "    "), list, "{text:?}");
            let quote = text.split('\n').map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n");
            assert_eq!(super::widen(text.into(), "> ", "> "), quote, "{text:?}");
        }
    }
}
