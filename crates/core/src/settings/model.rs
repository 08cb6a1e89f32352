//! The known keys: their types (checked when a file loads) and the typed views the engine uses.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::get_path;
use crate::config::Config;

#[derive(Clone, Copy)]
pub(super) enum Ty {
    Strings,
    Str,
    Uint,
    Bool,
    UintMap,
    Servers,
    Hooks,
    StrOrStrings,
    /// `true`/`false`, a command name, or `{enabled, command, allowedPaths, networkAccess}`.
    Sandbox,
}

pub(super) const KEYS: &[(&str, Ty)] = &[
    ("tools.core", Ty::Strings),
    ("tools.allowed", Ty::Strings),
    ("tools.exclude", Ty::Strings),
    ("tools.confirmationRequired", Ty::Strings),
    ("tools.discoveryCommand", Ty::Str),
    ("tools.callCommand", Ty::Str),
    ("tools.discoveryTimeoutMs", Ty::Uint),
    ("tools.callTimeoutMs", Ty::Uint),
    ("tools.truncateToolOutputThreshold", Ty::Uint),
    ("tools.enableToolOutputTruncation", Ty::Bool),
    ("tools.toolCallTimeoutMs", Ty::Uint),
    ("tools.toolTimeoutsMs", Ty::UintMap),
    ("tools.shell.inactivityTimeout", Ty::Uint),
    ("tools.shell.promptIdleMs", Ty::Uint),
    ("tools.shell.enableInteractiveShell", Ty::Bool),
    ("mcpServers", Ty::Servers),
    ("mcp.allowed", Ty::Strings),
    ("mcp.excluded", Ty::Strings),
    ("hooks", Ty::Hooks),
    ("hooksConfig.enabled", Ty::Bool),
    ("hooksConfig.disabled", Ty::Strings),
    ("security.folderTrust.enabled", Ty::Bool),
    ("security.sensitivePaths", Ty::Strings),
    ("security.allowSensitivePaths", Ty::Strings),
    ("context.fileFiltering.respectGitIgnore", Ty::Bool),
    ("context.fileFiltering.respectGeminiIgnore", Ty::Bool),
    ("general.defaultApprovalMode", Ty::Str),
    ("context.includeDirectories", Ty::Strings),
    ("context.fileName", Ty::StrOrStrings),
    ("model.name", Ty::Str),
    ("security.auth.selectedType", Ty::Str),
    ("mcp.autoAllowInHeadless", Ty::Bool),
    ("experimental.directWebFetch", Ty::Bool),
    ("security.environmentVariableRedaction.enabled", Ty::Bool),
    ("security.environmentVariableRedaction.allowed", Ty::Strings),
    ("security.environmentVariableRedaction.blocked", Ty::Strings),
    ("security.disableYoloMode", Ty::Bool),
    ("tools.sandbox", Ty::Sandbox),
    ("tools.sandboxAllowedPaths", Ty::Strings),
    ("tools.sandboxNetworkAccess", Ty::Bool),
    ("tools.sandboxProfile", Ty::Str),
    ("security.toolSandboxing", Ty::Bool),
    ("skills.enabled", Ty::Bool),
    ("skills.disabled", Ty::Strings),
];

type Bad = (String, String);

fn strings(v: &Value, key: &str) -> Result<(), Bad> {
    match v {
        Value::Array(a) if a.iter().all(Value::is_string) => Ok(()),
        _ => Err((key.into(), "must be an array of strings".into())),
    }
}

fn string_map(v: &Value, key: &str) -> Result<(), Bad> {
    match v {
        Value::Object(m) if m.values().all(Value::is_string) => Ok(()),
        _ => Err((key.into(), "must be an object whose values are strings".into())),
    }
}

