//! What the model receives for a call: a `functionResponse` part (`{"output": ...}` on success,
//! `{"error": ...}` on failure) plus, for binary content, nested or sibling inline-data parts.

use serde::Serialize;
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
    pub response: Map<String, Value>,
    /// Inline data nested in the response (models with multimodal function responses).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
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
        let mut response = Map::new();
        response.insert("error".into(), Value::String(message.to_string()));
        Self::plain(id, name, response)
    }

    fn plain(id: &str, name: &str, response: Map<String, Value>) -> Self {
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
        Value::Object(self.function_response.response.clone())
    }
}

/// Converts successful content as upstream's `convertToFunctionResponse` does.
pub fn success(id: &str, name: &str, content: &Content, family: ModelFamily) -> ResponseParts {
    let parts: &[Part] = match content {
        Content::Text(s) => {
            let mut response = Map::new();
            response.insert("output".into(), Value::String(s.clone()));
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
    let mut response = Map::new();
    if !texts.is_empty() {
        let mut joined = String::with_capacity(texts.iter().map(|t| t.len() + 1).sum());
        for (i, t) in texts.iter().enumerate() {
            if i > 0 {
                joined.push('\n');
            }
            joined.push_str(t);
        }
        response.insert("output".into(), Value::String(joined));
    } else if !media.is_empty() {
        response.insert(
            "output".into(),
            Value::String(format!("Binary content provided ({} item(s)).", media.len())),
        );
    }
    if reads_files && !unsupported.is_empty() {
        response.insert(
            BINARY_INJECTION_KEY.into(),
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
            r.function_response.response["output"],
            "Binary content (audio/mpeg) read successfully. Content will be injected for analysis in the next sequence."
        );
        assert!(r.function_response.response.contains_key(BINARY_INJECTION_KEY));
        let r = success("c", "mcp_x_y", &c, ModelFamily::Legacy);
        assert_eq!(
            r.function_response.response["output"],
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
}
