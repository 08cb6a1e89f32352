//! `toolbelt mcp` over stdio, measured from an rmcp client: cold start to initialize complete,
//! and read_file calls per second, sequential and 16 in flight.
//! Run with `cargo bench -p toolbelt --bench mcp` (uses the release binary Cargo builds).

#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rt =
        match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
    rt.block_on(run());
}

async fn run() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("small.txt"), "line one\nline two\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let cmd = || {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_toolbelt")).configure(|c| {
            c.arg("mcp").current_dir(dir.path()).env("TOOLBELT_HOME", dir.path().join(".home"));
        })
    };
    let mut starts = Vec::new();
    for _ in 0..21 {
        let t = Instant::now();
        let transport = TokioChildProcess::new(cmd()).unwrap_or_else(|e| panic!("{e}"));
        let client = ().serve(transport).await.unwrap_or_else(|e| panic!("{e}"));
        starts.push(t.elapsed());
        let _ = client.cancel().await;
    }
    println!(
        "cold start to initialize complete: median {:.2} ms (21 runs)",
        median(starts).as_secs_f64() * 1000.0
    );

    let client = Arc::new(
        ().serve(TokioChildProcess::new(cmd()).unwrap_or_else(|e| panic!("{e}")))
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let args =
        serde_json::json!({"file_path": "small.txt"}).as_object().cloned().unwrap_or_default();
    let call = |c: Arc<rmcp::service::RunningService<rmcp::RoleClient, ()>>,
                a: serde_json::Map<String, serde_json::Value>| async move {
        let r = c
            .call_tool(CallToolRequestParams::new("read_file").with_arguments(a))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(r.is_error, Some(true));
    };
    for _ in 0..200 {
        call(client.clone(), args.clone()).await;
    }
    let n = 3000;
    let t = Instant::now();
    for _ in 0..n {
        call(client.clone(), args.clone()).await;
    }
    let seq = n as f64 / t.elapsed().as_secs_f64();
    println!("read_file sequential: {seq:.0} calls/s ({n} calls)");
    let n = 8000;
    let t = Instant::now();
    let sem = Arc::new(tokio::sync::Semaphore::new(16));
    let mut tasks = Vec::new();
    for _ in 0..n {
        let permit = sem.clone().acquire_owned().await.unwrap_or_else(|e| panic!("{e}"));
        let (c, a) = (client.clone(), args.clone());
        tasks.push(tokio::spawn(async move {
            call(c, a).await;
            drop(permit);
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let par = n as f64 / t.elapsed().as_secs_f64();
    println!("read_file 16 in flight: {par:.0} calls/s ({n} calls)");
    let _ = Arc::try_unwrap(client).map(|c| c.cancel());

    // The same over a minimal client (JSON lines written and read directly), so that the
    // client's own cost does not hide the server's.
    // The floor for one-at-a-time calls on this machine: the same client and the same line echoed
    // by `cat`, i.e. two pipe hand-overs and wake-ups with no server work at all.
    let rate = echo_floor(20_000).await;
    println!("pipe round trip through `cat` (no server work), 1 in flight: {rate:.0} per s");
    for in_flight in [1usize, 16] {
        let rate = raw_client(dir.path(), in_flight, 20_000).await;
        println!(
            "read_file, minimal client, {in_flight} in flight: {rate:.0} calls/s (20000 calls)"
        );
    }
}

async fn raw_client(dir: &std::path::Path, in_flight: usize, n: usize) -> f64 {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolbelt"))
        .arg("mcp")
        .current_dir(dir)
        .env("TOOLBELT_HOME", dir.join(".home"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut lines = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout"))).lines();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    stdin
        .write_all(
            format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n")
                .as_bytes(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = lines.next_line().await;
    let call = |id: usize| {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"read_file\",\"arguments\":{{\"file_path\":\"small.txt\"}}}}}}\n")
    };
    let start = Instant::now();
    let mut sent = 0;
    while sent < in_flight.min(n) {
        sent += 1;
        stdin.write_all(call(sent).as_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
    }
    stdin.flush().await.unwrap_or_else(|e| panic!("{e}"));
    let mut done = 0;
    while done < n {
        let Ok(Some(line)) = lines.next_line().await else { panic!("server ended") };
        assert!(line.contains("line one"), "{line}");
        done += 1;
        if sent < n {
            sent += 1;
            stdin.write_all(call(sent).as_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
            stdin.flush().await.unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let _ = child.kill().await;
    rate
}

async fn echo_floor(n: usize) -> f64 {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = tokio::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut lines = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout"))).lines();
    let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":{\"file_path\":\"small.txt\"}}}\n";
    let start = Instant::now();
    for _ in 0..n {
        stdin.write_all(line.as_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
        stdin.flush().await.unwrap_or_else(|e| panic!("{e}"));
        let Ok(Some(_)) = lines.next_line().await else { panic!("cat ended") };
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let _ = child.kill().await;
    rate
}
