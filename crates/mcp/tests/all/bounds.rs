//! What a server sends is bounded while it is read (issue 35).

use serde_json::json;
use toolbelt_core::limits::MCP_MESSAGE_VALUES;

use crate::client::{call, clients, ctx, stdio};

/// Issue 35: rmcp parsed a server's whole message at some 30 times its size (a 12 MB tool
/// list took 350 MB). An answer of 300,000 JSON values (600 KB) is now refused before it is
/// parsed, at once and saying why, and the server stays usable.
#[tokio::test]
async fn an_answer_of_too_many_values_fails_at_once_saying_why() {
    let c = clients(vec![stdio("fx", &["--values"], 20_000)]).await;
    refused_at_once(&c, "mcp_fx_values", "mcp_fx_echo").await;
    c.shutdown().await;
    // The same over Streamable HTTP (an answer as an event stream) and legacy SSE.
    use toolbelt_mcp::client::Transport;
    for (mode, name) in [("--streamable", "web"), ("--sse", "old")] {
        let (mut child, base) = crate::client::http_fixture("server.py", &[mode, "--values"]);
        let transport = match mode {
            "--sse" => Transport::Sse { url: format!("{base}/sse"), headers: Default::default() },
            _ => Transport::Http { url: format!("{base}/mcp"), headers: Default::default() },
        };
        let c = clients(vec![crate::client::remote(name, transport)]).await;
        refused_at_once(&c, &format!("mcp_{name}_values"), &format!("mcp_{name}_echo")).await;
        c.shutdown().await;
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// `tool` fails at once, naming the limit, and `echo` still works.
async fn refused_at_once(c: &toolbelt_mcp::client::McpClients, tool: &str, echo: &str) {
    let started = std::time::Instant::now();
    let r = call(c, tool, json!({}), ctx()).await;
    let error = r.error.unwrap_or_else(|| panic!("{tool} was not refused: {:?}", r.llm_content));
    assert!(
        error.message.contains(&format!("JSON values, over the limit of {MCP_MESSAGE_VALUES}")),
        "{}",
        error.message
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let r = call(c, echo, json!({"text": "still here"}), ctx()).await;
    assert!(r.error.is_none(), "{:?}", r.error);
}

/// One HTTP/1.1 exchange on `s`: the answer's head and body (chunked or sized), or `None` when
/// the connection closed first.
async fn exchange(s: &mut tokio::net::TcpStream, request: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.write_all(request.as_bytes()).await.ok()?;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let head = text[..end].to_ascii_lowercase();
            let body = &text[end + 4..];
            // An event stream's answer has no end: its head is enough.
            if request.starts_with("GET ") && head.contains("text/event-stream") {
                return Some(text);
            }
            let sized = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse::<usize>().ok());
            if sized.is_some_and(|n| body.len() >= n) || body.ends_with("0\r\n\r\n") {
                return Some(text);
            }
        }
        match tokio::time::timeout(std::time::Duration::from_secs(5), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return None,
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// A server allowing every call, with four places per address.
async fn four_places()
-> (toolbelt_core::testing::TempTree, std::net::SocketAddr, tokio_util::sync::CancellationToken) {
    use toolbelt_core::policy::{ApprovalMode, Decision, Rule};
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let (d, p) = crate::server::parts(allow, ApprovalMode::Default);
    let opts =
        toolbelt_mcp::server::http::HttpOptions { per_client_connections: 4, ..Default::default() };
    let (addr, stop) = crate::server::serve_http(p, opts).await;
    (d, addr, stop)
}

/// Three new clients in turn each get their `initialize` answered.
async fn new_clients_get_in(addr: std::net::SocketAddr) {
    for _ in 0..3 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let answer = exchange(&mut s, &initialize()).await;
        assert!(
            answer.as_deref().is_some_and(|a| a.starts_with("HTTP/1.1 200")),
            "a new client was refused: {answer:?}"
        );
    }
}

fn initialize() -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Issue 35: every local client shares 127.0.0.1, so one client holding an event stream
/// (`GET`) on every one of the address's places locked every other client out (40 sessions
/// with unread streams held all 32, and new requests were reset). Past the limit the
/// connection idle longest that is not answering a request is closed for the new one.
#[tokio::test]
async fn event_streams_on_every_place_do_not_lock_other_clients_out() {
    let (_d, addr, stop) = four_places().await;
    let mut streams = Vec::new();
    for _ in 0..4 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let answer = exchange(&mut s, &initialize()).await.expect("initialized");
        let id = answer
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("mcp-session-id:"))
            .map(|l| l["mcp-session-id:".len()..].trim().to_string())
            .expect("a session id");
        let get = format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n"
        );
        let stream = exchange(&mut s, &get).await.expect("a stream");
        assert!(stream.starts_with("HTTP/1.1 200"), "{stream}");
        streams.push(s);
    }
    // Another client, while all four places hold event streams nobody reads.
    new_clients_get_in(addr).await;
    stop.cancel();
}

