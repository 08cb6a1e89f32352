//! `toolbelt policy check|list|revoke|lint`: the decision for a call and the rule behind it; the
//! saved "always allow" rules; every problem in the policy files.

use serde_json::json;
use toolbelt_core::policy::{PolicyCall, format_priority, saved};

use super::{EXIT_OK, EXIT_TOOL_FAILED, read_args};
use crate::cli::PolicyCommand;
use crate::error::{CliError, CliResult};
use crate::output::{err_line, out_json_line, out_line};
use crate::session;

pub async fn run(cmd: PolicyCommand) -> CliResult {
    match cmd {
        PolicyCommand::Check { tool, args, json, session } => {
            check(tool, args, json, session).await
        }
        PolicyCommand::List { all, json, session } => list(all, json, session).await,
        PolicyCommand::Revoke { id } => revoke(&id),
        PolicyCommand::Lint { paths, roots, json } => lint(&paths, &roots, json),
    }
}

fn lint(paths: &[std::path::PathBuf], roots: &[std::path::PathBuf], json: bool) -> CliResult {
    let sources = toolbelt_session::SettingsSources::default();
    let report = toolbelt_session::lint::lint(&sources, roots, paths)?;
    let code = if report.problems.is_empty() { EXIT_OK } else { super::EXIT_USAGE };
    if json {
        let item = |e: &toolbelt_core::policy::PolicyFileError| json!({"file": e.file, "line": e.line, "message": e.message});
        out_json_line(&serde_json::to_string_pretty(&json!({
            "ok": report.problems.is_empty(),
            "rules": report.rules,
            "problems": report.problems.iter().map(item).collect::<Vec<_>>(),
            "notices": report.notices.iter().map(item).collect::<Vec<_>>(),
        }))?);
        return Ok(code);
    }
    for n in &report.notices {
        out_line(&format!("note: {n}"));
    }
    for p in &report.problems {
        out_line(&p.to_string());
    }
    if report.problems.is_empty() {
        out_line(&format!("ok: {} rules, no problems", report.rules));
    } else {
        out_line(&format!(
            "{} problem(s): a session would not start until they are fixed",
            report.problems.len()
        ));
    }
    Ok(code)
}

fn saved_file() -> std::path::PathBuf {
    toolbelt_core::config::default_home_dir().join("policies").join("auto-saved.toml")
}

async fn list(all: bool, json: bool, s: crate::cli::SessionArgs) -> CliResult {
    if all {
        let session = session::build(session::builder(&s)).await?;
        let rules = session.policy.rules();
        if json {
            let v: Vec<_> = rules
                .iter()
                .map(|r| {
                    json!({
                        "toolName": r.tool_name, "decision": r.decision.as_str(), "priority": r.priority,
                        "source": r.source.label, "commandPrefix": r.command_prefix,
                        "argsPattern": r.args_pattern.as_ref().map(|p| p.source().to_string()),
                        "modes": r.modes.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
                    })
                })
                .collect();
            out_json_line(&serde_json::to_string_pretty(&v)?);
        } else {
            for r in &rules {
                let what = match (&r.command_prefix, &r.args_pattern) {
                    (Some(p), _) => format!(" commandPrefix {p:?}"),
                    (None, Some(a)) => format!(" argsPattern /{}/", a.source()),
                    _ => String::new(),
                };
                out_line(&format!(
                    "{:<8} {:<9} {:<22}{what}  [{}]",
                    format_priority(r.priority),
                    r.decision.as_str(),
                    r.tool_name,
                    r.source.label
                ));
            }
        }
        return Ok(EXIT_OK);
    }
    let file = saved_file();
    let rules = saved::list(&file).map_err(CliError::failed)?;
    if json {
        let v: Vec<_> = rules
            .iter()
            .map(|r| json!({"id": r.id, "toolName": r.tool_name, "mcpName": r.mcp_name, "commandPrefix": r.command_prefix, "argsPattern": r.args_pattern, "modes": r.modes, "allowRedirection": r.allow_redirection}))
            .collect();
        out_json_line(&serde_json::to_string_pretty(
            &json!({"file": file.display().to_string(), "rules": v}),
        )?);
    } else if rules.is_empty() {
        out_line(&format!("No saved approvals ({}).", file.display()));
    } else {
        for r in &rules {
            out_line(&format!("{}  {}", r.id, r.summary()));
        }
        out_line(&format!("({}; remove one with `toolbelt policy revoke ID`)", file.display()));
    }
    Ok(EXIT_OK)
}

