//! The loop over the Gemini API.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_agent::agent::Finish;
use toolbelt_agent::client::GeminiClient;
use toolbelt_test_support::fake_model::{FakeModel, Reply, gemini_answer, gemini_chunk};

use crate::{FAST_RETRY, agent, run, scheduler};

fn client(fake: &FakeModel) -> Arc<GeminiClient> {
    Arc::new(
        GeminiClient::new("test-key", "gemini-test", Some(fake.url.clone())).with_retry(FAST_RETRY),
    )
}

/// The function responses of the request's last message: (id, name, response).
fn responses(body: &Value) -> Vec<(String, String, Value)> {
    let last = body["contents"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    last["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let fr = &p["functionResponse"];
            (
                fr["id"].as_str().unwrap().into(),
                fr["name"].as_str().unwrap().into(),
                fr["response"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn parallel_calls_get_one_response_each_in_order_and_the_loop_ends_on_text() {
    let fake = FakeModel::start(vec![
        Reply::Events(vec![
            gemini_chunk(json!([{"text": "Checking "}]), None),
            gemini_chunk(
                json!([{"text": "both."}, {"functionCall": {"name": "echo", "args": {"text": "a"}}},
                       {"functionCall": {"id": "m-2", "name": "echo", "args": {"text": "b"}}, "thoughtSignature": "sig"}]),
                Some("STOP"),
            ),
        ]),
        gemini_answer(json!([{"text": "All done."}])),
    ])
    .await;
    let (_d, s) = scheduler();
    let a = agent(client(&fake), s);
    let (out, events) = run(&a, "look at a and b", &CancellationToken::new()).await;
    assert!(matches!(out.finish, Finish::Done), "{:?}", out.finish);
    assert_eq!(out.final_text, "All done.");
    assert_eq!(out.stats.model_calls, 2);
    assert_eq!(out.stats.tool_calls, 2);
    assert_eq!(out.stats.usage.total_tokens, 30);
    assert_eq!(events[..2], ["text Checking ".to_string(), "text both.".to_string()]);

    let got = fake.received();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].path, "/v1beta/models/gemini-test:streamGenerateContent?alt=sse");
    assert_eq!(got[0].headers["x-goog-api-key"], "test-key");
    let first = &got[0].body;
    assert_eq!(
        first["contents"],
        json!([{"role": "user", "parts": [{"text": "look at a and b"}]}])
    );
    assert_eq!(first["systemInstruction"], json!({"parts": [{"text": "be brief"}]}));
    let names: Vec<&str> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "slow", "forbidden"]);
    assert!(first["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"].is_object());

    // The second request: the prompt, the model's turn exactly as streamed (text merged, the
    // thought signature kept), and one response per call in the calls' order.
    let second = &got[1].body;
    let contents = second["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [{"text": "Checking both."},
            {"functionCall": {"name": "echo", "args": {"text": "a"}}},
            {"functionCall": {"id": "m-2", "name": "echo", "args": {"text": "b"}}, "thoughtSignature": "sig"}]})
    );
    let r = responses(second);
    assert_eq!(r.len(), 2);
    assert!(r[0].0.starts_with("echo_"), "{}", r[0].0);
    assert_eq!((r[0].1.as_str(), &r[0].2), ("echo", &json!({"output": "a"})));
    assert_eq!(
        (r[1].0.as_str(), r[1].1.as_str(), &r[1].2),
        ("m-2", "echo", &json!({"output": "b"}))
    );
}

#[tokio::test]
async fn unknown_denied_and_timed_out_calls_are_answered_with_errors() {
    let fake = FakeModel::start(vec![
        gemini_answer(json!([
            {"functionCall": {"id": "1", "name": "no_such_tool", "args": {}}},
            {"functionCall": {"id": "2", "name": "forbidden", "args": {"text": "x"}}},
            {"functionCall": {"id": "3", "name": "slow", "args": {"text": "x"}}},
            {"functionCall": {"id": "4", "name": "echo", "args": {"text": "fine"}}}
        ])),
        gemini_answer(json!([{"text": "ok"}])),
    ])
    .await;
    let (_d, s) = scheduler();
    let (out, _) = run(&agent(client(&fake), s), "go", &CancellationToken::new()).await;
    assert!(matches!(out.finish, Finish::Done));
    assert_eq!(out.stats.tool_errors, 3);
    let r = responses(&fake.bodies()[1]);
    let ids: Vec<&str> = r.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4"]);
    assert!(
        r[0].2["error"].as_str().unwrap().starts_with("Tool \"no_such_tool\" not found."),
        "{}",
        r[0].2
    );
    assert_eq!(r[1].2, json!({"error": "Tool execution denied by policy."}));
    assert!(r[2].2["error"].as_str().unwrap().contains("timed out"), "{}", r[2].2);
    assert_eq!(r[3].2, json!({"output": "fine"}));
}

