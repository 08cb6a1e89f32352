//! Gemini CLI's TOML policy format: `[[rule]]` tables in `*.toml` files, loaded as they are.
//! A file that does not parse or break the schema is skipped whole; a rule whose regex is bad is
//! skipped alone. Every problem is reported with the file it came from.

use std::path::{Path, PathBuf};

use toml::Value as Toml;

use super::rule::{ApprovalMode, ArgsPattern, Decision, Rule, RuleSource, Tier};

/// A problem in a policy file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct PolicyFileError {
    /// The file.
    pub file: String,
    /// What is wrong with it.
    pub message: String,
}

/// Rules loaded from some files, and what went wrong on the way.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// The rules that loaded.
    pub rules: Vec<Rule>,
    /// What could not be loaded.
    pub errors: Vec<PolicyFileError>,
}

impl Loaded {
    /// Adds another load's rules and errors.
    pub fn extend(&mut self, other: Loaded) {
        self.rules.extend(other.rules);
        self.errors.extend(other.errors);
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
                    .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
                    .collect();
                v.sort();
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
        return out;
    };
    for f in files {
        let f = std::path::absolute(&f).unwrap_or(f);
        match std::fs::read_to_string(&f) {
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
    PolicyFileError { file: file.display().to_string(), message }
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

/// Parses one file's text. `file_name` labels the rules (`Default: write.toml`).
pub fn load_str(text: &str, tier: Tier, file_name: &str, path: Option<&Path>) -> Loaded {
    let shown = path.map(|p| p.display().to_string()).unwrap_or_else(|| file_name.to_string());
    let mut out = Loaded::default();
    let doc: toml::Table = match toml::from_str(text) {
        Ok(d) => d,
        Err(e) => {
            out.errors
                .push(PolicyFileError { file: shown, message: format!("not valid TOML: {e}") });
            return out;
        }
    };
    let raws = match parse_rules(&doc) {
        Ok(r) => r,
        Err(message) => {
            out.errors.push(PolicyFileError {
                file: shown,
                message: format!("{message}; the whole file was skipped"),
            });
            return out;
        }
    };
    let label = format!("{}: {file_name}", tier.label());
    for (i, raw) in raws.into_iter().enumerate() {
        match compile(raw, tier, &label, path) {
            Ok(rules) => out.rules.extend(rules),
            Err(message) => out.errors.push(PolicyFileError {
                file: shown.clone(),
                message: format!("rule #{}: {message}; the rule was skipped", i + 1),
            }),
        }
    }
    out
}

fn parse_rules(doc: &toml::Table) -> Result<Vec<RawRule>, String> {
    let Some(rules) = doc.get("rule") else { return Ok(Vec::new()) };
    let Toml::Array(rules) = rules else {
        return Err("`rule` must be an array of tables ([[rule]])".into());
    };
    rules
        .iter()
        .enumerate()
        .map(|(i, r)| parse_rule(r).map_err(|m| format!("rule #{}: {m}", i + 1)))
        .collect()
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
    if raw.tool_names.iter().any(String::is_empty) {
        return Err("`toolName` must not be empty".into());
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
        .map(|(p, prefix)| p.map(ArgsPattern::new).transpose().map(|c| (c, prefix)))
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
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_rules_with_tier_priorities_and_arrays() {
        let l = load_str(
            r#"
[[rule]]
toolName = ["glob", "read_file"]
decision = "allow"
priority = 50
unknownKey = "ignored"

[[rule]]
toolName = "replace"
decision = "ask_user"
priority = 10
interactive = true
modes = ["default", "autoEdit"]
deny_message = "old spelling"

[rule.safety_checker]
type = "in-process"
"#,
            Tier::User,
            "mine.toml",
            None,
        );
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        assert_eq!(l.rules.len(), 3);
        assert_eq!(l.rules[0].tool_name, "glob");
        assert!((l.rules[0].priority - 4.05).abs() < 1e-9);
        assert_eq!(l.rules[0].source.label, "User: mine.toml");
        assert_eq!(l.rules[2].modes, vec![ApprovalMode::Default, ApprovalMode::AutoEdit]);
        assert_eq!(l.rules[2].interactive, Some(true));
        assert_eq!(l.rules[2].deny_message.as_deref(), Some("old spelling"));
    }

    #[test]
    fn schema_errors_skip_the_whole_file() {
        for bad in [
            "[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1000\n",
            "[[rule]]\ndecision = \"allow\"\npriority = 1\n",
            "[[rule]]\ntoolName = \"a\"\ndecision = \"maybe\"\npriority = 1\n",
            "[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1\nmodes = [\"sometimes\"]\n",
            "[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\n",
            "this is not toml",
        ] {
            let l = load_str(
                &format!("[[rule]]\ntoolName = \"ok\"\ndecision = \"allow\"\npriority = 1\n{bad}"),
                Tier::User,
                "f.toml",
                None,
            );
            assert!(l.rules.is_empty(), "{bad}");
            assert_eq!(l.errors.len(), 1, "{bad}");
            assert!(l.errors[0].to_string().starts_with("f.toml: "), "{}", l.errors[0]);
        }
    }

    #[test]
    fn bad_regex_skips_only_that_rule() {
        let l = load_str(
            "[[rule]]\ntoolName = \"a\"\ndecision = \"deny\"\npriority = 1\nargsPattern = \"(unclosed\"\n\n[[rule]]\ntoolName = \"b\"\ndecision = \"deny\"\npriority = 1\nargsPattern = \"(a+)+\"\n\n[[rule]]\ntoolName = \"c\"\ndecision = \"deny\"\npriority = 1\n",
            Tier::User,
            "f.toml",
            None,
        );
        assert_eq!(l.rules.len(), 1);
        assert_eq!(l.rules[0].tool_name, "c");
        assert_eq!(l.errors.len(), 2);
        assert!(l.errors[1].message.contains("nested quantifiers"));
    }

    #[test]
    fn mcp_names_qualify_tool_names() {
        let l = load_str(
            "[[rule]]\nmcpName = \"gh\"\ntoolName = [\"*\", \"issues\"]\ndecision = \"allow\"\npriority = 5\n\n[[rule]]\nmcpName = \"*\"\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 4\n",
            Tier::Admin,
            "m.toml",
            None,
        );
        let names: Vec<_> = l.rules.iter().map(|r| r.tool_name.as_str()).collect();
        assert_eq!(names, ["mcp_gh_*", "mcp_gh_issues", "mcp_*"]);
        assert!((l.rules[0].priority - 5.005).abs() < 1e-9);
    }

    #[test]
    fn saved_rules_load_back_at_the_same_strength() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("policies/auto-saved.toml");
        let mut r = Rule::new("write_file", Decision::Allow, 4.95, "Dynamic (Confirmed)");
        r.args_pattern = Some(ArgsPattern::new("\\x00\"file_path\":\"a\\.txt\"\\x00").unwrap());
        r.modes = vec![ApprovalMode::Default, ApprovalMode::AutoEdit];
        crate::policy::saved::save(&f, &r).unwrap();
        crate::policy::saved::save(&f, &Rule::new("glob", Decision::Allow, 4.95, "x")).unwrap();
        let l = load_path(&f, Tier::User);
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        assert_eq!(l.rules.len(), 2);
        assert!((l.rules[0].priority - 4.95).abs() < 1e-9);
        assert_eq!(
            l.rules[0].args_pattern.as_ref().unwrap().source(),
            r.args_pattern.as_ref().unwrap().source()
        );
        assert_eq!(l.rules[0].modes, r.modes);
    }

    #[test]
    fn command_prefix_matches_on_word_boundaries() {
        let l = load_str(
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"git status\", \"ls\"]\ndecision = \"allow\"\npriority = 1\n",
            Tier::User,
            "s.toml",
            None,
        );
        assert_eq!(l.rules.len(), 2);
        let re = l.rules[0].args_pattern.as_ref().unwrap();
        let s = |cmd: &str| {
            super::super::stringify::stable_stringify(&serde_json::json!({"command": cmd}))
        };
        assert!(re.is_match(&s("git status")));
        assert!(re.is_match(&s("git status --short")));
        assert!(!re.is_match(&s("git statusx")));
        let ls = l.rules[1].args_pattern.as_ref().unwrap();
        assert!(ls.is_match(&s("ls -la")));
        assert!(!ls.is_match(&s("lsblk")));
    }
}