fn check(v: &Value, ty: Ty, key: &str) -> Result<(), Bad> {
    let bad = |m: &str| Err((key.to_string(), m.to_string()));
    match ty {
        Ty::Strings => strings(v, key),
        Ty::StrOrStrings if v.is_string() => Ok(()),
        Ty::StrOrStrings => {
            strings(v, key).map_err(|(k, _)| (k, "must be a string or an array of strings".into()))
        }
        Ty::Str if v.is_string() => Ok(()),
        Ty::Str => bad("must be a string"),
        Ty::Uint if v.as_u64().is_some() => Ok(()),
        Ty::Uint => bad("must be a whole number, 0 or more"),
        Ty::Sandbox => match v {
            Value::Bool(_) | Value::String(_) => Ok(()),
            Value::Object(o) => {
                let typed = |k: &str, ok: fn(&Value) -> bool| o.get(k).is_none_or(ok);
                if typed("enabled", Value::is_boolean)
                    && typed("command", Value::is_string)
                    && typed("networkAccess", Value::is_boolean)
                    && typed("allowedPaths", |a| {
                        a.as_array().is_some_and(|a| a.iter().all(Value::is_string))
                    })
                {
                    Ok(())
                } else {
                    bad(
                        "must have enabled (true/false), command (a string), allowedPaths (strings), networkAccess (true/false)",
                    )
                }
            }
            _ => bad("must be true, false, a sandbox command or an object"),
        },
        Ty::Bool if v.is_boolean() => Ok(()),
        Ty::Bool => bad("must be true or false"),
        Ty::UintMap => match v {
            Value::Object(m) if m.values().all(|x| x.as_u64().is_some()) => Ok(()),
            _ => bad("must be an object of whole numbers (tool name -> milliseconds)"),
        },
        Ty::Servers => {
            let Value::Object(servers) = v else {
                return bad("must be an object (server name -> definition)");
            };
            for (name, def) in servers {
                let k = format!("{key}.{name}");
                let Value::Object(d) = def else { return Err((k, "must be an object".into())) };
                for (f, ty) in [
                    ("command", Ty::Str),
                    ("cwd", Ty::Str),
                    ("url", Ty::Str),
                    ("httpUrl", Ty::Str),
                    ("type", Ty::Str),
                    ("description", Ty::Str),
                    ("timeout", Ty::Uint),
                    ("trust", Ty::Bool),
                    ("args", Ty::Strings),
                    ("includeTools", Ty::Strings),
                    ("excludeTools", Ty::Strings),
                ] {
                    if let Some(x) = d.get(f) {
                        check(x, ty, &format!("{k}.{f}"))?;
                    }
                }
                for f in ["env", "headers"] {
                    if let Some(x) = d.get(f) {
                        string_map(x, &format!("{k}.{f}"))?;
                    }
                }
                // A misspelled restriction (`excludetools`) would leave the tools it names
                // running: a problem, not a key to ignore.
                for key in d.keys() {
                    let restrictions = ["excludeTools", "includeTools"];
                    if !restrictions.contains(&key.as_str())
                        && let Some(meant) = crate::spelling::did_you_mean(key, restrictions)
                    {
                        return Err((
                            format!("{k}.{key}"),
                            format!(
                                "unknown key (did you mean {meant}?); the restriction would not apply"
                            ),
                        ));
                    }
                }
                if !["command", "url", "httpUrl"].iter().any(|f| d.contains_key(*f)) {
                    return Err((
                        k,
                        "needs \"command\" (stdio), \"httpUrl\" (Streamable HTTP) or \"url\" (SSE)"
                            .into(),
                    ));
                }
            }
            Ok(())
        }
        Ty::Hooks => {
            let Value::Object(events) = v else {
                return bad("must be an object (event name -> list of hook groups)");
            };
            for (event, groups) in events {
                if matches!(event.as_str(), "enabled" | "disabled" | "notifications") {
                    continue; // legacy keys, ignored as upstream
                }
                let k = format!("{key}.{event}");
                let Value::Array(groups) = groups else {
                    return Err((k, "must be an array of hook groups".into()));
                };
                for (i, g) in groups.iter().enumerate() {
                    let gk = format!("{k}[{i}]");
                    let Value::Object(g) = g else {
                        return Err((gk, "must be an object with \"hooks\"".into()));
                    };
                    if let Some(m) = g.get("matcher") {
                        check(m, Ty::Str, &format!("{gk}.matcher"))?;
                    }
                    if let Some(s) = g.get("sequential") {
                        check(s, Ty::Bool, &format!("{gk}.sequential"))?;
                    }
                    let Some(Value::Array(hooks)) = g.get("hooks") else {
                        return Err((format!("{gk}.hooks"), "must be an array of hooks".into()));
                    };
                    for (j, h) in hooks.iter().enumerate() {
                        let hk = format!("{gk}.hooks[{j}]");
                        let Value::Object(h) = h else {
                            return Err((hk, "must be an object".into()));
                        };
                        for (f, ty) in [
                            ("type", Ty::Str),
                            ("command", Ty::Str),
                            ("name", Ty::Str),
                            ("description", Ty::Str),
                            ("timeout", Ty::Uint),
                        ] {
                            if let Some(x) = h.get(f) {
                                check(x, ty, &format!("{hk}.{f}"))?;
                            }
                        }
                        if let Some(x) = h.get("env") {
                            string_map(x, &format!("{hk}.env"))?;
                        }
                        if let Some(x) = h.get("fail")
                            && !matches!(x.as_str(), Some("open" | "closed"))
                        {
                            return Err((
                                format!("{hk}.fail"),
                                "must be \"open\" or \"closed\"".into(),
                            ));
                        }
                    }
                }
            }
            Ok(())
        }
    }
}

