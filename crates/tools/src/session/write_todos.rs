//! `write_todos`: the model's visible plan for a multi-step request. Each call replaces the list,
//! as upstream; the older `merge: true` form updates the session's last list by `id` instead
//! (issue 19), so the tool remembers the last list it wrote.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::ToolResult;
use toolbelt_core::sync::LockExt;
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

pub const NAME: &str = "write_todos";

const STATUSES: [&str; 5] = ["pending", "in_progress", "completed", "cancelled", "blocked"];

/// The tool, with the last list it wrote (for `merge`).
#[derive(Default)]
pub struct WriteTodos {
    last: std::sync::Arc<std::sync::Mutex<Vec<Todo>>>,
}

#[derive(Clone, Debug, Deserialize)]
struct Todo {
    /// Older form: an id to update by (with `merge`).
    #[serde(default)]
    id: Option<String>,
    description: String,
    status: String,
}

#[derive(Deserialize)]
struct Params {
    todos: Vec<Todo>,
    #[serde(default)]
    merge: bool,
}

/// `update` applied to `last` by id: a known id's item is replaced, anything else appended.
fn merged(last: &[Todo], update: Vec<Todo>) -> Vec<Todo> {
    let mut out = last.to_vec();
    for t in update {
        match t.id.as_ref().and_then(|id| out.iter().position(|o| o.id.as_ref() == Some(id))) {
            Some(i) => out[i] = t,
            None => out.push(t),
        }
    }
    out
}

impl Tool for WriteTodos {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "WriteTodos"
    }
    fn kind(&self) -> Kind {
        Kind::Other
    }

    /// It replaces the session's todo list: a write, but nothing outside the session.
    fn effects(&self) -> toolbelt_core::kind::Effects {
        toolbelt_core::kind::Effects {
            writes: true,
            destroys: false,
            idempotent: true,
            open_world: false,
        }
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/write_todos.md").trim_end().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "description": "The complete list of todo items. This will replace the existing list.",
                        "items": {
                            "type": "object",
                            "description": "A single todo item.",
                            "properties": {
                                "description": {"type": "string", "description": "The description of the task."},
                                "status": {"type": "string", "description": "The current status of the task.", "enum": STATUSES}
                            },
                            "required": ["description", "status"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["todos"],
                "additionalProperties": false
            }),
        }
    }

    fn build(&self, params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        if !params.get("todos").is_some_and(Value::is_array) {
            return Err("`todos` parameter must be an array".into());
        }
        let p: Params = serde_json::from_value(params)
            .map_err(|_| "Each todo item must be an object".to_string())?;
        let todos = if p.merge { merged(&self.last.locked(), p.todos) } else { p.todos };
        for t in &todos {
            if t.description.trim().is_empty() {
                return Err("Each todo must have a non-empty description string".into());
            }
            if !STATUSES.contains(&t.status.as_str()) {
                return Err(format!(
                    "Each todo must have a valid status ({})",
                    STATUSES.join(", ")
                ));
            }
        }
        if todos.iter().filter(|t| t.status == "in_progress").count() > 1 {
            return Err(
                "Invalid parameters: Only one task can be \"in_progress\" at a time.".into()
            );
        }
        Ok(Box::new(WriteTodosCall { todos, last: self.last.clone() }))
    }

    /// The declared schema plus the older `merge` and item `id`.
    fn accepted_parameters(&self) -> Option<Value> {
        let mut schema = toolbelt_core::schema::with_properties(
            self.declaration(ModelFamily::Legacy).parameters,
            &[("merge", json!({"type": "boolean"}))],
        );
        schema["properties"]["todos"]["items"]["properties"]["id"] = json!({"type": "string"});
        Some(schema)
    }
}

struct WriteTodosCall {
    todos: Vec<Todo>,
    last: std::sync::Arc<std::sync::Mutex<Vec<Todo>>>,
}

#[async_trait]
impl Invocation for WriteTodosCall {
    fn description(&self) -> String {
        if self.todos.is_empty() {
            "Cleared todo list".into()
        } else {
            format!("Set {} todo(s)", self.todos.len())
        }
    }

    async fn execute(&self, _ctx: ExecContext) -> ToolResult {
        self.last.locked().clone_from(&self.todos);
        let todos: Vec<Value> = self
            .todos
            .iter()
            .map(|t| json!({"description": t.description, "status": t.status}))
            .collect();
        let llm = if self.todos.is_empty() {
            "Successfully cleared the todo list.".to_string()
        } else {
            let lines: Vec<String> = self
                .todos
                .iter()
                .enumerate()
                .map(|(i, t)| format!("{}. [{}] {}", i + 1, t.status, t.description))
                .collect();
            format!(
                "Successfully updated the todo list. The current list is now:\n{}",
                lines.join("\n")
            )
        };
        ToolResult {
            return_display: json!({"todos": todos}),
            data: Some(json!({"todos": todos})),
            ..ToolResult::text(llm, "")
        }
    }
}
