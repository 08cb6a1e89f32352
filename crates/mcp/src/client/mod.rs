//! The MCP client: every `mcpServers` entry connects in parallel (stdio or Streamable HTTP);
//! a slow or broken server is reported with its name and reason and its tools are absent;
//! the others' tools join the registry as `mcp_<server>_<tool>` with repaired schemas.

mod convert;
mod listing;
pub mod naming;
pub mod oauth;
pub mod probe;
mod progress;
pub mod schema;
mod screen;
mod screen_http;
mod sse;
mod stdio;
mod tool;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use toolbelt_core::process::env::is_dangerous_execution_var;
use toolbelt_core::process::{ChildPurpose, EnvRedaction, child_env};
use toolbelt_core::settings::McpServerSettings;

pub use tool::McpTool;

/// The protocol version the client asks for: the current stable revision, which servers
/// widely support (rmcp's newest, 2026-07-28, is offered by few).
pub const PROTOCOL_VERSION: rmcp::model::ProtocolVersion =
    rmcp::model::ProtocolVersion::V_2025_11_25;

/// Upstream's default MCP timeout (10 minutes), for calls without progress.
pub const DEFAULT_TIMEOUT_MS: u64 = 600_000;
/// How long start-up waits for servers (all in parallel) before reporting them as too slow.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;

#[derive(Clone, Default)]
struct Handler {
    progress: progress::Progress,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolbelt-mcp-client", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(PROTOCOL_VERSION)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.dispatch(params);
    }
}

/// A live connection to one server.
pub struct Connection {
    /// Sends requests.
    client: rmcp::Peer<RoleClient>,
    /// The running service, taken at shutdown to close the transport (a stdio server is
    /// asked to exit, then killed).
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    /// A stdio server's reaper: its whole process tree is stopped at shutdown.
    reaper: Option<i32>,
    /// The server's `timeout`, when given: each call's deadline in the engine.
    call_deadline_ms: Option<u64>,
    progress: progress::Progress,
    timeout_ms: u64,
}

/// How to reach a server.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// The server's `env` entries, expanded.
        env: HashMap<String, String>,
        /// What the server inherits: toolbelt's environment, cleaned.
        inherit: HashMap<String, String>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: HashMap<String, String>,
    },
    /// The legacy HTTP+SSE transport.
    Sse {
        url: String,
        headers: HashMap<String, String>,
    },
    /// `url` without a `type`: Streamable HTTP first, SSE if that fails (as upstream).
    HttpOrSse {
        url: String,
        headers: HashMap<String, String>,
    },
}

/// One server's settings, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    pub transport: Transport,
    pub timeout_ms: u64,
    /// Whether `timeout` was given: then it is also the deadline of each call to the server's
    /// tools, as a per-tool override of the engine's (otherwise the global one applies).
    pub timeout_given: bool,
    pub trust: bool,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// Where OAuth tokens are kept (`~/.toolbelt/mcp-oauth`); none: OAuth is off.
    pub oauth_dir: Option<PathBuf>,
    /// How to sign in (`oauth.scopes`, `oauth.clientId`, `oauth.clientSecret`,
    /// `oauth.clientMetadataUrl`).
    pub oauth: oauth::OAuthOptions,
}

impl ServerSpec {
    /// The server's URL, for HTTP and SSE servers.
    pub fn url(&self) -> Option<&str> {
        match &self.transport {
            Transport::Stdio { .. } => None,
            Transport::Http { url, .. }
            | Transport::Sse { url, .. }
            | Transport::HttpOrSse { url, .. } => Some(url),
        }
    }

    /// Where this server's OAuth tokens are saved.
    pub fn oauth_store(&self) -> Option<oauth::FileCredentialStore> {
        Some(oauth::FileCredentialStore::new(self.oauth_dir.as_deref()?, &self.name, self.url()?))
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

fn string_map(v: Option<&Value>, env: &CleanEnv) -> HashMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter().filter_map(|(k, v)| Some((k.clone(), expand_env(v.as_str()?, env)))).collect()
        })
        .unwrap_or_default()
}