#[tokio::test]
async fn a_malformed_call_a_cut_stream_and_a_429_are_retried() {
    let fake = FakeModel::start(vec![
        Reply::Events(vec![gemini_chunk(json!([]), Some("MALFORMED_FUNCTION_CALL"))]),
        // A stream cut in the middle: text, then the body ends without a finish reason.
        Reply::Events(vec![gemini_chunk(json!([{"text": "partial"}]), None)]),
        Reply::Status(429, "{\"error\": {\"code\": 429, \"message\": \"slow down\"}}".into(), None),
        gemini_answer(json!([{"text": "finally"}])),
    ])
    .await;
    let (_d, s) = scheduler();
    let (out, events) = run(&agent(client(&fake), s), "hi", &CancellationToken::new()).await;
    assert_eq!(out.final_text, "finally");
    assert_eq!(out.stats.model_calls, 1, "retries are one model call");
    let retries: Vec<&String> = events.iter().filter(|e| e.starts_with("retry")).collect();
    assert_eq!(retries, ["retry 2", "retry 3", "retry 4"]);
    let bodies = fake.bodies();
    assert_eq!(bodies.len(), 4);
    assert!(
        bodies.iter().all(|b| b["contents"] == bodies[0]["contents"]),
        "each retry sends the same request"
    );
}

#[tokio::test]
async fn retries_give_up_with_the_last_error_and_auth_errors_are_not_retried() {
    let fake = FakeModel::start(vec![Reply::Status(503, "busy".into(), None); 4]).await;
    let (_d, s) = scheduler();
    let (out, _) = run(&agent(client(&fake), s), "hi", &CancellationToken::new()).await;
    let Finish::ModelFailed(e) = out.finish else { panic!("{:?}", out.finish) };
    assert!(e.to_string().contains("HTTP 503"), "{e}");
    assert_eq!(fake.received().len(), 4);

    let fake = FakeModel::start(vec![Reply::Status(403, "bad key".into(), None)]).await;
    let (_d, s) = scheduler();
    let (out, _) = run(&agent(client(&fake), s), "hi", &CancellationToken::new()).await;
    assert!(matches!(
        out.finish,
        Finish::ModelFailed(toolbelt_agent::client::ModelError::Auth { .. })
    ));
    assert_eq!(fake.received().len(), 1);
}

#[tokio::test]
async fn a_cancelled_run_answers_every_call_and_sends_nothing_more() {
    let fake = FakeModel::start(vec![
        gemini_answer(json!([
            {"functionCall": {"id": "s", "name": "slow", "args": {"text": "x"}}},
            {"functionCall": {"id": "e", "name": "echo", "args": {"text": "y"}}}
        ])),
        gemini_answer(json!([{"text": "never asked for"}])),
    ])
    .await;
    let (_d, s) = scheduler();
    // slow's own deadline is 200 ms; cancel before it.
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        c.cancel();
    });
    let started = Instant::now();
    let (out, events) = run(&agent(client(&fake), s), "go", &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(matches!(out.finish, Finish::Cancelled), "{:?}", out.finish);
    assert_eq!(fake.received().len(), 1, "no model call after the cancel");
    let results: Vec<&String> = events.iter().filter(|e| e.starts_with("result")).collect();
    assert_eq!(results.len(), 2, "{events:?}");
    let last = out.history.last().unwrap();
    assert_eq!(last.role, "user");
    assert_eq!(last.parts.len(), 2);
    let slow = &last.parts[0]["functionResponse"];
    assert_eq!(slow["id"], "s");
    assert!(
        slow["response"]["error"].as_str().unwrap().contains("[Operation Cancelled]"),
        "{slow}"
    );
}

#[tokio::test]
async fn the_turn_limit_stops_a_model_that_keeps_calling_tools() {
    let call =
        || gemini_answer(json!([{"functionCall": {"name": "echo", "args": {"text": "again"}}}]));
    let fake = FakeModel::start(vec![call(), call(), call()]).await;
    let (_d, s) = scheduler();
    let mut a = agent(client(&fake), s);
    a.max_turns = Some(2);
    let (out, _) = run(&a, "loop", &CancellationToken::new()).await;
    assert!(matches!(out.finish, Finish::TurnLimit(2)), "{:?}", out.finish);
    assert_eq!(fake.received().len(), 2);
    // The history still pairs each call with its response.
    assert_eq!(out.history.len(), 5);
}
