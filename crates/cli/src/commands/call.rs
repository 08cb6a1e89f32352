//! `toolbelt call TOOL [ARGS]`: one call through the whole pipeline.

use std::io::IsTerminal;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::scheduler::{CallRequest, CallState, Event, new_call_id};
use toolbelt_core::timings;

use super::{EXIT_OK, EXIT_REFUSED, EXIT_TOOL_FAILED, read_args};
use crate::cli::CallArgs;
use crate::error::{CliError, CliResult};
use crate::output::{err_line, out};
use crate::session;

pub async fn run(args: CallArgs) -> CliResult {
    let call_args = read_args(&args.args).map_err(CliError::usage)?;
    let (timeout, allow_sensitive, pty) = (args.timeout_ms, args.allow_sensitive.clone(), args.pty);
    let mut builder = session::builder(&args.session)
        .model_family(args.model_family)
        .mcp_servers(toolbelt_core::names::is_mcp(&args.tool))
        .configure(move |c| {
            if let Some(t) = timeout {
                c.tool_call_timeout_ms = t;
                c.tool_call_timeout_cap_ms = Some(t);
            }
            c.allow_sensitive_paths.extend(allow_sensitive);
            c.shell_pty |= pty;
        });
    if args.events {
        builder = builder.events(Arc::new(|e: &Event| {
            if let Ok(line) = serde_json::to_string(e) {
                err_line(&line);
            }
        }));
    }
    let session = session::build(builder).await?;
    session.services.keep_background(args.keep_background);
    let scheduler = session.scheduler();
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        super::stop_signal().await;
        on_signal.cancel();
    });
    let request = CallRequest::new(new_call_id(&args.tool), args.tool.clone(), call_args);
    let mut done = scheduler.schedule(vec![request], cancel).await;
    timings::mark("the call");
    let Some(call) = done.pop() else {
        session.shutdown().await;
        return Err(CliError::failed("the scheduler returned no response for the call"));
    };

    if args.json {
        let report = json!({
            "name": args.tool,
            "response": call.response.response_value(),
            "llmContent": call.result.as_ref().map(|r| serde_json::to_value(&r.llm_content).unwrap_or(Value::Null)),
            "returnDisplay": call.result.as_ref().map(|r| r.return_display.clone()),
            "error": call.error.as_ref().map(|e| json!({"type": e.kind.as_str(), "message": e.message})),
            "toolLocations": call.locations,
        });
        crate::output::out_json_line(&report.to_string());
    } else if call.status == CallState::Success {
        // Borrowed: the text can be a million characters. What a file, a command or a server
        // wrote reaches the terminal only shown (an OSC 52 sequence writes the clipboard of
        // the terminal a pipe ends in; issue 35), unless --raw asks for the bytes.
        let text = call.response.function_response.response.output().unwrap_or_default();
        if args.raw {
            crate::output::out_raw(text);
        } else {
            crate::output::out_text(text);
        }
        // A text ends its last line, as a command's output does (issue 49 F9: `call ... | wc -l`
        // and a shell prompt after it); `--raw` gives the bytes exactly, ended only on a terminal.
        let ended = text.is_empty() || text.ends_with('\n');
        if !ended && (!args.raw || std::io::stdout().is_terminal()) {
            out("\n");
        }
    } else if let Some(e) = &call.error {
        err_line(&e.message);
    }
    if let Some(hint) = &call.hint {
        err_line(&format!("toolbelt: hint: {hint}"));
    }
    // The answer first (issue 35: it waited for the MCP servers' shutdown grace), then the
    // clean-up: nothing the call started outlives toolbelt unless --keep-background was given.
    timings::mark("output");
    session.shutdown().await;
    timings::mark("session shutdown");
    Ok(match (call.status, call.refusal) {
        (_, Some(_)) => EXIT_REFUSED,
        (CallState::Success, None) => EXIT_OK,
        _ => EXIT_TOOL_FAILED,
    })
}
