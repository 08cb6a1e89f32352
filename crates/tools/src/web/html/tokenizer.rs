//! The tokenizer of htmlparser2 8.0.2 (the parser behind upstream's html-to-text), as it runs
//! there: HTML mode, entities decoded. It works on bytes: every character it looks at is ASCII,
//! so a UTF-8 page splits exactly where the UTF-16 original splits.

use super::entities;

mod references;

/// What the tokenizer reports, with byte ranges of the input. Only a tree needs tags' ends and
/// attributes: the rest report nothing by default.
pub trait Sink {
    fn text(&mut self, start: usize, end: usize);
    fn text_char(&mut self, c: char);
    fn open_tag_name(&mut self, start: usize, end: usize);
    fn close_tag(&mut self, start: usize, end: usize);
    fn open_tag_end(&mut self) {}
    fn self_closing_tag(&mut self) {}
    fn attrib_name(&mut self, _start: usize, _end: usize) {}
    fn attrib_data(&mut self, _start: usize, _end: usize) {}
    fn attrib_char(&mut self, _c: char) {}
    fn attrib_end(&mut self) {}
    /// A comment, declaration, processing instruction or CDATA section (all left out of the
    /// text, but they are nodes: they end a run of text and count as list items).
    fn other(&mut self) {}
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    BeforeTagName,
    InTagName,
    InSelfClosingTag,
    BeforeClosingTagName,
    InClosingTagName,
    AfterClosingTagName,
    BeforeAttributeName,
    InAttributeName,
    AfterAttributeName,
    BeforeAttributeValue,
    InAttributeValueDq,
    InAttributeValueSq,
    InAttributeValueNq,
    BeforeDeclaration,
    InDeclaration,
    InProcessingInstruction,
    BeforeComment,
    CdataSequence,
    InSpecialComment,
    InCommentLike,
    BeforeSpecialS,
    SpecialStartSequence,
    InSpecialTag,
    BeforeEntity,
    BeforeNumericEntity,
    InNamedEntity,
    InNumericEntity,
    InHexEntity,
}

const CDATA: &[u8] = b"CDATA[";
const CDATA_END: &[u8] = b"]]>";
const COMMENT_END: &[u8] = b"-->";
const SCRIPT_END: &[u8] = b"</script";
const STYLE_END: &[u8] = b"</style";
const TITLE_END: &[u8] = b"</title";

/// htmlparser2's `sectionStart = -1`: no section. Text taken from it at the end of the page
/// is the page's last UTF-16 unit (`slice(-1)`), which it keeps of a page cut inside a tag.
const GONE: usize = usize::MAX;

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\t' | 0x0c | b'\r')
}

fn is_end_of_tag_section(c: u8) -> bool {
    c == b'/' || c == b'>' || is_whitespace(c)
}

/// Runs the tokenizer over `buf`, reporting to `sink`.
pub fn tokenize(buf: &[u8], sink: &mut impl Sink) {
    let mut t = Tokenizer {
        buf,
        state: State::Text,
        base_state: State::Text,
        section_start: 0,
        index: 0,
        is_special: false,
        sequence: b"",
        sequence_index: 0,
        entity_start: 0,
        entity_end: 0,
        entity_value: None,
        entity_names: 0..0,
        numeric: 0,
    };
    while t.index < buf.len() {
        t.step(buf[t.index], sink);
        t.index += 1;
    }
    t.cleanup(sink);
    t.finish(sink);
}

struct Tokenizer<'a> {
    buf: &'a [u8],
    state: State,
    base_state: State,
    section_start: usize,
    index: usize,
    is_special: bool,
    sequence: &'static [u8],
    sequence_index: usize,
    /// Where the `&` of the entity being read is.
    entity_start: usize,
    /// Where the longest entity name matched so far ends (after its `;` if any).
    entity_end: usize,
    entity_value: Option<&'static str>,
    /// The names that start with what the entity being read has so far.
    entity_names: std::ops::Range<usize>,
    /// The value of a numeric entity so far (saturating: past U+10FFFF it is U+FFFD anyway).
    numeric: u32,
}

