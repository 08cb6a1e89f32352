//! The server driven by rmcp clients: over an in-memory stream (stdio framing) and over
//! Streamable HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolbelt_core::policy::{ApprovalMode, Decision, Rule, default_rules};
use toolbelt_core::testing::{Behaviour, EchoTool, FakeTool, Journal, test_env};
use toolbelt_core::{Kind, ModelFamily, Registry, Tool};
use toolbelt_mcp::server::{self, ServerParts, ToolbeltServer};

pub(crate) fn parts(
    rules: Vec<Rule>,
    mode: ApprovalMode,
) -> (toolbelt_core::testing::TempTree, ServerParts) {
    parts_with(rules, mode, Arc::new(Journal::default()))
}

fn parts_with(
    rules: Vec<Rule>,
    mode: ApprovalMode,
    journal: Arc<Journal>,
) -> (toolbelt_core::testing::TempTree, ServerParts) {
    let (dir, env) = test_env();
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(EchoTool::named("read_file")),
        Arc::new(FakeTool::new(
            "edit",
            Kind::Edit,
            Behaviour::Echo { delay: Duration::ZERO },
            journal.clone(),
        )),
        Arc::new(FakeTool::new("slow", Kind::Read, Behaviour::Cooperative, journal)),
    ];
    let registry = Arc::new(Registry::builder().tools(tools).build().unwrap());
    let workspace = env.workspace.primary().to_path_buf();
    let p = ServerParts {
        registry,
        rules,
        workspace,
        trusted: true,
        env,
        hooks: None,
        mode,
        family: ModelFamily::Legacy,
        excluded: Vec::new(),
        client_roots: false,
        root_refused: None,
        trust: None,
        yolo_disabled: false,
    };
    (dir, p)
}

#[derive(Clone, Default)]
struct Client {
    elicit: Option<&'static str>,
    asked: Arc<Mutex<Vec<String>>>,
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.elicit.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("test-client", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        let mut r = ElicitResult::new(ElicitationAction::Accept);
        r.content = Some(json!({"decision": self.elicit.unwrap_or("deny")}));
        Ok(r)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params.message.unwrap_or_default());
    }
}

async fn connect(
    p: ServerParts,
    client: Client,
) -> rmcp::service::RunningService<RoleClient, Client> {
    let (a, b) = tokio::io::duplex(1 << 16);
    let server = ToolbeltServer::new(server::shared(p));
    tokio::spawn(async move {
        if let Ok(s) = server.serve(a).await {
            let _ = s.waiting().await;
        }
    });
    client.serve(b).await.unwrap()
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn lists_tools_with_hints_and_calls_them_through_policy() {
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let (_d, p) = parts(allow, ApprovalMode::Default);
    let c = connect(p, Client::default()).await;
    let tools = c.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["read_file", "edit", "slow"]);
    let hints = |n: &str| tools.iter().find(|t| t.name == n).unwrap().annotations.clone().unwrap();
    assert_eq!(hints("read_file").read_only_hint, Some(true));
    assert_eq!(hints("edit").destructive_hint, Some(true));
    assert_eq!(hints("edit").read_only_hint, Some(false));

    let r = c
        .call_tool(
            CallToolRequestParams::new("read_file").with_arguments(args(json!({"text": "hi"}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "hi");
    assert_ne!(r.is_error, Some(true));
    let r = c
        .call_tool(CallToolRequestParams::new("read_file").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("must have required property 'text'"), "{}", text(&r));
    let r = c
        .call_tool(CallToolRequestParams::new("nope").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("not found"), "{}", text(&r));
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn without_elicitation_asking_is_refused_and_hidden() {
    let (_d, p) = parts(default_rules().rules, ApprovalMode::Default);
    let c = connect(p, Client::default()).await;
    let names: Vec<String> =
        c.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["read_file"], "headless: tools that would ask are not offered");
    let r = c
        .call_tool(CallToolRequestParams::new("edit").with_arguments(args(json!({"text": "x"}))))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    // Upstream's text first, then why and what changes it (issue 21).
    let t = text(&r);
    assert!(
        t.starts_with(
            "Tool execution denied by policy.\nThis MCP client cannot ask you to confirm"
        ),
        "{t}"
    );
    assert!(t.contains("--approval-mode yolo"), "{t}");
}

#[tokio::test]
async fn with_elicitation_the_person_decides() {
    let ask = vec![
        Rule::new("edit", Decision::AskUser, 2.0, "test"),
        Rule::new("*", Decision::Allow, 1.0, "test"),
    ];
    let (_d, p) = parts(ask.clone(), ApprovalMode::Default);
    let yes = Client { elicit: Some("allow once"), ..Client::default() };
    let c = connect(p, yes.clone()).await;
    let r = c
        .call_tool(CallToolRequestParams::new("edit").with_arguments(args(json!({"text": "x"}))))
        .await
        .unwrap();
    assert_eq!(text(&r), "x");
    assert_eq!(yes.asked.lock().unwrap().len(), 1);
    assert!(yes.asked.lock().unwrap()[0].starts_with("Confirm: edit"), "{:?}", yes.asked);

    let (_d2, p) = parts(ask, ApprovalMode::Default);
    let no = Client { elicit: Some("deny"), ..Client::default() };
    let c = connect(p, no).await;
    let r = c
        .call_tool(CallToolRequestParams::new("edit").with_arguments(args(json!({"text": "x"}))))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("Operation Cancelled"), "{}", text(&r));
}

#[tokio::test]
async fn output_streams_as_progress() {
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let (_d, p) = parts(allow, ApprovalMode::Default);
    let client = Client::default();
    let c = connect(p, client.clone()).await;
    let req = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("read_file").with_arguments(args(json!({"text": "streamed"}))),
    ));
    let handle = c
        .send_cancellable_request(req, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    let _ = handle.await_response().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        client.progress.lock().unwrap().iter().any(|m| m == "streamed"),
        "{:?}",
        client.progress
    );
}

