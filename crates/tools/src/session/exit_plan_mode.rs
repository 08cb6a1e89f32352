//! `exit_plan_mode`: the user approves the plan file (the session then leaves Plan Mode in the
//! mode they chose) or sends it back with feedback.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::approver::Questioner;
use toolbelt_core::policy::ApprovalMode;
use toolbelt_core::result::ToolResult;
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};
use toolbelt_core::workspace::paths;

pub const NAME: &str = "exit_plan_mode";

const APPROVE_DEFAULT: &str = "Approve";
const APPROVE_AUTO_EDIT: &str = "Approve, auto-edit";
const APPROVE_YOLO: &str = "Approve, YOLO";

pub struct ExitPlanMode {
    questioner: Option<Arc<dyn Questioner>>,
}

impl ExitPlanMode {
    pub fn new(questioner: Option<Arc<dyn Questioner>>) -> Self {
        Self { questioner }
    }
}

/// The plan file inside `plans_dir`: an absolute path in it, a path from the project root that
/// lands in it, or a path relative to it; symlinks may not lead out. The folder need not exist.
pub fn resolve(name: &str, root: &Path, plans_dir: &Path) -> Result<PathBuf, String> {
    // As every path the tools take: folded lexically, then symlinks resolved as far as the
    // path exists (the workspace's resolution).
    let real = |base: &Path| paths::robust_realpath(&paths::lexical_resolve(base, Path::new(name)));
    let bases: &[&Path] = if Path::new(name).is_absolute() { &[root] } else { &[root, plans_dir] };
    let real_plans = paths::robust_realpath(plans_dir).unwrap_or_else(|_| plans_dir.to_path_buf());
    bases
        .iter()
        .filter_map(|base| real(base).ok())
        .find(|r| r.starts_with(&real_plans) && *r != real_plans)
        .ok_or_else(|| {
            format!(
                "Access denied: plan path ({name}) must be within the designated plans directory ({}).",
                plans_dir.display()
            )
        })
}

impl Tool for ExitPlanMode {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Exit Plan Mode"
    }
    fn kind(&self) -> Kind {
        Kind::Plan
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/exit_plan_mode.md").trim_end().into(),
            parameters: json!({"type": "object", "required": ["plan_filename"], "properties": {
                "plan_filename": {"type": "string", "description": "The plan's file name in the plans folder, e.g. \"feature-x.md\" (not an absolute path)."}}}),
        }
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let Params { plan_filename } = toolbelt_core::schema::parse_params(params)?;
        let name = plan_filename.trim().to_string();
        if name.is_empty() {
            return Err("plan_filename is required.".into());
        }
        let plans_dir = super::plans_dir(env);
        let path = resolve(&name, env.workspace.primary(), &plans_dir)?;
        Ok(Box::new(ExitCall { name, path, plans_dir, questioner: self.questioner.clone() }))
    }
}

#[derive(serde::Deserialize)]
struct Params {
    plan_filename: String,
}

struct ExitCall {
    name: String,
    path: PathBuf,
    plans_dir: PathBuf,
    questioner: Option<Arc<dyn Questioner>>,
}

fn describe(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::AutoEdit => "Auto-Edit mode (edits will be applied automatically)",
        ApprovalMode::Yolo => "YOLO mode (all tool calls auto-approved)",
        _ => "Default mode (edits will require confirmation)",
    }
}

#[async_trait]
impl Invocation for ExitCall {
    fn description(&self) -> String {
        format!("Requesting plan approval for: {}", self.plans_dir.join(&self.name).display())
    }

