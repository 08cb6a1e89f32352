//! A tool of an MCP server, registered like any other: `mcp_<server>_<tool>`, its server's name
//! for policy rules, its hints as annotations, and calls sent with a progress token so progress
//! streams as live output and keeps the call alive.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, Request, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Map, Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv,
};

use super::{Connection, convert};

/// One remote tool.
pub struct McpTool {
    pub(super) fqn: String,
    /// `mcp_<server>_<tool>` before a clash renamed `fqn`.
    pub(super) canonical: String,
    pub(super) server: String,
    pub(super) original: String,
    pub(super) description: String,
    pub(super) schema: Value,
    pub(super) annotations: Map<String, Value>,
    pub(super) conn: Arc<Connection>,
}

impl McpTool {
    /// The deadline of a call to this tool set by its server's `timeout`, if given.
    pub fn server_timeout_ms(&self) -> Option<u64> {
        self.conn.call_deadline_ms
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.fqn
    }
    fn display_name(&self) -> &str {
        &self.original
    }
    fn kind(&self) -> Kind {
        if self.annotations.get("readOnlyHint") == Some(&json!(true)) {
            Kind::Read
        } else {
            Kind::Other
        }
    }
    fn server_name(&self) -> Option<&str> {
        Some(&self.server)
    }
    fn canonical_name(&self) -> Option<&str> {
        (self.canonical != self.fqn).then_some(self.canonical.as_str())
    }
    fn annotations(&self) -> Option<&Map<String, Value>> {
        Some(&self.annotations)
    }
    fn truncates_output(&self) -> bool {
        true
    }
    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: self.fqn.clone(),
            description: self.description.clone(),
            parameters: self.schema.clone(),
        }
    }
    fn build(&self, params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        Ok(Box::new(McpCall {
            fqn: self.fqn.clone(),
            server: self.server.clone(),
            original: self.original.clone(),
            args: params,
            conn: self.conn.clone(),
        }))
    }
}

struct McpCall {
    fqn: String,
    server: String,
    original: String,
    args: Value,
    conn: Arc<Connection>,
}

impl McpCall {
    /// The message of a call that failed, with what to do when the server wants a sign-in or
    /// more OAuth scopes.
    fn failed(&self, e: &rmcp::ServiceError) -> String {
        use super::oauth::Refusal;
        let hint = Refusal::hint(Refusal::of_request(e), &self.server);
        // What the server said is its own text: wrapped like any of its output (a server's
        // error message reached the model as instructions, issue 35).
        format!(
            "MCP tool '{}' on server '{}' failed:\n{}{hint}",
            self.original,
            self.server,
            toolbelt_core::result::untrusted(&toolbelt_core::url_secrets::without_url_secrets(
                &e.to_string()
            ))
        )
    }
}

