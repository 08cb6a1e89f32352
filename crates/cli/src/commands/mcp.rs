//! `toolbelt mcp`: serves the session's tools over stdio (default) or Streamable HTTP. stdout
//! carries only the protocol; logs go to stderr. SIGHUP reloads settings and policies.

use std::sync::Arc;
use toolbelt_core::sync::{LockExt, RwLockExt};

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;
use toolbelt_mcp::server::{self, ServerParts, SharedParts, ToolbeltServer, http};

use super::EXIT_OK;
use crate::cli::McpArgs;
use crate::error::{CliError, CliResult};
use crate::output::{err_line, warn};
use crate::session;

/// What a session leaves running: background processes and proxied MCP servers.
struct Running {
    services: toolbelt_tools::Services,
    mcp: Option<toolbelt_mcp::client::McpClients>,
}

async fn parts(args: &McpArgs) -> Result<(ServerParts, Running), CliError> {
    let timeout = args.timeout_ms;
    // Started in `/` or the home folder without --root, the folder is a placeholder the server
    // does not serve (see `root_refused` below) until the client names its roots: it may be
    // opened, but the client's roots are judged by the setting as it is.
    let placeholder = args.session.roots.is_empty()
        && std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .is_ok_and(|cwd| home_or_root(&cwd).is_some());
    // The setting as the user gave it, restored once the placeholder is open.
    let given = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = given.clone();
    let builder = session::builder(&args.session)
        .model_family(args.model_family)
        .mcp_servers(args.proxy)
        .configure(move |c| {
            if let Some(t) = timeout {
                c.tool_call_timeout_ms = t;
            }
            seen.store(c.allow_home_or_root_workspace, std::sync::atomic::Ordering::Relaxed);
            c.allow_home_or_root_workspace |= placeholder;
        });
    let mut session = session::build(builder).await?;
    let mut parts = session.server_parts();
    if placeholder {
        let mut config = (*parts.env.config).clone();
        config.allow_home_or_root_workspace = given.load(std::sync::atomic::Ordering::Relaxed);
        parts.env.config = Arc::new(config);
    }
    // With --root the user chose the workspace; without it the client's roots are used, and
    // the folder toolbelt was started in is served only if it is not `/` or the home folder.
    parts.client_roots = args.session.roots.is_empty();
    if parts.client_roots {
        let root = &session.root;
        parts.root_refused = home_or_root(root).map(|w| {
            format!(
                "toolbelt mcp was started in {} without --root, and the client has not said which folders are the workspace (MCP roots): it will not serve {w} itself. Add --root /path/to/project to the server's arguments in the client's configuration (docs/clients.md).",
                root.display()
            )
        });
        if let Some(why) = &parts.root_refused {
            crate::output::warn(why);
        }
    }
    Ok((parts, Running { services: session.services.clone(), mcp: session.mcp.take() }))
}

/// Reloads on SIGHUP until `stop`: a new registry, policy set and hooks are swapped in.
fn reload_on_hangup(
    args: Arc<McpArgs>,
    shared: SharedParts,
    services: Arc<std::sync::Mutex<Vec<Running>>>,
    stop: CancellationToken,
) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hup) = signal(SignalKind::hangup()) else { return };
        loop {
            tokio::select! {
                _ = hup.recv() => {}
                () = stop.cancelled() => return,
            }
            match parts(&args).await {
                Ok((p, s)) => {
                    *shared.writing() = Arc::new(p);
                    services.locked().push(s);
                    tracing::warn!("settings and policies reloaded");
                }
                Err(e) => {
                    warn(&format!("reload failed, keeping the previous settings: {}", e.message))
                }
            }
        }
    });
    #[cfg(not(unix))]
    let _ = (args, shared, services, stop);
}

/// `toolbelt mcp list`: each configured server's state and tools.
async fn list(args: &McpArgs, json: bool) -> CliResult {
    use toolbelt_mcp::client::ServerState;
    let session = session::build(session::builder(&args.session).mcp_servers(true)).await?;
    let Some(clients) = &session.mcp else {
        crate::output::out_line("No MCP servers are configured (settings key mcpServers).");
        return Ok(EXIT_OK);
    };
    if json {
        let v: Vec<_> = clients
            .servers
            .iter()
            .map(|(name, state)| match state {
                ServerState::Connected { tools, dropped } => serde_json::json!({
                    "name": name, "state": "connected", "tools": tools,
                    "dropped": dropped.iter().map(|(t, w)| serde_json::json!({"tool": t, "reason": w})).collect::<Vec<_>>(),
                }),
                ServerState::Failed(why) => serde_json::json!({"name": name, "state": "failed", "reason": why}),
            })
            .collect();
        crate::output::out_json_line(&serde_json::to_string_pretty(&v)?);
    } else {
        for (name, state) in &clients.servers {
            match state {
                ServerState::Connected { tools, dropped } => {
                    crate::output::out_line(&format!("{name}: connected, {} tool(s)", tools.len()));
                    for t in tools {
                        crate::output::out_line(&format!("  {t}"));
                    }
                    for (t, why) in dropped {
                        crate::output::out_line(&format!("  ({t} left out: {why})"));
                    }
                }
                ServerState::Failed(why) => {
                    crate::output::out_line(&format!("{name}: unavailable: {why}"))
                }
            }
        }
    }
    clients.shutdown().await;
    Ok(EXIT_OK)
}

