//! Issue 36: `toolbelt acp` driven by the official ACP client SDKs (Python
//! `agent-client-protocol`, TypeScript `@agentclientprotocol/sdk`, installed by
//! `scripts/acp-clients.sh` on first use) with the fake Gemini server as the model: a session
//! that reads, greps, edits (an "allow always" answer, then an edit not asked), runs a shell
//! command with live output, is cancelled mid-command, switches to plan mode, creates a file
//! through the editor, has a write rejected, and is loaded again in a new process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, Reply, gemini_answer};

/// The SDKs, installed once per test run.
pub(crate) fn clients() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp-clients");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/acp-clients.sh");
        let out = std::process::Command::new("bash").arg(script).arg(&dir).output().unwrap();
        assert!(
            out.status.success(),
            "installing the ACP client SDKs failed (needs python3 with venv, npm and their registries): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn call(name: &str, args: Value) -> Value {
    json!({"functionCall": {"name": name, "args": args}})
}

/// The model's answers, in the order the scenario asks for them.
fn replies(root: &Path) -> Vec<Reply> {
    let notes = root.join("notes.txt").display().to_string();
    let say = |t: &str| gemini_answer(json!([{"text": t}]));
    vec![
        // read-grep
        gemini_answer(json!([
            call("read_file", json!({"file_path": notes})),
            call("grep_search", json!({"pattern": "banana"})),
        ])),
        say("Read and searched."),
        // the plan and the session's title
        gemini_answer(json!([
            call(
                "write_todos",
                json!({"todos": [
                    {"description": "Read the notes", "status": "completed"},
                    {"description": "Edit the notes", "status": "in_progress"},
                    {"description": "Run a command", "status": "pending"},
                ]})
            ),
            call(
                "update_topic",
                json!({"title": "Fruit notes", "strategic_intent": "Tidy the notes."})
            ),
        ])),
        say("Planned."),
        // edit: asked once ("allow always"), then not asked
        gemini_answer(json!([call(
            "replace",
            json!({"file_path": notes, "instruction": "Uppercase apple.", "old_string": "apple", "new_string": "APPLE"})
        )])),
        gemini_answer(json!([call(
            "replace",
            json!({"file_path": notes, "instruction": "Uppercase cherry.", "old_string": "cherry", "new_string": "CHERRY"})
        )])),
        say("Both edits done."),
        // shell, with live output
        gemini_answer(json!([call(
            "run_shell_command",
            json!({"command": "for i in 1 2 3; do echo line $i; sleep 0.4; done"})
        )])),
        say("Printed three lines."),
        // cancel: the turn ends with the command; no answer after it
        gemini_answer(json!([call(
            "run_shell_command",
            json!({"command": "sleep 17.25; echo never"})
        )])),
        // plan mode: the edit is refused
        gemini_answer(json!([call(
            "replace",
            json!({"file_path": notes, "instruction": "Uppercase banana.", "old_string": "banana", "new_string": "BANANA"})
        )])),
        say("Planned only."),
        // a new file through the editor
        gemini_answer(json!([call(
            "write_file",
            json!({"file_path": root.join("new.txt"), "content": "brand new\n"})
        )])),
        say("Created."),
        // a rejected write
        gemini_answer(json!([call(
            "write_file",
            json!({"file_path": root.join("rejected.txt"), "content": "no\n"})
        )])),
        say("The write was rejected."),
    ]
}

