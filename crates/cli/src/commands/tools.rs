//! `toolbelt tools list|schema`.

use serde_json::{json, Value};

use super::{EXIT_OK, EXIT_USAGE};
use crate::cli::ToolsCommand;
use crate::output::{err_line, out_line};
use crate::session;

pub fn run(cmd: ToolsCommand) -> anyhow::Result<i32> {
    let registry = session::registry()?;
    match cmd {
        ToolsCommand::List { json } => {
            if json {
                let list: Vec<Value> = registry
                    .tools()
                    .map(|t| json!({"name": t.name(), "displayName": t.display_name(), "kind": t.kind().as_str()}))
                    .collect();
                out_line(&serde_json::to_string_pretty(&list)?);
            } else {
                for t in registry.tools() {
                    out_line(&format!(
                        "{:<20} {:<12} {}",
                        t.name(),
                        t.kind().as_str(),
                        t.display_name()
                    ));
                }
            }
            Ok(EXIT_OK)
        }
        ToolsCommand::Schema { tool, model_family } => {
            let family = session::family(model_family);
            match tool {
                None => out_line(&serde_json::to_string_pretty(&registry.declarations(family))?),
                Some(name) => match registry.get(&name) {
                    Some(t) => out_line(&serde_json::to_string_pretty(&t.declaration(family))?),
                    None => {
                        err_line(&format!("toolbelt: {}", registry.not_found_message(&name)));
                        return Ok(EXIT_USAGE);
                    }
                },
            }
            Ok(EXIT_OK)
        }
    }
}
