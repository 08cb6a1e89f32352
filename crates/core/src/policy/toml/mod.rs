//! Gemini CLI's TOML policy format: `[[rule]]` tables in `*.toml` files, loaded as they are.
//! Every problem is reported with its file and line: a file that does not parse, a rule that
//! breaks the schema, a key that is not part of it (a typo such as `argPattern` would otherwise
//! widen an allow rule), a regex that does not compile. A session with any problem does not
//! start (fail closed): part of a user's deny rules must never silently not apply.

use std::path::{Path, PathBuf};

use toml::Value as Toml;

use super::rule::{ApprovalMode, ArgsPattern, Decision, Rule, RuleSource, Tier};

/// A problem in a policy file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct PolicyFileError {
    /// The file.
    pub file: String,
    /// The line of the problem, when known.
    pub line: Option<usize>,
    /// What is wrong with it.
    pub message: String,
}

/// Rules loaded from some files, and what went wrong on the way.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// The rules that loaded.
    pub rules: Vec<Rule>,
    /// What could not be understood: a session with any of these must not start.
    pub errors: Vec<PolicyFileError>,
    /// What was set aside on purpose (allow rules of an untrusted folder, an admin folder
    /// others can write): worth saying, not a reason to stop.
    pub notices: Vec<PolicyFileError>,
}

impl Loaded {
    /// Checks that the patterns of the files' rules together stay within
    /// [`POLICY_PATTERNS_BYTES`](crate::limits::POLICY_PATTERNS_BYTES) compiled (the bundled
    /// ones aside): past it, an error names the file where the total went over.
    pub fn check_pattern_budget(&mut self) {
        let limit = crate::limits::POLICY_PATTERNS_BYTES;
        let mut total = 0u64;
        for r in &self.rules {
            let (Some(file), Some(p)) = (&r.source.file, &r.args_pattern) else { continue };
            total = total.saturating_add(
                crate::limits::pattern_bytes(p.source(), false, false).unwrap_or(0),
            );
            if total > limit {
                self.errors.push(PolicyFileError {
                    file: file.display().to_string(),
                    line: None,
                    message: format!(
                        "the patterns of the policy files (argsPattern, commandRegex, commandPrefix) would need more than {} MiB compiled together, the limit; use fewer or smaller patterns (a class such as \\w counts each of its hundreds of ranges for every repetition)",
                        limit >> 20
                    ),
                });
                return;
            }
        }
    }

    /// Adds another load's rules and errors.
    pub fn extend(&mut self, other: Loaded) {
        self.rules.extend(other.rules);
        self.errors.extend(other.errors);
        self.notices.extend(other.notices);
    }
}

/// Loads a `.toml` file, or every `*.toml` directly inside a folder (sorted by name).
/// A missing path loads nothing.
pub fn load_path(path: &Path, tier: Tier) -> Loaded {
    let mut out = Loaded::default();
    let files: Vec<PathBuf> = if path.is_dir() {
        match std::fs::read_dir(path) {
            Ok(rd) => {
                let mut v: Vec<PathBuf> = rd
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")))
                    .collect();
                v.sort();
                // A `*.toml` that is not a file (a folder, a dangling link) or is spelled
                // `.TOML` holds rules the user meant to apply: a problem, not silence.
                v.retain(|p| {
                    let problem = if p.extension() != Some("toml".as_ref()) {
                        Some("not loaded: policy files must end in `.toml` (lower case)")
                    } else if !p.is_file() {
                        Some("not a file (a folder, or a link to nothing)")
                    } else {
                        None
                    };
                    if let Some(m) = problem {
                        out.errors.push(err(p, m.into()));
                    }
                    problem.is_none()
                });
                v
            }
            Err(e) => {
                out.errors.push(err(path, format!("cannot read folder: {e}")));
                return out;
            }
        }
    } else if path.exists() {
        vec![path.to_path_buf()]
    } else {
        if path.symlink_metadata().is_ok() {
            out.errors.push(err(path, "a link to nothing".into()));
        }
        return out;
    };
    for f in files {
        let f = std::path::absolute(&f).unwrap_or(f);
        // Bounded before it is parsed (issue 47): a TOML parse, like a JSON one, takes many
        // times the text of tiny values.
        match crate::files::read_text_bounded(&f, crate::limits::POLICY_FILE_BYTES) {
            Ok(text) => {
                let name =
                    f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                out.extend(load_str(&text, tier, &name, Some(&f)));
            }
            Err(e) => out.errors.push(err(&f, format!("cannot read: {e}"))),
        }
    }
    out
}