/// Issue 35 (fifth attack): `tools/call` id 5 (slow), `notifications/cancelled` for 5, then a
/// new `tools/call` id 5: while the first was still winding down, the only answer with id 5
/// was the cancelled call's "[Operation Cancelled]", and the new request got none. The new
/// request is answered with its own result, and the cancelled one not at all (as MCP asks).
#[tokio::test]
async fn a_request_reusing_a_cancelled_requests_id_gets_its_own_answer() {
    use std::sync::Arc;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    use toolbelt_core::policy::{ApprovalMode, Decision, Rule};
    use toolbelt_core::testing::{Behaviour, EchoTool, FakeTool, Journal};
    let allow = vec![Rule::new("*", Decision::Allow, 1.0, "test")];
    let (_d, mut p) = crate::server::parts(allow, ApprovalMode::Default);
    let stuck = FakeTool::new(
        "stuck",
        // A mutating call runs alone: the next call waits until it has wound down.
        toolbelt_core::Kind::Execute,
        Behaviour::Stubborn,
        Arc::new(Journal::default()),
    );
    let tools: Vec<Arc<dyn toolbelt_core::Tool>> =
        vec![Arc::new(stuck), Arc::new(EchoTool::named("read_file"))];
    p.registry = Arc::new(toolbelt_core::Registry::builder().tools(tools).build().unwrap());
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, answers) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let t = toolbelt_mcp::server::lines::LineTransport::new(server_in, server_out, 1 << 20);
        let server = toolbelt_mcp::server::ToolbeltServer::new(toolbelt_mcp::server::shared(p));
        if let Ok(s) = rmcp::ServiceExt::serve(server, t).await {
            let _ = s.waiting().await;
        }
    });
    let mut answers = tokio::io::BufReader::new(answers);
    let mut send = async |v: serde_json::Value| {
        to_server.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
    .await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let call = |tool: &str| {
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": tool, "arguments": {"text": "fresh"}}})
    };
    send(call("stuck")).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}),
    )
    .await;
    send(call("read_file")).await;
    let mut fives = Vec::new();
    let until = tokio::time::Instant::now() + std::time::Duration::from_secs(6);
    loop {
        let mut line = String::new();
        match tokio::time::timeout_at(until, answers.read_line(&mut line)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => break,
        }
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 5 {
            fives.push(v);
        }
    }
    assert_eq!(fives.len(), 1, "{fives:?}");
    assert!(fives[0].to_string().contains("fresh"), "{}", fives[0]);
}

/// Issue 35 (fifth attack): 40 connections trickling a request's header lines or its body
/// (no session, no token needed) held every place of 127.0.0.1: a fresh client got in 8 times
/// in 175. A connection still sending its request is not answering one: it makes room.
#[tokio::test]
async fn connections_trickling_a_request_do_not_lock_other_clients_out() {
    use tokio::io::AsyncWriteExt;
    let (_d, addr, stop) = four_places().await;
    // Every place: first half a header each, then (once new clients took those places) a
    // body trickled after whole headers.
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
    let mut slow = Vec::new();
    for trickled in [head.to_string(), format!("{head}Content-Length: 1000\r\n\r\n{{")] {
        for _ in 0..4 {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.write_all(trickled.as_bytes()).await.unwrap();
            slow.push(s);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        for s in &mut slow {
            let _ = s.write_all(b" ").await;
        }
        new_clients_get_in(addr).await;
    }
    stop.cancel();
}
