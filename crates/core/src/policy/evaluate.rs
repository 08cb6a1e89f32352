//! The pure policy function: `evaluate(call, rules, context) -> Verdict`.

use serde_json::{Map, Value};

use super::rule::{ApprovalMode, Decision, Rule};
use super::stringify::stable_stringify;
use crate::names::{self, LEGACY_ALIASES, MCP_PREFIX};

pub use super::call::{PolicyCall, PolicyContext, Verdict};

/// Rules must be sorted by priority, highest first (ties in load order); the first that matches
/// decides. With none: yolo allows, otherwise ask_user interactively and deny headless.
///
/// Shell calls also go through the heuristics and the compound-command check (the policy's `shell` module).
pub fn evaluate(call: &PolicyCall<'_>, rules: &[Rule], ctx: &PolicyContext<'_>) -> Verdict {
    evaluate_at(call, rules, ctx, 0)
}

/// [`evaluate`] at a nesting depth (sub-commands of a shell command are checked one deeper).
pub(super) fn evaluate_at(
    call: &PolicyCall<'_>,
    rules: &[Rule],
    ctx: &PolicyContext<'_>,
    depth: usize,
) -> Verdict {
    let shell = names::SHELL_TOOL_NAMES.contains(&call.name).then(|| {
        let command = call.args.get("command").and_then(Value::as_str).unwrap_or("");
        (command, call.args.get("dir_path").and_then(Value::as_str))
    });
    let needs_args = rules.iter().any(|r| r.args_pattern.is_some());
    let stringified = needs_args.then(|| stable_stringify(call.args));
    // Command rules see the top-level command alone.
    let command_only = shell
        .filter(|_| rules.iter().any(Rule::matches_command))
        .map(|(command, _)| stable_stringify(&serde_json::json!({ "command": command })));
    let server = call.server_name.map(str::to_string).or_else(|| server_from_name(call.name));
    let mut names = names_for(call.name);
    names.extend(call.canonical.filter(|c| *c != call.name));
    for rule in rules {
        if ctx.disable_always_allow && rule.is_always_allow() {
            continue;
        }
        let args = match &command_only {
            Some(c) if rule.matches_command() => Some(c.as_str()),
            _ => stringified.as_deref(),
        };
        if rule_matches(rule, call, &names, args, server.as_deref(), ctx) {
            if let Some((command, dir)) = shell {
                return shell_verdict(call, command, dir, Some(rule), rules, ctx, depth);
            }
            return Verdict::new(rule.decision, Some(rule.clone()), rule_reason(rule));
        }
    }
    if let Some((command, dir)) = shell.filter(|_| ctx.mode != ApprovalMode::Yolo) {
        return shell_verdict(call, command, dir, None, rules, ctx, depth);
    }
    let (decision, reason) = if ctx.mode == ApprovalMode::Yolo {
        (Decision::Allow, "no rule matched; yolo mode allows everything else")
    } else {
        default_verdict(ctx)
    };
    Verdict::new(decision, None, reason.to_string())
}

fn rule_reason(rule: &Rule) -> String {
    format!(
        "rule {}tool {:?} (priority {}) from {}",
        rule.name.as_ref().map(|n| format!("{n:?} for ")).unwrap_or_default(),
        rule.tool_name,
        format_priority(rule.priority),
        rule.source.label
    )
}

fn default_verdict(ctx: &PolicyContext<'_>) -> (Decision, &'static str) {
    if ctx.interactive {
        (Decision::AskUser, "no rule matched; the default is to ask the user")
    } else {
        (Decision::Deny, "no rule matched; the default in non-interactive runs is to deny")
    }
}

