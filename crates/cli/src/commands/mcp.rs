//! `toolbelt mcp`: serves the session's tools over stdio (default) or Streamable HTTP. stdout
//! carries only the protocol; logs go to stderr. SIGHUP reloads settings and policies.

use std::sync::Arc;
use toolbelt_core::sync::{LockExt, RwLockExt};

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;
use toolbelt_mcp::server::{self, http, ServerParts, SharedParts, ToolbeltServer};

use super::{EXIT_OK, EXIT_USAGE};
use crate::cli::McpArgs;
use crate::output::{err_line, warn};
use crate::session::{self, Session};

/// What a session leaves running: background processes and proxied MCP servers.
struct Running {
    services: toolbelt_tools::Services,
    mcp: Option<toolbelt_mcp::client::McpClients>,
}

async fn parts(args: &McpArgs) -> anyhow::Result<(ServerParts, Running)> {
    let mut session = Session::build(&args.session, |c| {
        if let Some(t) = args.timeout_ms {
            c.tool_call_timeout_ms = t;
        }
    })
    .await?;
    if args.proxy {
        session.connect_mcp().await?;
    }
    let env = session.env(&args.session.roots)?;
    let parts = ServerParts {
        registry: session.registry.clone(),
        rules: session.policy.rules(),
        workspace: session.root.clone(),
        trusted: session.trusted,
        env,
        hooks: session.hooks.clone().map(|h| h as Arc<dyn toolbelt_core::hooks::ToolHooks>),
        mode: session.mode,
        family: session::family(args.model_family),
        excluded: session.tool_settings.exclude.clone(),
    };
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
        use tokio::signal::unix::{signal, SignalKind};
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
                Err(e) => warn(&format!("reload failed, keeping the previous settings: {e:#}")),
            }
        }
    });
    #[cfg(not(unix))]
    let _ = (args, shared, services, stop);
}

/// `toolbelt mcp list`: each configured server's state and tools.
async fn list(args: &McpArgs, json: bool) -> anyhow::Result<i32> {
    use toolbelt_mcp::client::ServerState;
    let mut session = match Session::build(&args.session, |_| {}).await {
        Ok(s) => s,
        Err(e) => {
            err_line(&format!("toolbelt: {e:#}"));
            return Ok(EXIT_USAGE);
        }
    };
    session.connect_mcp().await?;
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
        crate::output::out_line(&serde_json::to_string_pretty(&v)?);
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
) -> anyhow::Result<i32> {
    let session = match Session::build(&args.session, |_| {}).await {
        Ok(s) => s,
        Err(e) => {
            err_line(&format!("toolbelt: {e:#}"));
            return Ok(EXIT_USAGE);
        }
    };
    let Some(entry) = session.tool_settings.mcp_servers.iter().find(|s| s.name == name) else {
        let known: Vec<_> =
            session.tool_settings.mcp_servers.iter().map(|s| s.name.as_str()).collect();
        err_line(&format!(
            "toolbelt: no MCP server named '{name}' in the settings (configured: {})",
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        ));
        return Ok(EXIT_USAGE);
    };
    let spec = match toolbelt_mcp::client::spec(entry) {
        Ok(s) => s,
        Err(e) => {
            err_line(&format!("toolbelt: MCP server '{name}': {e}"));
            return Ok(EXIT_USAGE);
        }
    };
    let (Some(url), Some(store)) = (spec.url().map(String::from), spec.oauth_store()) else {
        err_line(&format!(
            "toolbelt: MCP server '{name}' is a stdio server; OAuth applies to HTTP servers only"
        ));
        return Ok(EXIT_USAGE);
    };
    if logout {
        use rmcp::transport::auth::CredentialStore;
        store.clear().await.map_err(|e| anyhow::anyhow!("{e}"))?;
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
        Err(e) => {
            err_line(&format!("toolbelt: sign-in to '{name}' failed: {e}"));
            Ok(super::EXIT_TOOL_FAILED)
        }
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
async fn fixture(args: &McpArgs) -> anyhow::Result<i32> {
    use toolbelt_mcp::server::fixture::ConformanceServer;
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        on_signal.cancel();
    });
    match args.http {
        Some(addr) => {
            let opts = http::HttpOptions {
                addr,
                bearer_token: args.token.clone(),
                allowed_origins: args.allowed_origins.clone(),
            };
            http::serve_handler(ConformanceServer::default, opts, stop, |a| {
                crate::output::err_line(&format!(
                    "toolbelt: serving the conformance fixture at http://{a}/mcp"
                ));
            })
            .await?;
        }
        None => {
            let service =
                ConformanceServer::default().serve(toolbelt_mcp::server::stdio::stdio()).await?;
            service.waiting().await?;
        }
    }
    Ok(EXIT_OK)
}

pub async fn run(args: McpArgs) -> anyhow::Result<i32> {
    match &args.command {
        Some(crate::cli::McpCommand::List { json }) => return list(&args, *json).await,
        Some(crate::cli::McpCommand::Auth { server, logout, no_browser, scopes }) => {
            return auth(&args, server, *logout, *no_browser, scopes).await
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
                Err(e) => {
                    err_line(&format!("toolbelt: {e}"));
                    Ok(super::EXIT_TOOL_FAILED)
                }
            };
        }
        None => {}
    }
    if args.fixture.is_some() {
        return fixture(&args).await;
    }
    let (p, services) = match parts(&args).await {
        Ok(x) => x,
        Err(e) => {
            err_line(&format!("toolbelt: {e:#}"));
            return Ok(EXIT_USAGE);
        }
    };
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
            use tokio::signal::unix::{signal, SignalKind};
            if let Ok(mut term) = signal(SignalKind::terminate()) {
                term.recv().await;
                on_term.cancel();
            }
        });
    }
    let result = match args.http {
        Some(addr) => {
            let opts = http::HttpOptions {
                addr,
                bearer_token: args
                    .token
                    .clone()
                    .or_else(|| std::env::var("TOOLBELT_MCP_TOKEN").ok())
                    .filter(|t| !t.is_empty()),
                allowed_origins: args.allowed_origins.clone(),
            };
            http::serve(shared, opts, stop.clone(), |a| {
                crate::output::err_line(&format!("toolbelt: serving MCP at http://{a}/mcp"));
            })
            .await
            .map_err(anyhow::Error::from)
        }
        None => serve_stdio(shared, stop.clone()).await,
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

async fn serve_stdio(shared: SharedParts, stop: CancellationToken) -> anyhow::Result<()> {
    let service = ToolbeltServer::new(shared).serve(toolbelt_mcp::server::stdio::stdio()).await?;
    let ct = service.cancellation_token();
    tokio::select! {
        r = service.waiting() => { r?; }
        () = stop.cancelled() => ct.cancel(),
    }
    Ok(())
}
