//! Execution: the calls of a group run together, each raced against its deadline and its
//! cancellation token; a panic, a timeout or a cancellation still ends in one response.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use tokio_util::sync::CancellationToken;

use super::outcome::content_text;
use super::{CallState, CompletedCall, Event, Pending, Scheduler, Slot};
use super::{REASON_ABORT, REASON_USER};
use crate::result::{ErrorType, ToolError, ToolResult};
use crate::tool::{ExecContext, OutputSink};

impl Scheduler {
    /// Runs every call of the group still standing, together.
    pub(super) async fn run_ready(&self, group: &mut [Slot], batch: &CancellationToken) {
        let runs = group.iter().filter_map(|slot| match slot {
            Slot::Ready(p) => Some(self.execute(p, batch)),
            Slot::Done(_) => None,
        });
        let mut finished = futures::future::join_all(runs).await.into_iter();
        for slot in group.iter_mut() {
            if let Slot::Ready(p) = slot
                && let Some(mut done) = finished.next()
            {
                done.decision = Some(p.decision);
                *slot = Slot::Done(Box::new(done));
            }
        }
    }

    async fn execute(&self, p: &Pending, batch: &CancellationToken) -> CompletedCall {
        let start = Instant::now();
        let b = &p.built;
        let req = p.request.clone();
        let token = self.token_for(&req.call_id);
        if token.is_cancelled() || batch.is_cancelled() {
            let reason = self.reason_for(&req.call_id, REASON_ABORT);
            return self.cancelled(req, reason, None, start);
        }
        self.emit(&req.call_id, &req.name, CallState::Scheduled, None);
        self.emit(&req.call_id, &req.name, CallState::Executing, None);
        let output: Option<OutputSink> = self.events.clone().map(|sink| {
            let id = req.call_id.clone();
            Arc::new(move |chunk: &str| {
                sink(&Event::Output { call_id: id.clone(), chunk: chunk.to_string() })
            }) as OutputSink
        });
        let deadline_passed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let gate = crate::commit::CommitGate::new();
        let ctx = ExecContext {
            call_id: req.call_id.clone(),
            cancel: token.clone(),
            output,
            deadline_passed: deadline_passed.clone(),
            mode: Some(self.mode.clone()),
            env: Some(self.env.clone()),
            confine: p.confine,
            commit: gate.clone(),
            turn: None,
        };
        let timeout_ms = self.env().config.timeout_ms_for(b.tool.name());
        crate::timings::mark("call: validate, build, policy");
        // Costly calls take turns, a few at a time in the whole process (issue 35: 64 costly
        // searches at once through one `toolbelt mcp` aborted it); the wait counts against the
        // call's deadline.
        let turns = b.invocation.costly_turns().max(u32::from(b.tool.costly()));
        let invocation = &b.invocation;
        let fut = AssertUnwindSafe(async move {
            let mut ctx = ctx;
            if turns > 0 {
                match crate::limits::costly_turn(turns).await {
                    Ok(t) => ctx.turn = Some(Arc::new(t)),
                    Err(msg) => return ToolResult::simple_error(ErrorType::ExecutionFailed, msg),
                }
            }
            invocation.execute(ctx).await
        })
        .catch_unwind();
        tokio::pin!(fut);
        // Set before the tool runs, so a deadline the tool sets itself from the same figure (an
        // MCP server's `timeout` is both the engine's deadline and the request's) ends no
        // earlier; and checked first when both have passed (the same timer tick), so the call
        // ends as a timeout, not as whichever error `select!` happened to poll first.
        let deadline_at = (timeout_ms > 0)
            .then(|| tokio::time::Instant::now().checked_add(Duration::from_millis(timeout_ms)))
            .flatten();
        let deadline = async move {
            match deadline_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending::<()>().await,
            }
        };
        enum Ended {
            Done(std::thread::Result<ToolResult>),
            TimedOut(Option<ToolResult>),
            Cancelled(Option<ToolResult>),
        }
        let ended = tokio::select! {
            biased;
            () = deadline => {
                tracing::warn!(call = %req.call_id, tool = %req.name, timeout_ms, "tool call timed out; cancelling it");
                deadline_passed.store(true, std::sync::atomic::Ordering::SeqCst);
                token.cancel();
                // Closed before anything is reported: the call commits nothing from now on, or
                // it already has, and then its result is what happened.
                if gate.revoke() {
                    Ended::Done(finish_committed(&mut fut, self.grace).await)
                } else {
                    Ended::TimedOut(tokio::time::timeout(self.grace, &mut fut).await.ok().and_then(Result::ok))
                }
            }
            () = token.cancelled() => {
                if gate.revoke() {
                    Ended::Done(finish_committed(&mut fut, self.grace).await)
                } else {
                    Ended::Cancelled(tokio::time::timeout(self.grace, &mut fut).await.ok().and_then(Result::ok))
                }
            }
            r = &mut fut => Ended::Done(r),
        };
        crate::timings::mark("call: the tool");
        match ended {
            Ended::Done(Err(panic)) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                let msg = format!("Tool \"{}\" crashed: {what}", req.name);
                self.failed(req, ToolError::new(ErrorType::UnhandledException, msg), None, start)
            }
            Ended::Done(Ok(result)) if token.is_cancelled() && !gate.committed() => {
                self.cancelled_with_output(req, result, b.tool.truncates_output(), start)
            }
            Ended::Done(Ok(result)) => {
                let result = self.after_hooks(p, result).await;
                match result {
                    Ok(r) => self.finish(b, req, r, start),
                    Err((error, r)) => self.failed(req, error, Some(r), start),
                }
            }
            Ended::TimedOut(mut partial) => {
                if let Some(r) = partial.as_mut() {
                    self.bound_output(b.tool.truncates_output(), &req, r);
                }
                // The setting that gave the deadline is the one to raise (issue 37: a per-tool
                // deadline was reported as the global one).
                let config = &self.env().config;
                let setting = if config.tool_call_timeout_cap_ms == Some(timeout_ms) {
                    "give a longer --timeout-ms".to_string()
                } else if config.tool_timeouts_ms.contains_key(b.tool.name()) {
                    format!("raise tools.toolTimeoutsMs for {}", b.tool.name())
                } else {
                    "raise tool_call_timeout_ms".to_string()
                };
                let mut msg = format!(
                    "Tool \"{}\" timed out after {timeout_ms} ms and was stopped. Break the work into smaller steps, or {setting}.",
                    req.name
                );
                if let Some(text) = partial
                    .as_ref()
                    .filter(|r| r.error.is_none())
                    .map(|r| content_text(&r.llm_content))
                    && !text.is_empty()
                {
                    msg.push_str("\nOutput before the timeout:\n");
                    msg.push_str(&text);
                }
                self.failed(req, ToolError::new(ErrorType::ToolCallTimeout, msg), partial, start)
            }
            Ended::Cancelled(Some(result)) => {
                self.cancelled_with_output(req, result, b.tool.truncates_output(), start)
            }
            Ended::Cancelled(None) => {
                let reason = self.reason_for(&req.call_id, REASON_USER);
                self.cancelled(req, reason, None, start)
            }
        }
    }
}

/// The rest of a call that had already committed its change when it was given up: its result,
/// or (past the grace) a failure that says the change was made.
async fn finish_committed<F>(
    fut: &mut std::pin::Pin<&mut F>,
    grace: Duration,
) -> std::thread::Result<ToolResult>
where
    F: std::future::Future<Output = std::thread::Result<ToolResult>>,
{
    match tokio::time::timeout(grace, fut.as_mut()).await {
        Ok(r) => r,
        Err(_) => Ok(ToolResult::simple_error(
            ErrorType::ExecutionFailed,
            "The call made its change, then did not finish in time; check the result before retrying.",
        )),
    }
}
