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
    PolicyFileError { file: file.display().to_string(), line: None, message }
}

/// The keys a `[[rule]]` table may hold (`name` is toolbelt's label; `safety_checker`
/// sub-tables appear in upstream's bundled files, and upstream ignores them too).
const RULE_KEYS: &[&str] = &[
    "name",
    "toolName",
    "mcpName",
    "subagent",
    "argsPattern",
    "commandPrefix",
    "commandRegex",
    "decision",
    "priority",
    "modes",
    "interactive",
    "toolAnnotations",
    "allowRedirection",
    "allow_redirection",
    "denyMessage",
    "deny_message",
    "safety_checker",
];

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

/// Parses one file's text. `file_name` labels the rules (`Default: write.toml`).
pub fn load_str(text: &str, tier: Tier, file_name: &str, path: Option<&Path>) -> Loaded {
    let shown = path.map(|p| p.display().to_string()).unwrap_or_else(|| file_name.to_string());
    let mut out = Loaded::default();
    let problem = |line: Option<usize>, message: String| PolicyFileError {
        file: shown.clone(),
        line,
        message,
    };
    let doc: toml::Table = match toml::from_str(text) {
        Ok(d) => d,
        Err(e) => {
            let line = e.span().map(|s| line_at(text, s.start));
            out.errors.push(problem(line, format!("not valid TOML: {}", e.message())));
            return out;
        }
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

    /// Every problem is reported with its line; the session refuses to start on any (see
    /// `toolbelt_session`), so nothing here is "skipped".
    #[test]
    fn every_problem_is_reported_with_its_line() {
        for (bad, line) in [
            ("[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1000\n", 5),
            ("[[rule]]\ndecision = \"allow\"\npriority = 1\n", 5),
            ("[[rule]]\ntoolName = \"a\"\ndecision = \"maybe\"\npriority = 1\n", 5),
            (
                "[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1\nmodes = [\"sometimes\"]\n",
                5,
            ),
            ("[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\n", 5),
            (
                "[[rule]]\ntoolName = \"a\"\ndecision = \"deny\"\npriority = 1\ntoolname = \"b\"\n",
                5,
            ),
            ("[[safety_checker]]\ntoolName = \"a\"\n", 5),
            ("this is not toml", 5),
        ] {
            let l = load_str(
                &format!("[[rule]]\ntoolName = \"ok\"\ndecision = \"allow\"\npriority = 1\n{bad}"),
                Tier::User,
                "f.toml",
                None,
            );
            assert_eq!(l.errors.len(), 1, "{bad}: {:?}", l.errors);
            assert_eq!(l.errors[0].line, Some(line), "{bad}: {}", l.errors[0]);
            assert!(
                l.errors[0].to_string().starts_with(&format!("f.toml:{line}: ")),
                "{}",
                l.errors[0]
            );
            assert!(!l.errors[0].message.contains("skipped"), "{}", l.errors[0]);
        }
    }

    #[test]
    fn a_misspelled_key_gets_a_suggestion() {
        let l = load_str(
            "[[rule]]\ntoolName = \"read_file\"\nargPattern = \"x\"\ndecision = \"allow\"\npriority = 1\n",
            Tier::User,
            "f.toml",
            None,
        );
        assert_eq!(
            l.errors[0].to_string(),
            "f.toml:1: rule #1: unknown key `argPattern` (did you mean `argsPattern`?)"
        );
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
