//! What goes into the scheduler and what comes out: a call as the model sent it, a call in a
//! terminal state, why a call was refused, and the scheduler's own options.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::CallState;
use crate::policy::ApprovalMode;
use crate::response::ResponseParts;
use crate::result::{ToolError, ToolResult};
use crate::tool::ModelFamily;

/// One call as the model sent it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallRequest {
    /// The call's id, echoed in its response.
    pub call_id: String,
    /// The tool's name as the model called it.
    pub name: String,
    /// The arguments as the model sent them.
    pub args: Value,
    /// For tail calls: the name the chain started with (the response carries it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_name: Option<String>,
    /// How many tail calls led to this one.
    #[serde(skip)]
    pub tail_depth: usize,
}

static NEXT_CALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A new call id, for calls that came without one: upstream's synthesized form
/// `<name>__<name>_<epochMs>_<counter>`, unique within the process.
pub fn new_call_id(name: &str) -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let n = NEXT_CALL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{name}__{name}_{ms}_{n}")
}

impl CallRequest {
    /// A call with no tail-call history.
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
    /// The call as it was requested.
    pub request: CallRequest,
    /// How it ended.
    pub status: CallState,
    /// What goes back to the model.
    pub response: ResponseParts,
    /// What the tool returned, when it ran.
    pub result: Option<ToolResult>,
    /// The error behind an `error` or `cancelled` status.
    pub error: Option<ToolError>,
    /// Why it did not run, when someone said no.
    pub refusal: Option<Refusal>,
    /// For a refusal by policy: what decided it and the one change that would allow the call
    /// (built from the decision, see `PolicyEngine::refusal_hint`).
    pub hint: Option<String>,
    /// Where the full output was saved when it was truncated.
    pub output_file: Option<PathBuf>,
    /// How long it took.
    pub duration_ms: u64,
    /// The paths (and lines) the call works on, when it could be built (`toolLocations`).
    pub locations: Vec<crate::tool::Location>,
    /// Who let it run (upstream's tool-call decision): `None` when it never got that far.
    pub decision: Option<Decision>,
}

/// Who let a call run, as upstream's session statistics count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Allowed without asking (policy, mode, an earlier "always").
    AutoAccept,
    /// A person approved it.
    Accept,
    /// A person refused it.
    Reject,
}

/// Scheduler settings that are not tool settings.
#[derive(Clone, Debug)]
pub struct SchedulerOptions {
    /// Which declarations and response shape to use.
    pub family: ModelFamily,
    /// The approval mode the scheduler starts in.
    pub mode: ApprovalMode,
    /// How long a cancelled or timed-out tool gets to wind down before it is abandoned.
    pub grace: Duration,
    /// `security.disableYoloMode`: no one switches the session to yolo.
    pub yolo_disabled: bool,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            family: ModelFamily::Legacy,
            mode: ApprovalMode::Default,
            grace: Duration::from_secs(2),
            yolo_disabled: false,
        }
    }
}
