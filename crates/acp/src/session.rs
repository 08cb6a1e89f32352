//! One editor session: a toolbelt session over the editor's folder (its settings, policy,
//! tools, and the editor's MCP servers with the configured ones), the conversation so far, the
//! model it talks to, and the turn running now.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    ContentBlock, SessionConfigOption, SessionConfigSelectOption, SessionId, SessionMode,
    SessionModeState, StopReason,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolbelt_agent::agent::{Agent, AgentEvent, Finish};
use toolbelt_agent::client::{ModelClient, ModelError};
use toolbelt_agent::content::Content;
use toolbelt_core::policy::ApprovalMode;
use toolbelt_core::settings::McpServerSettings;
use toolbelt_core::sync::LockExt as _;
use toolbelt_core::{ModelFamily, Registry};
use toolbelt_session::session::excluded_tools;

use crate::store::Saved;
use crate::updates::{Peer, Reporter, kind, mode_id, mode_of};
use crate::{AcpOptions, Models, Unavailable};

/// Why a prompt's turn ended with an error for the editor.
#[derive(Debug)]
pub enum TurnError {
    /// The model refused the credentials.
    Auth(String),
    /// The model call failed for good.
    Model(String),
}

/// What an editor session is opened with.
pub struct OpenRequest {
    pub id: String,
    pub cwd: PathBuf,
    /// The editor's own MCP servers, as settings entries.
    pub mcp_servers: Vec<McpServerSettings>,
    /// The editor reads and writes text files itself (`fs/*`).
    pub editor_files: bool,
    /// A kept conversation to go on with (`session/load`).
    pub saved: Option<Saved>,
}

pub struct AcpSession {
    pub id: String,
    pub cwd: PathBuf,
    session: toolbelt_session::Session,
    reporter: Arc<Reporter>,
    /// The conversation; held for the whole of a turn (one turn at a time).
    history: tokio::sync::Mutex<Vec<Content>>,
    /// The running turn's token.
    turn: Mutex<Option<CancellationToken>>,
    model: Mutex<(String, Arc<dyn ModelClient>)>,
    title: Mutex<Option<String>>,
    /// The system prompt (its context files read again by `/memory refresh`).
    system: Mutex<toolbelt_agent::prompt::SystemPrompt>,
    models: Arc<dyn Models>,
    store_dir: PathBuf,
    max_turns: Option<u32>,
    /// The family of the model in use: the declarations and the prompt follow it.
    family: Mutex<ModelFamily>,
}

/// A tool's title and ACP kind before its call is built (its display name; the built call's
/// description replaces it).
pub fn describe(
    registry: &Registry,
    name: &str,
) -> (String, agent_client_protocol::v1::schema::ToolKind) {
    match registry.get(name) {
        Some(t) => (t.display_name().to_string(), kind(t.kind())),
        None => (name.to_string(), agent_client_protocol::v1::schema::ToolKind::Other),
    }
}

/// A session's system prompt (for an editor, or `toolbelt run` when `interactive` is false):
/// toolbelt's text for the tools the session offers, the skills and the context files; with
/// what was found but not loaded. ask_user is left out of the prompt: neither front end puts
/// its questions to a person (ACP has no question request; `run` is headless).
pub fn system_prompt(
    session: &toolbelt_session::Session,
    family: ModelFamily,
    interactive: bool,
) -> (toolbelt_agent::prompt::SystemPrompt, Vec<String>) {
    let env = session.env();
    let home = toolbelt_core::files::user_home();
    let skills = toolbelt_tools::session::skills::prompt_section(&session.services.skills);
    let exclude = &session.tool_settings.exclude;
    let tools = session
        .registry
        .names()
        .into_iter()
        .filter(|n| *n != "ask_user" && !exclude.iter().any(|e| e == n))
        .map(String::from)
        .collect();
    toolbelt_agent::context::session_instruction(
        &session.tool_settings.context_file_names,
        &toolbelt_agent::context::ContextSources {
            home: home.as_deref(),
            workspace: &env.workspace,
            trusted: session.trusted,
            config: &session.config,
        },
        skills.as_deref(),
        toolbelt_agent::prompt::PromptFacts::of_workspace(
            family,
            tools,
            interactive,
            env.workspace.roots().iter().map(|r| r.real.clone()).collect(),
        ),
    )
}

