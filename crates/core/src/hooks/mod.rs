//! Hooks: commands that see every tool call before it runs (`BeforeTool`) and
//! its result after (`AfterTool`), as Gemini CLI runs them: JSON on stdin, JSON or an exit code
//! back. A hook can block a call, rewrite its arguments, ask for confirmation, stop the agent,
//! add context to the result, or request a tail call. Each hook has a timeout (60 s) and a
//! `fail` mode: `open` (upstream: a crashed or timed-out hook is ignored) or `closed` (the call
//! is blocked), so a security hook can fail safe.
//!
//! - [`output`]: parsing one hook's output and merging several
//! - [`run`]: running one command hook

pub mod output;
pub mod run;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use crate::result::ToolResult;
use crate::settings::{FailMode, HookEntry, HookSettings};
use output::{HookOutput, merge};

/// A tool call as hooks see it.
#[derive(Clone, Debug)]
pub struct HookCall<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// The call's arguments.
    pub args: &'a Value,
    /// Set for tail calls: the name the chain started with.
    pub original_name: Option<&'a str>,
    /// The workspace the call runs in: hooks in the sandbox are granted its roots.
    pub workspace: &'a crate::Workspace,
}

/// What BeforeTool decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Before {
    /// Stop the whole agent turn with this reason.
    pub stop: Option<String>,
    /// Block this call with this reason.
    pub block: Option<String>,
    /// Ask the person even if policy allows; the message is shown with the question.
    pub ask: Option<String>,
    /// Replacement arguments.
    pub tool_input: Option<Value>,
}

/// What AfterTool decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct After {
    /// A hook asked to stop the agent, with this reason.
    pub stop: Option<String>,
    /// A hook blocked the call, with this reason.
    pub block: Option<String>,
    /// Text the hooks add for the model.
    pub additional_context: Option<String>,
    /// `(name, args)` of a call to run in this call's place.
    pub tail: Option<(String, Value)>,
}

