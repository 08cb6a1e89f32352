//! The MCP server: a registry's tools, served to any MCP client.
//!
//! One [`ToolbeltServer`] per connection (per session over HTTP). Its scheduler is made when
//! the client has said who it is: with a client that supports elicitation the session is
//! interactive and "ask" decisions are put to the person through the client; otherwise it
//! follows the headless policy (what would be asked is refused with a clear message).

mod approval;
mod convert;
#[cfg(feature = "conformance-fixture")]
pub mod fixture;
pub mod http;
pub mod limits;
pub mod lines;
pub mod stdio;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use toolbelt_core::sync::{LockExt, RwLockExt};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig, Tool as McpTool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolbelt_core::hooks::ToolHooks;
use toolbelt_core::policy::{ApprovalMode, PolicyEngine, Rule};
use toolbelt_core::scheduler::{CallRequest, Event, Scheduler, SchedulerOptions};
use toolbelt_core::{ModelFamily, Registry, ToolEnv};

pub use approval::ElicitingApprover;

/// What every connection's session is made from.
#[derive(Clone)]
pub struct ServerParts {
    pub registry: Arc<Registry>,
    /// The session's rules; each connection builds its policy engine from them, interactive or
    /// not depending on the client.
    pub rules: Vec<Rule>,
    pub workspace: std::path::PathBuf,
    pub trusted: bool,
    pub env: ToolEnv,
    pub hooks: Option<Arc<dyn ToolHooks>>,
    pub mode: ApprovalMode,
    /// `security.disableYoloMode`: no one switches a connection's session to yolo.
    pub yolo_disabled: bool,
    pub family: ModelFamily,
    /// Names left out of `tools/list` whatever the policy says (settings `tools.exclude`).
    pub excluded: Vec<String>,
    /// The client's roots are the workspace when it offers them (no `--root` was given).
    pub client_roots: bool,
    /// Why the workspace may not be served until the client offers roots (toolbelt started in
    /// `/` or the home folder without `--root`).
    pub root_refused: Option<String>,
    /// Judges a client's root for its own trust (`None`: every root has `trusted`). A folder's
    /// trust is never inherited from the folder the server started in.
    pub trust: Option<TrustJudge>,
}

/// Whether a folder is trusted.
pub type TrustJudge = Arc<dyn Fn(&std::path::Path) -> bool + Send + Sync>;

type ProgressMap = Arc<Mutex<HashMap<String, Forward>>>;

/// Live output not yet sent to a client, per call: at most this much (its last part).
const PENDING_OUTPUT_BYTES: usize = 64 * 1024;

/// A call's live output on its way to the client as progress: one notification in flight at
/// a time, what comes meanwhile joined (and its front dropped past [`PENDING_OUTPUT_BYTES`]).
/// A task for each chunk grew `toolbelt mcp --proxy` to 924 MB under a flood (issue 35).
struct Forward {
    token: ProgressToken,
    peer: Peer<RoleServer>,
    sent: f64,
    pending: String,
    sending: bool,
}

impl Forward {
    fn new(token: ProgressToken, peer: Peer<RoleServer>) -> Self {
        Self { token, peer, sent: 0.0, pending: String::new(), sending: false }
    }
}

/// Queues `chunk` for the call's client and starts the sender if none runs.
fn forward_output(map: &ProgressMap, call_id: &str, chunk: &str) {
    let mut calls = map.locked();
    let Some(f) = calls.get_mut(call_id) else { return };
    f.pending.push_str(chunk);
    if f.pending.len() > PENDING_OUTPUT_BYTES {
        let mut cut = f.pending.len() - PENDING_OUTPUT_BYTES;
        while !f.pending.is_char_boundary(cut) {
            cut += 1;
        }
        f.pending.drain(..cut);
    }
    if f.sending {
        return;
    }
    f.sending = true;
    let (map, id) = (map.clone(), call_id.to_string());
    tokio::spawn(async move {
        loop {
            let (param, peer) = {
                let mut calls = map.locked();
                let Some(f) = calls.get_mut(&id) else { return };
                if f.pending.is_empty() {
                    f.sending = false;
                    return;
                }
                f.sent += 1.0;
                let message = std::mem::take(&mut f.pending);
                (
                    ProgressNotificationParam::new(f.token.clone(), f.sent).with_message(message),
                    f.peer.clone(),
                )
            };
            let _ = peer.notify_progress(param).await;
        }
    });
}