/// Parts of a stored session replayed to the editor at most (the latest ones).
const REPLAY_PARTS: usize = 2_000;

impl AcpSession {
    /// Builds the session (settings, trust and policy of `cwd`; MCP servers connected).
    pub async fn open(
        opts: &AcpOptions,
        peer: Peer,
        req: OpenRequest,
    ) -> Result<Arc<Self>, Unavailable> {
        let sid = SessionId::new(req.id.clone());
        // A kept session goes on with its model; one no longer offered gives way to the
        // default (credentials missing are still the editor's to hear about).
        let kept = req.saved.as_ref().map(|s| s.model.clone()).filter(|m| !m.is_empty());
        let kept = match kept.map(|m| (opts.models.client(&m), m)) {
            Some((Ok(c), m)) => Some((m, c)),
            Some((Err(Unavailable::Refused(e)), m)) => {
                tracing::warn!("session {}: its model {m} is not used: {e}", req.id);
                None
            }
            Some((Err(e), _)) => return Err(e),
            None => None,
        };
        let (model_name, client) = match kept {
            Some(k) => k,
            None => {
                let d = opts.models.default_model();
                let c = opts.models.client(&d)?;
                (d, c)
            }
        };
        let family = ModelFamily::for_model(client.model());
        let reporter = Arc::new(Reporter::new(peer.clone(), sid.clone()));
        let sink_reporter = reporter.clone();
        let bridge = Arc::new(toolbelt_agent::bridge::ModelBridge::new(
            client.clone(),
            opts.models.grounding(),
        ));
        let mut builder = toolbelt_session::SessionBuilder::new()
            .roots([req.cwd.clone()])
            .policy_paths(opts.policy_paths.iter().cloned())
            .approval_mode(opts.approval_mode)
            .interactive(true)
            .sandbox(opts.sandbox)
            .approver(Arc::new(crate::permission::EditorApprover::new(peer.clone(), sid.clone())))
            .events(Arc::new(move |e| sink_reporter.event(e)))
            .model(bridge)
            .model_family(family)
            .mcp_servers(true)
            .extra_mcp_servers(req.mcp_servers);
        if req.editor_files {
            builder = builder.editor(Arc::new(crate::files::ClientFiles::new(
                peer,
                sid,
                tokio::runtime::Handle::current(),
            )));
        }
        let session = builder.build().await.map_err(|e| Unavailable::Refused(e.to_string()))?;
        for n in &session.notices {
            tracing::warn!("session {}: {n}", req.id);
        }
        let (system, left_out) = system_prompt(&session, family, true);
        for f in left_out {
            tracing::warn!("context file not loaded: {f}");
        }
        let (history, title) = match &req.saved {
            Some(s) => {
                if let Some(m) = mode_of(&s.mode) {
                    let _ = session.scheduler().mode_handle().set_by_person(m);
                }
                (s.history.clone(), s.title.clone())
            }
            None => (Vec::new(), None),
        };
        reporter.mode(session.scheduler().mode());
        Ok(Arc::new(Self {
            id: req.id,
            cwd: req.cwd,
            session,
            reporter,
            history: tokio::sync::Mutex::new(history),
            turn: Mutex::new(None),
            model: Mutex::new((model_name, client)),
            title: Mutex::new(title),
            system: Mutex::new(system),
            models: opts.models.clone(),
            store_dir: opts.store_dir.clone(),
            max_turns: opts.max_turns,
            family: Mutex::new(family),
        }))
    }

