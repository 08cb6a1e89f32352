//! What `toolbelt run -o text` shows while it works (issue 50 E6).

use serde_json::json;
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer};

use super::run::command;

/// Issue 50 (E6): `run -o text` showed `→ tool` / `← ok` with no live shell output. A running
/// command's lines reach stderr as they are printed (the first before the last is printed),
/// stdout holds the answer alone, and no spinner is drawn when stderr is not a terminal.
#[tokio::test]
async fn text_output_streams_a_command_s_lines_to_stderr_as_they_come() {
    use tokio::io::AsyncBufReadExt as _;
    let t = TempTree::new();
    let fake = FakeModel::start(vec![
        gemini_answer(json!([{"functionCall": {"name": "run_shell_command", "args": {"command": "echo line 1; sleep 1.5; echo line 2"}}}])),
        gemini_answer(json!([{"text": "Printed two lines."}])),
    ])
    .await;
    let mut c = command(&t, &["--approval-mode", "yolo", "print"], Some(&fake.url));
    let mut child = c.spawn().unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let start = std::time::Instant::now();
    let mut seen = Vec::new();
    while let Some(line) = stderr.next_line().await.unwrap() {
        seen.push((line.clone(), start.elapsed()));
    }
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{seen:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Printed two lines.\n");
    let at = |needle: &str| {
        seen.iter()
            .find(|(l, _)| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {seen:?}"))
            .1
    };
    assert!(seen.iter().any(|(l, _)| l.starts_with("→ run_shell_command")), "{seen:?}");
    assert!(seen.iter().any(|(l, _)| l == "  │ line 1"), "{seen:?}");
    assert!(seen.iter().any(|(l, _)| l.starts_with("← run_shell_command: ok")), "{seen:?}");
    // The first line came while the command still ran (it sleeps 1.5 s before the second).
    assert!(at("│ line 2") >= at("│ line 1") + std::time::Duration::from_millis(1000), "{seen:?}");
    let all: String = seen.iter().map(|(l, _)| l.as_str()).collect();
    assert!(
        !all.contains("is running") && !all.contains('\r'),
        "no spinner off a terminal: {all:?}"
    );
}