fn err(file: &Path, message: String) -> PolicyFileError {
    PolicyFileError { file: file.display().to_string(), line: None, message }
}

// `RULE_KEYS`, shared with `build.rs` (which reads the bundled files with it).
include!("rule_keys.rs");

/// The line of the `n`th (0-based) `[[rule]]` header.
fn rule_line(text: &str, n: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("[[rule]]"))
        .nth(n)
        .map(|(i, _)| i + 1)
}

/// The line of a byte offset.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A rule as written, before regexes are compiled.
struct RawRule {
    name: Option<String>,
    tool_names: Vec<String>,
    mcp_name: Option<String>,
    subagent: Option<String>,
    args_pattern: Option<String>,
    command_prefix: Option<Vec<String>>,
    command_regex: Option<String>,
    decision: Decision,
    priority: i64,
    modes: Vec<ApprovalMode>,
    interactive: Option<bool>,
    annotations: Option<serde_json::Map<String, serde_json::Value>>,
    allow_redirection: bool,
    deny_message: Option<String>,
}

/// The rules of the bundled default policy files (tier 1), each checked as a file's rules are:
/// `build.rs` wrote them out as [`RawRule`]s, so no TOML is parsed at start (issue 37).
pub(crate) fn bundled_rules() -> Loaded {
    let written: Vec<(&str, RawRule)> = include!(concat!(env!("OUT_DIR"), "/bundled_rules.rs"));
    let mut out = Loaded::default();
    for (file, raw) in written {
        match compile(raw, Tier::Default, &format!("{}: {file}", Tier::Default.label()), None) {
            Ok(rules) => out.rules.extend(rules),
            Err(message) => {
                out.errors.push(PolicyFileError { file: file.into(), line: None, message })
            }
        }
    }
    out
}

/// Parses one file's text. `file_name` labels the rules (`Default: write.toml`).
pub fn load_str(text: &str, tier: Tier, file_name: &str, path: Option<&Path>) -> Loaded {
    match toml::from_str(text) {
        Ok(doc) => load_table(&doc, text, tier, file_name, path),
        Err(e) => {
            let shown =
                path.map(|p| p.display().to_string()).unwrap_or_else(|| file_name.to_string());
            let mut out = Loaded::default();
            out.errors.push(PolicyFileError {
                file: shown,
                line: e.span().map(|s| line_at(text, s.start)),
                message: format!("not valid TOML: {}", e.message()),
            });
            out
        }
    }
}

/// The rules of one file already parsed (`text` is its source, for the line numbers of
/// problems).
pub fn load_table(
    doc: &toml::Table,
    text: &str,
    tier: Tier,
    file_name: &str,
    path: Option<&Path>,
) -> Loaded {
    let shown = path.map(|p| p.display().to_string()).unwrap_or_else(|| file_name.to_string());
    let mut out = Loaded::default();
    let problem = |line: Option<usize>, message: String| PolicyFileError {
        file: shown.clone(),
        line,
        message,
    };
    for key in doc.keys().filter(|k| *k != "rule") {
        let line = text.lines().position(|l| l.contains(key.as_str())).map(|i| i + 1);
        let message = if key == "safety_checker" {
            "`[[safety_checker]]` tables are not supported: toolbelt does not run safety \
             checkers, so this one would not apply. Express it as a deny rule, or move the \
             file out of the policy folder"
                .to_string()
        } else {
            format!("unknown key `{key}`: a policy file holds `[[rule]]` tables")
        };
        out.errors.push(problem(line, message));
    }
    let Some(rules) = doc.get("rule") else { return out };
    let Toml::Array(rules) = rules else {
        out.errors.push(problem(
            rule_line(text, 0),
            "`rule` must be an array of tables ([[rule]])".into(),
        ));
        return out;
    };
    let label = format!("{}: {file_name}", tier.label());
    for (i, raw) in rules.iter().enumerate() {
        let compiled = parse_rule(raw).and_then(|raw| compile(raw, tier, &label, path));
        match compiled {
            Ok(rules) => out.rules.extend(rules),
            Err(message) => {
                out.errors.push(problem(rule_line(text, i), format!("rule #{}: {message}", i + 1)));
            }
        }
    }
    out
}

