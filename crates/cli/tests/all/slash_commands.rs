//! Slash commands in `toolbelt run` (issue 50 E1; the editor's are in acp_editor.rs).

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};

use super::run::{command, output};

/// Issue 50 (E1): a prompt that is a slash command is answered by toolbelt, not the model.
#[tokio::test]
async fn slash_commands_are_answered_without_the_model() {
    let t = TempTree::new();
    let fake = FakeModel::start(vec![]).await;
    let (code, stdout, stderr) = output(command(&t, &["/help"], Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("- /memory show | add <fact> | refresh:") && stdout.contains("- /about:"),
        "{stdout}"
    );
    let (code, stdout, _) = output(command(&t, &["/tools"], Some(&fake.url))).await;
    assert_eq!(code, 0);
    assert!(stdout.contains("- read_file: "), "{stdout}");
    let (code, _, stderr) = output(command(&t, &["/memory add"], Some(&fake.url))).await;
    assert_eq!(code, 42);
    assert!(stderr.contains("/memory add <fact>"), "{stderr}");
    let (code, stdout, stderr) = output(command(
        &t,
        &["--approval-mode", "yolo", "/memory add I prefer tabs"],
        Some(&fake.url),
    ))
    .await;
    assert_eq!((code, stdout.as_str()), (0, "Remembered.\n"), "{stderr}");
    let memory = std::fs::read_to_string(t.home().join(".gemini/GEMINI.md")).unwrap();
    assert!(memory.contains("I prefer tabs"), "{memory}");
    let (_, stdout, _) =
        output(command(&t, &["-o", "json", "/memory show"], Some(&fake.url))).await;
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["response"].as_str().unwrap().contains("I prefer tabs"), "{v}");
    assert!(fake.received().is_empty(), "no command reached the model");
    // /init asks the model to write GEMINI.md, and not when there is one.
    let fake = FakeModel::start(vec![gemini_answer(json!([{"text": "Wrote GEMINI.md."}]))]).await;
    let (code, stdout, _) = output(command(&t, &["/init"], Some(&fake.url))).await;
    assert_eq!((code, stdout.as_str()), (0, "Wrote GEMINI.md.\n"));
    let asked = fake.received()[0].body["contents"].to_string();
    assert!(asked.contains("write a GEMINI.md file at its top folder"), "{asked}");
    t.file("GEMINI.md", "# rules\n");
    let (code, stdout, _) = output(command(&t, &["/init"], Some(&fake.url))).await;
    assert_eq!(code, 0);
    assert!(stdout.contains("GEMINI.md exists already"), "{stdout}");
    assert_eq!(fake.received().len(), 1);
}