/// Ends a call's forwarding: its last output goes to the client before the result does (it
/// was lost when the call ended before the sender ran). Waits at most a second for a
/// notification in flight.
async fn flush_output(map: &ProgressMap, call_id: &str) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(1);
    let last = loop {
        {
            let mut calls = map.locked();
            let sending = calls.get(call_id).is_some_and(|f| f.sending);
            if !sending || tokio::time::Instant::now() >= deadline {
                break calls.remove(call_id);
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    };
    let Some(mut f) = last else { return };
    if f.pending.is_empty() {
        return;
    }
    f.sent += 1.0;
    let param = ProgressNotificationParam::new(f.token, f.sent).with_message(f.pending);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), f.peer.notify_progress(param))
        .await;
}

/// The parts every connection uses, swappable: a reload (SIGHUP) puts new parts in, and each
/// connection builds a new scheduler from them at its next request.
pub type SharedParts = Arc<RwLock<Arc<ServerParts>>>;

/// How long the client gets to list its roots.
const ROOTS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub fn shared(parts: ServerParts) -> SharedParts {
    Arc::new(RwLock::new(Arc::new(parts)))
}

struct Connection {
    parts: Arc<ServerParts>,
    scheduler: Scheduler,
    /// The tools this client is not shown (denied outright, or excluded by settings).
    hidden: std::collections::HashSet<String>,
    /// Why nothing is served: no `--root`, a start in `/` or the home folder, and no roots
    /// from the client that could be used.
    refused: Option<String>,
}

/// A client's roots as folders, or why they cannot be used.
type Roots = Result<Vec<std::path::PathBuf>, String>;

/// The handler for one connection.
#[derive(Clone)]
pub struct ToolbeltServer {
    parts: SharedParts,
    connection: Arc<Mutex<Option<Arc<Connection>>>>,
    /// The folders the client offered as roots, or why they cannot be used (`None`: not
    /// asked yet, or none offered).
    roots: Arc<Mutex<Option<Roots>>>,
    /// Held while the roots are fetched: a call waits for the workspace being set up.
    roots_refresh: Arc<tokio::sync::Mutex<()>>,
    /// The folder (device, inode) each root path was when it was first used: a path that is
    /// another folder now (moved away, replaced by a link) is refused, never taken.
    root_ids: Arc<Mutex<HashMap<std::path::PathBuf, (u64, u64)>>>,
    approver: Arc<ElicitingApprover>,
    progress: ProgressMap,
}

impl ToolbeltServer {
    pub fn new(parts: SharedParts) -> Self {
        Self {
            parts,
            connection: Arc::default(),
            roots: Arc::default(),
            roots_refresh: Arc::default(),
            root_ids: Arc::default(),
            approver: Arc::new(ElicitingApprover::default()),
            progress: Arc::default(),
        }
    }