/// The environment `$VAR` in MCP settings reads: toolbelt's own, cleaned as for an MCP server
/// (as upstream: a secret must be named in `security.environmentVariableRedaction.allowed`).
type CleanEnv = HashMap<String, String>;

fn clean_env(redaction: &EnvRedaction) -> CleanEnv {
    child_env(redaction, ChildPurpose::McpServer)
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// `$VAR` and `${VAR}` from `env` (missing: empty), as upstream.
fn expand_env(s: &str, env: &CleanEnv) -> String {
    expand_with(s, |name| env.get(name).cloned())
}

/// [`expand_env`] with the variables looked up by `lookup`.
fn expand_with(s: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(j) => (&inner[..j], j + 2),
                None => ("", 0),
            }
        } else {
            let n = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..n], n)
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
        } else {
            out.push_str(&lookup(name).unwrap_or_default());
            rest = &after[len..];
        }
    }
    out.push_str(rest);
    out
}

/// Reads a settings entry (already type-checked by the settings loader). `$VAR`s read the
/// environment as cleaned by `redaction`; an `env` entry that would change how the server
/// loads code (`LD_PRELOAD`, `NODE_OPTIONS`, ...) is dropped, as upstream.
pub fn spec(s: &McpServerSettings, redaction: &EnvRedaction) -> Result<ServerSpec, String> {
    let d = &s.definition;
    let get = |k: &str| d.get(k).and_then(Value::as_str).map(String::from);
    let env = clean_env(redaction);
    let headers = || string_map(d.get("headers"), &env);
    let transport = if let Some(url) = get("httpUrl") {
        Transport::Http { url, headers: headers() }
    } else if let Some(url) = get("url") {
        match get("type").as_deref() {
            Some("sse") => Transport::Sse { url, headers: headers() },
            Some("http") => Transport::Http { url, headers: headers() },
            _ => Transport::HttpOrSse { url, headers: headers() },
        }
    } else if let Some(command) = get("command") {
        Transport::Stdio {
            command,
            args: strings(d.get("args")),
            env: string_map(d.get("env"), &env)
                .into_iter()
                .filter(|(k, _)| !is_dangerous_execution_var(k))
                .collect(),
            inherit: env.clone(),
            cwd: get("cwd"),
        }
    } else {
        return Err("Invalid configuration: missing httpUrl (for Streamable HTTP), url (for SSE), and command (for stdio).".into());
    };
    Ok(ServerSpec {
        name: s.name.clone(),
        transport,
        timeout_ms: d.get("timeout").and_then(Value::as_u64).unwrap_or(DEFAULT_TIMEOUT_MS),
        timeout_given: d.get("timeout").and_then(Value::as_u64).is_some(),
        trust: d.get("trust").and_then(Value::as_bool).unwrap_or(false),
        include: strings(d.get("includeTools")),
        exclude: strings(d.get("excludeTools")),
        oauth_dir: Some(toolbelt_core::config::default_home_dir().join("mcp-oauth")),
        oauth: oauth::OAuthOptions {
            scopes: strings(d.get("oauth").and_then(|o| o.get("scopes"))),
            client_id: d.pointer("/oauth/clientId").and_then(Value::as_str).map(String::from),
            client_secret: d
                .pointer("/oauth/clientSecret")
                .and_then(Value::as_str)
                .map(|v| expand_env(v, &env)),
            client_metadata_url: d
                .pointer("/oauth/clientMetadataUrl")
                .and_then(Value::as_str)
                .map(String::from),
        },
    })
}

/// A server's state after start-up.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerState {
    Connected { tools: Vec<String>, dropped: Vec<(String, String)> },
    Failed(String),
}

/// A server that did not start, said without what its URL may hold (a key in its query).
fn failed(why: &str) -> ServerState {
    ServerState::Failed(toolbelt_core::url_secrets::without_url_secrets(why))
}

/// The servers' tools and how each server fared.
#[derive(Default)]
pub struct McpClients {
    pub tools: Vec<Arc<McpTool>>,
    pub servers: Vec<(String, ServerState)>,
}

