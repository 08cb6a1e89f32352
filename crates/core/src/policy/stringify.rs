//! Upstream's stable stringification of call arguments, which `argsPattern` regexes run on:
//! keys sorted, and each top-level `"key":value` pair wrapped in NUL characters so patterns can
//! anchor on a whole parameter (`\x00"file_path":"..."\x00`).

use serde_json::Value;

/// Arguments as upstream stringifies them for `argsPattern`: keys sorted, each top-level
/// pair wrapped in NUL bytes so that patterns can anchor on whole pairs.
pub fn stable_stringify(args: &Value) -> String {
    let mut out = String::new();
    write_value(args, true, &mut out);
    out
}

fn write_value(v: &Value, top: bool, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| js_cmp(a, b));
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if top {
                    out.push('\0');
                }
                write_string(k, out);
                out.push(':');
                write_value(&map[*k], false, out);
                if top {
                    out.push('\0');
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, false, out);
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        Value::Number(n) => out.push_str(&js_number(n)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

/// JavaScript's default sort compares UTF-16 code units.
fn js_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `JSON.stringify` of a number: integers without a fraction, others in shortest form.
fn js_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        Some(f) => format!("{f}"),
        None => n.to_string(),
    }
}

fn write_string(s: &str, out: &mut String) {
    // serde_json escapes exactly as JSON.stringify does for well-formed strings.
    match serde_json::to_string(s) {
        Ok(q) => out.push_str(&q),
        Err(_) => out.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_and_wraps_top_level_pairs_in_nul() {
        assert_eq!(stable_stringify(&json!({"b": 2, "a": 1})), "{\0\"a\":1\0,\0\"b\":2\0}");
        assert_eq!(
            stable_stringify(&json!({"o": {"z": 1, "y": [true, null, "q\"s"]}})),
            "{\0\"o\":{\"y\":[true,null,\"q\\\"s\"],\"z\":1}\0}"
        );
        assert_eq!(stable_stringify(&json!({})), "{}");
        assert_eq!(stable_stringify(&json!({"n": 1.0, "m": 2.5})), "{\0\"m\":2.5\0,\0\"n\":1\0}");
    }
}
