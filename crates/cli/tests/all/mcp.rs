//! `toolbelt mcp` driven by the rmcp client: over stdio (the child process) and over HTTP.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;
use toolbelt_test_support::TempTree;

fn command(t: &TempTree, extra: &[&str]) -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_toolbelt")).configure(|c| {
        c.arg("mcp")
            .args(extra)
            .current_dir(t.root())
            .env("TOOLBELT_HOME", t.home())
            .env("HOME", t.home());
    })
}

/// Starts `toolbelt mcp --http 127.0.0.1:0 EXTRA...` and returns it with the URL it announced.
pub(crate) fn http_server(t: &TempTree, extra: &[&str]) -> (std::process::Child, String) {
    let mut child = crate::command(t, &["mcp", "--http", "127.0.0.1:0"])
        .args(extra)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 256];
    while !seen.contains("/mcp") {
        let n = stderr.read(&mut buf).unwrap();
        assert!(n > 0, "{seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let url = format!("http://{}", seen.split("http://").nth(1).unwrap().trim());
    // Dropping `stderr` here closes the pipe: the server must cope (see the test below).
    drop(stderr);
    (child, url)
}

#[tokio::test]
async fn stdio_serves_the_builtin_tools() {
    let t = TempTree::new();
    t.file("notes.txt", "line one\nline two\n");
    let start = Instant::now();
    let client = ().serve(TokioChildProcess::new(command(&t, &[])).unwrap()).await.unwrap();
    let init = start.elapsed();
    assert!(init < Duration::from_secs(5), "{init:?}");
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.clone().unwrap().name, "toolbelt");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    // A client without elicitation gets the headless set: read and search tools.
    assert_eq!(
        names,
        [
            "update_topic",
            "list_directory",
            "read_file",
            "grep_search",
            "glob",
            "enter_plan_mode",
            "read_many_files"
        ]
    );
    let args = json!({"file_path": "notes.txt"}).as_object().unwrap().clone();
    let r = client
        .call_tool(CallToolRequestParams::new("read_file").with_arguments(args))
        .await
        .unwrap();
    let text = r.content[0].as_text().unwrap().text.clone();
    assert_eq!(text, "line one\nline two\n");
    client.cancel().await.unwrap();
}

/// CPU time (user + system, in clock ticks) a process has used so far.
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses): state is the 1st, utime the
    // 12th and stime the 13th.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// After each answer the stdio server polls briefly for the next request instead of going
/// straight to sleep; calls in a row are answered, and once they stop it uses no CPU.
#[cfg(target_os = "linux")]
#[test]
fn stdio_server_answers_calls_in_a_row_and_then_idles() {
    use std::io::BufRead;
    let t = TempTree::new();
    t.file("notes.txt", "line one\n");
    let (mut child, mut stdin, mut stdout) = crate::mcp_stdio(&t, &[]);
    let mut line = String::new();
    for id in 1..=300 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"file_path": "notes.txt"}}});
        writeln!(stdin, "{call}").unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["content"][0]["text"], "line one\n", "{line}");
    }
    let before = cpu_ticks(child.id());
    std::thread::sleep(Duration::from_secs(1));
    let idle = cpu_ticks(child.id()) - before;
    // A clock tick is 10 ms: polling on after the last answer would show up as ~100.
    assert!(idle <= 2, "{idle} ticks of CPU in one idle second");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[tokio::test]
async fn yolo_mode_serves_everything() {
    let t = TempTree::new();
    let client =
        ().serve(TokioChildProcess::new(command(&t, &["--approval-mode", "yolo"])).unwrap())
            .await
            .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    // All but ask_user, which nobody could answer.
    assert_eq!(tools.len(), 16);
    let args = json!({"command": "echo from-mcp"}).as_object().unwrap().clone();
    let r = client
        .call_tool(CallToolRequestParams::new("run_shell_command").with_arguments(args))
        .await
        .unwrap();
    assert!(r.content[0].as_text().unwrap().text.contains("Output: from-mcp"));
    client.cancel().await.unwrap();
}