/// A shell call: the rule's decision (or the default), adjusted by the heuristics when the
/// rule does not look at the arguments, then the compound-command check.
fn shell_verdict(
    call: &PolicyCall<'_>,
    command: &str,
    dir: Option<&str>,
    rule: Option<&Rule>,
    rules: &[Rule],
    ctx: &PolicyContext<'_>,
    depth: usize,
) -> Verdict {
    let (mut decision, mut reason) = match rule {
        Some(r) => (r.decision, rule_reason(r)),
        None => {
            let (d, why) = default_verdict(ctx);
            (d, why.to_string())
        }
    };
    let mut confine = false;
    // An "always allow" answer (x.95) covers only what the person judged (issue 46).
    let grant = rule.filter(|r| r.decision == Decision::Allow && r.is_always_allow());
    if grant.is_some()
        && ctx.mode != ApprovalMode::Yolo
        && !command.is_empty()
        && let Some(why) = grant.and_then(|g| super::grant::beyond(command, dir, ctx, g))
    {
        decision = Decision::AskUser;
        reason = format!(
            "{reason}; ask_user because an \"always allow\" answer does not cover this command: {why}"
        );
    }
    if !command.is_empty() && rule.is_none_or(|r| r.args_pattern.is_none()) {
        let (d, why) = super::shell::heuristics(command, decision, dir, ctx);
        if let (Some(why), true) = (why, d != decision) {
            reason = format!("{reason}; {} because {why}", d.as_str());
            confine = d == Decision::Allow && why == super::shell::KNOWN_SAFE;
        }
        decision = d;
    }
    let v = super::shell::check_command(
        call,
        command,
        dir,
        decision,
        rule,
        confine,
        rules,
        ctx,
        depth,
        evaluate_at,
    );
    if v.reason.is_empty() || v.decision == decision { Verdict { reason, ..v } } else { v }
}