/// `toolbelt mcp auth NAME`: signs in to a server with OAuth, or forgets its tokens.
async fn auth(
    args: &McpArgs,
    name: &str,
    logout: bool,
    no_browser: bool,
    scopes: &[String],
) -> CliResult {
    let session = session::build(session::builder(&args.session)).await?;
    let Some(entry) = session.tool_settings.mcp_servers.iter().find(|s| s.name == name) else {
        let known: Vec<_> =
            session.tool_settings.mcp_servers.iter().map(|s| s.name.as_str()).collect();
        return Err(CliError::usage(format!(
            "no MCP server named '{name}' in the settings (configured: {})",
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        )));
    };
    let spec = toolbelt_mcp::client::spec(entry, &session.config.env_redaction)
        .map_err(|e| CliError::usage(format!("MCP server '{name}': {e}")))?;
    let (Some(url), Some(store)) = (spec.url().map(String::from), spec.oauth_store()) else {
        return Err(CliError::usage(format!(
            "MCP server '{name}' is a stdio server; OAuth applies to HTTP servers only"
        )));
    };
    if logout {
        use rmcp::transport::auth::CredentialStore;
        store.clear().await.map_err(CliError::failed)?;
        crate::output::out_line(&format!(
            "Signed out of '{name}' (removed {}).",
            store.path().display()
        ));
        return Ok(EXIT_OK);
    }
    let path = store.path().to_path_buf();
    let open = |auth_url: &str| {
        err_line(&format!("Open this URL to sign in to '{name}':\n  {auth_url}"));
        if !no_browser {
            open_browser(auth_url);
        }
    };
    let mut options = spec.oauth.clone();
    options.scopes.extend(scopes.iter().flat_map(|s| s.split_whitespace().map(String::from)));
    match toolbelt_mcp::client::oauth::login(&url, store, &options, None, open).await {
        Ok(()) => {
            crate::output::out_line(&format!(
                "Signed in to '{name}'; tokens saved in {}.",
                path.display()
            ));
            Ok(EXIT_OK)
        }
        Err(e) => Err(CliError::failed(format!("sign-in to '{name}' failed: {e}"))),
    }
}

/// Best effort: the desktop's URL opener, detached; the URL is printed either way.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// `--fixture conformance`: the conformance suite's test server, over stdio or HTTP.
#[cfg(feature = "conformance-fixture")]
async fn fixture(args: &McpArgs) -> CliResult {
    use toolbelt_mcp::server::fixture::ConformanceServer;
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        on_signal.cancel();
    });
    match args.http {
        Some(addr) => {
            let opts = http_options(args, addr)?;
            http::serve_handler(ConformanceServer::default, opts, stop, |a| {
                crate::output::err_line(&format!(
                    "toolbelt: serving the conformance fixture at http://{a}/mcp"
                ));
            })
            .await
            .map_err(CliError::failed)?;
        }
        None => {
            let service = ConformanceServer::default()
                .serve(toolbelt_mcp::server::stdio::stdio(args.max_message_bytes))
                .await
                .map_err(CliError::failed)?;
            service.waiting().await.map_err(CliError::failed)?;
        }
    }
    Ok(EXIT_OK)
}

