//! `toolbelt run "PROMPT"`: the headless agent. Exit codes follow Gemini CLI's headless mode:
//! 0 done, 1 the model call failed, 41 no or refused credentials, 42 no prompt, 53 the turn
//! limit was reached, 130 cancelled (Ctrl-C; a second Ctrl-C exits at once).

use std::io::{IsTerminal, Read};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_agent::agent::{Agent, AgentEvent, Finish, RunOutcome};
use toolbelt_agent::client::ModelError;
// Events carry RFC 3339 UTC times with milliseconds, as upstream's do (the hooks' clock).
use toolbelt_core::ModelFamily;
use toolbelt_core::hooks::run::timestamp as now_iso;

use super::{EXIT_OK, EXIT_TOOL_FAILED};
use crate::cli::{OutputFormat, RunArgs};
use crate::error::CliResult;
use crate::output::{err_line, out, out_json_line};
use crate::session;
use toolbelt_session::session::excluded_tools;

pub const EXIT_AUTH: i32 = 41;
pub const EXIT_INPUT: i32 = 42;
pub const EXIT_TURN_LIMIT: i32 = 53;
pub const EXIT_CANCELLED: i32 = 130;

/// The prompt from the argument and/or stdin (stdin first, as upstream).
fn prompt(args: &RunArgs) -> Option<String> {
    let mut piped = String::new();
    if !std::io::stdin().is_terminal() {
        let _ = std::io::stdin().read_to_string(&mut piped);
    }
    let piped = piped.trim_end();
    let arg = args.prompt.as_deref().unwrap_or("").trim();
    let joined = match (piped.is_empty(), arg.is_empty()) {
        (true, true) => return None,
        (false, true) => piped.to_string(),
        (true, false) => arg.to_string(),
        (false, false) => format!("{piped}\n\n{arg}"),
    };
    Some(joined)
}

/// Writes what the run does in the chosen format.
struct Printer {
    format: OutputFormat,
    /// Whether the last text written to stdout ended a line (text format).
    at_line_start: bool,
    /// `--raw`: the model's text as it is, escape sequences included.
    raw: bool,
    /// Tool calls on stderr as they run (text format).
    progress: Arc<crate::progress::Progress>,
}

impl Printer {
    fn event(&self, v: Value) {
        out_json_line(&v.to_string());
    }

    fn text(&mut self, t: &str) {
        match self.format {
            OutputFormat::Text => {
                self.progress.clear();
                // A model's text can hold escape sequences (OSC 52 writes the clipboard): shown
                // visibly, piped or not, unless --raw asks for the bytes (issue 35).
                if self.raw {
                    out(t);
                } else {
                    crate::output::out_visible(t);
                }
                self.at_line_start = t.ends_with('\n');
            }
            OutputFormat::StreamJson => self.event(
                json!({"type": "message", "timestamp": now_iso(), "role": "assistant", "content": t, "delta": true}),
            ),
            OutputFormat::Json => {}
        }
    }

    fn end_line(&mut self) {
        if self.format == OutputFormat::Text && !self.at_line_start {
            out("\n");
            self.at_line_start = true;
        }
    }

    fn on(&mut self, e: AgentEvent<'_>) {
        match e {
            AgentEvent::Text(t) => self.text(t),
            // The answer is what stdout carries; thinking is not shown.
            AgentEvent::Thought(_) => {}
            AgentEvent::Retrying { attempt, reason } => {
                self.end_line();
                let msg = format!("model call failed ({reason}); trying again (attempt {attempt})");
                if self.format == OutputFormat::StreamJson {
                    self.event(json!({"type": "error", "timestamp": now_iso(), "severity": "warning", "message": msg}));
                } else {
                    err_line(&format!("toolbelt: {msg}"));
                }
            }
            AgentEvent::ModelAnswered { .. } => self.end_line(),
            AgentEvent::ToolCall { id, name, args } => match self.format {
                OutputFormat::StreamJson => self
                    .event(json!({"type": "tool_use", "timestamp": now_iso(),
                    "tool_name": name, "tool_id": id, "parameters": args})),
                _ => {
                    self.end_line();
                    self.progress.started(id, name, &args.to_string());
                }
            },
            AgentEvent::ToolResult { id, name, completed, response } => {
                let r = &response.function_response.response;
                let error = r.error();
                let kind = completed
                    .and_then(|c| c.error.as_ref())
                    .map(|e| e.kind.as_str().to_string())
                    .unwrap_or_else(|| "tool_error".into());
                match self.format {
                    OutputFormat::StreamJson => {
                        let mut ev = json!({"type": "tool_result", "timestamp": now_iso(), "tool_id": id,
                            "status": if error.is_some() { "error" } else { "success" }});
                        match error {
                            Some(m) => ev["error"] = json!({"type": kind, "message": m}),
                            None => ev["output"] = r.get("output").unwrap_or(Value::Null),
                        }
                        self.event(ev);
                    }
                    _ => {
                        let output = r.output();
                        self.progress.finished(id, name, output, error);
                    }
                }
            }
        }
    }
}

