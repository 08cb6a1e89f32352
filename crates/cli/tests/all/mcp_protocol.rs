//! Issue 20: `toolbelt mcp` answers every message by the book, over stdio and HTTP: malformed
//! JSON, invalid UTF-8, an id of `1e400`, an over-long line (40 MiB), a known method without
//! params, an unknown method; and goes on serving.

use std::io::{BufRead, Read, Write};

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;

fn answer(out: &mut impl BufRead) -> Value {
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

fn code_and_id(v: &Value) -> (i64, Value) {
    (v["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error in {v}")), v["id"].clone())
}

#[test]
fn stdio_answers_every_bad_line_and_goes_on() {
    let t = TempTree::new();
    let (mut child, mut stdin, mut out) = crate::mcp_stdio(&t, &[]);
    let cases: Vec<(Vec<u8>, i64, Value)> = vec![
        (b"not json".to_vec(), -32700, Value::Null),
        (b"\xff\xfe{}".to_vec(), -32700, Value::Null),
        (br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#.to_vec(), -32700, Value::Null),
        (br#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#.to_vec(), -32602, json!(2)),
        (
            br#"{"jsonrpc":"2.0","id":"s3","method":"tools/call","params":{"name":7}}"#.to_vec(),
            -32602,
            json!("s3"),
        ),
        (br#"{"jsonrpc":"2.0","id":4,"method":"no/such"}"#.to_vec(), -32601, json!(4)),
        (br#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"1.0","id":6,"method":"ping"}"#.to_vec(), -32600, json!(6)),
        // Found by an adversarial review: these got no answer, or the wrong one.
        (b"{}".to_vec(), -32600, Value::Null),
        (br#"{"foo":1}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0"}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","method":1}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":18,"method":"ping","result":1}"#.to_vec(), -32600, json!(18)),
        (
            br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#.to_vec(),
            -32600,
            json!(9223372036854775808u64),
        ),
    ];
    for (line, code, id) in cases {
        stdin.write_all(&line).unwrap();
        stdin.write_all(b"\n").unwrap();
        let a = answer(&mut out);
        assert_eq!(code_and_id(&a), (code, id.clone()), "{}", String::from_utf8_lossy(&line));
        assert_eq!(a["jsonrpc"], "2.0");
        // Still serving.
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":100,"method":"ping"}}"#).unwrap();
        assert_eq!(answer(&mut out), json!({"jsonrpc": "2.0", "id": 100, "result": {}}));
    }
    // A batch: each of its requests answered with its id, in one array (issue 35, fourth
    // attack: one answer with a null id left the client waiting for ids 5 and 7).
    writeln!(
        stdin,
        r#"[{{"jsonrpc":"2.0","id":5,"method":"ping"}},{{"jsonrpc":"2.0","id":7,"method":"ping"}}]"#
    )
    .unwrap();
    let a = answer(&mut out);
    assert_eq!(code_and_id(&a[0]), (-32600, json!(5)), "{a}");
    assert_eq!(code_and_id(&a[1]), (-32600, json!(7)), "{a}");
    // A notification that cannot be read gets no answer: the next answer is the ping's.
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/whatever","params":7}}"#).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":101,"method":"ping"}}"#).unwrap();
    assert_eq!(answer(&mut out)["id"], 101);
    drop(stdin);
    let _ = child.wait();
}

/// A 40 MiB line was dropped with a log line and its request never answered.
#[test]
fn an_over_long_line_is_answered_with_the_limit_and_its_id() {
    let t = TempTree::new();
    let (mut child, mut stdin, mut out) = crate::mcp_stdio(&t, &[]);
    let writer = std::thread::spawn(move || {
        let head = br#"{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"read_file","arguments":{"file_path":""#;
        stdin.write_all(head).unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..40 {
            stdin.write_all(&chunk).unwrap();
        }
        stdin.write_all(b"\"}}}\n").unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#).unwrap();
        stdin
    });
    let a = answer(&mut out);
    assert_eq!(code_and_id(&a), (-32600, json!("big-1")));
    let message = a["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the limit is 16777216 bytes (toolbelt mcp --max-message-bytes)"),
        "{message}"
    );
    assert_eq!(answer(&mut out)["id"], 2);
    drop(writer.join().unwrap());
    let _ = child.wait();
    // The limit is configurable.
    let (mut child, mut stdin, mut out) = crate::mcp_stdio(&t, &["--max-message-bytes", "300"]);
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"x":"{}"}}}}"#,
        "y".repeat(400)
    );
    writeln!(stdin, "{long}").unwrap();
    let a = answer(&mut out);
    assert_eq!(code_and_id(&a), (-32600, json!(9)));
    assert!(a["error"]["message"].as_str().unwrap().contains("the limit is 300 bytes"));
    drop(stdin);
    let _ = child.wait();
}

