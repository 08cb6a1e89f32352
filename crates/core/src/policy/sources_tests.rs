//! Tests of the rules made from settings and of tool exclusion.

use super::*;
use crate::policy::{PolicyCall, PolicyEngine};
use crate::settings::{McpServerSettings, ToolSettings};

fn decide(e: &PolicyEngine, name: &str, args: Value, mode: ApprovalMode) -> Decision {
    e.check(
        &PolicyCall { name, args: &args, server_name: None, annotations: None, canonical: None },
        mode,
    )
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
    let t =
        ToolSettings { core: Some(vec!["read_file".into(), "glob".into()]), ..Default::default() };
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
        is_excluded(
            &ToolFacts { name, server_name: None, annotations: None, canonical: None },
            &rules,
            &ctx,
        )
    };
    // Headless default mode hides the tools that would ask, and those without rules.
    for hidden in
        ["run_shell_command", "replace", "write_file", "write_todos", "list_background_processes"]
    {
        assert!(x(hidden), "{hidden}");
    }
    for shown in ["read_file", "glob", "grep_search", "list_directory"] {
        assert!(!x(shown), "{shown}");
    }
    let interactive = PolicyContext::default();
    assert!(!is_excluded(
        &ToolFacts { name: "write_file", server_name: None, annotations: None, canonical: None },
        &rules,
        &interactive
    ));
    let plan = PolicyContext { mode: ApprovalMode::Plan, ..PolicyContext::default() };
    assert!(is_excluded(
        &ToolFacts {
            name: "run_shell_command",
            server_name: None,
            annotations: None,
            canonical: None
        },
        &rules,
        &plan
    ));
    assert!(
        !is_excluded(
            &ToolFacts {
                name: "write_file",
                server_name: None,
                annotations: None,
                canonical: None
            },
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
            canonical: None,
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
    assert!(l.notices.iter().any(|e| e.message.contains("owned by root")));
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
    assert!(l.notices.iter().any(|e| e.message.contains("not trusted")));
    let l = load_sources(&PolicySources { trusted: true, ..s });
    assert!(
        l.rules
            .iter()
            .any(|r| r.source.label.starts_with("Workspace") && r.decision == Decision::Allow)
    );
}
