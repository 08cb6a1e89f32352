//! Issue 47: every message is measured before it is parsed, at every front door. A JSON message
//! of tiny values (`[0,0,…]`) just under a door's byte limit took gigabytes to parse (MCP over
//! stdio: one 15 MiB `tools/call` peaked at 4.5 GB and kept 2.9 GB; `call` with 60 MiB on
//! stdin 16 GB; ACP one 31 MiB message 2.5 GB; `run` one 8 MiB function call 3.0 GB). Each
//! door now refuses such a message saying which limit it passed (with the request's id where
//! there is one), goes on serving, peaks under 256 MiB and gives back what a large accepted
//! message took.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer, openai_answer};

use super::status_kb;

/// The issue's ceiling on a door's peak resident memory, and on what it may keep afterwards.
const PEAK_KB: u64 = 256 << 10;
const KEPT_KB: u64 = 64 << 10;

/// `0,0,…,0`, about `bytes` long.
fn zeros(bytes: usize) -> String {
    let mut s = "0,".repeat(bytes / 2);
    s.pop();
    s
}

/// A `tools/call` of `tool` whose arguments carry `extra` (and `args`) as the list `"x"`.
fn call(id: u64, tool: &str, args: Value, list: &str) -> String {
    let mut args = args.to_string();
    args.pop();
    let sep = if args.len() > 1 { "," } else { "" };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}{sep}"x":[{list}]}}}}}}"#
    )
}

/// `toolbelt mcp` over stdio, spoken to line by line.
struct Stdio_ {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Stdio_ {
    fn start(t: &TempTree) -> Self {
        let mut child = super::command(t, &["mcp", "--approval-mode", "yolo"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut s = Self { child, stdin, out };
        s.send(super::mcp_initialize().to_string().as_bytes());
        s.answer(&json!(0));
        s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        s
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&mut self, id: &Value) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "the server closed its output");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("method").is_none() && v["id"] == *id {
                return v;
            }
        }
    }

