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
}

/// The session facts rules can depend on.
#[derive(Clone, Copy, Debug)]
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
}
