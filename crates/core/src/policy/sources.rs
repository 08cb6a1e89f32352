//! Where a session's rules come from: the bundled defaults (tier 1), the
//! workspace folders (tier 3, trusted folders only for rules that allow), the user folders and
//! `--policy` paths (tier 4), the admin folders (tier 5, only when owned by root and not
//! writable by others), and rules derived from settings at upstream's tier-4 fractions. Also
//! the static exclusion of tools that policy denies outright (4.8).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::rule::{ApprovalMode, Decision, Rule, Tier};
use super::toml::{Loaded, command_prefix_pattern, load_path};
use super::{ArgsPattern, PolicyContext, default_rules, evaluate::rule_matches_ignoring_args};
use crate::names;
use crate::settings::ToolSettings;

/// The policy folders and files of a session.
#[derive(Clone, Debug, Default)]
pub struct PolicySources {
    /// Admin policy folders (tier 5).
    pub admin: Vec<PathBuf>,
    /// User policy folders (tier 4).
    pub user: Vec<PathBuf>,
    /// Workspace policy folders (tier 3).
    pub workspace: Vec<PathBuf>,
    /// Whether the workspace folder is trusted (else its allow rules are dropped).
    pub trusted: bool,
}

/// The folders toolbelt and Gemini CLI read, for a toolbelt home, a user home and a project.
pub fn standard_sources(
    toolbelt_home: &Path,
    user_home: Option<&Path>,
    root: Option<&Path>,
    trusted: bool,
) -> PolicySources {
    let mut s = PolicySources { trusted, ..Default::default() };
    s.admin.push(PathBuf::from("/etc/toolbelt/policies"));
    s.admin.push(PathBuf::from("/etc/gemini-cli/policies"));
    if let Some(h) = user_home {
        s.user.push(h.join(".gemini").join("policies"));
    }
    s.user.push(toolbelt_home.join("policies"));
    if let Some(r) = root {
        s.workspace.push(r.join(".gemini").join("policies"));
        s.workspace.push(r.join(".toolbelt").join("policies"));
    }
    s
}

/// Admin folders count only when nobody but root can change them.
#[cfg(unix)]
fn admin_dir_is_safe(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0)
}

#[cfg(not(unix))]
fn admin_dir_is_safe(_p: &Path) -> bool {
    false
}

/// Rules from every tier. Problems are reported in `errors`, with one entry naming the
/// workspace allow rules skipped in an untrusted folder.
pub fn load_sources(s: &PolicySources) -> Loaded {
    let mut out = default_rules();
    for dir in &s.admin {
        if dir.exists() {
            if admin_dir_is_safe(dir) {
                out.extend(load_path(dir, Tier::Admin));
            } else {
                out.errors.push(super::PolicyFileError {
                    file: dir.display().to_string(),
                    message: "ignored: admin policy folders must be owned by root and not writable by others".into(),
                });
            }
        }
    }
    for p in &s.user {
        out.extend(load_path(p, Tier::User));
    }
    for p in &s.workspace {
        let mut l = load_path(p, Tier::Workspace);
        if !s.trusted {
            let before = l.rules.len();
            l.rules.retain(|r| r.decision != Decision::Allow);
            if l.rules.len() < before {
                l.errors.push(super::PolicyFileError {
                    file: p.display().to_string(),
                    message: format!(
                        "{} allow rule(s) skipped because this folder is not trusted (run `toolbelt trust`)",
                        before - l.rules.len()
                    ),
                });
            }
        }
        out.extend(l);
    }
    out
}

/// `name(args)` -> (name, Some(args)).
fn split_call(entry: &str) -> (&str, Option<&str>) {
    match entry.split_once('(') {
        Some((name, rest)) if rest.ends_with(')') => (name.trim(), Some(&rest[..rest.len() - 1])),
        _ => (entry.trim(), None),
    }
}

fn rule(tool: &str, decision: Decision, priority: f64, source: &str) -> Rule {
    Rule::new(tool, decision, priority, source)
}

