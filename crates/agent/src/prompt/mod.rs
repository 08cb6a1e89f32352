//! The system prompt: `system.md` (next to this file, the one place its words live) rendered
//! for a session's mode, model family and tools, then the skills and the context files.
//!
//! `system.md` is Markdown with a few line directives: `@if COND` … `@end` keep a part only
//! when the condition holds, `@comment` lines are dropped, and `{{workspace}}`, `{{os}}` and
//! `{{date}}` are filled in. A person may replace it with `GEMINI_SYSTEM_MD` as in Gemini CLI: a path to
//! their own file, or `true`/`1` for `.gemini/system.md` in the project.

use std::path::{Path, PathBuf};

use toolbelt_core::ModelFamily;
use toolbelt_core::policy::ApprovalMode;

/// toolbelt's own prompt text.
pub const SYSTEM_MD: &str = include_str!("system.md");

/// What a rendering depends on.
#[derive(Clone, Debug)]
pub struct PromptFacts {
    pub family: ModelFamily,
    /// The names of the tools the model is offered.
    pub tools: Vec<String>,
    /// Whether a person can answer during the run (an editor; not a headless `run`).
    pub interactive: bool,
    /// The workspace's folders.
    pub workspace: Vec<PathBuf>,
    /// Whether the project is a git repository.
    pub git: bool,
}

impl PromptFacts {
    /// Facts of a workspace: its folders, and whether the first is in a git repository.
    pub fn of_workspace(
        family: ModelFamily,
        tools: Vec<String>,
        interactive: bool,
        workspace: Vec<PathBuf>,
    ) -> Self {
        let git = workspace.first().is_some_and(|r| r.ancestors().any(|a| a.join(".git").exists()));
        Self { family, tools, interactive, workspace, git }
    }
}

/// The system prompt text: a template (toolbelt's, or the person's own file), the skills
/// section and the context files, rendered per approval mode.
#[derive(Clone, Debug)]
pub struct SystemPrompt {
    template: String,
    facts: PromptFacts,
    skills: Option<String>,
    context: Option<String>,
}

impl SystemPrompt {
    pub fn new(facts: PromptFacts, skills: Option<String>, context: Option<String>) -> Self {
        Self { template: SYSTEM_MD.to_string(), facts, skills, context }
    }

    /// The same with `template` in place of toolbelt's text.
    pub fn with_template(mut self, template: String) -> Self {
        self.template = template;
        self
    }

    /// The context files' text, if any were loaded.
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    /// The same for a model of `family` (an editor switched models).
    #[must_use]
    pub fn for_family(mut self, family: ModelFamily) -> Self {
        self.facts.family = family;
        self
    }

    /// The whole instruction for a model call in `mode`.
    pub fn render(&self, mode: ApprovalMode) -> String {
        let mut s = render(&self.template, mode, &self.facts);
        if let Some(k) = &self.skills {
            s.push_str("\n\n");
            s.push_str(k);
        }
        if let Some(c) = &self.context {
            s.push_str("\n\n# Context files\n\n");
            s.push_str(c);
        }
        s
    }
}

/// The file `GEMINI_SYSTEM_MD` names for the project at `project`, when it names one:
/// `true` or `1` is `.gemini/system.md` in the project, `false`, `0` or empty is none, and
/// anything else is a path (`~/` is the home folder).
pub fn override_file(value: Option<&str>, project: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let v = value?.trim();
    match v.to_ascii_lowercase().as_str() {
        "" | "false" | "0" => None,
        "true" | "1" => Some(project.join(".gemini").join("system.md")),
        _ => match (v.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => Some(h.join(rest)),
            _ => Some(PathBuf::from(v)),
        },
    }
}

/// `template` with its directives applied.
pub fn render(template: &str, mode: ApprovalMode, facts: &PromptFacts) -> String {
    let mut out = String::with_capacity(template.len());
    // Whether each enclosing part is kept.
    let mut kept: Vec<bool> = Vec::new();
    for line in template.lines() {
        let directive = line.trim_start();
        if directive.starts_with("@comment") {
            continue;
        }
        if let Some(cond) = directive.strip_prefix("@if ") {
            kept.push(holds(cond.trim(), mode, facts));
            continue;
        }
        if directive == "@end" {
            kept.pop();
            continue;
        }
        if kept.iter().all(|k| *k) {
            out.push_str(line);
            out.push('\n');
        }
    }
    let workspace =
        facts.workspace.iter().map(|p| format!("- {}", p.display())).collect::<Vec<_>>().join("\n");
    let today = toolbelt_core::hooks::run::timestamp();
    let text = out
        .replace("{{workspace}}", &workspace)
        .replace("{{os}}", std::env::consts::OS)
        .replace("{{date}}", today.get(..10).unwrap_or(&today));
    squeeze_blank_lines(text.trim())
}

/// Whether the condition of an `@if` holds.
fn holds(cond: &str, mode: ApprovalMode, facts: &PromptFacts) -> bool {
    let mode_name = match mode {
        ApprovalMode::Plan => "plan",
        ApprovalMode::Default => "default",
        ApprovalMode::AutoEdit => "autoEdit",
        ApprovalMode::Yolo => "yolo",
    };
    let family = match facts.family {
        ModelFamily::Gemini3 => "gemini-3",
        ModelFamily::Legacy => "legacy",
    };
    if let Some(m) = cond.strip_prefix("mode!=") {
        return m != mode_name;
    }
    if let Some(m) = cond.strip_prefix("mode=") {
        return m == mode_name;
    }
    if let Some(f) = cond.strip_prefix("family=") {
        return f == family;
    }
    if let Some(t) = cond.strip_prefix("tool=") {
        return facts.tools.iter().any(|n| n == t);
    }
    match cond {
        "interactive" => facts.interactive,
        "!interactive" => !facts.interactive,
        "git" => facts.git,
        "!git" => !facts.git,
        // An unknown condition keeps nothing rather than everything.
        _ => false,
    }
}

/// At most one blank line in a row (parts left out leave runs of them).
fn squeeze_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines() {
        let is_blank = line.trim().is_empty();
        if is_blank && blank {
            continue;
        }
        blank = is_blank;
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests;
