//! What a server sends, judged before rmcp parses it (issue 35). rmcp parses a whole message
//! into its types at once, at some 30 times its size: a 12 MB tool list of 400,000 tiny tools
//! took 350 MB before the list's own ceilings could look at it. So each message's values are
//! counted first, as bytes: a tool list past the ceiling keeps its first tools (one more than
//! are used, so the listing still says the rest were cut), any other answer past it becomes
//! an error answer with its id (the call fails at once, saying why, instead of waiting for
//! its deadline), and a request or notification past it is dropped.

use serde::Deserialize;
use serde::de::{self, IgnoredAny, SeqAccess, Visitor};
use serde_json::{Value, json};
use toolbelt_core::limits::{MCP_MESSAGE_VALUES, MCP_TOOLS_PER_SERVER};

/// A line longer than this is not parsed (rmcp's own ceiling, which drops it silently).
pub(super) const LINE_BYTES: usize = 16 << 20;

/// Of a line over [`LINE_BYTES`], what is kept to find its id.
pub(super) const KEPT_OF_LONG_LINE: usize = 64 << 10;

/// What becomes of one message.
#[derive(Debug, PartialEq)]
pub(super) enum Judged {
    /// Passed on as it came.
    Pass,
    /// Passed on as this message instead (a cut tool list, or an error answer).
    Replace(Vec<u8>),
    /// Not passed on (a request or notification too large to read).
    Drop,
}

pub(super) use toolbelt_core::json_in::count_values as values;

/// Judges one whole message (a line without its newline).
pub(super) fn judge(line: &[u8]) -> Judged {
    let n = values(line);
    if n <= MCP_MESSAGE_VALUES {
        return Judged::Pass;
    }
    let request = has_top_key(line, "method");
    if request {
        return Judged::Drop;
    }
    if let Some(cut) = cut_tool_list(line)
        && values(&cut) <= MCP_MESSAGE_VALUES
    {
        return Judged::Replace(cut);
    }
    let id = crate::server::lines::leading_id(line);
    refused(id, &format!("it holds {n} JSON values, over the limit of {MCP_MESSAGE_VALUES}"))
}

/// Judges a line over [`LINE_BYTES`], of which `prefix` was kept.
pub(super) fn judge_long(prefix: &[u8]) -> Judged {
    if has_top_key(prefix, "method") {
        return Judged::Drop;
    }
    let id = crate::server::lines::leading_id(prefix);
    refused(id, &format!("it is over {} MiB", LINE_BYTES >> 20))
}

/// An error answer for `id` (none: nothing can be answered, the message is dropped).
fn refused(id: Option<Value>, why: &str) -> Judged {
    let Some(id) = id else { return Judged::Drop };
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": format!("toolbelt did not read the server's answer: {why}")},
    });
    Judged::Replace(answer.to_string().into_bytes())
}

/// Whether `key` is a key of the top-level object of `text`.
fn has_top_key(text: &[u8], key: &str) -> bool {
    crate::server::lines::top_value(text, key).is_some()
}

/// An answer whose `result.tools` is a list, with that list cut to one more than the tools a
/// server may bring (the listing then says the rest were left out); `None`: not such an
/// answer. Read with serde's streaming visitors: the tools past the cut are skipped, not held.
fn cut_tool_list(line: &[u8]) -> Option<Vec<u8>> {
    let answer: Answer = serde_json::from_slice(line).ok()?;
    let result = answer.result?;
    let mut out = serde_json::Map::new();
    out.insert("jsonrpc".into(), Value::String("2.0".into()));
    out.insert("id".into(), answer.id?);
    let mut r = serde_json::Map::new();
    r.insert("tools".into(), Value::Array(result.tools?));
    if let Some(c) = result.next_cursor {
        r.insert("nextCursor".into(), Value::String(c));
    }
    out.insert("result".into(), Value::Object(r));
    serde_json::to_vec(&out).ok()
}