/// POST `body` to the server; the status line and the body.
fn post(addr: &str, body: &[u8]) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).unwrap();
    s.write_all(body).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out.lines().next().unwrap_or_default().to_string();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or_default().to_string();
    (status, body)
}

#[test]
fn http_answers_bad_bodies_with_json_rpc_errors() {
    let t = TempTree::new();
    let (mut child, url) = crate::mcp::http_server(&t, &["--max-message-bytes", "5000"]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    for (body, status, code, id) in [
        (b"not json".to_vec(), "400", -32700, Value::Null),
        (b"\xff{}".to_vec(), "400", -32700, Value::Null),
        (br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#.to_vec(), "400", -32700, Value::Null),
        (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(), "400", -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#.to_vec(), "200", -32602, json!(2)),
        (br#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#.to_vec(), "200", -32601, json!(3)),
        (vec![b' '; 6000], "413", -32600, Value::Null),
        (Vec::new(), "400", -32600, Value::Null),
        (b"{}".to_vec(), "400", -32600, Value::Null),
        (
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#.to_vec(),
            "400",
            -32600,
            Value::Null,
        ),
    ] {
        let (got_status, got_body) = post(&addr, &body);
        assert!(
            got_status.contains(status),
            "{got_status} for {}",
            String::from_utf8_lossy(&body[..body.len().min(60)])
        );
        let v: Value =
            serde_json::from_str(&got_body).unwrap_or_else(|e| panic!("{e}: {got_body}"));
        assert_eq!(code_and_id(&v), (code, id));
    }
    // And a good request still works, with a byte-order mark too.
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    assert!(post(&addr, init).0.contains("200"));
    assert!(post(&addr, &[b"\xef\xbb\xbf".as_slice(), init].concat()).0.contains("200"));
    let _ = child.kill();
    let _ = child.wait();
}

/// Issue 21: "Did you mean" over MCP suggested tools the client cannot see (write_file and
/// write_todos are hidden from a client without elicitation in default mode).
#[test]
fn suggestions_name_only_tools_the_client_can_see() {
    let t = TempTree::new();
    let (mut child, mut stdin, mut out) = crate::mcp_stdio(&t, &[]);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"write_fil","arguments":{{}}}}}}"#).unwrap();
    let a = answer(&mut out);
    let text = a["result"]["content"][0]["text"].as_str().unwrap().to_string();
    assert!(text.starts_with("Tool \"write_fil\" not found. Did you mean"), "{text}");
    assert!(!text.contains("\"write_file\"") && !text.contains("\"write_todos\""), "{text}");
    assert!(text.contains("\"read_file\""), "{text}");
    assert_eq!(a["result"]["isError"], true);
    drop(stdin);
    let _ = child.wait();
}

/// Starts `toolbelt mcp` in `cwd` as a client that offers roots (`roots: {listChanged: true}`).
fn client_with_roots(
    t: &TempTree,
    cwd: &std::path::Path,
) -> (std::process::Child, std::process::ChildStdin, std::io::BufReader<std::process::ChildStdout>)
{
    use std::process::Stdio;
    let mut child = crate::command(t, &["mcp"])
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{"roots":{{"listChanged":true}}}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    answer(&mut out);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    (child, stdin, out)
}

