//! `run_shell_command` where it is not supported yet (Windows): the tool is declared so that the
//! model's call gets a clear answer instead of "tool not found", and it runs nothing.

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

pub const MESSAGE: &str = "run_shell_command is not supported on this platform yet (toolbelt runs shell commands on Linux and macOS). Use the file tools instead.";

pub struct UnsupportedShell;

impl Tool for UnsupportedShell {
    fn name(&self) -> &str {
        "run_shell_command"
    }
    fn display_name(&self) -> &str {
        "Shell"
    }
    fn kind(&self) -> Kind {
        Kind::Execute
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::CommandRoots("command"), enables_auto_edit: false }
    }
    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: "run_shell_command".into(),
            description: MESSAGE.into(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The command."}},
                "required": ["command"]
            }),
        }
    }
    fn build(&self, _params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        Ok(Box::new(Unsupported))
    }
}

struct Unsupported;

#[async_trait]
impl Invocation for Unsupported {
    fn description(&self) -> String {
        "run_shell_command (unsupported here)".into()
    }
    async fn execute(&self, _ctx: ExecContext) -> ToolResult {
        ToolResult::simple_error(ErrorType::ShellExecuteError, MESSAGE)
    }
}