/// Rules derived from settings, at upstream's priorities.
pub fn settings_rules(t: &ToolSettings, interactive: bool) -> Vec<Rule> {
    let src = "Settings";
    let not_plan = vec![ApprovalMode::Default, ApprovalMode::AutoEdit, ApprovalMode::Yolo];
    let mut out = Vec::new();
    for s in &t.mcp_excluded {
        let mut r = if s == "*" {
            rule(names::MCP_WILDCARD, Decision::Deny, 4.9, src)
        } else {
            let mut r = rule(&names::mcp_server_wildcard(s), Decision::Deny, 4.9, src);
            r.mcp_name = Some(s.clone());
            r
        };
        r.name = Some(format!("mcp.excluded: {s}"));
        out.push(r);
    }
    let mut excluded = t.exclude.clone();
    if !interactive {
        excluded.push("ask_user".into());
    }
    for e in &excluded {
        let (name, _) = split_call(e);
        out.push(rule(name, Decision::Deny, 4.4, src));
    }
    for e in &t.confirmation_required {
        let (name, _) = split_call(e);
        let name = if names::SHELL_SETTING_NAMES.contains(&name) {
            names::SHELL_TOOL_NAMES[0]
        } else {
            name
        };
        out.push(rule(name, Decision::AskUser, 4.35, src));
    }
    let mut shell_narrowed = false;
    for e in &t.allowed {
        let (name, args) = split_call(e);
        if names::SHELL_SETTING_NAMES.contains(&name)
            && let Some(prefix) = args.map(str::trim).filter(|a| !a.is_empty())
        {
            let mut r = rule("run_shell_command", Decision::Allow, 4.3, src);
            if let Ok(p) = ArgsPattern::new(command_prefix_pattern(prefix)) {
                r.args_pattern = Some(p);
                r.command_prefix = Some(prefix.to_string());
                out.push(r);
                shell_narrowed = true;
            }
            continue;
        }
        out.push(rule(name, Decision::Allow, 4.3, src));
    }
    if shell_narrowed {
        out.push(rule("run_shell_command", Decision::Deny, 4.29, src));
    }
    if let Some(core) = &t.core {
        for e in core {
            let (name, _) = split_call(e);
            let mut r = rule(name, Decision::Allow, 4.25, src);
            r.modes = not_plan.clone();
            out.push(r);
        }
        let mut r = rule("*", Decision::Deny, 4.24, src);
        r.modes = not_plan.clone();
        r.name = Some("tools.core: only the listed tools".into());
        out.push(r);
    }
    for s in &t.mcp_servers {
        if s.definition.get("trust").and_then(Value::as_bool) == Some(true) {
            let mut r = rule(&names::mcp_server_wildcard(&s.name), Decision::Allow, 4.2, src);
            r.mcp_name = Some(s.name.clone());
            r.modes = not_plan.clone();
            out.push(r);
        }
    }
    for s in &t.mcp_allowed {
        let mut r = rule(&names::mcp_server_wildcard(s), Decision::Allow, 4.1, src);
        r.mcp_name = Some(s.clone());
        r.modes = not_plan.clone();
        out.push(r);
    }
    out
}

/// A tool as static exclusion sees it.
#[derive(Clone, Copy, Debug)]
pub struct ToolFacts<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its MCP server, if any.
    pub server_name: Option<&'a str>,
    /// Its MCP annotations, if any.
    pub annotations: Option<&'a Map<String, Value>>,
}