/// Answers the server's `roots/list` request with `folders`.
fn give_roots(stdin: &mut impl Write, out: &mut impl BufRead, folders: &[&std::path::Path]) {
    let ask = answer(out);
    assert_eq!(ask["method"], "roots/list", "{ask}");
    let roots: Vec<Value> = folders
        .iter()
        .map(|f| json!({"uri": format!("file://{}", f.display()), "name": "project"}))
        .collect();
    let reply = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": roots}});
    writeln!(stdin, "{reply}").unwrap();
}

fn read(stdin: &mut impl Write, out: &mut impl BufRead, id: u32, path: &std::path::Path) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"file_path": path}}});
    writeln!(stdin, "{call}").unwrap();
    answer(out)["result"].clone()
}

/// Issue 21: MCP roots. The client's roots are the workspace, and `roots/list_changed`
/// moves it; a folder outside them is refused.
#[test]
fn the_clients_roots_are_the_workspace_and_follow_its_changes() {
    let t = TempTree::new();
    let a = TempTree::new();
    let b = TempTree::new();
    a.file("a.txt", "in a\n");
    b.file("b.txt", "in b\n");
    let (mut child, mut stdin, mut out) = client_with_roots(&t, t.root());
    give_roots(&mut stdin, &mut out, &[a.root()]);
    let r = read(&mut stdin, &mut out, 1, &a.root().join("a.txt"));
    assert_eq!(r["content"][0]["text"], "in a\n", "{r}");
    let r = read(&mut stdin, &mut out, 2, &b.root().join("b.txt"));
    assert_eq!(r["isError"], true, "{r}");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}}"#).unwrap();
    give_roots(&mut stdin, &mut out, &[b.root()]);
    let r = read(&mut stdin, &mut out, 3, &b.root().join("b.txt"));
    assert_eq!(r["content"][0]["text"], "in b\n", "{r}");
    let r = read(&mut stdin, &mut out, 4, &a.root().join("a.txt"));
    assert_eq!(r["isError"], true, "{r}");
    drop(stdin);
    let _ = child.wait();
}

/// Issue 21: started in the home folder (some clients start servers there, or in `/`) with
/// no --root and no roots, `list_directory` listed the whole home folder. Now nothing is
/// served, and the answer says how to pass --root.
#[test]
fn the_home_folder_is_not_served_without_root_or_roots() {
    let t = TempTree::new();
    std::fs::write(t.home().join("private.txt"), "mine\n").unwrap();
    let (mut child, mut stdin, mut out) = crate::mcp_stdio_in(&t, t.home(), &[]);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_directory", "arguments": {"dir_path": "."}}});
    writeln!(stdin, "{call}").unwrap();
    let r = answer(&mut out)["result"].clone();
    assert_eq!(r["isError"], true, "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("without --root")
            && text.contains("your home folder")
            && text.contains("Add --root /path/to/project"),
        "{text}"
    );
    assert!(!text.contains("private.txt"));
    drop(stdin);
    let _ = child.wait();
    // With --root the home folder is refused too (issue 46, G7): every file of the account
    // would be the tools'. Asked for by name, it serves.
    let home = t.home().to_str().unwrap();
    let out = crate::command(&t, &["mcp", "--root", home]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("your home folder") && err.contains("TOOLBELT_ALLOW_HOME_WORKSPACE"),
        "{err}"
    );
    let mut c = crate::command(&t, &["mcp", "--root", home]);
    c.current_dir(t.home()).env("TOOLBELT_ALLOW_HOME_WORKSPACE", "1");
    let (mut child, mut stdin, mut out) = crate::mcp_spawn(&mut c);
    writeln!(stdin, "{}", crate::mcp_initialize()).unwrap();
    let _ = answer(&mut out);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    writeln!(stdin, "{call}").unwrap();
    let r = answer(&mut out)["result"].clone();
    assert!(r["content"][0]["text"].as_str().unwrap().contains("private.txt"), "{r}");
    drop(stdin);
    let _ = child.wait();
}

