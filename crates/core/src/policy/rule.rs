//! Policy data: rules, decisions, approval modes, tiers.

use std::path::PathBuf;

use fancy_regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What policy says about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Deny,
    AskUser,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::AskUser => "ask_user",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "allow" => Some(Decision::Allow),
            "deny" => Some(Decision::Deny),
            "ask_user" => Some(Decision::AskUser),
            _ => None,
        }
    }
}

/// Approval modes, least to most permissive: plan < default < auto_edit < yolo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ApprovalMode {
    #[serde(rename = "plan")]
    Plan,
    #[default]
    #[serde(rename = "default")]
    Default,
    #[serde(rename = "autoEdit")]
    AutoEdit,
    #[serde(rename = "yolo")]
    Yolo,
}

impl ApprovalMode {
    /// Accepts the CLI spelling (`auto_edit`) and the TOML one (`autoEdit`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "default" => Some(ApprovalMode::Default),
            "auto_edit" | "autoEdit" => Some(ApprovalMode::AutoEdit),
            "yolo" => Some(ApprovalMode::Yolo),
            "plan" => Some(ApprovalMode::Plan),
            _ => None,
        }
    }

    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Default => "default",
            ApprovalMode::AutoEdit => "autoEdit",
            ApprovalMode::Yolo => "yolo",
            ApprovalMode::Plan => "plan",
        }
    }

    /// This mode and every more permissive one (for "always allow" rules).
    pub fn and_more_permissive(self) -> Vec<ApprovalMode> {
        [ApprovalMode::Plan, ApprovalMode::Default, ApprovalMode::AutoEdit, ApprovalMode::Yolo]
            .into_iter()
            .filter(|m| *m >= self)
            .collect()
    }
}

/// Where rules come from; the tier is the integer part of a rule's final priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Tier {
    Default = 1,
    Extension = 2,
    Workspace = 3,
    User = 4,
    Admin = 5,
}

impl Tier {
    pub fn label(self) -> &'static str {
        match self {
            Tier::Default => "Default",
            Tier::Extension => "Extension",
            Tier::Workspace => "Workspace",
            Tier::User => "User",
            Tier::Admin => "Admin",
        }
    }
}

/// Where a rule was written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleSource {
    /// e.g. `Default: read-only.toml` or `Dynamic (Confirmed)`.
    pub label: String,
    /// The file, when the rule came from one on disk.
    pub file: Option<PathBuf>,
}

/// A compiled `argsPattern`.
#[derive(Clone, Debug)]
pub struct ArgsPattern {
    pub source: String,
    pub regex: Regex,
}

impl PartialEq for ArgsPattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// One policy rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub name: Option<String>,
    /// `*`, an exact name, `mcp_<server>_*`, `mcp_*`, or another `*` wildcard.
    pub tool_name: String,
    pub mcp_name: Option<String>,
    pub subagent: Option<String>,
    pub args_pattern: Option<ArgsPattern>,
    pub tool_annotations: Option<Map<String, Value>>,
    pub decision: Decision,
    /// Final priority: tier + priority/1000.
    pub priority: f64,
    pub modes: Vec<ApprovalMode>,
    pub interactive: Option<bool>,
    pub allow_redirection: bool,
    pub deny_message: Option<String>,
    pub source: RuleSource,
}

impl Rule {
    /// A rule with only a tool name, decision and final priority set.
    pub fn new(tool_name: impl Into<String>, decision: Decision, priority: f64, label: &str) -> Self {
        Self {
            name: None,
            tool_name: tool_name.into(),
            mcp_name: None,
            subagent: None,
            args_pattern: None,
            tool_annotations: None,
            decision,
            priority,
            modes: Vec::new(),
            interactive: None,
            allow_redirection: false,
            deny_message: None,
            source: RuleSource { label: label.to_string(), file: None },
        }
    }

    /// "Always allow" rules sit at x.95.
    pub fn is_always_allow(&self) -> bool {
        ((self.priority.fract() * 1000.0).round() as i64) == 950
    }
}