/// Whether policy denies the tool whatever its arguments. `rules` must be in
/// evaluation order ([`super::sort_rules`]). The first rule
/// that applies ignoring arguments decides — with an args pattern and not deny: kept; with an
/// args pattern and deny: look further; without: excluded iff deny. No rule: excluded iff the
/// default decision is deny.
pub fn is_excluded(tool: &ToolFacts<'_>, rules: &[Rule], ctx: &PolicyContext<'_>) -> bool {
    for r in rules {
        if ctx.disable_always_allow && r.is_always_allow() {
            continue;
        }
        if !rule_matches_ignoring_args(r, tool.name, tool.server_name, tool.annotations, ctx) {
            continue;
        }
        match (&r.args_pattern, r.decision) {
            (Some(_), Decision::Deny) => continue,
            (Some(_), _) => return false,
            (None, d) => return d == Decision::Deny,
        }
    }
    ctx.mode != ApprovalMode::Yolo && !ctx.interactive
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicyCall, PolicyEngine};
    use crate::settings::{McpServerSettings, ToolSettings};

    fn decide(e: &PolicyEngine, name: &str, args: Value, mode: ApprovalMode) -> Decision {
        e.check(&PolicyCall { name, args: &args, server_name: None, annotations: None }, mode)
            .decision
    }

    #[test]
    fn settings_rules_sit_at_upstream_priorities() {
        let t = ToolSettings {
            exclude: vec!["glob".into()],
            allowed: vec!["run_shell_command(git status)".into(), "write_file".into()],
            confirmation_required: vec!["web_fetch".into()],
            mcp_excluded: vec!["evil".into()],
            mcp_allowed: vec!["gh".into()],
            mcp_servers: vec![McpServerSettings {
                name: "fs".into(),
                definition: serde_json::json!({"command": "x", "trust": true}),
            }],
            ..Default::default()
        };
        let mut rules = default_rules().rules;
        rules.extend(settings_rules(&t, true));
        let e = PolicyEngine::new(rules, true);
        let d = ApprovalMode::Default;
        assert_eq!(decide(&e, "glob", serde_json::json!({}), d), Decision::Deny);
        assert_eq!(decide(&e, "write_file", serde_json::json!({}), d), Decision::Allow);
        assert_eq!(
            decide(&e, "run_shell_command", serde_json::json!({"command": "git status"}), d),
            Decision::Allow
        );
        // Other commands: the narrowing rule (4.29) denies rather than asks.
        assert_eq!(
            decide(&e, "run_shell_command", serde_json::json!({"command": "make"}), d),
            Decision::Deny
        );
        assert_eq!(decide(&e, "mcp_evil_x", serde_json::json!({}), d), Decision::Deny);
        assert_eq!(
            decide(&e, "web_fetch", serde_json::json!({}), ApprovalMode::AutoEdit),
            Decision::AskUser
        );
        assert_eq!(decide(&e, "mcp_gh_issues", serde_json::json!({}), d), Decision::Allow);
        assert_eq!(decide(&e, "mcp_fs_read", serde_json::json!({}), d), Decision::Allow);
        assert_eq!(
            decide(&e, "mcp_fs_read", serde_json::json!({}), ApprovalMode::Plan),
            Decision::Deny
        );
        let headless = settings_rules(&ToolSettings::default(), false);
        assert!(headless.iter().any(|r| r.tool_name == "ask_user" && r.decision == Decision::Deny));
    }

    #[test]
    fn core_tools_allow_only_the_listed_tools() {
        let t = ToolSettings {
            core: Some(vec!["read_file".into(), "glob".into()]),
            ..Default::default()
        };
        let mut rules = default_rules().rules;
        rules.extend(settings_rules(&t, true));
        let e = PolicyEngine::new(rules, true);
        assert_eq!(
            decide(&e, "read_file", serde_json::json!({}), ApprovalMode::Default),
            Decision::Allow
        );
        assert_eq!(
            decide(&e, "grep_search", serde_json::json!({}), ApprovalMode::Default),
            Decision::Deny
        );
    }

    #[test]
    fn static_exclusion_follows_upstream() {
        let mut rules = default_rules().rules;
        crate::policy::sort_rules(&mut rules);
        let ctx = PolicyContext { interactive: false, ..PolicyContext::default() };
        let x = |name| {
            is_excluded(&ToolFacts { name, server_name: None, annotations: None }, &rules, &ctx)
        };
        // Headless default mode hides the tools that would ask, and those without rules.
        for hidden in [
            "run_shell_command",
            "replace",
            "write_file",
            "write_todos",
            "list_background_processes",
        ] {
            assert!(x(hidden), "{hidden}");
        }
        for shown in ["read_file", "glob", "grep_search", "list_directory"] {
            assert!(!x(shown), "{shown}");
        }
        let interactive = PolicyContext::default();
        assert!(!is_excluded(
            &ToolFacts { name: "write_file", server_name: None, annotations: None },
            &rules,
            &interactive
        ));
        let plan = PolicyContext { mode: ApprovalMode::Plan, ..PolicyContext::default() };
        assert!(is_excluded(
            &ToolFacts { name: "run_shell_command", server_name: None, annotations: None },
            &rules,
            &plan
        ));
        assert!(
            !is_excluded(
                &ToolFacts { name: "write_file", server_name: None, annotations: None },
                &rules,
                &plan
            ),
            "plan allows writing plans (args pattern)"
        );
    }

    #[test]
    fn tiers_order_workspace_below_user_below_admin() {
        let dir = tempfile::tempdir().unwrap();
        let mk = |name: &str, decision: &str| {
            let d = dir.path().join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("p.toml"), format!("[[rule]]\ntoolName = \"glob\"\ndecision = \"{decision}\"\npriority = 999\n\n[[rule]]\ntoolName = \"write_file\"\ndecision = \"{decision}\"\npriority = 1\n")).unwrap();
            d
        };
        let (ws, user) = (mk("ws", "deny"), mk("user", "allow"));
        let s = PolicySources {
            workspace: vec![ws.clone()],
            user: vec![user.clone()],
            trusted: true,
            ..Default::default()
        };
        let e = PolicyEngine::new(load_sources(&s).rules, true);
        let d = ApprovalMode::Default;
        // A user rule at priority 1 (4.001) beats a workspace rule at 999 (3.999).
        assert_eq!(decide(&e, "write_file", serde_json::json!({}), d), Decision::Allow);
        assert_eq!(decide(&e, "glob", serde_json::json!({}), d), Decision::Allow);
        let v = e.check(
            &PolicyCall {
                name: "glob",
                args: &serde_json::json!({}),
                server_name: None,
                annotations: None,
            },
            d,
        );
        assert_eq!(v.rule.unwrap().source.label, "User: p.toml");
        // Both beat the defaults (tier 1): write_file would otherwise ask.
        let s = PolicySources { workspace: vec![ws], trusted: true, ..Default::default() };
        let e = PolicyEngine::new(load_sources(&s).rules, true);
        assert_eq!(decide(&e, "write_file", serde_json::json!({}), d), Decision::Deny);
    }

    #[cfg(unix)]
    #[test]
    fn admin_folders_count_only_when_root_owned_and_not_writable_by_others() {
        let dir = tempfile::tempdir().unwrap();
        let admin = dir.path().join("admin");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(
            admin.join("p.toml"),
            "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&admin, std::fs::Permissions::from_mode(0o777)).unwrap();
        let l = load_sources(&PolicySources { admin: vec![admin.clone()], ..Default::default() });
        assert!(
            !l.rules.iter().any(|r| r.source.label.starts_with("Admin")),
            "world-writable: ignored"
        );
        assert!(l.errors.iter().any(|e| e.message.contains("owned by root")));
        std::fs::set_permissions(&admin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let l = load_sources(&PolicySources { admin: vec![admin], ..Default::default() });
        use std::os::unix::fs::MetadataExt;
        let is_root = std::fs::metadata(dir.path()).unwrap().uid() == 0;
        assert_eq!(
            l.rules
                .iter()
                .any(|r| r.source.label.starts_with("Admin") && (r.priority - 5.001).abs() < 1e-9),
            is_root
        );
    }

    #[test]
    fn untrusted_workspace_policies_keep_only_restrictions() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("p.toml"), "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"allow\"\npriority = 100\n\n[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 100\n").unwrap();
        let s = PolicySources { workspace: vec![ws.clone()], trusted: false, ..Default::default() };
        let l = load_sources(&s);
        assert!(l.rules.iter().any(|r| r.tool_name == "glob"
            && r.decision == Decision::Deny
            && r.source.label.starts_with("Workspace")));
        assert!(
            !l.rules
                .iter()
                .any(|r| r.source.label.starts_with("Workspace") && r.decision == Decision::Allow)
        );
        assert!(l.errors.iter().any(|e| e.message.contains("not trusted")));
        let l = load_sources(&PolicySources { trusted: true, ..s });
        assert!(
            l.rules
                .iter()
                .any(|r| r.source.label.starts_with("Workspace") && r.decision == Decision::Allow)
        );
    }
}