#[tokio::test]
async fn cancellation_from_the_client_stops_the_call() {
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let journal = Arc::new(Journal::default());
    let (_d, p) = parts_with(allow, ApprovalMode::Default, journal.clone());
    let c = connect(p, Client::default()).await;
    let req = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("slow").with_arguments(args(json!({"text": "x"}))),
    ));
    let handle = c
        .send_cancellable_request(req, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    assert!(!journal.worker_stopped.load(std::sync::atomic::Ordering::SeqCst));
    handle.cancel(None).await.unwrap();
    while !journal.worker_stopped.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(started.elapsed() < Duration::from_secs(2), "the tool's work did not stop");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The server is still there for the next call.
    let r = c
        .call_tool(
            CallToolRequestParams::new("read_file").with_arguments(args(json!({"text": "after"}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "after");
}

/// Serves `p` over Streamable HTTP with `opts`; the address it listens on, and how to stop it.
pub(crate) async fn serve_http(
    p: ServerParts,
    opts: toolbelt_mcp::server::http::HttpOptions,
) -> (std::net::SocketAddr, tokio_util::sync::CancellationToken) {
    let stop = tokio_util::sync::CancellationToken::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let shared = server::shared(p);
    let s2 = stop.clone();
    tokio::spawn(async move {
        let _ = toolbelt_mcp::server::http::serve(shared, opts, s2, |a| {
            let _ = tx.send(a);
        })
        .await;
    });
    (rx.await.unwrap(), stop)
}

#[tokio::test]
async fn streamable_http_with_a_bearer_token() {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let (_d, p) = parts(allow, ApprovalMode::Default);
    let opts = toolbelt_mcp::server::http::HttpOptions {
        bearer_token: Some("s3cret".into()),
        ..Default::default()
    };
    let (addr, stop) = serve_http(p, opts).await;
    let url = format!("http://{addr}/mcp");
    toolbelt_core::tls::ready();
    let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header("s3cret");
    let c =
        Client::default().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let r = c
        .call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(args(json!({"text": "over http"}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "over http");
    c.cancel().await.unwrap();

    let bad = StreamableHttpClientTransportConfig::with_uri(url).auth_header("wrong");
    assert!(
        Client::default().serve(StreamableHttpClientTransport::from_config(bad)).await.is_err()
    );
    stop.cancel();
}

#[cfg(feature = "conformance-fixture")]
#[tokio::test]
async fn the_conformance_fixture_answers_as_the_suite_expects() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    let (a, b) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(s) = toolbelt_mcp::server::fixture::ConformanceServer::default().serve(a).await {
            let _ = s.waiting().await;
        }
    });
    let c = Client::default().serve(b).await.unwrap();
    let tools = c.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "test_simple_text"));
    let schema = &tools.iter().find(|t| t.name == "json_schema_2020_12_tool").unwrap().input_schema;
    assert!(schema.contains_key("$schema") && schema.contains_key("$defs"));
    let r = c.call_tool(CallToolRequestParams::new("test_simple_text")).await.unwrap();
    assert_eq!(text(&r), "This is a simple text response for testing.");
    let r = c.call_tool(CallToolRequestParams::new("test_error_handling")).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    let r =
        c.read_resource(ReadResourceRequestParams::new("test://template/123/data")).await.unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v["contents"][0]["text"],
        r#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#
    );
    let mut p = GetPromptRequestParams::new("test_prompt_with_arguments");
    p.arguments = Some(args(json!({"arg1": "hello", "arg2": "world"})));
    let r = c.get_prompt(p).await.unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='hello', arg2='world'"
    );
}

