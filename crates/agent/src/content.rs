//! The conversation in the Gemini API's shape, which every client speaks: a list of
//! `{role, parts}` where each part is kept as the JSON the API produced, so that fields this
//! code does not know (thought signatures, for one) go back to the model untouched.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One message: `user` or `model`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Content {
    pub role: String,
    pub parts: Vec<Value>,
}

impl Content {
    pub fn user_text(text: impl Into<String>) -> Self {
        Self { role: "user".into(), parts: vec![json!({"text": text.into()})] }
    }
}

/// A function call as the model sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionCall {
    /// The model's id, if it gave one.
    pub id: Option<String>,
    pub name: String,
    pub args: Value,
    /// Set when the arguments were not a JSON object (the raw text, for the error).
    pub malformed: Option<String>,
}

/// The function call in a part, if it is one.
pub fn function_call(part: &Value) -> Option<FunctionCall> {
    let fc = part.get("functionCall")?;
    Some(FunctionCall {
        id: fc.get("id").and_then(Value::as_str).map(String::from),
        name: fc.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
        args: fc.get("args").cloned().unwrap_or_else(|| json!({})),
        malformed: part.get("_malformedArguments").and_then(Value::as_str).map(String::from),
    })
}

/// The visible text of a part (thoughts excluded).
pub fn text(part: &Value) -> Option<&str> {
    if part.get("thought").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    part.get("text").and_then(Value::as_str)
}

/// Token counts of one model call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.total_tokens += other.total_tokens;
    }
}

/// A complete model answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelTurn {
    pub parts: Vec<Value>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The candidate's `groundingMetadata` (search and URL-context answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounding: Option<Value>,
}

impl ModelTurn {
    pub fn function_calls(&self) -> Vec<FunctionCall> {
        self.parts.iter().filter_map(function_call).collect()
    }

    /// All visible text, concatenated.
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(text).collect()
    }

    /// Appends streamed parts, merging plain text into the previous plain text part.
    pub fn push_part(&mut self, part: Value) {
        let plain = |p: &Value| {
            p.as_object()
                .is_some_and(|m| m.len() == 1 && m.get("text").is_some_and(Value::is_string))
        };
        if plain(&part)
            && let Some(last) = self.parts.last_mut().filter(|l| plain(l))
        {
            let add = part["text"].as_str().unwrap_or_default().to_string();
            if let Some(Value::String(s)) = last.get_mut("text") {
                s.push_str(&add);
            }
            return;
        }
        self.parts.push(part);
    }

    /// The turn as a history entry.
    pub fn content(&self) -> Content {
        Content { role: "model".into(), parts: self.parts.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_text_merges_but_calls_and_signed_parts_stay_apart() {
        let mut t = ModelTurn::default();
        t.push_part(json!({"text": "Hel"}));
        t.push_part(json!({"text": "lo"}));
        t.push_part(json!({"text": "", "thoughtSignature": "sig"}));
        t.push_part(json!({"functionCall": {"name": "ls", "args": {"dir_path": "."}}}));
        t.push_part(json!({"text": "!"}));
        assert_eq!(t.parts.len(), 4);
        assert_eq!(t.text(), "Hello!");
        let calls = t.function_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!((calls[0].name.as_str(), calls[0].id.as_deref()), ("ls", None));
    }

    #[test]
    fn thoughts_are_not_text() {
        assert_eq!(text(&json!({"text": "hmm", "thought": true})), None);
        assert_eq!(text(&json!({"text": "yes"})), Some("yes"));
    }
}