impl Tokenizer<'_> {
    fn step(&mut self, c: u8, sink: &mut impl Sink) {
        match self.state {
            State::Text => self.state_text(c, sink),
            State::SpecialStartSequence => self.state_special_start_sequence(c, sink),
            State::InSpecialTag => self.state_in_special_tag(c, sink),
            State::CdataSequence => self.state_cdata_sequence(c, sink),
            State::InAttributeValueDq => self.in_attribute_value(c, b'"', sink),
            State::InAttributeValueSq => self.in_attribute_value(c, b'\'', sink),
            State::InAttributeValueNq => self.state_in_attribute_value_nq(c, sink),
            State::InAttributeName => self.state_in_attribute_name(c, sink),
            State::InCommentLike => self.state_in_comment_like(c, sink),
            State::InSpecialComment => {
                if c == b'>' || self.fast_forward_to(b'>') {
                    sink.other();
                    self.state = State::Text;
                    self.section_start = self.index + 1;
                }
            }
            State::BeforeAttributeName => self.state_before_attribute_name(c, sink),
            State::InTagName => self.state_in_tag_name(c, sink),
            State::InClosingTagName => self.state_in_closing_tag_name(c, sink),
            State::BeforeTagName => self.state_before_tag_name(c, sink),
            State::AfterAttributeName => self.state_after_attribute_name(c, sink),
            State::BeforeAttributeValue => self.state_before_attribute_value(c, sink),
            State::BeforeClosingTagName => self.state_before_closing_tag_name(c),
            State::AfterClosingTagName => self.state_after_closing_tag_name(c),
            State::BeforeSpecialS => self.state_before_special_s(c, sink),
            State::InSelfClosingTag => self.state_in_self_closing_tag(c, sink),
            State::InDeclaration | State::InProcessingInstruction => {
                if c == b'>' || self.fast_forward_to(b'>') {
                    sink.other();
                    self.state = State::Text;
                    self.section_start = self.index + 1;
                }
            }
            State::BeforeDeclaration => {
                if c == b'[' {
                    self.state = State::CdataSequence;
                    self.sequence_index = 0;
                } else {
                    self.state =
                        if c == b'-' { State::BeforeComment } else { State::InDeclaration };
                }
            }
            State::BeforeComment => {
                if c == b'-' {
                    self.state = State::InCommentLike;
                    self.sequence = COMMENT_END;
                    self.sequence_index = 2;
                    self.section_start = self.index + 1;
                } else {
                    self.state = State::InDeclaration;
                }
            }
            State::InNamedEntity => self.state_in_named_entity(c, sink),
            State::BeforeEntity => self.state_before_entity(c, sink),
            State::InHexEntity | State::InNumericEntity => self.state_in_numeric_entity(c, sink),
            State::BeforeNumericEntity => {
                if c | 0x20 == b'x' {
                    self.state = State::InHexEntity;
                } else {
                    self.state = State::InNumericEntity;
                    self.state_in_numeric_entity(c, sink);
                }
            }
        }
    }

    fn state_text(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'<' {
            if self.index > self.section_start {
                sink.text(self.section_start, self.index);
            }
            self.state = State::BeforeTagName;
            self.section_start = self.index;
        } else if c == b'&' {
            self.state = State::BeforeEntity;
        }
    }

    fn state_special_start_sequence(&mut self, c: u8, sink: &mut impl Sink) {
        let is_end = self.sequence_index == self.sequence.len();
        let is_match = if is_end {
            is_end_of_tag_section(c)
        } else {
            c | 0x20 == self.sequence[self.sequence_index]
        };
        if !is_match {
            self.is_special = false;
        } else if !is_end {
            self.sequence_index += 1;
            return;
        }
        self.sequence_index = 0;
        self.state = State::InTagName;
        self.state_in_tag_name(c, sink);
    }

    fn state_in_special_tag(&mut self, c: u8, sink: &mut impl Sink) {
        if self.sequence_index == self.sequence.len() {
            if c == b'>' || is_whitespace(c) {
                let end_of_text = self.index - self.sequence.len();
                if self.section_start < end_of_text {
                    sink.text(self.section_start, end_of_text);
                }
                self.is_special = false;
                self.section_start = end_of_text + 2;
                self.state_in_closing_tag_name(c, sink);
                return;
            }
            self.sequence_index = 0;
        }
        if c | 0x20 == self.sequence[self.sequence_index] {
            self.sequence_index += 1;
        } else if self.sequence_index == 0 {
            if self.sequence == TITLE_END {
                if c == b'&' {
                    self.state = State::BeforeEntity;
                }
            } else if self.fast_forward_to(b'<') {
                self.sequence_index = 1;
            }
        } else {
            self.sequence_index = usize::from(c == b'<');
        }
    }

    fn state_cdata_sequence(&mut self, c: u8, sink: &mut impl Sink) {
        if c == CDATA[self.sequence_index] {
            self.sequence_index += 1;
            if self.sequence_index == CDATA.len() {
                self.state = State::InCommentLike;
                self.sequence = CDATA_END;
                self.sequence_index = 0;
                self.section_start = self.index + 1;
            }
        } else {
            self.sequence_index = 0;
            self.state = State::InDeclaration;
            self.step(c, sink);
        }
    }

    /// Moves to the next `c` (true) or to the last byte (false).
    fn fast_forward_to(&mut self, c: u8) -> bool {
        match memchr::memchr(c, &self.buf[self.index + 1..]) {
            Some(n) => {
                self.index += n + 1;
                true
            }
            None => {
                self.index = self.buf.len() - 1;
                false
            }
        }
    }

    fn state_in_comment_like(&mut self, c: u8, sink: &mut impl Sink) {
        if c == self.sequence[self.sequence_index] {
            self.sequence_index += 1;
            if self.sequence_index == self.sequence.len() {
                sink.other();
                self.sequence_index = 0;
                self.section_start = self.index + 1;
                self.state = State::Text;
            }
        } else if self.sequence_index == 0 {
            if self.fast_forward_to(self.sequence[0]) {
                self.sequence_index = 1;
            }
        } else if c != self.sequence[self.sequence_index - 1] {
            self.sequence_index = 0;
        }
    }

    fn start_special(&mut self, sequence: &'static [u8], offset: usize) {
        self.is_special = true;
        self.sequence = sequence;
        self.sequence_index = offset;
        self.state = State::SpecialStartSequence;
    }

    fn state_before_tag_name(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'!' {
            self.state = State::BeforeDeclaration;
            self.section_start = self.index + 1;
        } else if c == b'?' {
            self.state = State::InProcessingInstruction;
            self.section_start = self.index + 1;
        } else if c.is_ascii_alphabetic() {
            let lower = c | 0x20;
            self.section_start = self.index;
            if lower == b't' {
                self.start_special(TITLE_END, 3);
            } else {
                self.state = if lower == b's' { State::BeforeSpecialS } else { State::InTagName };
            }
        } else if c == b'/' {
            self.state = State::BeforeClosingTagName;
        } else {
            self.state = State::Text;
            self.state_text(c, sink);
        }
    }

    fn state_in_tag_name(&mut self, c: u8, sink: &mut impl Sink) {
        if is_end_of_tag_section(c) {
            sink.open_tag_name(self.section_start, self.index);
            self.section_start = GONE;
            self.state = State::BeforeAttributeName;
            self.state_before_attribute_name(c, sink);
        }
    }

    fn state_before_closing_tag_name(&mut self, c: u8) {
        if is_whitespace(c) {
        } else if c == b'>' {
            self.state = State::Text;
        } else {
            self.state = if c.is_ascii_alphabetic() {
                State::InClosingTagName
            } else {
                State::InSpecialComment
            };
            self.section_start = self.index;
        }
    }

    fn state_in_closing_tag_name(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'>' || is_whitespace(c) {
            sink.close_tag(self.section_start, self.index);
            self.section_start = GONE;
            self.state = State::AfterClosingTagName;
            self.state_after_closing_tag_name(c);
        }
    }

    fn state_after_closing_tag_name(&mut self, c: u8) {
        if c == b'>' || self.fast_forward_to(b'>') {
            self.state = State::Text;
            self.base_state = State::Text;
            self.section_start = self.index + 1;
        }
    }

    fn state_before_attribute_name(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'>' {
            sink.open_tag_end();
            if self.is_special {
                self.state = State::InSpecialTag;
                self.sequence_index = 0;
            } else {
                self.state = State::Text;
            }
            self.base_state = self.state;
            self.section_start = self.index + 1;
        } else if c == b'/' {
            self.state = State::InSelfClosingTag;
        } else if !is_whitespace(c) {
            self.state = State::InAttributeName;
            self.section_start = self.index;
        }
    }

    fn state_in_self_closing_tag(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'>' {
            sink.self_closing_tag();
            self.state = State::Text;
            self.base_state = State::Text;
            self.section_start = self.index + 1;
            self.is_special = false;
        } else if !is_whitespace(c) {
            self.state = State::BeforeAttributeName;
            self.state_before_attribute_name(c, sink);
        }
    }

    fn state_in_attribute_name(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'=' || is_end_of_tag_section(c) {
            sink.attrib_name(self.section_start, self.index);
            self.section_start = GONE;
            self.state = State::AfterAttributeName;
            self.state_after_attribute_name(c, sink);
        }
    }

    fn state_after_attribute_name(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'=' {
            self.state = State::BeforeAttributeValue;
        } else if c == b'/' || c == b'>' {
            sink.attrib_end();
            self.state = State::BeforeAttributeName;
            self.state_before_attribute_name(c, sink);
        } else if !is_whitespace(c) {
            sink.attrib_end();
            self.state = State::InAttributeName;
            self.section_start = self.index;
        }
    }

    fn state_before_attribute_value(&mut self, c: u8, sink: &mut impl Sink) {
        if c == b'"' {
            self.state = State::InAttributeValueDq;
            self.section_start = self.index + 1;
        } else if c == b'\'' {
            self.state = State::InAttributeValueSq;
            self.section_start = self.index + 1;
        } else if !is_whitespace(c) {
            self.section_start = self.index;
            self.state = State::InAttributeValueNq;
            self.state_in_attribute_value_nq(c, sink);
        }
    }

    fn in_attribute_value(&mut self, c: u8, quote: u8, sink: &mut impl Sink) {
        if c == quote {
            sink.attrib_data(self.section_start, self.index);
            self.section_start = GONE;
            sink.attrib_end();
            self.state = State::BeforeAttributeName;
        } else if c == b'&' {
            self.base_state = self.state;
            self.state = State::BeforeEntity;
        }
    }

    fn state_in_attribute_value_nq(&mut self, c: u8, sink: &mut impl Sink) {
        if is_whitespace(c) || c == b'>' {
            sink.attrib_data(self.section_start, self.index);
            self.section_start = GONE;
            sink.attrib_end();
            self.state = State::BeforeAttributeName;
            self.state_before_attribute_name(c, sink);
        } else if c == b'&' {
            self.base_state = self.state;
            self.state = State::BeforeEntity;
        }
    }

    fn state_before_special_s(&mut self, c: u8, sink: &mut impl Sink) {
        let lower = c | 0x20;
        if lower == b'c' {
            self.start_special(SCRIPT_END, 4);
        } else if lower == b't' {
            self.start_special(STYLE_END, 4);
        } else {
            self.state = State::InTagName;
            self.state_in_tag_name(c, sink);
        }
    }

    fn cleanup(&mut self, sink: &mut impl Sink) {
        if self.section_start != self.index && self.section_start != GONE {
            if self.state == State::Text
                || (self.state == State::InSpecialTag && self.sequence_index == 0)
            {
                sink.text(self.section_start, self.index);
                self.section_start = self.index;
            } else if matches!(
                self.state,
                State::InAttributeValueDq | State::InAttributeValueSq | State::InAttributeValueNq
            ) {
                sink.attrib_data(self.section_start, self.index);
                self.section_start = self.index;
            }
        }
    }

    fn finish(&mut self, sink: &mut impl Sink) {
        if self.state == State::InNamedEntity {
            self.emit_named_entity(sink);
        }
        if self.section_start == GONE || self.section_start < self.index {
            let end = self.buf.len();
            match self.state {
                State::InCommentLike => sink.other(),
                State::InNumericEntity | State::InHexEntity if self.allow_legacy_entity() => {
                    self.emit_numeric_entity(false, sink);
                }
                State::InTagName
                | State::BeforeAttributeName
                | State::BeforeAttributeValue
                | State::AfterAttributeName
                | State::InAttributeName
                | State::InAttributeValueSq
                | State::InAttributeValueDq
                | State::InAttributeValueNq
                | State::InClosingTagName => {}
                _ if self.section_start == GONE => {
                    // The last UTF-16 unit: half of a character past U+FFFF, which is written
                    // as U+FFFD.
                    if let Some(c) =
                        self.buf.utf8_chunks().last().and_then(|c| c.valid().chars().last())
                    {
                        if c.len_utf16() == 1 {
                            sink.text(end - c.len_utf8(), end);
                        } else {
                            sink.text_char('\u{FFFD}');
                        }
                    }
                }
                _ => sink.text(self.section_start, end),
            }
        }
    }
}
