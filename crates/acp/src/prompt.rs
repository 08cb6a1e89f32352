//! Between the editor's content and the model's: a prompt's content blocks as the parts of the
//! person's message, and a kept conversation replayed as the updates an editor shows.

use std::io::Read as _;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, EmbeddedResourceResource, SessionUpdate, TextContent, ToolCall,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::{Value, json};
use toolbelt_agent::content::Content;
use toolbelt_core::ToolEnv;
use toolbelt_core::workspace::Access;

/// At most this much of a file an editor links to is put in the prompt; the model can read
/// the rest with read_file.
const LINKED_FILE_BYTES: u64 = 256 * 1024;

/// At most this much of all the files one prompt links to: 600 links to one large file made a
/// 236 MB request and session file (issue 35). Past it, links are named, not read.
const LINKED_TOTAL_BYTES: u64 = 2 << 20;

/// The model's parts for one prompt. Text as it is; images and blobs as inline data; an
/// embedded resource as its text with where it came from; a link to a file in the workspace as
/// its content (read through the workspace's file layer, so a file the rules refuse stays
/// unread and the reason is said); other links by name.
pub fn parts(blocks: &[ContentBlock], env: &ToolEnv) -> Vec<Value> {
    let mut parts = Vec::new();
    let mut linked_bytes = 0u64;
    for block in blocks {
        match block {
            ContentBlock::Text(t) => parts.push(json!({"text": t.text})),
            ContentBlock::Image(i) => {
                parts.push(json!({"inlineData": {"mimeType": i.mime_type, "data": i.data}}))
            }
            ContentBlock::Audio(a) => {
                parts.push(json!({"inlineData": {"mimeType": a.mime_type, "data": a.data}}))
            }
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => parts.push(json!({
                    "text": format!("Content of {}:\n{}", shown_uri(&t.uri, env), t.text)
                })),
                EmbeddedResourceResource::BlobResourceContents(b) => parts.push(json!({
                    "inlineData": {
                        "mimeType": b.mime_type.clone().unwrap_or_else(|| "application/octet-stream".into()),
                        "data": b.blob,
                    }
                })),
                _ => {}
            },
            ContentBlock::ResourceLink(l) => {
                let text = if linked_bytes >= LINKED_TOTAL_BYTES {
                    format!(
                        "(linked: {}; not read, the prompt's linked files passed {} MiB: read it with read_file)",
                        shown_uri(&l.uri, env),
                        LINKED_TOTAL_BYTES >> 20
                    )
                } else {
                    linked(&l.uri, env)
                };
                linked_bytes += text.len() as u64;
                parts.push(json!({"text": text}));
            }
            _ => {}
        }
    }
    if parts.is_empty() {
        parts.push(json!({"text": ""}));
    }
    parts
}

/// A `file://` URI as a path relative to the workspace when it is inside it.
fn shown_uri(uri: &str, env: &ToolEnv) -> String {
    match url::Url::parse(uri).ok().and_then(|u| u.to_file_path().ok()) {
        Some(p) => env.workspace.relative(&p),
        None => uri.to_string(),
    }
}

/// The text a link to `uri` becomes.
fn linked(uri: &str, env: &ToolEnv) -> String {
    let Some(path) = url::Url::parse(uri).ok().and_then(|u| u.to_file_path().ok()) else {
        return format!("(linked: {uri})");
    };
    let ws = &env.workspace;
    let shown = ws.relative(&path);
    let resolved = match ws.resolve_checked(&path.to_string_lossy(), Access::Read) {
        Ok(r) => r,
        Err(e) => return format!("(linked file {shown} is not read: {e})"),
    };
    let mut bytes = Vec::new();
    let read = ws.open_read(&resolved).map_err(|e| e.to_string()).and_then(|f| {
        f.take(LINKED_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())
    });
    if let Err(e) = read {
        return format!("(linked file {shown} is not read: {e})");
    }
    if bytes.contains(&0) {
        return format!("(linked file {shown} is binary; not shown)");
    }
    let cut = bytes.len() as u64 > LINKED_FILE_BYTES;
    bytes.truncate(LINKED_FILE_BYTES as usize);
    let text = String::from_utf8_lossy(&bytes);
    let more = if cut { "\n[... cut here; read the rest with read_file]" } else { "" };
    format!("Content of {shown}:\n{text}{more}")
}

