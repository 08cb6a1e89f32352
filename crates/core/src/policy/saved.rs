//! The saved "always allow" rules (`auto-saved.toml`, user tier): written when a person answers
//! "always, and remember", listed with a stable id, and revoked by that id. The file stays in
//! Gemini CLI's policy format; an identical rule is updated in place rather than repeated.

use std::path::Path;

use toml::Value as Toml;

use super::rule::Rule;

/// One saved rule as the file has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedRule {
    /// A short id derived from what the rule matches (stable across runs and edits of other
    /// rules).
    pub id: String,
    /// The tool the approval is for.
    pub tool_name: String,
    /// The MCP server, for MCP tools.
    pub mcp_name: Option<String>,
    /// The shell command prefix it covers.
    pub command_prefix: Option<String>,
    /// The argument pattern it covers.
    pub args_pattern: Option<String>,
    /// The approval modes it applies in.
    pub modes: Vec<String>,
    /// Whether shell redirection is allowed.
    pub allow_redirection: bool,
}

impl SavedRule {
    /// What the rule allows, in words.
    pub fn summary(&self) -> String {
        let tool = match &self.mcp_name {
            Some(m) => crate::names::mcp_tool(m, &self.tool_name),
            None => self.tool_name.clone(),
        };
        let what = match (&self.command_prefix, &self.args_pattern) {
            (Some(p), _) => format!("{tool} for {}", super::grant::covers(std::slice::from_ref(p))),
            (None, Some(a)) => format!("{tool} where the arguments match /{a}/"),
            (None, None) => format!("{tool} with any arguments"),
        };
        let mut extra = Vec::new();
        if self.allow_redirection {
            extra.push("redirection allowed".to_string());
        }
        if !self.modes.is_empty() {
            extra.push(format!("modes {}", self.modes.join(", ")));
        }
        if extra.is_empty() { what } else { format!("{what} ({})", extra.join("; ")) }
    }
}

fn id_for(tool: &str, mcp: Option<&str>, prefix: Option<&str>, pattern: Option<&str>) -> String {
    // FNV-1a of the parts, each followed by a NUL, shown as 8 hex digits.
    let parts = [tool, mcp.unwrap_or(""), prefix.unwrap_or(""), pattern.unwrap_or("")];
    let h = crate::files::fnv1a(parts.iter().flat_map(|p| p.bytes().chain([0u8])));
    format!("{:08x}", (h >> 32) as u32)
}

/// The file split into its preamble and one text chunk per `[[rule]]`.
fn chunks(text: &str) -> (String, Vec<String>) {
    let mut pre = String::new();
    let mut out: Vec<String> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.trim() == "[[rule]]" {
            out.push(String::new());
        }
        match out.last_mut() {
            Some(c) => c.push_str(line),
            None => pre.push_str(line),
        }
    }
    (pre, out)
}

fn parse_chunk(chunk: &str) -> Option<SavedRule> {
    let doc: toml::Table = toml::from_str(chunk).ok()?;
    let t = doc.get("rule")?.as_array()?.first()?.as_table()?;
    let s = |k: &str| t.get(k).and_then(Toml::as_str).map(String::from);
    let tool_name = s("toolName")?;
    let command_prefix = s("commandPrefix");
    let args_pattern = s("argsPattern");
    let mcp_name = s("mcpName");
    Some(SavedRule {
        id: id_for(
            &tool_name,
            mcp_name.as_deref(),
            command_prefix.as_deref(),
            args_pattern.as_deref(),
        ),
        modes: t
            .get("modes")
            .and_then(Toml::as_array)
            .map(|a| a.iter().filter_map(|m| m.as_str().map(String::from)).collect())
            .unwrap_or_default(),
        allow_redirection: t.get("allowRedirection").and_then(Toml::as_bool).unwrap_or(false),
        tool_name,
        mcp_name,
        command_prefix,
        args_pattern,
    })
}

/// The saved rules of `file` (missing file: none). Chunks that do not parse are skipped here;
/// the policy loader reports them.
pub fn list(file: &Path) -> std::io::Result<Vec<SavedRule>> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(chunks(&text).1.iter().filter_map(|c| parse_chunk(c)).collect())
}

/// Removes the rule with `id`; returns it, or `None` when no saved rule has that id.
pub fn revoke(file: &Path, id: &str) -> std::io::Result<Option<SavedRule>> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let (pre, cs) = chunks(&text);
    let mut removed = None;
    let mut out = pre;
    for c in cs {
        match parse_chunk(&c) {
            Some(r) if r.id == id && removed.is_none() => removed = Some(r),
            _ => out.push_str(&c),
        }
    }
    if removed.is_some() {
        crate::files::replace_file(file, out.as_bytes())?;
    }
    Ok(removed)
}