fn revoke(id: &str) -> CliResult {
    let file = saved_file();
    match saved::revoke(&file, id).map_err(CliError::failed)? {
        Some(r) => {
            out_line(&format!("Revoked {}: {}", r.id, r.summary()));
            Ok(EXIT_OK)
        }
        None => {
            err_line(&format!(
                "toolbelt: no saved approval has the id {id:?} (see `toolbelt policy list`)"
            ));
            Ok(EXIT_TOOL_FAILED)
        }
    }
}

async fn check(tool: String, args: String, json: bool, s: crate::cli::SessionArgs) -> CliResult {
    let args = read_args(&args).map_err(CliError::usage)?;
    let builder = session::builder(&s).mcp_servers(toolbelt_core::names::is_mcp(&tool));
    let session = session::build(builder).await?;
    let interactive = session.interactive;
    let engine = &session.policy;
    let mode = session.mode;
    let registry = session.registry.clone();
    let t = registry.get(&tool);
    let call = PolicyCall {
        name: &tool,
        args: &args,
        server_name: t.and_then(|t| t.server_name()),
        annotations: t.and_then(|t| t.annotations()),
        canonical: t.and_then(|t| t.canonical_name()),
    };
    // The answer the real call gets (issue 46, G13: `cat .env` said "allow" here and asked
    // there): the file layer judges the paths, and a write to a file that decides what runs
    // asks, as the scheduler does.
    let env = session.env();
    #[cfg(unix)]
    let files: Option<&dyn toolbelt_core::shell::safety::ReadJudge> = Some(&*env.workspace);
    #[cfg(not(unix))]
    let files = None;
    let mut verdict = engine.check_in(&call, mode, files);
    let control = t
        .and_then(|t| t.build(args.clone(), &env).ok())
        .and_then(|inv| inv.writes().iter().find_map(|w| env.workspace.control_file(w)));
    if let Some(why) = control.filter(|_| {
        mode != toolbelt_core::policy::ApprovalMode::Yolo
            && verdict.decision == toolbelt_core::policy::Decision::Allow
    }) {
        // Nobody to ask: the scheduler refuses it.
        let (decision, word) = if interactive {
            (toolbelt_core::policy::Decision::AskUser, "ask_user")
        } else {
            (toolbelt_core::policy::Decision::Deny, "deny")
        };
        verdict.decision = decision;
        verdict.reason = format!(
            "{}; {word} because it would change a file that decides what runs: {why}",
            verdict.reason
        );
    }
    let rule = verdict.rule.as_ref();
    // A tool that does not exist is "not found" for the model, whatever policy says of it.
    let unknown = t.is_none().then(|| registry.not_found_message(&tool));
    let hint =
        (verdict.decision != toolbelt_core::policy::Decision::Allow && t.is_some()).then(|| {
            let auto_edit = t.is_some_and(|t| {
                t.build(args.clone(), &session.env()).is_ok_and(|inv| inv.respects_auto_edit())
            });
            engine.refusal_hint(&call, &verdict, mode, auto_edit)
        });
    if json {
        let report = json!({
            "tool": tool,
            "mode": mode.as_str(),
            "interactive": interactive,
            "decision": verdict.decision.as_str(),
            "reason": verdict.reason,
            "unknownTool": unknown,
            "hint": hint,
            "rule": rule.map(|r| json!({
                "toolName": r.tool_name,
                "priority": r.priority,
                "source": r.source.label,
                "file": r.source.file.as_ref().map(|f| f.display().to_string()),
                "argsPattern": r.args_pattern.as_ref().map(|p| p.source().to_string()),
                "denyMessage": r.deny_message,
            })),
        });
        out_json_line(&serde_json::to_string_pretty(&report)?);
    } else {
        if let Some(u) = &unknown {
            out_line(&format!("unknown tool: {u}"));
        }
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
        if let Some(h) = &hint {
            out_line(&format!("to allow it: {h}"));
        }
    }
    if let Some(m) = &session.mcp {
        m.shutdown().await;
    }
    Ok(EXIT_OK)
}