/// Checks the known keys of one file.
pub fn validate(map: &Map<String, Value>) -> Result<(), Bad> {
    for (key, ty) in KEYS {
        if let Some(v) = get_path(map, key) {
            check(v, *ty, key)?;
        }
    }
    if let Some(m) = get_path(map, "general.defaultApprovalMode").and_then(Value::as_str)
        && !matches!(m, "default" | "auto_edit" | "autoEdit" | "plan")
    {
        return Err((
            "general.defaultApprovalMode".into(),
            format!(
                "must be \"default\", \"auto_edit\" or \"plan\" (yolo cannot be set in settings), got {m:?}"
            ),
        ));
    }
    Ok(())
}

/// What a hook does when it crashes or times out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailMode {
    /// The call goes on as if the hook had not run (upstream).
    #[default]
    Open,
    /// The call is blocked.
    Closed,
}

/// One command hook.
#[derive(Clone, Debug, PartialEq)]
pub struct HookEntry {
    /// The command (run with `sh -c`).
    pub command: String,
    /// A name for logs and `hooks.disabled`.
    pub name: Option<String>,
    /// How long the hook may run.
    pub timeout_ms: u64,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// What a failing hook means for the call.
    pub fail: FailMode,
}

impl HookEntry {
    /// `name`, else the command (what `hooksConfig.disabled` lists).
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.command)
    }
}

/// Hooks under one matcher.
#[derive(Clone, Debug, PartialEq)]
pub struct HookGroup {
    /// A regular expression on the tool's name (none: every tool).
    pub matcher: Option<String>,
    /// Run the group's hooks one after another.
    pub sequential: bool,
    /// The hooks.
    pub hooks: Vec<HookEntry>,
}

/// The `hooks` settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookSettings {
    /// Whether hooks run at all.
    pub enabled: bool,
    /// Names of hooks that do not run.
    pub disabled: Vec<String>,
    /// Event name -> groups, in settings order.
    pub events: BTreeMap<String, Vec<HookGroup>>,
}

/// An `mcpServers` entry (parsed and validated; used by the MCP client).
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerSettings {
    /// The server's name (its key in `mcpServers`).
    pub name: String,
    /// Its entry as written.
    pub definition: Value,
}

/// The tool-related settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolSettings {
    /// `tools.core`: only these tools (with `tool(args)` narrowing).
    pub core: Option<Vec<String>>,
    /// `tools.allowed`: tools that run without asking.
    pub allowed: Vec<String>,
    /// `tools.exclude`: tools the model never sees.
    pub exclude: Vec<String>,
    /// `tools.confirmationRequired`: tools that always ask.
    pub confirmation_required: Vec<String>,
    /// `tools.discoveryCommand`.
    pub discovery_command: Option<String>,
    /// `tools.callCommand`.
    pub call_command: Option<String>,
    /// How long discovery may take.
    pub discovery_timeout_ms: u64,
    /// `tools.callTimeoutMs`: the deadline of discovered tools' calls.
    pub call_timeout_ms: Option<u64>,
    /// `mcpServers`.
    pub mcp_servers: Vec<McpServerSettings>,
    /// `mcp.allowed`: only these servers start.
    pub mcp_allowed: Vec<String>,
    /// `mcp.excluded`: these servers never start.
    pub mcp_excluded: Vec<String>,
    /// `hooks`.
    pub hooks: HookSettings,
    /// `general.defaultApprovalMode`.
    pub default_approval_mode: Option<String>,
    /// `mcp.autoAllowInHeadless`: headless sessions allow every configured server's tools.
    pub mcp_auto_allow_headless: bool,
    /// `context.includeDirectories`: more workspace roots (`~` and relative paths allowed).
    pub include_directories: Vec<String>,
    /// `context.fileName`: the names of context files (default `GEMINI.md`).
    pub context_file_names: Vec<String>,
    /// `model.name`: the model `toolbelt run` talks to unless a flag or `GEMINI_MODEL` says.
    pub model_name: Option<String>,
    /// `security.auth.selectedType`: how Gemini CLI signs in (`gemini-api-key`, `vertex-ai`,
    /// `oauth-personal`, ...); `vertex-ai` sends the model's requests to Vertex AI.
    pub auth_type: Option<String>,
    /// `skills.enabled` (default true): agent skills are looked for.
    pub skills_enabled: bool,
    /// `skills.disabled`: skills left out by name (any case).
    pub skills_disabled: Vec<String>,
    /// The file that set each of the keys above (dotted key -> file), for naming a rule's
    /// source.
    pub origin: std::collections::BTreeMap<String, std::path::PathBuf>,
}