    /// The connection's scheduler, made on first use from what the client declared (and again
    /// after the parts were reloaded).
    fn connection(&self, peer: &Peer<RoleServer>) -> Arc<Connection> {
        let parts = self.parts.reading().clone();
        let mut slot = self.connection.locked();
        if let Some(c) = slot.as_ref().filter(|c| Arc::ptr_eq(&c.parts, &parts)) {
            return c.clone();
        }
        let conn = Arc::new({
            let interactive = !peer.supported_elicitation_modes().is_empty();
            self.approver.set_peer(peer.clone());
            // The client's roots are the workspace when they make one; settings and policies
            // stay the session's.
            let offered = self.roots.locked().clone();
            let built = match offered.as_ref() {
                None => None,
                Some(Err(why)) => Some(Err(why.clone())),
                Some(Ok(r)) if r.is_empty() => {
                    Some(Err("it offered none that is a folder".to_string()))
                }
                Some(Ok(r)) => Some(
                    toolbelt_core::Workspace::new(r, &parts.env.config)
                        .map_err(|e| e.to_string())
                        .and_then(|w| self.same_folders(&w).map(|()| w)),
                ),
            };
            let (workspace, roots_refused) = match built {
                None => (None, None),
                Some(Ok(w)) => (Some(w), None),
                Some(Err(why)) => {
                    tracing::warn!("the client's roots cannot be used: {why}");
                    (None, Some(why))
                }
            };
            let primary =
                workspace.as_ref().map_or(parts.workspace.clone(), |w| w.primary().into());
            let trusted = match (&workspace, &parts.trust) {
                (Some(w), Some(judge)) => judge(w.primary()),
                _ => parts.trusted,
            };
            let policy = Arc::new(
                PolicyEngine::new(parts.rules.clone(), interactive)
                    .with_workspace(&primary)
                    .with_trusted_folder(trusted)
                    .with_confinable(toolbelt_core::process::sandbox::usable()),
            );
            let progress = self.progress.clone();
            let sink = Arc::new(move |e: &Event| {
                if let Event::Output { call_id, chunk } = e {
                    forward_output(&progress, call_id, chunk);
                }
            });
            let options = SchedulerOptions {
                family: parts.family,
                mode: parts.mode,
                yolo_disabled: parts.yolo_disabled,
                ..SchedulerOptions::default()
            };
            let mut scheduler = Scheduler::new(
                parts.registry.clone(),
                policy.clone(),
                self.approver.clone(),
                parts.env.clone(),
                options,
            )
            .with_events(sink);
            if let Some(h) = &parts.hooks {
                scheduler = scheduler.with_hooks(h.clone());
            }
            // Roots the client offered but that cannot be used serve nothing: never the folder
            // the server started in (issue 33, second review: all roots gone, the start
            // folder became the sandbox's writable root).
            let refused = match (&workspace, roots_refused) {
                (Some(_), _) => None,
                (None, Some(why)) => Some(format!(
                    "Nothing is served: the MCP client's roots cannot be used ({why}). Open a folder in the client (or restart toolbelt with --root /path/to/project)."
                )),
                (None, None) => parts.root_refused.clone(),
            };
            if let Some(w) = workspace {
                scheduler.set_workspace(w);
            }
            let hidden = parts.registry.hidden_tools(&policy, parts.mode, &parts.excluded);
            if !interactive && !hidden.is_empty() {
                say_hidden_once(&hidden);
            }
            Connection { parts: parts.clone(), scheduler, hidden, refused }
        });
        *slot = Some(conn.clone());
        conn
    }

    fn visible_tools(&self, peer: &Peer<RoleServer>) -> Vec<McpTool> {
        let conn = self.connection(peer);
        let parts = &conn.parts;
        parts
            .registry
            .tools()
            .filter(|t| !conn.hidden.contains(t.name()))
            .map(|t| convert::tool_to_mcp(t.as_ref(), parts.family))
            .collect()
    }
}

impl ToolbeltServer {
    /// Whether each root of `w` is the folder its path was when this connection first used it
    /// (recorded now for paths seen the first time).
    fn same_folders(&self, w: &toolbelt_core::Workspace) -> Result<(), String> {
        let mut ids = self.root_ids.locked();
        for (given, id) in w.root_identities() {
            match ids.get(&given) {
                Some(was) if *was != id => {
                    return Err(format!(
                        "{} is no longer the folder it was (it was moved or replaced, by a symbolic link perhaps)",
                        given.display()
                    ));
                }
                Some(_) => {}
                None => {
                    ids.insert(given, id);
                }
            }
        }
        Ok(())
    }

    /// Whether the client declared the roots capability.
    fn offers_roots(peer: &Peer<RoleServer>) -> bool {
        peer.peer_info().is_some_and(|i| i.capabilities.roots.is_some())
    }

    /// Asks the client for its roots (when it has them) and makes them this connection's
    /// workspace from the next call on (`file://` folders that exist). Roots are deprecated in
    /// the newest protocol draft (SEP-2577), but the clients people use (VS Code, Claude Code,
    /// Cursor) send them.
    /// With `only_if_unknown`, roots already listed are kept (waiting for a listing under way).
    #[allow(deprecated)]
    async fn refresh_roots(&self, peer: &Peer<RoleServer>, only_if_unknown: bool) {
        if !self.parts.reading().client_roots {
            return;
        }
        if !Self::offers_roots(peer) {
            return;
        }
        let _refreshing = self.roots_refresh.lock().await;
        if only_if_unknown && self.roots.locked().is_some() {
            return;
        }
        // Calls wait while this runs: a client that never answers must not hold them forever.
        let listed = match tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await {
            Ok(Ok(r)) => r.roots,
            Ok(Err(e)) => {
                tracing::warn!("roots/list failed: {e}");
                return;
            }
            Err(_) => {
                tracing::warn!("roots/list had no answer within {} s", ROOTS_TIMEOUT.as_secs());
                return;
            }
        };
        // So many roots at most (issue 35): each is opened, watched and granted to commands.
        let max = toolbelt_core::limits::MCP_ROOTS;
        let folders = if listed.len() > max {
            Err(format!("it offered {} roots; at most {max} are served", listed.len()))
        } else {
            let folders: Vec<std::path::PathBuf> = listed
                .iter()
                .filter_map(|r| url::Url::parse(&r.uri).ok()?.to_file_path().ok())
                .filter(|p| p.is_dir())
                .collect();
            if folders.is_empty() {
                tracing::warn!("the client offered no usable roots ({} listed)", listed.len());
            }
            Ok(folders)
        };
        *self.roots.locked() = Some(folders);
        // The next request builds a connection over the new roots.
        *self.connection.locked() = None;
    }
}

