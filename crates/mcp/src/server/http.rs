//! Streamable HTTP: `POST/GET/DELETE /mcp` through rmcp's service, behind a bearer-token check
//! (when a token is configured). Bound to loopback by default; Host and Origin headers are
//! checked against the bound address, so a web page cannot reach the server through DNS
//! rebinding.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use toolbelt_core::limits::{MESSAGE_VALUES, PARSED_BYTES_PER_VALUE};

use super::{SharedParts, ToolbeltServer};

/// How the HTTP server runs.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required as `Authorization: Bearer <token>` when set.
    pub bearer_token: Option<String>,
    /// Extra allowed browser origins (besides the loopback ones for the bound port).
    pub allowed_origins: Vec<String>,
    /// Sessions open at once; a new `initialize` beyond this is refused (503) until one ends
    /// (sessions idle for 5 minutes end by themselves).
    pub max_sessions: usize,
    /// Connections open at once from one address (see [`super::limits`]).
    pub per_client_connections: usize,
    /// A connection with no traffic either way for this long is closed.
    pub idle_timeout: std::time::Duration,
    /// Largest request body; a longer one is answered 413 with a JSON-RPC error naming it.
    pub max_message_bytes: usize,
    /// A request's header lines must all arrive within this long of its first byte (a client
    /// sending a header line every few seconds held a connection for ever; issue 35).
    pub header_timeout: std::time::Duration,
    /// A request's whole body must arrive within this long, plus a second per MiB of the
    /// message limit.
    pub body_timeout: std::time::Duration,
}

/// The default of [`HttpOptions::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 256;

impl Default for HttpOptions {
    /// Loopback on a free port, no token, the default limits.
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            bearer_token: None,
            allowed_origins: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            per_client_connections: super::limits::DEFAULT_PER_CLIENT,
            idle_timeout: super::limits::DEFAULT_IDLE,
            max_message_bytes: super::lines::DEFAULT_MAX_MESSAGE_BYTES,
            header_timeout: super::limits::DEFAULT_HEADER_TIMEOUT,
            body_timeout: super::limits::DEFAULT_BODY_TIMEOUT,
        }
    }
}

/// A JSON-RPC error as an HTTP answer.
fn rpc_error(status: StatusCode, body: &serde_json::Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// The request bodies all connections may be reading and parsing at once, in KiB: each body
/// takes its size while it is read, and what parsing it takes (its values at
/// `PARSED_BYTES_PER_VALUE`) until rmcp has read it.
const BODIES_KIB: u32 = 96 << 10;

/// The budget of [`BODIES_KIB`], shared by every server of the process.
fn bodies() -> &'static tokio::sync::Semaphore {
    static BODIES: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    BODIES.get_or_init(|| tokio::sync::Semaphore::new(BODIES_KIB as usize))
}