impl ToolSettings {
    /// The file that set `key` (or one of the keys under it), if any.
    pub fn origin_of(&self, key: &str) -> Option<&std::path::Path> {
        self.origin
            .iter()
            .find(|(k, _)| *k == key || k.starts_with(&format!("{key}.")))
            .map(|(_, p)| p.as_path())
    }
}

/// Discovery runs at start-up; it gets this long unless `tools.discoveryTimeoutMs` says
/// otherwise (upstream: no limit).
pub const DEFAULT_DISCOVERY_TIMEOUT_MS: u64 = 30_000;
/// Upstream's hook timeout.
pub const DEFAULT_HOOK_TIMEOUT_MS: u64 = 60_000;

fn strs(map: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
    get_path(map, key)?
        .as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
}

fn hook_settings(map: &Map<String, Value>) -> HookSettings {
    let mut out = HookSettings {
        enabled: get_path(map, "hooksConfig.enabled").and_then(Value::as_bool).unwrap_or(true),
        disabled: strs(map, "hooksConfig.disabled").unwrap_or_default(),
        events: BTreeMap::new(),
    };
    let Some(Value::Object(events)) = map.get("hooks") else { return out };
    for (event, groups) in events {
        let Some(groups) = groups.as_array() else { continue };
        let parsed: Vec<HookGroup> = groups
            .iter()
            .filter_map(Value::as_object)
            .map(|g| HookGroup {
                matcher: g.get("matcher").and_then(Value::as_str).map(String::from),
                sequential: g.get("sequential").and_then(Value::as_bool).unwrap_or(false),
                hooks: g
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map(|hs| {
                        hs.iter()
                            .filter_map(Value::as_object)
                            // Upstream drops entries that are not command hooks or lack a command.
                            .filter(|h| h.get("type").and_then(Value::as_str) == Some("command"))
                            .filter_map(|h| {
                                Some(HookEntry {
                                    command: h.get("command")?.as_str()?.to_string(),
                                    name: h.get("name").and_then(Value::as_str).map(String::from),
                                    timeout_ms: h
                                        .get("timeout")
                                        .and_then(Value::as_u64)
                                        .unwrap_or(DEFAULT_HOOK_TIMEOUT_MS),
                                    env: h
                                        .get("env")
                                        .and_then(Value::as_object)
                                        .map(|e| {
                                            e.iter()
                                                .filter_map(|(k, v)| {
                                                    Some((k.clone(), v.as_str()?.to_string()))
                                                })
                                                .collect()
                                        })
                                        .unwrap_or_default(),
                                    fail: if h.get("fail").and_then(Value::as_str) == Some("closed")
                                    {
                                        FailMode::Closed
                                    } else {
                                        FailMode::Open
                                    },
                                })
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect();
        out.events.insert(event.clone(), parsed);
    }
    out
}

pub fn tool_settings(map: &Map<String, Value>) -> ToolSettings {
    let s = |k: &str| get_path(map, k).and_then(Value::as_str).map(String::from);
    ToolSettings {
        core: strs(map, "tools.core"),
        allowed: strs(map, "tools.allowed").unwrap_or_default(),
        exclude: strs(map, "tools.exclude").unwrap_or_default(),
        confirmation_required: strs(map, "tools.confirmationRequired").unwrap_or_default(),
        discovery_command: s("tools.discoveryCommand").filter(|c| !c.trim().is_empty()),
        call_command: s("tools.callCommand").filter(|c| !c.trim().is_empty()),
        discovery_timeout_ms: get_path(map, "tools.discoveryTimeoutMs")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_DISCOVERY_TIMEOUT_MS),
        call_timeout_ms: get_path(map, "tools.callTimeoutMs").and_then(Value::as_u64),
        mcp_servers: map
            .get("mcpServers")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| McpServerSettings { name: k.clone(), definition: v.clone() })
                    .collect()
            })
            .unwrap_or_default(),
        mcp_allowed: strs(map, "mcp.allowed").unwrap_or_default(),
        mcp_excluded: strs(map, "mcp.excluded").unwrap_or_default(),
        hooks: hook_settings(map),
        default_approval_mode: s("general.defaultApprovalMode"),
        mcp_auto_allow_headless: get_path(map, "mcp.autoAllowInHeadless")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        origin: std::collections::BTreeMap::new(),
        include_directories: strs(map, "context.includeDirectories").unwrap_or_default(),
        context_file_names: match get_path(map, "context.fileName") {
            Some(Value::String(name)) => vec![name.clone()],
            Some(Value::Array(_)) => strs(map, "context.fileName").unwrap_or_default(),
            _ => vec!["GEMINI.md".to_string()],
        },
        model_name: s("model.name").filter(|m| !m.trim().is_empty()),
        auth_type: s("security.auth.selectedType").filter(|m| !m.trim().is_empty()),
        skills_enabled: get_path(map, "skills.enabled").and_then(Value::as_bool).unwrap_or(true),
        skills_disabled: strs(map, "skills.disabled").unwrap_or_default(),
    }
}

pub fn apply(map: &Map<String, Value>, c: &mut Config) {
    let u = |k: &str| get_path(map, k).and_then(Value::as_u64);
    let b = |k: &str| get_path(map, k).and_then(Value::as_bool);
    if let Some(n) = u("tools.truncateToolOutputThreshold") {
        c.truncate_tool_output_threshold_chars = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if b("tools.enableToolOutputTruncation") == Some(false) {
        c.truncate_tool_output_threshold_chars = 0;
    }
    if let Some(n) = u("tools.toolCallTimeoutMs") {
        c.tool_call_timeout_ms = n;
    }
    if let Some(Value::Object(m)) = get_path(map, "tools.toolTimeoutsMs") {
        for (k, v) in m {
            if let Some(n) = v.as_u64() {
                c.tool_timeouts_ms.insert(k.clone(), n);
            }
        }
    }
    if let Some(secs) = u("tools.shell.inactivityTimeout") {
        c.shell_inactivity_timeout_ms = secs.saturating_mul(1000);
    }
    if let Some(n) = u("tools.shell.promptIdleMs") {
        c.shell_prompt_idle_ms = n;
    }
    if let Some(on) = b("security.environmentVariableRedaction.enabled") {
        c.env_redaction.enabled = on;
    }
    if let Some(names) = strs(map, "security.environmentVariableRedaction.allowed") {
        c.env_redaction.allowed = names;
    }
    if let Some(names) = strs(map, "security.environmentVariableRedaction.blocked") {
        c.env_redaction.blocked = names;
    }
    if let Some(direct) = b("experimental.directWebFetch") {
        c.web_fetch_direct = direct;
    }
    if let Some(p) = b("tools.shell.enableInteractiveShell") {
        c.shell_pty = p;
    }
    // Settings can only add sensitive paths (see `Settings::apply_to`): a project file must not
    // empty the user's list or the defaults.
    if let Some(p) = strs(map, "security.sensitivePaths") {
        for rule in p {
            if !c.sensitive_paths.contains(&rule) {
                c.sensitive_paths.push(rule);
            }
        }
    }
    if let Some(p) = strs(map, "security.allowSensitivePaths") {
        c.allow_sensitive_paths.extend(p);
    }
    if let Some(v) = b("context.fileFiltering.respectGitIgnore") {
        c.respect_git_ignore = v;
    }
    if let Some(v) = b("context.fileFiltering.respectGeminiIgnore") {
        c.respect_gemini_ignore = v;
    }
}
