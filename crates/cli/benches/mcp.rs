//! `toolbelt mcp` over stdio: cold start to initialize complete (rmcp client), and read_file
//! calls per second, sequential and 16 in flight, from the rmcp client and from a minimal
//! blocking client (unpinned and with client and server on one CPU).
//! Run with `cargo bench -p agent-toolbelt --bench mcp` (uses the release binary Cargo builds).

#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    if let Some(us) =
        std::env::var("TOOLBELT_BENCH_MODEL_SERVER_US").ok().and_then(|v| v.parse().ok())
    {
        model_server(Duration::from_micros(us));
        return;
    }
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
    if let Ok(c) = Arc::try_unwrap(client) {
        let _ = c.cancel().await;
    }

    // The same over a minimal client: plain blocking writes and reads of JSON lines on its own
    // thread, the fastest a client can be, so that the client's own cost does not hide the
    // server's. For scale: the same client with `cat` echoing the line back (two pipe
    // hand-overs and wake-ups, no work at all) and with `ping` (rmcp's request handling
    // without a tool). Measured twice: as the system places the processes, and with client
    // and server on one CPU, where a hand-over is a context switch instead of a wake-up of
    // another (possibly idle, in a VM halted) CPU.
    for pinned in [false, true] {
        let dir = dir.path().to_path_buf();
        let rates = std::thread::spawn(move || {
            if pinned {
                pin_to_first_cpu();
            }
            let mut out = vec![("`cat` echo (no server), 1 in flight", echo_floor(20_000))];
            for _ in 0..3 {
                out.push(("ping, 1 in flight", raw_client(&dir, PING, 1, 20_000)));
                out.push(("read_file, 1 in flight", raw_client(&dir, CALL, 1, 20_000)));
            }
            out.push(("read_file, 16 in flight", raw_client(&dir, CALL, 16, 20_000)));
            if std::env::var_os("TOOLBELT_BENCH_NODE_FS").is_some() {
                let node = "reference Node filesystem server, read_text_file, 1 in flight";
                out.push((node, raw_client(&dir, NODE_READ, 1, 5_000)));
            }
            out
        })
        .join()
        .unwrap_or_else(|_| panic!("client thread"));
        let place = if pinned { "client and server on one CPU" } else { "unpinned" };
        for (what, rate) in rates {
            println!("minimal client, {place}: {what}: {rate:.0} per s");
        }
    }

    // What this machine allows any server: a model server (this bench, re-run as one) that
    // answers each request after spinning for a given time, then polls for the next request as
    // toolbelt's stdio does. Where the client's wait passes a few microseconds, its idle CPU is
    // halted and waking it costs more than the work: the rate falls off a cliff there.
    let dir = dir.path().to_path_buf();
    let curve = std::thread::spawn(move || {
        [0u64, 3, 5, 7, 10, 15, 20]
            .map(|us| (us, raw_client(&dir, &format!("{MODEL}{us}"), 1, 20_000)))
    })
    .join()
    .unwrap_or_else(|_| panic!("client thread"));
    for (us, rate) in curve {
        println!(
            "minimal client, unpinned: model server answering after {us} us of work: {rate:.0} per s"
        );
    }
}

/// `raw_client`'s kind for the model server; the microseconds of work follow.
const MODEL: &str = "model server:";

/// Answers each request line on stdin (notifications get none) after spinning for `work`,
/// then polls stdin for up to 50 µs, as `toolbelt mcp` does after an answer.
fn model_server(work: Duration) {
    use std::io::{BufRead, Write};
    // stdin's own descriptor, buffered here, so that the poll below knows what is unread.
    #[cfg(unix)]
    let mut input = {
        use std::os::fd::AsFd;
        let fd = std::io::stdin().as_fd().try_clone_to_owned().unwrap_or_else(|e| panic!("{e}"));
        std::io::BufReader::new(std::fs::File::from(fd))
    };
    #[cfg(not(unix))]
    let mut input = std::io::BufReader::new(std::io::stdin());
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.contains("\"method\":\"notifications/") {
            continue;
        }
        let start = Instant::now();
        while start.elapsed() < work {
            std::hint::spin_loop();
        }
        let answer = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"line one\\nline two\\n\"}]}}\n";
        if out.write_all(answer.as_bytes()).and_then(|()| out.flush()).is_err() {
            return;
        }
        #[cfg(unix)]
        if input.buffer().is_empty() {
            use std::os::fd::AsFd;
            let polled = Instant::now();
            while polled.elapsed() < Duration::from_micros(50) {
                let mut fds =
                    [nix::poll::PollFd::new(input.get_ref().as_fd(), nix::poll::PollFlags::POLLIN)];
                if nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO).unwrap_or(0) > 0 {
                    break;
                }
                std::thread::yield_now();
            }
        }
    }
}

