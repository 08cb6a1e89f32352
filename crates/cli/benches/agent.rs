//! The agent's speed: time from `toolbelt run --replay=FILE` start to its first tool call
//! executed, and the loop's overhead per turn against the fake Gemini server (a zero-cost tool,
//! so a turn is a model request over loopback, the JSON both ways and the scheduler).
//! Run with `cargo bench -p agent-toolbelt --bench agent`.

#![allow(clippy::print_stdout)]

use std::io::{BufRead, BufReader};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_agent::agent::{Agent, Finish};
use toolbelt_agent::client::GeminiClient;
use toolbelt_core::approver::{FixedApprover, Outcome};
use toolbelt_core::policy::{Decision, PolicyEngine, Rule};
use toolbelt_core::testing::{Behaviour, FakeTool, Journal, test_env};
use toolbelt_core::{Kind, ModelFamily, Registry, Scheduler, SchedulerOptions};
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn first_tool_call() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let session = dir.path().join("s.jsonl");
    std::fs::write(
        &session,
        "{\"parts\":[{\"functionCall\":{\"id\":\"1\",\"name\":\"list_directory\",\"args\":{\"dir_path\":\".\"}}}]}\n{\"parts\":[{\"text\":\"done\"}]}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut times = Vec::new();
    for _ in 0..21 {
        let start = Instant::now();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolbelt"))
            .args(["run", &format!("--replay={}", session.display()), "-o", "stream-json", "go"])
            .current_dir(dir.path())
            .env("TOOLBELT_HOME", dir.path().join(".home"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap_or_else(|e| panic!("{e}"));
            if line.contains("\"tool_result\"") {
                times.push(start.elapsed());
                break;
            }
        }
        let _ = child.wait();
    }
    println!(
        "toolbelt run --replay: start to first tool call executed: median {:.2} ms (21 runs)",
        median(times).as_secs_f64() * 1000.0
    );
}

async fn per_turn() {
    let turns = 200;
    let mut replies: Vec<_> = (0..turns)
        .map(|i| gemini_answer(json!([{"functionCall": {"id": format!("c{i}"), "name": "echo", "args": {"text": "x"}}}])))
        .collect();
    replies.push(gemini_answer(json!([{"text": "done"}])));
    let fake = FakeModel::start(replies).await;
    let (_dir, env) = test_env();
    let tool: Arc<dyn toolbelt_core::Tool> = Arc::new(FakeTool::new(
        "echo",
        Kind::Read,
        Behaviour::Echo { delay: Duration::ZERO },
        Arc::new(Journal::default()),
    ));
    let registry =
        Arc::new(Registry::builder().tools(vec![tool]).build().unwrap_or_else(|e| panic!("{e}")));
    let policy =
        Arc::new(PolicyEngine::new(vec![Rule::new("*", Decision::Allow, 1.0, "bench")], false));
    let scheduler = Scheduler::new(
        registry.clone(),
        policy,
        Arc::new(FixedApprover(Outcome::Cancel)),
        env,
        SchedulerOptions::default(),
    );
    let agent = Agent {
        client: Arc::new(GeminiClient::new("k", "bench", Some(fake.url.clone()))),
        scheduler: Arc::new(scheduler),
        declare: toolbelt_agent::agent::fixed(registry.declarations(ModelFamily::Legacy)),
        system_instruction: None,
        max_turns: Some(turns + 1),
        masking: None,
    };
    let start = Instant::now();
    let out = agent.run("go", &CancellationToken::new(), &mut |_| {}).await;
    let elapsed = start.elapsed();
    assert!(matches!(out.finish, Finish::Done), "{:?}", out.finish);
    println!(
        "agent loop against the fake Gemini server: {:.3} ms per turn ({} turns, history growing to {} messages)",
        elapsed.as_secs_f64() * 1000.0 / f64::from(turns + 1),
        turns + 1,
        out.history.len()
    );
}

fn main() {
    first_tool_call();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(per_turn());
}