/// `4.3`, `1.05`, `4.95` ...
pub fn format_priority(p: f64) -> String {
    let s = format!("{p:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// The call's name plus its legacy aliases, so rules may use either.
fn names_for(name: &str) -> Vec<&str> {
    let mut names = vec![name];
    for (old, new) in LEGACY_ALIASES {
        if name == *old {
            names.push(new);
        } else if name == *new {
            names.push(old);
        }
    }
    names
}

/// Whether `rule` can decide a call of the tool `name` (from MCP server `server_name`) in some
/// mode with some arguments: its tool name pattern matches.
pub(super) fn may_apply(rule: &Rule, name: &str, server_name: Option<&str>) -> bool {
    let server = server_name.map(str::to_string).or_else(|| server_from_name(name));
    names_for(name).iter().any(|n| name_matches(rule, n, server.as_deref()))
}

fn server_from_name(name: &str) -> Option<String> {
    let rest = name.strip_prefix(MCP_PREFIX)?;
    let (server, tool) = rest.split_once('_')?;
    (!server.is_empty() && !tool.is_empty()).then(|| server.to_string())
}

fn rule_matches(
    rule: &Rule,
    call: &PolicyCall<'_>,
    names: &[&str],
    stringified: Option<&str>,
    server: Option<&str>,
    ctx: &PolicyContext<'_>,
) -> bool {
    if !rule.modes.is_empty() && !rule.modes.contains(&ctx.mode) {
        return false;
    }
    if let Some(s) = &rule.subagent
        && Some(s.as_str()) != ctx.subagent
    {
        return false;
    }
    if let Some(m) = &rule.mcp_name {
        match server {
            None => return false,
            Some(srv) if m != "*" && m != srv => return false,
            _ => {}
        }
    }
    if !names.iter().any(|n| name_matches(rule, n, server)) {
        return false;
    }
    if let Some(want) = &rule.tool_annotations {
        let Some(have) = call.annotations else { return false };
        if want.iter().any(|(k, v)| have.get(k) != Some(v)) {
            return false;
        }
    }
    if let Some(p) = &rule.args_pattern {
        if call.args.is_null() {
            return false;
        }
        match stringified {
            // Fail closed: a pattern that cannot be evaluated denies (or asks), and never
            // allows (an ask rule taken as no match fell through to a lower allow; issue 34).
            Some(s) if p.matches_or(s, rule.decision != Decision::Allow) => {}
            _ => return false,
        }
    }
    rule.interactive.is_none_or(|i| i == ctx.interactive)
}

/// Whether a rule applies to a tool whatever the arguments (its args pattern is not looked at).
pub(super) fn rule_matches_ignoring_args(
    rule: &Rule,
    name: &str,
    server: Option<&str>,
    annotations: Option<&Map<String, Value>>,
    canonical: Option<&str>,
    ctx: &PolicyContext<'_>,
) -> bool {
    let server = server.map(str::to_string).or_else(|| server_from_name(name));
    let mut names = names_for(name);
    names.extend(canonical.filter(|c| *c != name));
    let mut r = rule.clone();
    r.args_pattern = None;
    let call = PolicyCall {
        name,
        args: &Value::Null,
        server_name: server.as_deref(),
        annotations,
        canonical: None,
    };
    rule_matches(&r, &call, &names, None, server.as_deref(), ctx)
}

fn name_matches(rule: &Rule, name: &str, server: Option<&str>) -> bool {
    let pat = rule.tool_name.as_str();
    if pat == "*" {
        return true;
    }
    if pat.contains('*') {
        if pat == names::MCP_WILDCARD {
            return server.is_some();
        }
        if let Some(srv) = pat.strip_prefix(MCP_PREFIX).and_then(|r| r.strip_suffix("_*")) {
            return server == Some(srv) && name.starts_with(&names::mcp_tool(srv, ""));
        }
        return wildcard(pat, name);
    }
    if pat == name {
        return true;
    }
    let Some(srv) = server else { return false };
    if let Some(m) = &rule.mcp_name
        && !names::is_mcp(pat)
        && name == names::mcp_tool(m, pat)
    {
        return true;
    }
    names::is_mcp(pat) && pat == names::mcp_tool(srv, name)
}

/// `*` matches any run of characters (upstream compares such names literally, so its
/// `discovered_tool_*` rules never match; see docs/compat.md).
fn wildcard(pat: &str, name: &str) -> bool {
    let parts: Vec<&str> = pat.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rule::ArgsPattern;
    use serde_json::json;

    fn call<'a>(name: &'a str, args: &'a Value) -> PolicyCall<'a> {
        PolicyCall { name, args, server_name: None, annotations: None, canonical: None }
    }

    fn sorted(mut rules: Vec<Rule>) -> Vec<Rule> {
        rules.sort_by(|a, b| b.priority.total_cmp(&a.priority));
        rules
    }

    #[test]
    fn highest_priority_match_wins_and_ties_keep_load_order() {
        let rules = sorted(vec![
            Rule::new("read_file", Decision::Allow, 1.05, "a"),
            Rule::new("*", Decision::Deny, 1.04, "b"),
            Rule::new("read_file", Decision::Deny, 1.05, "c"),
        ]);
        let args = json!({});
        let v = evaluate(&call("read_file", &args), &rules, &PolicyContext::default());
        assert_eq!(v.decision, Decision::Allow);
        assert_eq!(v.rule.unwrap().source.label, "a");
        let v = evaluate(&call("glob", &args), &rules, &PolicyContext::default());
        assert_eq!(v.decision, Decision::Deny);
    }

    #[test]
    fn defaults_depend_on_mode_and_interactivity() {
        let args = json!({});
        let c = call("x", &args);
        let mut ctx = PolicyContext::default();
        assert_eq!(evaluate(&c, &[], &ctx).decision, Decision::AskUser);
        ctx.interactive = false;
        let v = evaluate(&c, &[], &ctx);
        assert_eq!(v.decision, Decision::Deny);
        assert!(v.rule.is_none() && v.reason.contains("non-interactive"));
        ctx.mode = ApprovalMode::Yolo;
        assert_eq!(evaluate(&c, &[], &ctx).decision, Decision::Allow);
    }

    #[test]
    fn modes_and_interactive_flags_filter_rules() {
        let mut r = Rule::new("replace", Decision::Allow, 1.015, "t");
        r.modes = vec![ApprovalMode::AutoEdit];
        let mut headless = Rule::new("replace", Decision::Deny, 1.010, "t");
        headless.interactive = Some(false);
        let rules = sorted(vec![r, headless]);
        let args = json!({});
        let mut ctx = PolicyContext { interactive: false, ..Default::default() };
        assert_eq!(evaluate(&call("replace", &args), &rules, &ctx).decision, Decision::Deny);
        ctx.mode = ApprovalMode::AutoEdit;
        assert_eq!(evaluate(&call("replace", &args), &rules, &ctx).decision, Decision::Allow);
        ctx.interactive = true;
        ctx.mode = ApprovalMode::Default;
        assert_eq!(evaluate(&call("replace", &args), &rules, &ctx).decision, Decision::AskUser);
    }

    #[test]
    fn args_pattern_runs_on_stable_stringified_args() {
        let mut r = Rule::new("write_file", Decision::Allow, 1.07, "plan");
        r.args_pattern =
            Some(ArgsPattern::new("\\x00\"file_path\":\"[\\w-]+\\.md\"\\x00").unwrap());
        let rules = vec![r];
        let ctx = PolicyContext { interactive: false, ..Default::default() };
        let ok = json!({"content": "x", "file_path": "plan.md"});
        let no = json!({"file_path": "src/main.rs", "content": "plan.md"});
        assert_eq!(evaluate(&call("write_file", &ok), &rules, &ctx).decision, Decision::Allow);
        assert_eq!(evaluate(&call("write_file", &no), &rules, &ctx).decision, Decision::Deny);
    }

    /// Issue 46 (G12): servers `a` (tool `b_x`) and `a_b` (tool `x`) both make `mcp_a_b_x`;
    /// the second was renamed `mcp_a_b_x_2` and escaped a deny rule on `mcp_a_b_x`. Rules
    /// about the name a tool would have had apply to it, in calls and in the tool list.
    #[test]
    fn a_renamed_mcp_tool_is_still_bound_by_rules_on_its_own_name() {
        let rules = vec![Rule::new("mcp_a_b_x", Decision::Deny, 4.5, "u")];
        let args = json!({});
        let ctx = PolicyContext::default();
        for (name, server) in [("mcp_a_b_x", "a"), ("mcp_a_b_x_2", "a_b")] {
            let c = PolicyCall {
                name,
                args: &args,
                server_name: Some(server),
                annotations: None,
                canonical: Some("mcp_a_b_x"),
            };
            assert_eq!(evaluate(&c, &rules, &ctx).decision, Decision::Deny, "{name}");
            let facts = super::super::sources::ToolFacts {
                name,
                server_name: Some(server),
                annotations: None,
                canonical: Some("mcp_a_b_x"),
            };
            assert!(super::super::sources::is_excluded(&facts, &rules, &ctx), "{name}");
        }
        let engine = crate::policy::PolicyEngine::new(rules, true);
        let c = PolicyCall {
            name: "mcp_a_b_x_2",
            args: &args,
            server_name: Some("a_b"),
            annotations: None,
            canonical: Some("mcp_a_b_x"),
        };
        assert_eq!(engine.check(&c, ApprovalMode::Default).decision, Decision::Deny);
    }

    #[test]
    fn mcp_wildcards_need_the_server() {
        let rules = vec![
            Rule::new("mcp_github_*", Decision::Allow, 4.2, "u"),
            Rule::new("mcp_*", Decision::Deny, 4.1, "u"),
        ];
        let args = json!({});
        let ctx = PolicyContext::default();
        let gh = PolicyCall {
            name: "mcp_github_list",
            args: &args,
            server_name: Some("github"),
            annotations: None,
            canonical: None,
        };
        assert_eq!(evaluate(&gh, &rules, &ctx).decision, Decision::Allow);
        let other = PolicyCall {
            name: "mcp_jira_list",
            args: &args,
            server_name: Some("jira"),
            annotations: None,
            canonical: None,
        };
        assert_eq!(evaluate(&other, &rules, &ctx).decision, Decision::Deny);
        // server parsed from the name when not given
        assert_eq!(evaluate(&call("mcp_github_x", &args), &rules, &ctx).decision, Decision::Allow);
        assert_eq!(evaluate(&call("read_file", &args), &rules, &ctx).decision, Decision::AskUser);
    }

    #[test]
    fn mcp_short_names_with_mcp_name_match_qualified_calls() {
        let mut r = Rule::new("search", Decision::Deny, 4.0, "u");
        r.mcp_name = Some("docs".into());
        let args = json!({});
        let c = PolicyCall {
            name: "mcp_docs_search",
            args: &args,
            server_name: Some("docs"),
            annotations: None,
            canonical: None,
        };
        assert_eq!(evaluate(&c, &[r], &PolicyContext::default()).decision, Decision::Deny);
    }

    #[test]
    fn annotations_must_all_match() {
        let mut r = Rule::new("*", Decision::AskUser, 1.05, "plan");
        r.mcp_name = Some("*".into());
        r.tool_annotations = Some(json!({"readOnlyHint": true}).as_object().unwrap().clone());
        let rules = vec![r];
        let args = json!({});
        let ann = json!({"readOnlyHint": true}).as_object().unwrap().clone();
        let ctx = PolicyContext { interactive: false, ..Default::default() };
        let c = PolicyCall {
            name: "mcp_s_t",
            args: &args,
            server_name: Some("s"),
            annotations: Some(&ann),
            canonical: None,
        };
        assert_eq!(evaluate(&c, &rules, &ctx).decision, Decision::AskUser);
        let c = PolicyCall { annotations: None, ..c };
        assert_eq!(evaluate(&c, &rules, &ctx).decision, Decision::Deny);
    }

    #[test]
    fn legacy_aliases_and_generic_wildcards_match() {
        let rules = vec![
            Rule::new("search_file_content", Decision::Deny, 1.5, "u"),
            Rule::new("discovered_tool_*", Decision::Allow, 1.1, "u"),
        ];
        let args = json!({});
        let ctx = PolicyContext::default();
        assert_eq!(evaluate(&call("grep_search", &args), &rules, &ctx).decision, Decision::Deny);
        assert_eq!(
            evaluate(&call("discovered_tool_lint", &args), &rules, &ctx).decision,
            Decision::Allow
        );
        assert!(
            wildcard("a*b*c", "aXXbYYc") && !wildcard("a*b*c", "aXXc") && !wildcard("ab*ba", "aba")
        );
    }

    /// Issue 34, finding 10: a rule whose pattern cannot be evaluated (the backtracking engine
    /// gives up) made deny rules match but ask_user rules not, so an unevaluable ask rule fell
    /// through to a lower-priority allow.
    #[test]
    fn an_unevaluable_pattern_asks_as_it_denies() {
        let hard = ArgsPattern::bundled(r"(a|aa)+\1$").unwrap();
        let args = json!({"text": format!("{}b", "a".repeat(64))});
        let s = crate::policy::stringify::stable_stringify(&args);
        assert!(hard.try_match_for_test(&s).is_err(), "the pattern must be unevaluable here");
        for (decision, want) in
            [(Decision::AskUser, Decision::AskUser), (Decision::Deny, Decision::Deny)]
        {
            let mut strict = Rule::new("some_tool", decision, 2.0, "strict");
            strict.args_pattern = Some(hard.clone());
            let allow = Rule::new("some_tool", Decision::Allow, 1.0, "allow");
            let v = evaluate(
                &call("some_tool", &args),
                &sorted(vec![strict, allow]),
                &PolicyContext::default(),
            );
            assert_eq!(v.decision, want, "{decision:?}: {}", v.reason);
        }
        // An allow rule whose pattern cannot be evaluated allows nothing.
        let mut loose = Rule::new("some_tool", Decision::Allow, 2.0, "loose");
        loose.args_pattern = Some(hard);
        let v = evaluate(&call("some_tool", &args), &[loose], &PolicyContext::default());
        assert_eq!(v.decision, Decision::AskUser);
    }

    #[test]
    fn always_allow_rules_can_be_disabled() {
        let rules = vec![Rule::new("glob", Decision::Allow, 4.95, "Dynamic (Confirmed)")];
        let args = json!({});
        let ctx = PolicyContext { disable_always_allow: true, ..Default::default() };
        assert_eq!(evaluate(&call("glob", &args), &rules, &ctx).decision, Decision::AskUser);
        assert_eq!(format_priority(4.95), "4.95");
        assert_eq!(format_priority(1.05), "1.05");
        assert_eq!(format_priority(2.0), "2");
    }
}
