//! The protocol's table of methods (ACP version 1). `initialize` says what toolbelt does:
//! text, images (with Gemini), embedded resources and links in prompts; `session/load` and
//! `session/list`; MCP servers over stdio, HTTP and SSE; the ways to sign in (`authenticate`
//! picks one). Sessions are made per editor folder (`session/new`), told of the slash commands,
//! kept after each prompt, listed and replayed on `session/load`; prompts and session building run on tasks
//! of their own, so the connection keeps reading answers (permissions, files) and
//! `session/cancel` while they work. When the editor goes away, every session ends with the
//! processes it started.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CancelNotification,
    ClientCapabilities, Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    SessionCapabilities, SessionConfigOptionValue, SessionId, SessionInfo, SessionListCapabilities,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
    UnstructuredCommandInput,
};
use agent_client_protocol::v1::{ConnectionTo, Dispatch};
use agent_client_protocol::{
    Client, Error, Handled, UntypedMessage, on_receive_dispatch, on_receive_notification,
    on_receive_request,
};
use serde_json::{Value, json};
use toolbelt_core::settings::McpServerSettings;
use toolbelt_core::sync::LockExt as _;

use crate::AcpOptions;
use crate::session::{AcpSession, OpenRequest, TurnError};

/// Everything the handlers share.
struct State {
    options: AcpOptions,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
    /// Session ids, the one used longest ago first.
    used: Mutex<Vec<String>>,
    client: Mutex<ClientCapabilities>,
}

impl State {
    fn session(&self, id: &SessionId) -> Result<Arc<AcpSession>, Error> {
        let s = self.sessions.locked().get(&*id.0).cloned().ok_or_else(|| {
            Error::from(agent_client_protocol::v1::schema::Error::session_not_found(id.clone()))
        })?;
        self.touch(&id.0);
        Ok(s)
    }

    fn touch(&self, id: &str) {
        let mut used = self.used.locked();
        used.retain(|u| u != id);
        used.push(id.to_string());
    }

    /// Past [`ACP_SESSIONS`] open sessions, the one used longest ago that is not busy (no
    /// prompt or request holds it) is closed: it stays stored, and `session/load` opens it
    /// again. 2,000 `session/new` requests of 90 bytes held 379 MB (issue 35).
    fn make_room(&self) -> Option<Arc<AcpSession>> {
        let mut sessions = self.sessions.locked();
        if sessions.len() < toolbelt_core::limits::ACP_SESSIONS {
            return None;
        }
        let mut used = self.used.locked();
        let idle = used
            .iter()
            .position(|id| sessions.get(id).is_some_and(|s| Arc::strong_count(s) == 1))?;
        let id = used.remove(idle);
        sessions.remove(&id)
    }

    /// Whether the editor reads and writes files itself (both, or toolbelt uses the disk).
    fn editor_files(&self) -> bool {
        let c = self.client.locked();
        c.fs.read_text_file && c.fs.write_text_file
    }
}

/// A fresh session id: letters, digits and `-` only (ids name kept files).
pub(crate) fn new_id() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut h = std::hash::RandomState::new().build_hasher();
    h.write_u128(millis);
    format!("{millis:x}-{:016x}", h.finish())
}

/// The editor's MCP servers as settings entries (`mcpServers` in settings.json).
fn mcp_settings(servers: &[McpServer]) -> Vec<McpServerSettings> {
    let pairs = |v: Vec<(String, String)>| -> serde_json::Map<String, Value> {
        v.into_iter().map(|(k, v)| (k, Value::String(v))).collect()
    };
    servers
        .iter()
        .filter_map(|s| {
            let (name, definition) = match s {
                McpServer::Stdio(s) => (
                    s.name.clone(),
                    json!({
                        "command": s.command.display().to_string(),
                        "args": s.args,
                        "env": pairs(s.env.iter().map(|e| (e.name.clone(), e.value.clone())).collect()),
                    }),
                ),
                McpServer::Http(s) => (
                    s.name.clone(),
                    json!({
                        "httpUrl": s.url,
                        "headers": pairs(s.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect()),
                    }),
                ),
                McpServer::Sse(s) => (
                    s.name.clone(),
                    json!({
                        "url": s.url,
                        "type": "sse",
                        "headers": pairs(s.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect()),
                    }),
                ),
                _ => return None,
            };
            Some(McpServerSettings { name, definition })
        })
        .collect()
}