/// Issue 21: a client without elicitation got "Tool execution denied by policy." and no reason
/// or fix.
#[test]
fn a_refusal_says_the_client_cannot_confirm_and_what_changes_it() {
    let t = TempTree::new();
    let (mut child, mut stdin, mut out) = crate::mcp_stdio(&t, &[]);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"file_path": "z.txt", "content": "x"}}});
    writeln!(stdin, "{call}").unwrap();
    let r = answer(&mut out)["result"].clone();
    assert_eq!(r["isError"], true);
    assert_eq!(r["content"][0]["text"], "Tool execution denied by policy.");
    let why = r["content"][1]["text"].as_str().unwrap();
    assert!(
        why.contains("cannot ask you to confirm") && why.contains("--approval-mode auto_edit"),
        "{why}"
    );
    assert!(!t.root().join("z.txt").exists());
    drop(stdin);
    let _ = child.wait();
}

/// Found by an adversarial review: a notification or response before `initialize` made the
/// server exit, and pipelined requests reusing an id lost answers.
#[test]
fn early_notifications_and_reused_ids_do_not_lose_the_server_or_answers() {
    let t = TempTree::new();
    let (mut child, mut stdin, mut out) = crate::mcp_spawn(&mut crate::command(&t, &["mcp"]));
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":99,"result":{{}}}}"#).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    assert_eq!(answer(&mut out)["id"], 0);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    let mut burst = String::new();
    for _ in 0..5 {
        burst.push_str("{\"jsonrpc\":\"2.0\",\"id\":\"dup\",\"method\":\"ping\"}\n");
    }
    stdin.write_all(burst.as_bytes()).unwrap();
    let answers: Vec<Value> = (0..5).map(|_| answer(&mut out)).collect();
    assert!(answers.iter().all(|a| a["id"] == "dup"), "{answers:?}");
    assert!(answers.iter().any(|a| a["result"] == json!({})), "{answers:?}");
    for a in answers.iter().filter(|a| a.get("error").is_some()) {
        assert_eq!(a["error"]["code"], -32600, "{a}");
    }
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":"after","method":"ping"}}"#).unwrap();
    assert_eq!(answer(&mut out)["id"], "after");
    drop(stdin);
    let _ = child.wait();
}

/// Review of the change: rmcp sends no answer for a cancelled request, so its id stayed
/// "pending" and every later request with that id was refused for the rest of the session.
#[test]
fn a_cancelled_requests_id_can_be_used_again() {
    let t = TempTree::new();
    let (mut child, mut stdin, mut out) = crate::mcp_stdio(&t, &["--approval-mode", "yolo"]);
    let slow = json!({"jsonrpc": "2.0", "id": "x", "method": "tools/call",
        "params": {"name": "run_shell_command", "arguments": {"command": "sleep 5"}}});
    writeln!(stdin, "{slow}").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":"x"}}}}"#
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":"x","method":"ping"}}"#).unwrap();
    let a = answer(&mut out);
    assert_eq!(a, json!({"jsonrpc": "2.0", "id": "x", "result": {}}));
    drop(stdin);
    let _ = child.wait();
}

