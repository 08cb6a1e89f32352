//! Between toolbelt and MCP: a tool's declaration and hints, and a finished call's result.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, Tool as McpTool, ToolAnnotations};
use serde_json::Value;
use toolbelt_core::kind::Effects;
use toolbelt_core::result::{Content, Part};
use toolbelt_core::scheduler::CompletedCall;
use toolbelt_core::{ModelFamily, Tool};

/// MCP hints from what a tool does ([`Effects`]): clients auto-approve read-only tools, so a
/// tool that writes anything (a memory file, the session's todo list) is never read-only.
pub fn annotations(e: Effects) -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(!e.writes)
        .destructive(e.writes && e.destroys)
        .idempotent(e.idempotent)
        .open_world(e.open_world)
}

pub fn tool_to_mcp(t: &dyn Tool, family: ModelFamily) -> McpTool {
    let d = t.declaration(family);
    let schema = match d.parameters {
        Value::Object(m) => m,
        _ => serde_json::Map::from_iter([("type".to_string(), Value::String("object".into()))]),
    };
    let mut tool = McpTool::new(d.name, d.description, Arc::new(schema));
    tool.title = Some(t.display_name().to_string());
    let mut a = annotations(t.effects());
    a.title = Some(t.display_name().to_string());
    tool.annotations = Some(a);
    tool
}

/// What the model would receive becomes the MCP content: the output text (and any images or
/// other inline data as image content), or, for failures, the error text with `isError`. The
/// call is consumed so that its output text moves into the content instead of being copied.
pub fn completed_to_mcp(done: CompletedCall) -> CallToolResult {
    let media: Vec<Part> = match done.result.map(|r| r.llm_content) {
        Some(Content::Part(p)) => vec![p],
        Some(Content::Parts(ps)) => ps,
        _ => Vec::new(),
    };
    // The result is gone, so the response holds the only reference to the text.
    let mut response = done.response.function_response.response;
    let output = match response.remove("output") {
        Some(Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
        None => None,
    };
    if let Some(err) = response.remove("error") {
        let text = match err {
            Value::String(s) => s,
            other => other.to_string(),
        };
        // A cancelled call may still carry output.
        let blocks = output.into_iter().chain([text]).map(ContentBlock::text).collect();
        return CallToolResult::error(blocks);
    }
    let mut blocks: Vec<ContentBlock> = output.into_iter().map(ContentBlock::text).collect();
    for p in media {
        if let Part::InlineData { inline_data } = p {
            blocks.push(ContentBlock::image(inline_data.data, inline_data.mime_type));
        }
    }
    if blocks.is_empty() {
        blocks.push(ContentBlock::text(String::new()));
    }
    CallToolResult::success(blocks)
}
