use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolbelt_core::response;
use toolbelt_core::tool::ExecContext;
use toolbelt_core::{ModelFamily, Registry, ToolEnv, ToolResult};
use toolbelt_test_support::TempTree;

pub struct Outcome {
    /// What the model receives: `{"output": ...}` or `{"error": ...}`.
    pub model: Value,
    pub result: Option<ToolResult>,
    pub error_type: Option<String>,
}

impl Outcome {
    pub fn output(&self) -> &str {
        self.model["output"].as_str().unwrap_or_else(|| panic!("no output in {}", self.model))
    }
    pub fn error(&self) -> &str {
        self.model["error"].as_str().unwrap_or_else(|| panic!("no error in {}", self.model))
    }
    pub fn display(&self) -> Value {
        self.result.as_ref().map(|r| r.return_display.clone()).unwrap_or(Value::Null)
    }
    pub fn result(&self) -> &ToolResult {
        self.result.as_ref().expect("the tool ran")
    }
}

pub fn env_for(tree: &TempTree, extra_roots: &[&std::path::Path]) -> ToolEnv {
    tree.env(extra_roots)
}

pub fn run(tree: &TempTree, tool: &str, args: Value) -> Outcome {
    run_in(&env_for(tree, &[]), tool, args)
}

pub fn run_in(env: &ToolEnv, tool: &str, args: Value) -> Outcome {
    run_with_token(env, tool, args, CancellationToken::new())
}

pub fn run_with_token(env: &ToolEnv, tool: &str, args: Value, token: CancellationToken) -> Outcome {
    Session::new(env.clone()).run_with_token(tool, args, token)
}

/// Calls through one registry: tools that remember (write_todos, update_topic) see the calls
/// before.
pub struct Session {
    registry: Registry,
    env: ToolEnv,
}

impl Session {
    pub fn new(env: ToolEnv) -> Self {
        let registry = Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
        Self { registry, env }
    }

    pub fn run(&self, tool: &str, args: Value) -> Outcome {
        self.run_with_token(tool, args, CancellationToken::new())
    }

    fn run_with_token(&self, tool: &str, args: Value, token: CancellationToken) -> Outcome {
        match self.registry.build_call(tool, args, &self.env) {
            Err(e) => Outcome {
                model: serde_json::json!({ "error": e.message }),
                result: None,
                error_type: Some(
                    serde_json::to_value(e.kind).unwrap().as_str().unwrap().to_string(),
                ),
            },
            Ok(built) => {
                let rt =
                    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                let result = rt.block_on(built.invocation.execute(ExecContext::new("c1", token)));
                let model = match &result.error {
                    Some(e) => serde_json::json!({ "error": e.message }),
                    None => response::success("c1", tool, &result.llm_content, ModelFamily::Legacy)
                        .response_value(),
                };
                let error_type = result.error.as_ref().map(|e| e.kind.as_str());
                Outcome { model, result: Some(result), error_type }
            }
        }
    }
}

/// The model-facing text of a result made of parts (text parts joined by newlines).
pub fn joined(o: &Outcome) -> String {
    o.model["output"].as_str().unwrap_or_default().to_string()
}
