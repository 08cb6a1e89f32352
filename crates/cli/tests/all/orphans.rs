//! No descendant escapes (issue 18). Each shape below left a process running after the call
//! ended, timed out or was cancelled, and after toolbelt got SIGINT, SIGTERM or its MCP client
//! went away: `setsid -f sleep N`, `(setsid sh -c 'sleep N' &)`, `setsid sleep N &` and a double
//! fork. Every run uses its own sleep durations, so survivors are found by their command line.

use std::io::{BufRead, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbelt_test_support::TempTree;

use super::command;

/// The four escape shapes, each sleeping a duration unique to `run`.
fn shapes(run: u32) -> (String, Vec<String>) {
    let n: Vec<String> =
        (0..4).map(|i| format!("{}.{}{}", 4000 + run, i, std::process::id())).collect();
    let script = format!(
        "setsid -f sleep {}; (setsid sh -c 'sleep {}' &); setsid sleep {} & sh -c '(sleep {} &)'; echo started",
        n[0], n[1], n[2], n[3]
    );
    (script, n)
}

/// The processes whose command line is `sleep <one of durations>`.
fn survivors(durations: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
        let words: Vec<String> =
            cmd.split(|b| *b == 0).map(|w| String::from_utf8_lossy(w).into_owned()).collect();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'));
        if !zombie
            && words.first().is_some_and(|w| w.ends_with("sleep"))
            && words.get(1).is_some_and(|d| durations.contains(d))
        {
            found.push(words.join(" "));
        }
    }
    found
}

/// Waits up to three seconds for every survivor to go; returns those left.
fn left_after(durations: &[String]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = survivors(durations);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until all four shapes are running (so a test cannot pass by stopping them too early).
fn all_started(durations: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while survivors(durations).len() < durations.len() {
        assert!(Instant::now() < deadline, "only {:?} started", survivors(durations));
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn call(t: &TempTree, script: &str) -> std::process::Child {
    let args = json!({ "command": script }).to_string();
    command(t, &["call", "run_shell_command", &args, "--approval-mode", "yolo"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn nothing_survives_the_end_of_a_call() {
    let t = TempTree::new();
    let (script, n) = shapes(1);
    let out = call(&t, &script).wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("started"));
    assert_eq!(left_after(&n), Vec::<String>::new());
}

#[test]
fn nothing_survives_a_timeout() {
    let t = TempTree::new();
    let (script, n) = shapes(2);
    let mut c = call(&t, &format!("{script}; sleep 30"));
    all_started(&n);
    let _ = c.kill();
    let _ = c.wait();
    // The timeout case proper: a fresh call whose deadline passes.
    let (script, n2) = shapes(3);
    let args = json!({ "command": format!("{script}; sleep 30") }).to_string();
    let out = command(&t, &["call", "run_shell_command", &args, "--approval-mode", "yolo"])
        .env("TOOLBELT_TOOL_CALL_TIMEOUT_MS", "1500")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("timed out after 1500 ms"), "{text}");
    assert_eq!(left_after(&n2), Vec::<String>::new());
    // toolbelt itself killed with SIGKILL: the reapers still take everything down.
    assert_eq!(left_after(&n), Vec::<String>::new(), "after toolbelt was killed with SIGKILL");
}

fn signalled(run: u32, signal: nix::sys::signal::Signal) {
    let t = TempTree::new();
    let (script, n) = shapes(run);
    let mut c = call(&t, &format!("{script}; sleep 30"));
    all_started(&n);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(c.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let _ = c.wait();
    assert_eq!(left_after(&n), Vec::<String>::new(), "after {signal:?}");
}

#[test]
fn nothing_survives_cancel_sigterm_or_sighup() {
    use nix::sys::signal::Signal;
    signalled(4, Signal::SIGINT);
    signalled(5, Signal::SIGTERM);
    signalled(6, Signal::SIGHUP);
}

#[test]
fn nothing_survives_an_mcp_client_that_goes_away() {
    let t = TempTree::new();
    let (mut child, mut stdin, mut stdout) = super::mcp_stdio(&t, &["--approval-mode", "yolo"]);
    let mut line = String::new();
    let (script, n) = shapes(7);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "run_shell_command", "arguments": {"command": script}}});
    writeln!(stdin, "{call}").unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("started"), "{line}");
    // The call is over: only the job it started (`setsid sleep N &`) is meant to run on.
    let during = left_after(&n[..2]);
    assert_eq!(during, Vec::<String>::new(), "left running after the call");
    assert!(
        !survivors(&n[2..3]).is_empty(),
        "the job `setsid sleep N &` runs until the session ends"
    );
    drop(stdin);
    let _ = child.wait();
    assert_eq!(left_after(&n), Vec::<String>::new(), "after the client went away");
}

/// Adversarial review: an MCP stdio server (and what it started) outlived `toolbelt call` and
/// `toolbelt tools list`, re-parented to PID 1; so did a server that failed to initialise.
#[test]
fn nothing_an_mcp_server_started_survives_the_session() {
    let t = TempTree::new();
    let toolbelt = env!("CARGO_BIN_EXE_toolbelt");
    let root = t.root().display().to_string();
    let n: Vec<String> = (0..2).map(|i| format!("4100.{i}{}", std::process::id())).collect();
    let settings = json!({"mcpServers": {
        "good": {"command": "sh", "args": ["-c", format!("setsid -f sleep {}; exec '{toolbelt}' mcp --root '{root}'", n[0])]},
        "broken": {"command": "sh", "args": ["-c", format!("setsid -f sleep {}; exit 1", n[1])]},
    }});
    let dir = t.home().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let out = command(&t, &["tools", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("mcp_good_read_file"),
        "{listed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(left_after(&n), Vec::<String>::new());
    let inner = format!("{toolbelt} mcp --root {root}");
    let servers: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim().to_string())
        .filter(|c| *c == inner)
        .collect();
    assert!(servers.is_empty(), "MCP servers left running: {servers:?}");
}