/// Every POST body is judged as the stdio transport judges a line (see [`super::lines`]):
/// what is not JSON or not a request is answered 400 with the JSON-RPC error, a request for an
/// unknown method or with bad params gets its JSON-RPC error, a body over the limit 413.
async fn judge_body(
    max: usize,
    body_deadline: std::time::Duration,
    origins: Arc<Vec<String>>,
    req: Request,
    next: Next,
) -> Response {
    use super::lines::{Verdict, error, judge};
    // A foreign Origin is refused by rmcp's check (403) before any body is looked at.
    let foreign = req
        .headers()
        .get(header::ORIGIN)
        .is_some_and(|o| o.to_str().map_or(true, |o| !origins.iter().any(|a| a == o)));
    if req.method() != axum::http::Method::POST || foreign {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    // The body's deadline grows with what it says it is (a second per MiB; a body of unknown
    // length is taken at the limit): declaring 16 MB and trickling it held a place 46 s.
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .unwrap_or(max as u64)
        .min(max as u64);
    let body_deadline = body_deadline + std::time::Duration::from_secs(declared >> 20);
    let invalid =
        |why: String| error(serde_json::Value::Null, -32600, format!("Invalid Request: {why}"));
    // Bodies being read and judged share one budget of memory (32 bodies of 16 MiB at once
    // took 534 MiB, issue 47's attack): a body waits for its share within its deadline.
    let share = u32::try_from(declared.div_ceil(1 << 10).max(1)).unwrap_or(u32::MAX);
    let share = share.min(BODIES_KIB);
    let waited = tokio::time::timeout(body_deadline, bodies().acquire_many(share)).await;
    let Ok(Ok(_share)) = waited else {
        let why = "the server is reading other request bodies; send it again shortly".to_string();
        return rpc_error(StatusCode::SERVICE_UNAVAILABLE, &invalid(why));
    };
    // The whole body within its deadline: a client trickling bytes is cut, not waited for.
    let read = tokio::time::timeout(body_deadline, axum::body::to_bytes(body, max)).await;
    let Ok(read) = read else {
        super::limits::count_slow_client("its request body");
        let why = format!("the request body did not arrive within {} s", body_deadline.as_secs());
        let mut r = rpc_error(StatusCode::REQUEST_TIMEOUT, &invalid(why));
        r.headers_mut().insert(header::CONNECTION, axum::http::HeaderValue::from_static("close"));
        return r;
    };
    let Ok(mut bytes) = read else {
        let why = format!(
            "the message is over the limit of {max} bytes (toolbelt mcp --max-message-bytes)"
        );
        return rpc_error(StatusCode::PAYLOAD_TOO_LARGE, &invalid(why));
    };
    // rmcp reads the body as it is; judge reads it without a byte-order mark.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes = bytes.slice(3..);
    }
    let bad = |why: &str| rpc_error(StatusCode::BAD_REQUEST, &invalid(why.to_string()));
    // What parsing it will take (a message within the budget of values; past it, the judge
    // refuses it unparsed), from the same budget, held until rmcp has read it.
    let values = toolbelt_core::json_in::count_values(&bytes).min(MESSAGE_VALUES);
    let parsed_kib = (values * PARSED_BYTES_PER_VALUE).div_ceil(1 << 10);
    let parsed_kib = u32::try_from(parsed_kib).unwrap_or(u32::MAX).min(BODIES_KIB - share);
    let waited = tokio::time::timeout(body_deadline, bodies().acquire_many(parsed_kib)).await;
    let Ok(Ok(_parsing)) = waited else {
        let why = "the server is reading other requests; send it again shortly".to_string();
        return rpc_error(StatusCode::SERVICE_UNAVAILABLE, &invalid(why));
    };
    match judge(&bytes) {
        // A batch: one error for the request (over stdio each of its requests is answered).
        Verdict::Answer(serde_json::Value::Array(_)) => bad(
            "batches are not supported (MCP 2025-06-18 removed them); send one message per request",
        ),
        Verdict::Answer(answer) => {
            let code = answer["error"]["code"].as_i64().unwrap_or(0);
            let status = if code == -32700 || code == -32600 {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            rpc_error(status, &answer)
        }
        Verdict::Ignore if bytes.iter().all(u8::is_ascii_whitespace) => bad("the body is empty"),
        // A notification or response the server cannot read: rmcp would answer 415 in text.
        Verdict::Ignore => bad("a notification or response the server cannot read"),
        Verdict::Message(_) => {
            // Answering from here on (its body is in): not closed to make room for another.
            let guard = parts
                .extensions
                .get::<axum::extract::ConnectInfo<super::limits::Conn>>()
                .map(|c| c.0.answering());
            let response =
                next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await;
            match guard {
                Some(guard) => guarded(response, guard),
                None => response,
            }
        }
    }
}

fn unauthorized(msg: &'static str) -> Response {
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], msg).into_response()
}

/// Serves the registry until `stop` fires; `bound` learns the address actually bound (port 0
/// picks one).
pub async fn serve(
    parts: SharedParts,
    opts: HttpOptions,
    stop: CancellationToken,
    bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    serve_handler(move || ToolbeltServer::new(parts.clone()), opts, stop, bound).await
}

