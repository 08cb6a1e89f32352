//! Issue 35: what an MCP client can make `toolbelt mcp` take on is bounded like every other
//! input.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolbelt_test_support::TempTree;

use super::mcp_session::Mcp;
use super::toolbelt;

/// Every root an MCP client names is opened, checked and granted to commands: 100,000 of them
/// were all taken. More than `MCP_ROOTS` serve nothing, and the call says why.
#[test]
fn a_client_offering_more_than_64_roots_is_told_so() {
    let t = TempTree::new();
    let dirs: Vec<PathBuf> = (0..65)
        .map(|i| {
            let d = t.root().join(format!("r{i}"));
            std::fs::create_dir(&d).unwrap();
            d.canonicalize().unwrap()
        })
        .collect();
    std::fs::write(dirs[0].join("a.txt"), "in the first root\n").unwrap();
    let read = json!({"file_path": dirs[0].join("a.txt")});
    // 64 are served.
    let refs: Vec<&Path> = dirs[..64].iter().map(PathBuf::as_path).collect();
    let mut m = Mcp::start(&t, t.root(), &[], &[], Some(&refs));
    let (text, error) = m.call("read_file", read.clone());
    assert!(!error && text.contains("in the first root"), "{text}");
    // One more and nothing is.
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    m.list_changed(&refs);
    let (text, error) = m.call("read_file", read);
    assert!(error, "{text}");
    assert!(
        text.contains("Nothing is served")
            && text.contains("it offered 65 roots; at most 64 are served"),
        "{text}"
    );
}

/// Issue 35, second attack: an MCP server sending progress without end made `toolbelt call`
/// grow past 23 GB (it went on reading after its timeout) until the kernel killed it; one
/// sending `roots/list` requests without end while never reading its stdin grew it to 1 GB.
/// Under a 500 MB address-space limit (the old code took 656 MB in the 8 s of the second), each
/// call now times out and exits cleanly.
#[test]
fn a_flooding_mcp_server_cannot_exhaust_memory() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/fixtures/server.py");
    for tool in ["flood", "ask_flood"] {
        let t = TempTree::new();
        let args = vec![fixture.display().to_string()];
        let settings = json!({"mcpServers": {"fx": {"command": "python3", "args": args}}});
        std::fs::write(t.home().join("settings.json"), settings.to_string()).unwrap();
        let script = format!(
            "ulimit -v 500000; exec {} call mcp_fx_{tool} '{{}}' --approval-mode yolo --timeout-ms 8000",
            env!("CARGO_BIN_EXE_toolbelt")
        );
        let child = std::process::Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(t.root())
            .env("TOOLBELT_HOME", t.home())
            .env("HOME", t.home())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Its output is read while it runs (a full pipe must not be what stops it); a
        // watchdog ends it if it never does.
        let pid = child.id();
        let (done, watched) = std::sync::mpsc::channel::<()>();
        let dog = std::thread::spawn(move || {
            if watched.recv_timeout(std::time::Duration::from_secs(60)).is_err() {
                let _ = std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status();
                return true;
            }
            false
        });
        let out = child.wait_with_output().unwrap();
        let _ = done.send(());
        assert!(!dog.join().unwrap(), "{tool}: toolbelt call did not end");
        let status = out.status;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            status.code(),
            Some(1),
            "{tool}: {status} {}",
            &stderr[..stderr.len().min(2000)]
        );
        assert!(stderr.contains("timed out"), "{tool}: {}", &stderr[..stderr.len().min(2000)]);
    }
}