/// An OpenAI-compatible server with no model named by `-m` or `OPENAI_MODEL`.
fn model_guessed(args: &RunArgs) -> bool {
    args.models.base_url.is_some()
        && args.models.replay.is_none()
        && args.models.model.is_none()
        && std::env::var("OPENAI_MODEL").map_or(true, |m| m.is_empty())
}

/// The exit status and, when it failed, the error's type and message.
fn verdict(o: &RunOutcome) -> (i32, Option<(&'static str, String)>) {
    match &o.finish {
        Finish::Done => (EXIT_OK, None),
        Finish::TurnLimit(n) => (
            EXIT_TURN_LIMIT,
            Some((
                "turn_limit",
                format!("Reached the limit of {n} model calls in this run (--max-turns)."),
            )),
        ),
        Finish::Cancelled => (EXIT_CANCELLED, Some(("cancelled", "The run was cancelled.".into()))),
        Finish::Stopped(r) => {
            (EXIT_OK, Some(("stop_execution", format!("Agent execution stopped by hook: {r}"))))
        }
        Finish::ModelFailed(e @ (ModelError::Auth { .. } | ModelError::SignIn(_))) => {
            (EXIT_AUTH, Some(("auth", e.to_string())))
        }
        Finish::ModelFailed(e) => (EXIT_TOOL_FAILED, Some(("model_error", e.to_string()))),
    }
}

/// `--replay X` takes the next word: X is the recording when it is a file or looks like a
/// path (one word with a `/` or an extension); otherwise, when no prompt follows, X is the
/// prompt for the built-in demo (`--replay "what is here?"`).
fn resolve_replay(args: &mut RunArgs) {
    let Some(value) = args.models.replay.clone().filter(|v| !v.is_empty()) else { return };
    let path_like = !value.contains(char::is_whitespace)
        && (value.contains('/') || std::path::Path::new(&value).extension().is_some());
    if args.prompt.is_none() && !path_like && !std::path::Path::new(&value).is_file() {
        args.prompt = Some(value);
        args.models.replay = Some(String::new());
    }
}

pub async fn run(mut args: RunArgs) -> CliResult {
    resolve_replay(&mut args);
    // A recording that cannot be read is the problem to report, prompt or not.
    if let Some(replay) = args.models.replay.as_deref().filter(|r| !r.is_empty())
        && let Err(e) = std::fs::File::open(replay)
    {
        err_line(&format!("toolbelt: cannot read {replay}: {e}"));
        return Ok(EXIT_TOOL_FAILED);
    }
    let Some(prompt) = prompt(&args) else {
        err_line("toolbelt: no prompt: give it as an argument or on stdin");
        return Ok(EXIT_INPUT);
    };
    // The settings are read again by the session; the model must be known before it.
    let root = toolbelt_session::primary_root(&args.session.roots)?;
    let (settings, _) =
        toolbelt_session::load_settings(&toolbelt_core::config::default_home_dir(), &root)?;
    let client = match super::model::client(
        &args.models,
        &super::model::ModelSettings::of(&settings.tools()),
    ) {
        Ok(c) => c,
        Err((code, msg)) => {
            err_line(&format!("toolbelt: {msg}"));
            return Ok(code);
        }
    };
    // A replay answers whatever was recorded, so it "has" grounding when the recording did.
    let grounding = args.models.base_url.is_none();
    let bridge = Arc::new(toolbelt_agent::bridge::ModelBridge::new(client.clone(), grounding));
    let family = ModelFamily::for_model(client.model());
    let mut builder =
        session::builder(&args.session).model(bridge).model_family(family).mcp_servers(true);
    let progress = Arc::new(crate::progress::Progress::new());
    // text: what a running tool prints, on stderr as it prints it (issue 49 F9).
    if args.output_format == OutputFormat::Text {
        let shown = progress.clone();
        let sink: toolbelt_core::scheduler::EventSink =
            Arc::new(move |e: &toolbelt_core::scheduler::Event| {
                if let toolbelt_core::scheduler::Event::Output { call_id, chunk } = e {
                    shown.output(call_id, chunk);
                }
            });
        builder = builder.events(sink);
    }
    // stream-json: what a running tool prints, as it prints it (toolbelt's extra event; off
    // with --compat-events for upstream's exact stream).
    if args.output_format == OutputFormat::StreamJson && !args.compat_events {
        let sink: toolbelt_core::scheduler::EventSink =
            Arc::new(|e: &toolbelt_core::scheduler::Event| {
                if let toolbelt_core::scheduler::Event::Output { call_id, chunk } = e {
                    let line = json!({"type": "tool_output", "timestamp": now_iso(),
                        "tool_id": call_id, "output": chunk});
                    out_json_line(&line.to_string());
                }
            });
        builder = builder.events(sink);
    }
    let session = session::build(builder).await?;
    let env = session.env();
    // A headless run: nobody answers questions.
    let (system, left_out) = toolbelt_acp::session::system_prompt(&session, family, false);
    for f in left_out {
        crate::output::warn(&format!("context file not loaded: {f}"));
    }
    // What the model is shown follows the session's mode (plan-mode tools switch it).
    let (registry, exclude) = (session.registry.clone(), session.tool_settings.exclude.clone());
    let shown_policy = session.policy.clone();
    let declare = move |mode| {
        let excluded = excluded_tools(&shown_policy, &registry, mode, &exclude);
        registry
            .declarations(family)
            .into_iter()
            .filter(|d| !excluded.contains(&d.name))
            .collect::<Vec<_>>()
    };
    let session_tag =
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let mask_dir =
        env.workspace.temp_dir().join("tool-outputs").join(format!("session-{session_tag}"));
    session.services.keep_background(args.keep_background);
    let agent = Agent {
        client: client.clone(),
        scheduler: session.scheduler().clone(),
        declare: Arc::new(declare),
        system_instruction: Some(toolbelt_agent::agent::prompt_instruction(system.clone())),
        max_turns: args.max_turns,
        masking: Some(toolbelt_agent::masking::Masking::new(mask_dir)),
    };

    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        super::stop_signal().await;
        err_line("toolbelt: cancelling (Ctrl-C again to exit at once)");
        on_signal.cancel();
        super::stop_signal().await;
        std::process::exit(EXIT_CANCELLED);
    });

    let mut printer = Printer {
        format: args.output_format,
        at_line_start: true,
        raw: args.raw,
        progress: progress.clone(),
    };
    // The spinner, on a terminal only.
    let spinner = (args.output_format == OutputFormat::Text && progress.on_terminal()).then(|| {
        let p = progress.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(std::time::Duration::from_millis(120));
            loop {
                every.tick().await;
                p.tick();
            }
        })
    });
    if args.output_format == OutputFormat::StreamJson {
        printer.event(json!({"type": "init", "timestamp": now_iso(), "session_id": session.id,
            "model": client.model()}));
        printer.event(
            json!({"type": "message", "timestamp": now_iso(), "role": "user", "content": prompt}),
        );
    }
    // A slash command is toolbelt's to answer (issue 50 E1); /init becomes a prompt.
    let mut prompt = prompt;
    if let Some(command) = toolbelt_acp::commands::parse(&prompt) {
        match slash_command(command, &session, &system, family).await {
            Ok(Slash::Said(text)) => {
                if let Some(s) = spinner {
                    s.abort();
                }
                progress.clear();
                match args.output_format {
                    OutputFormat::Text => crate::output::out_line(&text),
                    _ => out_json_line(
                        &json!({"session_id": session.id, "response": text}).to_string(),
                    ),
                }
                session.shutdown().await;
                return Ok(EXIT_OK);
            }
            Ok(Slash::Prompt(ask)) => prompt = ask.to_string(),
            Err(usage) => {
                err_line(&format!("toolbelt: {usage}"));
                session.shutdown().await;
                return Ok(EXIT_INPUT);
            }
        }
    }
    let outcome = agent.run(&prompt, &cancel, &mut |e| printer.on(e)).await;
    if let Some(s) = spinner {
        s.abort();
    }
    progress.clear();
    let (code, mut error) = verdict(&outcome);
    // A local server that does not know the model we guessed: say how to name it.
    if model_guessed(&args)
        && matches!(
            &outcome.finish,
            Finish::ModelFailed(ModelError::Http { status: 400 | 404, .. })
        )
        && let Some((_, msg)) = error.as_mut()
    {
        msg.push_str(&format!(
            " (no model was named, so \"{}\" was asked for: pass the server's model name with -m, or set OPENAI_MODEL)",
            client.model()
        ));
    }
    // Gemini CLI's shapes: SessionMetrics for -o json, StreamStats for stream-json.
    let stats = serde_json::to_value(&outcome.stats.metrics).unwrap_or(Value::Null);
    let stream_stats = outcome.stats.metrics.stream_stats(outcome.stats.duration_ms);
    match args.output_format {
        OutputFormat::Text => {
            printer.end_line();
            if let Some((_, msg)) = &error {
                err_line(&format!("toolbelt: {msg}"));
            }
        }
        OutputFormat::Json => {
            let mut v =
                json!({"session_id": session.id, "response": outcome.final_text, "stats": stats});
            if let Some((kind, msg)) = &error {
                v["error"] = json!({"type": kind, "message": msg, "code": code});
            }
            out_json_line(&serde_json::to_string_pretty(&v)?);
        }
        OutputFormat::StreamJson => {
            let mut v = json!({"type": "result", "timestamp": now_iso(),
                "status": if code == EXIT_OK { "success" } else { "error" }, "stats": stream_stats});
            if let Some((kind, msg)) = &error {
                v["error"] = json!({"type": kind, "message": msg});
            }
            printer.event(v);
        }
    }
    // The answer first, then the clean-up (MCP servers' shutdown grace, background work).
    session.shutdown().await;
    Ok(code)
}