/// Opens a session for `cwd` (a new one, or a kept one going on) and registers it.
async fn open(
    st: &Arc<State>,
    cx: &ConnectionTo<Client>,
    id: String,
    cwd: std::path::PathBuf,
    servers: &[McpServer],
    saved: Option<crate::store::Saved>,
) -> Result<Arc<AcpSession>, Error> {
    if !cwd.is_absolute() {
        return Err(Error::invalid_params()
            .data(json!(format!("cwd must be an absolute path: {}", cwd.display()))));
    }
    let req = OpenRequest {
        id: id.clone(),
        cwd,
        mcp_servers: mcp_settings(servers),
        editor_files: st.editor_files(),
        saved,
    };
    let (st2, peer) = (st.clone(), cx.clone());
    // Built on a task of its own: connecting MCP servers takes time, and tools may block.
    let built = tokio::spawn(async move { AcpSession::open(&st2.options, peer, req).await })
        .await
        .map_err(|e| Error::internal_error().data(json!(e.to_string())))?;
    let session = built.map_err(|e| match e {
        // The editor shows the sentence: what is missing and how to set it.
        crate::Unavailable::Auth(why) => Error::auth_required().data(json!(why)),
        crate::Unavailable::Refused(why) => Error::invalid_params().data(json!(why)),
    })?;
    if let Some(old) = st.make_room() {
        old.close().await;
    }
    st.touch(&id);
    st.sessions.locked().insert(id, session.clone());
    Ok(session)
}

/// Sessions listed per `session/list` page.
const LIST_PAGE: usize = 50;

/// `session/list`: the kept sessions (of one folder, when asked), the latest first, a page at
/// a time; the cursor is where the next page starts.
fn list_sessions(
    dir: &std::path::Path,
    req: &ListSessionsRequest,
) -> Result<ListSessionsResponse, Error> {
    if let Some(cwd) = &req.cwd
        && !cwd.is_absolute()
    {
        return Err(Error::invalid_params()
            .data(json!(format!("cwd must be an absolute path: {}", cwd.display()))));
    }
    let start = match &req.cursor {
        None => 0,
        Some(c) => c.parse::<usize>().map_err(|_| {
            Error::invalid_params().data(json!(format!("not a cursor this agent gave: {c:?}")))
        })?,
    };
    let all = crate::store::list(dir, req.cwd.as_deref());
    let page: Vec<SessionInfo> = all
        .iter()
        .skip(start)
        .take(LIST_PAGE)
        .map(|m| {
            SessionInfo::new(SessionId::new(m.id.clone()), m.cwd.clone())
                .title(m.title.clone())
                .updated_at(m.updated_at.clone())
        })
        .collect();
    let next = (start + LIST_PAGE < all.len()).then(|| (start + LIST_PAGE).to_string());
    Ok(ListSessionsResponse::new(page).next_cursor(next))
}

/// Tells the editor which slash commands toolbelt handles.
fn announce_commands(cx: &ConnectionTo<Client>, id: &str) -> Result<(), Error> {
    let commands = crate::commands::COMMANDS
        .iter()
        .map(|(name, about, hint)| {
            AvailableCommand::new(*name, *about).input(
                hint.map(|h| AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(h))),
            )
        })
        .collect();
    cx.send_notification(SessionNotification::new(
        SessionId::new(id.to_string()),
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
    ))
}