/// The hook points the scheduler calls.
#[async_trait]
pub trait ToolHooks: Send + Sync {
    /// Runs the BeforeTool hooks that match the call.
    async fn before_tool(&self, call: &HookCall<'_>) -> Before;
    /// Runs the AfterTool hooks that match the call.
    async fn after_tool(&self, call: &HookCall<'_>, result: &ToolResult) -> After;
    /// A call is about to wait for a person's confirmation (advisory; `Notification` hooks
    /// with `notification_type` `ToolPermission`).
    async fn tool_permission(
        &self,
        _request: &crate::approver::ConfirmationRequest,
        _workspace: &crate::Workspace,
    ) {
    }
}

/// Where hooks run and what they are told about the session.
#[derive(Clone, Debug)]
pub struct HookContext {
    /// The project folder (`GEMINI_PROJECT_DIR`).
    pub project_dir: PathBuf,
    /// The session's id, as hooks see it.
    pub session_id: String,
    /// The transcript's path (empty when there is none).
    pub transcript_path: String,
    /// What of toolbelt's environment hook commands get.
    pub env_redaction: crate::process::EnvRedaction,
    /// The sandbox hook commands run in, if any.
    pub sandbox: Option<crate::process::Sandbox>,
}

/// Hooks from settings, run as commands.
#[derive(Debug)]
pub struct CommandHooks {
    settings: HookSettings,
    ctx: HookContext,
}

/// Whether a group's matcher selects a tool: empty or `*` matches everything, else an
/// unanchored regex, or the exact name if the regex does not compile.
pub fn matcher_selects(matcher: Option<&str>, tool: &str) -> bool {
    match matcher.map(str::trim) {
        None | Some("") | Some("*") => true,
        Some(m) => match regex::Regex::new(m) {
            Ok(re) => re.is_match(tool),
            Err(_) => m == tool,
        },
    }
}

impl CommandHooks {
    /// Hooks from settings, run with this context.
    pub fn new(settings: HookSettings, ctx: HookContext) -> Arc<Self> {
        Arc::new(Self { settings, ctx })
    }

    /// The hooks for `event` and `tool`, deduplicated, and whether to run them in sequence.
    fn selected(&self, event: &str, tool: &str) -> (Vec<HookEntry>, bool) {
        let mut out: Vec<HookEntry> = Vec::new();
        let mut sequential = false;
        if !self.settings.enabled {
            return (out, false);
        }
        for g in self.settings.events.get(event).into_iter().flatten() {
            if !matcher_selects(g.matcher.as_deref(), tool) {
                continue;
            }
            sequential |= g.sequential;
            for h in &g.hooks {
                let disabled = self.settings.disabled.iter().any(|d| d == h.label());
                let dup = out.iter().any(|o| o.label() == h.label() && o.command == h.command);
                if !disabled && !dup {
                    out.push(h.clone());
                }
            }
        }
        (out, sequential)
    }

    fn base_input(&self, event: &str, call: &HookCall<'_>) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session_id".into(), json!(self.ctx.session_id));
        m.insert("transcript_path".into(), json!(self.ctx.transcript_path));
        m.insert("cwd".into(), json!(self.ctx.project_dir.display().to_string()));
        m.insert("hook_event_name".into(), json!(event));
        m.insert("timestamp".into(), json!(run::timestamp()));
        m.insert("tool_name".into(), json!(call.name));
        m.insert("tool_input".into(), call.args.clone());
        if let Some(o) = call.original_name {
            m.insert("original_request_name".into(), json!(o));
        }
        m
    }

    /// Runs the selected hooks for an event; in sequence, each BeforeTool hook sees the
    /// arguments the previous one produced.
    async fn run_event(
        &self,
        event: &str,
        call: &HookCall<'_>,
        input: Map<String, Value>,
    ) -> HookOutput {
        self.run_event_for(event, call.name, input, call.workspace).await
    }

    async fn run_event_for(
        &self,
        event: &str,
        target: &str,
        input: Map<String, Value>,
        workspace: &crate::Workspace,
    ) -> HookOutput {
        let (hooks, sequential) = self.selected(event, target);
        if hooks.is_empty() {
            return HookOutput::default();
        }
        let mut outputs = Vec::new();
        if sequential {
            let mut input = input;
            for h in &hooks {
                let out = self.run_one(h, &input, event, workspace).await;
                if let Some(ti) = out.tool_input()
                    && let (Some(Value::Object(cur)), Value::Object(new)) =
                        (input.get_mut("tool_input"), ti)
                {
                    for (k, v) in new {
                        cur.insert(k.clone(), v.clone());
                    }
                }
                outputs.push(out);
            }
        } else {
            let runs = hooks.iter().map(|h| self.run_one(h, &input, event, workspace));
            outputs = futures::future::join_all(runs).await;
        }
        merge(outputs)
    }

    async fn run_one(
        &self,
        hook: &HookEntry,
        input: &Map<String, Value>,
        event: &str,
        workspace: &crate::Workspace,
    ) -> HookOutput {
        let r = run::run_command(hook, &Value::Object(input.clone()), &self.ctx, workspace).await;
        let Some(failure) = &r.failure else {
            return output::parse(&r.stdout, &r.stderr, r.exit_code);
        };
        tracing::warn!(hook = hook.label(), event, "hook failed: {failure}");
        match hook.fail {
            // Upstream: a failed hook still contributes what it printed; it never blocks.
            FailMode::Open => {
                let mut out = output::parse(&r.stdout, &r.stderr, r.exit_code);
                if out.blocks() {
                    out.decision = Some("allow".into());
                }
                out
            }
            FailMode::Closed => HookOutput::deny(format!(
                "hook \"{}\" failed ({failure}) and is set to fail closed",
                hook.label()
            )),
        }
    }
}

#[async_trait]
impl ToolHooks for CommandHooks {
    async fn before_tool(&self, call: &HookCall<'_>) -> Before {
        let input = self.base_input("BeforeTool", call);
        let out = self.run_event("BeforeTool", call, input).await;
        Before {
            stop: out.stops().then(|| out.effective_reason()),
            block: out.blocks().then(|| out.effective_reason()),
            ask: out.asks().then(|| out.system_message.clone().unwrap_or_default()),
            tool_input: out.tool_input().filter(|v| v.is_object()).cloned(),
        }
    }

    async fn tool_permission(
        &self,
        request: &crate::approver::ConfirmationRequest,
        workspace: &crate::Workspace,
    ) {
        use crate::tool::ConfirmationDetails as D;
        let call = HookCall {
            name: &request.tool_name,
            args: &request.args,
            original_name: None,
            workspace,
        };
        let mut input = self.base_input("Notification", &call);
        input.remove("tool_input");
        input.remove("tool_name");
        let what = match &request.details {
            D::Edit { .. } => "editing",
            D::Exec { .. } => "execution",
            D::Mcp { .. } => "MCP",
            D::Info { .. } => "information",
        };
        input.insert("notification_type".into(), json!("ToolPermission"));
        input.insert(
            "message".into(),
            json!(format!("Tool {} requires {what}", request.details.title())),
        );
        input.insert(
            "details".into(),
            serde_json::to_value(&request.details).unwrap_or(Value::Null),
        );
        // Notification hooks are matched against the notification type; they are advisory.
        let _ = self.run_event_for("Notification", "ToolPermission", input, workspace).await;
    }

    async fn after_tool(&self, call: &HookCall<'_>, result: &ToolResult) -> After {
        let mut input = self.base_input("AfterTool", call);
        input.insert(
            "tool_response".into(),
            json!({
                "llmContent": result.llm_content,
                "returnDisplay": result.return_display,
                "error": result.error.as_ref().map(|e| json!({"message": e.message, "type": e.kind.as_str()})),
            }),
        );
        let out = self.run_event("AfterTool", call, input).await;
        After {
            stop: out.stops().then(|| out.effective_reason()),
            block: out.blocks().then(|| out.effective_reason()),
            additional_context: out.additional_context(),
            tail: out.tail_call(),
        }
    }
}

#[cfg(test)]
mod tests;
