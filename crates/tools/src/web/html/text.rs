//! Laying out the text of a page's blocks as upstream's converter does with `wordwrap: false`,
//! in our own terms: a stack of open frames (a block, a list, an entry of a list), each with
//! the text written into it so far. Between a frame's pieces go line breaks: a frame asks for
//! some before it and some after it, and where two requests meet the larger one is written;
//! breaks asked for before a frame's first piece are handed on to its parent instead.
//! Words are separated by one space where the source had white space between them, and glued
//! where it had none (`<b>a</b>b` is `ab`). Texts are appended in place: a closed frame's text
//! is moved into its parent, never copied anew.

/// White space for the layout: words lie between these.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\u{c}' | '\u{200b}')
}

/// What a frame is.
enum Role {
    Block,
    /// A list whose entries' markers are padded to `marker_width` characters.
    List {
        marker_width: usize,
    },
    /// An entry of a list, marked with `marker`.
    Entry {
        marker: String,
    },
}

/// An open frame and the text written into it.
struct Frame {
    role: Role,
    text: String,
    /// Line breaks asked for before this frame; raised to what its first closed child asked
    /// for, when that child is its first piece.
    breaks_before: usize,
    /// Line breaks owed before the next piece (what the last closed child asked for after it).
    breaks_owed: usize,
    /// The line being written has a word on it: a word with space before it needs a space.
    on_word: bool,
    /// The text last given ended in white space (kept across closed children).
    space_owed: bool,
    /// Inside a `pre`: text is written as it is.
    verbatim: bool,
}

impl Frame {
    fn new(role: Role, breaks_before: usize, verbatim: bool) -> Self {
        Frame {
            role,
            text: String::new(),
            breaks_before,
            breaks_owed: 0,
            on_word: false,
            space_owed: false,
            verbatim,
        }
    }

    fn newlines(&mut self, n: usize) {
        self.text.extend(std::iter::repeat_n('\n', n));
        self.on_word = false;
    }

    /// Takes in a closed child's `child` text, which asked for `before` and `after` breaks.
    fn take_child(&mut self, child: String, before: usize, after: usize) {
        let breaks = before.max(self.breaks_owed);
        if self.text.is_empty() {
            self.text = child;
            self.breaks_before = breaks;
        } else {
            self.newlines(breaks);
            self.text.push_str(&child);
        }
        self.on_word = false;
        self.breaks_owed = after;
    }
}

/// How words are written: in upper case inside headings; inside links, each open link learns
/// that it holds words.
#[derive(Default)]
struct Style {
    upper_depth: usize,
    links_with_words: Vec<bool>,
}

pub struct Layout {
    frames: Vec<Frame>,
    style: Style,
    /// Bytes the closing of frames may still copy: each level of nesting copies its text once,
    /// and list entries and quotes widen each line (a page of 400,000 `<br>` in 500 nested
    /// lists would make 600 MB). As every text made counts, this bounds what open frames hold
    /// together too (twelve list levels each holding a text just under `max_text` held
    /// 283 MB). Past it the page is read without layout.
    budget: usize,
    /// The longest text a frame may have (quotes and list entries widen every line: an entry
    /// around a `pre` of ten million empty lines made a text of 115 MB).
    max_text: usize,
    given_up: bool,
}

impl Layout {
    pub fn new(max_text: usize, budget: usize) -> Self {
        Layout {
            frames: vec![Frame::new(Role::Block, 1, false)],
            style: Style::default(),
            budget,
            max_text,
            given_up: false,
        }
    }

    /// Takes `copied` bytes from the budget for a text of `size` bytes; false (and the layout
    /// given up) past the budget or [`Layout::max_text`].
    fn spend(&mut self, copied: usize, size: usize) -> bool {
        if self.given_up || copied > self.budget || size > self.max_text {
            self.given_up = true;
            return false;
        }
        self.budget -= copied;
        true
    }