impl McpClients {
    /// Closes every connection (stdio servers are stopped).
    pub async fn shutdown(&self) {
        let mut seen = Vec::new();
        for t in &self.tools {
            if !seen.iter().any(|c: &Arc<Connection>| Arc::ptr_eq(c, &t.conn)) {
                seen.push(t.conn.clone());
            }
        }
        // All at once: each may take its whole grace, and thirty stubborn servers one after
        // the other kept `toolbelt call` from exiting for two minutes (issue 35).
        futures::future::join_all(seen.into_iter().map(stop)).await;
    }
}

/// Stops one server: its transport closed, then its process tree.
async fn stop(c: Arc<Connection>) {
    use toolbelt_core::process::tree;
    // What the server started, noted before the transport closes (closing it may end the
    // reaper, and with it the way to find them).
    let started = c.reaper.map(tree::descendants).unwrap_or_default();
    // Closing the transport first lets the server read what was sent last (a cancellation)
    // and exit on its own.
    if let Some(service) = c.service.lock().await.take() {
        let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
    }
    // Then, as the MCP specification has a client stop a stdio server, a moment for it to
    // exit on its own (a server killed at once could die before reading the cancellation sent
    // last: `mcp_client::the_global_deadline_stops_an_mcp_call_and_cancels_it_at_the_server`
    // failed one run in eight on a busy machine), and then its tree: SIGTERM, a grace period,
    // SIGKILL.
    if let Some(reaper) = c.reaper {
        tree::gone_within(reaper, Duration::from_millis(250), Duration::from_millis(5)).await;
        tree::terminate_tree(reaper, Duration::from_secs(2)).await;
    }
    for pid in started {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Connects to a server; a stdio server's reaper pid goes into `reaper` as soon as it runs, so
/// that a caller that gives up (an error, a timeout) can stop the server's whole tree.
async fn connect(
    spec: &ServerSpec,
    cwd: &Path,
    reaper: &std::sync::atomic::AtomicI32,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let handler = Handler::default();
    match &spec.transport {
        Transport::Stdio { command, args, env, inherit, cwd: dir } => {
            let dir = dir.as_ref().map(|d| cwd.join(d)).unwrap_or_else(|| cwd.to_path_buf());
            stdio::connect(handler, command, args, (inherit, env), &dir, reaper).await
        }
        Transport::Http { url, headers } => connect_http(handler, spec, url, headers).await,
        Transport::Sse { url, headers } => connect_sse(handler, url, headers).await,
        Transport::HttpOrSse { url, headers } => {
            match connect_http(handler.clone(), spec, url, headers).await {
                Ok(s) => Ok(s),
                Err(http) => connect_sse(handler, url, headers)
                    .await
                    .map_err(|sse| format!("{http}; as legacy SSE: {sse}")),
            }
        }
    }
}

/// What went wrong, in the words of the error at the bottom of `e`'s chain (`Connection refused
/// (os error 111)`), not rmcp's wrapping of it, which names the transport's generic types.
pub(crate) fn cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e;
    while let Some(next) = last.source() {
        last = next;
    }
    let text = last.to_string();
    if text.trim().is_empty() { e.to_string() } else { text }
}

/// The configured headers that are valid HTTP (others are left out).
fn header_map(headers: &HashMap<String, String>) -> reqwest::header::HeaderMap {
    use reqwest::header::{HeaderName, HeaderValue};
    headers
        .iter()
        .filter_map(|(k, v)| {
            Some((HeaderName::try_from(k.as_str()).ok()?, HeaderValue::try_from(v.as_str()).ok()?))
        })
        .collect()
}

async fn connect_sse(
    handler: Handler,
    url: &str,
    headers: &HashMap<String, String>,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let transport = sse::SseTransport::connect(url, headers)
        .await
        .map_err(|e| format!("cannot connect to {url} (SSE): {e}"))?;
    handler.serve(transport).await.map_err(|e| format!("initialization failed: {}", cause(&e)))
}

async fn connect_http(
    handler: Handler,
    spec: &ServerSpec,
    url: &str,
    headers: &HashMap<String, String>,
) -> Result<RunningService<RoleClient, Handler>, String> {
    toolbelt_core::tls::ready();
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    let mut custom = HashMap::new();
    for (name, value) in header_map(headers) {
        let Some(name) = name else { continue };
        if name == reqwest::header::AUTHORIZATION {
            let v = value.to_str().unwrap_or("");
            config = config.auth_header(v.strip_prefix("Bearer ").unwrap_or(v).to_string());
        } else {
            custom.insert(name, value);
        }
    }
    let config = config.custom_headers(custom);
    let saved = match spec.oauth_store() {
        Some(store) => oauth::saved_manager(url, store).await?,
        None => None,
    };
    let served = match saved {
        Some(manager) => {
            let client = rmcp::transport::auth::AuthClient::new(reqwest::Client::new(), manager);
            let client = screen_http::Screened(client);
            handler.serve(StreamableHttpClientTransport::with_client(client, config)).await
        }
        None => {
            let client = screen_http::Screened(reqwest::Client::new());
            handler.serve(StreamableHttpClientTransport::with_client(client, config)).await
        }
    };
    served.map_err(|e| {
        let hint = oauth::Refusal::hint(oauth::Refusal::of_initialize(&e), &spec.name);
        format!("cannot connect to {url}: {}{hint}", cause(&e))
    })
}

async fn start(
    spec: ServerSpec,
    cwd: &Path,
    connect_timeout: Duration,
) -> (String, Result<(Vec<Arc<McpTool>>, Vec<(String, String)>), String>) {
    let name = spec.name.clone();
    // A server's own `timeout` is its deadline for starting too, as it is upstream (issue 49
    // F9: `"timeout": 90000` still gave up after 10 s).
    let connect_timeout =
        if spec.timeout_given { Duration::from_millis(spec.timeout_ms) } else { connect_timeout };
    let reaper = std::sync::atomic::AtomicI32::new(0);
    let work = async {
        let client = connect(&spec, cwd, &reaper).await?;
        // Every page, not only the first, within the bounds (issue 35).
        let listed = listing::list_tools(client.peer(), &spec).await.map_err(|e| {
            let hint = oauth::Refusal::hint(oauth::Refusal::of_request(&e), &spec.name);
            format!("tools/list failed: {e}{hint}")
        })?;
        Ok::<_, String>((client, listed))
    };
    let outcome = tokio::time::timeout(connect_timeout, work).await;
    let reaper = reaper.load(std::sync::atomic::Ordering::SeqCst);
    let stop = || {
        // A server that failed or missed its deadline is stopped with everything it started.
        if reaper > 0 {
            toolbelt_core::process::tree::kill_tree_now(reaper);
        }
    };
    let (client, listed) = match outcome {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            stop();
            return (name, Err(e));
        }
        Err(_) => {
            stop();
            return (name, Err(format!("no answer within {} ms", connect_timeout.as_millis())));
        }
    };
    let progress = client.service().progress.clone();
    let peer = client.peer().clone();
    let conn = Arc::new(Connection {
        client: peer,
        reaper: (reaper > 0).then_some(reaper),
        call_deadline_ms: spec.timeout_given.then_some(spec.timeout_ms),
        service: tokio::sync::Mutex::new(Some(client)),
        progress,
        timeout_ms: spec.timeout_ms,
    });
    (name, Ok(listing::tools(listed, &spec, &conn)))
}

