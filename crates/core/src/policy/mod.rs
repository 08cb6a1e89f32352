//! The policy engine: rules as data ([`Rule`]), loaded from Gemini CLI's TOML format
//! ([`toml`]), and one pure function ([`evaluate`]) that decides allow / deny / ask_user.

mod call;
mod evaluate;
pub mod grant;
mod hint;
pub mod lint;
mod places;
mod rule;
pub mod saved;
mod shell;
pub mod sources;
mod stringify;
pub mod toml;

use crate::sync::{LockExt, RwLockExt};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

pub use evaluate::{PolicyCall, PolicyContext, Verdict, evaluate, format_priority};
pub use rule::{ApprovalMode, ArgsPattern, Decision, Rule, RuleSource, Tier};
pub use stringify::stable_stringify;
pub use toml::{Loaded, PolicyFileError};

// `DEFAULT_POLICY_FILES`: the bundled default policies, equivalent to upstream's (`build.rs`).
include!(concat!(env!("OUT_DIR"), "/bundled_policies.rs"));

/// The default rules, from the bundled files (read at build time: no TOML is parsed at start).
pub fn default_rules() -> Loaded {
    toml::bundled_rules()
}

/// Sorts by priority, highest first; ties keep their order.
pub fn sort_rules(rules: &mut [Rule]) {
    rules.sort_by(|a, b| b.priority.total_cmp(&a.priority));
}

/// A tool name's rules, per MCP server (`None`: not an MCP tool).
type RulesByServer = Vec<(Option<String>, Arc<[Rule]>)>;

/// The rule set of a session: the loaded rules plus rules added while it runs ("always allow").
#[derive(Debug)]
pub struct PolicyEngine {
    rules: RwLock<Vec<Rule>>,
    /// For each tool name (and MCP server) seen, the rules that can apply to it, in order: a
    /// call is checked against a handful of rules instead of all of them. Emptied when a rule
    /// is added.
    by_tool: Mutex<HashMap<String, RulesByServer>>,
    interactive: bool,
    disable_always_allow: bool,
    workspace: Option<std::path::PathBuf>,
    trusted_folder: bool,
    confinable: bool,
    search_path: Option<std::ffi::OsString>,
}

impl PolicyEngine {
    /// An engine over `rules` (sorted by priority here); `interactive` when a person can answer.
    pub fn new(mut rules: Vec<Rule>, interactive: bool) -> Self {
        sort_rules(&mut rules);
        Self {
            rules: RwLock::new(rules),
            by_tool: Mutex::default(),
            interactive,
            disable_always_allow: false,
            workspace: None,
            trusted_folder: true,
            confinable: true,
            search_path: None,
        }
    }

    /// The `PATH` shell command names are looked up in (default: the process's own, which
    /// children inherit).
    pub fn with_search_path(mut self, path: impl Into<std::ffi::OsString>) -> Self {
        self.search_path = Some(path.into());
        self
    }

    /// Whether commands the known-safe table allows can run confined (read-only, no network;
    /// Landlock is here). Where they cannot, the table shrinks: no `git`.
    pub fn with_confinable(mut self, confinable: bool) -> Self {
        self.confinable = confinable;
        self
    }

    /// The workspace root shell commands are judged against (paths outside it are asked about).
    pub fn with_workspace(mut self, root: impl Into<std::path::PathBuf>) -> Self {
        self.workspace = Some(root.into());
        self
    }

    /// Marks the folder as untrusted: git commands are then always asked about.
    pub fn with_trusted_folder(mut self, trusted: bool) -> Self {
        self.trusted_folder = trusted;
        self
    }

    /// The defaults plus the files or folders given, each at its tier.
    pub fn load(paths: &[(&Path, Tier)], interactive: bool) -> (Self, Vec<PolicyFileError>) {
        let mut loaded = default_rules();
        for (p, tier) in paths {
            loaded.extend(toml::load_path(p, *tier));
        }
        loaded.check_pattern_budget();
        (Self::new(loaded.rules, interactive), loaded.errors)
    }