/// Serves any handler (one per session) until `stop` fires.
pub async fn serve_handler<S: rmcp::ServerHandler>(
    factory: impl Fn() -> S + Send + Sync + 'static,
    opts: HttpOptions,
    stop: CancellationToken,
    bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    let local = listener.local_addr()?;
    bound(local);
    let port = local.port();
    let mut origins = vec![
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
        format!("http://[::1]:{port}"),
    ];
    origins.extend(opts.allowed_origins.iter().cloned());
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "[::1]".to_string(),
        "::1".to_string(),
    ];
    if !local.ip().is_loopback() {
        hosts.push(local.ip().to_string());
    }
    let mut config = StreamableHttpServerConfig::default();
    // rmcp's own ceiling agrees with the one the body was judged by (its 4 MiB answered a
    // judged 5 MiB request with a plain-text 413).
    config.max_request_body_bytes = opts.max_message_bytes.max(1);
    config.allowed_hosts = hosts;
    let judged_origins = Arc::new(origins.clone());
    config.allowed_origins = origins;
    config.cancellation_token = stop.child_token();
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(factory()), sessions.clone(), config);
    let token = opts.bearer_token.clone();
    let max_sessions = opts.max_sessions.max(1);
    let auth = move |req: Request, next: Next| {
        let token = token.clone();
        let sessions = sessions.clone();
        async move {
            if let Some(want) = token {
                let got = req
                    .headers()
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "));
                match got {
                    Some(g) if constant_time_eq(g.as_bytes(), want.as_bytes()) => {}
                    Some(_) => return unauthorized("invalid bearer token"),
                    None => return unauthorized("missing bearer token"),
                }
            }
            // A request without a session id starts one: bounded, so a client cannot grow
            // the server without end (20,000 `initialize` requests took it past 1 GiB).
            let starts_session = req.method() == axum::http::Method::POST
                && !req.headers().contains_key("mcp-session-id");
            if starts_session && sessions.sessions.read().await.len() >= max_sessions {
                let why = format!(
                    "too many open sessions ({max_sessions}); close one or try again later"
                );
                let body = super::lines::error(serde_json::Value::Null, -32000, why);
                return rpc_error(StatusCode::SERVICE_UNAVAILABLE, &body);
            }
            next.run(req).await
        }
    };
    let max_bytes = opts.max_message_bytes.max(1);
    let body_deadline = opts.body_timeout;
    // The body is judged only once the token is (layers added last run first).
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(move |req: Request, next: Next| {
            judge_body(max_bytes, body_deadline, judged_origins.clone(), req, next)
        }))
        .layer(axum::middleware::from_fn(auth))
        .layer(axum::middleware::from_fn(answering));
    let listener = super::limits::BoundedListener::new(
        listener,
        opts.per_client_connections,
        opts.idle_timeout,
    )
    .with_header_timeout(opts.header_timeout);
    let app = app.into_make_service_with_connect_info::<super::limits::Conn>();
    axum::serve(listener, app).with_graceful_shutdown(async move { stop.cancelled().await }).await
}

/// Counts a request's connection as answering it, to the end of its answer's body: such a
/// connection is not closed to make room for another. An event stream (`GET`) is not counted,
/// and a `POST` only once its body is in (`judge_body`): 40 connections trickling bodies held
/// every place (issue 35, fifth attack).
async fn answering(
    axum::extract::ConnectInfo(conn): axum::extract::ConnectInfo<super::limits::Conn>,
    req: Request,
    next: Next,
) -> Response {
    use axum::http::Method;
    if req.method() == Method::GET || req.method() == Method::POST {
        return next.run(req).await;
    }
    let guard = conn.answering();
    guarded(next.run(req).await, guard)
}

/// `response`, holding `guard` until its body is done.
fn guarded(response: Response, guard: super::limits::Answering) -> Response {
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, axum::body::Body::new(super::limits::Guarded::new(body, guard)))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