/// Connects to every server at once and collects their tools. Names that clash with a tool
/// already taken get a numeric suffix, as different servers' tools must stay distinct.
pub async fn connect_all(
    specs: Vec<Result<ServerSpec, (String, String)>>,
    cwd: &Path,
    connect_timeout: Duration,
) -> McpClients {
    let mut out = McpClients::default();
    let mut runs = Vec::new();
    for s in specs {
        match s {
            Ok(spec) => runs.push(start(spec, cwd, connect_timeout)),
            Err((name, why)) => out.servers.push((name, failed(&why))),
        }
    }
    let mut taken = naming::Taken::default();
    for (name, r) in futures::future::join_all(runs).await {
        match r {
            Ok((tools, dropped)) => {
                let mut names = Vec::new();
                for mut t in tools {
                    let unique = taken.claim(&t.fqn);
                    if unique != t.fqn
                        && let Some(x) = Arc::get_mut(&mut t)
                    {
                        x.fqn = unique;
                    }
                    names.push(t.fqn.clone());
                    out.tools.push(t);
                }
                out.servers.push((name, ServerState::Connected { tools: names, dropped }));
            }
            Err(why) => out.servers.push((name, failed(&why))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::listing::selected;
    use super::*;
    use serde_json::json;

    #[test]
    fn specs_from_settings() {
        let s = |d: Value| {
            spec(&McpServerSettings { name: "x".into(), definition: d }, &EnvRedaction::default())
        };
        let stdio = s(json!({"command": "srv", "args": ["-v"], "timeout": 5, "trust": true, "excludeTools": ["rm"]})).unwrap();
        assert!(
            matches!(stdio.transport, Transport::Stdio { ref command, .. } if command == "srv")
        );
        assert_eq!((stdio.timeout_ms, stdio.trust), (5, true));
        assert!(!selected(&stdio, "rm") && selected(&stdio, "ls"));
        let http =
            s(json!({"httpUrl": "http://h/mcp", "url": "http://other", "headers": {"X-A": "b"}}))
                .unwrap();
        assert_eq!(
            http.transport,
            Transport::Http {
                url: "http://h/mcp".into(),
                headers: HashMap::from([("X-A".into(), "b".into())])
            }
        );
        assert_eq!(http.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert!(matches!(
            s(json!({"url": "http://h/sse", "type": "sse"})).unwrap().transport,
            Transport::Sse { .. }
        ));
        assert!(matches!(
            s(json!({"url": "http://h/mcp"})).unwrap().transport,
            Transport::HttpOrSse { .. }
        ));
        let inc = s(json!({"command": "c", "includeTools": ["read(x)", "list"]})).unwrap();
        assert!(selected(&inc, "read") && selected(&inc, "list") && !selected(&inc, "write"));
    }

    #[test]
    fn env_expansion() {
        let lookup = |name: &str| (name == "TOOLBELT_TEST_X").then(|| "v".to_string());
        assert_eq!(
            expand_with("a-$TOOLBELT_TEST_X-${TOOLBELT_TEST_X}-$NOPE_TOOLBELT-$", lookup),
            "a-v-v--$"
        );
        assert_eq!(expand_env("${TOOLBELT_SURELY_UNSET_VARIABLE}x", &CleanEnv::new()), "x");
    }

    /// Issue 17: `$VAR` in MCP settings read the whole environment, and an `env` entry could
    /// set `LD_PRELOAD`. Secrets now expand only when allowed by name; loader variables drop.
    #[test]
    fn mcp_settings_read_the_cleaned_environment() {
        let env = |vars: &[(&str, &str)], cfg: &EnvRedaction| -> CleanEnv {
            let v = vars.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
            toolbelt_core::process::env::sanitize(v, cfg, ChildPurpose::McpServer)
                .into_iter()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect()
        };
        let vars = [("GITHUB_TOKEN", "t0k"), ("HOME", "/h")];
        let d = EnvRedaction::default();
        assert_eq!(expand_env("$GITHUB_TOKEN@$HOME", &env(&vars, &d)), "@/h");
        let allowed = EnvRedaction { allowed: vec!["GITHUB_TOKEN".into()], ..d };
        assert_eq!(expand_env("$GITHUB_TOKEN@$HOME", &env(&vars, &allowed)), "t0k@/h");
        let s = spec(
            &McpServerSettings {
                name: "x".into(),
                definition: json!({"command": "c", "env": {"LD_PRELOAD": "/x.so", "MODE": "1"}}),
            },
            &EnvRedaction::default(),
        )
        .unwrap();
        let Transport::Stdio { env, .. } = s.transport else { panic!() };
        assert_eq!(env.keys().collect::<Vec<_>>(), ["MODE"]);
    }
}
