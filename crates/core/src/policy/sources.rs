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

/// Rules from every tier. Problems are reported in `errors`; the workspace allow rules skipped
/// in an untrusted folder and admin folders others can write are in `notices`.
pub fn load_sources(s: &PolicySources) -> Loaded {
    let mut out = default_rules();
    for dir in &s.admin {
        if dir.exists() {
            if admin_dir_is_safe(dir) {
                out.extend(load_path(dir, Tier::Admin));
            } else {
                out.notices.push(super::PolicyFileError {
                    file: dir.display().to_string(),
                    line: None,
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
                l.notices.push(super::PolicyFileError {
                    file: p.display().to_string(),
                    line: None,
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

/// Upstream's legacy `tool(args)` form (`^([a-zA-Z0-9_-]+)\((.*)\)$`): (name, Some(args)).
pub fn split_call(entry: &str) -> (&str, Option<&str>) {
    if let Some(open) = entry.find('(')
        && entry.ends_with(')')
        && open > 0
        && entry[..open].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return (&entry[..open], Some(&entry[open + 1..entry.len() - 1]));
    }
    (entry, None)
}

/// The shell's canonical name for any of the names settings may use for it.
fn canonical(name: &str) -> &str {
    if names::SHELL_SETTING_NAMES.contains(&name) { names::SHELL_TOOL_NAMES[0] } else { name }
}

/// Builds a session's settings-derived rules, each labelled with its key and file.
struct SettingsRules<'a> {
    t: &'a ToolSettings,
    out: Vec<Rule>,
}

impl SettingsRules<'_> {
    fn push(&mut self, key: &str, tool: &str, decision: Decision, priority: f64) -> &mut Rule {
        let mut r = Rule::new(tool, decision, priority, &format!("Settings ({key})"));
        r.source.file = self.t.origin_of(key).map(Path::to_path_buf);
        let i = self.out.len();
        self.out.push(r);
        &mut self.out[i]
    }

    /// A rule for `run_shell_command` narrowed to commands starting with `prefix`.
    fn shell_prefix(
        &mut self,
        key: &str,
        prefix: &str,
        decision: Decision,
        priority: f64,
    ) -> Option<&mut Rule> {
        let p = ArgsPattern::new(command_prefix_pattern(prefix)).ok()?;
        let r = self.push(key, names::SHELL_TOOL_NAMES[0], decision, priority);
        r.args_pattern = Some(p);
        r.command_prefix = Some(prefix.to_string());
        Some(r)
    }

    /// Upstream's `mapToolsToRules`: plain names allow the tool; `run_shell_command(prefix)`
    /// allows commands starting with the prefix (an empty prefix allows nothing); other
    /// `tool(args)` allow the tool whatever its arguments.
    fn allow_list(&mut self, key: &str, list: &[String], priority: f64, modes: &[ApprovalMode]) {
        let mut narrowed = false;
        for entry in list {
            let (name, args) = split_call(entry);
            let name = canonical(name);
            match args {
                Some(prefix) if name == names::SHELL_TOOL_NAMES[0] => {
                    narrowed = true;
                    if !prefix.is_empty()
                        && let Some(r) = self.shell_prefix(key, prefix, Decision::Allow, priority)
                    {
                        r.modes = modes.to_vec();
                    }
                }
                _ => self.push(key, name, Decision::Allow, priority).modes = modes.to_vec(),
            }
        }
        // Only `tools.allowed` enforces its narrowing itself; `tools.core` has its own deny.
        if narrowed && key == "tools.allowed" {
            let r = self.push(key, names::SHELL_TOOL_NAMES[0], Decision::Deny, priority - 0.01);
            r.modes = modes.to_vec();
            r.name = Some("tools.allowed: only the listed shell commands".into());
        }
    }

    fn mcp_server(
        &mut self,
        key: &str,
        server: &str,
        decision: Decision,
        priority: f64,
    ) -> &mut Rule {
        let tool = if server == "*" {
            names::MCP_WILDCARD.to_string()
        } else {
            names::mcp_server_wildcard(server)
        };
        let r = self.push(key, &tool, decision, priority);
        r.mcp_name = Some(server.to_string());
        r
    }
}

/// Rules derived from settings, at upstream's priorities (policy/config.js
/// `createPolicyEngineConfig`). Two deliberate differences (docs/compat.md P1): a
/// `run_shell_command(prefix)` entry in `tools.exclude` or `tools.confirmationRequired` denies or
/// asks for the commands starting with the prefix (upstream builds a rule for a tool named
/// `run_shell_command(prefix)`, which matches nothing), and another `tool(args)` entry in
/// `tools.exclude` denies the whole tool.
pub fn settings_rules(t: &ToolSettings, interactive: bool) -> Vec<Rule> {
    let not_plan = [ApprovalMode::Default, ApprovalMode::AutoEdit, ApprovalMode::Yolo];
    let mut b = SettingsRules { t, out: Vec::new() };
    for s in &t.mcp_excluded {
        b.mcp_server("mcp.excluded", s, Decision::Deny, 4.9);
    }
    for e in &t.exclude {
        match split_call(e) {
            (name, Some(prefix)) if canonical(name) == names::SHELL_TOOL_NAMES[0] => {
                // White space around the prefix (`run_shell_command(rm )`) would make the
                // restriction match nothing.
                let prefix = prefix.trim();
                if prefix.is_empty() {
                    b.push("tools.exclude", names::SHELL_TOOL_NAMES[0], Decision::Deny, 4.4);
                } else {
                    // A prefix too long for a pattern denies the whole shell (fail closed).
                    if b.shell_prefix("tools.exclude", prefix, Decision::Deny, 4.4).is_none() {
                        b.push("tools.exclude", names::SHELL_TOOL_NAMES[0], Decision::Deny, 4.4);
                    }
                }
            }
            (name, _) => {
                // A class name (`ReadFileTool`) excludes its tool, as upstream's registry does.
                let name = names::tool_of_class(name).unwrap_or(name);
                b.push("tools.exclude", name, Decision::Deny, 4.4);
            }
        }
    }
    if !interactive {
        b.push("headless: ask_user", "ask_user", Decision::Deny, 4.4);
    }
    for e in &t.confirmation_required {
        match split_call(e) {
            (name, Some(prefix)) if canonical(name) == names::SHELL_TOOL_NAMES[0] => {
                let prefix = prefix.trim();
                if !prefix.is_empty() {
                    let key = "tools.confirmationRequired";
                    if b.shell_prefix(key, prefix, Decision::AskUser, 4.35).is_none() {
                        b.push(key, names::SHELL_TOOL_NAMES[0], Decision::AskUser, 4.35);
                    }
                }
            }
            (name, _) => {
                b.push("tools.confirmationRequired", canonical(name), Decision::AskUser, 4.35);
            }
        }
    }
    b.allow_list("tools.allowed", &t.allowed, 4.3, &[]);
    if let Some(core) = &t.core {
        b.allow_list("tools.core", core, 4.25, &not_plan);
        let r = b.push("tools.core", "*", Decision::Deny, 4.24);
        r.modes = not_plan.to_vec();
        r.name = Some("tools.core: only the listed tools".into());
    }
    for s in &t.mcp_servers {
        if s.definition.get("trust").and_then(Value::as_bool) == Some(true) {
            let key = format!("mcpServers.{}.trust", s.name);
            b.mcp_server(&key, &s.name, Decision::Allow, 4.2).modes = not_plan.to_vec();
        }
    }
    for s in &t.mcp_allowed {
        b.mcp_server("mcp.allowed", s, Decision::Allow, 4.1).modes = not_plan.to_vec();
    }
    if !interactive && t.mcp_auto_allow_headless {
        for s in &t.mcp_servers {
            let trusted = s.definition.get("trust").and_then(Value::as_bool) == Some(true);
            if trusted || t.mcp_allowed.iter().any(|a| a == &s.name || a == "*") {
                continue;
            }
            let key = "mcp.autoAllowInHeadless";
            b.mcp_server(key, &s.name, Decision::Allow, 4.1).modes = not_plan.to_vec();
        }
    }
    b.out
}

/// Rules from policy files that name a tool that does not exist but is a likely typo of one that
/// does (`run_shell_comand`): such a deny rule would silently never apply. Upstream only warns.
///
/// With `all_known` (a session, whose registry holds every tool it will have), a name in a
/// settings list (`tools.exclude`, ...) that names no tool at all is a problem too: the entry
/// would do nothing (`run_shell_command (git)`, an empty string).
pub fn misspelled_tools(
    rules: &[Rule],
    known: &[&str],
    all_known: bool,
) -> Vec<super::PolicyFileError> {
    let mut out: Vec<super::PolicyFileError> = Vec::new();
    // Every built-in tool counts as known, also one this session does not offer
    // (google_web_search without a model).
    let mut all: Vec<&str> = known.to_vec();
    all.extend(names::CLASS_NAMES.iter().map(|(_, t)| *t).filter(|t| !known.contains(t)));
    let known = &all[..];
    for r in rules {
        let Some(file) = &r.source.file else { continue };
        let name = r.tool_name.as_str();
        let aliased = names::LEGACY_ALIASES.iter().any(|(old, _)| *old == name);
        if name.contains('*')
            || known.contains(&name)
            || aliased
            || names::SHELL_TOOL_NAMES.contains(&name)
        {
            continue;
        }
        let from_settings = r.source.label.starts_with("Settings (");
        let close = crate::spelling::did_you_mean(name, known.iter().copied());
        let nothing = all_known && from_settings && !names::is_mcp(name);
        let Some(close) = close.or(nothing.then_some("")) else {
            continue;
        };
        if close.is_empty() {
            let key = r.source.label.trim_start_matches("Settings (").trim_end_matches(')');
            let quoted = format!("\"{name}\"");
            out.push(super::PolicyFileError {
                file: file.display().to_string(),
                line: std::fs::read_to_string(file)
                    .ok()
                    .and_then(|t| t.lines().position(|l| l.contains(&quoted)).map(|i| i + 1)),
                message: format!(
                    "{key}: `{name}` names no tool, so the entry does nothing (`toolbelt tools \
                     list` shows the tools)"
                ),
            });
            continue;
        }
        let shown = file.display().to_string();
        if out.iter().any(|e| e.file == shown && e.message.contains(&format!("`{name}`"))) {
            continue;
        }
        let line = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.lines().position(|l| l.contains(name)).map(|i| i + 1));
        out.push(super::PolicyFileError {
            file: shown,
            line,
            message: format!(
                "a rule names the tool `{name}`, which does not exist (did you mean `{close}`?); \
                 as written the rule would never apply"
            ),
        });
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
    /// An MCP tool's name before a clash renamed it (see `Tool::canonical_name`).
    pub canonical: Option<&'a str>,
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
        if !rule_matches_ignoring_args(
            r,
            tool.name,
            tool.server_name,
            tool.annotations,
            tool.canonical,
            ctx,
        ) {
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
#[path = "sources_tests.rs"]
mod tests;