/// Found while profiling issue 22: 50,000 read_file calls written in one go (a client that
/// pipelines, or a file as stdin) got 49,934 answers. A request whose line crossed a boundary of
/// the server's reads while an answer went out was lost, and its client waited forever.
#[test]
fn pipelined_requests_are_all_answered() {
    use std::process::Stdio;
    let t = TempTree::new();
    t.file("small.txt", "line one\n");
    let init = crate::mcp_initialize();
    let mut burst =
        format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    let n = 6000;
    for id in 1..=n {
        let call = if id % 3 == 0 {
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"file_path": "small.txt"}}})
        };
        burst.push_str(&format!("{call}\n"));
    }
    assert!(burst.len() > 6 * 64 * 1024, "{}", burst.len());
    let requests = t.root().join("requests.jsonl");
    std::fs::write(&requests, &burst).unwrap();
    // Two clients: a file as stdin (read on tokio's blocking pool), and a pipe written in
    // small pieces (read by the reactor, which finds it empty in the middle of lines).
    for from_file in [false, true] {
        let stdin = if from_file {
            Stdio::from(std::fs::File::open(&requests).unwrap())
        } else {
            Stdio::piped()
        };
        let mut child =
            crate::command(&t, &["mcp"]).stdin(stdin).stdout(Stdio::piped()).spawn().unwrap();
        let writer = child.stdin.take().map(|mut pipe| {
            let burst = burst.clone();
            std::thread::spawn(move || {
                for piece in burst.as_bytes().chunks(1000) {
                    pipe.write_all(piece).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            })
        });
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut seen = std::collections::BTreeSet::new();
        for line in out.lines() {
            let a: Value = serde_json::from_str(&line.unwrap()).unwrap();
            assert!(a.get("error").is_none() && a["result"]["isError"] != true, "{a}");
            seen.insert(a["id"].as_u64().unwrap());
        }
        if let Some(w) = writer {
            w.join().unwrap();
        }
        let lost: Vec<u64> = (0..=n).filter(|id| !seen.contains(id)).collect();
        assert!(lost.is_empty(), "from a file: {from_file}: {} unanswered: {lost:?}", lost.len());
        let _ = child.wait();
    }
}

/// Found while profiling issue 22: a client that wrote 50,000 read_file calls and read no
/// answer grew the server to 500 MB, a task for every request read. Now the server stops
/// reading once enough requests run or wait, and the client's pipe holds it back; every call
/// is still answered once the client reads.
#[cfg(target_os = "linux")]
#[test]
fn a_client_that_reads_no_answers_cannot_grow_the_server() {
    let t = TempTree::new();
    t.file("small.txt", "line one\n");
    let (mut child, mut stdin, out) = crate::mcp_spawn(&mut crate::command(&t, &["mcp"]));
    let n = 15_000;
    let writer = std::thread::spawn(move || {
        let init = crate::mcp_initialize();
        let mut burst =
            format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
        for id in 1..=n {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"file_path": "small.txt"}}});
            burst.push_str(&format!("{call}\n"));
        }
        stdin.write_all(burst.as_bytes()).unwrap();
    });
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let answered = out.lines().count();
    writer.join().unwrap();
    let _ = child.wait();
    assert_eq!(answered, n + 1, "every call (and initialize) answered");
    assert!(peak_kib < 80 * 1024, "peak {} MiB with {n} calls unread", peak_kib / 1024);
}

/// Found by the review of the stdio limit (issue 22): a client that pipelines more write_file
/// calls than run and wait at once, and answers each confirmation the server asks of it
/// (`elicitation/create`), stalled the server for good: it stopped reading, so the answers the
/// running calls waited for were never read. Every call is answered now.
#[test]
fn a_client_answering_confirmations_is_never_stalled_by_its_pipelined_calls() {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    let t = TempTree::new();
    let (mut child, stdin, out) = crate::mcp_spawn(&mut crate::command(&t, &["mcp"]));
    let stdin = Arc::new(Mutex::new(stdin));
    let mut init = crate::mcp_initialize();
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let opening =
        format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    stdin.lock().unwrap().write_all(opening.as_bytes()).unwrap();
    let (lines, from_server) = std::sync::mpsc::channel();
    std::thread::spawn(move || out.lines().map_while(Result::ok).try_for_each(|l| lines.send(l)));
    let n = 1_400;
    let writer = {
        let stdin = stdin.clone();
        std::thread::spawn(move || {
            for id in 1..=n {
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": "write_file", "arguments": {"file_path": format!("f{id}.txt"), "content": "x"}}});
                stdin.lock().unwrap().write_all(format!("{call}\n").as_bytes()).unwrap();
            }
        })
    };
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < n {
        let Ok(line) = from_server.recv_timeout(Duration::from_secs(20)) else {
            let _ = child.kill();
            panic!("stalled after {} of {n} answers", answered.len());
        };
        let m: Value = serde_json::from_str(&line).unwrap();
        if m.get("method").is_some() && m.get("id").is_some() {
            let decline = json!({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "decline"}});
            stdin.lock().unwrap().write_all(format!("{decline}\n").as_bytes()).unwrap();
        } else if let Some(id) = m["id"].as_u64().filter(|id| *id > 0) {
            answered.insert(id);
        }
    }
    writer.join().unwrap();
    drop(stdin);
    let _ = child.wait();
}