/// The parts of an answer a cut tool list keeps (the rest skipped unread).
#[derive(Deserialize)]
struct Answer {
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    result: Option<ToolList>,
}

#[derive(Deserialize)]
struct ToolList {
    #[serde(default, deserialize_with = "first_tools")]
    tools: Option<Vec<Value>>,
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<String>,
}

/// A value that is there, `null` included.
fn present<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn first_tools<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<Vec<Value>>, D::Error> {
    d.deserialize_seq(FirstTools).map(Some)
}

/// The first tools of a list, one more than a server may bring; the rest skipped.
struct FirstTools;

impl<'de> Visitor<'de> for FirstTools {
    type Value = Vec<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of tools")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Vec<Value>, A::Error> {
        let mut kept = Vec::new();
        while kept.len() <= MCP_TOOLS_PER_SERVER {
            match s.next_element()? {
                Some(v) => kept.push(v),
                None => return Ok(kept),
            }
        }
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_as_json_has_them() {
        for text in
            [r#"{"a":1,"b":[1,2,{"c":"x,y[{"}]}"#, r#"[]"#, r#"{"k":"a\"b,","l":[[],[1]]}"#, r#"0"#]
        {
            let v: Value = serde_json::from_str(text).unwrap();
            fn count(v: &Value) -> usize {
                1 + match v {
                    Value::Array(a) => a.iter().map(count).sum(),
                    Value::Object(o) => o.values().map(count).sum(),
                    _ => 0,
                }
            }
            // Empty containers count a value they do not hold: never fewer than JSON has.
            let n = values(text.as_bytes());
            assert!(n >= count(&v) && n <= count(&v) + 2, "{text}: {n} vs {}", count(&v));
        }
    }

    #[test]
    fn a_small_message_passes() {
        assert_eq!(judge(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#), Judged::Pass);
    }

    /// Issue 35: a 12 MB tool list of 400,000 tiny tools took 350 MB in rmcp's parse.
    #[test]
    fn a_huge_tool_list_is_cut_to_what_is_used_before_it_is_parsed() {
        let tools: Vec<Value> =
            (0..400_000).map(|i| json!({"name": format!("t{i}"), "inputSchema": {}})).collect();
        let line = json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": tools, "nextCursor": "c", "_meta": {}}})
            .to_string();
        let Judged::Replace(cut) = judge(line.as_bytes()) else { panic!("not cut") };
        let v: Value = serde_json::from_slice(&cut).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["nextCursor"], "c");
        let tools = v["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), MCP_TOOLS_PER_SERVER + 1);
        assert_eq!(tools[0]["name"], "t0");
        assert_eq!(tools[MCP_TOOLS_PER_SERVER]["name"], format!("t{MCP_TOOLS_PER_SERVER}"));
    }

    #[test]
    fn any_other_huge_answer_becomes_an_error_with_its_id_and_a_huge_request_is_dropped() {
        let zeros = vec![0; MCP_MESSAGE_VALUES + 5];
        let answer =
            json!({"jsonrpc": "2.0", "id": "a-1", "result": {"structuredContent": {"z": zeros}}});
        let Judged::Replace(err) = judge(answer.to_string().as_bytes()) else { panic!() };
        let v: Value = serde_json::from_slice(&err).unwrap();
        assert_eq!(v["id"], "a-1");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(&format!("over the limit of {MCP_MESSAGE_VALUES}")), "{msg}");
        let request = json!({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": {"z": zeros}});
        assert_eq!(judge(request.to_string().as_bytes()), Judged::Drop);
        let long = format!(r#"{{"jsonrpc":"2.0","id":9,"result":{{"content":"{}"#, "x".repeat(100));
        let Judged::Replace(err) = judge_long(long.as_bytes()) else { panic!() };
        let v: Value = serde_json::from_slice(&err).unwrap();
        assert_eq!(v["id"], 9);
        assert!(v["error"]["message"].as_str().unwrap().contains("over 16 MiB"));
    }
}
