//! Confirmation: the scheduler asks an [`Approver`] and gets an [`Outcome`]. Front ends
//! implement the trait (a terminal prompt) or take requests from a channel, each pending request
//! with its own reply channel.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::tool::ConfirmationDetails;

/// Upstream's `ToolConfirmationOutcome`, with its wire names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Run this call once.
    ProceedOnce,
    /// Run it, and allow calls like it for the rest of the session.
    ProceedAlways,
    /// Run it, and allow calls like it from now on (saved in the user's policies).
    ProceedAlwaysAndSave,
    /// Run it, and allow every tool of its MCP server for the session.
    ProceedAlwaysServer,
    /// Run it, and allow every call of this tool for the session.
    ProceedAlwaysTool,
    /// Let the person change the proposal in an editor, then ask again.
    ModifyWithEditor,
    /// Do not run it.
    Cancel,
}

impl Outcome {
    /// Whether the call runs.
    pub fn proceeds(self) -> bool {
        !matches!(self, Outcome::Cancel | Outcome::ModifyWithEditor)
    }
}

/// Answers the model's questions (ask_user) on the front end: `questions` as the tool got
/// them (checked); returns `{"<index>": "<answer>"}`, or `None` when the person dismissed them.
#[async_trait]
pub trait Questioner: Send + Sync {
    /// Asks the questions of one `ask_user` call; `None` when they were dismissed.
    async fn ask(
        &self,
        questions: &[Value],
        cancel: &CancellationToken,
    ) -> Option<serde_json::Map<String, Value>>;
}

/// One question to a person.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfirmationRequest {
    /// The call's id.
    pub call_id: String,
    /// The name the model called.
    pub tool_name: String,
    /// The tool's name for people.
    pub display_name: String,
    /// The arguments after alias renaming.
    pub args: Value,
    /// What to show.
    pub details: ConfirmationDetails,
    /// The MCP server, for MCP tools (enables the per-server and per-tool outcomes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// What "always allow" would cover (front ends name their options after it).
    #[serde(skip)]
    pub always: crate::tool::AlwaysAllow,
    /// For an edit: the file's content now and what the call would make it.
    #[serde(skip)]
    pub proposal: Option<(String, String)>,
}

/// Answers confirmations: the terminal, an MCP client's elicitation, or a test's channel.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks about one call. Must return promptly once `cancel` fires (with any outcome; the
    /// scheduler reports the call as cancelled).
    async fn confirm(&self, request: &ConfirmationRequest, cancel: &CancellationToken) -> Outcome;

    /// After [`Outcome::ModifyWithEditor`]: lets the person edit `proposed` (the content the
    /// call would write) and returns what they saved; `None` when no editor is available or
    /// they gave up. The call is then shown again with the edited content.
    async fn edit(
        &self,
        _request: &ConfirmationRequest,
        _proposed: &str,
        _cancel: &CancellationToken,
    ) -> Option<String> {
        None
    }
}

/// Always answers the same; for tests and for front ends that decided beforehand.
#[derive(Clone, Copy, Debug)]
pub struct FixedApprover(pub Outcome);

#[async_trait]
impl Approver for FixedApprover {
    async fn confirm(&self, _: &ConfirmationRequest, _: &CancellationToken) -> Outcome {
        self.0
    }
}

/// A request waiting for its answer.
#[derive(Debug)]
pub struct PendingApproval {
    /// What is asked.
    pub request: ConfirmationRequest,
    reply: oneshot::Sender<Outcome>,
}

impl PendingApproval {
    /// Sends the answer (a dropped request counts as `Cancel`).
    pub fn reply(self, outcome: Outcome) {
        // The scheduler may have given up (cancelled); nothing to do then.
        let _ = self.reply.send(outcome);
    }
}

/// Sends each request down a channel; the receiver answers through [`PendingApproval::reply`].
/// A dropped request or a closed channel counts as Cancel.
#[derive(Clone, Debug)]
pub struct ChannelApprover {
    tx: mpsc::UnboundedSender<PendingApproval>,
}

impl ChannelApprover {
    /// An approver and the receiving end of its requests.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<PendingApproval>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }
}

#[async_trait]
impl Approver for ChannelApprover {
    async fn confirm(&self, request: &ConfirmationRequest, cancel: &CancellationToken) -> Outcome {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(PendingApproval { request: request.clone(), reply }).is_err() {
            return Outcome::Cancel;
        }
        tokio::select! {
            r = rx => r.unwrap_or(Outcome::Cancel),
            () = cancel.cancelled() => Outcome::Cancel,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> ConfirmationRequest {
        ConfirmationRequest {
            call_id: "c".into(),
            tool_name: "t".into(),
            display_name: "T".into(),
            args: Value::Null,
            details: ConfirmationDetails::Info {
                title: "Confirm: T".into(),
                prompt: "p".into(),
                urls: vec![],
            },
            server_name: None,
            always: Default::default(),
            proposal: None,
        }
    }

    #[tokio::test]
    async fn channel_approver_round_trips_and_treats_drops_as_cancel() {
        let (a, mut rx) = ChannelApprover::new();
        let token = CancellationToken::new();
        let answer = tokio::spawn(async move {
            let p = rx.recv().await.unwrap();
            assert_eq!(p.request.call_id, "c");
            p.reply(Outcome::ProceedAlways);
            let p = rx.recv().await.unwrap();
            drop(p);
        });
        assert_eq!(a.confirm(&req(), &token).await, Outcome::ProceedAlways);
        assert_eq!(a.confirm(&req(), &token).await, Outcome::Cancel);
        answer.await.unwrap();
        assert_eq!(
            serde_json::to_string(&Outcome::ProceedAlwaysAndSave).unwrap(),
            "\"proceed_always_and_save\""
        );
    }
}
