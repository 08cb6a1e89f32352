//! "Always allow" answers become session rules, narrowed to what the tool says an approval
//! covers ([`AlwaysScope`]).

use serde_json::Value;

use crate::approver::Outcome;
use crate::policy::toml::{command_prefix_pattern, escape_regex};
use crate::policy::{ApprovalMode, ArgsPattern, Decision, Rule};
use crate::tool::AlwaysScope;

/// The rules an outcome adds, if any. Session approvals sit at 3.95, saved ones at 4.95.
/// `tool` is the name the call used, `scope` what the tool says an approval covers.
pub fn rules_for(
    outcome: Outcome,
    tool: &str,
    scope: AlwaysScope,
    server: Option<&str>,
    args: &Value,
    mode: ApprovalMode,
) -> Option<Vec<Rule>> {
    let priority = match outcome {
        Outcome::ProceedAlwaysAndSave => 4.95,
        Outcome::ProceedAlways | Outcome::ProceedAlwaysTool | Outcome::ProceedAlwaysServer => 3.95,
        _ => return None,
    };
    let mut rule = Rule::new(tool, Decision::Allow, priority, "Dynamic (Confirmed)");
    rule.modes = mode.and_more_permissive();
    if let Some(srv) = server {
        rule.mcp_name = Some(srv.to_string());
        if outcome == Outcome::ProceedAlwaysServer {
            rule.tool_name = crate::names::mcp_server_wildcard(srv);
        }
        return Some(vec![rule]);
    }
    match scope {
        AlwaysScope::Tool => Some(vec![rule]),
        AlwaysScope::CommandRoots(param) => shell_rules(rule, param, args),
        AlwaysScope::Argument(param) => {
            let value = args.get(param)?;
            let encoded = serde_json::to_string(value).ok()?;
            let pattern = format!("\\x00{}\\x00", escape_regex(&format!("\"{param}\":{encoded}")));
            rule.args_pattern = Some(ArgsPattern::new(pattern).ok()?);
            Some(vec![rule])
        }
    }
}

