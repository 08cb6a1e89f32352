//! `update_topic` (issue 19: missing), with upstream's texts (checked against Gemini CLI 0.61).

use serde_json::json;
use toolbelt_test_support::TempTree;

#[test]
fn a_new_topic_then_tactical_updates() {
    let t = TempTree::new();
    let session = super::harness::Session::new(super::harness::env_for(&t, &[]));
    let call = |args: serde_json::Value| {
        let o = session.run("update_topic", args);
        match o.result {
            Some(r) => Ok((format!("{:?}", r.llm_content), r.return_display)),
            None => Err(o.model["error"].as_str().unwrap_or_default().to_string()),
        }
    };
    let (llm, display) = call(
        json!({"title": "Setup", "summary": "We set up.", "strategic_intent": "Install deps."}),
    )
    .unwrap();
    assert_eq!(
        llm,
        r#"Text("Current topic: \"Setup\"\nTopic summary: We set up.\n\nStrategic Intent: Install deps.")"#
    );
    assert_eq!(
        display,
        json!(
            "## 📂 Topic: **Setup**\n\n**Summary:**\nWe set up.\n\n> [!STRATEGY]\n> **Intent:** Install deps."
        )
    );
    let (llm, _) = call(json!({"strategic_intent": "Run tests."})).unwrap();
    assert_eq!(llm, r#"Text("Strategic Intent: Run tests.")"#);
    // The same title again is not a new topic.
    let (llm, _) = call(json!({"title": "Setup", "strategic_intent": "Fix the build."})).unwrap();
    assert_eq!(llm, r#"Text("Strategic Intent: Fix the build.")"#);
    assert_eq!(
        call(json!({"title": "x"})).unwrap_err(),
        "params must have required property 'strategic_intent'"
    );
}