    fn ping(&mut self, id: u64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string().as_bytes());
        assert!(self.answer(&json!(id)).get("result").is_some(), "still serving");
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resident memory of `pid` once what a large message took could be given back.
fn settled_rss(pid: u32) -> u64 {
    std::thread::sleep(Duration::from_millis(2500));
    status_kb(pid, "VmRSS")
}

#[test]
fn mcp_stdio_a_fifteen_mib_call_of_tiny_values_is_refused_and_memory_comes_back() {
    let t = TempTree::new();
    t.file("a.txt", "alpha\n");
    let mut s = Stdio_::start(&t);
    s.ping(1);
    let before = status_kb(s.child.id(), "VmRSS");
    s.send(call(2, "write_todos", json!({}), &zeros(15 << 20)).as_bytes());
    let a = s.answer(&json!(2));
    assert_eq!(a["error"]["code"], -32600, "{a}");
    let message = a["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("more than 100000 JSON values"), "{message}");
    s.ping(3);
    // A message just within the budget, of the values that cost the most, is read, run and
    // answered, and what it took is given back.
    let nested = vec![r#"{"a":{"a":{"a":0}}}"#; 24_000].join(",");
    let within = call(4, "read_file", json!({"file_path": "a.txt"}), &nested);
    s.send(within.as_bytes());
    let a = s.answer(&json!(4));
    assert!(a.get("result").is_some(), "{:.300}", a.to_string());
    s.ping(5);
    let peak = status_kb(s.child.id(), "VmHWM");
    assert!(peak < PEAK_KB, "peak {peak} kB");
    let after = settled_rss(s.child.id());
    assert!(after < before + KEPT_KB, "{before} kB before, {after} kB after");
}

#[test]
fn mcp_http_a_body_of_tiny_values_is_refused_with_its_id() {
    let t = TempTree::new();
    let (mut child, url) = super::mcp::http_server(&t, &[]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let post = |body: &str| {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(s, "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).unwrap();
        s.write_all(body.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    let answer = post(&call(7, "write_todos", json!({}), &zeros((16 << 20) - 4096)));
    assert!(answer.starts_with("HTTP/1.1 400"), "{:.300}", answer);
    assert!(answer.contains(r#""id":7"#) && answer.contains("more than 100000 JSON values"));
    let init = post(&super::mcp_initialize().to_string());
    assert!(init.starts_with("HTTP/1.1 200"), "still serving: {init:.300}");
    let peak = status_kb(child.id(), "VmHWM");
    assert!(peak < PEAK_KB, "peak {peak} kB");
    let _ = child.kill();
    let _ = child.wait();
}

/// `toolbelt call write_todos -` with 46 MiB of tiny values on stdin (60 MiB took 16 GB): a usage
/// error that names the limit, within the memory ceiling (the peak of the waited-for child,
/// fed from a file so that nothing of the test's own memory is counted).
#[test]
fn call_arguments_of_tiny_values_on_stdin_are_refused_naming_the_limit() {
    let t = TempTree::new();
    let run = |zeros_count: usize| {
        let file = t.home().join("args.json");
        let mut body = b"{\"todos\":[".to_vec();
        body.extend(b"0,".repeat(zeros_count));
        body.extend(b"0]}");
        std::fs::write(&file, body).unwrap();
        let out = super::command(&t, &["call", "write_todos", "-"])
            .stdin(std::fs::File::open(&file).unwrap())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) = run(23 << 20);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("ARGS was not read: it holds more than 100000 JSON values"),
        "{stderr}"
    );
    // SAFETY: getrusage fills the struct it is given.
    #[allow(unsafe_code)]
    let peak = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        u64::try_from(usage.ru_maxrss).unwrap_or(u64::MAX)
    };
    assert!(peak < PEAK_KB, "peak {peak} kB");
    // Past the byte limit the input is not read whole.
    let (code, stderr) = run(25 << 20);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("longer than the limit of 50331648 bytes"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_a_message_of_tiny_values_is_answered_with_its_id_and_the_agent_goes_on() {
    let t = TempTree::new();
    let fake = FakeModel::start(vec![]).await;
    let mut a = super::acp_protocol::Agent::start(&t, &fake.url, &[]);
    tokio::task::block_in_place(|| {
        let sid = a.initialized(&t);
        let before = status_kb(a.child.id(), "VmRSS");
        let list = zeros((31 << 20) - 4096);
        let huge = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{{"sessionId":"{sid}","prompt":[{{"type":"text","text":"hi"}}],"x":[{list}]}}}}"#
        );
        drop(list);
        a.send(&huge);
        drop(huge);
        let e = a.answer(&json!(9));
        assert_eq!(e["error"]["code"], -32600, "{e}");
        assert!(e.to_string().contains("more than 100000 JSON values"), "{e}");
        a.send(&json!({"jsonrpc": "2.0", "id": 10, "method": "session/set_mode", "params": {"sessionId": sid, "modeId": "plan"}}).to_string());
        assert!(a.answer(&json!(10)).get("result").is_some(), "still serving");
        let peak = status_kb(a.child.id(), "VmHWM");
        assert!(peak < PEAK_KB, "peak {peak} kB");
        let after = settled_rss(a.child.id());
        assert!(after < before + KEPT_KB, "{before} kB before, {after} kB after");
    });
}

/// A model answering with one function call of 8 MiB of tiny arguments (Gemini's API: 3.0 GB
/// before): the run ends saying the answer was not read and why, its peak under the ceiling.
#[tokio::test]
async fn run_a_model_answer_of_tiny_values_is_refused_naming_the_limit() {
    let t = TempTree::new();
    let list: Vec<Value> = vec![json!(0); 4 << 20];
    let fake = FakeModel::start(vec![gemini_answer(
        json!([{"functionCall": {"name": "write_todos", "args": {"todos": list}}}]),
    )])
    .await;
    refused_run(super::run::command(&t, &["go"], Some(&fake.url))).await;
}

/// The same from an OpenAI-compatible server, whose arguments come as pieces of a string and
/// are parsed once the answer has ended: counted with the rest of the answer.
#[tokio::test]
async fn run_an_openai_call_of_tiny_arguments_is_refused_naming_the_limit() {
    let t = TempTree::new();
    let args = format!(r#"{{"todos":[{}]}}"#, zeros(8 << 20));
    let fake = FakeModel::start(vec![openai_answer(&[], &[("c1", "write_todos", &args)])]).await;
    let base = format!("{}/v1", fake.url);
    let args = ["--base-url", base.as_str(), "-m", "qwen", "go"];
    refused_run(super::run::command(&t, &args, None)).await;
}

/// Runs `c` to its end, watching its peak: it must fail saying the answer was not read.
async fn refused_run(mut c: tokio::process::Command) {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let pid = child.id().unwrap_or(0);
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let watch = {
        let peak = peak.clone();
        std::thread::spawn(move || {
            // The peak while it runs (its status is gone once it ends).
            loop {
                let kb = status_kb(pid, "VmHWM");
                if kb == u64::MAX {
                    break;
                }
                peak.fetch_max(kb, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = child.wait_with_output().await.unwrap();
    let _ = watch.join();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the model's answer was not read: it holds more than 100000 JSON values"),
        "{stderr:.2000}"
    );
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
    assert!(peak < PEAK_KB, "peak {peak} kB");
}