fn opt_str(t: &toml::Table, key: &str) -> Result<Option<String>, String> {
    match t.get(key) {
        None => Ok(None),
        Some(Toml::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

fn str_or_list(t: &toml::Table, key: &str) -> Result<Option<Vec<String>>, String> {
    match t.get(key) {
        None => Ok(None),
        Some(Toml::String(s)) => Ok(Some(vec![s.clone()])),
        Some(Toml::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(String::from)
                    .ok_or_else(|| format!("`{key}` must be a string or an array of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("`{key}` must be a string or an array of strings")),
    }
}

fn opt_bool(t: &toml::Table, keys: &[&str]) -> Result<Option<bool>, String> {
    for key in keys {
        match t.get(*key) {
            None => continue,
            Some(Toml::Boolean(b)) => return Ok(Some(*b)),
            Some(_) => return Err(format!("`{key}` must be true or false")),
        }
    }
    Ok(None)
}

fn parse_rule(v: &Toml) -> Result<RawRule, String> {
    let Toml::Table(t) = v else { return Err("must be a table".into()) };
    if let Some(key) = t.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
        let hint = crate::spelling::did_you_mean(key, RULE_KEYS.iter().copied())
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        return Err(format!("unknown key `{key}`{hint}"));
    }
    let tool_names =
        str_or_list(t, "toolName")?.ok_or("`toolName` is required (use \"*\" for all tools)")?;
    let decision = match t.get("decision") {
        Some(Toml::String(s)) => Decision::parse(s).ok_or_else(|| {
            format!("`decision` must be \"allow\", \"deny\" or \"ask_user\", got {s:?}")
        })?,
        Some(_) => return Err("`decision` must be a string".into()),
        None => return Err("`decision` is required".into()),
    };
    let priority = match t.get("priority") {
        Some(Toml::Integer(p)) if (0..=999).contains(p) => *p,
        Some(_) => return Err("`priority` must be an integer from 0 to 999".into()),
        None => return Err("`priority` is required".into()),
    };
    let modes = match t.get("modes") {
        None => Vec::new(),
        Some(Toml::Array(a)) => a
            .iter()
            .map(|m| {
                m.as_str()
                    .and_then(|s| match s {
                        "default" | "autoEdit" | "yolo" | "plan" => ApprovalMode::parse(s),
                        _ => None,
                    })
                    .ok_or_else(|| format!("`modes` entries must be \"default\", \"autoEdit\", \"yolo\" or \"plan\", got {m}"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`modes` must be an array".into()),
    };
    let annotations = match t.get("toolAnnotations") {
        None => None,
        Some(Toml::Table(a)) => Some(
            serde_json::to_value(a)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .ok_or("`toolAnnotations` must be a table of simple values")?,
        ),
        Some(_) => return Err("`toolAnnotations` must be a table".into()),
    };
    Ok(RawRule {
        name: opt_str(t, "name")?,
        tool_names,
        mcp_name: opt_str(t, "mcpName")?,
        subagent: opt_str(t, "subagent")?,
        args_pattern: opt_str(t, "argsPattern")?,
        command_prefix: str_or_list(t, "commandPrefix")?,
        command_regex: opt_str(t, "commandRegex")?,
        decision,
        priority,
        modes,
        interactive: opt_bool(t, &["interactive"])?,
        annotations,
        allow_redirection: opt_bool(t, &["allowRedirection", "allow_redirection"])?
            .unwrap_or(false),
        deny_message: match opt_str(t, "denyMessage")? {
            Some(m) => Some(m),
            None => opt_str(t, "deny_message")?,
        },
    })
}

/// The wildcards upstream's engine knows: `*` (also with an `mcpName`), `mcp_*`,
/// `mcp_<server>_*`.
fn upstream_wildcard(tool: &str) -> bool {
    tool == "*"
        || tool == crate::names::MCP_WILDCARD
        || tool
            .strip_prefix(crate::names::MCP_PREFIX)
            .and_then(|r| r.strip_suffix("_*"))
            .is_some_and(|server| !server.is_empty() && !server.contains('*'))
}

/// Upstream's `escapeRegex`.
pub fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if "-[]{}()*+?.,\\^$|#\"".contains(c) || c.is_whitespace() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `commandPrefix = P` matches `"command":"P` followed by whitespace, a quote or an escaped quote.
pub fn command_prefix_pattern(prefix: &str) -> String {
    let encoded = serde_json::to_string(prefix).unwrap_or_else(|_| format!("\"{prefix}\""));
    let open = &encoded[..encoded.len() - 1];
    format!("{}(?:[\\s\"]|\\\\\")", escape_regex(&format!("\"command\":{open}")))
}

fn compile(
    raw: RawRule,
    tier: Tier,
    label: &str,
    path: Option<&Path>,
) -> Result<Vec<Rule>, String> {
    if raw.tool_names.is_empty() || raw.tool_names.iter().any(String::is_empty) {
        return Err("`toolName` must not be empty".into());
    }
    if raw.subagent.as_deref() == Some("") {
        return Err("`subagent` must not be empty".into());
    }
    if let Some(p) = raw.command_prefix.iter().flatten().find(|p| p.trim() != p.as_str()) {
        return Err(format!(
            "`commandPrefix = {p:?}` begins or ends with white space, so it would not match the \
             command it names; write {:?}",
            p.trim()
        ));
    }
    if let Some(t) = raw.tool_names.iter().find(|t| {
        t.contains("__") || t.contains(|c: char| c.is_whitespace() || "|[](){}?/\\".contains(c))
    }) {
        return Err(format!(
            "`toolName = {t:?}` names no tool (tool names hold letters, digits, `_`, `-`, `.`, and \
             `*` as a wildcard; MCP tools are `mcp_<server>_<tool>`, not `<server>__<tool>`)"
        ));
    }
    if raw.command_prefix.as_ref().is_some_and(|p| p.is_empty() || p.iter().any(String::is_empty)) {
        return Err(
            "`commandPrefix` must not be empty (leave it out to match every command)".into()
        );
    }
    let command_keys = raw.command_prefix.is_some() || raw.command_regex.is_some();
    if command_keys
        && raw.tool_names.iter().any(|t| !crate::names::SHELL_TOOL_NAMES.contains(&t.as_str()))
    {
        return Err("`commandPrefix` and `commandRegex` can only be used with toolName = \"run_shell_command\"".into());
    }
    if raw.decision == Decision::Allow
        && let Some(t) = raw.tool_names.iter().find(|t| t.contains('*') && !upstream_wildcard(t))
    {
        return Err(format!(
            "`toolName = \"{t}\"` in an allow rule: Gemini CLI matches only `*`, `mcp_*` and \
             `mcp_<server>_*` as wildcards, so this rule would allow nothing there; name the tools"
        ));
    }
    if raw.mcp_name.as_deref() == Some("") {
        return Err("`mcpName` must not be empty".into());
    }
    let patterns: Vec<(Option<String>, Option<String>)> =
        match (&raw.command_prefix, &raw.command_regex) {
            (Some(prefixes), _) => prefixes
                .iter()
                .map(|p| (Some(command_prefix_pattern(p)), Some(p.clone())))
                .collect(),
            (None, Some(re)) => vec![(Some(format!("\"command\":\"{re}")), None)],
            (None, None) => vec![(raw.args_pattern.clone(), None)],
        };
    let compiled: Vec<(Option<ArgsPattern>, Option<String>)> = patterns
        .into_iter()
        .map(|(p, prefix)| {
            // The bundled files' patterns are checked by a test, not at every start.
            let make = if tier == Tier::Default { ArgsPattern::bundled } else { ArgsPattern::new };
            p.map(make).transpose().map(|c| (c, prefix))
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for tool in &raw.tool_names {
        let tool_name = match raw.mcp_name.as_deref() {
            None => tool.clone(),
            Some("*") if tool == "*" => crate::names::MCP_WILDCARD.to_string(),
            Some(m) => crate::names::mcp_tool(m, tool),
        };
        for (pattern, prefix) in &compiled {
            out.push(Rule {
                command_prefix: prefix.clone(),
                command_regex: raw.command_prefix.is_none() && raw.command_regex.is_some(),
                name: raw.name.clone(),
                tool_name: tool_name.clone(),
                mcp_name: raw.mcp_name.clone(),
                subagent: raw.subagent.clone(),
                args_pattern: pattern.clone(),
                tool_annotations: raw.annotations.clone(),
                decision: raw.decision,
                priority: f64::from(tier as u8) + raw.priority as f64 / 1000.0,
                modes: raw.modes.clone(),
                interactive: raw.interactive,
                allow_redirection: raw.allow_redirection,
                deny_message: raw.deny_message.clone(),
                source: RuleSource { label: label.to_string(), file: path.map(Path::to_path_buf) },
                grant_options: None,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
