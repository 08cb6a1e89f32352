//! The answer as it is built: text parts in one buffer the engine hands on without copying,
//! until an image or PDF makes it a list of parts; what fits in it, and the notice for the
//! files that do not.

use toolbelt_core::result::{Content, Part, SharedText};

/// The parts of read_many_files' answer, in order.
pub(super) struct Answer {
    text: SharedText,
    /// Set once a part is not text: from then on, all parts in order.
    parts: Option<Vec<Part>>,
}

impl Answer {
    /// An answer with room for `bytes` of text: one buffer sized once, whose pages are only
    /// touched as the text is written (growing it would hold the old and the new copy).
    pub(super) fn with_room(bytes: usize) -> Self {
        let mut text = SharedText::parts();
        text.reserve(bytes);
        Self { text, parts: None }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.parts.as_ref().map_or(self.text.is_empty(), Vec::is_empty)
    }

    pub(super) fn push_text(&mut self, text: &str) {
        match &mut self.parts {
            Some(parts) => parts.push(Part::text(text)),
            None => self.text.push_part(text),
        }
    }

    pub(super) fn push(&mut self, part: Part) {
        if let Part::Text { text } = &part {
            return self.push_text(text);
        }
        let text = &self.text;
        let parts =
            self.parts.get_or_insert_with(|| text.texts().into_iter().map(Part::text).collect());
        parts.push(part);
    }

    pub(super) fn into_content(self) -> Content {
        match self.parts {
            Some(parts) => Content::Parts(parts),
            None => Content::Shared(self.text),
        }
    }
}

/// Takes the size of `parts` (text, or images and PDFs as the base64 sent) from the budget
/// when they fit in it (found by an adversarial review: six 16 MB images made one 155 MB
/// answer).
pub(super) fn fits(budget: &mut usize, parts: &[Part]) -> bool {
    let size: usize = parts
        .iter()
        .map(|p| match p {
            Part::Text { text } => text.len(),
            Part::InlineData { inline_data } => inline_data.data.len(),
        })
        .sum();
    match budget.checked_sub(size) {
        Some(rest) => {
            *budget = rest;
            true
        }
        None => false,
    }
}

/// What the model is told about files left out for the output limit: how many, the first
/// names, and how to get them.
pub(super) fn left_out_notice(files: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut s = format!(
        "[{} file(s) not included: the output limit of {} characters was reached. Read them with read_file, or call read_many_files again with a narrower include:\n",
        files.len(),
        toolbelt_core::truncate::MAX_OUTPUT_CHARS
    );
    for f in files.iter().take(SHOWN) {
        s.push_str(&format!("- {f}\n"));
    }
    if files.len() > SHOWN {
        s.push_str(&format!("- ...and {} more\n", files.len() - SHOWN));
    }
    s.push_str("]\n\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_parts_stay_in_one_buffer_until_an_image_comes() {
        let mut a = Answer::with_room(0);
        assert!(a.is_empty());
        a.push_text("a");
        a.push(Part::text("b"));
        let Content::Shared(t) = Answer { text: a.text.clone(), parts: None }.into_content() else {
            panic!()
        };
        assert_eq!(t.as_str(), "a\nb");
        a.push(Part::inline("image/png", "AAA="));
        a.push_text("c");
        assert!(!a.is_empty());
        assert_eq!(
            serde_json::to_value(a.into_content()).unwrap(),
            json!([{"text": "a"}, {"text": "b"}, {"inlineData": {"mimeType": "image/png", "data": "AAA="}}, {"text": "c"}])
        );
    }
}
