//! `list_background_processes`: this session's background shell processes.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::ToolResult;
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

use super::background::{BackgroundRegistry, Status};

pub const NAME: &str = "list_background_processes";

pub struct ListBackgroundProcesses {
    background: Arc<BackgroundRegistry>,
}

impl ListBackgroundProcesses {
    pub fn new(background: Arc<BackgroundRegistry>) -> Self {
        Self { background }
    }
}

impl Tool for ListBackgroundProcesses {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "List Background Processes"
    }
    fn kind(&self) -> Kind {
        Kind::Read
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/list_background_processes.md")
                .trim_end()
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "wait_for_previous": {"type": "boolean", "description": "Set to true to run this call only after the calls before it in the same turn have finished."}
                }
            }),
        }
    }

    fn build(&self, _params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        Ok(Box::new(ListCall { background: self.background.clone() }))
    }
}

struct ListCall {
    background: Arc<BackgroundRegistry>,
}

#[async_trait]
impl Invocation for ListCall {
    fn description(&self) -> String {
        "Lists all background processes.".into()
    }

    async fn execute(&self, _ctx: ExecContext) -> ToolResult {
        let list = self.background.list();
        if list.is_empty() {
            return ToolResult::text(
                "No background processes found.",
                "No background processes found.",
            );
        }
        let lines: Vec<String> = list
            .iter()
            .map(|p| {
                let mut line = match p.status {
                    Status::Running => format!("- [PID {}] RUNNING: `{}`", p.pid, p.command),
                    Status::Exited(_) => format!("- [PID {}] EXITED: `{}`", p.pid, p.command),
                };
                if let Status::Exited(e) = p.status {
                    if let Some(c) = e.code {
                        line.push_str(&format!(" (Exit Code: {c})"));
                    }
                    if let Some(s) = e.signal {
                        line.push_str(&format!(" (Signal: {s})"));
                    }
                }
                line
            })
            .collect();
        let text = lines.join("\n");
        ToolResult::text(text.clone(), text)
    }
}