/// Runs one client's scenario against a fresh project and returns its report.
async fn scenario(
    run: impl FnOnce(&TempTree, &Path, &str) -> std::process::Output,
) -> (TempTree, Value) {
    let t = TempTree::new();
    t.file("notes.txt", "apple\nbanana\ncherry\n");
    t.file("fruit.py", "def banana():\n    return \"yellow\"\n");
    let fake = FakeModel::start(replies(&t.root().canonicalize().unwrap())).await;
    let report = t.home().join("report.json");
    // The client blocks this thread; the fake model answers from the runtime's other one.
    let output = tokio::task::block_in_place(|| run(&t, &report, &fake.url));
    let text = std::fs::read_to_string(&report).unwrap_or_else(|_| {
        panic!(
            "no report: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (t, serde_json::from_str(&text).unwrap())
}

/// The environment every client starts `toolbelt acp` with.
pub(crate) fn agent_env(c: &mut std::process::Command, t: &TempTree, url: &str) {
    c.env("TOOLBELT_HOME", t.home())
        .env("HOME", t.home())
        .env("GEMINI_API_KEY", "placeholder")
        .env("GOOGLE_GEMINI_BASE_URL", url)
        .env_remove("GEMINI_MODEL")
        .env_remove("OPENAI_API_KEY");
}

/// The updates of one step, as JSON.
fn updates(step: &Value) -> Vec<&Value> {
    step["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "update")
        .map(|e| &e["update"])
        .collect()
}

fn step<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap()
}

/// Each tool call of a step: its announcement comes first, and it ends in one final status.
fn calls_end_once(step: &Value) {
    let ups = updates(step);
    let mut announced = Vec::new();
    for (i, u) in ups.iter().enumerate() {
        let id = u["toolCallId"].as_str();
        match u["sessionUpdate"].as_str() {
            Some("tool_call") => announced.push(id.unwrap().to_string()),
            Some("tool_call_update") => {
                let id = id.unwrap();
                assert!(announced.iter().any(|a| a == id), "update before the announcement: {u}");
                if matches!(u["status"].as_str(), Some("completed" | "failed")) {
                    let later = ups[i + 1..].iter().filter(|v| v["toolCallId"] == id).count();
                    assert_eq!(later, 0, "an update after the final status of {id}");
                }
            }
            _ => {}
        }
    }
    for id in &announced {
        let finals = ups
            .iter()
            .filter(|u| u["toolCallId"] == id.as_str())
            .filter(|u| matches!(u["status"].as_str(), Some("completed" | "failed")))
            .count();
        assert_eq!(finals, 1, "{id} ends once: {}", step["name"]);
    }
    // A permission request is about a call already announced.
    for (i, e) in step["events"].as_array().unwrap().iter().enumerate() {
        if e["kind"] == "permission" {
            let id = &e["toolCall"]["toolCallId"];
            let before = step["events"].as_array().unwrap()[..i].iter().any(|b| {
                b["kind"] == "update"
                    && b["update"]["sessionUpdate"] == "tool_call"
                    && b["update"]["toolCallId"] == *id
            });
            assert!(before, "permission asked before the call was announced: {e}");
        }
    }
}

/// What both clients' reports must show.
fn check(report: &Value, root: &Path) {
    let init = &report["initialize"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["agentCapabilities"]["promptCapabilities"]["embeddedContext"], true);
    let modes = &report["new_session"]["modes"];
    assert_eq!(modes["currentModeId"], "default");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["default", "autoEdit", "yolo", "plan"]);

    // read-grep: the editor's unsaved buffer is what read_file gave the model.
    let s = step(report, "read-grep");
    assert_eq!(s["stop"], "end_turn", "{s}");
    calls_end_once(s);
    let ups = updates(s);
    let kinds: Vec<&str> = ups
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| u["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["read", "search"]);
    let read_done = ups
        .iter()
        .find(|u| {
            u["status"] == "completed" && u["toolCallId"].as_str().unwrap().starts_with("read_file")
        })
        .unwrap();
    assert!(read_done.to_string().contains("unsaved line in the editor"), "{read_done}");
    let located = ups
        .iter()
        .any(|u| u["locations"][0]["path"] == root.join("notes.txt").display().to_string());
    assert!(located, "the read's location is the file");
    assert!(ups.iter().any(|u| u["sessionUpdate"] == "agent_message_chunk"
        && u["content"]["text"] == "Read and searched."));

    // todos: the plan and the title as the protocol's updates
    let s = step(report, "todos");
    assert_eq!(s["stop"], "end_turn", "{s}");
    calls_end_once(s);
    let ups = updates(s);
    let plan =
        ups.iter().find(|u| u["sessionUpdate"] == "plan").unwrap_or_else(|| panic!("{ups:?}"));
    let entries: Vec<(&str, &str)> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["content"].as_str().unwrap(), e["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        entries,
        [
            ("Read the notes", "completed"),
            ("Edit the notes", "in_progress"),
            ("Run a command", "pending")
        ]
    );
    assert!(
        ups.iter()
            .any(|u| u["sessionUpdate"] == "session_info_update" && u["title"] == "Fruit notes"),
        "{ups:?}"
    );

    // edit: one permission request with the diff, answered "allow always"; the second edit is
    // not asked; both land in the editor (fs/write_text_file), unsaved line included.
    let s = step(report, "edit");
    assert_eq!(s["stop"], "end_turn", "{s}");
    calls_end_once(s);
    let asked: Vec<&Value> =
        s["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "permission").collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let diff = &asked[0]["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff", "{diff}");
    assert!(diff["newText"].as_str().unwrap().starts_with("APPLE\n"));
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "allow_always", "reject_once"]);
    let writes = s["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "fs_write").count();
    assert_eq!(writes, 2);
    assert_eq!(report["after_edit"], "APPLE\nbanana\nCHERRY\n(an unsaved line in the editor)\n");
    let finals: Vec<&Value> =
        updates(s).into_iter().filter(|u| u["status"] == "completed").collect();
    assert!(finals.iter().all(|u| u["content"][0]["type"] == "diff"), "{finals:?}");
    // "Always" on an edit switches the session to auto-edit, and the editor is told.
    assert!(
        updates(s).iter().any(
            |u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "autoEdit"
        )
    );

    // shell: asked (commands ask in auto-edit); output streams before the call ends.
    let s = step(report, "shell");
    assert_eq!(s["stop"], "end_turn", "{s}");
    calls_end_once(s);
    let ups = updates(s);
    let live: Vec<&str> = ups
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u.get("status").is_none())
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .collect();
    assert!(live.len() >= 2, "output came as it was printed: {live:?}");
    assert!(live[0].starts_with("line 1") && !live[0].contains("line 3"), "{live:?}");
    let done = ups.iter().find(|u| u["status"] == "completed").unwrap();
    assert!(done.to_string().contains("line 3"), "{done}");

    // cancel: stop reason `cancelled`, the call failed, nothing left running.
    let s = step(report, "cancel");
    assert_eq!(s["stop"], "cancelled", "{s}");
    assert!(
        !s["running_before_cancel"].as_array().unwrap().is_empty(),
        "the command was running: {s}"
    );
    calls_end_once(s);
    assert!(updates(s).iter().any(|u| u["status"] == "failed"));
    assert_eq!(report["left_after_cancel"], json!([]), "processes left after the cancel");

    // plan mode: the edit is refused without asking and the file is unchanged.
    let s = step(report, "plan-edit");
    assert_eq!(s["stop"], "end_turn", "{s}");
    calls_end_once(s);
    assert!(!s["events"].as_array().unwrap().iter().any(|e| e["kind"] == "permission"));
    assert!(updates(s).iter().any(|u| u["status"] == "failed"));
    assert_eq!(report["after_plan"], report["after_edit"]);

    // a new file through the editor (no "Resource not found" for a file that is not there yet)
    let s = step(report, "new-file");
    assert_eq!(s["stop"], "end_turn", "{s}");
    calls_end_once(s);
    assert_eq!(report["new_file"], "brand new\n");
    assert!(s["events"].as_array().unwrap().iter().any(
        |e| e["kind"] == "fs_write" && e["path"] == root.join("new.txt").display().to_string()
    ));

    // a rejected write ends failed, and nothing is written
    let s = step(report, "reject");
    assert_eq!(s["stop"], "end_turn", "{s}");
    calls_end_once(s);
    assert!(updates(s).iter().any(|u| u["status"] == "failed"));
    assert_eq!(report["rejected_exists"], false);

    let unknown = report["unknown_session"].as_str().unwrap();
    assert!(unknown.contains("not found") || unknown.contains("-32002"), "{unknown}");

    // load: the history replayed in a new process.
    let events = report["load"]["events"].as_array().unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "update")
        .map(|e| e["update"]["sessionUpdate"].as_str().unwrap())
        .collect();
    assert!(kinds.iter().filter(|k| **k == "user_message_chunk").count() >= 8, "{kinds:?}");
    assert!(kinds.iter().filter(|k| **k == "tool_call").count() >= 10, "{kinds:?}");
    let first_user =
        events.iter().find(|e| e["update"]["sessionUpdate"] == "user_message_chunk").unwrap();
    assert_eq!(
        first_user["update"]["content"]["text"],
        "What is in notes.txt, and where is banana?"
    );
    assert_eq!(report["load"]["response"]["modes"]["currentModeId"], "default");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_drives_a_whole_session() {
    let dir = clients().clone();
    let (t, report) = scenario(|t, report, url| {
        let mut c = std::process::Command::new(dir.join("venv/bin/python"));
        c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/scenario.py"))
            .arg(env!("CARGO_BIN_EXE_toolbelt"))
            .arg(t.root())
            .arg(report);
        agent_env(&mut c, t, url);
        c.output().unwrap()
    })
    .await;
    check(&report, &t.root().canonicalize().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_drives_a_whole_session() {
    let dir = clients().clone();
    let (t, report) = scenario(|t, report, url| {
        let mut c = std::process::Command::new("node");
        c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/scenario.mjs"))
            .arg(&dir)
            .arg(env!("CARGO_BIN_EXE_toolbelt"))
            .arg(t.root())
            .arg(report);
        agent_env(&mut c, t, url);
        c.output().unwrap()
    })
    .await;
    check(&report, &t.root().canonicalize().unwrap());
}
