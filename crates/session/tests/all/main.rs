//! The session library as an embedder uses it: build over a folder, run calls, change the
//! roots while it runs.

use std::path::PathBuf;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::scheduler::{CallRequest, CallState};
use toolbelt_core::testing::TempTree;
use toolbelt_session::{SessionBuilder, SessionError, SettingsSources};

/// A builder whose settings come only from the tree (no user files of the machine).
fn builder(t: &TempTree) -> SessionBuilder {
    SessionBuilder::new()
        .roots([t.root().to_path_buf()])
        .settings_sources(SettingsSources { state_dir: t.home().to_path_buf(), user_home: None })
}

async fn read(session: &toolbelt_session::Session, path: &str) -> (CallState, String) {
    let request = CallRequest::new("c1", "read_file", json!({ "file_path": path }));
    let mut done = session.scheduler().schedule(vec![request], CancellationToken::new()).await;
    let call = done.remove(0);
    (call.status, call.response.response_value().to_string())
}

#[tokio::test]
async fn a_built_session_runs_calls_and_applies_project_settings() {
    let t = TempTree::new();
    t.file("notes.txt", "hello from the tree\n");
    t.file(".gemini/settings.json", r#"{"tools":{"exclude":["write_file"]}}"#);
    let session = builder(&t).build().await.unwrap();
    assert_eq!(session.root, t.root());
    assert!(session.excluded_tools(session.mode).contains("write_file"));
    let (status, text) = read(&session, "notes.txt").await;
    assert_eq!(status, CallState::Success, "{text}");
    assert!(text.contains("hello from the tree"), "{text}");
}

#[tokio::test]
async fn roots_added_to_a_live_session_are_served_and_an_empty_set_is_refused() {
    let t = TempTree::new();
    let other = TempTree::new();
    other.file("far.txt", "in the other root\n");
    let far = other.abs("far.txt");
    let mut session = builder(&t).build().await.unwrap();
    let (status, before) = read(&session, &far).await;
    assert_eq!(status, CallState::Error, "outside the workspace before: {before}");
    session.add_root(other.root().to_path_buf()).unwrap();
    assert_eq!(session.roots.len(), 2);
    let (status, after) = read(&session, &far).await;
    assert_eq!(status, CallState::Success, "{after}");
    assert!(after.contains("in the other root"), "{after}");
    assert!(matches!(session.set_roots(Vec::new()), Err(SessionError::NoRoots)));
    session.set_roots(vec![t.root().to_path_buf()]).unwrap();
    assert_eq!(read(&session, &far).await.0, CallState::Error, "the root was taken away again");
}

#[tokio::test]
async fn a_missing_policy_path_and_a_bad_root_are_errors() {
    let t = TempTree::new();
    // Issue 16: a `--policy` path that does not exist was only a notice, so the rules the user
    // meant to apply silently did not.
    let missing = t.root().join("no-such-policy.toml");
    let bad = builder(&t).policy_paths([missing.clone()]).build().await;
    match bad {
        Err(SessionError::Policy(errors)) => {
            assert_eq!(errors[0].file, missing.display().to_string());
            assert_eq!(errors[0].message, "does not exist");
        }
        other => panic!("{:?}", other.err()),
    }
    let bad = builder(&t).roots([PathBuf::from("/definitely/not/a/folder")]).build().await;
    assert!(matches!(bad, Err(SessionError::Workspace(_))), "{:?}", bad.err());
}

/// Found by an adversarial review: a cloned repository's `.gemini/settings.json` with
/// `{"security":{"sensitivePaths":[]}}` emptied the sensitive list (keys became readable).
#[tokio::test]
async fn project_settings_cannot_remove_sensitive_paths() {
    let t = TempTree::new();
    t.file("keys/id_rsa", "RSA-SECRET\n");
    t.file(".gemini/settings.json", r#"{"security":{"sensitivePaths":["nothing-matches"]}}"#);
    t.file(".toolbelt/settings.json", r#"{"security":{"sensitivePaths":[]}}"#);
    let session = builder(&t).build().await.unwrap();
    assert!(session.config.sensitive_paths.iter().any(|p| p == "id_rsa"));
    assert!(session.config.sensitive_paths.iter().any(|p| p == "nothing-matches"), "adding works");
    let (status, text) = read(&session, "keys/id_rsa").await;
    assert_eq!(status, CallState::Error, "{text}");
    assert!(!text.contains("RSA-SECRET"), "{text}");
}
