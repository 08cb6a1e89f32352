//! The hint that goes with a refusal, built from the decision that refused the call: what
//! decided it, and the one change that would let the call run. Nothing here guesses: a mode is
//! suggested only when the policy, asked again in that mode, really allows the call.

use super::PolicyEngine;
use super::call::{PolicyCall, Verdict};
use super::rule::{ApprovalMode, Decision, Tier};
use super::shell::{RUNTIME_PROGRAM, UNTRUSTED_GIT};

impl PolicyEngine {
    /// Why `call` was refused (`verdict`, in `mode`) and what would allow it. `respects_auto_edit`:
    /// the call runs without asking in auto_edit mode (edits, web fetches).
    pub fn refusal_hint(
        &self,
        call: &PolicyCall<'_>,
        verdict: &Verdict,
        mode: ApprovalMode,
        respects_auto_edit: bool,
    ) -> String {
        if verdict.reason.contains(RUNTIME_PROGRAM) {
            return "the program is only known when the command runs, so your deny rules for \
                    shell commands cannot be checked against it; write the command out (no \
                    variable, glob or brace pattern as the program, no script read from input)"
                .to_string();
        }
        if verdict.reason.contains(UNTRUSTED_GIT) {
            return "git commands are asked about in a folder that is not trusted, and nobody can \
                    answer here; trust the folder with `toolbelt trust` (then your rules decide), or \
                    allow every call with `--approval-mode yolo`"
                .to_string();
        }
        if let Some(rule) = &verdict.rule
            && rule.decision == Decision::Deny
            && rule.tier() != Some(Tier::Default)
        {
            // Every rule that would still deny once the one before it is gone, so the hint
            // does not send the user to change one of two.
            let mut deniers = vec![rule.clone()];
            let mut rest = self.rules();
            for _ in 0..4 {
                rest.retain(|r| !deniers.contains(r));
                let again = super::evaluate(call, &rest, &self.context(mode));
                match again.rule {
                    Some(r)
                        if again.decision == Decision::Deny && r.tier() != Some(Tier::Default) =>
                    {
                        deniers.push(r);
                    }
                    _ => break,
                }
            }
            let named: Vec<String> = deniers.iter().map(describe).collect();
            let it = if named.len() == 1 { "it" } else { "each of them" };
            return format!(
                "denied by {}; change or remove {it} to allow this call",
                named.join(", and by ")
            );
        }
        let allows = |m: ApprovalMode| match self.check(call, m).decision {
            Decision::Allow => true,
            Decision::AskUser => m == ApprovalMode::AutoEdit && respects_auto_edit,
            Decision::Deny => false,
        };
        let asks = verdict.decision == Decision::AskUser && !self.interactive();
        // The narrowest change first.
        let mut fixes = Vec::new();
        if ApprovalMode::AutoEdit > mode && allows(ApprovalMode::AutoEdit) {
            fixes.push("approval mode auto_edit (--approval-mode auto_edit) allows it".to_string());
        }
        if let Some(server) = call.server_name {
            fixes.push(format!(
                "allow the server's tools with \"trust\": true in mcpServers.{server} or by \
                 adding \"{server}\" to mcp.allowed"
            ));
        }
        if asks {
            fixes.push(
                "run it where a person can be asked (a terminal, or an MCP client that supports \
                 elicitation)"
                    .to_string(),
            );
        }
        // The widest change last, and only when nothing narrower would do.
        let auto_edit = ApprovalMode::AutoEdit > mode && allows(ApprovalMode::AutoEdit);
        if !auto_edit && ApprovalMode::Yolo > mode && allows(ApprovalMode::Yolo) {
            fixes.push(
                "approval mode yolo (--approval-mode yolo) allows it, and every other call"
                    .to_string(),
            );
        }
        if fixes.is_empty() {
            fixes.push(format!(
                "add an allow rule for `{}` to a policy file (`toolbelt policy check` shows what \
                 decides)",
                call.name
            ));
        }
        let why =
            if asks { "it needs a confirmation nobody can give here" } else { "no rule allows it" };
        format!("{why}; {}", fixes.join(", or "))
    }
}

/// A rule for people: its setting key or its source, and its file.
fn describe(rule: &super::Rule) -> String {
    let file = rule.source.file.as_ref().map(|f| format!(" ({})", f.display()));
    let what = match rule.source.label.strip_prefix("Settings (") {
        Some(key) => format!("the setting {}", key.trim_end_matches(')')),
        None => format!("a rule from {}", rule.source.label),
    };
    format!("{what}{}", file.unwrap_or_default())
}