/// Found by the same review: the transport's own answers (an unknown method here) were written
/// inside the read that rmcp drops when other work is ready, so with requests pipelined among
/// them some were lost: 4 pairs of (unknown method, ping) got 7 answers.
#[test]
fn the_transports_own_answers_are_not_lost_among_pipelined_requests() {
    let t = TempTree::new();
    let mut burst = format!("{}\n", crate::mcp_initialize());
    burst.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for i in 0..200 {
        burst
            .push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":\"u{i}\",\"method\":\"no/such\"}}\n"));
        burst.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":\"p{i}\",\"method\":\"ping\"}}\n"));
    }
    let requests = t.root().join("requests.jsonl");
    std::fs::write(&requests, burst).unwrap();
    let out = crate::command(&t, &["mcp"])
        .stdin(std::fs::File::open(&requests).unwrap())
        .output()
        .unwrap();
    let ids: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 401, "{} distinct answers of 401", ids.len());
}

/// Every line `toolbelt mcp` writes until it exits, after `input` and the end of input (at
/// most 30 s).
fn answers_after_input_ends(args: &[&str], input: &[Value]) -> Vec<Value> {
    use std::time::{Duration, Instant};
    let t = TempTree::new();
    let (mut child, mut stdin, out) = crate::mcp_spawn(&mut crate::command(&t, args));
    for m in input {
        stdin.write_all(format!("{m}\n").as_bytes()).unwrap();
    }
    drop(stdin);
    let (lines, from_server) = std::sync::mpsc::channel();
    std::thread::spawn(move || out.lines().map_while(Result::ok).try_for_each(|l| lines.send(l)));
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = Vec::new();
    while let Ok(line) =
        from_server.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        got.push(serde_json::from_str(&line).unwrap());
    }
    let _ = child.kill();
    let _ = child.wait();
    got
}

/// Found by the second review of issue 22 (A1): once the client's input ended, a call still
/// running 5 s later was dropped without an answer (rmcp's drain at the end of a session), so
/// `toolbelt mcp < calls.jsonl` lost its slow calls; and a call waiting for the client to
/// confirm it when the input ended was dropped the same way. Every call is answered now: a
/// question the client can no longer answer counts as declined.
#[test]
fn every_call_is_answered_after_the_client_closes_its_input() {
    let opening =
        |init: Value| vec![init, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})];
    let mut input = opening(crate::mcp_initialize());
    input.push(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_shell_command", "arguments": {"command": "sleep 6; echo slow-done"}}}));
    let got = answers_after_input_ends(&["mcp", "--approval-mode", "yolo"], &input);
    let slow = got.iter().find(|m| m["id"] == 1);
    assert!(slow.is_some_and(|m| m.to_string().contains("slow-done")), "{got:?}");

    let mut init = crate::mcp_initialize();
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let mut input = opening(init);
    input.push(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"file_path": "f.txt", "content": "x"}}}));
    let got = answers_after_input_ends(&["mcp"], &input);
    assert!(got.iter().any(|m| m["method"] == "elicitation/create"), "{got:?}");
    let refused = got.iter().find(|m| m["id"] == 1 && m.get("method").is_none());
    assert!(refused.is_some_and(|m| m["result"]["isError"] == true), "{got:?}");
}
