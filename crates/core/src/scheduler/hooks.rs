//! Hooks around calls: BeforeTool before policy, AfterTool after a
//! returned result, and the tail calls AfterTool may ask for.

use crate::sync::LockExt;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{CallRequest, CompletedCall, Pending, Refusal, Scheduler, Slot};
use crate::hooks::HookCall;
use crate::result::{Content, ErrorType, Part, ToolError, ToolResult};

/// How many tail calls may follow one another for one call.
const MAX_TAIL_CALLS: usize = 8;

impl Scheduler {
    /// Replaces each call whose AfterTool hook asked for a tail call by that call's result:
    /// same call id, the full pipeline again, answered under the original name.
    pub(super) async fn run_tails(
        &self,
        mut out: Vec<CompletedCall>,
        cancel: &CancellationToken,
    ) -> Vec<CompletedCall> {
        for done in &mut out {
            let tail = self.tails.locked().remove(&done.request.call_id);
            let Some((name, args)) = tail else { continue };
            if done.request.tail_depth >= MAX_TAIL_CALLS {
                tracing::warn!(call = %done.request.call_id, "tail call chain longer than {MAX_TAIL_CALLS}; stopped");
                continue;
            }
            let original =
                done.request.original_name.clone().unwrap_or_else(|| done.request.name.clone());
            let mut req = CallRequest::new(done.request.call_id.clone(), name, args);
            req.original_name = Some(original.clone());
            req.tail_depth = done.request.tail_depth + 1;
            // The tail call runs the whole pipeline; its own tail (if any) is followed there.
            if let Some(mut next) = self.schedule_one(req, cancel.clone()).await {
                next.response.function_response.name = original;
                *done = next;
            }
        }
        out
    }

    /// `schedule` for one call, boxed: the recursion through tail calls needs a named type.
    pub(super) fn schedule_one(
        &self,
        req: CallRequest,
        cancel: CancellationToken,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<CompletedCall>> + Send + '_>>
    {
        Box::pin(async move { self.schedule(vec![req], cancel).await.pop() })
    }

    /// BeforeTool hooks for the calls of a group (together), before policy sees them.
    pub(super) async fn before_hooks(&self, group: &mut [Slot], start: Instant) {
        let Some(hooks) = self.hooks.clone() else { return };
        let env = self.env();
        let runs = group.iter().map(|slot| {
            let hooks = hooks.clone();
            let workspace = &env.workspace;
            async move {
                let Slot::Ready(p) = slot else { return None };
                let original = p.request.original_name.as_deref();
                let call = HookCall {
                    name: &p.request.name,
                    args: &p.built.args,
                    original_name: original,
                    workspace,
                };
                Some(hooks.before_tool(&call).await)
            }
        });
        let outcomes = futures::future::join_all(runs).await;
        for (slot, outcome) in group.iter_mut().zip(outcomes) {
            let (Slot::Ready(p), Some(before)) = (&mut *slot, outcome) else { continue };
            let req = p.request.clone();
            if let Some(reason) = before.stop {
                let msg = format!("Agent execution stopped by hook: {reason}");
                *slot = Slot::Done(Box::new(self.failed(
                    req,
                    ToolError::new(ErrorType::StopExecution, msg),
                    None,
                    start,
                )));
                continue;
            }
            if let Some(reason) = before.block {
                let msg = format!("Tool execution blocked: {reason}");
                let mut done =
                    self.failed(req, ToolError::new(ErrorType::PolicyViolation, msg), None, start);
                done.refusal = Some(Refusal::Policy);
                *slot = Slot::Done(Box::new(done));
                continue;
            }
            if let Some(args) = before.tool_input {
                match self.registry.build_call(&p.request.name, args, &self.env()) {
                    Ok(rebuilt) => {
                        p.built = rebuilt;
                        p.args_modified = true;
                    }
                    Err(e) => {
                        let msg = format!(
                            "Tool parameter modification by hook failed validation: {}",
                            e.message
                        );
                        *slot = Slot::Done(Box::new(self.failed(
                            req,
                            ToolError::new(ErrorType::InvalidToolParams, msg),
                            None,
                            start,
                        )));
                        continue;
                    }
                }
            }
            p.hook_ask = before.ask;
        }
    }

    /// AfterTool hooks for a returned result: stop, block, added context, tail call; and the
    /// notice that a hook changed the arguments.
    pub(super) async fn after_hooks(
        &self,
        p: &Pending,
        mut result: ToolResult,
    ) -> Result<ToolResult, (ToolError, ToolResult)> {
        if p.args_modified
            && result.error.is_none()
            && let Content::Text(t) = &mut result.llm_content
        {
            t.push_str(
                "\n\n[System] Tool input parameters were modified by a hook before execution.",
            );
        }
        let Some(hooks) = &self.hooks else { return Ok(result) };
        let original = p.request.original_name.as_deref();
        let env = self.env();
        let call = HookCall {
            name: &p.request.name,
            args: &p.built.args,
            original_name: original,
            workspace: &env.workspace,
        };
        let after = hooks.after_tool(&call, &result).await;
        if let Some(tail) = after.tail {
            self.tails.locked().insert(p.request.call_id.clone(), tail);
        }
        if let Some(reason) = after.stop {
            return Err((ToolError::new(ErrorType::StopExecution, reason), result));
        }
        if let Some(reason) = after.block {
            return Err((ToolError::new(ErrorType::ExecutionFailed, reason), result));
        }
        if let Some(ctx) = after.additional_context {
            let escaped = ctx.replace('<', "&lt;").replace('>', "&gt;");
            let note = format!("\n\n<hook_context>{escaped}</hook_context>");
            match &mut result.llm_content {
                Content::Text(t) => t.push_str(&note),
                Content::Part(part) => {
                    result.llm_content = Content::Parts(vec![part.clone(), Part::text(note)]);
                }
                Content::Parts(parts) => parts.push(Part::text(note)),
                Content::Shared(t) => t.push_part(&note),
            }
        }
        Ok(result)
    }
}
