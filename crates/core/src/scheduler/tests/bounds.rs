//! Ceilings the engine puts on calls (issue 35).

use super::*;

/// Issue 35 (fourth attack, N9): an MCP tool answering 400,000 text parts had them all passed
/// on (17 MB printed); only a single text was bounded. Past 1,000 parts the text parts are
/// one text, bounded and saved like any other, and the first 32 media parts stay.
#[tokio::test]
async fn a_result_of_very_many_parts_is_bounded_too() {
    use crate::result::{Content, Part};
    let h = allow_all();
    let done = h.scheduler.schedule(vec![call("p1", "parts", "x")], CancellationToken::new()).await;
    let Content::Parts(parts) = &done[0].result.as_ref().unwrap().llm_content else {
        panic!("{:?}", done[0].result.as_ref().map(|r| &r.llm_content))
    };
    assert_eq!(parts.len(), 33);
    let Part::Text { text } = &parts[0] else { panic!("text first") };
    assert!(text.starts_with("Output too large."), "{}", &text[..80]);
    assert!(text.len() < crate::truncate::MAX_OUTPUT_CHARS + 1_000, "{}", text.len());
    assert!(parts[1..].iter().all(|p| matches!(p, Part::InlineData { .. })));
    assert!(done[0].output_file.is_some());
}

/// Issue 35 (fourth attack, N3): a setting of 600,000 ms for one tool outlasted `call
/// --timeout-ms 3000` (100 s). The command line's deadline caps every tool's.
#[tokio::test]
async fn the_command_lines_deadline_caps_a_tools_own() {
    let (_dir, s) = with_config(|config| {
        config.tool_call_timeout_ms = 30;
        config.tool_call_timeout_cap_ms = Some(30);
        config.tool_timeouts_ms.insert("stubborn".into(), 600_000);
    });
    let started = std::time::Instant::now();
    let done = s.schedule(vec![call("1", "stubborn", "x")], CancellationToken::new()).await;
    let msg = &done[0].error.as_ref().unwrap().message;
    assert!(msg.contains("timed out after 30 ms"), "{msg}");
    assert!(msg.contains("give a longer --timeout-ms"), "{msg}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// Issue 35 (fifth attack): a call that timed out gave its costly turn back while its blocking
/// search, which no token stops mid-line, went on: 64 greps of `\w{150}\d\d\d` over a 40 MB
/// line, timing out after 3 s one after another, left 88 threads and 400 MB running. The turn
/// now comes back when the work has ended, so no more than COSTLY_AT_ONCE works ever run.
#[tokio::test]
async fn a_timed_out_calls_blocking_work_keeps_its_turn_until_it_ends() {
    let journal = Arc::new(Journal::default());
    let stuck = FakeTool::new(
        "stuck",
        Kind::Read,
        Behaviour::CostlyBlocking { work: Duration::from_millis(600) },
        journal.clone(),
    );
    let (_dir, s) =
        allowing(vec![Arc::new(stuck) as Arc<dyn Tool>], Duration::from_millis(20), |config| {
            config.tool_call_timeout_ms = 100;
        });
    let s = Arc::new(s);
    let mut runs = Vec::new();
    for i in 0..12 {
        let s = s.clone();
        runs.push(tokio::spawn(async move {
            s.schedule(vec![call(&i.to_string(), "stuck", "x")], CancellationToken::new()).await
        }));
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    for r in runs {
        let done = r.await.unwrap();
        assert!(done[0].error.as_ref().is_some_and(|e| e.message.contains("timed out")));
    }
    while journal.blocking_now.load(std::sync::atomic::Ordering::SeqCst) > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let most = journal.blocking_most.load(std::sync::atomic::Ordering::SeqCst);
    assert!((1..=crate::limits::COSTLY_AT_ONCE).contains(&most), "{most} ran at once");
}

/// A tool whose own deadline is the engine's (an MCP server's `timeout` is both): when both
/// pass in the same instant the call ends as the engine's timeout, every time. The scheduler's
/// `select!` picked a branch at random, and set its deadline only when first polled, so the
/// tool's error won about half the time (`mcp_client::per_tool_and_per_server_overrides_apply
/// _to_mcp_tools` failed once in a full run).
#[tokio::test]
async fn a_tools_own_deadline_at_the_engines_ends_the_call_as_a_timeout() {
    let journal = Arc::new(Journal::default());
    let after = Duration::from_millis(20);
    let tool = FakeTool::new("own", Kind::Read, Behaviour::OwnDeadline { after }, journal);
    let (_dir, s) = allowing(vec![Arc::new(tool)], Duration::from_millis(50), |config| {
        config.tool_timeouts_ms.insert("own".into(), 20);
    });
    for i in 0..40 {
        let done =
            s.schedule(vec![call(&format!("o{i}"), "own", "x")], CancellationToken::new()).await;
        let kind = done[0].error.as_ref().map(|e| e.kind);
        assert_eq!(kind, Some(ErrorType::ToolCallTimeout), "run {i}: {:?}", done[0].error);
    }
}
