//! Character references (`&amp;`, `&#65;`, `&#x41;`): htmlparser2's reading, the longest
//! name of the table the page starts with (in an attribute, only names ending in `;`).

use super::{Sink, State, Tokenizer, entities};

impl Tokenizer<'_> {
    pub(super) fn state_before_entity(&mut self, c: u8, sink: &mut impl Sink) {
        self.entity_start = self.index - 1;
        self.entity_value = None;
        self.entity_names = entities::all();
        self.numeric = 0;
        if c == b'#' {
            self.state = State::BeforeNumericEntity;
        } else if c == b'&' {
            // The first `&` is text; this one may start an entity.
        } else {
            self.state = State::InNamedEntity;
            self.state_in_named_entity(c, sink);
        }
    }

    /// A named entity: the longest name in the table that the input starts with (in an
    /// attribute value, only names ending in `;`), as htmlparser2's trie finds it.
    pub(super) fn state_in_named_entity(&mut self, c: u8, sink: &mut impl Sink) {
        let name = &self.buf[self.entity_start + 1..=self.index];
        self.entity_names = entities::narrow(std::mem::take(&mut self.entity_names), name);
        if self.entity_names.is_empty() {
            self.emit_named_entity(sink);
            self.index -= 1;
            return;
        }
        if let Some(value) = entities::exact(&self.entity_names, name)
            && (self.allow_legacy_entity() || c == b';')
        {
            self.entity_value = Some(value);
            self.entity_end = self.index + 1;
            if c == b';' {
                self.emit_named_entity(sink);
            }
        }
    }

    pub(super) fn emit_named_entity(&mut self, sink: &mut impl Sink) {
        self.state = self.base_state;
        if let Some(value) = self.entity_value.take() {
            if self.entity_start > self.section_start {
                self.emit_partial(self.section_start, self.entity_start, sink);
            }
            self.section_start = self.entity_end;
            for ch in value.chars() {
                self.emit_char(ch, sink);
            }
        }
    }

    pub(super) fn state_in_numeric_entity(&mut self, c: u8, sink: &mut impl Sink) {
        let hex = self.state == State::InHexEntity;
        if c == b';' {
            self.emit_numeric_entity(true, sink);
        } else if let Some(d) = (c as char).to_digit(if hex { 16 } else { 10 }) {
            self.numeric = self.numeric.saturating_mul(if hex { 16 } else { 10 }).saturating_add(d);
        } else {
            if self.allow_legacy_entity() {
                self.emit_numeric_entity(false, sink);
            } else {
                self.state = self.base_state;
            }
            self.index -= 1;
        }
    }

    pub(super) fn emit_numeric_entity(&mut self, strict: bool, sink: &mut impl Sink) {
        let hex = self.state == State::InHexEntity;
        let number_start = self.entity_start + 2 + usize::from(hex);
        if number_start != self.index {
            if self.entity_start > self.section_start {
                self.emit_partial(self.section_start, self.entity_start, sink);
            }
            self.section_start = self.index + usize::from(strict);
            self.emit_char(entities::replace_code_point(self.numeric), sink);
        }
        self.state = self.base_state;
    }

    pub(super) fn allow_legacy_entity(&self) -> bool {
        matches!(self.base_state, State::Text | State::InSpecialTag)
    }

    pub(super) fn emit_partial(&mut self, start: usize, end: usize, sink: &mut impl Sink) {
        if self.allow_legacy_entity() {
            sink.text(start, end);
        } else {
            sink.attrib_data(start, end);
        }
    }

    pub(super) fn emit_char(&mut self, c: char, sink: &mut impl Sink) {
        if self.allow_legacy_entity() {
            sink.text_char(c);
        } else {
            sink.attrib_char(c);
        }
    }
}
