//! Policy's "ask" as `session/request_permission`: the call was announced before (the editor
//! shows the question on it); the options follow what "always" would cover for that tool (the
//! command's root commands, this file, the tool, the MCP server); an "always" answer becomes
//! the same session rule the terminal's would; a cancelled request, a closed connection or a
//! cancelled turn is a refusal. Deny rules never get here: the scheduler refuses first.

use agent_client_protocol::v1::schema::{
    Diff, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
};
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use toolbelt_core::approver::{Approver, ConfirmationRequest, Outcome};
use toolbelt_core::tool::{AlwaysScope, ConfirmationDetails};

use crate::updates::Peer;

/// Asks the editor.
pub struct EditorApprover {
    peer: Peer,
    sid: SessionId,
}

impl EditorApprover {
    pub fn new(peer: Peer, sid: SessionId) -> Self {
        Self { peer, sid }
    }
}

/// The options for a request, each with the outcome it stands for.
pub fn options(req: &ConfirmationRequest) -> Vec<(PermissionOption, Outcome)> {
    let opt = |id: &str, name: String, kind| PermissionOption::new(id.to_string(), name, kind);
    let mut out = vec![(
        opt("proceed_once", "Allow once".into(), PermissionOptionKind::AllowOnce),
        Outcome::ProceedOnce,
    )];
    match (&req.server_name, &req.details) {
        (Some(server), _) => {
            out.push((
                opt(
                    "proceed_always_tool",
                    format!("Always allow {} (this session)", req.display_name),
                    PermissionOptionKind::AllowAlways,
                ),
                Outcome::ProceedAlwaysTool,
            ));
            out.push((
                opt(
                    "proceed_always_server",
                    format!("Always allow every tool of {server} (this session)"),
                    PermissionOptionKind::AllowAlways,
                ),
                Outcome::ProceedAlwaysServer,
            ));
        }
        (None, details) => {
            let what = match (&req.always.scope, details) {
                (
                    AlwaysScope::CommandRoots(_),
                    ConfirmationDetails::Exec { command, root_commands, .. },
                ) if !root_commands.is_empty() => {
                    Some(toolbelt_core::policy::grant::covers_command(command, root_commands))
                }
                (AlwaysScope::CommandRoots(_), _) => None,
                (AlwaysScope::Argument(_), ConfirmationDetails::Edit { file_name, .. }) => {
                    Some(format!("{} on {file_name}", req.display_name))
                }
                (AlwaysScope::Argument(arg), _) => req
                    .args
                    .get(*arg)
                    .and_then(|v| v.as_str())
                    .map(|v| format!("{} for {v}", req.display_name)),
                (AlwaysScope::Tool, _) => Some(req.display_name.clone()),
            };
            if let Some(what) = what {
                let edits = if req.always.enables_auto_edit {
                    "; edits run without asking from now on"
                } else {
                    ""
                };
                out.push((
                    opt(
                        "proceed_always",
                        format!("Always allow {what} (this session{edits})"),
                        PermissionOptionKind::AllowAlways,
                    ),
                    Outcome::ProceedAlways,
                ));
                out.push((
                    opt(
                        "proceed_always_and_save",
                        format!("Always allow {what}, and remember it"),
                        PermissionOptionKind::AllowAlways,
                    ),
                    Outcome::ProceedAlwaysAndSave,
                ));
            }
        }
    }
    out.push((opt("cancel", "Reject".into(), PermissionOptionKind::RejectOnce), Outcome::Cancel));
    out
}

/// What the editor shows with the question: the edit as a diff, the command, the prompt.
fn content(req: &ConfirmationRequest) -> Vec<ToolCallContent> {
    match (&req.details, &req.proposal) {
        (ConfirmationDetails::Edit { file_path, .. }, Some((old, new))) => {
            let old = (!old.is_empty()).then(|| old.clone());
            vec![ToolCallContent::Diff(Diff::new(file_path.clone(), new.clone()).old_text(old))]
        }
        (ConfirmationDetails::Edit { file_diff, .. }, None) => vec![file_diff.clone().into()],
        (ConfirmationDetails::Exec { command, .. }, _) => vec![command.clone().into()],
        (ConfirmationDetails::Info { prompt, urls, .. }, _) => {
            let mut s = prompt.clone();
            for u in urls {
                s.push_str(&format!("\n{u}"));
            }
            vec![s.into()]
        }
        (ConfirmationDetails::Mcp { server_name, tool_name, .. }, _) => {
            vec![format!("MCP server {server_name}: {tool_name}").into()]
        }
    }
}

