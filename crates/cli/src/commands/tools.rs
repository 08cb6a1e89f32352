//! `toolbelt tools list|schema`: the tools of a session (built-in and discovered). `schema`
//! shows what the model is given: tools that policy denies outright are left out, as upstream.

use serde_json::{Value, json};

use super::EXIT_OK;
use crate::cli::ToolsCommand;
use crate::error::{CliError, CliResult};
use crate::output::{out_json_line, out_line};
use crate::session;

pub async fn run(cmd: ToolsCommand) -> CliResult {
    let s = match &cmd {
        ToolsCommand::List { session, .. } | ToolsCommand::Schema { session, .. } => session,
    };
    let session = session::build(session::builder(s).mcp_servers(true)).await?;
    let registry = &session.registry;
    let excluded = session.excluded_tools(session.mode);
    match cmd {
        ToolsCommand::List { json, .. } => {
            if json {
                let list: Vec<Value> = registry
                    .tools()
                    .map(|t| {
                        json!({
                            "name": t.name(),
                            "displayName": t.display_name(),
                            "kind": t.kind().as_str(),
                            "hiddenByPolicy": excluded.contains(t.name()),
                        })
                    })
                    .collect();
                out_json_line(&serde_json::to_string_pretty(&list)?);
            } else {
                let headless = if session.interactive { "" } else { ", headless" };
                let why = format!(
                    "  (hidden: denied by policy in {} mode{headless}; see toolbelt policy check)",
                    session.mode.as_str()
                );
                for t in registry.tools() {
                    let hidden = if excluded.contains(t.name()) { why.as_str() } else { "" };
                    out_line(&format!(
                        "{:<26} {:<12} {}{hidden}",
                        t.name(),
                        t.kind().as_str(),
                        t.display_name()
                    ));
                }
            }
            if let Some(m) = &session.mcp {
                m.shutdown().await;
            }
            Ok(EXIT_OK)
        }
        ToolsCommand::Schema { tool, model_family, all, .. } => {
            let family = model_family;
            match tool {
                None => {
                    let decls: Vec<_> = registry
                        .tools()
                        .filter(|t| all || !excluded.contains(t.name()))
                        .map(|t| t.declaration(family))
                        .collect();
                    out_json_line(&serde_json::to_string_pretty(&decls)?)
                }
                Some(name) => match registry.get(&name) {
                    Some(t) => {
                        out_json_line(&serde_json::to_string_pretty(&t.declaration(family))?)
                    }
                    None => return Err(CliError::usage(registry.not_found_message(&name))),
                },
            }
            if let Some(m) = &session.mcp {
                m.shutdown().await;
            }
            Ok(EXIT_OK)
        }
    }
}