#[async_trait]
impl Invocation for McpCall {
    fn description(&self) -> String {
        format!("{} {}", self.fqn, serde_json::to_string(&self.args).unwrap_or_default())
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        Some(ConfirmationDetails::Mcp {
            title: "Confirm MCP Tool Execution".into(),
            server_name: self.server.clone(),
            tool_name: self.original.clone(),
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let mut params = CallToolRequestParams::new(self.original.clone());
        params.arguments = self.args.as_object().cloned();
        let request = ClientRequest::CallToolRequest(Request::new(params));
        // rmcp puts its own progress token on the request; progress is followed by that token.
        let handle = match self
            .conn
            .client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(e) => {
                let msg = self.failed(&e);
                return ToolResult::error(
                    ErrorType::McpToolError,
                    msg.clone(),
                    msg,
                    format!("Error: MCP tool '{}' reported an error.", self.original),
                );
            }
        };
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let mut progress = self.conn.progress.subscribe(handle.progress_token.clone());
        let timeout = Duration::from_millis(self.conn.timeout_ms.max(1));
        let response = handle.await_response();
        tokio::pin!(response);
        let mut deadline = tokio::time::Instant::now() + timeout;
        // What progress said so far (its last part): the partial output of a call stopped by
        // its deadline.
        let mut so_far = String::new();
        let mut stopped = false;
        let outcome = loop {
            tokio::select! {
                r = &mut response => break Ok(r),
                p = progress.next() => {
                    // Progress keeps the call alive and is shown as it arrives.
                    deadline = tokio::time::Instant::now() + timeout;
                    if let Some(p) = p {
                        let msg = progress_line(&p);
                        ctx.emit(&msg);
                        keep_tail(&mut so_far, &msg);
                    }
                }
                () = tokio::time::sleep_until(deadline) => break Err(format!("MCP tool call timed out after {} ms without a response or progress", self.conn.timeout_ms)),
                () = ctx.cancel.cancelled() => {
                    stopped = true;
                    break Err("Tool call aborted".to_string());
                }
            }
        };
        // Progress sent just before the result may still be on its way: pass it on too.
        let drain_until = tokio::time::Instant::now() + Duration::from_millis(20);
        while outcome.is_ok() {
            match tokio::time::timeout_at(drain_until, progress.next()).await {
                Ok(Some(p)) => ctx.emit(&progress_line(&p)),
                _ => break,
            }
        }
        // No more progress for this call, whatever the server goes on sending.
        drop(progress);
        if outcome.is_err() {
            // Tell the server to stop working on it (a server that does not read gets a
            // second to take it).
            let note = CancelledNotificationParam::new(Some(id), outcome.as_ref().err().cloned());
            let _ = tokio::time::timeout(Duration::from_secs(1), peer.notify_cancelled(note)).await;
        }
        if stopped {
            // Cancelled or out of time: the engine reports it; the progress so far is the output.
            let text = so_far.trim_end().to_string();
            if text.is_empty() {
                return ToolResult::text(String::new(), String::new());
            }
            return ToolResult::text(toolbelt_core::result::untrusted(&text), text);
        }
        let failure = |message: String| {
            ToolResult::error(
                ErrorType::McpToolError,
                message.clone(),
                message,
                format!("Error: MCP tool '{}' reported an error.", self.original),
            )
        };
        match outcome {
            Ok(Ok(ServerResult::CallToolResult(result))) => {
                let v = serde_json::to_value(&result).unwrap_or(Value::Null);
                convert::to_tool_result(&self.original, &self.args, &v)
            }
            Ok(Ok(other)) => failure(format!(
                "MCP tool '{}' on server '{}' answered with something other than a tool result: {}",
                self.original,
                self.server,
                serde_json::to_string(&other).unwrap_or_default()
            )),
            Ok(Err(e)) => failure(self.failed(&e)),
            Err(msg) => failure(msg),
        }
    }
}

/// Most of one progress message shown or kept (a server may send megabytes in each).
const PROGRESS_MESSAGE_CHARS: usize = 4096;

/// Most of the progress kept as a stopped call's output (its last part).
const PROGRESS_KEPT_BYTES: usize = 64 * 1024;

/// One progress notification as a line of output: its message (cut), else its count.
fn progress_line(p: &rmcp::model::ProgressNotificationParam) -> String {
    let msg = p.message.clone().unwrap_or_else(|| match p.total {
        Some(t) => format!("{}/{t}", p.progress),
        None => p.progress.to_string(),
    });
    match msg.char_indices().nth(PROGRESS_MESSAGE_CHARS) {
        Some((at, _)) => format!("{} [... cut]\n", &msg[..at]),
        None => format!("{msg}\n"),
    }
}

/// Appends `line` to `kept`, keeping only the last [`PROGRESS_KEPT_BYTES`].
fn keep_tail(kept: &mut String, line: &str) {
    kept.push_str(line);
    if kept.len() > PROGRESS_KEPT_BYTES {
        let mut cut = kept.len() - PROGRESS_KEPT_BYTES;
        while !kept.is_char_boundary(cut) {
            cut += 1;
        }
        kept.drain(..cut);
    }
}
