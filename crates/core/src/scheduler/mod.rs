//! The scheduler: takes a model's tool calls, runs each through build -> policy -> confirmation
//! -> execution with a deadline and a cancellation token, and returns exactly one response per
//! call, in the order the calls came.
//!
//! Contiguous calls that may run together (not mutating, not `wait_for_previous`) form a group:
//! the whole group is checked and approved before any of it runs, then it runs concurrently.
//! Mutating calls form groups of one.

mod always;
mod approval;
mod events;
mod execute;
mod hooks;
mod outcome;
mod types;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use self::events::{CallState, Event, EventSink};
pub use self::types::{
    CallRequest, CompletedCall, Decision, Refusal, SchedulerOptions, new_call_id,
};
use crate::approver::Approver;
use crate::hooks::ToolHooks;
use crate::policy::{ApprovalMode, PolicyEngine};
use crate::registry::{Built, Registry};
use crate::result::ToolError;
use crate::sync::LockExt;
use crate::tool::{ModelFamily, ToolEnv};
use crate::workspace::Workspace;

const REASON_ABORT: &str = "Operation cancelled";
const REASON_USER: &str = "Operation cancelled by user";
const REASON_DENIED: &str = "User denied execution.";
const REASON_QUEUE: &str = "User cancelled operation";
const MAX_REPROMPTS: usize = 3;

/// Runs a model's tool calls: build, hooks, policy, approval, execution, outcome.
pub struct Scheduler {
    registry: Arc<Registry>,
    policy: Arc<PolicyEngine>,
    approver: Arc<dyn Approver>,
    /// Swapped whole when the session's roots change; each call takes the one current when
    /// it is built.
    env: crate::tool::EnvHandle,
    family: ModelFamily,
    grace: Duration,
    mode: crate::tool::ModeHandle,
    events: Option<EventSink>,
    /// Tokens of calls not yet finished, with the reason to report if they are cancelled.
    active: Mutex<HashMap<String, (CancellationToken, Option<&'static str>)>>,
    batches: Mutex<HashMap<u64, CancellationToken>>,
    next_batch: AtomicU64,
    /// The queue between batches: a batch with a mutating call holds it alone, read-only
    /// batches share it. Requests that arrive while a batch runs wait for it (two MCP clients,
    /// or one sending calls concurrently, ran mutating calls of different batches at once).
    gate: tokio::sync::RwLock<()>,
    hooks: Option<Arc<dyn ToolHooks>>,
    /// Where each built call works, by call id, until its response is made.
    locations: Mutex<HashMap<String, Vec<crate::tool::Location>>>,
    /// Tail calls requested by AfterTool hooks, by call id.
    tails: Mutex<HashMap<String, (String, Value)>>,
}

/// A batch's place in the queue (held while it runs, never read).
#[allow(dead_code)]
enum Gate<'a> {
    Alone(tokio::sync::RwLockWriteGuard<'a, ()>),
    Shared(tokio::sync::RwLockReadGuard<'a, ()>),
}

/// A built call waiting for policy, approval and execution.
struct Pending {
    request: CallRequest,
    built: Built,
    /// A BeforeTool hook asked for confirmation (with this message).
    hook_ask: Option<String>,
    /// A BeforeTool hook replaced the arguments.
    args_modified: bool,
    /// Who let it run: a person when one was asked.
    decision: Decision,
    /// Allowed only by the known-safe command table: runs confined.
    confine: bool,
}

/// Where a call stands between phases.
enum Slot {
    Ready(Box<Pending>),
    Done(Box<CompletedCall>),
}

impl Scheduler {
    /// A scheduler over one registry, policy engine, approver and tool environment.
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
            env: crate::tool::EnvHandle::new(env),
            family: options.family,
            grace: options.grace,
            mode: Arc::new(crate::mode::SessionMode::new(options.mode, options.yolo_disabled)),
            events: None,
            active: Mutex::default(),
            batches: Mutex::default(),
            next_batch: AtomicU64::new(0),
            gate: tokio::sync::RwLock::new(()),
            locations: Mutex::default(),
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

    /// The tool environment new calls are built with (in plan mode, tools that write resolve
    /// names inside the plans folder).
    pub fn env(&self) -> ToolEnv {
        let mut env = self.env.current();
        env.plan_mode = self.mode() == ApprovalMode::Plan;
        env
    }

    /// Replaces the workspace for calls built from now on (calls already built keep theirs);
    /// what the model has seen of files is kept.
    pub fn set_workspace(&self, workspace: Workspace) {
        self.env.set_workspace(workspace);
    }

    /// The tools this scheduler runs.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The approval mode now (plan-mode tools change it).
    pub fn mode(&self) -> ApprovalMode {
        self.mode.get()
    }

    /// The session's mode, for front ends that let a person change it (`session/set_mode`).
    pub fn mode_handle(&self) -> crate::tool::ModeHandle {
        self.mode.clone()
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
        // Each batch sees the ignore files as they are now (a long-running server's user may
        // have added a rule since the last one).
        self.env().workspace.ignore().refresh();
        let mut slots: Vec<Slot> = requests.into_iter().map(|r| self.prepare(r)).collect();
        // Wait for the batches before this one (tail calls run after the gate is released).
        let exclusive = slots.iter().any(|s| matches!(s, Slot::Ready(_)) && !self.parallel(s));
        let acquire = async {
            if exclusive {
                Gate::Alone(self.gate.write().await)
            } else {
                Gate::Shared(self.gate.read().await)
            }
        };
        // A batch cancelled while it waits does not run (its calls are answered as cancelled).
        let gate = tokio::select! {
            g = acquire => Some(g),
            () = batch.cancelled() => None,
        };
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
        drop(gate);
        self.batches.locked().remove(&batch_id);
        let out: Vec<CompletedCall> = slots
            .into_iter()
            .map(|s| match s {
                Slot::Done(mut c) => {
                    c.locations =
                        self.locations.locked().remove(&c.request.call_id).unwrap_or_default();
                    *c
                }
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
        match self.registry.build_call(&request.name, request.args.clone(), &self.env()) {
            Ok(built) => {
                self.emit(&request.call_id, &request.name, CallState::Validating, None);
                let locations = built.invocation.locations();
                if let Some(sink) = &self.events {
                    sink(&Event::Built {
                        call_id: request.call_id.clone(),
                        title: built.invocation.description(),
                        locations: locations.clone(),
                    });
                }
                if !locations.is_empty() {
                    self.locations.locked().insert(request.call_id.clone(), locations);
                }
                Slot::Ready(Box::new(Pending {
                    request,
                    built,
                    hook_ask: None,
                    args_modified: false,
                    decision: Decision::AutoAccept,
                    confine: false,
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
        let needs_approval = self.check_policy(group, start);
        let user_cancelled = self.approve(group, needs_approval, batch, start).await;
        self.run_ready(group, batch).await;
        user_cancelled
    }
}

#[cfg(test)]
mod tests;
