//! Issue 36, protocol hygiene of `toolbelt acp`, with JSON-RPC lines written by hand: bad
//! input gets JSON-RPC errors and the connection goes on; an editor that goes away ends its
//! sessions and every process they started.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};

pub(crate) struct Agent {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Agent {
    pub(crate) fn start(t: &TempTree, url: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolbelt"))
            .arg("acp")
            .args(extra)
            .current_dir(t.root())
            .env("TOOLBELT_HOME", t.home())
            .env("HOME", t.home())
            .env("GEMINI_API_KEY", "placeholder")
            .env("GOOGLE_GEMINI_BASE_URL", url)
            .env_remove("GEMINI_MODEL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        Self { child, stdin, out }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let w = self.stdin.as_mut().unwrap();
        writeln!(w, "{line}").unwrap();
        w.flush().unwrap();
    }

    /// The next message with this id (notifications in between are passed over).
    pub(crate) fn answer(&mut self, id: &Value) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "the agent closed its output");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("method").is_none() && v["id"] == *id {
                return v;
            }
        }
    }

    pub(crate) fn initialized(&mut self, t: &TempTree) -> String {
        self.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}).to_string());
        assert!(self.answer(&json!(0))["result"]["protocolVersion"] == 1);
        let cwd = t.root().canonicalize().unwrap();
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}).to_string());
        let r = self.answer(&json!(1));
        r["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{r}")).to_string()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn running(marker: &str) -> Vec<String> {
    let out = Command::new("ps").args(["-eo", "pid,args"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(marker) && !l.contains("ps -eo"))
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_messages_get_json_rpc_errors_and_the_connection_goes_on() {
    let t = TempTree::new();
    let fake = FakeModel::start(vec![]).await;
    let mut a = Agent::start(&t, &fake.url, &[]);
    tokio::task::block_in_place(|| {
        let sid = a.initialized(&t);
        a.send("{not json");
        let e = a.answer(&Value::Null);
        assert_eq!(e["error"]["code"], -32700, "{e}");
        a.send(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "session/fly", "params": {}}).to_string(),
        );
        assert_eq!(a.answer(&json!(2))["error"]["code"], -32601);
        a.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}}).to_string());
        let e = a.answer(&json!(3));
        assert_eq!(e["error"]["code"], -32002, "{e}");
        a.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {"sessionId": sid}}).to_string());
        assert_eq!(a.answer(&json!(4))["error"]["code"], -32602, "a prompt without its content");
        a.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "session/set_mode", "params": {"sessionId": sid, "modeId": "turbo"}}).to_string());
        assert_eq!(a.answer(&json!(5))["error"]["code"], -32602);
        a.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "session/load", "params": {"sessionId": "../../etc/passwd", "cwd": t.root(), "mcpServers": []}}).to_string());
        assert_eq!(
            a.answer(&json!(6))["error"]["code"],
            -32002,
            "an id that is a path is no session"
        );
        a.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}}).to_string());
        assert_eq!(a.answer(&json!(7))["error"]["code"], -32602);
        // Issue 46 (G7): an editor's `cwd` of the home folder or `/` served every token of the
        // account; it is refused with what to do.
        for (id, cwd) in [(73, t.home().canonicalize().unwrap()), (74, "/".into())] {
            a.send(&json!({"jsonrpc": "2.0", "id": id, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}).to_string());
            let e = a.answer(&json!(id));
            assert!(e.get("error").is_some(), "{e}");
            assert!(e.to_string().contains("TOOLBELT_ALLOW_HOME_WORKSPACE"), "{e}");
        }
        // Issue 35: a model name went into the model API's path as it came, reaching other
        // endpoints of the server.
        a.send(&json!({"jsonrpc": "2.0", "id": 71, "method": "session/set_config_option", "params": {"sessionId": sid, "configId": "model", "value": "../../../_control/reset?"}}).to_string());
        let e = a.answer(&json!(71));
        assert_eq!(e["error"]["code"], -32602, "{e}");
        assert!(e.to_string().contains("is not a Gemini model"), "{e}");
        a.send(&json!({"jsonrpc": "2.0", "id": 72, "method": "session/set_model", "params": {"sessionId": sid, "modelId": "gemini-2.5-pro/../../x"}}).to_string());
        assert_eq!(a.answer(&json!(72))["error"]["code"], -32602);
        // Still serving.
        a.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "session/set_mode", "params": {"sessionId": sid, "modeId": "plan"}}).to_string());
        assert!(a.answer(&json!(8)).get("result").is_some());
    });
}