/// One rule per root command of the (wrapper-stripped) command, allowing redirection when the
/// approved command redirected. An unparsable command adds nothing. Issue 46: each rule is
/// for the command's shape (`policy::grant::shapes`): the program's subcommand where it has
/// them (`git add`, `npm test`), the package a runner ran (`npx prettier`), and the options
/// the command used (`grant_options`).
fn shell_rules(template: Rule, param: &str, args: &Value) -> Option<Vec<Rule>> {
    let command = crate::shell::strip_shell_wrapper(args.get(param).and_then(Value::as_str)?);
    let mut roots = crate::shell::command_roots(&command);
    let mut seen = std::collections::HashSet::new();
    roots.retain(|r| seen.insert(r.clone()));
    if roots.is_empty() {
        return None;
    }
    let shapes = crate::policy::grant::shapes(&command).unwrap_or_default();
    let redirects = crate::shell::has_redirection(&command);
    roots
        .iter()
        .map(|root| {
            // The shape of the command this root heads; a wrapped one (`sudo npm test`) keeps
            // the root, with no options allowed.
            let (prefix, options) = shapes
                .iter()
                .find(|(p, _)| p == root || p.starts_with(&format!("{root} ")))
                .cloned()
                .unwrap_or_else(|| (root.clone(), Vec::new()));
            let mut r = template.clone();
            r.allow_redirection = redirects;
            r.args_pattern = Some(ArgsPattern::new(command_prefix_pattern(&prefix)).ok()?);
            r.command_prefix = Some(prefix);
            r.grant_options = Some(options);
            Some(r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicyCall, PolicyContext, evaluate};
    use serde_json::json;

    const SHELL: &str = crate::names::SHELL_TOOL_NAMES[0];

    const FILE: AlwaysScope = AlwaysScope::Argument("file_path");

    #[test]
    fn file_approvals_are_narrowed_to_that_path_and_actually_match() {
        let args = json!({"file_path": "src/a.rs", "content": "x"});
        let rule = rules_for(
            Outcome::ProceedAlways,
            "an_edit_tool",
            FILE,
            None,
            &args,
            ApprovalMode::Default,
        )
        .unwrap()
        .remove(0);
        assert_eq!(
            rule.modes,
            vec![ApprovalMode::Default, ApprovalMode::AutoEdit, ApprovalMode::Yolo]
        );
        let rules = vec![rule];
        let ctx = PolicyContext::default();
        let c = |a: &Value| {
            evaluate(
                &PolicyCall {
                    name: "an_edit_tool",
                    args: a,
                    server_name: None,
                    annotations: None,
                    canonical: None,
                },
                &rules,
                &ctx,
            )
            .decision
        };
        assert_eq!(c(&args), Decision::Allow);
        assert_eq!(c(&json!({"file_path": "src/b.rs", "content": "x"})), Decision::AskUser);
    }

    #[test]
    fn shell_approvals_are_narrowed_to_the_root_command() {
        let rules = rules_for(
            Outcome::ProceedAlways,
            SHELL,
            AlwaysScope::CommandRoots("command"),
            None,
            &json!({"command": "bash -c 'git status && npm test > log'"}),
            ApprovalMode::Default,
        )
        .unwrap();
        assert_eq!(rules.len(), 2);
        assert!(rules.iter().all(|r| r.allow_redirection));
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let ws =
            crate::Workspace::new(std::slice::from_ref(&root), &crate::config::Config::default())
                .unwrap();
        let ctx = PolicyContext { workspace: Some(&root), files: Some(&ws), ..Default::default() };
        let c = |cmd: &str| {
            let a = json!({"command": cmd});
            evaluate(
                &PolicyCall {
                    name: SHELL,
                    args: &a,
                    server_name: None,
                    annotations: None,
                    canonical: None,
                },
                &rules,
                &ctx,
            )
            .decision
        };
        assert_eq!(c("git status"), Decision::Allow);
        assert_eq!(c("npm test > out"), Decision::Allow);
        assert_eq!(c("gitk"), Decision::AskUser);
        assert_eq!(c("git status && curl x"), Decision::AskUser);
        // Issue 46: the answer covers its programs' subcommands, with the options they had,
        // inside the workspace only.
        assert_eq!(c("git commit -m x"), Decision::AskUser);
        assert_eq!(c("npm run build"), Decision::AskUser);
        assert_eq!(c("git status --ignored"), Decision::AskUser);
        assert_eq!(c("npm test > ~/.bashrc"), Decision::AskUser);
        assert_eq!(c("git -c core.pager=x status"), Decision::AskUser);
        assert_eq!(c("npm test ../other"), Decision::AskUser);
    }

    /// Issue 46: "always" for `npx prettier` is for prettier, not for any package npx runs.
    #[test]
    fn a_package_runners_answer_names_its_package() {
        let rules = rules_for(
            Outcome::ProceedAlways,
            SHELL,
            AlwaysScope::CommandRoots("command"),
            None,
            &json!({"command": "npx --yes prettier --write src"}),
            ApprovalMode::Default,
        )
        .unwrap();
        let prefixes: Vec<_> = rules.iter().filter_map(|r| r.command_prefix.as_deref()).collect();
        assert_eq!(prefixes, ["npx prettier"]);
    }

    #[test]
    fn unnarrowable_calls_add_nothing_and_others_allow_the_tool() {
        assert!(
            rules_for(
                Outcome::ProceedAlways,
                "a_reader",
                FILE,
                None,
                &json!({}),
                ApprovalMode::Default
            )
            .is_none()
        );
        assert!(
            rules_for(
                Outcome::ProceedOnce,
                "a_plain_tool",
                AlwaysScope::Tool,
                None,
                &json!({}),
                ApprovalMode::Default
            )
            .is_none()
        );
        let r = rules_for(
            Outcome::ProceedAlwaysAndSave,
            "a_plain_tool",
            AlwaysScope::Tool,
            None,
            &json!({}),
            ApprovalMode::Default,
        )
        .unwrap()
        .remove(0);
        assert!((r.priority - 4.95).abs() < 1e-9 && r.args_pattern.is_none());
        let r = rules_for(
            Outcome::ProceedAlwaysServer,
            "mcp_gh_issues",
            AlwaysScope::Tool,
            Some("gh"),
            &json!({}),
            ApprovalMode::Plan,
        )
        .unwrap()
        .remove(0);
        assert_eq!(r.tool_name, "mcp_gh_*");
    }
}
