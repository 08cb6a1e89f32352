//! Recording a session and replaying it without a model.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_agent::agent::Finish;
use toolbelt_agent::client::{GeminiClient, ModelClient, REPLAY_DEMO, Recorder, Replay};
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};

use crate::{agent, run, scheduler};

#[tokio::test]
async fn a_recorded_session_replays_offline_with_the_same_tool_calls() {
    let fake = FakeModel::start(vec![
        gemini_answer(
            json!([{"functionCall": {"id": "1", "name": "echo", "args": {"text": "hi"}}}]),
        ),
        gemini_answer(json!([{"text": "The echo said hi."}])),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    let live: Arc<dyn ModelClient> = Arc::new(GeminiClient::new("k", "m", Some(fake.url.clone())));
    let recorder = Arc::new(Recorder::create(live, &file).unwrap());
    let (_d, s) = scheduler();
    let (live_out, live_events) =
        run(&agent(recorder, s), "say hi", &CancellationToken::new()).await;
    assert!(matches!(live_out.finish, Finish::Done));
    drop(fake);

    let text = std::fs::read_to_string(&file).unwrap();
    let replay = Arc::new(Replay::parse("session.jsonl", &text).unwrap());
    let (_d, s) = scheduler();
    let (out, events) = run(&agent(replay, s), "say hi", &CancellationToken::new()).await;
    assert!(matches!(out.finish, Finish::Done));
    assert_eq!(out.final_text, "The echo said hi.");
    assert_eq!(events, live_events, "the same calls ran and the same results came back");
}

#[tokio::test]
async fn a_replay_that_runs_out_says_so_and_bad_lines_are_named() {
    let replay = Arc::new(
        Replay::parse(
            "one.jsonl",
            r#"{"parts":[{"functionCall":{"name":"echo","args":{"text":"x"}}}]}"#,
        )
        .unwrap(),
    );
    let (_d, s) = scheduler();
    let (out, _) = run(&agent(replay, s), "go", &CancellationToken::new()).await;
    let Finish::ModelFailed(e) = out.finish else { panic!("{:?}", out.finish) };
    assert!(e.to_string().contains("no recorded answer left for model call 2"), "{e}");
    let err = Replay::parse("bad.jsonl", "# comment\n\n{nope}\n").err().unwrap();
    assert!(err.starts_with("bad.jsonl:3:"), "{err}");
    assert!(Replay::parse("demo", REPLAY_DEMO).is_ok());
}
