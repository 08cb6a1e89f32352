//! What the model receives for a call: a `functionResponse` part (`{"output": ...}` on success,
//! `{"error": ...}` on failure) plus, for binary content, nested or sibling inline-data parts.

use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use crate::result::{Content, Part};
use crate::tool::ModelFamily;

/// Key under which audio/video read by read_file or read_many_files travels to the agent loop.
pub const BINARY_INJECTION_KEY: &str = "__binary_injection__";

/// The `functionResponse` part, in the Gemini API's shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionResponse {
    /// The call's id.
    pub id: String,
    /// The tool's name as the model called it.
    pub name: String,
    /// `{"output": ...}` or `{"error": ...}`.
    pub response: ResponseBody,
    /// Inline data nested in the response (models with multimodal function responses).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
}

/// The object the model receives: `{"output": ...}`, `{"error": ...}`, or both for a call
/// cancelled with output, plus read tools' stashed audio and video. The output text is shared
/// with the finished call's result instead of copied: a read_many_files answer is up to a
/// million characters, and each copy costs its pages again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResponseBody {
    output: Option<Arc<String>>,
    rest: Map<String, Value>,
}

impl ResponseBody {
    /// The output text, on success or a cancellation with output.
    pub fn output(&self) -> Option<&str> {
        self.output.as_deref().map(String::as_str)
    }

    /// The output text as shared storage (take it with `Arc::try_unwrap` once the result is
    /// gone, instead of copying).
    pub fn shared_output(&self) -> Option<&Arc<String>> {
        self.output.as_ref()
    }

    /// The error message, when the call failed or was cancelled.
    pub fn error(&self) -> Option<&str> {
        self.rest.get("error").and_then(Value::as_str)
    }

    /// A key's value (the output as a string value, copied).
    pub fn get(&self, key: &str) -> Option<Value> {
        match key {
            "output" => self.output().map(|s| Value::String(s.to_string())),
            _ => self.rest.get(key).cloned(),
        }
    }

    /// Whether `key` is set.
    pub fn contains_key(&self, key: &str) -> bool {
        match key {
            "output" => self.output.is_some(),
            _ => self.rest.contains_key(key),
        }
    }

    /// Sets `key` (a string `output` becomes the shared output).
    pub fn insert(&mut self, key: &str, value: Value) {
        match (key, value) {
            ("output", Value::String(s)) => self.output = Some(Arc::new(s)),
            (_, value) => {
                self.rest.insert(key.to_string(), value);
            }
        }
    }

    /// Takes `key` out.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        match key {
            "output" => self.output.take().map(|s| {
                Value::String(Arc::try_unwrap(s).unwrap_or_else(|shared| (*shared).clone()))
            }),
            _ => self.rest.shift_remove(key),
        }
    }

    /// The object as a JSON value (the output copied into it).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        if let Some(out) = self.output() {
            m.insert("output".into(), Value::String(out.to_string()));
        }
        m.extend(self.rest.iter().map(|(k, v)| (k.clone(), v.clone())));
        Value::Object(m)
    }
}