fn render(rule: &Rule, tool: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut text = String::from("[[rule]]\n");
    text.push_str(&format!("toolName = {}\n", q(tool)));
    if let Some(m) = &rule.mcp_name {
        text.push_str(&format!("mcpName = {}\n", q(m)));
    }
    match (&rule.command_prefix, &rule.args_pattern) {
        (Some(p), _) => text.push_str(&format!("commandPrefix = {}\n", q(p))),
        (None, Some(p)) => text.push_str(&format!("argsPattern = {}\n", q(p.source()))),
        (None, None) => {}
    }
    text.push_str("decision = \"allow\"\n");
    text.push_str(&format!(
        "priority = {}\n",
        ((rule.priority.fract() * 1000.0).round() as i64).clamp(0, 999)
    ));
    if !rule.modes.is_empty() {
        let modes: Vec<String> = rule.modes.iter().map(|m| q(m.as_str())).collect();
        text.push_str(&format!("modes = [{}]\n", modes.join(", ")));
    }
    if rule.allow_redirection {
        text.push_str("allowRedirection = true\n");
    }
    text
}

/// Saves an "always allow" rule: appended, or — when a rule matching the same thing is already
/// saved — updated in place (modes and redirection), as upstream. Written atomically. The
/// priority is stored as the tier fraction (x.95 -> 950), so it loads back at the same strength
/// in the user tier.
pub fn save(file: &Path, rule: &Rule) -> std::io::Result<()> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let tool = match &rule.mcp_name {
        Some(m) => rule
            .tool_name
            .strip_prefix(&crate::names::mcp_tool(m, ""))
            .unwrap_or(&rule.tool_name)
            .to_string(),
        None => rule.tool_name.clone(),
    };
    let pattern = if rule.command_prefix.is_some() {
        None
    } else {
        rule.args_pattern.as_ref().map(|p| p.source())
    };
    let id = id_for(&tool, rule.mcp_name.as_deref(), rule.command_prefix.as_deref(), pattern);
    let (pre, cs) = chunks(&text);
    let mut out = pre;
    let mut replaced = false;
    for c in cs {
        if !replaced && parse_chunk(&c).is_some_and(|r| r.id == id) {
            out.push_str(&render(rule, &tool));
            out.push('\n');
            replaced = true;
        } else {
            out.push_str(&c);
        }
    }
    if !replaced {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
        }
        out.push_str(&render(rule, &tool));
    }
    crate::files::replace_file(file, out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rule::{ApprovalMode, ArgsPattern, Decision, Tier};
    use crate::policy::toml::{command_prefix_pattern, load_path};

    fn shell_rule(prefix: &str, redirect: bool) -> Rule {
        let mut r = Rule::new("run_shell_command", Decision::Allow, 4.95, "Dynamic (Confirmed)");
        r.args_pattern = Some(ArgsPattern::new(command_prefix_pattern(prefix)).unwrap());
        r.command_prefix = Some(prefix.into());
        r.allow_redirection = redirect;
        r.modes = ApprovalMode::Default.and_more_permissive();
        r
    }

    #[test]
    fn saved_rules_load_back_list_update_and_revoke() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("auto-saved.toml");
        std::fs::write(&f, "# my notes\n").unwrap();
        save(&f, &shell_rule("git", false)).unwrap();
        let mut glob = Rule::new("glob", Decision::Allow, 4.95, "x");
        glob.args_pattern = Some(ArgsPattern::new("\\x00\"pattern\":\"\\*\\.rs\"\\x00").unwrap());
        save(&f, &glob).unwrap();
        save(&f, &shell_rule("git", true)).unwrap();
        let rules = list(&f).unwrap();
        assert_eq!(rules.len(), 2, "the second git approval updated the first");
        assert_eq!(rules[0].command_prefix.as_deref(), Some("git"));
        assert!(rules[0].allow_redirection);
        assert_eq!(
            rules[0].summary(),
            "run_shell_command for `git` commands that stay in this workspace (dangerous forms, paths outside, sensitive files and files that decide what runs are still asked) (redirection allowed; modes default, autoEdit, yolo)"
        );
        let loaded = load_path(&f, Tier::User);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(loaded.rules.len(), 2);
        assert!(loaded.rules.iter().all(|r| r.is_always_allow()));
        assert_eq!(loaded.rules[0].command_prefix.as_deref(), Some("git"));

        let id = rules[1].id.clone();
        assert_eq!(revoke(&f, &id).unwrap().unwrap().tool_name, "glob");
        assert_eq!(revoke(&f, &id).unwrap(), None);
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.starts_with("# my notes\n") && !text.contains("glob"), "{text}");
        assert_eq!(list(&f).unwrap().len(), 1);
    }
}
