//! The scheduler: takes a model's tool calls, runs each through build -> policy -> confirmation
//! -> execution with a deadline and a cancellation token, and returns exactly one response per
//! call, in the order the calls came.
//!
//! Contiguous calls that may run together (not mutating, not `wait_for_previous`) form a group:
//! the whole group is checked and approved before any of it runs, then it runs concurrently.
//! Mutating calls form groups of one.

mod always;
mod events;
mod hooks;
mod outcome;

use crate::sync::LockExt;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use self::events::{CallState, Event, EventSink};
use crate::approver::{Approver, ConfirmationRequest, Outcome};
use crate::hooks::ToolHooks;
use crate::policy::{ApprovalMode, Decision, PolicyCall, PolicyEngine};
use crate::registry::{Built, Registry};
use crate::response::ResponseParts;
use crate::result::{ErrorType, ToolError, ToolResult};
use crate::tool::{ConfirmationDetails, ExecContext, ModelFamily, OutputSink, ToolEnv};
use outcome::content_text;

/// One call as the model sent it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallRequest {
    pub call_id: String,
    pub name: String,
    pub args: Value,
    /// For tail calls: the name the chain started with (the response carries it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_name: Option<String>,
    /// How many tail calls led to this one.
    #[serde(skip)]
    pub tail_depth: usize,
}

impl CallRequest {
    pub fn new(call_id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            args,
            original_name: None,
            tail_depth: 0,
        }
    }
}

/// Why a call did not run because someone said no (the CLI exits with 3 for these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// A policy rule (or the default) denied it.
    Policy,
    /// It needed a person's confirmation and nobody can answer.
    NoConfirmation,
    /// The person said no.
    UserDenied,
}

/// A call in a terminal state, with what the model receives.
#[derive(Clone, Debug, Serialize)]
pub struct CompletedCall {
    pub request: CallRequest,
    pub status: CallState,
    /// What goes back to the model.
    pub response: ResponseParts,
    /// What the tool returned, when it ran.
    pub result: Option<ToolResult>,
    /// The error behind an `error` or `cancelled` status.
    pub error: Option<ToolError>,
    pub refusal: Option<Refusal>,
    /// Where the full output was saved when it was truncated.
    pub output_file: Option<PathBuf>,
    pub duration_ms: u64,
}

/// Scheduler settings that are not tool settings.
#[derive(Clone, Debug)]
pub struct SchedulerOptions {
    pub family: ModelFamily,
    pub mode: ApprovalMode,
    /// How long a cancelled or timed-out tool gets to wind down before it is abandoned.
    pub grace: Duration,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            family: ModelFamily::Legacy,
            mode: ApprovalMode::Default,
            grace: Duration::from_secs(2),
        }
    }
}

const REASON_ABORT: &str = "Operation cancelled";
const REASON_USER: &str = "Operation cancelled by user";
const REASON_DENIED: &str = "User denied execution.";
const REASON_QUEUE: &str = "User cancelled operation";
const MAX_REPROMPTS: usize = 3;

pub struct Scheduler {
    registry: Arc<Registry>,
    policy: Arc<PolicyEngine>,
    approver: Arc<dyn Approver>,
    env: ToolEnv,
    family: ModelFamily,
    grace: Duration,
    mode: crate::tool::ModeHandle,
    events: Option<EventSink>,
    /// Tokens of calls not yet finished, with the reason to report if they are cancelled.
    active: Mutex<HashMap<String, (CancellationToken, Option<&'static str>)>>,
    batches: Mutex<HashMap<u64, CancellationToken>>,
    next_batch: AtomicU64,
    hooks: Option<Arc<dyn ToolHooks>>,
    /// Tail calls requested by AfterTool hooks, by call id.
    tails: Mutex<HashMap<String, (String, Value)>>,
}

/// A built call waiting for policy, approval and execution.
struct Pending {
    request: CallRequest,
    built: Built,
    /// A BeforeTool hook asked for confirmation (with this message).
    hook_ask: Option<String>,
    /// A BeforeTool hook replaced the arguments.
    args_modified: bool,
}

/// Where a call stands between phases.
enum Slot {
    Ready(Box<Pending>),
    Done(Box<CompletedCall>),
}

impl Scheduler {
    pub fn new(
        registry: Arc<Registry>,
        policy: Arc<PolicyEngine>,
        approver: Arc<dyn Approver>,
        env: ToolEnv,
        options: SchedulerOptions,
    ) -> Self {
        Self {
            registry,
            policy,
            approver,
            env,
            family: options.family,
            grace: options.grace,
            mode: Arc::new(Mutex::new(options.mode)),
            events: None,
            active: Mutex::default(),
            batches: Mutex::default(),
            next_batch: AtomicU64::new(0),
            hooks: None,
            tails: Mutex::default(),
        }
    }

