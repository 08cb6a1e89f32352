//! The one way JSON from outside is read (issue 47): a client's or an editor's message, a
//! model's answer, a tool call's arguments, a hook's or a discovery command's output, a
//! settings file, a stored session. A parsed value takes some 30 to 700 times the text of a
//! small value (`[0,0,…]`, `{"a":{"a":…}}`), so a message of tiny values just under a door's
//! byte limit took gigabytes before any other limit looked at it. Here the text is measured
//! first, in one pass over its bytes that holds nothing: its length, its values (objects,
//! arrays and leaves) and how deep it nests, each against the door's [`JsonBudget`]. Only text
//! within all three is parsed, so what a parse can cost is bounded by the budget, not by the
//! sender.

use serde::de::DeserializeOwned;

mod comments;
mod leading;
pub use comments::strip_comments;
pub use leading::{leading_id, top_value};

use crate::limits::{JSON_DEPTH, MESSAGE_VALUES};

/// What one JSON text from outside may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonBudget {
    /// Its length in bytes.
    pub bytes: usize,
    /// Its values: every object, array, string, number, `true`, `false` and `null`.
    pub values: usize,
    /// How many objects and arrays deep it nests.
    pub depth: usize,
}

impl JsonBudget {
    /// A message of at most `bytes` bytes, with the values and depth of one message
    /// ([`MESSAGE_VALUES`], [`JSON_DEPTH`]).
    pub const fn message(bytes: usize) -> Self {
        Self { bytes, values: MESSAGE_VALUES, depth: JSON_DEPTH }
    }

    /// This budget with another count of values.
    pub const fn with_values(self, values: usize) -> Self {
        Self { values, ..self }
    }
}

/// Why a JSON text was not parsed: the limit it passed, named so that the sender can tell what
/// to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonRefusal {
    /// Longer than the budget's bytes.
    #[error("it is {bytes} bytes long, over the limit of {limit} bytes")]
    TooLong {
        /// The text's length.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// More values than the budget's (counted up to one past it: the rest is not looked at).
    #[error("it holds more than {limit} JSON values (objects, arrays and leaves)")]
    TooManyValues {
        /// The limit.
        limit: usize,
    },
    /// Nested deeper than the budget's depth.
    #[error("it is nested more than {limit} levels deep")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
}

/// Why a JSON text gave no value.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// Over a limit: not parsed.
    #[error(transparent)]
    Refused(#[from] JsonRefusal),
    /// Within the limits, but not JSON (or not of the expected shape).
    #[error(transparent)]
    Invalid(#[from] serde_json::Error),
}

/// What [`measure`] found of a text it read to the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Its values, counted as [`count_values`] counts them.
    pub values: usize,
    /// The deepest it nests.
    pub depth: usize,
}

/// Measures `text` against `budget` in one pass over its bytes, stopping at the first limit it
/// passes. Values are counted as containers opened and separators outside strings (exact for
/// valid JSON but for an empty container, which counts as holding one value); invalid text is
/// measured as well as it can be and left for the parser to refuse.
pub fn measure(text: &[u8], budget: JsonBudget) -> Result<Shape, JsonRefusal> {
    if text.len() > budget.bytes {
        return Err(JsonRefusal::TooLong { bytes: text.len(), limit: budget.bytes });
    }
    let (mut values, mut depth, mut deepest) = (1usize, 0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                values += 1;
                depth += 1;
                if depth > budget.depth {
                    return Err(JsonRefusal::TooDeep { limit: budget.depth });
                }
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => continue,
        }
        if values > budget.values {
            return Err(JsonRefusal::TooManyValues { limit: budget.values });
        }
    }
    Ok(Shape { values, depth: deepest })
}

/// The values of a JSON text, counted from its bytes as [`measure`] counts them, to the end.
pub fn count_values(text: &[u8]) -> usize {
    let all = JsonBudget { bytes: usize::MAX, values: usize::MAX, depth: usize::MAX };
    measure(text, all).map_or(usize::MAX, |shape| shape.values)
}

/// Parses `text` into `T` once it is measured within `budget`. A parse of a large text is
/// noted (see [`crate::memory`]) so that what it took is given back once it is dropped.
pub fn parse<T: DeserializeOwned>(text: &[u8], budget: JsonBudget) -> Result<T, JsonError> {
    let shape = measure(text, budget)?;
    crate::memory::note_parsed(text.len(), shape.values);
    Ok(serde_json::from_slice(text)?)
}

/// [`parse`] for text already in a string.
pub fn parse_str<T: DeserializeOwned>(text: &str, budget: JsonBudget) -> Result<T, JsonError> {
    parse(text.as_bytes(), budget)
}

#[cfg(test)]
mod tests;