#[cfg(feature = "conformance-fixture")]
#[tokio::test]
async fn probe_calls_every_tool_of_an_http_server() {
    let stop = tokio_util::sync::CancellationToken::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let opts = toolbelt_mcp::server::http::HttpOptions::default();
    let s2 = stop.clone();
    tokio::spawn(async move {
        let _ = toolbelt_mcp::server::http::serve_handler(
            toolbelt_mcp::server::fixture::ConformanceServer::default,
            opts,
            s2,
            |a| {
                let _ = tx.send(a);
            },
        )
        .await;
    });
    let addr = rx.await.unwrap();
    let results =
        toolbelt_mcp::client::probe::probe(&format!("http://{addr}/mcp"), &Default::default())
            .await
            .unwrap();
    let ok = |name: &str| results.iter().find(|r| r.tool == name).unwrap().ok;
    assert!(
        ok("test_simple_text")
            && ok("test_tool_with_progress")
            && ok("test_elicitation_sep1034_defaults")
    );
    assert!(!ok("test_error_handling"), "an isError result counts as a failure");
    let defaults =
        &results.iter().find(|r| r.tool == "test_elicitation_sep1034_defaults").unwrap().summary;
    assert!(
        defaults.contains("John Doe"),
        "elicitations are answered with the defaults: {defaults}"
    );
    stop.cancel();
}

/// Issue 17: slow clients held connections with no header timeout, and one client could open
/// as many as it liked. Connections from one address are bounded and an idle one is closed.
#[tokio::test]
async fn http_connections_are_bounded_per_client_and_closed_when_idle() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let (_d, p) = parts(allow, ApprovalMode::Default);
    let opts = toolbelt_mcp::server::http::HttpOptions {
        per_client_connections: 2,
        idle_timeout: std::time::Duration::from_millis(400),
        ..Default::default()
    };
    let (addr, stop) = serve_http(p, opts).await;
    // Two silent connections are kept (for now); a third from the same address takes the
    // place of the one idle longest (the first), which is closed.
    let mut first = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let mut a = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut b = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut buf = [0u8; 16];
    let closed =
        tokio::time::timeout(std::time::Duration::from_millis(300), first.read(&mut buf)).await;
    assert!(
        matches!(closed, Ok(Ok(0)) | Ok(Err(_))),
        "the first connection stays open: {closed:?}"
    );
    let kept = tokio::time::timeout(std::time::Duration::from_millis(100), b.read(&mut buf)).await;
    assert!(kept.is_err(), "the newest connection was closed: {kept:?}");
    // Half a header, then nothing: the connection is closed once idle.
    a.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let started = std::time::Instant::now();
    let closed = tokio::time::timeout(std::time::Duration::from_secs(5), a.read(&mut buf)).await;
    assert!(matches!(closed, Ok(Ok(0)) | Ok(Err(_))), "{closed:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    drop(b.shutdown().await);
    stop.cancel();
}

/// Issue 35, finding 3: the header and body read timeouts were an idle timer that restarted
/// at every byte, so a header line every few seconds kept a connection for ever (32 of them
/// locked out every other local client). Headers and body each have a deadline now.
#[tokio::test]
async fn a_slow_client_is_cut_at_the_header_and_body_deadlines() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let (_d, p) = parts(allow, ApprovalMode::Default);
    let opts = toolbelt_mcp::server::http::HttpOptions {
        header_timeout: std::time::Duration::from_millis(800),
        body_timeout: std::time::Duration::from_millis(800),
        max_message_bytes: 1 << 20,
        ..Default::default()
    };
    let before = toolbelt_mcp::server::limits::slow_clients();
    let (addr, stop) = serve_http(p, opts).await;
    // A header line every 300 ms: the idle timer never fires, the header deadline does.
    let start = std::time::Instant::now();
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let closed = async {
        let mut buf = [0u8; 1024];
        for i in 0.. {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            if s.write_all(format!("X-Slow-{i}: 1\r\n").as_bytes()).await.is_err() {
                return;
            }
            if let Ok(Ok(0) | Err(_)) =
                tokio::time::timeout(std::time::Duration::from_millis(1), s.read(&mut buf)).await
            {
                return;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), closed)
        .await
        .expect("a client trickling header lines kept its connection");
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
    // A body trickled after complete headers: cut at the body deadline with 408.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{",
    )
    .await
    .unwrap();
    let answer = async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let _ = s.write_all(b" ").await;
            match tokio::time::timeout(std::time::Duration::from_millis(5), s.read(&mut buf)).await
            {
                Ok(Ok(0)) | Ok(Err(_)) => return got,
                Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
                Err(_) => {}
            }
        }
    };
    let got = tokio::time::timeout(std::time::Duration::from_secs(10), answer)
        .await
        .expect("a client trickling its body kept its connection");
    assert!(
        String::from_utf8_lossy(&got).starts_with("HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(toolbelt_mcp::server::limits::slow_clients() >= before + 2);
    stop.cancel();
}
