//! Policy and approval of a group: every call is checked before any is asked about, every
//! question is asked before any call runs; "always allow" answers become session rules.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{CallState, Pending, Refusal, Scheduler, Slot, always};
use super::{MAX_REPROMPTS, REASON_ABORT, REASON_DENIED};
use crate::approver::{ConfirmationRequest, Outcome};
use crate::policy::{ApprovalMode, Decision, PolicyCall};
use crate::result::{ErrorType, ToolError};
use crate::tool::ConfirmationDetails;

impl Scheduler {
    /// Policy for the whole group, before anything is asked or run: denied and unanswerable
    /// calls end here. Returns the indexes of the calls a person must approve.
    pub(super) fn check_policy(&self, group: &mut [Slot], start: Instant) -> Vec<usize> {
        let mode = self.mode();
        let env = self.env();
        let mut needs_approval = Vec::new();
        for (idx, slot) in group.iter_mut().enumerate() {
            let Slot::Ready(p) = slot else { continue };
            let b = &p.built;
            let call = PolicyCall {
                name: &p.request.name,
                args: &b.args,
                server_name: b.tool.server_name(),
                annotations: b.tool.annotations(),
                canonical: b.tool.canonical_name(),
            };
            #[cfg(unix)]
            let files: Option<&dyn crate::shell::safety::ReadJudge> = Some(&*env.workspace);
            #[cfg(not(unix))]
            let files = None;
            let verdict = self.policy.check_in(&call, mode, files);
            let hint = || {
                let auto_edit = b.invocation.respects_auto_edit();
                Some(self.policy.refusal_hint(&call, &verdict, mode, auto_edit))
            };
            tracing::debug!(call = %p.request.call_id, decision = verdict.decision.as_str(), reason = %verdict.reason, "policy");
            // A write to a file that decides what runs (settings, policies, hooks, trust
            // decisions, `.git/config`) needs a person in every mode but yolo (issue 34).
            let control = (mode != ApprovalMode::Yolo && verdict.decision != Decision::Deny)
                .then(|| {
                    b.invocation
                        .writes()
                        .iter()
                        .find_map(|w| env.workspace.control_file(w).map(|why| (w.clone(), why)))
                })
                .flatten();
            let decision = match verdict.decision {
                Decision::Allow if p.hook_ask.is_some() || control.is_some() => Decision::AskUser,
                d => d,
            };
            p.confine = verdict.confine && decision == Decision::Allow;
            if let Some((path, why)) = &control {
                if !self.policy.interactive() {
                    let msg = format!(
                        "Tool execution for \"{}\" was refused: it would change {}, and {why}. Such files are never changed without a person's approval (except in yolo mode); nobody can approve here. Ask the user to make the change.",
                        b.tool.display_name(),
                        path.display()
                    );
                    let error = ToolError::new(ErrorType::PolicyViolation, msg);
                    *slot = self.refused(p, error, Refusal::NoConfirmation, None, start);
                } else {
                    p.hook_ask.get_or_insert_with(|| {
                        format!("It would change {}: {why}.", path.display())
                    });
                    needs_approval.push(idx);
                }
                continue;
            }
            match decision {
                Decision::Allow => {}
                Decision::Deny => {
                    let mut msg = "Tool execution denied by policy.".to_string();
                    if let Some(m) = verdict.rule.as_ref().and_then(|r| r.deny_message.as_ref()) {
                        msg.push(' ');
                        msg.push_str(m);
                    }
                    let error = ToolError::new(ErrorType::PolicyViolation, msg);
                    let hint = hint();
                    *slot = self.refused(p, error, Refusal::Policy, hint, start);
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
                    let error = ToolError::new(ErrorType::UnhandledException, msg);
                    let hint = hint();
                    *slot = self.refused(p, error, Refusal::NoConfirmation, hint, start);
                }
                Decision::AskUser => needs_approval.push(idx),
            }
        }
        needs_approval
    }

    /// A call that does not run because someone (or nobody) said no.
    fn refused(
        &self,
        p: &Pending,
        error: ToolError,
        why: Refusal,
        hint: Option<String>,
        start: Instant,
    ) -> Slot {
        let mut done = self.failed(p.request.clone(), error, None, start);
        done.refusal = Some(why);
        done.hint = hint;
        Slot::Done(Box::new(done))
    }

    /// Approval, one question at a time, before anything in the group runs. Returns true when
    /// the person cancelled.
    pub(super) async fn approve(
        &self,
        group: &mut [Slot],
        needs_approval: Vec<usize>,
        batch: &CancellationToken,
        start: Instant,
    ) -> bool {
        let mut user_cancelled = false;
        for idx in needs_approval {
            let Slot::Ready(p) = &mut group[idx] else { continue };
            let token = self.token_for(&p.request.call_id);
            if let Some(h) = &self.hooks {
                let env = self.env();
                h.tool_permission(&self.confirmation_request(p), &env.workspace).await;
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
                    done.decision = Some(super::Decision::Reject);
                    group[idx] = Slot::Done(Box::new(done));
                }
                other => {
                    p.decision = super::Decision::Accept;
                    self.remember(other, p);
                }
            }
        }
        user_cancelled
    }

    pub(super) fn confirmation_request(&self, p: &Pending) -> ConfirmationRequest {
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
            always: b.tool.always_allow(),
            proposal: b.invocation.proposal(),
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
            match self.registry.build_call(&p.request.name, args, &self.env()) {
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
                let file = self.env().config.home_dir.join("policies").join("auto-saved.toml");
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
            // A person's "always allow" for an edit: the session goes on in auto_edit.
            let _ = self.mode.set_by_person(ApprovalMode::AutoEdit);
        }
    }
}
