//! What policy is asked about and what it answers: the call, the session's facts, the verdict.
//! A leaf of the policy module: the evaluator and the shell check both read it.

use std::path::Path;

use serde_json::{Map, Value};

use super::rule::{ApprovalMode, Decision, Rule};

/// The call as policy sees it.
#[derive(Clone, Copy, Debug)]
pub struct PolicyCall<'a> {
    /// The tool's name as the model called it.
    pub name: &'a str,
    /// The call's arguments.
    pub args: &'a Value,
    /// The MCP server of the tool, if it is an MCP tool.
    pub server_name: Option<&'a str>,
    /// The MCP tool's annotations, if any.
    pub annotations: Option<&'a Map<String, Value>>,
    /// An MCP tool's own name, `mcp_<server>_<tool>`, where a clash with another server's tool
    /// renamed the call (`mcp_a_b_x_2`): rules are matched against both (issue 46, G12).
    pub canonical: Option<&'a str>,
}

impl<'a> PolicyCall<'a> {
    /// A call of the built-in tool `name` (no MCP server, annotations or other name).
    pub fn builtin(name: &'a str, args: &'a Value) -> Self {
        PolicyCall { name, args, server_name: None, annotations: None, canonical: None }
    }
}

/// The session facts rules can depend on.
#[derive(Clone, Copy)]
pub struct PolicyContext<'a> {
    /// The session's approval mode.
    pub mode: ApprovalMode,
    /// Whether a person can answer a confirmation.
    pub interactive: bool,
    /// The subagent making the call, if any.
    pub subagent: Option<&'a str>,
    /// Skip "always allow" rules (x.95).
    pub disable_always_allow: bool,
    /// The workspace root shell heuristics measure paths against (default: the process cwd).
    pub workspace: Option<&'a Path>,
    /// Whether the folder is trusted (git commands are asked about in untrusted folders).
    pub trusted_folder: bool,
    /// The file layer's judgement of paths a known-safe command would read (sensitive files,
    /// hard links, links out); `None`: lexical checks only.
    pub files: Option<&'a dyn crate::shell::safety::ReadJudge>,
    /// Whether commands the known-safe table allows run confined (Landlock is here): where
    /// they cannot, the table shrinks (no `git`).
    pub confinable: bool,
    /// The `PATH` command names are looked up in (`None`: the process's own).
    pub search_path: Option<&'a std::ffi::OsStr>,
}

impl std::fmt::Debug for PolicyContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyContext")
            .field("mode", &self.mode)
            .field("interactive", &self.interactive)
            .field("workspace", &self.workspace)
            .field("trusted_folder", &self.trusted_folder)
            .field("files", &self.files.is_some())
            .field("confinable", &self.confinable)
            .finish()
    }
}

impl Default for PolicyContext<'_> {
    fn default() -> Self {
        Self {
            mode: ApprovalMode::Default,
            interactive: true,
            subagent: None,
            disable_always_allow: false,
            workspace: None,
            trusted_folder: true,
            files: None,
            confinable: true,
            search_path: None,
        }
    }
}

/// The decision, the rule that made it (none: the default applied), and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// What was decided.
    pub decision: Decision,
    /// The rule that decided; `None` for the default.
    pub rule: Option<Rule>,
    /// Why, in words.
    pub reason: String,
    /// Allowed only because the known-safe table vouches for the command (no allow rule, no
    /// approval mode, no person): it runs confined, read-only and without network (issue 34).
    pub confine: bool,
}

impl Verdict {
    /// A verdict that is not the known-safe table's.
    pub fn new(decision: Decision, rule: Option<Rule>, reason: String) -> Self {
        Verdict { decision, rule, reason, confine: false }
    }
}
