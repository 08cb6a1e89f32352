//! `toolbelt run` end to end: the binary against fake model servers, a replayed session and
//! the built-in demo; exit codes, output formats and Ctrl-C.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, gemini_answer, openai_answer};

/// `toolbelt run ARGS` with the fake Gemini server as the API, stdin closed.
pub(crate) fn command(t: &TempTree, args: &[&str], base: Option<&str>) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(crate::binary());
    c.arg("run")
        .args(args)
        .current_dir(t.root())
        .env("TOOLBELT_HOME", t.home())
        .env("HOME", t.home())
        .env_remove("GEMINI_MODEL")
        .env_remove("GEMINI_SYSTEM_MD")
        .env_remove("GOOGLE_GENAI_USE_VERTEXAI")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match base {
        Some(b) => c.env("GEMINI_API_KEY", "k").env("GOOGLE_GEMINI_BASE_URL", b),
        None => c.env_remove("GEMINI_API_KEY"),
    };
    c
}

fn trust(t: &TempTree) {
    assert_eq!(crate::toolbelt(t, &["trust"], None).code, 0);
}

pub(crate) async fn output(mut c: tokio::process::Command) -> (i32, String, String) {
    let o = c.output().await.unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_gemini_session_runs_tools_and_prints_the_answer() {
    let t = TempTree::new();
    t.file("notes.txt", "the secret is 42\n");
    t.file("GEMINI.md", "Always answer in one line.\n");
    // Project context files are read in trusted folders only.
    trust(&t);
    let fake = FakeModel::start(vec![
        gemini_answer(json!([{"text": "Reading."}, {"functionCall": {"name": "read_file", "args": {"file_path": "notes.txt"}}}])),
        gemini_answer(json!([{"text": "The secret is 42."}])),
    ])
    .await;
    let (code, stdout, stderr) =
        output(command(&t, &["what is the secret?"], Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "Reading.\nThe secret is 42.\n");
    assert!(
        stderr.contains("→ read_file {\"file_path\":\"notes.txt\"}")
            && stderr.contains("← read_file: ok"),
        "{stderr}"
    );
    let bodies = fake.bodies();
    assert_eq!(bodies[0]["contents"][0]["parts"][0]["text"], "what is the secret?");
    let system = bodies[0]["systemInstruction"]["parts"][0]["text"].as_str().unwrap();
    assert!(
        system.contains("Always answer in one line.") && system.contains("--- Context from: "),
        "{system}"
    );
    let names: Vec<&str> = bodies[0]["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_file"), "{names:?}");
    assert!(
        !names.contains(&"run_shell_command"),
        "headless default mode leaves out tools that would ask: {names:?}"
    );
    let response = &bodies[1]["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "read_file");
    assert_eq!(response["response"]["output"], "the secret is 42\n");
}

/// Issue 16: `context.fileName: ["AGENTS.md", "GEMINI.md"]` and `model.name` were shown by
/// `config show` but AGENTS.md was not loaded and the model stayed gemini-2.5-flash.
#[tokio::test]
async fn context_file_names_and_model_name_from_settings() {
    let t = TempTree::new();
    t.file("AGENTS.md", "Agents rule: be brief.\n");
    t.file("GEMINI.md", "Gemini rule: be kind.\n");
    t.file("CLAUDE.md", "not configured\n");
    trust(&t);
    let settings = t.home().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        r#"{"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}, "model": {"name": "gemini-2.5-pro"}}"#,
    )
    .unwrap();
    let fake = FakeModel::start(vec![gemini_answer(json!([{"text": "ok"}]))]).await;
    let (code, _, stderr) = output(command(&t, &["hi"], Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    let got = fake.received();
    assert!(got[0].path.contains("/models/gemini-2.5-pro:"), "{}", got[0].path);
    let system = got[0].body["systemInstruction"]["parts"][0]["text"].as_str().unwrap().to_string();
    assert!(system.contains("Agents rule") && system.contains("Gemini rule"), "{system}");
    assert!(!system.contains("not configured"), "{system}");
    // -m still wins.
    let fake = FakeModel::start(vec![gemini_answer(json!([{"text": "ok"}]))]).await;
    let (code, _, _) = output(command(&t, &["-m", "models/gemini-x", "hi"], Some(&fake.url))).await;
    assert_eq!(code, 0);
    assert!(fake.received()[0].path.contains("/models/gemini-x:"));
}

#[tokio::test]
async fn json_and_stream_json_outputs_with_an_openai_compatible_server() {
    let t = TempTree::new();
    t.file("a.txt", "alpha\n");
    let fake = FakeModel::start(vec![
        openai_answer(
            &[],
            &[
                ("c1", "read_file", r#"{"file_path":"a.txt"}"#),
                ("c2", "read_file", r#"{"file_path":"missing.txt"}"#),
            ],
        ),
        openai_answer(&["Done"], &[]),
        openai_answer(&[], &[("c3", "read_file", r#"{"file_path":"a.txt"}"#)]),
        openai_answer(&["Again"], &[]),
    ])
    .await;
    let base = format!("{}/v1", fake.url);
    let (code, stdout, stderr) = output(command(
        &t,
        &["--base-url", &base, "-m", "qwen", "-o", "stream-json", "read"],
        None,
    ))
    .await;
    assert_eq!(code, 0, "{stderr}");
    let events: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "init",
            "message",
            "tool_use",
            "tool_use",
            "tool_result",
            "tool_result",
            "message",
            "result"
        ]
    );
    assert_eq!(events[0]["model"], "qwen");
    assert!(events[0]["session_id"].as_str().is_some_and(|s| s.starts_with("toolbelt-")));
    assert_eq!(events[4]["status"], "success");
    assert_eq!(events[5]["status"], "error");
    assert_eq!(events[5]["error"]["type"], "file_not_found");
    assert_eq!(events[7]["stats"]["tool_calls"], 2);
    assert_eq!(fake.received()[0].body["model"], "qwen");

    let (code, stdout, _) =
        output(command(&t, &["--base-url", &base, "-o", "json", "read"], None)).await;
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["response"], "Again");
    let models = v["stats"]["models"].as_object().unwrap();
    assert_eq!(models.values().next().unwrap()["api"]["totalRequests"], 2, "{v}");
    assert!(v.get("error").is_none());
}

/// The keys of a value, recursively; in maps keyed by names (models, tools by name, roles)
/// every entry has the shape of the first.
fn shape(v: &Value, name_keyed: bool) -> Value {
    match v {
        Value::Object(m) if name_keyed => {
            m.values().next().map_or(json!({}), |first| json!({"<name>": shape(first, false)}))
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    (k.clone(), shape(x, matches!(k.as_str(), "models" | "byName" | "roles")))
                })
                .collect(),
        ),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
        other => other.clone(),
    }
}

/// Issue 21: `-o json` had toolbelt's own shape (`stats.model_calls`, ...); it now has Gemini
/// CLI's (`session_id`, `response`, `stats.models/tools/files`), checked against the output of
/// upstream's own JsonFormatter (tests/fixtures/gemini-headless.json).
#[tokio::test]
async fn json_output_has_gemini_clis_shape() {
    let t = TempTree::new();
    t.file("a.txt", "alpha\n");
    let fake = FakeModel::start(vec![
        gemini_answer(json!([{"functionCall": {"name": "web_fetch_nope", "args": {}}}, {"functionCall": {"name": "read_file", "args": {"file_path": "a.txt"}}}])),
        gemini_answer(json!([{"text": "done"}])),
    ])
    .await;
    let (code, stdout, stderr) =
        output(command(&t, &["-o", "json", "read"], Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    let ours: Value = serde_json::from_str(&stdout).unwrap();
    let theirs: Value =
        serde_json::from_str(include_str!("../fixtures/gemini-headless.json")).unwrap();
    assert_eq!(shape(&ours, false), shape(&theirs, false), "{stdout}");
    let tools = &ours["stats"]["tools"];
    assert_eq!(tools["totalCalls"], 2);
    assert_eq!((tools["totalSuccess"].clone(), tools["totalFail"].clone()), (json!(1), json!(1)));
    assert_eq!(tools["byName"]["read_file"]["decisions"]["auto_accept"], 1);
    // The default model, 0.61's `auto`, asks gemini-3-pro-preview (issue 50 E3).
    assert_eq!(ours["stats"]["models"]["gemini-3-pro-preview"]["api"]["totalRequests"], 2);
    assert!(ours["session_id"].as_str().is_some_and(|s| !s.is_empty()));
}

#[tokio::test]
async fn exit_codes_for_no_prompt_no_key_and_the_turn_limit() {
    let t = TempTree::new();
    let (code, _, stderr) = output(command(&t, &[], None)).await;
    assert_eq!(code, 42, "{stderr}");
    let (code, _, stderr) = output(command(&t, &["hi"], None)).await;
    assert_eq!(code, 41);
    assert!(stderr.contains("GEMINI_API_KEY") && stderr.contains("--replay"), "{stderr}");
    let call = || {
        gemini_answer(
            json!([{"functionCall": {"name": "list_directory", "args": {"dir_path": "."}}}]),
        )
    };
    let fake = FakeModel::start(vec![call(), call()]).await;
    let (code, stdout, stderr) =
        output(command(&t, &["--max-turns", "2", "-o", "json", "loop"], Some(&fake.url))).await;
    assert_eq!(code, 53, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["error"]["type"], "turn_limit");
}

#[tokio::test]
async fn a_recorded_session_replays_without_a_model_and_the_demo_runs() {
    let t = TempTree::new();
    t.file("README.md", "# demo\n");
    let fake = FakeModel::start(vec![
        gemini_answer(json!([{"functionCall": {"name": "glob", "args": {"pattern": "*.md"}}}])),
        gemini_answer(json!([{"text": "One Markdown file."}])),
    ])
    .await;
    let rec = t.home().join("session.jsonl");
    let rec_arg = rec.display().to_string();
    let (code, live, _) =
        output(command(&t, &["--record", &rec_arg, "find docs"], Some(&fake.url))).await;
    assert_eq!(code, 0);
    drop(fake);
    let (code, replayed, stderr) =
        output(command(&t, &[&format!("--replay={rec_arg}"), "find docs"], None)).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(replayed, live);
    assert!(stderr.contains("← glob: ok"), "{stderr}");

    let (code, stdout, stderr) = output(command(&t, &["--replay", "what is here?"], None)).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("replayed from a recording"), "{stdout}");
    assert!(stderr.contains("← list_directory: ok"), "{stderr}");

    // Issue 21: `--replay FILE` with a space played the built-in demo with the path as the
    // prompt; a missing recording exited 42 (no prompt) instead of 1 with the path.
    let (code, replayed, stderr) =
        output(command(&t, &["--replay", &rec_arg, "find docs"], None)).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(replayed, live);
    let missing = t.home().join("nope.jsonl").display().to_string();
    let (code, _, stderr) = output(command(&t, &["--replay", &missing, "find docs"], None)).await;
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("cannot read {missing}")), "{stderr}");
    let (code, _, stderr) = output(command(&t, &["--replay", &missing], None)).await;
    assert_eq!(code, 1, "a path alone is a recording, not a prompt: {stderr}");
}

#[cfg(unix)]
#[tokio::test]
async fn ctrl_c_cancels_the_running_call_answers_it_and_exits_130() {
    let t = TempTree::new();
    let fake = FakeModel::start(vec![
        gemini_answer(json!([{"functionCall": {"id": "s1", "name": "run_shell_command", "args": {"command": "sleep 30"}}}])),
        gemini_answer(json!([{"text": "never"}])),
    ])
    .await;
    let mut c =
        command(&t, &["--approval-mode", "yolo", "-o", "stream-json", "sleep"], Some(&fake.url));
    let child = c.spawn().unwrap();
    let pid = child.id().unwrap() as i32;
    let started = Instant::now();
    // Wait until the call runs, then send SIGINT.
    while fake.received().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGINT)
        .unwrap();
    let o = child.wait_with_output().await.unwrap();
    assert_eq!(o.status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(10));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let result = stdout
        .lines()
        .find(|l| l.contains("\"tool_result\""))
        .unwrap_or_else(|| panic!("{stdout}"));
    let v: Value = serde_json::from_str(result).unwrap();
    assert_eq!(v["tool_id"], "s1");
    assert_eq!(v["status"], "error");
    assert!(v["error"]["message"].as_str().unwrap().contains("cancelled"), "{v}");
    assert_eq!(fake.received().len(), 1, "no model call after Ctrl-C");
}

#[tokio::test]
async fn google_web_search_asks_the_model_with_search_grounding() {
    use toolbelt_test_support::fake_model::{Reply, gemini_chunk};
    let t = TempTree::new();
    let mut grounded = gemini_chunk(json!([{"text": "Rust 1.95 is out."}]), Some("STOP"));
    grounded["candidates"][0]["groundingMetadata"] = json!({
        "groundingChunks": [{"web": {"title": "Rust Blog", "uri": "https://blog.rust-lang.org/"}}],
        "groundingSupports": [{"segment": {"endIndex": 17}, "groundingChunkIndices": [0]}]});
    let fake = FakeModel::start(vec![
        gemini_answer(json!([{"functionCall": {"id": "w", "name": "google_web_search", "args": {"query": "latest rust"}}}])),
        Reply::Events(vec![grounded]),
        gemini_answer(json!([{"text": "Rust 1.95."}])),
    ])
    .await;
    let (code, stdout, stderr) =
        output(command(&t, &["what is the latest rust?"], Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "Rust 1.95.\n");
    let bodies = fake.bodies();
    assert_eq!(bodies[1]["tools"], json!([{"googleSearch": {}}]));
    assert_eq!(
        bodies[1]["contents"],
        json!([{"role": "user", "parts": [{"text": "latest rust"}]}])
    );
    let response = &bodies[2]["contents"][2]["parts"][0]["functionResponse"]["response"];
    assert_eq!(
        response["output"],
        "Web search results for \"latest rust\":\n\nRust 1.95 is out.[1]\n\nSources:\n[1] Rust Blog (https://blog.rust-lang.org/)"
    );
}

#[tokio::test]
async fn audio_read_by_read_file_follows_the_function_responses_as_inline_data() {
    let t = TempTree::new();
    t.file("clip.mp3", b"ID3\x03\x00\x00\x00fake audio");
    let fake = FakeModel::start(vec![
        gemini_answer(json!([{"functionCall": {"id": "r", "name": "read_file", "args": {"file_path": "clip.mp3"}}}])),
        gemini_answer(json!([{"text": "It is a short clip."}])),
    ])
    .await;
    let (code, _, stderr) = output(command(&t, &["listen"], Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    let parts = fake.bodies()[1]["contents"][2]["parts"].clone();
    let parts = parts.as_array().unwrap();
    assert_eq!(parts.len(), 2, "{parts:?}");
    let response = &parts[0]["functionResponse"]["response"];
    assert!(response.get("__binary_injection__").is_none(), "{response}");
    assert!(
        response["output"].as_str().unwrap().contains("Content will be injected"),
        "{response}"
    );
    assert_eq!(parts[1]["inlineData"]["mimeType"], "audio/mpeg");
}

#[cfg(unix)]
#[tokio::test]
/// Issue 34, finding 1: headless, the approved plan switched the session to YOLO (upstream),
/// and the model's next shell command ran unasked. It returns to the mode the run started in.
async fn plan_mode_restricts_then_the_approved_plan_returns_to_the_starting_mode() {
    let t = TempTree::new();
    let call = |id: &str, name: &str, args: Value| {
        gemini_answer(json!([{"functionCall": {"id": id, "name": name, "args": args}}]))
    };
    let fake = FakeModel::start(vec![
        call("1", "enter_plan_mode", json!({"reason": "big change"})),
        call("2", "run_shell_command", json!({"command": "echo too-early"})),
        call("3", "write_file", json!({"file_path": ".gemini/tmp/toolbelt/plans/p.md", "content": "# Plan\n1. do it\n"})),
        call("4", "exit_plan_mode", json!({"plan_filename": "p.md"})),
        call("5", "run_shell_command", json!({"command": "echo now-allowed"})),
        gemini_answer(json!([{"text": "Done."}])),
    ])
    .await;
    let (code, _, stderr) = output(command(&t, &["plan then do"], Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    let bodies = fake.bodies();
    let response = |i: usize| {
        bodies[i]["contents"].as_array().unwrap().last().unwrap()["parts"][0]["functionResponse"]
            ["response"]
            .clone()
    };
    let declared = |i: usize| -> Vec<String> {
        bodies[i]["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(response(1), json!({"output": "Switching to Plan mode."}));
    assert!(!declared(0).contains(&"write_file".to_string()));
    assert!(
        declared(1).contains(&"write_file".to_string()),
        "plan mode shows write_file (for plans): {:?}",
        declared(1)
    );
    assert!(response(2)["error"].as_str().unwrap().contains("Plan Mode"), "{}", response(2));
    let wrote = response(3)["output"].as_str().unwrap().to_string();
    assert!(wrote.starts_with("Successfully created and wrote to new file"), "{wrote}");
    let approved = response(4)["output"].as_str().unwrap().to_string();
    assert!(
        approved.starts_with(
            "Plan approved. Switching to Default mode (edits will require confirmation)."
        ),
        "{approved}"
    );
    assert!(approved.contains(".gemini/tmp/toolbelt/plans/p.md"), "{approved}");
    // Headless in default mode: the shell is refused, as before the plan.
    let refused = response(5)["error"].as_str().unwrap_or_default().to_string();
    assert!(refused.contains("denied by policy"), "{}", response(5));
    assert!(!declared(5).contains(&"run_shell_command".to_string()), "default mode, headless");
    assert!(t.root().join(".gemini/tmp/toolbelt/plans/p.md").is_file());
}

/// Issue 17: `GEMINI.md` linked to `/proc/self/environ` or to a key file sent every API key and
/// the private key to the model; context files were read with no containment, no sensitive
/// rules and no trust check.
#[tokio::test]
async fn context_files_cannot_leak_secrets() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n");
    t.symlink(outside.root().join("id_rsa"), "GEMINI.md");
    t.symlink("/proc/self/environ", "AGENTS.md");
    let settings = t.home().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}"#).unwrap();
    for trusted in [false, true] {
        if trusted {
            trust(&t);
        }
        let fake = FakeModel::start(vec![gemini_answer(json!([{"text": "ok"}]))]).await;
        let (code, _, stderr) = output(command(&t, &["hi"], Some(&fake.url))).await;
        assert_eq!(code, 0, "{stderr}");
        let body = fake.bodies()[0].to_string();
        assert!(
            !body.contains("SECRET") && !body.contains("GEMINI_API_KEY"),
            "trusted={trusted}: {body}"
        );
        assert!(stderr.contains("context file not loaded"), "trusted={trusted}: {stderr}");
    }
}

/// Issue 19: agent skills. The model is told which skills exist, activates one, and can then
/// read the file its instructions name (the skill's folder joined the workspace for reading).
#[tokio::test]
async fn a_skill_is_listed_activated_and_its_files_read_in_one_session() {
    let t = TempTree::new();
    let skill = t.home().join(".gemini/skills/forms");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: forms\ndescription: Fills PDF forms.\n---\nRead fields.md first.\n",
    )
    .unwrap();
    std::fs::write(skill.join("fields.md"), "FIELD LIST\n").unwrap();
    let fields = skill.join("fields.md").display().to_string();
    let fake = FakeModel::start(vec![
        gemini_answer(
            json!([{"functionCall": {"name": "activate_skill", "args": {"name": "forms"}}}]),
        ),
        gemini_answer(
            json!([{"functionCall": {"name": "read_file", "args": {"file_path": fields}}}]),
        ),
        gemini_answer(json!([{"text": "done"}])),
    ])
    .await;
    let (code, stdout, stderr) =
        output(command(&t, &["--approval-mode", "yolo", "fill the form"], Some(&fake.url))).await;
    assert_eq!((code, stdout.as_str()), (0, "done\n"), "{stderr}");
    let bodies = fake.bodies();
    let system = bodies[0]["systemInstruction"]["parts"][0]["text"].as_str().unwrap();
    assert!(
        system.contains(&format!(
            "<available_skills>\n  <skill>\n    <name>forms</name>\n    <description>Fills PDF forms.</description>\n    <location>{}</location>\n  </skill>\n</available_skills>",
            skill.join("SKILL.md").display()
        )),
        "{system}"
    );
    let activated = &bodies[1]["contents"][2]["parts"][0]["functionResponse"]["response"]["output"];
    assert!(
        activated.as_str().unwrap().starts_with(
            "<activated_skill name=\"forms\">\n  <instructions>\n    Read fields.md first.\n"
        ),
        "{activated}"
    );
    let read = &bodies[2]["contents"][4]["parts"][0]["functionResponse"]["response"];
    assert_eq!(read["output"], "FIELD LIST\n", "{read}");
}

/// Issue 21: every retry was printed twice (a log line and a message).
#[tokio::test]
async fn each_retry_is_one_line() {
    use toolbelt_test_support::fake_model::Reply;
    let t = TempTree::new();
    let fake = FakeModel::start(vec![
        Reply::Status(503, "busy".into(), Some(0)),
        Reply::Status(503, "busy".into(), Some(0)),
        gemini_answer(json!([{"text": "ok"}])),
    ])
    .await;
    let (code, stdout, stderr) = output(command(&t, &["hi"], Some(&fake.url))).await;
    assert_eq!((code, stdout.as_str()), (0, "ok\n"), "{stderr}");
    let retries: Vec<&str> = stderr.lines().filter(|l| l.contains("model call failed")).collect();
    assert_eq!(retries.len(), 2, "{stderr}");
    assert!(retries[0].starts_with("toolbelt: model call failed"), "{stderr}");
}

/// Issue 21: without -m the OpenAI-compatible server was asked for "default", and its 404 did
/// not say to pass -m.
#[tokio::test]
async fn an_unknown_guessed_model_says_to_pass_dash_m() {
    use toolbelt_test_support::fake_model::Reply;
    let t = TempTree::new();
    let fake = FakeModel::start(vec![Reply::Status(
        404,
        r#"{"error":{"message":"model 'default' not found"}}"#.into(),
        None,
    )])
    .await;
    let base = format!("{}/v1", fake.url);
    let mut c = command(&t, &["--base-url", &base, "hi"], None);
    c.env_remove("OPENAI_MODEL");
    let (code, _, stderr) = output(c).await;
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("no model was named, so \"default\" was asked for: pass the server's model name with -m, or set OPENAI_MODEL"),
        "{stderr}"
    );
}

/// Issue 21: a long tool call showed nothing between `tool_use` and `tool_result` although the
/// tool streams its output; stream-json now has `tool_output` events (off with
/// --compat-events, for upstream's exact stream).
#[cfg(unix)]
#[tokio::test]
async fn stream_json_shows_a_running_tools_output() {
    let t = TempTree::new();
    let script = || {
        vec![
            gemini_answer(
                json!([{"functionCall": {"id": "s1", "name": "run_shell_command", "args": {"command": "echo first; sleep 0.3; echo second"}}}]),
            ),
            gemini_answer(json!([{"text": "ok"}])),
        ]
    };
    let fake = FakeModel::start(script()).await;
    let args = ["--approval-mode", "yolo", "-o", "stream-json", "go"];
    let (code, stdout, stderr) = output(command(&t, &args, Some(&fake.url))).await;
    assert_eq!(code, 0, "{stderr}");
    let events: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let used = types.iter().position(|t| *t == "tool_use").unwrap();
    let result = types.iter().position(|t| *t == "tool_result").unwrap();
    let live: String = events[used..result]
        .iter()
        .filter(|e| e["type"] == "tool_output")
        .map(|e| e["output"].as_str().unwrap())
        .collect();
    assert!(live.contains("first") && live.contains("second"), "{types:?} {stdout}");
    assert!(events.iter().filter(|e| e["type"] == "tool_output").all(|e| e["tool_id"] == "s1"));

    let fake = FakeModel::start(script()).await;
    let mut compat = args.to_vec();
    compat.insert(0, "--compat-events");
    let (code, stdout, _) = output(command(&t, &compat, Some(&fake.url))).await;
    assert_eq!(code, 0);
    assert!(!stdout.contains("\"tool_output\""), "{stdout}");
}