    /// Runs `hooks` around every call (BeforeTool before policy, AfterTool after the result).
    pub fn with_hooks(mut self, hooks: Arc<dyn ToolHooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Sends every state change and output chunk to `sink`.
    pub fn with_events(mut self, sink: EventSink) -> Self {
        self.events = Some(sink);
        self
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub fn mode(&self) -> ApprovalMode {
        *self.mode.locked()
    }

    /// Cancels one pending or running call. Returns whether it was found.
    pub fn cancel_call(&self, call_id: &str) -> bool {
        let mut active = self.active.locked();
        match active.get_mut(call_id) {
            Some((token, reason)) => {
                reason.get_or_insert(REASON_USER);
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every pending and running call of every batch.
    pub fn cancel_all(&self) {
        {
            let mut active = self.active.locked();
            for (token, reason) in active.values_mut() {
                reason.get_or_insert(REASON_USER);
                token.cancel();
            }
        }
        for b in self.batches.locked().values() {
            b.cancel();
        }
    }

    fn emit(&self, call_id: &str, name: &str, state: CallState, detail: Option<String>) {
        if let Some(sink) = &self.events {
            sink(&Event::State { call_id: call_id.into(), name: name.into(), state, detail });
        }
    }

    /// Runs a batch of calls. Every request gets exactly one [`CompletedCall`], in order.
    pub async fn schedule(
        &self,
        requests: Vec<CallRequest>,
        cancel: CancellationToken,
    ) -> Vec<CompletedCall> {
        let batch = cancel.child_token();
        let batch_id = self.next_batch.fetch_add(1, Ordering::Relaxed);
        self.batches.locked().insert(batch_id, batch.clone());
        {
            let mut active = self.active.locked();
            for r in &requests {
                active.insert(r.call_id.clone(), (batch.child_token(), None));
            }
        }
        let mut slots: Vec<Slot> = requests.into_iter().map(|r| self.prepare(r)).collect();
        let mut i = 0;
        let mut queue_reason: Option<&'static str> = None;
        while i < slots.len() {
            if matches!(slots[i], Slot::Done(_)) {
                i += 1;
                continue;
            }
            if queue_reason.is_some() || batch.is_cancelled() {
                for slot in &mut slots[i..] {
                    if let Slot::Ready(p) = slot {
                        let reason = queue_reason
                            .unwrap_or_else(|| self.reason_for(&p.request.call_id, REASON_ABORT));
                        let req = p.request.clone();
                        *slot =
                            Slot::Done(Box::new(self.cancelled(req, reason, None, Instant::now())));
                    }
                }
                break;
            }
            let mut end = i + 1;
            if self.parallel(&slots[i]) {
                while end < slots.len()
                    && matches!(slots[end], Slot::Ready(_))
                    && self.parallel(&slots[end])
                {
                    end += 1;
                }
            }
            if self.run_group(&mut slots[i..end], &batch).await {
                queue_reason = Some(REASON_QUEUE);
            }
            i = end;
        }
        self.batches.locked().remove(&batch_id);
        let out: Vec<CompletedCall> = slots
            .into_iter()
            .map(|s| match s {
                Slot::Done(c) => *c,
                // Unreachable by construction; still answer rather than lose the call.
                Slot::Ready(p) => self.cancelled(p.request, REASON_ABORT, None, Instant::now()),
            })
            .collect();
        {
            let mut active = self.active.locked();
            for c in &out {
                active.remove(&c.request.call_id);
            }
        }
        self.run_tails(out, &cancel).await
    }

    fn reason_for(&self, id: &str, default: &'static str) -> &'static str {
        self.active.locked().get(id).and_then(|(_, r)| *r).unwrap_or(default)
    }

    fn token_for(&self, call_id: &str) -> CancellationToken {
        self.active.locked().get(call_id).map(|(t, _)| t.clone()).unwrap_or_default()
    }

    fn parallel(&self, slot: &Slot) -> bool {
        let Slot::Ready(p) = slot else { return false };
        let b = &p.built;
        !b.tool.is_mutating(&b.args) && !b.tool.waits_for_previous(&b.args)
    }

    /// Build phase: unknown tools and invalid arguments end here.
    fn prepare(&self, request: CallRequest) -> Slot {
        let start = Instant::now();
        match self.registry.build_call(&request.name, request.args.clone(), &self.env) {
            Ok(built) => {
                self.emit(&request.call_id, &request.name, CallState::Validating, None);
                Slot::Ready(Box::new(Pending {
                    request,
                    built,
                    hook_ask: None,
                    args_modified: false,
                }))
            }
            Err(e) => Slot::Done(Box::new(self.failed(
                request,
                ToolError::new(e.kind, e.message),
                None,
                start,
            ))),
        }
    }

    /// Checks, approves and runs one group. Returns true when the person cancelled, which
    /// cancels everything queued after the group.
    async fn run_group(&self, group: &mut [Slot], batch: &CancellationToken) -> bool {
        let start = Instant::now();
        self.before_hooks(group, start).await;
        let mode = self.mode();
        // Policy for the whole group first.
        let mut needs_approval = Vec::new();
        for (idx, slot) in group.iter_mut().enumerate() {
            let Slot::Ready(p) = slot else { continue };
            let b = &p.built;
            let verdict = self.policy.check(
                &PolicyCall {
                    name: &p.request.name,
                    args: &b.args,
                    server_name: b.tool.server_name(),
                    annotations: b.tool.annotations(),
                },
                mode,
            );
            tracing::debug!(call = %p.request.call_id, decision = verdict.decision.as_str(), reason = %verdict.reason, "policy");
            let decision = match verdict.decision {
                Decision::Allow if p.hook_ask.is_some() => Decision::AskUser,
                d => d,
            };
            match decision {
                Decision::Allow => {}
                Decision::Deny => {
                    let mut msg = "Tool execution denied by policy.".to_string();
                    if let Some(m) = verdict.rule.as_ref().and_then(|r| r.deny_message.as_ref()) {
                        msg.push(' ');
                        msg.push_str(m);
                    }
                    let req = p.request.clone();
                    let mut done = self.failed(
                        req,
                        ToolError::new(ErrorType::PolicyViolation, msg),
                        None,
                        start,
                    );
                    done.refusal = Some(Refusal::Policy);
                    *slot = Slot::Done(Box::new(done));
                }
                Decision::AskUser
                    if b.invocation.respects_auto_edit() && mode == ApprovalMode::AutoEdit => {}
                Decision::AskUser
                    if b.invocation.confirms_itself() && self.policy.interactive() => {}
                Decision::AskUser if !self.policy.interactive() => {
                    let msg = format!(
                        "Tool execution for \"{}\" requires user confirmation, which is not supported in non-interactive mode.",
                        b.tool.display_name()
                    );
                    let req = p.request.clone();
                    let mut done = self.failed(
                        req,
                        ToolError::new(ErrorType::UnhandledException, msg),
                        None,
                        start,
                    );
                    done.refusal = Some(Refusal::NoConfirmation);
                    *slot = Slot::Done(Box::new(done));
                }
                Decision::AskUser => needs_approval.push(idx),
            }
        }
        // Then approval, one question at a time, before anything in the group runs.
        let mut user_cancelled = false;
        for idx in needs_approval {
            let Slot::Ready(p) = &mut group[idx] else { continue };
            let token = self.token_for(&p.request.call_id);
            if let Some(h) = &self.hooks {
                h.tool_permission(&self.confirmation_request(p)).await;
            }
            let outcome = self.ask(p, &token).await;
            let req = p.request.clone();
            if token.is_cancelled() || batch.is_cancelled() {
                let reason = self.reason_for(&req.call_id, REASON_ABORT);
                group[idx] = Slot::Done(Box::new(self.cancelled(req, reason, None, start)));
                continue;
            }
            match outcome {
                Outcome::Cancel | Outcome::ModifyWithEditor => {
                    user_cancelled = true;
                    let mut done = self.cancelled(req, REASON_DENIED, None, start);
                    done.refusal = Some(Refusal::UserDenied);
                    group[idx] = Slot::Done(Box::new(done));
                }
                other => self.remember(other, p),
            }
        }
        // Then run everything still standing, together.
        let runs = group.iter().filter_map(|slot| match slot {
            Slot::Ready(p) => Some(self.execute(p, batch)),
            Slot::Done(_) => None,
        });
        let mut finished = futures::future::join_all(runs).await.into_iter();
        for slot in group.iter_mut() {
            if matches!(slot, Slot::Ready(_)) {
                if let Some(done) = finished.next() {
                    *slot = Slot::Done(Box::new(done));
                }
            }
        }
        user_cancelled
    }

    fn confirmation_request(&self, p: &Pending) -> ConfirmationRequest {
        let b = &p.built;
        let details = b.invocation.confirmation().unwrap_or_else(|| ConfirmationDetails::Info {
            title: format!("Confirm: {}", b.tool.display_name()),
            prompt: b.invocation.description(),
            urls: Vec::new(),
        });
        ConfirmationRequest {
            call_id: p.request.call_id.clone(),
            tool_name: p.request.name.clone(),
            display_name: b.tool.display_name().to_string(),
            args: b.args.clone(),
            details,
            server_name: b.tool.server_name().map(String::from),
        }
    }

    /// Asks until the answer is not "modify": an edited proposal rebuilds the call with the
    /// person's content and asks again; without an editor the same question is asked again.
    async fn ask(&self, p: &mut Pending, token: &CancellationToken) -> Outcome {
        let mut outcome = Outcome::Cancel;
        for _ in 0..MAX_REPROMPTS {
            let request = self.confirmation_request(p);
            self.emit(
                &p.request.call_id,
                &p.request.name,
                CallState::AwaitingApproval,
                Some(request.details.title().to_string()),
            );
            outcome = tokio::select! {
                o = self.approver.confirm(&request, token) => o,
                () = token.cancelled() => Outcome::Cancel,
            };
            if outcome != Outcome::ModifyWithEditor || token.is_cancelled() {
                break;
            }
            let Some((current, proposed)) = p.built.invocation.proposal() else { continue };
            let Some(edited) = self.approver.edit(&request, &proposed, token).await else {
                continue;
            };
            let Some(args) = p.built.tool.modified_args(&p.built.args, &current, &edited) else {
                continue;
            };
            match self.registry.build_call(&p.request.name, args, &self.env) {
                Ok(rebuilt) => p.built = rebuilt,
                Err(e) => {
                    tracing::warn!(call = %p.request.call_id, "edited proposal rejected: {}", e.message)
                }
            }
        }
        outcome
    }

    /// Applies "always allow" answers: a session rule, and auto_edit after approving an edit.
    fn remember(&self, outcome: Outcome, p: &Pending) {
        let b = &p.built;
        let mode = self.mode();
        let always = b.tool.always_allow();
        let rules = always::rules_for(
            outcome,
            &p.request.name,
            always.scope,
            b.tool.server_name(),
            &b.args,
            mode,
        );
        for rule in rules.into_iter().flatten() {
            if outcome == Outcome::ProceedAlwaysAndSave {
                let file = self.env.config.home_dir.join("policies").join("auto-saved.toml");
                if let Err(e) = crate::policy::saved::save(&file, &rule) {
                    tracing::warn!("could not save the rule to {}: {e}", file.display());
                }
            }
            self.policy.add_rule(rule);
        }
        if matches!(outcome, Outcome::ProceedAlways | Outcome::ProceedAlwaysAndSave)
            && always.enables_auto_edit
            && mode < ApprovalMode::AutoEdit
        {
            *self.mode.locked() = ApprovalMode::AutoEdit;
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
        let ctx = ExecContext {
            call_id: req.call_id.clone(),
            cancel: token.clone(),
            output,
            deadline_passed: deadline_passed.clone(),
            mode: Some(self.mode.clone()),
        };
        let timeout_ms = self.env.config.timeout_ms_for(b.tool.name());
        let fut = AssertUnwindSafe(b.invocation.execute(ctx)).catch_unwind();
        tokio::pin!(fut);
        let deadline = async {
            if timeout_ms == 0 {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(Duration::from_millis(timeout_ms)).await;
        };
        enum Ended {
            Done(std::thread::Result<ToolResult>),
            TimedOut(Option<ToolResult>),
            Cancelled(Option<ToolResult>),
        }
        let ended = tokio::select! {
            r = &mut fut => Ended::Done(r),
            () = deadline => {
                tracing::warn!(call = %req.call_id, tool = %req.name, timeout_ms, "tool call timed out; cancelling it");
                deadline_passed.store(true, std::sync::atomic::Ordering::SeqCst);
                token.cancel();
                Ended::TimedOut(tokio::time::timeout(self.grace, &mut fut).await.ok().and_then(Result::ok))
            }
            () = token.cancelled() => {
                Ended::Cancelled(tokio::time::timeout(self.grace, &mut fut).await.ok().and_then(Result::ok))
            }
        };
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
            Ended::Done(Ok(result)) if token.is_cancelled() => {
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
                let mut msg = format!(
                    "Tool \"{}\" timed out after {timeout_ms} ms and was stopped. Break the work into smaller steps, or raise tool_call_timeout_ms.",
                    req.name
                );
                if let Some(text) = partial
                    .as_ref()
                    .filter(|r| r.error.is_none())
                    .map(|r| content_text(&r.llm_content))
                {
                    if !text.is_empty() {
                        msg.push_str("\nOutput before the timeout:\n");
                        msg.push_str(&text);
                    }
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

#[cfg(test)]
mod tests;