    /// The conversation so far as updates (for `session/load`).
    pub async fn replay(&self) -> Vec<agent_client_protocol::v1::schema::SessionUpdate> {
        let history = self.history.lock().await;
        let registry = self.session.registry.clone();
        let env = self.session.env();
        // The title and locations the call had: its description once built with its arguments.
        let describe = move |name: &str, args: &Value| {
            let (title, kind) = describe(&registry, name);
            match registry.get(name).map(|t| t.build(args.clone(), &env)) {
                Some(Ok(call)) => {
                    (call.description(), kind, crate::updates::locations(&call.locations()))
                }
                _ => (title, kind, Vec::new()),
            }
        };
        // The latest messages only, up to REPLAY_PARTS parts: a stored session of many small
        // parts took 483 MB to replay from 2.6 MB, and over 2 GB from 26 MB (issue 35).
        let (mut start, mut parts) = (history.len(), 0usize);
        while start > 0 && parts + history[start - 1].parts.len() <= REPLAY_PARTS {
            parts += history[start - 1].parts.len();
            start -= 1;
        }
        let mut updates = crate::prompt::replay(&history[start..], &describe);
        if start > 0 {
            use agent_client_protocol::v1::schema::{
                ContentBlock, ContentChunk, SessionUpdate, TextContent,
            };
            let note = format!(
                "[{start} earlier message(s) of this session are not shown; the model still has them]"
            );
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(note)));
            updates.insert(0, SessionUpdate::AgentMessageChunk(chunk));
        }
        updates
    }

    /// The modes an editor may choose, and the one in effect.
    pub fn modes(&self) -> SessionModeState {
        let mut modes = vec![
            SessionMode::new("default", "Default").description(
                "Asks before edits, commands and anything else that changes things".to_string(),
            ),
            SessionMode::new("autoEdit", "Auto Edit")
                .description("File edits run without asking; commands still ask".to_string()),
        ];
        if !self.session.yolo_disabled {
            modes.push(
                SessionMode::new("yolo", "YOLO").description(
                    "Everything runs without asking (deny rules still hold)".to_string(),
                ),
            );
        }
        modes
            .push(SessionMode::new("plan", "Plan").description(
                "Read-only: the model plans; only plan files are written".to_string(),
            ));
        SessionModeState::new(mode_id(self.session.scheduler().mode()), modes)
    }

    /// A person's choice of mode (`yolo` refused where it is disabled).
    pub fn set_mode(&self, id: &str) -> Result<(), String> {
        let Some(mode) = mode_of(id) else { return Err(format!("no mode named {id:?}")) };
        if mode == ApprovalMode::Yolo && self.session.yolo_disabled {
            return Err("YOLO mode is disabled by the security.disableYoloMode setting".into());
        }
        self.session.scheduler().mode_handle().set_by_person(mode).map_err(|e| e.to_string())?;
        // The editor chose it: it is told only of changes it did not make.
        self.reporter.mode_known(mode);
        Ok(())
    }

    /// The model option (a select of the models there are, the current one among them).
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        let current = self.model.locked().0.clone();
        let mut choices = self.models.choices();
        if !choices.iter().any(|c| c.id == current) {
            choices.insert(
                0,
                toolbelt_agent::models::ModelChoice {
                    id: current.clone(),
                    name: current.clone(),
                    description: None,
                },
            );
        }
        let options: Vec<SessionConfigSelectOption> = choices
            .into_iter()
            .map(|c| SessionConfigSelectOption::new(c.id, c.name).description(c.description))
            .collect();
        vec![
            SessionConfigOption::select("model", "Model", current, options)
                .category(agent_client_protocol::v1::schema::SessionConfigOptionCategory::Model),
        ]
    }

    /// Switches the model for the next turns (an unknown name is refused here, before any
    /// request).
    pub fn set_model(&self, model: &str) -> Result<(), String> {
        let model = model.trim();
        let client = self.models.client(model).map_err(|e| e.to_string())?;
        *self.family.locked() = ModelFamily::for_model(client.model());
        *self.model.locked() = (model.to_string(), client);
        Ok(())
    }

    /// The model chosen now (as the person named it).
    pub fn model(&self) -> String {
        self.model.locked().0.clone()
    }

    /// Cancels the running turn: the model request and every call it started.
    pub fn cancel(&self) {
        if let Some(t) = self.turn.locked().as_ref() {
            t.cancel();
        }
        self.session.scheduler().cancel_all();
    }

    /// Runs one prompt's turn: the model and every call it asks for, until it answers without
    /// calls, the turn limit, or a cancellation.
    pub async fn prompt(&self, blocks: &[ContentBlock]) -> Result<StopReason, TurnError> {
        // A slash command is toolbelt's to handle, not the model's.
        if let Some(ContentBlock::Text(t)) = blocks.first()
            && let Some(command) = crate::commands::parse(&t.text)
        {
            return self.command(command).await;
        }
        self.turn(blocks).await
    }

    /// Handles a slash command; what it says goes to the editor as the agent's message.
    async fn command(
        &self,
        command: Result<crate::commands::Command, String>,
    ) -> Result<StopReason, TurnError> {
        use crate::commands::{self, Command};
        let text = match command {
            Err(usage) => usage,
            Ok(Command::Help) => commands::help_text(),
            Ok(Command::Tools) => commands::tools_text(&self.session, *self.family.locked()),
            Ok(Command::Mcp) => commands::mcp_text(self.session.mcp.as_ref()),
            Ok(Command::About) => self.about(),
            Ok(Command::MemoryShow) => commands::memory_text(self.system.locked().context()),
            Ok(Command::MemoryRefresh) => self.refresh_memory(),
            Ok(Command::MemoryAdd(fact)) => {
                let id = format!("memory-{}", crate::agent::new_id());
                let args = serde_json::json!({"fact": fact});
                let (title, kind) = describe(&self.session.registry, "save_memory");
                self.reporter.announce(&id, title, kind, &args);
                let token = CancellationToken::new();
                *self.turn.locked() = Some(token.clone());
                let request =
                    toolbelt_core::scheduler::CallRequest::new(id.clone(), "save_memory", args);
                let done = self.session.scheduler().schedule(vec![request], token).await;
                *self.turn.locked() = None;
                let Some(done) = done.first() else { return Ok(StopReason::EndTurn) };
                self.reporter.finished(&id, Some(done), &done.response);
                if done.status == toolbelt_core::scheduler::CallState::Success {
                    format!("Remembered. {}", self.refresh_memory())
                } else {
                    "The fact was not saved (see the call above).".into()
                }
            }
            Ok(Command::Compress) => {
                let mut history = self.history.lock().await;
                let client = self.model.locked().1.clone();
                let token = CancellationToken::new();
                *self.turn.locked() = Some(token.clone());
                let mode = self.session.scheduler().mode();
                let system = self.system.locked().render(mode);
                let done =
                    toolbelt_agent::compress::compress(&*client, Some(&system), &history, &token)
                        .await;
                *self.turn.locked() = None;
                match done {
                    Ok(c) => {
                        // The session keeps the title its first message gave it.
                        let mut title = self.title.locked();
                        if title.is_none() {
                            *title = crate::store::first_line(&history);
                        }
                        drop(title);
                        *history = c.history;
                        self.save(&history);
                        format!(
                            "Compressed {} message(s) into a summary: about {} characters now, from {}.",
                            c.replaced, c.after_chars, c.before_chars
                        )
                    }
                    Err(e) => format!("Not compressed: {e}."),
                }
            }
            Ok(Command::Init) => match commands::init(&self.session) {
                Ok(ask) => {
                    let blocks = [ContentBlock::Text(
                        agent_client_protocol::v1::schema::TextContent::new(ask),
                    )];
                    return self.turn(&blocks).await;
                }
                Err(exists) => exists,
            },
        };
        self.reporter.text(&text);
        Ok(StopReason::EndTurn)
    }

    /// Reads the context files again; says how many are loaded.
    fn refresh_memory(&self) -> String {
        let (system, left_out) = system_prompt(&self.session, *self.family.locked(), true);
        let n = system.context().map_or(0, |c| c.matches("--- Context from: ").count());
        *self.system.locked() = system;
        let mut s = format!("The context files were read again: {n} loaded.");
        for f in left_out {
            s.push_str(&format!("\nNot loaded: {f}"));
        }
        s
    }

    /// `/about`.
    fn about(&self) -> String {
        let (chosen, client) = self.model.locked().clone();
        let mode = mode_id(self.session.scheduler().mode());
        let sandbox = if cfg!(target_os = "linux") {
            "Landlock and seccomp for commands run in the sandbox"
        } else {
            "none on this system"
        };
        format!(
            "toolbelt {} (Agent Client Protocol v1)\n- model: {chosen} (requests go to {})\n- mode: {mode}\n- folder: {}{}\n- sandbox: {sandbox}\n- system: {} {}",
            env!("CARGO_PKG_VERSION"),
            client.model(),
            self.cwd.display(),
            if self.session.trusted { " (trusted)" } else { " (not trusted)" },
            std::env::consts::OS,
            std::env::consts::ARCH,
        )
    }

    /// A turn of the model loop for `blocks`.
    async fn turn(&self, blocks: &[ContentBlock]) -> Result<StopReason, TurnError> {
        let mut history = self.history.lock().await;
        let token = CancellationToken::new();
        *self.turn.locked() = Some(token.clone());
        let env = self.session.env();
        crate::prompt::push_user(&mut history, crate::prompt::parts(blocks, &env));
        let client = self.model.locked().1.clone();
        let scheduler = self.session.scheduler().clone();
        let (registry, exclude, policy, family) = (
            self.session.registry.clone(),
            self.session.tool_settings.exclude.clone(),
            self.session.policy.clone(),
            *self.family.locked(),
        );
        let declare = move |mode| {
            let excluded = excluded_tools(&policy, &registry, mode, &exclude);
            registry
                .declarations(family)
                .into_iter()
                .filter(|d| !excluded.contains(&d.name))
                .collect::<Vec<_>>()
        };
        let mask_dir =
            env.workspace.temp_dir().join("tool-outputs").join(format!("acp-{}", self.id));
        let agent = Agent {
            client,
            scheduler: scheduler.clone(),
            declare: Arc::new(declare),
            system_instruction: Some(toolbelt_agent::agent::prompt_instruction(
                self.system.locked().clone().for_family(family),
            )),
            max_turns: self.max_turns,
            masking: Some(toolbelt_agent::masking::Masking::new(mask_dir)),
        };
        let reporter = self.reporter.clone();
        let registry = self.session.registry.clone();
        let mut on_event = |e: AgentEvent<'_>| match e {
            AgentEvent::Text(t) => reporter.text(t),
            AgentEvent::Thought(t) => reporter.thought(t),
            AgentEvent::ToolCall { id, name, args } => {
                let (title, kind) = describe(&registry, name);
                reporter.announce(id, title, kind, args);
            }
            AgentEvent::ToolResult { id, completed, response, .. } => {
                reporter.finished(id, completed, response);
                let data = completed.and_then(|c| c.result.as_ref()).and_then(|r| r.data.as_ref());
                if let Some(todos) = data.and_then(|d| d.get("todos")) {
                    reporter.plan(todos);
                }
                if let Some(topic) = data.and_then(|d| d.get("topic")).and_then(Value::as_str) {
                    reporter.title(topic);
                    *self.title.locked() = Some(topic.to_string());
                }
                reporter.mode(scheduler.mode());
            }
            AgentEvent::Retrying { attempt, reason } => {
                tracing::warn!("model call failed ({reason}); trying again (attempt {attempt})");
            }
            AgentEvent::ModelAnswered { .. } => {}
        };
        let outcome =
            agent.continue_run(std::mem::take(&mut *history), &token, &mut on_event).await;
        *history = outcome.history;
        *self.turn.locked() = None;
        self.save(&history);
        match outcome.finish {
            Finish::Done => Ok(StopReason::EndTurn),
            Finish::Stopped(reason) => {
                self.reporter.text(&format!("\n[Agent execution stopped by hook: {reason}]"));
                Ok(StopReason::EndTurn)
            }
            Finish::TurnLimit(_) => Ok(StopReason::MaxTurnRequests),
            Finish::Cancelled => Ok(StopReason::Cancelled),
            Finish::ModelFailed(e @ (ModelError::Auth { .. } | ModelError::SignIn(_))) => {
                Err(TurnError::Auth(e.to_string()))
            }
            Finish::ModelFailed(ModelError::Cancelled) => Ok(StopReason::Cancelled),
            Finish::ModelFailed(e) => Err(TurnError::Model(e.to_string())),
        }
    }

    /// Keeps the conversation for `session/load`.
    fn save(&self, history: &[Content]) {
        let saved = Saved {
            cwd: self.cwd.clone(),
            history: history.to_vec(),
            mode: mode_id(self.session.scheduler().mode()).to_string(),
            model: self.model.locked().0.clone(),
            title: self.title.locked().clone(),
        };
        if let Err(e) = crate::store::save(&self.store_dir, &self.id, &saved) {
            tracing::warn!("session {} not kept: {e}", self.id);
        }
    }

    /// Ends the session to make room for others: kept (so `session/load` opens it again),
    /// then shut down.
    pub async fn close(&self) {
        let history = self.history.lock().await.clone();
        self.save(&history);
        self.shutdown().await;
    }

    /// Ends the session: its running turn cancelled, the processes it started stopped, its
    /// MCP servers closed.
    pub async fn shutdown(&self) {
        self.cancel();
        self.session.shutdown().await;
    }
}