/// Keeps this thread, and the processes it starts, on the first CPU it may use.
fn pin_to_first_cpu() {
    #[cfg(target_os = "linux")]
    {
        use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
        use nix::unistd::Pid;
        let Ok(allowed) = sched_getaffinity(Pid::from_raw(0)) else { return };
        let Some(cpu) = (0..CpuSet::count()).find(|c| allowed.is_set(*c).unwrap_or(false)) else {
            return;
        };
        let mut one = CpuSet::new();
        if one.set(cpu).is_ok() {
            let _ = sched_setaffinity(Pid::from_raw(0), &one);
        }
    }
}

const PING: &str = r#"{"jsonrpc":"2.0","id":ID,"method":"ping"}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"small.txt"}}}"#;

/// Request `id` of a kind (requests in flight need ids of their own).
fn request(kind: &str, id: usize) -> String {
    format!("{}\n", kind.replace("ID", &id.to_string()))
}

/// The reference filesystem server's read, when `TOOLBELT_BENCH_NODE_FS` names its binary
/// (`mcp-server-filesystem` from `npm install @modelcontextprotocol/server-filesystem`).
const NODE_READ: &str = r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"small.txt"}}}"#;

/// Requests per second with `in_flight` outstanding, from a blocking client.
fn raw_client(dir: &std::path::Path, kind: &str, in_flight: usize, n: usize) -> f64 {
    use std::io::{BufRead, BufReader, Write};
    let mut command = match (kind, std::env::var_os("TOOLBELT_BENCH_NODE_FS")) {
        (model, _) if model.starts_with(MODEL) => {
            let mut c = std::process::Command::new(
                std::env::current_exe().unwrap_or_else(|e| panic!("{e}")),
            );
            c.env("TOOLBELT_BENCH_MODEL_SERVER_US", &model[MODEL.len()..]);
            c
        }
        (NODE_READ, Some(node_fs)) => {
            let mut c = std::process::Command::new(node_fs);
            c.arg(dir).stderr(std::process::Stdio::null());
            c
        }
        _ => {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_toolbelt"));
            c.arg("mcp").env("TOOLBELT_HOME", dir.join(".home"));
            c
        }
    };
    let mut child = command
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut out = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let opening =
        format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    stdin.write_all(opening.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let mut reply = String::new();
    out.read_line(&mut reply).unwrap_or_else(|e| panic!("{e}"));
    let expect = if kind == PING { "\"result\"" } else { "line one" };
    let kind = if kind.starts_with(MODEL) { CALL } else { kind };
    let start = Instant::now();
    let mut sent = 0;
    while sent < in_flight.min(n) {
        sent += 1;
        stdin.write_all(request(kind, sent).as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    }
    for _ in 0..n {
        reply.clear();
        match out.read_line(&mut reply) {
            Ok(k) if k > 0 => assert!(reply.contains(expect), "{reply}"),
            other => panic!("server ended: {other:?}"),
        }
        if sent < n {
            sent += 1;
            stdin.write_all(request(kind, sent).as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let _ = child.kill();
    let _ = child.wait();
    rate
}

fn echo_floor(n: usize) -> f64 {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut out = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let mut reply = String::new();
    let line = request(CALL, 1);
    let start = Instant::now();
    for _ in 0..n {
        stdin.write_all(line.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        reply.clear();
        out.read_line(&mut reply).unwrap_or_else(|e| panic!("{e}"));
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let _ = child.kill();
    let _ = child.wait();
    rate
}