/// Issue 16: `save_memory` was marked `readOnlyHint: true` (it writes `~/.gemini/GEMINI.md`;
/// clients that auto-approve read-only tools let it write unasked) and `run_shell_command`
/// `openWorldHint: false`. Every built-in tool's hints, from what it really does:
/// (read-only, destructive, idempotent, open world).
#[tokio::test]
async fn every_builtin_tool_has_honest_hints() {
    /// (read-only, destructive, idempotent, open world).
    type Hints = (bool, bool, bool, bool);
    let expected: &[(&str, Hints)] = &[
        ("update_topic", (true, false, true, false)),
        ("list_directory", (true, false, true, false)),
        ("read_file", (true, false, true, false)),
        ("grep_search", (true, false, true, false)),
        ("glob", (true, false, true, false)),
        ("read_many_files", (true, false, true, false)),
        ("list_background_processes", (true, false, true, false)),
        ("read_background_output", (true, false, true, false)),
        ("web_fetch", (true, false, true, true)),
        ("google_web_search", (true, false, true, true)),
        ("replace", (false, true, false, false)),
        ("write_file", (false, true, false, false)),
        ("run_shell_command", (false, true, false, true)),
        ("save_memory", (false, false, false, false)),
        ("write_todos", (false, false, true, false)),
        ("enter_plan_mode", (false, false, false, false)),
        ("exit_plan_mode", (false, false, false, false)),
    ];
    let t = TempTree::new();
    let client =
        ().serve(TokioChildProcess::new(command(&t, &["--approval-mode", "yolo"])).unwrap())
            .await
            .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let mut wrong = Vec::new();
    for tool in &tools {
        let name = tool.name.as_ref();
        let a = tool.annotations.clone().unwrap_or_default();
        let got = (
            a.read_only_hint == Some(true),
            a.destructive_hint == Some(true),
            a.idempotent_hint == Some(true),
            a.open_world_hint == Some(true),
        );
        match expected.iter().find(|(n, _)| *n == name) {
            Some((_, want)) if *want == got => {}
            Some((_, want)) => wrong.push(format!("{name}: got {got:?}, want {want:?}")),
            None => wrong.push(format!("{name}: no expected hints in this test (add them)")),
        }
    }
    // google_web_search is served only when a model can answer it (`toolbelt run`).
    for (name, _) in expected.iter().filter(|(n, _)| *n != "google_web_search") {
        if !tools.iter().any(|t| t.name == *name) {
            wrong.push(format!("{name}: not served"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    client.cancel().await.unwrap();
}

#[test]
fn http_refuses_foreign_origins_and_missing_tokens() {
    let t = TempTree::new();
    std::fs::write(t.home().join("token"), "abc\n").unwrap();
    let token_file = t.home().join("token");
    let (mut child, url) = http_server(&t, &["--token-file", token_file.to_str().unwrap()]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let post = |headers: &str| {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(s, "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out.lines().next().unwrap_or_default().to_string()
    };
    assert!(post("").contains("401"), "no token");
    assert!(post("Authorization: Bearer nope\r\n").contains("401"), "wrong token");
    assert!(
        post("Authorization: Bearer abc\r\nOrigin: http://evil.example\r\n").contains("403"),
        "foreign origin"
    );
    assert!(post("Authorization: Bearer abc\r\n").contains("200"), "good request");
    let _ = child.kill();
    let _ = child.wait();
}

/// Issue 17: `--http 0.0.0.0:PORT` served everyone with no token and no warning (a second
/// address on the machine ran `id` in yolo mode); `--token` was visible in the process list;
/// sessions were unbounded (20,000 `initialize` requests took the server past 1 GiB).
#[test]
fn http_off_loopback_needs_a_token_and_sessions_are_bounded() {
    let t = TempTree::new();
    let r = crate::toolbelt(&t, &["mcp", "--http", "0.0.0.0:0"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("TOOLBELT_MCP_TOKEN"), "{}", r.stderr);
    let r = crate::toolbelt(&t, &["mcp", "--http", "127.0.0.1:0", "--token", "abc"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("process list"), "{}", r.stderr);

    let (mut child, url) = http_server(&t, &["--max-sessions", "3"]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let init = || {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(s, "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    let answers: Vec<String> = (0..5).map(|_| init()).collect();
    let ok = answers.iter().filter(|a| a.starts_with("HTTP/1.1 200")).count();
    let refused: Vec<&String> = answers.iter().filter(|a| a.starts_with("HTTP/1.1 503")).collect();
    assert_eq!(ok, 3, "{answers:?}");
    assert_eq!(refused.len(), 2, "{answers:?}");
    assert!(refused[0].contains("too many open sessions"), "{}", refused[0]);
    let _ = child.kill();
    let _ = child.wait();
}

/// Issue 17: 20,000 `initialize` requests took the server from 12 MiB to over 1 GiB. Sessions
/// are capped: its memory stays under 100 MiB.
#[cfg(target_os = "linux")]
#[test]
fn twenty_thousand_initialize_requests_stay_under_100_mib() {
    let t = TempTree::new();
    let (mut child, url) = http_server(&t, &[]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut refused = 0;
    for _ in 0..20_000 {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        let _ = s.read_exact(&mut head);
        if head.ends_with(b"503") {
            refused += 1;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let rss_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(refused > 0, "the session cap was never reached");
    assert!(rss_kib < 100 * 1024, "RSS {rss_kib} KiB after 20,000 initialize requests");
}

#[test]
fn configured_servers_join_the_registry_over_stdio_and_http() {
    let t = TempTree::new();
    t.file("notes.txt", "from the workspace\n");
    // An HTTP server: another toolbelt.
    let (mut http, url) = http_server(&t, &["--approval-mode", "yolo"]);
    let settings = json!({"mcpServers": {
        "self": {"command": env!("CARGO_BIN_EXE_toolbelt"), "args": ["mcp", "--approval-mode", "yolo"], "excludeTools": ["run_shell_command"]},
        "web": {"httpUrl": url},
        "broken": {"command": "/no/such/mcp-server"}
    }});
    std::fs::write(t.home().join("settings.json"), settings.to_string()).unwrap();

    let r = crate::toolbelt(&t, &["mcp", "list", "--json"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let server = |n: &str| v.as_array().unwrap().iter().find(|s| s["name"] == n).unwrap().clone();
    assert_eq!(server("self")["state"], "connected");
    let me = server("self");
    let tools: Vec<&str> =
        me["tools"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert!(
        tools.contains(&"mcp_self_read_file") && !tools.contains(&"mcp_self_run_shell_command"),
        "{tools:?}"
    );
    assert_eq!(server("web")["state"], "connected");
    assert_eq!(server("broken")["state"], "failed");
    assert!(r.stderr.contains("MCP server 'broken' is unavailable"), "{}", r.stderr);

    for tool in ["mcp_self_read_file", "mcp_web_read_file"] {
        let r = crate::toolbelt(
            &t,
            &["call", tool, r#"{"file_path":"notes.txt"}"#, "--approval-mode", "yolo"],
            None,
        );
        assert_eq!(r.code, 0, "{tool}: {}", r.stderr);
        assert_eq!(
            r.stdout, "<untrusted_context>\nfrom the workspace\n\n</untrusted_context>\n",
            "{tool}"
        );
    }
    // MCP tools have no rule in the defaults: asked about, so refused headless.
    let r =
        crate::toolbelt(&t, &["call", "mcp_self_read_file", r#"{"file_path":"notes.txt"}"#], None);
    assert_eq!(r.code, 3, "{}", r.stdout);
    // Issue 16: the hint told to use auto_edit, which does not help; it names what does.
    assert!(
        r.stderr.contains("\"trust\": true in mcpServers.self") && r.stderr.contains("mcp.allowed"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("auto_edit"), "{}", r.stderr);
    let _ = http.kill();
    let _ = http.wait();
}

#[test]
fn http_server_keeps_answering_when_its_stderr_is_closed() {
    let t = TempTree::new();
    let (mut child, url) = http_server(&t, &[]);
    // Regression: with stderr's reader gone, a warning log line panicked the request handler
    // and the client got no response at all.
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    for _ in 0..2 {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(s, "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 403"), "{out:?}");
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn mcp_auth_signs_in_and_the_server_then_connects() {
    use std::io::BufRead;
    let t = TempTree::new();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/fixtures/oauth_server.py");
    let mut server = std::process::Command::new("python3")
        .arg(script)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().strip_prefix("PORT ").unwrap().to_string();
    let settings =
        json!({"mcpServers": {"secure": {"httpUrl": format!("http://127.0.0.1:{port}/mcp")}}});
    std::fs::write(t.home().join("settings.json"), settings.to_string()).unwrap();

    let r = crate::toolbelt(&t, &["mcp", "list", "--json"], None);
    assert_eq!(r.json()[0]["state"], "failed");
    assert!(r.stderr.contains("toolbelt mcp auth secure"), "{}", r.stderr);

    let mut auth = crate::command(
        &t,
        &["mcp", "auth", "secure", "--no-browser", "--scope", "files:read files:write"],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = std::io::BufReader::new(auth.stderr.take().unwrap());
    let mut url = String::new();
    while !url.trim_start().starts_with("http") {
        url.clear();
        assert!(stderr.read_line(&mut url).unwrap() > 0, "no sign-in URL printed");
    }
    // The browser: the fixture's /authorize redirects to toolbelt's callback at once.
    let browse = std::process::Command::new("python3")
        .args(["-c", "import sys, urllib.request; urllib.request.urlopen(sys.argv[1])", url.trim()])
        .status()
        .unwrap();
    assert!(browse.success());
    let out = auth.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Signed in to 'secure'"));
    // The scopes given with --scope were asked for.
    let stats = std::process::Command::new("python3")
        .args(["-c", "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())"])
        .arg(format!("http://127.0.0.1:{port}/stats"))
        .output()
        .unwrap();
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["authorizations"][0]["scope"], "files:read files:write");

    let r = crate::toolbelt(&t, &["mcp", "list", "--json"], None);
    assert_eq!(r.json()[0]["state"], "connected", "{}", r.stderr);
    assert_eq!(r.json()[0]["tools"][0], "mcp_secure_whoami");
    let r = crate::toolbelt(&t, &["mcp", "auth", "secure", "--logout"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = crate::toolbelt(&t, &["mcp", "list", "--json"], None);
    assert_eq!(r.json()[0]["state"], "failed");
    let _ = server.kill();
    let _ = server.wait();
}