/// What a slash command in `toolbelt run` comes to.
enum Slash {
    /// toolbelt's answer.
    Said(String),
    /// A prompt for the model in place of the command (`/init`).
    Prompt(&'static str),
}

/// A slash command in `toolbelt run`; `Err` says how to use the command.
async fn slash_command(
    command: Result<toolbelt_acp::commands::Command, String>,
    session: &toolbelt_session::Session,
    system: &toolbelt_agent::prompt::SystemPrompt,
    family: ModelFamily,
) -> Result<Slash, String> {
    use toolbelt_acp::commands::{self, Command};
    Ok(Slash::Said(match command? {
        Command::Help => commands::help_text(),
        Command::Tools => commands::tools_text(session, family),
        Command::Mcp => commands::mcp_text(session.mcp.as_ref()),
        Command::About => format!(
            "toolbelt {}\n- folder: {}{}\n- system: {} {}",
            env!("CARGO_PKG_VERSION"),
            session.root.display(),
            if session.trusted { " (trusted)" } else { " (not trusted)" },
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
        Command::MemoryShow | Command::MemoryRefresh => commands::memory_text(system.context()),
        Command::MemoryAdd(fact) => {
            let request = toolbelt_core::scheduler::CallRequest::new(
                "memory-1",
                "save_memory",
                json!({"fact": fact}),
            );
            let done = session.scheduler().schedule(vec![request], CancellationToken::new()).await;
            match done.first() {
                Some(d) if d.status == toolbelt_core::scheduler::CallState::Success => {
                    "Remembered.".into()
                }
                Some(d) => {
                    let why = serde_json::to_value(&d.response.function_response.response)
                        .ok()
                        .and_then(|v| v.get("error").and_then(Value::as_str).map(String::from))
                        .unwrap_or_else(|| "it did not run".into());
                    return Err(format!("the fact was not saved: {why}"));
                }
                None => return Err("the fact was not saved".into()),
            }
        }
        Command::Compress => {
            "There is nothing to compress: each toolbelt run starts a new conversation.".into()
        }
        Command::Init => match commands::init(session) {
            Ok(ask) => return Ok(Slash::Prompt(ask)),
            Err(exists) => exists,
        },
    }))
}