/// Serves ACP over stdin and stdout until the editor closes the connection; then every
/// session ends (its turn cancelled, its processes stopped, its MCP servers closed).
pub async fn serve(options: AcpOptions) -> Result<(), String> {
    let st = Arc::new(State {
        options,
        sessions: Mutex::default(),
        used: Mutex::default(),
        client: Mutex::default(),
    });
    let auth = st.options.models.auth_methods();
    let grounding = st.options.models.grounding();
    let s_list = st.clone();
    let (s_init, s_new, s_load, s_prompt, s_cancel, s_mode, s_config, s_other, s_ext) = (
        st.clone(),
        st.clone(),
        st.clone(),
        st.clone(),
        st.clone(),
        st.clone(),
        st.clone(),
        st.clone(),
        st.clone(),
    );
    let result = agent_client_protocol::Agent
        .v1()
        .name("toolbelt")
        .on_receive_request(
            async move |req: InitializeRequest, responder, _cx| {
                *s_init.client.locked() = req.client_capabilities.clone();
                let methods = auth
                    .iter()
                    .map(|(id, name, about)| {
                        AuthMethod::Agent(
                            AuthMethodAgent::new(id.clone(), name.clone())
                                .description(about.clone()),
                        )
                    })
                    .collect::<Vec<_>>();
                responder.respond(
                    InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(
                            AgentCapabilities::new()
                                .load_session(true)
                                .session_capabilities(
                                    SessionCapabilities::new().list(SessionListCapabilities::new()),
                                )
                                .prompt_capabilities(
                                    PromptCapabilities::new()
                                        .image(grounding)
                                        .audio(false)
                                        .embedded_context(true),
                                )
                                .mcp_capabilities(McpCapabilities::new().http(true).sse(true)),
                        )
                        .auth_methods(methods)
                        .agent_info(
                            Implementation::new("toolbelt", env!("CARGO_PKG_VERSION"))
                                .title("toolbelt".to_string()),
                        ),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: AuthenticateRequest, responder, _cx| {
                // Credentials come from the environment or the command line; a method is
                // usable when a model client can be made.
                let known = s_other
                    .options
                    .models
                    .auth_methods()
                    .iter()
                    .any(|(id, ..)| *id == *req.method_id.0);
                if !known {
                    return responder.respond_with_error(
                        Error::invalid_params()
                            .data(json!(format!("no method {:?}", req.method_id.0))),
                    );
                }
                match s_other.options.models.authenticate(&req.method_id.0) {
                    Ok(()) => responder.respond(AuthenticateResponse::new()),
                    Err(e) => responder
                        .respond_with_error(Error::auth_required().data(json!(e.to_string()))),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                let st = s_new.clone();
                cx.clone().spawn(async move {
                    let id = new_id();
                    let r = open(&st, &cx, id.clone(), req.cwd, &req.mcp_servers, None).await.map(
                        |s| {
                            NewSessionResponse::new(SessionId::new(id.clone()))
                                .modes(s.modes())
                                .config_options(s.config_options())
                        },
                    );
                    let opened = r.is_ok();
                    responder.respond_with_result(r)?;
                    if opened {
                        announce_commands(&cx, &id)?;
                    }
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                let st = s_load.clone();
                cx.clone().spawn(async move {
                    let id = req.session_id.0.to_string();
                    let saved = match crate::store::load(&st.options.store_dir, &id) {
                        Ok(Some(s)) => s,
                        Ok(None) => {
                            return responder.respond_with_error(
                                agent_client_protocol::v1::schema::Error::session_not_found(
                                    req.session_id,
                                )
                                .into(),
                            );
                        }
                        Err(e) => {
                            return responder.respond_with_error(
                                Error::internal_error().data(json!(e.to_string())),
                            );
                        }
                    };
                    let result = async {
                        // A session open in this process ends first: one session per id.
                        let old = st.sessions.locked().remove(&id);
                        if let Some(old) = old {
                            old.shutdown().await;
                        }
                        let s = open(&st, &cx, id.clone(), req.cwd, &req.mcp_servers, Some(saved))
                            .await?;
                        for u in s.replay().await {
                            cx.send_notification(SessionNotification::new(
                                req.session_id.clone(),
                                u,
                            ))?;
                        }
                        Ok::<_, Error>(
                            LoadSessionResponse::new()
                                .modes(s.modes())
                                .config_options(s.config_options()),
                        )
                    };
                    let r = result.await;
                    let opened = r.is_ok();
                    responder.respond_with_result(r)?;
                    if opened {
                        announce_commands(&cx, &id)?;
                    }
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ListSessionsRequest, responder, _cx| {
                responder.respond_with_result(list_sessions(&s_list.options.store_dir, &req))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let session = match s_prompt.session(&req.session_id) {
                    Ok(s) => s,
                    Err(e) => return responder.respond_with_error(e),
                };
                cx.spawn(async move {
                    // The turn runs on a task of its own: the connection keeps reading.
                    let turn = tokio::spawn(async move { session.prompt(&req.prompt).await }).await;
                    let r = match turn {
                        Ok(Ok(stop)) => Ok(PromptResponse::new(stop)),
                        Ok(Err(TurnError::Auth(e))) => Err(Error::auth_required().data(json!(e))),
                        Ok(Err(TurnError::Model(e))) => Err(Error::internal_error().data(json!(e))),
                        Err(e) => Err(Error::internal_error().data(json!(e.to_string()))),
                    };
                    responder.respond_with_result(r)
                })
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                if let Ok(s) = s_cancel.session(&n.session_id) {
                    s.cancel();
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest, responder, _cx| {
                let r = s_mode.session(&req.session_id).and_then(|s| {
                    s.set_mode(&req.mode_id.0).map_err(|e| Error::invalid_params().data(json!(e)))
                });
                responder.respond_with_result(r.map(|()| SetSessionModeResponse::new()))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionConfigOptionRequest, responder, _cx| {
                let r = s_config.session(&req.session_id).and_then(|s| {
                    if &*req.config_id.0 != "model" {
                        return Err(Error::invalid_params().data(json!(format!(
                            "no option {:?}; there is \"model\"",
                            req.config_id.0
                        ))));
                    }
                    let value = match &req.value {
                        SessionConfigOptionValue::ValueId { value } => value.0.to_string(),
                        other => serde_json::to_value(other)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default(),
                    };
                    s.set_model(&value).map_err(|e| Error::invalid_params().data(json!(e)))?;
                    Ok(SetSessionConfigOptionResponse::new(s.config_options()))
                });
                responder.respond_with_result(r)
            },
            on_receive_request!(),
        )
        .on_receive_dispatch(
            // Gemini CLI's `session/set_model` (an earlier draft of the protocol): the same as
            // the model option.
            async move |d: Dispatch<UntypedMessage, UntypedMessage>, _cx| match d {
                Dispatch::Request(req, responder) if req.method() == "session/set_model" => {
                    let p = req.params();
                    let sid = p.get("sessionId").and_then(Value::as_str).unwrap_or("");
                    let model = p.get("modelId").and_then(Value::as_str).unwrap_or("");
                    let r = s_ext.session(&SessionId::new(sid.to_string())).and_then(|s| {
                        s.set_model(model).map_err(|e| Error::invalid_params().data(json!(e)))
                    });
                    match r {
                        Ok(()) => responder.respond(json!({}))?,
                        Err(e) => responder.respond_with_error(e)?,
                    }
                    Ok(Handled::Yes)
                }
                // A request too costly to read (see `wire`): answered with why.
                Dispatch::Request(req, responder) if req.method() == crate::wire::REFUSED => {
                    let why = req.params().get("reason").cloned().unwrap_or_default();
                    responder.respond_with_error(Error::invalid_request().data(why))?;
                    Ok(Handled::Yes)
                }
                other => Ok(Handled::No { message: other, retry: false }),
            },
            on_receive_dispatch!(),
        )
        .connect_to(crate::wire::stdio())
        .await;
    // The editor went away (or the connection failed): every session ends.
    let all: Vec<_> = st.sessions.locked().drain().map(|(_, s)| s).collect();
    for s in all {
        s.shutdown().await;
    }
    result.map_err(|e| e.to_string())
}
