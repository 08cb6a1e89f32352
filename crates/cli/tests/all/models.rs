//! The Gemini models `toolbelt run` talks to (issue 50 E3): 0.61's names and aliases.

use serde_json::json;
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};

use super::run::{command, output};

/// A name toolbelt does not know is refused before any request is sent, with the names there
/// are; an alias resolves as Gemini CLI 0.61 resolves it for an API-key user.
#[tokio::test]
async fn an_unknown_model_is_refused_before_any_request_and_aliases_resolve() {
    let t = TempTree::new();
    let fake = FakeModel::start(vec![gemini_answer(json!([{"text": "ok"}]))]).await;
    let (code, _, stderr) = output(command(&t, &["-m", "gemini-x", "hi"], Some(&fake.url))).await;
    assert_eq!(code, 42, "{stderr}");
    assert!(
        stderr.contains("\"gemini-x\" is not a Gemini model toolbelt knows")
            && stderr.contains("auto, gemini-3-pro-preview"),
        "{stderr}"
    );
    assert!(fake.received().is_empty());
    let (code, _, _) = output(command(&t, &["-m", "flash", "hi"], Some(&fake.url))).await;
    assert_eq!(code, 0);
    assert!(fake.received()[0].path.contains("/models/gemini-3-flash-preview:"));
}