/// Issue 35 (second attack on the ACP agent): a byte that is not UTF-8 ended the agent
/// ("stream did not contain valid UTF-8"), a line with no end was held whole (1.2 GB took it
/// past 2 GB) and a line that did not parse was echoed back in full. Now the request with a
/// bad byte is answered with its id, a line over 32 MiB is dropped as it is read (its parse
/// error is short) and the agent goes on, its peak memory far below the line's size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bytes_and_huge_lines_do_not_end_the_agent_or_fill_its_memory() {
    let t = TempTree::new();
    let fake = FakeModel::start(vec![]).await;
    let mut a = Agent::start(&t, &fake.url, &[]);
    tokio::task::block_in_place(|| {
        let sid = a.initialized(&t);
        let raw = |a: &mut Agent, bytes: &[u8]| {
            let w = a.stdin.as_mut().unwrap();
            w.write_all(bytes).unwrap();
            w.write_all(b"\n").unwrap();
            w.flush().unwrap();
        };
        let mut bad = format!(r#"{{"jsonrpc":"2.0","id":9,"method":"session/set_mode","params":{{"sessionId":"{sid}","modeId":"plan"}},"note":""#).into_bytes();
        bad.extend(b"\xff\xfe\"}");
        raw(&mut a, &bad);
        assert!(a.answer(&json!(9)).get("result").is_some(), "answered with its id");
        let huge = vec![b'x'; 40 << 20];
        raw(&mut a, &huge);
        let e = a.answer(&Value::Null);
        assert_eq!(e["error"]["code"], -32700, "{e}");
        assert!(
            e.to_string().len() < 4096,
            "the parse error is short: {} bytes",
            e.to_string().len()
        );
        a.send(&json!({"jsonrpc": "2.0", "id": 10, "method": "session/set_mode", "params": {"sessionId": sid, "modeId": "default"}}).to_string());
        assert!(a.answer(&json!(10)).get("result").is_some(), "still serving");
        let status = std::fs::read_to_string(format!("/proc/{}/status", a.child.id())).unwrap();
        let peak_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        assert!(peak_kb < 100 << 10, "peak {peak_kb} kB after a 40 MiB line");
    });
}

/// An editor that closes the connection while a command runs: toolbelt ends the session,
/// the command with it, and exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_goes_away_ends_its_sessions_and_their_processes() {
    let t = TempTree::new();
    let marker = "sleep 23.75";
    let fake = FakeModel::start(vec![gemini_answer(json!([
        {"functionCall": {"name": "run_shell_command", "args": {"command": format!("{marker}; echo never")}}}
    ]))])
    .await;
    let mut a = Agent::start(&t, &fake.url, &["--approval-mode", "yolo"]);
    tokio::task::block_in_place(|| {
        let sid = a.initialized(&t);
        a.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "wait"}]}}).to_string());
        let deadline = Instant::now() + Duration::from_secs(20);
        while running(marker).is_empty() {
            assert!(Instant::now() < deadline, "the command never started");
            std::thread::sleep(Duration::from_millis(50));
        }
        a.stdin = None; // the editor is gone
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = a.child.try_wait().unwrap() {
                assert!(status.success(), "{status}");
                break;
            }
            assert!(Instant::now() < deadline, "toolbelt acp did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while !running(marker).is_empty() {
            assert!(Instant::now() < deadline, "left running: {:?}", running(marker));
            std::thread::sleep(Duration::from_millis(50));
        }
    });
}

/// Issue 35 (third attack): 2,000 `session/new` requests of 90 bytes each held 379 MB, every
/// session open for good. Past 32 open sessions the one used longest ago is closed; it stays
/// stored and `session/load` opens it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_32_sessions_the_one_used_longest_ago_is_closed_and_can_be_loaded() {
    let t = TempTree::new();
    let fake = FakeModel::start(vec![]).await;
    let mut a = Agent::start(&t, &fake.url, &[]);
    tokio::task::block_in_place(|| {
        let first = a.initialized(&t);
        let cwd = t.root().canonicalize().unwrap();
        for i in 0..32 {
            let id = 100 + i;
            a.send(&json!({"jsonrpc": "2.0", "id": id, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}).to_string());
            assert!(a.answer(&json!(id))["result"]["sessionId"].is_string());
        }
        a.send(&json!({"jsonrpc": "2.0", "id": 200, "method": "session/set_mode", "params": {"sessionId": first, "modeId": "plan"}}).to_string());
        assert_eq!(a.answer(&json!(200))["error"]["code"], -32002, "the first session was closed");
        a.send(&json!({"jsonrpc": "2.0", "id": 201, "method": "session/load", "params": {"sessionId": first, "cwd": cwd, "mcpServers": []}}).to_string());
        let r = a.answer(&json!(201));
        assert!(r.get("result").is_some(), "and loads again: {r}");
        a.send(&json!({"jsonrpc": "2.0", "id": 202, "method": "session/set_mode", "params": {"sessionId": first, "modeId": "plan"}}).to_string());
        assert!(a.answer(&json!(202)).get("result").is_some());
    });
}