#[async_trait]
impl Approver for EditorApprover {
    async fn confirm(&self, req: &ConfirmationRequest, cancel: &CancellationToken) -> Outcome {
        let options = options(req);
        // The call keeps the title it was announced with; the question shows what it would do.
        let call = ToolCallUpdate::new(
            req.call_id.clone(),
            ToolCallUpdateFields::new().content(content(req)),
        );
        let asked = RequestPermissionRequest::new(
            self.sid.clone(),
            call,
            options.iter().map(|(o, _)| o.clone()).collect(),
        );
        // Dropping the request (the turn cancelled) tells the editor it is no longer asked.
        let answer = tokio::select! {
            a = self.peer.send_request(asked).block_task() => a,
            () = cancel.cancelled() => return Outcome::Cancel,
        };
        match answer {
            Ok(r) => match r.outcome {
                RequestPermissionOutcome::Selected(s) => options
                    .iter()
                    .find(|(o, _)| o.option_id == s.option_id)
                    .map_or(Outcome::Cancel, |(_, outcome)| *outcome),
                _ => Outcome::Cancel,
            },
            Err(e) => {
                tracing::warn!("session/request_permission failed: {e}");
                Outcome::Cancel
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolbelt_core::tool::AlwaysAllow;

    fn req(
        details: ConfirmationDetails,
        always: AlwaysAllow,
        server: Option<&str>,
    ) -> ConfirmationRequest {
        ConfirmationRequest {
            call_id: "c".into(),
            tool_name: "t".into(),
            display_name: "Shell".into(),
            args: json!({"file_path": "/w/a.txt"}),
            details,
            server_name: server.map(String::from),
            always,
            proposal: None,
        }
    }

    fn ids(o: &[(PermissionOption, Outcome)]) -> Vec<String> {
        o.iter().map(|(p, _)| p.option_id.0.to_string()).collect()
    }

    #[test]
    fn options_follow_what_always_would_cover() {
        let exec = ConfirmationDetails::Exec {
            title: "Confirm Shell Command".into(),
            command: "git push".into(),
            root_commands: vec!["git".into()],
        };
        let o = options(&req(
            exec,
            AlwaysAllow { scope: AlwaysScope::CommandRoots("command"), enables_auto_edit: false },
            None,
        ));
        assert_eq!(
            ids(&o),
            ["proceed_once", "proceed_always", "proceed_always_and_save", "cancel"]
        );
        assert!(
            o[1].0.name.contains("`git push` commands that stay in this workspace"),
            "{}",
            o[1].0.name
        );
        // An unparsable command: nothing to remember, so no "always".
        let exec = ConfirmationDetails::Exec {
            title: "t".into(),
            command: "(".into(),
            root_commands: vec![],
        };
        let o = options(&req(
            exec,
            AlwaysAllow { scope: AlwaysScope::CommandRoots("command"), enables_auto_edit: false },
            None,
        ));
        assert_eq!(ids(&o), ["proceed_once", "cancel"]);
        let mcp = ConfirmationDetails::Mcp {
            title: "t".into(),
            server_name: "gh".into(),
            tool_name: "x".into(),
        };
        let o = options(&req(mcp, AlwaysAllow::default(), Some("gh")));
        assert_eq!(
            ids(&o),
            ["proceed_once", "proceed_always_tool", "proceed_always_server", "cancel"]
        );
        let edit = ConfirmationDetails::Edit {
            title: "t".into(),
            file_name: "a.txt".into(),
            file_path: "/w/a.txt".into(),
            file_diff: "d".into(),
        };
        let o = options(&req(
            edit,
            AlwaysAllow { scope: AlwaysScope::Argument("file_path"), enables_auto_edit: true },
            None,
        ));
        assert!(
            o[1].0.name.contains("on a.txt") && o[1].0.name.contains("edits run without asking"),
            "{}",
            o[1].0.name
        );
        assert_eq!(o.last().unwrap().1, Outcome::Cancel);
    }
}