    /// Whether a person can answer questions (else "ask" becomes "deny").
    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// Adds a rule (e.g. a session "always allow"), keeping the order.
    pub fn add_rule(&self, rule: Rule) {
        let mut rules = self.rules.writing();
        rules.push(rule);
        sort_rules(&mut rules);
        self.by_tool.locked().clear();
    }

    /// A copy of the current rules, in evaluation order.
    pub fn rules(&self) -> Vec<Rule> {
        self.rules.reading().clone()
    }

    /// The session facts rules are matched against, in `mode`.
    fn context(&self, mode: ApprovalMode) -> PolicyContext<'_> {
        PolicyContext {
            mode,
            interactive: self.interactive,
            subagent: None,
            disable_always_allow: self.disable_always_allow,
            workspace: self.workspace.as_deref(),
            trusted_folder: self.trusted_folder,
            files: None,
            confinable: self.confinable,
            search_path: self.search_path.as_deref(),
        }
    }

    /// The tools policy denies whatever their arguments in `mode`: they are
    /// left out of the declarations the model sees.
    pub fn excluded_tools<'a>(
        &self,
        tools: impl IntoIterator<Item = sources::ToolFacts<'a>>,
        mode: ApprovalMode,
    ) -> std::collections::HashSet<String> {
        let ctx = self.context(mode);
        let rules = self.rules.reading();
        tools
            .into_iter()
            .filter(|t| sources::is_excluded(t, &rules, &ctx))
            .map(|t| t.name.to_string())
            .collect()
    }

    /// Decides a call in a mode.
    pub fn check(&self, call: &PolicyCall<'_>, mode: ApprovalMode) -> Verdict {
        self.check_in(call, mode, None)
    }

    /// Decides a call in a mode, with the file layer judging the paths a known-safe shell
    /// command would read or a redirection write (the scheduler gives its workspace).
    pub fn check_in(
        &self,
        call: &PolicyCall<'_>,
        mode: ApprovalMode,
        files: Option<&dyn crate::shell::safety::ReadJudge>,
    ) -> Verdict {
        let mut ctx = self.context(mode);
        ctx.files = files;
        let rules = match call.canonical.filter(|c| *c != call.name) {
            // A renamed MCP tool (rare): the rules of either name, in order, not cached.
            Some(canonical) => self
                .rules
                .reading()
                .iter()
                .filter(|r| {
                    evaluate::may_apply(r, call.name, call.server_name)
                        || evaluate::may_apply(r, canonical, call.server_name)
                })
                .cloned()
                .collect(),
            None => self.rules_for(call.name, call.server_name),
        };
        evaluate(call, &rules, &ctx)
    }

    /// The rules that can apply to a tool, whatever the arguments and mode (the order kept, so
    /// the first match among them is the first match among all).
    fn rules_for(&self, name: &str, server: Option<&str>) -> Arc<[Rule]> {
        /// Past this many names the cache starts again (names come from the registry).
        const MAX_NAMES: usize = 4096;
        let rules = self.rules.reading();
        let mut cache = self.by_tool.locked();
        if let Some(hit) = cache
            .get(name)
            .and_then(|v| v.iter().find(|(s, _)| s.as_deref() == server))
            .map(|(_, r)| r.clone())
        {
            return hit;
        }
        let applicable: Arc<[Rule]> =
            rules.iter().filter(|r| evaluate::may_apply(r, name, server)).cloned().collect();
        if cache.len() >= MAX_NAMES {
            cache.clear();
        }
        let entry = (server.map(String::from), applicable.clone());
        cache.entry(name.to_string()).or_default().push(entry);
        applicable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decide(
        engine: &PolicyEngine,
        name: &str,
        args: serde_json::Value,
        mode: ApprovalMode,
    ) -> Verdict {
        engine.check(
            &PolicyCall {
                name,
                args: &args,
                server_name: None,
                annotations: None,
                canonical: None,
            },
            mode,
        )
    }

    #[test]
    fn bundled_defaults_load_without_errors() {
        let l = default_rules();
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        assert!(l.rules.len() > 30);
    }

    /// The rules `build.rs` made of the bundled files are the files, read the way a user's
    /// policy file is (problems included: there must be none).
    #[test]
    fn bundled_rules_are_the_toml_files() {
        let from_toml: Vec<Rule> = DEFAULT_POLICY_FILES
            .iter()
            .flat_map(|(name, text)| {
                let loaded = toml::load_str(text, Tier::Default, name, None);
                assert!(loaded.errors.is_empty(), "{name}: {:?}", loaded.errors);
                loaded.rules
            })
            .collect();
        assert_eq!(default_rules().rules, from_toml);
        let written: usize =
            DEFAULT_POLICY_FILES.iter().map(|(_, t)| t.matches("[[rule]]").count()).sum();
        assert_eq!(written, 32, "every [[rule]] of the files");
    }

    /// Bundled patterns skip the load-time checks (`ArgsPattern::bundled`): every one of them
    /// must pass those checks and compile.
    #[test]
    fn bundled_patterns_pass_the_checks() {
        let patterns: Vec<ArgsPattern> =
            default_rules().rules.into_iter().filter_map(|r| r.args_pattern).collect();
        assert!(patterns.len() >= 10, "{}", patterns.len());
        for p in &patterns {
            let checked = ArgsPattern::new(p.source());
            assert!(checked.is_ok(), "{}: {checked:?}", p.source());
            // Compiles: a pattern that does not is taken as a match by a deny rule and as no
            // match by an allow rule, so the two answers differ.
            assert_eq!(p.matches_or("", true), p.matches_or("", false), "{}", p.source());
        }
        assert!(ArgsPattern::new("(a+)+").is_err() && ArgsPattern::bundled("(a+)+").is_ok());
    }

    /// The per-tool rule lists give the same verdicts as all the rules, for plain, aliased,
    /// wildcard and MCP names, and follow rules added later.
    #[test]
    fn rules_by_tool_decide_as_all_rules() {
        let mut extra = vec![
            Rule::new("mcp_fs_*", Decision::Deny, 2.5, "test"),
            Rule::new("discovered_tool_*", Decision::Allow, 2.4, "test"),
            Rule::new("*", Decision::AskUser, 1.01, "test"),
        ];
        let mut scoped = Rule::new("read", Decision::Allow, 2.6, "test");
        scoped.mcp_name = Some("fs".into());
        extra.push(scoped);
        let mut rules = default_rules().rules;
        rules.extend(extra);
        let engine = PolicyEngine::new(rules, true);
        let calls = [
            ("read_file", None),
            ("read_file", None),
            ("search_file_content", None),
            ("grep_search", None),
            ("run_shell_command", None),
            ("discovered_tool_x", None),
            ("mcp_fs_read", Some("fs")),
            ("mcp_fs_write", Some("fs")),
            ("mcp_fs_write", None),
            ("mcp_other_read", Some("other")),
            ("nothing_like_it", None),
        ];
        let check = |engine: &PolicyEngine| {
            for mode in [ApprovalMode::Default, ApprovalMode::Plan, ApprovalMode::Yolo] {
                for (name, server) in calls {
                    let args = json!({"command": "ls", "file_path": "a"});
                    let call = PolicyCall {
                        name,
                        args: &args,
                        server_name: server,
                        annotations: None,
                        canonical: None,
                    };
                    let all = engine.rules();
                    let want = evaluate(&call, &all, &engine.context(mode));
                    let got = engine.check(&call, mode);
                    assert_eq!(
                        (got.decision, &got.reason),
                        (want.decision, &want.reason),
                        "{name}"
                    );
                }
            }
        };
        check(&engine);
        assert_eq!(
            decide(&engine, "mcp_fs_read", json!({}), ApprovalMode::Default).decision,
            Decision::Allow
        );
        assert_eq!(
            decide(&engine, "mcp_fs_write", json!({}), ApprovalMode::Default).decision,
            Decision::Deny
        );
        engine.add_rule(Rule::new("nothing_like_it", Decision::Deny, 4.9, "added"));
        check(&engine);
        assert_eq!(
            decide(&engine, "nothing_like_it", json!({}), ApprovalMode::Default).decision,
            Decision::Deny
        );
    }

    #[test]
    fn default_mode_decisions_match_upstream() {
        let i = PolicyEngine::new(default_rules().rules, true);
        let h = PolicyEngine::new(default_rules().rules, false);
        let d = ApprovalMode::Default;
        assert_eq!(decide(&i, "read_file", json!({}), d).decision, Decision::Allow);
        assert_eq!(decide(&h, "list_directory", json!({}), d).decision, Decision::Allow);
        assert_eq!(decide(&i, "write_file", json!({}), d).decision, Decision::AskUser);
        let v = decide(&h, "write_file", json!({}), d);
        assert_eq!(v.decision, Decision::Deny);
        assert_eq!(v.rule.unwrap().source.label, "Default: write.toml");
        assert_eq!(decide(&h, "write_todos", json!({}), d).decision, Decision::Deny);
        assert_eq!(decide(&i, "write_todos", json!({}), d).decision, Decision::AskUser);
        assert_eq!(decide(&h, "ask_user", json!({}), ApprovalMode::Yolo).decision, Decision::Deny);
    }

    #[test]
    fn auto_edit_yolo_and_plan_modes() {
        let h = PolicyEngine::new(default_rules().rules, false);
        let i = PolicyEngine::new(default_rules().rules, true);
        assert_eq!(
            decide(&h, "replace", json!({}), ApprovalMode::AutoEdit).decision,
            Decision::Allow
        );
        assert_eq!(
            decide(&h, "run_shell_command", json!({}), ApprovalMode::AutoEdit).decision,
            Decision::Deny
        );
        assert_eq!(
            decide(&h, "run_shell_command", json!({}), ApprovalMode::Yolo).decision,
            Decision::Allow
        );
        assert_eq!(
            decide(&i, "ask_user", json!({}), ApprovalMode::Yolo).decision,
            Decision::AskUser
        );
        assert_eq!(
            decide(&i, "enter_plan_mode", json!({}), ApprovalMode::Yolo).decision,
            Decision::Deny
        );
        let v = decide(&h, "run_shell_command", json!({"command": "ls"}), ApprovalMode::Plan);
        assert_eq!(v.decision, Decision::Deny);
        assert_eq!(
            v.rule.unwrap().deny_message.unwrap(),
            "You are in Plan Mode with access to read-only tools. Execution of scripts (including those from skills) is blocked."
        );
        assert_eq!(
            decide(&h, "read_file", json!({}), ApprovalMode::Plan).decision,
            Decision::Allow
        );
        assert_eq!(
            decide(
                &h,
                "write_file",
                json!({"file_path": "plan.md", "content": ""}),
                ApprovalMode::Plan
            )
            .decision,
            Decision::Allow
        );
        assert_eq!(
            decide(&h, "write_file", json!({"file_path": "plans/p-1.md"}), ApprovalMode::Plan)
                .decision,
            Decision::Allow
        );
        let v = decide(&h, "write_file", json!({"file_path": "src/main.rs"}), ApprovalMode::Plan);
        assert_eq!(v.decision, Decision::Deny);
        assert!(
            v.rule
                .unwrap()
                .deny_message
                .unwrap()
                .starts_with("You are in Plan Mode and cannot modify")
        );
        let v = decide(&h, "exit_plan_mode", json!({}), ApprovalMode::Default);
        assert_eq!(
            v.rule.unwrap().deny_message.unwrap(),
            "You are not currently in Plan Mode. Use enter_plan_mode first to design a plan."
        );
        assert_eq!(
            decide(&h, "invoke_agent", json!({"agent_name": "cli_help"}), ApprovalMode::Plan)
                .decision,
            Decision::Allow
        );
    }

    #[test]
    fn higher_tiers_override_defaults_and_session_rules_are_added_in_order() {
        let mut rules = default_rules().rules;
        rules.extend(
            toml::load_str(
                "[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 0\n",
                Tier::User,
                "u.toml",
                None,
            )
            .rules,
        );
        let e = PolicyEngine::new(rules, true);
        let v = decide(&e, "read_file", json!({}), ApprovalMode::Default);
        assert_eq!(v.decision, Decision::Deny, "user tier 4.0 beats default 1.05");
        e.add_rule(Rule::new("read_file", Decision::Allow, 4.95, "Dynamic (Confirmed)"));
        assert_eq!(
            decide(&e, "read_file", json!({}), ApprovalMode::Default).decision,
            Decision::Allow
        );
    }
}