impl Serialize for ResponseBody {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.rest.len() + usize::from(self.output.is_some())))?;
        if let Some(out) = self.output() {
            m.serialize_entry("output", out)?;
        }
        for (k, v) in &self.rest {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Everything sent back for one call: the function response and any sibling parts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResponseParts {
    /// The function response.
    #[serde(rename = "functionResponse")]
    pub function_response: FunctionResponse,
    /// Parts that follow it (inline data the model should see).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub siblings: Vec<Part>,
}

impl ResponseParts {
    /// `{"error": message}`.
    pub fn error(id: &str, name: &str, message: &str) -> Self {
        let mut response = ResponseBody::default();
        response.insert("error", Value::String(message.to_string()));
        Self::plain(id, name, response)
    }

    fn plain(id: &str, name: &str, response: ResponseBody) -> Self {
        Self {
            function_response: FunctionResponse {
                id: id.to_string(),
                name: name.to_string(),
                response,
                parts: Vec::new(),
            },
            siblings: Vec::new(),
        }
    }

    /// The `response` object as a JSON value.
    pub fn response_value(&self) -> Value {
        self.function_response.response.to_value()
    }
}

/// Converts successful content as upstream's `convertToFunctionResponse` does. Text held as
/// [`SharedText`](crate::result::SharedText) becomes the output without being copied.
pub fn success(id: &str, name: &str, content: &Content, family: ModelFamily) -> ResponseParts {
    let parts: &[Part] = match content {
        Content::Text(s) => {
            let mut response = ResponseBody::default();
            response.insert("output", Value::String(s.clone()));
            return ResponseParts::plain(id, name, response);
        }
        Content::Shared(t) => {
            let mut response = ResponseBody::default();
            if !t.is_empty() {
                response.output = Some(t.shared().clone());
            }
            return ResponseParts::plain(id, name, response);
        }
        Content::Part(p) => std::slice::from_ref(p),
        Content::Parts(ps) => ps,
    };
    // Borrowed, and joined once into a string sized up front: a read_many_files answer is up
    // to a million characters, and each copy of it costs its pages again.
    let mut texts: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    let mut media: Vec<Part> = Vec::new();
    let mut unsupported: Vec<Part> = Vec::new();
    for p in parts {
        match p {
            Part::Text { text } => texts.push(text.as_str().into()),
            Part::InlineData { inline_data } => {
                let m = &inline_data.mime_type;
                if m.starts_with("audio/") || m.starts_with("video/") {
                    unsupported.push(p.clone());
                } else {
                    media.push(p.clone());
                }
            }
        }
    }
    let reads_files = name == "read_file" || name == "read_many_files";
    if !unsupported.is_empty() {
        let mut mimes: Vec<String> = Vec::new();
        for p in &unsupported {
            if let Part::InlineData { inline_data } = p
                && !mimes.contains(&inline_data.mime_type)
            {
                mimes.push(inline_data.mime_type.clone());
            }
        }
        let mimes = mimes.join(", ");
        texts.insert(
            0,
            if reads_files {
                format!("Binary content ({mimes}) read successfully. Content will be injected for analysis in the next sequence.")
            } else {
                format!("[SYSTEM: Binary content ({mimes}) stripped from response due to protocol limitations.]")
            }
            .into(),
        );
    }
    let mut response = ResponseBody::default();
    if !texts.is_empty() {
        let mut joined = String::with_capacity(texts.iter().map(|t| t.len() + 1).sum());
        for (i, t) in texts.iter().enumerate() {
            if i > 0 {
                joined.push('\n');
            }
            joined.push_str(t);
        }
        response.insert("output", Value::String(joined));
    } else if !media.is_empty() {
        response.insert(
            "output",
            Value::String(format!("Binary content provided ({} item(s)).", media.len())),
        );
    }
    if reads_files && !unsupported.is_empty() {
        response.insert(
            BINARY_INJECTION_KEY,
            serde_json::to_value(&unsupported).unwrap_or(Value::Null),
        );
    }
    let mut out = ResponseParts::plain(id, name, response);
    match family {
        ModelFamily::Gemini3 => out.function_response.parts = media,
        ModelFamily::Legacy => out.siblings = media,
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_becomes_output_and_errors_become_error() {
        let r = success("c1", "read_file", &Content::Text("hi".into()), ModelFamily::Legacy);
        assert_eq!(r.response_value(), json!({"output": "hi"}));
        let e = ResponseParts::error("c1", "x", "boom");
        assert_eq!(e.response_value(), json!({"error": "boom"}));
        assert_eq!(serde_json::to_value(&e).unwrap()["functionResponse"]["name"], "x");
    }

    #[test]
    fn images_are_siblings_for_legacy_and_nested_for_gemini3() {
        let c = Content::Parts(vec![Part::inline("image/png", "AAA=")]);
        let legacy = success("c", "read_file", &c, ModelFamily::Legacy);
        assert_eq!(
            legacy.response_value(),
            json!({"output": "Binary content provided (1 item(s))."})
        );
        assert_eq!(legacy.siblings.len(), 1);
        let g3 = success("c", "read_file", &c, ModelFamily::Gemini3);
        assert!(g3.siblings.is_empty());
        assert_eq!(g3.function_response.parts.len(), 1);
    }

    #[test]
    fn audio_is_stashed_for_read_tools_and_stripped_for_others() {
        let c = Content::Parts(vec![Part::inline("audio/mpeg", "AAA=")]);
        let r = success("c", "read_file", &c, ModelFamily::Legacy);
        assert_eq!(
            r.function_response.response.output().unwrap(),
            "Binary content (audio/mpeg) read successfully. Content will be injected for analysis in the next sequence."
        );
        assert!(r.function_response.response.contains_key(BINARY_INJECTION_KEY));
        let r = success("c", "mcp_x_y", &c, ModelFamily::Legacy);
        assert_eq!(
            r.function_response.response.output().unwrap(),
            "[SYSTEM: Binary content (audio/mpeg) stripped from response due to protocol limitations.]"
        );
        assert!(!r.function_response.response.contains_key(BINARY_INJECTION_KEY));
    }

    #[test]
    fn text_parts_join_with_newlines_and_empty_parts_give_empty_response() {
        let c = Content::Parts(vec![Part::text("a"), Part::text("b")]);
        assert_eq!(
            success("c", "t", &c, ModelFamily::Legacy).response_value(),
            json!({"output": "a\nb"})
        );
        let c = Content::Parts(vec![]);
        assert_eq!(success("c", "t", &c, ModelFamily::Legacy).response_value(), json!({}));
    }

    #[test]
    fn the_output_comes_first_and_moves_out_without_a_copy() {
        let c = Content::Text("out".into()).into_shared();
        let mut r = success("c", "t", &c, ModelFamily::Legacy);
        r.function_response.response.insert("error", json!("stopped"));
        assert_eq!(
            serde_json::to_string(&r.function_response.response).unwrap(),
            r#"{"output":"out","error":"stopped"}"#
        );
        assert_eq!(r.function_response.response.error(), Some("stopped"));
        let Content::Shared(t) = c else { panic!() };
        let at = t.as_str().as_ptr();
        drop(t);
        let Some(Value::String(out)) = r.function_response.response.remove("output") else {
            panic!()
        };
        assert_eq!(out.as_ptr(), at, "the output was copied");
        assert_eq!(r.response_value(), json!({"error": "stopped"}));
    }
}
