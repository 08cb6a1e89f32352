//! The turn loop: send the history with the tools' declarations, run every function call of
//! the answer through the scheduler, send back exactly one function response per call (in the
//! calls' order, whatever happened to each), and go on until the model answers without calls,
//! the turn limit is reached, a hook stops the run, or the run is cancelled.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::policy::ApprovalMode;
use toolbelt_core::response::{BINARY_INJECTION_KEY, ResponseParts};
use toolbelt_core::scheduler::new_call_id;
use toolbelt_core::{CallRequest, CompletedCall, Declaration, ErrorType, Scheduler};

use crate::client::{ModelClient, ModelError, ModelRequest, StreamEvent};
use crate::content::{Content, FunctionCall, Usage};

/// What the loop reports as it goes.
#[derive(Debug)]
pub enum AgentEvent<'a> {
    /// Model text as it streams in.
    Text(&'a str),
    /// The model's thinking as it streams in (Gemini, with thoughts included).
    Thought(&'a str),
    /// A model call is being retried.
    Retrying { attempt: u32, reason: &'a str },
    /// A model call finished (before its function calls run).
    ModelAnswered { usage: Usage },
    /// A function call the model asked for, about to run.
    ToolCall { id: &'a str, name: &'a str, args: &'a Value },
    /// Its response, as the model will receive it.
    ToolResult {
        id: &'a str,
        name: &'a str,
        completed: Option<&'a CompletedCall>,
        response: &'a ResponseParts,
    },
}

/// Totals of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunStats {
    pub model_calls: u32,
    pub tool_calls: u32,
    pub tool_errors: u32,
    #[serde(flatten)]
    pub usage: Usage,
    pub duration_ms: u64,
    /// The same run in Gemini CLI's `SessionMetrics` shape.
    #[serde(skip)]
    pub metrics: crate::metrics::SessionMetrics,
}

/// How a run ended.
#[derive(Debug)]
pub enum Finish {
    /// The model answered without function calls.
    Done,
    /// `max_turns` model calls were made and the model still wanted tools.
    TurnLimit(u32),
    /// Cancelled (every started call was still answered in the history).
    Cancelled,
    /// A hook stopped the run.
    Stopped(String),
    /// The model call failed for good.
    ModelFailed(ModelError),
}

/// The result of a run.
#[derive(Debug)]
pub struct RunOutcome {
    pub finish: Finish,
    /// The text of the last model answer.
    pub final_text: String,
    pub stats: RunStats,
    /// The whole conversation, as sent (and, last, as answered).
    pub history: Vec<Content>,
}

/// A configured loop.
pub struct Agent {
    pub client: Arc<dyn ModelClient>,
    pub scheduler: Arc<Scheduler>,
    /// What the model is shown in the session's current approval mode (plan-mode tools change
    /// it between turns); [`fixed`] for a list that never changes.
    pub declare: DeclareForMode,
    /// The system instruction in the session's current mode (the prompt's plan-mode part
    /// comes and goes with the mode); `None`: none.
    pub system_instruction: Option<InstructionForMode>,
    /// Model calls allowed in one run; `None`: no limit but upstream's internal 100.
    pub max_turns: Option<u32>,
    /// History masking before each model call; `None`: off.
    pub masking: Option<crate::masking::Masking>,
}

/// Computes what the model is shown in a mode.
pub type DeclareForMode = Arc<dyn Fn(ApprovalMode) -> Vec<Declaration> + Send + Sync>;

/// Computes the system instruction in a mode.
pub type InstructionForMode = Arc<dyn Fn(ApprovalMode) -> String + Send + Sync>;

/// The same instruction in every mode.
pub fn fixed_instruction(text: impl Into<String>) -> InstructionForMode {
    let text = text.into();
    Arc::new(move |_| text.clone())
}

/// A system prompt rendered in each call's mode.
pub fn prompt_instruction(prompt: crate::prompt::SystemPrompt) -> InstructionForMode {
    Arc::new(move |mode| prompt.render(mode))
}

/// The same declarations in every mode.
pub fn fixed(declarations: Vec<Declaration>) -> DeclareForMode {
    Arc::new(move |_| declarations.clone())
}

/// Upstream bounds internal continuations at 100 even without a configured limit.
pub const MAX_TURNS: u32 = 100;

/// The parts sent back for one call: the function response, then any sibling parts. Audio
/// and video that read_file stashed under `__binary_injection__` are taken out of the response
/// and returned separately, to follow the function responses as inline data (upstream injects
/// them in the next message).
fn response_parts(r: &ResponseParts) -> (Vec<Value>, Vec<Value>) {
    let mut fr = r.function_response.clone();
    let injected = match fr.response.remove(BINARY_INJECTION_KEY) {
        Some(Value::Array(parts)) => parts,
        _ => Vec::new(),
    };
    let mut out = vec![json!({"functionResponse": fr})];
    out.extend(r.siblings.iter().map(|p| serde_json::to_value(p).unwrap_or(Value::Null)));
    (out, injected)
}

impl Agent {
    pub async fn run(
        &self,
        prompt: &str,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(AgentEvent<'_>) + Send),
    ) -> RunOutcome {
        self.continue_run(vec![Content::user_text(prompt)], cancel, on_event).await
    }

    /// Runs from a conversation whose last message is the person's new one (a session that
    /// goes on over several prompts); the outcome's history is the whole conversation.
    pub async fn continue_run(
        &self,
        mut history: Vec<Content>,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(AgentEvent<'_>) + Send),
    ) -> RunOutcome {
        let started = Instant::now();
        let mut stats = RunStats::default();
        let mut final_text = String::new();
        let limit = self.max_turns.unwrap_or(MAX_TURNS);
        let finish = loop {
            if cancel.is_cancelled() {
                break Finish::Cancelled;
            }
            if stats.model_calls >= limit {
                break Finish::TurnLimit(limit);
            }
            stats.model_calls += 1;
            if let Some(m) = &self.masking {
                crate::masking::mask(&mut history, m);
            }
            let mode = self.scheduler.mode();
            let declarations = (self.declare)(mode);
            let instruction = self.system_instruction.as_ref().map(|f| f(mode));
            let request = ModelRequest {
                system_instruction: instruction.as_deref(),
                contents: &history,
                declarations: &declarations,
                builtin_tools: &[],
            };
            let mut relay = |e: StreamEvent| match &e {
                StreamEvent::Text(t) => on_event(AgentEvent::Text(t)),
                StreamEvent::Thought(t) => on_event(AgentEvent::Thought(t)),
                StreamEvent::Retrying { attempt, reason } => {
                    on_event(AgentEvent::Retrying { attempt: *attempt, reason })
                }
            };
            let asked = Instant::now();
            let answer = self.client.generate(&request, &mut relay, cancel).await;
            let latency = u64::try_from(asked.elapsed().as_millis()).unwrap_or(u64::MAX);
            let turn = match answer {
                Ok(t) => t,
                Err(ModelError::Cancelled) => break Finish::Cancelled,
                Err(e) => {
                    let kind = match &e {
                        ModelError::Http { status, .. } | ModelError::Auth { status, .. } => {
                            format!("HTTP {status}")
                        }
                        ModelError::SignIn(_) => "sign-in".to_string(),
                        _ => "connection".to_string(),
                    };
                    stats.metrics.model_call(self.client.model(), latency, Err(&kind));
                    break Finish::ModelFailed(e);
                }
            };
            stats.metrics.model_call(self.client.model(), latency, Ok(turn.usage));
            stats.usage.add(turn.usage);
            on_event(AgentEvent::ModelAnswered { usage: turn.usage });
            final_text = turn.text();
            history.push(turn.content());
            let calls = turn.function_calls();
            if calls.is_empty() {
                break Finish::Done;
            }
            let (parts, stop) = self.run_calls(calls, cancel, &mut stats, on_event).await;
            history.push(Content { role: "user".into(), parts });
            if let Some(reason) = stop {
                break Finish::Stopped(reason);
            }
            if cancel.is_cancelled() {
                break Finish::Cancelled;
            }
        };
        stats.duration_ms = started.elapsed().as_millis() as u64;
        RunOutcome { finish, final_text, stats, history }
    }

    /// Runs one answer's calls; returns the response parts (one function response per call,
    /// in order) and a hook's stop reason if one stopped the run.
    async fn run_calls(
        &self,
        calls: Vec<FunctionCall>,
        cancel: &CancellationToken,
        stats: &mut RunStats,
        on_event: &mut (dyn FnMut(AgentEvent<'_>) + Send),
    ) -> (Vec<Value>, Option<String>) {
        let ids: Vec<String> = calls
            .iter()
            .map(|c| c.id.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| new_call_id(&c.name)))
            .collect();
        let mut requests = Vec::new();
        // One answer runs a bounded number of calls: 600 searches in one 56 KB answer held
        // their results together, 584 MB (issue 35). The rest are answered, not run.
        let limit = toolbelt_core::limits::CALLS_PER_ANSWER;
        let mut not_run = std::collections::HashSet::new();
        for (c, id) in calls.iter().zip(&ids) {
            on_event(AgentEvent::ToolCall { id, name: &c.name, args: &c.args });
            if c.malformed.is_none() {
                if requests.len() < limit {
                    requests.push(CallRequest::new(id.clone(), c.name.clone(), c.args.clone()));
                } else {
                    not_run.insert(id.clone());
                }
            }
        }
        stats.tool_calls += calls.len() as u32;
        let completed = self.scheduler.schedule(requests, cancel.clone()).await;
        let mut parts = Vec::new();
        let mut injected = Vec::new();
        let mut stop = None;
        for (c, id) in calls.iter().zip(&ids) {
            let done = completed.iter().find(|d| &d.request.call_id == id);
            let response = match (done, &c.malformed) {
                (_, Some(raw)) => ResponseParts::error(
                    id,
                    &c.name,
                    &format!(
                        "The arguments of this function call are not a JSON object: {raw}. Call the tool again with its arguments as a JSON object."
                    ),
                ),
                (None, None) if not_run.contains(id) => ResponseParts::error(
                    id,
                    &c.name,
                    &format!(
                        "This answer asked for {} function calls; one answer runs at most {limit}, so this call did not run. Make it again in your next answer, or make fewer calls at once.",
                        calls.len()
                    ),
                ),
                (Some(d), None) => d.response.clone(),
                // The scheduler answers every request; should one be missing, the model still
                // gets a response, so that the history stays valid.
                (None, None) => {
                    ResponseParts::error(id, &c.name, "The tool call was lost before it ran.")
                }
            };
            if response.function_response.response.contains_key("error") {
                stats.tool_errors += 1;
            }
            if let Some(d) = done {
                stats.metrics.tool_call(d);
            }
            if let Some(e) = done.and_then(|d| d.error.as_ref())
                && e.kind == ErrorType::StopExecution
                && stop.is_none()
            {
                stop = Some(e.message.clone());
            }
            on_event(AgentEvent::ToolResult {
                id,
                name: &c.name,
                completed: done,
                response: &response,
            });
            let (own, binary) = response_parts(&response);
            parts.extend(own);
            injected.extend(binary);
        }
        parts.extend(injected);
        (parts, stop)
    }
}
