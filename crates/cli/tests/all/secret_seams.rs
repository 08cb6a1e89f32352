//! Issue 50 reviews, through the front ends: what a person's configuration holds in a URL and
//! what the process's environment holds do not reach the screen, the editor or the model by
//! way of the new editor features' seams.

use serde_json::json;
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};

use super::run::{command, output};

/// An MCP server's URL with a password, a key in its query and a fragment: `mcp list`, the
/// unavailable-server warning of `call`, and a run all name the server without them (the old
/// binary printed all three).
#[tokio::test]
async fn an_mcp_url_s_secrets_are_not_shown_by_any_front_end() {
    let t = TempTree::new();
    let settings = t.home().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"mcpServers": {"x": {"httpUrl": "http://user:PASS1@127.0.0.1:1/mcp?key=SECRET2#FRAG3"}}})
            .to_string(),
    )
    .unwrap();
    let shown = |r: &crate::Run| format!("{}{}", r.stdout, r.stderr);
    let list = crate::toolbelt(&t, &["mcp", "list"], None);
    let call = crate::toolbelt(&t, &["call", "read_file", r#"{"file_path":"none"}"#], None);
    let fake = FakeModel::start(vec![gemini_answer(json!([{"text": "ok"}]))]).await;
    let (_, out, err) = output(command(&t, &["hi"], Some(&fake.url))).await;
    for text in [shown(&list), shown(&call), format!("{out}{err}"), fake.bodies()[0].to_string()] {
        for secret in ["PASS1", "SECRET2", "FRAG3"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
    assert!(shown(&list).contains("http://127.0.0.1:1/mcp?…"), "{}", shown(&list));
}

/// `GEMINI_SYSTEM_MD` naming `/proc/self/environ` (or a link to it in the home folder, or a
/// project's `.gemini/system.md` linked out of a trusted project) sent the environment, API
/// key included, to the model as its instructions. `toolbelt run` keeps its own prompt and
/// says why.
#[tokio::test]
async fn gemini_system_md_never_sends_the_environment_to_the_model() {
    let t = TempTree::new();
    assert_eq!(crate::toolbelt(&t, &["trust"], None).code, 0);
    let link = t.home().join("my-prompt.md");
    std::os::unix::fs::symlink("/proc/self/environ", &link).unwrap();
    std::fs::create_dir_all(t.root().join(".gemini")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", t.root().join(".gemini/system.md")).unwrap();
    for value in ["/proc/self/environ", link.to_str().unwrap(), "true", ".gemini/system.md"] {
        let fake = FakeModel::start(vec![gemini_answer(json!([{"text": "ok"}]))]).await;
        let mut c = command(&t, &["hi"], Some(&fake.url));
        c.env("GEMINI_SYSTEM_MD", value).env("SEAM_MARKER", "ENV-CANARY-7");
        let (code, _, stderr) = output(c).await;
        assert_eq!(code, 0, "{value}: {stderr}");
        let body = fake.bodies()[0].to_string();
        assert!(!body.contains("ENV-CANARY-7") && !body.contains("GEMINI_API_KEY"), "{value}");
        assert!(body.contains("# Explore before you edit"), "toolbelt's own prompt for {value}");
        assert!(stderr.contains("toolbelt's own prompt is used"), "{value}: {stderr}");
    }
}