pub async fn run(args: McpArgs) -> CliResult {
    match &args.command {
        Some(crate::cli::McpCommand::List { json }) => return list(&args, *json).await,
        Some(crate::cli::McpCommand::Auth { server, logout, no_browser, scopes }) => {
            return auth(&args, server, *logout, *no_browser, scopes).await;
        }
        Some(crate::cli::McpCommand::Probe {
            url,
            client_id,
            client_secret,
            client_metadata_url,
        }) => {
            let options = toolbelt_mcp::client::probe::options(
                client_id.clone(),
                client_secret.clone(),
                client_metadata_url.clone(),
                std::env::var("MCP_CONFORMANCE_CONTEXT").ok().as_deref(),
            );
            return match toolbelt_mcp::client::probe::probe(url, &options).await {
                Ok(results) => {
                    let failed = results.iter().filter(|r| !r.ok).count();
                    for r in &results {
                        crate::output::out_line(&format!(
                            "{} {}: {}",
                            if r.ok { "ok  " } else { "FAIL" },
                            r.tool,
                            r.summary
                        ));
                    }
                    crate::output::out_line(&format!("{} tool(s), {failed} failed", results.len()));
                    Ok(if failed == 0 { EXIT_OK } else { super::EXIT_TOOL_FAILED })
                }
                Err(e) => Err(CliError::failed(e)),
            };
        }
        None => {}
    }
    #[cfg(feature = "conformance-fixture")]
    if args.fixture.is_some() {
        return fixture(&args).await;
    }
    let (p, services) = parts(&args).await?;
    let grace = std::time::Duration::from_millis(p.env.config.shell_kill_grace_ms);
    let shared = server::shared(p);
    let all_services = Arc::new(std::sync::Mutex::new(vec![services]));
    let stop = CancellationToken::new();
    let args = Arc::new(args);
    reload_on_hangup(args.clone(), shared.clone(), all_services.clone(), stop.clone());
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        on_signal.cancel();
    });
    #[cfg(unix)]
    {
        let on_term = stop.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            if let Ok(mut term) = signal(SignalKind::terminate()) {
                term.recv().await;
                on_term.cancel();
            }
        });
    }
    let result = match args.http {
        Some(addr) => {
            let opts = http_options(&args, addr)?;
            http::serve(shared, opts, stop.clone(), |a| {
                crate::output::err_line(&format!("toolbelt: serving MCP at http://{a}/mcp"));
            })
            .await
            .map_err(CliError::failed)
        }
        None => serve_stdio(shared, stop.clone(), args.max_message_bytes).await,
    };
    stop.cancel();
    let kept: Vec<_> = all_services.locked().drain(..).collect();
    for s in kept {
        s.services.shutdown(grace).await;
        if let Some(m) = &s.mcp {
            m.shutdown().await;
        }
    }
    result?;
    Ok(EXIT_OK)
}

async fn serve_stdio(
    shared: SharedParts,
    stop: CancellationToken,
    max_message_bytes: usize,
) -> Result<(), CliError> {
    let service = ToolbeltServer::new(shared)
        .serve(toolbelt_mcp::server::stdio::stdio(max_message_bytes))
        .await
        .map_err(CliError::failed)?;
    let ct = service.cancellation_token();
    tokio::select! {
        r = service.waiting() => { r.map_err(CliError::failed)?; }
        () = stop.cancelled() => ct.cancel(),
    }
    Ok(())
}

/// The HTTP server's options. The token comes from `--token-file` or `$TOOLBELT_MCP_TOKEN`,
/// never the command line (every user can read a process's arguments); an address other than
/// loopback needs one (anyone who can reach it could otherwise run the tools).
fn http_options(args: &McpArgs, addr: std::net::SocketAddr) -> Result<http::HttpOptions, CliError> {
    if args.token.is_some() {
        return Err(CliError::usage(
            "--token puts the token in the process list, where every user can read it; put it in $TOOLBELT_MCP_TOKEN or a file given with --token-file",
        ));
    }
    let token = match &args.token_file {
        Some(f) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| {
                    CliError::usage(format!("cannot read --token-file {}: {e}", f.display()))
                })?
                .trim()
                .to_string(),
        ),
        None => std::env::var("TOOLBELT_MCP_TOKEN").ok(),
    }
    .filter(|t| !t.is_empty());
    if !addr.ip().is_loopback()
        && let Some(t) = &token
        && t.chars().count() < 16
    {
        return Err(CliError::usage(format!(
            "--http {addr} serves other machines: its token must have at least 16 characters (this one has {}); e.g. `openssl rand -hex 24`",
            t.chars().count()
        )));
    }
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(CliError::usage(format!(
            "--http {addr} would serve the tools to every machine that can reach it, with no token; set $TOOLBELT_MCP_TOKEN or --token-file FILE (clients then send Authorization: Bearer TOKEN), or bind 127.0.0.1"
        )));
    }
    Ok(http::HttpOptions {
        addr,
        bearer_token: token,
        allowed_origins: args.allowed_origins.clone(),
        max_sessions: args.max_sessions.unwrap_or(http::DEFAULT_MAX_SESSIONS),
        per_client_connections: toolbelt_mcp::server::limits::DEFAULT_PER_CLIENT,
        idle_timeout: toolbelt_mcp::server::limits::DEFAULT_IDLE,
        max_message_bytes: args.max_message_bytes,
        header_timeout: toolbelt_mcp::server::limits::DEFAULT_HEADER_TIMEOUT,
        body_timeout: toolbelt_mcp::server::limits::DEFAULT_BODY_TIMEOUT,
    })
}

/// What `dir` (a real path) is when it is `/` or the home folder, which `toolbelt mcp` does
/// not serve without `--root` or the client's roots.
fn home_or_root(dir: &std::path::Path) -> Option<&'static str> {
    let home = toolbelt_core::files::user_home().and_then(|h| std::fs::canonicalize(h).ok());
    if dir.parent().is_none() {
        Some("the file system root (/)")
    } else if home.as_deref() == Some(dir) {
        Some("your home folder")
    } else {
        None
    }
}