impl ServerHandler for ToolbeltServer {
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(&context.peer, false).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(&context.peer, false).await;
    }

    fn get_info(&self) -> ServerConfig {
        let mut info = rmcp::model::Implementation::from_build_env();
        info.name = "toolbelt".into();
        info.version = env!("CARGO_PKG_VERSION").into();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(info)
            .with_instructions("Gemini-CLI-compatible coding tools: files, search, edits and shell, under the user's policy.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.visible_tools(&context.peer)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let _running = stdio::RunningCall::start();
        // The workspace first: roots being fetched are waited for, roots never fetched (a
        // call that overtook the `initialized` notification) are fetched now.
        self.refresh_roots(&context.peer, true).await;
        let conn = self.connection(&context.peer);
        if let Some(why) = &conn.refused {
            return Ok(CallToolResult::error(vec![ContentBlock::text(why.clone())]).into());
        }
        // An unknown name: suggestions only among the tools this client can see.
        if conn.parts.registry.get(&request.name).is_none() {
            let visible =
                conn.parts.registry.names().into_iter().filter(|n| !conn.hidden.contains(*n));
            let msg = toolbelt_core::registry::not_found_among(&request.name, visible);
            return Ok(CallToolResult::error(vec![ContentBlock::text(msg)]).into());
        }
        let call_id = toolbelt_core::scheduler::new_call_id(&request.name);
        // Taken, not copied: a request's arguments may hold a message's worth of values.
        let mut request = request;
        let args = request
            .arguments
            .take()
            .map(Value::Object)
            .unwrap_or_else(|| Value::Object(Default::default()));
        if let Some(token) = context.meta.get_progress_token() {
            self.progress
                .locked()
                .insert(call_id.clone(), Forward::new(token, context.peer.clone()));
        }
        let cancel: CancellationToken = context.ct.clone();
        let req = CallRequest::new(call_id.clone(), request.name.to_string(), args);
        // Boxed: the scheduler's future is large, and rmcp moves the request's future into a
        // task of its own.
        let done = Box::pin(conn.scheduler.schedule(vec![req], cancel)).await;
        flush_output(&self.progress, &call_id).await;
        let Some(done) = done.into_iter().next() else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "the call produced no response",
            )])
            .into());
        };
        let (refusal, hint) = (done.refusal, done.hint.clone());
        let mut result = convert::completed_to_mcp(done);
        // A refusal says why and what changes it: the policy's hint, and for a client that
        // cannot ask its user (no elicitation), that this is the reason.
        if refusal.is_some_and(|r| r != toolbelt_core::scheduler::Refusal::UserDenied) {
            let mut why = String::new();
            if context.peer.supported_elicitation_modes().is_empty() {
                why.push_str("This MCP client cannot ask you to confirm a call (it does not support elicitation), so calls that need a confirmation are refused. ");
            }
            if let Some(h) = &hint {
                why.push_str(&format!("Hint: {h}. "));
            }
            why.push_str("To allow more, start toolbelt mcp with --approval-mode auto_edit (edits) or --approval-mode yolo (everything), or add a policy rule (docs/clients.md).");
            result.content.push(ContentBlock::text(why));
        }
        Ok(result.into())
    }
}

/// Says once per process, on stderr (which clients keep in their server log), which tools a
/// client that cannot confirm a call does not see, and how to offer them: the client itself
/// then only answers "tool not found" for them (issue 49 F6).
fn say_hidden_once(hidden: &std::collections::HashSet<String>) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let mut names: Vec<&str> = hidden.iter().map(String::as_str).collect();
        names.sort_unstable();
        tracing::warn!(
            "this MCP client cannot ask you to confirm a call (it does not support elicitation), so the tools that would need a confirmation are not offered to it: {}. Start toolbelt mcp with --approval-mode auto_edit (edits) or --approval-mode yolo (everything), or allow them with a policy rule (docs/clients.md).",
            names.join(", ")
        );
    });
}