/// Issue 35, second attack: `toolbelt mcp --proxy` passed each chunk of a proxied tool's
/// progress to its client on a task of its own; a server flooding progress, to a client that
/// read slowly, grew it to 924 MB. Under a 500 MB limit it now answers the call (timed out)
/// and lives on.
#[test]
fn progress_passed_on_to_a_slow_client_is_bounded() {
    use std::io::{BufRead as _, Write as _};
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/fixtures/server.py");
    let t = TempTree::new();
    let settings = json!({"mcpServers": {"fx": {"command": "python3", "args": [fixture.display().to_string()]}}});
    std::fs::write(t.home().join("settings.json"), settings.to_string()).unwrap();
    let script = format!(
        "ulimit -v 500000; exec {} mcp --proxy --approval-mode yolo",
        env!("CARGO_BIN_EXE_toolbelt")
    );
    let mut child = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(t.root())
        .env("TOOLBELT_HOME", t.home())
        .env("HOME", t.home())
        .env("TOOLBELT_TOOL_CALL_TIMEOUT_MS", "6000")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let send = |w: &mut std::process::ChildStdin, v: serde_json::Value| {
        writeln!(w, "{v}").unwrap();
        w.flush().unwrap();
    };
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "mcp_fx_flood", "arguments": {}, "_meta": {"progressToken": "p"}}}),
    );
    // A slow client: nothing read for a while.
    std::thread::sleep(std::time::Duration::from_secs(7));
    let answer = loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "toolbelt mcp died");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 1 {
            break v;
        }
    };
    assert!(
        answer.to_string().contains("timed out"),
        "{}",
        &answer.to_string()[..300.min(answer.to_string().len())]
    );
    send(&mut stdin, json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    let alive = loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "toolbelt mcp died");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    assert!(alive.get("result").is_some());
    drop(stdin);
    let _ = child.wait();
}

/// Issue 35, second attack: 300 deny rules of `\w{100}N` (30 KB) in an untrusted repository's
/// `.gemini/policies/` made `toolbelt policy check` take 7.4 s and 1.76 GB, compiling them. Now
/// the files are refused when loaded, the file and the limit named.
#[test]
fn policy_patterns_have_a_budget_together() {
    let t = TempTree::new();
    let rule = "[[rule]]\ntoolName = \"run_shell_command\"\nargsPattern = \"\\\\w{100}N\"\ndecision = \"deny\"\npriority = 100\n\n";
    t.file(".gemini/policies/many.toml", rule.repeat(300));
    let r = toolbelt(
        &t,
        &[
            "policy",
            "check",
            "run_shell_command",
            r#"{"command":"echo hi"}"#,
            "--approval-mode",
            "yolo",
        ],
        None,
    );
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(r.stderr.contains("many.toml") && r.stderr.contains("32 MiB"), "{}", r.stderr);
    // A few such rules are fine.
    t.file(".gemini/policies/many.toml", rule.repeat(3));
    let r = toolbelt(
        &t,
        &[
            "policy",
            "check",
            "run_shell_command",
            r#"{"command":"echo hi"}"#,
            "--approval-mode",
            "yolo",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Issue 35, second attack: a server whose 1000 pages each list 2 tools with a 60 KB schema of
/// 3,750 small objects made `toolbelt mcp list` (and `tools list`, and any call) take 3.65 GB:
/// each schema was kept, some 60 times its size. The schemas' values are now bounded per tool
/// and in all, and the list says where it was cut.
#[test]
fn wide_mcp_schemas_are_bounded_while_they_are_read() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/fixtures/server.py");
    let t = TempTree::new();
    let settings = json!({"mcpServers": {"w": {"command": "python3", "args": [fixture.display().to_string(), "--wide-schemas"]}}});
    std::fs::write(t.home().join("settings.json"), settings.to_string()).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v 500000; exec {} mcp list", env!("CARGO_BIN_EXE_toolbelt")))
        .current_dir(t.root())
        .env("TOOLBELT_HOME", t.home())
        .env("HOME", t.home())
        .output()
        .unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("mcp_w_w0_0"), "{stdout}");
    assert!(
        format!("{stdout}{stderr}").contains("values together"),
        "the cut is said: {stdout}\n{stderr}"
    );
}

/// Issue 35 (second attack): a 20 MB file of short lines in the workspace (ten million lines)
/// made `read_file` list every line (217 MB), `read_many_files` the same, and `grep_search "a"`
/// keep every matching line although 100 are shown (745 MB). Each now stays near the file's
/// own size. The peak is the child's, measured by the kernel (`ru_maxrss`).
#[test]
fn a_file_of_ten_million_short_lines_costs_about_its_size() {
    let t = TempTree::new();
    t.file("short.txt", "a\n".repeat(10_400_000));
    for (tool, args) in [
        ("read_file", json!({"file_path": "short.txt"})),
        ("read_many_files", json!({"include": ["short.txt"]})),
        ("grep_search", json!({"pattern": "a"})),
        // Every match asked for: the lines kept are bounded (889 MB for 400,000 matches).
        ("grep_search", json!({"pattern": "a", "total_max_matches": 1_000_000_000u64})),
        // Not found: the lenient matches and the hint held every line (790 MB).
        ("replace", json!({"file_path": "short.txt", "old_string": "zzz", "new_string": "x"})),
    ] {
        let script = "import resource, subprocess, sys\nr = subprocess.run(sys.argv[1:], capture_output=True)\nprint(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, (r.stdout + r.stderr)[:200].decode(errors='replace').replace(' ', '_'))";
        let out = std::process::Command::new("python3")
            .args(["-c", script, env!("CARGO_BIN_EXE_toolbelt"), "call", "--root"])
            .arg(t.root())
            .args([tool, &args.to_string(), "--approval-mode", "auto_edit"])
            .env("TOOLBELT_HOME", t.home())
            .env("HOME", t.home())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let mut words = text.split_whitespace();
        let (code, peak_kb): (i32, u64) = (
            words.next().and_then(|w| w.parse().ok()).unwrap_or(-1),
            words.next().and_then(|w| w.parse().ok()).unwrap_or(u64::MAX),
        );
        let shown = words.next().unwrap_or_default();
        if tool == "replace" {
            assert!(shown.contains("Could_not_find"), "{tool}: {text}");
        } else {
            assert_eq!(code, 0, "{tool}: {text}");
        }
        assert!(peak_kb < 150 << 10, "{tool} peaked at {peak_kb} kB for a 20 MB file");
    }
}

/// Issue 35 (third attack): 2,000 pipelined `read_file` calls of a wide file (answers of
/// about 1 MB), from a client that reads nothing for a while, held 690 MB: 256 requests ran at
/// once, each keeping its answer until written. With 32 places the peak stays far below, and
/// every call is answered.
#[test]
fn pipelined_calls_with_large_answers_hold_a_bounded_amount() {
    let t = TempTree::new();
    t.file("wide.txt", format!("{}\n", "x".repeat(2000)).repeat(2000));
    let script = r#"
import json, subprocess, sys, time, threading
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
N = 300
def sender():
    for i in range(N):
        send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"file_path": "wide.txt"}}})
