//! Confirmations over MCP: an "ask" decision becomes an elicitation request to the client
//! (a form with one choice: allow once, allow always for this session, or deny). Without an
//! elicitation-capable client the session is headless and nothing is ever asked here.

use std::sync::Mutex;
use toolbelt_core::sync::LockExt;

use async_trait::async_trait;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;
use toolbelt_core::approver::{Approver, ConfirmationRequest, Outcome};
use toolbelt_core::tool::ConfirmationDetails;

const ONCE: &str = "allow once";
const ALWAYS: &str = "allow always (this session)";
const DENY: &str = "deny";

/// Asks the connected client's user.
#[derive(Default)]
pub struct ElicitingApprover {
    peer: Mutex<Option<Peer<RoleServer>>>,
}

impl ElicitingApprover {
    pub fn set_peer(&self, peer: Peer<RoleServer>) {
        *self.peer.locked() = Some(peer);
    }

    fn peer(&self) -> Option<Peer<RoleServer>> {
        self.peer.locked().clone()
    }
}

/// The question, in words.
pub fn message(req: &ConfirmationRequest) -> String {
    let body = match &req.details {
        ConfirmationDetails::Exec { command, root_commands, .. } if !root_commands.is_empty() => {
            format!(
                "Run this shell command?\n{command}\n(\"{ALWAYS}\" allows {})",
                toolbelt_core::policy::grant::covers_command(command, root_commands)
            )
        }
        ConfirmationDetails::Exec { command, .. } => format!("Run this shell command?\n{command}"),
        ConfirmationDetails::Edit { file_path, file_diff, .. } => {
            format!("Apply this change to {file_path}?\n{file_diff}")
        }
        ConfirmationDetails::Info { prompt, .. } => prompt.clone(),
        ConfirmationDetails::Mcp { server_name, tool_name, .. } => {
            format!("Call {tool_name} on MCP server {server_name}?")
        }
    };
    format!("{}: {body}", req.details.title())
}

fn schema() -> Option<ElicitationSchema> {
    let choice = EnumSchema::builder(vec![ONCE.into(), ALWAYS.into(), DENY.into()]).build();
    ElicitationSchema::builder().required_enum_schema("decision", choice).build().ok()
}

#[async_trait]
impl Approver for ElicitingApprover {
    async fn confirm(&self, req: &ConfirmationRequest, cancel: &CancellationToken) -> Outcome {
        let (Some(peer), Some(requested_schema)) = (self.peer(), schema()) else {
            return Outcome::Cancel;
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message(req),
            requested_schema,
        };
        let answer = tokio::select! {
            a = peer.create_elicitation(params) => a,
            () = cancel.cancelled() => return Outcome::Cancel,
        };
        match answer {
            Ok(r) if r.action == ElicitationAction::Accept => {
                match r.content.as_ref().and_then(|c| c.get("decision")).and_then(|d| d.as_str()) {
                    Some(ONCE) => Outcome::ProceedOnce,
                    Some(ALWAYS) => Outcome::ProceedAlways,
                    _ => Outcome::Cancel,
                }
            }
            Ok(_) => Outcome::Cancel,
            Err(e) => {
                tracing::warn!("elicitation failed: {e}");
                Outcome::Cancel
            }
        }
    }

    async fn edit(
        &self,
        _req: &ConfirmationRequest,
        _proposed: &str,
        _cancel: &CancellationToken,
    ) -> Option<String> {
        None
    }
}
