//! `toolbelt policy check TOOL [ARGS]`: the decision and the rule behind it.

use serde_json::json;
use toolbelt_core::policy::{format_priority, PolicyCall};

use super::{read_args, EXIT_OK, EXIT_USAGE};
use crate::cli::PolicyCommand;
use crate::output::{err_line, out_line};
use crate::session;

pub fn run(cmd: PolicyCommand) -> anyhow::Result<i32> {
    let PolicyCommand::Check { tool, args, json, session: s } = cmd;
    let args = match read_args(&args) {
        Ok(v) => v,
        Err(msg) => {
            err_line(&format!("toolbelt: {msg}"));
            return Ok(EXIT_USAGE);
        }
    };
    let config = session::config()?;
    let interactive = session::interactive(&s);
    let mut engine = session::policy(&s, &config, interactive);
    if let Ok(cwd) = std::env::current_dir() {
        engine = engine.with_workspace(std::fs::canonicalize(&cwd).unwrap_or(cwd));
    }
    let mode = session::mode(s.approval_mode);
    let registry = session::registry()?;
    let t = registry.get(&tool);
    let verdict = engine.check(
        &PolicyCall {
            name: &tool,
            args: &args,
            server_name: t.and_then(|t| t.server_name()),
            annotations: t.and_then(|t| t.annotations()),
        },
        mode,
    );
    let rule = verdict.rule.as_ref();
    if json {
        let report = json!({
            "tool": tool,
            "mode": mode.as_str(),
            "interactive": interactive,
            "decision": verdict.decision.as_str(),
            "reason": verdict.reason,
            "rule": rule.map(|r| json!({
                "toolName": r.tool_name,
                "priority": r.priority,
                "source": r.source.label,
                "file": r.source.file.as_ref().map(|f| f.display().to_string()),
                "argsPattern": r.args_pattern.as_ref().map(|p| p.source().to_string()),
                "denyMessage": r.deny_message,
            })),
        });
        out_line(&serde_json::to_string_pretty(&report)?);
    } else {
        out_line(&format!("decision: {}", verdict.decision.as_str()));
        match rule {
            Some(r) => {
                let file = r
                    .source
                    .file
                    .as_ref()
                    .map(|f| format!(" ({})", f.display()))
                    .unwrap_or_default();
                out_line(&format!(
                    "rule: toolName \"{}\", priority {}, from {}{file}",
                    r.tool_name,
                    format_priority(r.priority),
                    r.source.label
                ));
                if let Some(m) = &r.deny_message {
                    out_line(&format!("message: {m}"));
                }
            }
            None => out_line("rule: none (default decision)"),
        }
        out_line(&format!(
            "why: {} [mode {}, {}]",
            verdict.reason,
            mode.as_str(),
            if interactive { "interactive" } else { "non-interactive" }
        ));
    }
    Ok(EXIT_OK)
}