threading.Thread(target=sender, daemon=True).start()
time.sleep(4)
got = 0
while got < N:
    line = p.stdout.readline()
    if not line:
        break
    if b'"id"' in line[:40]:
        got += 1
peak = next(int(l.split()[1]) for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM"))
p.stdin.close(); p.wait(20)
print(got, peak)
"#;
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            script,
            env!("CARGO_BIN_EXE_toolbelt"),
            "mcp",
            "--approval-mode",
            "yolo",
            "--root",
        ])
        .arg(t.root())
        .env("TOOLBELT_HOME", t.home())
        .env("HOME", t.home())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut words = text.split_whitespace().map(|w| w.parse::<u64>().unwrap_or(0));
    let (got, peak_kb) = (words.next().unwrap_or(0), words.next().unwrap_or(u64::MAX));
    assert_eq!(got, 300, "every call answered: {text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(peak_kb < 256 << 10, "peak {peak_kb} kB");
}

/// Issue 35 (fourth attack, N4): one 56 KB model answer asking for 600 grep_search calls ran
/// them all and held their results together (584 MB). One answer runs the first 64; each
/// other call gets its own response saying it did not run.
#[tokio::test]
async fn one_model_answer_runs_at_most_64_calls() {
    use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};
    let t = TempTree::new();
    t.file("a.txt", "needle\n");
    let calls: Vec<serde_json::Value> = (0..70)
        .map(|i| json!({"functionCall": {"id": format!("c{i}"), "name": "read_file", "args": {"file_path": "a.txt"}}}))
        .collect();
    let fake = FakeModel::start(vec![
        gemini_answer(json!(calls)),
        gemini_answer(json!([{"text": "done"}])),
    ])
    .await;
    let (code, stdout, stderr) = crate::run::output(crate::run::command(
        &t,
        &["read it", "--approval-mode", "yolo"],
        Some(&fake.url),
    ))
    .await;
    assert_eq!((code, stdout.as_str()), (0, "done\n"), "{stderr}");
    let parts = fake.bodies()[1]["contents"][2]["parts"].as_array().unwrap().clone();
    assert_eq!(parts.len(), 70);
    let ran =
        parts.iter().filter(|p| p["functionResponse"]["response"]["output"] == "needle\n").count();
    assert_eq!(ran, 64);
    let told = parts[69]["functionResponse"]["response"]["error"].as_str().unwrap_or_default();
    assert!(told.contains("one answer runs at most 64"), "{told}");
}