    /// It asks its own question where it can (a terminal, `run`); where it cannot (an ACP
    /// editor, an MCP client with elicitation) the scheduler asks the person through the
    /// approver, as for any call (issue 46, G11: in ACP it answered "Plan approved" unasked).
    fn confirms_itself(&self) -> bool {
        self.questioner.is_some()
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let shown = self.path.display().to_string();
        let invalid = |msg: String| ToolResult::text(msg, "Error: Invalid plan");
        let Ok(bytes) = std::fs::read(&self.path) else {
            return invalid(format!(
                "Plan file does not exist: {}. You must create the plan file before requesting approval.",
                self.name
            ));
        };
        let sample = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned();
        if sample.trim_start_matches('\u{feff}').trim().is_empty() {
            return invalid("Plan file is empty. You must write content to the plan file before requesting approval.".into());
        }
        // Nobody to ask (headless): approved, and the session goes back to the mode it was
        // started in. Upstream switches to YOLO; no model action may raise the mode above
        // what the person chose (issue 34, docs/compat.md T4).
        let yolo_disabled = ctx.mode.as_ref().is_some_and(|m| m.yolo_disabled());
        let choice = match &self.questioner {
            None => None,
            Some(q) => {
                let mut options = vec![
                    json!({"label": APPROVE_DEFAULT, "description": "then ask before each edit"}),
                    json!({"label": APPROVE_AUTO_EDIT, "description": "then apply edits without asking"}),
                ];
                if !yolo_disabled {
                    options.push(
                        json!({"label": APPROVE_YOLO, "description": "then allow every tool call"}),
                    );
                }
                let question = json!({
                    "question": format!("Approve the plan in {shown}?"), "header": "Plan", "type": "choice",
                    "options": options,
                    "placeholder": "or type feedback to send the plan back"});
                match q.ask(&[question], &ctx.cancel).await {
                    None => {
                        return ToolResult::text(
                            "User cancelled the plan approval dialog. The plan was not approved and you are still in Plan Mode.",
                            "Cancelled",
                        );
                    }
                    Some(a) => Some(a.get("0").and_then(Value::as_str).unwrap_or("").to_string()),
                }
            }
        };
        let by_person = choice.is_some();
        let choice = choice.unwrap_or_default();
        let mode = match choice.as_str() {
            _ if !by_person => {
                Some(ctx.mode.as_ref().map_or(ApprovalMode::Default, |m| m.model_ceiling()))
            }
            APPROVE_DEFAULT => Some(ApprovalMode::Default),
            APPROVE_AUTO_EDIT => Some(ApprovalMode::AutoEdit),
            APPROVE_YOLO if !yolo_disabled => Some(ApprovalMode::Yolo),
            _ => None,
        };
        match mode {
            Some(m) => {
                let m = match &ctx.mode {
                    Some(h) if by_person => h.set_by_person(m).unwrap_or_else(|_| h.get()),
                    Some(h) => h.set_by_model(m),
                    None => m,
                };
                ToolResult::text(
                    format!(
                        "Plan approved. Switching to {}.\n\nThe approved implementation plan is stored at: {shown}\nRead and follow the plan strictly during implementation.",
                        describe(m)
                    ),
                    format!("Plan approved: {shown}"),
                )
            }
            None if choice.trim().is_empty() => ToolResult::text(
                format!(
                    "Plan rejected. No feedback provided.\n\nThe plan is stored at: {shown}\nAsk the user for specific feedback on how to improve the plan."
                ),
                "Rejected (no feedback)",
            ),
            None => ToolResult::text(
                format!(
                    "Plan rejected. User feedback: {choice}\n\nThe plan is stored at: {shown}\nRevise the plan based on the feedback."
                ),
                format!("Feedback: {choice}"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_paths_stay_in_the_plans_folder_even_before_it_exists() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let plans = root.join(".gemini/tmp/toolbelt/plans");
        assert_eq!(resolve("p.md", &root, &plans).unwrap(), plans.join("p.md"));
        let via_root = resolve(".gemini/tmp/toolbelt/plans/q.md", &root, &plans).unwrap();
        assert_eq!(via_root, plans.join("q.md"));
        for escape in ["x/../../../../../etc/passwd", "../p.md", "/etc/passwd", "."] {
            assert!(resolve(escape, &root, &plans).is_err(), "{escape}");
        }
    }

    /// Issue 46 (G11): without a questioner of its own (ACP), the call does not vouch for a
    /// person's approval: the scheduler asks the editor.
    #[test]
    fn without_a_questioner_the_scheduler_asks() {
        let d = tempfile::tempdir().unwrap();
        let call = |questioner: Option<Arc<dyn Questioner>>| ExitCall {
            name: "p.md".into(),
            path: d.path().join("p.md"),
            plans_dir: d.path().to_path_buf(),
            questioner,
        };
        assert!(!call(None).confirms_itself());
        struct Asks;
        #[async_trait]
        impl Questioner for Asks {
            async fn ask(
                &self,
                _questions: &[Value],
                _cancel: &tokio_util::sync::CancellationToken,
            ) -> Option<serde_json::Map<String, Value>> {
                None
            }
        }
        assert!(call(Some(Arc::new(Asks))).confirms_itself());
    }
}
