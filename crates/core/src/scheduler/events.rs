//! Events the scheduler emits while calls move through their states; front ends render them or
//! stream them as JSON lines.

use std::sync::Arc;

use serde::Serialize;

/// The call state machine (upstream's states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallState {
    /// Being built and checked.
    Validating,
    /// Approved, about to run.
    Scheduled,
    /// Waiting for a person's answer.
    AwaitingApproval,
    /// Running.
    Executing,
    /// Done, successfully.
    Success,
    /// Done, with an error.
    Error,
    /// Cancelled.
    Cancelled,
}

impl CallState {
    /// Whether the call has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, CallState::Success | CallState::Error | CallState::Cancelled)
    }
}

/// What the scheduler reports while it works.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A call entered a state.
    State {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The new state.
        state: CallState,
        /// More about the state (e.g. the confirmation's title).
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// A call was built (its arguments are valid): what it does in a few words, and the paths
    /// (and lines) it works on (`toolLocations`). (`"event": "locations"` for `--events`.)
    #[serde(rename = "locations")]
    Built {
        /// The call's id.
        call_id: String,
        /// The invocation's one-line description (`notes.txt`, the command).
        title: String,
        /// Where.
        locations: Vec<crate::tool::Location>,
    },
    /// A chunk of live output from a running call.
    Output {
        /// The call's id.
        call_id: String,
        /// The chunk, as the tool emitted it.
        chunk: String,
    },
}

/// Where events go.
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;