    fn current(&mut self) -> &mut Frame {
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    /// Closes the current frame and returns it (the root frame is never closed: every
    /// opening has its closing in the walk).
    fn close(&mut self) -> Frame {
        match self.frames.len() {
            0 | 1 => Frame::new(Role::Block, 1, false),
            _ => self.frames.pop().unwrap_or_else(|| Frame::new(Role::Block, 1, false)),
        }
    }

    /// Hands a closed frame's text to the current one, within the budget.
    fn hand_up(&mut self, text: String, before: usize, after: usize) {
        let parent = self.current();
        let size = parent.text.len() + before.max(parent.breaks_owed) + text.len();
        if self.spend(text.len(), size) {
            self.current().take_child(text, before, after);
        }
    }

    fn open(&mut self, role: Role, breaks_before: usize, verbatim: bool) {
        let verbatim = verbatim || self.current().verbatim;
        self.frames.push(Frame::new(role, breaks_before, verbatim));
    }

    /// Words from here on are in upper case (`on`), or no longer.
    pub fn upper_case(&mut self, on: bool) {
        if on {
            self.style.upper_depth += 1;
        } else {
            self.style.upper_depth = self.style.upper_depth.saturating_sub(1);
        }
    }

    pub fn begin_link(&mut self) {
        self.style.links_with_words.push(false);
    }

    /// Ends the innermost link: whether words were written inside it.
    pub fn end_link(&mut self) -> bool {
        self.style.links_with_words.pop().unwrap_or(false)
    }

    /// Text of the page's flow. White space between words becomes one space (none where the
    /// source had none); in `pre`, the text is written as it is. `styled`: subject to upper
    /// case and counted as a link's words (link targets and image texts are not).
    pub fn text(&mut self, text: &str, styled: bool) {
        if self.given_up {
            return;
        }
        let last = self.frames.len() - 1;
        let frame = &mut self.frames[last];
        if frame.verbatim {
            frame.text.push_str(text);
            return;
        }
        let blank = text.chars().all(is_space);
        if text.is_empty() || (blank && frame.breaks_owed > 0) {
            return;
        }
        if frame.breaks_owed > 0 {
            let owed = std::mem::take(&mut frame.breaks_owed);
            frame.newlines(owed);
        }
        let style = &mut self.style;
        let restyle = styled && (style.upper_depth > 0 || !style.links_with_words.is_empty());
        // The first word is glued to what came before unless white space separates them.
        let mut spaced = frame.space_owed || text.starts_with(is_space);
        let mut wrote = false;
        for word in text.split(is_space).filter(|w| !w.is_empty()) {
            if frame.on_word && spaced {
                frame.text.push(' ');
            }
            if restyle {
                style.links_with_words.iter_mut().for_each(|has| *has = true);
            }
            if restyle && style.upper_depth > 0 {
                frame.text.push_str(&word.to_uppercase());
            } else {
                frame.text.push_str(word);
            }
            frame.on_word = true;
            spaced = true;
            wrote = true;
        }
        let trailing = text.ends_with(is_space);
        frame.space_owed = trailing || (!wrote && frame.space_owed);
    }

    /// A `<br>`: a new line (owed breaks stay owed).
    pub fn line_break(&mut self) {
        let frame = self.current();
        if frame.verbatim {
            frame.text.push('\n');
        } else {
            frame.newlines(1);
        }
    }

    /// Opens a block asking for `before` breaks before it; `pre` writes its text as it is.
    pub fn begin_block(&mut self, before: usize, pre: bool) {
        self.open(Role::Block, before, pre);
    }

    /// Closes a block asking for `after` breaks after it; `quote` marks each of its lines
    /// with `> ` (its leading and trailing empty lines dropped).
    pub fn end_block(&mut self, after: usize, quote: bool) {
        let block = self.close();
        let mut text = block.text;
        if quote {
            let lines = text.matches('\n').count() + 1;
            if !self.spend(text.len(), text.len() + 2 * lines) {
                return;
            }
            text = marked(trim_newlines(text), "> ", "> ");
        }
        self.hand_up(text, block.breaks_before, after.max(block.breaks_owed));
    }

    /// Opens a list asking for `before` breaks, its markers padded to `marker_width`.
    pub fn begin_list(&mut self, before: usize, marker_width: usize) {
        self.open(Role::List { marker_width }, before, false);
    }

    /// Opens an entry of the current list, marked with `marker`.
    pub fn begin_entry(&mut self, marker: String) {
        self.open(Role::Entry { marker }, 1, false);
    }

    /// Closes an entry: its first line after its marker, the others indented as far.
    pub fn end_entry(&mut self) {
        let entry = self.close();
        let Role::Entry { marker } = entry.role else {
            self.hand_up(entry.text, entry.breaks_before, entry.breaks_owed.max(1));
            return;
        };
        let list_width = match self.current().role {
            Role::List { marker_width } => marker_width,
            _ => 0,
        };
        let width = list_width.max(marker.chars().count());
        let lines = entry.text.matches('\n').count() + 1;
        let grown = entry.text.len() + lines * width + marker.len() + width;
        if !self.spend(entry.text.len(), grown) {
            return;
        }
        let text = marked(entry.text, &format!("{marker:<width$}"), &" ".repeat(width));
        self.hand_up(text, entry.breaks_before, entry.breaks_owed.max(1));
    }

    /// Closes a list asking for `after` breaks after it (an empty list adds nothing).
    pub fn end_list(&mut self, after: usize) {
        let list = self.close();
        if !list.text.is_empty() {
            self.hand_up(list.text, list.breaks_before, after);
        }
    }

    /// The page's text; `None` if the layout was given up (see [`Layout::budget`]).
    pub fn finish(mut self) -> Option<String> {
        if self.given_up {
            return None;
        }
        Some(std::mem::take(&mut self.current().text))
    }
}

/// `text` without line breaks at either end, in place.
fn trim_newlines(mut text: String) -> String {
    text.truncate(text.trim_end_matches('\n').len());
    let start = text.len() - text.trim_start_matches('\n').len();
    text.drain(..start);
    text
}

/// `text` with `first` in front of its first line and `rest` in front of every other, made in
/// one buffer from the back (a text of millions of lines is neither held twice nor split into
/// a string per line).
fn marked(text: String, first: &str, rest: &str) -> String {
    let mut bytes = text.into_bytes();
    let len = bytes.len();
    let breaks = memchr::memchr_iter(b'\n', &bytes).count();
    let mut write = len + breaks * rest.len() + first.len();
    bytes.resize(write, 0);
    let mut read = len;
    loop {
        let newline = memchr::memrchr(b'\n', &bytes[..read]);
        let line = newline.map_or(0, |p| p + 1);
        write -= read - line;
        bytes.copy_within(line..read, write);
        let Some(p) = newline else { break };
        write -= rest.len();
        bytes[write..write + rest.len()].copy_from_slice(rest.as_bytes());
        write -= 1;
        bytes[write] = b'\n';
        read = p;
    }
    bytes[..write].copy_from_slice(first.as_bytes());
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_line_gets_its_mark() {
        for text in ["", "a", "\n", "a\nb", "\n\na\n", "é\nü\n\n€"] {
            let list = format!(" 1. {}", text.replace('\n', "\n    "));
            assert_eq!(super::marked(text.into(), " 1. ", "    "), list, "{text:?}");
            let quote = text.split('\n').map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n");
            assert_eq!(super::marked(text.into(), "> ", "> "), quote, "{text:?}");
        }
    }

    /// Words glued where the source had no white space, one space where it had any, and the
    /// larger of two break requests between blocks.
    #[test]
    fn spaces_and_breaks() {
        let mut l = super::Layout::new(1 << 20, 1 << 20);
        l.text("a", true);
        l.text("b ", true);
        l.text("  c", true);
        l.begin_block(2, false);
        l.text("d", true);
        l.end_block(1, false);
        l.text(" ", true);
        l.begin_block(3, false);
        l.text("e", true);
        l.end_block(1, false);
        assert_eq!(l.finish().unwrap(), "ab c\n\nd\n\n\ne");
    }
}