/// The person's new message at the end of `history` (joined to a message of theirs already
/// there: a turn that failed before the model answered leaves one).
pub fn push_user(history: &mut Vec<Content>, parts: Vec<Value>) {
    match history.last_mut() {
        Some(last) if last.role == "user" && !has_function_response(last) => {
            last.parts.extend(parts)
        }
        _ => history.push(Content { role: "user".into(), parts }),
    }
}

fn has_function_response(c: &Content) -> bool {
    c.parts.iter().any(|p| p.get("functionResponse").is_some())
}

/// How a replayed tool call is shown: its title, ACP kind and locations, from the tool's name
/// and arguments.
pub type Describe<'a> = &'a dyn Fn(
    &str,
    &Value,
) -> (
    String,
    agent_client_protocol::v1::schema::ToolKind,
    Vec<agent_client_protocol::v1::schema::ToolCallLocation>,
);

/// A kept conversation as the updates an editor shows: the person's messages, the model's text
/// and thoughts, and each tool call with its final status and output. A model's calls are
/// paired with the responses that follow, in order.
pub fn replay(history: &[Content], describe: Describe<'_>) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    let mut waiting: Vec<(String, String)> = Vec::new();
    let mut n = 0usize;
    for (i, c) in history.iter().enumerate() {
        // The ids the calls ran under: the responses that follow, in the calls' order.
        let mut ids = history
            .get(i + 1)
            .map(|next| {
                next.parts
                    .iter()
                    .filter_map(|p| p.get("functionResponse")?.get("id")?.as_str())
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter();
        for part in &c.parts {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                if text.is_empty() {
                    continue;
                }
                let block = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
                out.push(match (c.role.as_str(), part.get("thought") == Some(&json!(true))) {
                    ("user", _) => SessionUpdate::UserMessageChunk(block),
                    (_, true) => SessionUpdate::AgentThoughtChunk(block),
                    _ => SessionUpdate::AgentMessageChunk(block),
                });
            } else if let Some(call) = part.get("functionCall") {
                n += 1;
                let name = call.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let args = call.get("args").cloned().unwrap_or(Value::Null);
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .or_else(|| ids.next())
                    .unwrap_or_else(|| format!("replay-{n}"));
                let (title, kind, locations) = describe(&name, &args);
                out.push(SessionUpdate::ToolCall(
                    ToolCall::new(id.clone(), title)
                        .kind(kind)
                        .status(ToolCallStatus::Pending)
                        .locations(locations)
                        .raw_input(args),
                ));
                waiting.push((id, name));
            } else if let Some(resp) = part.get("functionResponse") {
                let name = resp.get("name").and_then(Value::as_str).unwrap_or("");
                let id = resp.get("id").and_then(Value::as_str).unwrap_or("");
                let at = waiting
                    .iter()
                    .position(|(w, _)| w == id)
                    .or_else(|| waiting.iter().position(|(_, n)| n == name));
                let Some(at) = at else { continue };
                let (id, _) = waiting.remove(at);
                let body = resp.get("response").cloned().unwrap_or(Value::Null);
                let (status, text) = match body.get("error") {
                    Some(e) => (ToolCallStatus::Failed, value_text(e)),
                    None => (ToolCallStatus::Completed, value_text(&body["output"])),
                };
                let mut fields = ToolCallUpdateFields::new().status(status).raw_output(body);
                if !text.is_empty() {
                    fields = fields.content(vec![text.into()]);
                }
                out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields)));
            }
        }
    }
    // A call with no response (the conversation was cut short) ends as failed.
    for (id, _) in waiting {
        out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id,
            ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
        )));
    }
    out
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{ResourceLink, ToolKind};

    /// Issue 35 (third attack): 600 links to one large file in a 50 KB prompt made a 236 MB
    /// request. What the links bring in together is bounded; the rest are named.
    #[test]
    fn many_links_to_a_large_file_bring_in_a_bounded_amount() {
        let (tree, env) = toolbelt_core::testing::test_env();
        tree.file("big.txt", "x".repeat(1 << 20));
        let uri = url::Url::from_file_path(tree.root().canonicalize().unwrap().join("big.txt"))
            .unwrap()
            .to_string();
        let blocks: Vec<ContentBlock> = (0..600)
            .map(|_| ContentBlock::ResourceLink(ResourceLink::new("big.txt", &uri)))
            .collect();
        let parts = parts(&blocks, &env);
        assert_eq!(parts.len(), 600);
        let total: usize = parts.iter().map(|p| p["text"].as_str().unwrap().len()).sum();
        assert!(total < 3 << 20, "{total} bytes from 600 links");
        assert!(
            parts[599]["text"]
                .as_str()
                .unwrap()
                .contains("not read, the prompt's linked files passed 2 MiB")
        );
        assert!(parts[0]["text"].as_str().unwrap().starts_with("Content of big.txt:"));
    }

    #[test]
    fn a_conversation_replays_in_order_with_each_call_ended() {
        let history = vec![
            Content::user_text("read it"),
            Content {
                role: "model".into(),
                parts: vec![
                    json!({"text": "thinking", "thought": true}),
                    json!({"functionCall": {"name": "read_file", "args": {"file_path": "a"}}}),
                    json!({"functionCall": {"name": "run_shell_command", "args": {"command": "x"}}}),
                ],
            },
            Content {
                role: "user".into(),
                parts: vec![
                    json!({"functionResponse": {"id": "r1", "name": "read_file", "response": {"output": "A"}}}),
                    json!({"functionResponse": {"id": "r2", "name": "run_shell_command", "response": {"error": "no"}}}),
                ],
            },
            Content { role: "model".into(), parts: vec![json!({"text": "done"})] },
            Content {
                role: "model".into(),
                parts: vec![json!({"functionCall": {"id": "z", "name": "glob", "args": {}}})],
            },
        ];
        let describe = |name: &str, _: &Value| (format!("T {name}"), ToolKind::Read, vec![]);
        let u: Vec<Value> =
            replay(&history, &describe).iter().map(|u| serde_json::to_value(u).unwrap()).collect();
        let kinds: Vec<&str> = u.iter().map(|u| u["sessionUpdate"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_thought_chunk",
                "tool_call",
                "tool_call",
                "tool_call_update",
                "tool_call_update",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update"
            ]
        );
        assert_eq!(u[2]["title"], "T read_file");
        assert_eq!(u[2]["toolCallId"], "r1", "the id the call ran under");
        assert_eq!(u[4]["toolCallId"], u[2]["toolCallId"]);
        assert_eq!(u[4]["status"], "completed");
        assert_eq!(u[5]["status"], "failed");
        assert_eq!(u[5]["content"][0]["content"]["text"], "no");
        assert_eq!(u[8]["toolCallId"], "z");
        assert_eq!(u[8]["status"], "failed", "a call left without a response ends failed");
    }

    #[test]
    fn a_new_message_joins_a_person_s_message_left_unanswered() {
        let mut h = vec![Content::user_text("a")];
        push_user(&mut h, vec![json!({"text": "b"})]);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].parts.len(), 2);
        h.push(Content { role: "model".into(), parts: vec![json!({"text": "c"})] });
        push_user(&mut h, vec![json!({"text": "d"})]);
        assert_eq!(h.len(), 3);
    }
}
