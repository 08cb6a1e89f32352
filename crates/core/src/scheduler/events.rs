//! Events the scheduler emits while calls move through their states; front ends render them or
//! stream them as JSON lines.

use std::sync::Arc;

use serde::Serialize;

/// The call state machine (upstream's states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallState {
    Validating,
    Scheduled,
    AwaitingApproval,
    Executing,
    Success,
    Error,
    Cancelled,
}

impl CallState {
    pub fn is_terminal(self) -> bool {
        matches!(self, CallState::Success | CallState::Error | CallState::Cancelled)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A call entered a state.
    State {
        call_id: String,
        name: String,
        state: CallState,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// A chunk of live output from a running call.
    Output { call_id: String, chunk: String },
}

/// Where events go.
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;
