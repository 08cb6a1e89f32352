//! `enter_plan_mode`: the session switches to Plan Mode (read-only tools, plus writing plans).

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::policy::ApprovalMode;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv,
};

pub const NAME: &str = "enter_plan_mode";

pub struct EnterPlanMode;

impl Tool for EnterPlanMode {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Enter Plan Mode"
    }
    fn kind(&self) -> Kind {
        Kind::Plan
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/enter_plan_mode.md").trim_end().into(),
            parameters: json!({"type": "object", "properties": {
                "reason": {"type": "string", "description": "Why you are switching to Plan Mode, in a few words."}}}),
        }
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let Params { reason } = toolbelt_core::schema::parse_params(params)?;
        let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty()).map(String::from);
        Ok(Box::new(EnterCall { reason, plans_dir: super::plans_dir(env) }))
    }
}

#[derive(serde::Deserialize)]
struct Params {
    reason: Option<String>,
}

struct EnterCall {
    reason: Option<String>,
    plans_dir: std::path::PathBuf,
}

#[async_trait]
impl Invocation for EnterCall {
    fn description(&self) -> String {
        self.reason.clone().unwrap_or_else(|| "Initiating Plan Mode".into())
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        Some(ConfirmationDetails::Info {
            title: "Enter Plan Mode".into(),
            prompt: "This will restrict the agent to read-only tools to allow for safe planning."
                .into(),
            urls: Vec::new(),
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        if ctx.cancel.is_cancelled() {
            return ToolResult::text("User cancelled entering Plan Mode.", "Cancelled");
        }
        if let Err(e) = std::fs::create_dir_all(&self.plans_dir) {
            return ToolResult::simple_error(
                ErrorType::ExecutionFailed,
                format!("Cannot create the plans folder {}: {e}", self.plans_dir.display()),
            );
        }
        if let Some(m) = &ctx.mode {
            m.set_by_model(ApprovalMode::Plan);
        }
        let display = match &self.reason {
            Some(r) => format!("Switching to Plan mode: {r}"),
            None => "Switching to Plan mode".into(),
        };
        ToolResult::text("Switching to Plan mode.", display)
    }
}
