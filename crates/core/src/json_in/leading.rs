//! The `id` of a JSON-RPC message read from its first bytes (a message too long to parse, or
//! one refused before it is parsed), so that the refusal can be answered to the request.

use serde_json::Value;

/// The top-level `id` of a JSON object's text, read from its start (an over-long message's
/// first bytes): a string or an integer at depth one.
pub fn leading_id(prefix: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(prefix);
    let value = top_value(text.as_bytes(), "id")?;
    scalar(std::str::from_utf8(value).ok()?)
}

/// The text after `"key":` of the top-level object of `text` (whitespace skipped), read from
/// its start without parsing it: the first such key at depth one.
pub fn top_value<'a>(text: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let (mut depth, mut i) = (0usize, 0usize);
    while i < text.len() {
        match text[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < text.len() && text[j] != b'"' {
                    j += if text[j] == b'\\' { 2 } else { 1 };
                }
                if j >= text.len() {
                    return None;
                }
                i = j + 1;
                if depth == 1 && &text[start..j] == key.as_bytes() {
                    let rest = text[i..].trim_ascii_start();
                    if let Some(value) = rest.strip_prefix(b":") {
                        return Some(value.trim_ascii_start());
                    }
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A JSON string or integer at the start of `s`.
fn scalar(s: &str) -> Option<Value> {
    let mut stream = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    match stream.next()?.ok()? {
        v @ Value::String(_) => Some(v),
        v if v.as_i64().is_some() || v.as_u64().is_some() => Some(v),
        _ => None,
    }
}
