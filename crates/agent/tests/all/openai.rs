//! The loop over an OpenAI-compatible chat-completions server.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_agent::agent::Finish;
use toolbelt_agent::client::OpenAiClient;
use toolbelt_test_support::fake_model::{FakeModel, Reply, openai_answer};

use crate::{FAST_RETRY, agent, run, scheduler};

fn client(fake: &FakeModel, key: Option<&str>) -> Arc<OpenAiClient> {
    Arc::new(
        OpenAiClient::new(&format!("{}/v1", fake.url), "local-model", key.map(String::from))
            .with_retry(FAST_RETRY),
    )
}

#[tokio::test]
async fn tool_calls_become_tool_messages_in_order() {
    let fake = FakeModel::start(vec![
        openai_answer(
            &["Let me ", "look."],
            &[("c1", "echo", r#"{"text":"a"}"#), ("c2", "echo", r#"{"text":"b"}"#)],
        ),
        openai_answer(&["Done."], &[]),
    ])
    .await;
    let (_d, s) = scheduler();
    let (out, events) =
        run(&agent(client(&fake, Some("sk-test")), s), "check", &CancellationToken::new()).await;
    assert!(matches!(out.finish, Finish::Done));
    assert_eq!(out.final_text, "Done.");
    assert_eq!(out.stats.usage.total_tokens, 20);
    assert_eq!(events[..2], ["text Let me ".to_string(), "text look.".to_string()]);
    let got = fake.received();
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(got[0].headers["authorization"], "Bearer sk-test");
    assert_eq!(got[0].body["model"], "local-model");
    assert_eq!(got[0].body["stream"], true);
    assert_eq!(got[0].body["tools"][0]["type"], "function");
    assert_eq!(got[0].body["tools"][0]["function"]["name"], "echo");
    assert_eq!(
        got[1].body["messages"],
        json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "check"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"a\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"b\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "{\"output\":\"a\"}"},
            {"role": "tool", "tool_call_id": "c2", "content": "{\"output\":\"b\"}"}
        ])
    );
}

#[tokio::test]
async fn malformed_arguments_get_an_error_response_and_the_raw_text_goes_back() {
    let fake = FakeModel::start(vec![
        openai_answer(&[], &[("c1", "echo", "{\"text\": oops")]),
        openai_answer(&["Sorry."], &[]),
    ])
    .await;
    let (_d, s) = scheduler();
    let (out, _) = run(&agent(client(&fake, None), s), "go", &CancellationToken::new()).await;
    assert!(matches!(out.finish, Finish::Done));
    let got = fake.received();
    assert!(got[0].headers.get("authorization").is_none(), "no key, no header");
    let messages = got[1].body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["tool_calls"][0]["function"]["arguments"], "{\"text\": oops");
    let content = messages[3]["content"].as_str().unwrap();
    assert!(content.contains("not a JSON object"), "{content}");
}

#[tokio::test]
async fn a_stream_without_done_is_retried() {
    let cut = Reply::Raw(vec![
        json!({"choices": [{"index": 0, "delta": {"content": "half"}}]}).to_string(),
    ]);
    let fake = FakeModel::start(vec![cut, openai_answer(&["whole"], &[])]).await;
    let (_d, s) = scheduler();
    let (out, events) = run(&agent(client(&fake, None), s), "go", &CancellationToken::new()).await;
    assert_eq!(out.final_text, "whole");
    assert!(events.contains(&"retry 2".to_string()), "{events:?}");
    assert_eq!(fake.received().len(), 2);
}
