//! Issue 50: what an editor user expects beyond the tools, with the official ACP client SDKs
//! (Python and TypeScript, `tests/acp/editor.py` and `editor.mjs`) and the fake Gemini server
//! as the model and as Vertex AI's token endpoint: slash commands listed and handled without
//! the model (E1), sessions listed and loaded in a new process (E2), 0.61's model list and a
//! switch that reaches the request (E3), sign-in explained when missing and Vertex AI with a
//! service-account key (E4), and the system prompt's sections in the request (E5).

use std::path::Path;

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;
use toolbelt_test_support::fake_model::{FakeModel, Received, Reply, gemini_answer};

use super::acp::{agent_env, clients};

/// Runs a client's scenario (`c`, given the project and the report's path after its own
/// arguments) against a fresh project; returns the report and what the fake server received.
async fn scenario(mut c: std::process::Command) -> (TempTree, Value, Vec<Received>) {
    let t = TempTree::new();
    t.file("README.md", "# demo\n");
    let say = |text: &str| gemini_answer(json!([{"text": text}]));
    let fake = FakeModel::start(vec![
        gemini_answer(
            json!([{"text": "A greeting is asked for.", "thought": true}, {"text": "Hi."}]),
        ),
        say("## Summary\nThe person asked for a greeting; it was given."),
        Reply::Json(
            json!({"access_token": "tok-vertex-1", "expires_in": 3600, "token_type": "Bearer"}),
        ),
        say("Hello from Vertex."),
    ])
    .await;
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/test-only-service-account.json");
    let key = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("TOKEN_URI", &format!("{}/token", fake.url));
    let key_file = t.home().join("service-account.json");
    std::fs::write(&key_file, key).unwrap();
    let report = t.home().join("report.json");
    agent_env(&mut c, &t, &fake.url);
    c.env("SCENARIO_VERTEX_KEY", &key_file).env_remove("GOOGLE_GENAI_USE_VERTEXAI");
    c.arg(t.root()).arg(&report);
    // The client blocks this thread; the fake server answers from the runtime's other one.
    let output = tokio::task::block_in_place(|| c.output().unwrap());
    let text = std::fs::read_to_string(&report).unwrap_or_else(|_| {
        panic!(
            "no report: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (t, serde_json::from_str(&text).unwrap(), fake.received())
}

fn ids(v: &Value, key: &str) -> Vec<String> {
    v.as_array().unwrap().iter().map(|o| o[key].as_str().unwrap().to_string()).collect()
}

fn check(t: &TempTree, r: &Value, received: &[Received]) {
    let proj = t.root().canonicalize().unwrap();
    let init = &r["initialize"];
    assert_eq!(init["agentCapabilities"]["sessionCapabilities"]["list"], json!({}), "{init}");
    assert_eq!(ids(&init["authMethods"], "id"), ["gemini-api-key", "vertex-ai"]);
    assert!(r["authenticate"].get("answered").is_some(), "{}", r["authenticate"]);

    // E3: 0.61's list and default.
    let model = &r["new_session"]["configOptions"][0];
    assert_eq!(model["id"], "model");
    assert_eq!(model["currentValue"], "auto");
    assert_eq!(
        ids(&model["options"], "value"),
        [
            "auto",
            "gemini-3-pro-preview",
            "gemini-3-flash-preview",
            "gemini-2.5-pro",
            "gemini-3.5-flash",
            "gemini-3.1-flash-lite"
        ]
    );

    // E1: the commands are listed, and each is answered by toolbelt.
    let listed = &r["commands"][0]["availableCommands"];
    assert_eq!(
        ids(listed, "name"),
        ["help", "memory", "init", "tools", "mcp", "compress", "about"]
    );
    assert_eq!(listed[1]["input"]["hint"], "show | add <fact> | refresh");
    let help = &r["help"];
    assert_eq!(help["stop"], "end_turn");
    assert!(
        help["text"].as_str().unwrap().contains("- /memory show | add <fact> | refresh:"),
        "{help}"
    );
    assert!(
        r["memory_add"]["text"].as_str().unwrap().starts_with("Remembered."),
        "{}",
        r["memory_add"]
    );
    assert_eq!(r["memory_add"]["calls"].as_array().unwrap().len(), 1, "save_memory ran as a call");
    let memory = std::fs::read_to_string(t.home().join(".gemini/GEMINI.md")).unwrap();
    assert!(memory.contains("I prefer tabs"), "{memory}");
    assert!(r["memory_show"]["text"].as_str().unwrap().contains("I prefer tabs"));
    assert!(r["tools"]["text"].as_str().unwrap().contains("- read_file: "), "{}", r["tools"]);
    assert!(r["mcp"]["text"].as_str().unwrap().starts_with("No MCP servers"));
    let about = r["about"]["text"].as_str().unwrap();
    assert!(about.contains("model: auto (requests go to gemini-3-pro-preview)"), "{about}");

    // E3: a switch reaches the request; an unknown name is refused before any request.
    assert_eq!(r["set_model"]["answered"]["configOptions"][0]["currentValue"], "gemini-2.5-pro");
    let refused = r["set_unknown_model"].to_string();
    assert!(refused.contains("not a Gemini model toolbelt knows"), "{refused}");
    assert_eq!(r["hi"]["text"], "Hi.");
    assert_eq!(
        r["hi"]["thoughts"], "A greeting is asked for.",
        "thinking streams as thought chunks"
    );
    assert!(
        r["compress"]["text"].as_str().unwrap().starts_with("Compressed 2 message(s)"),
        "{}",
        r["compress"]
    );

    // Only the prompt and /compress reached the model; then the token and Vertex AI.
    let paths: Vec<&str> = received.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            "/token",
            "/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
        ]
    );
    // E5: the system prompt's sections, and the memory added by /memory add.
    let system = received[0].body["systemInstruction"]["parts"][0]["text"].as_str().unwrap();
    for section in [
        "# Explore before you edit",
        "# Git and version control",
        "# Secrets and safety",
        "# When to ask the person",
    ] {
        assert!(system.contains(section), "{section}");
    }
    assert!(system.contains("I prefer tabs"), "the refreshed memory is in the prompt");
    // 0.61's sampling and thinking settings, per model family.
    assert_eq!(
        received[0].body["generationConfig"],
        json!({"temperature": 1, "topP": 0.95, "topK": 64, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}})
    );
    assert_eq!(
        received[3].body["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
    );
    let asked = received[1].body["contents"].to_string();
    assert!(asked.contains("Summarise our conversation"), "{asked}");
    assert!(received[1].body.get("tools").is_none(), "no tools for the summary");

    // E2: the session is listed, in its folder only, and loaded in a new process.
    let sid = r["session_id"].as_str().unwrap();
    let listed = &r["list"]["sessions"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["sessionId"], sid);
    assert_eq!(listed[0]["cwd"], proj.display().to_string());
    assert_eq!(listed[0]["title"], "Say hi.");
    assert!(listed[0]["updatedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(r["list_again"]["sessions"][0]["sessionId"], sid);
    assert_eq!(r["list_elsewhere"]["sessions"], json!([]));
    let load = &r["load"];
    assert_eq!(load["response"]["configOptions"][0]["currentValue"], "gemini-2.5-pro");
    let kinds: Vec<&str> = load["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["sessionUpdate"].as_str())
        .collect();
    assert!(kinds.contains(&"available_commands_update"), "{kinds:?}");
    assert!(
        load["updates"].to_string().contains("The person asked for a greeting"),
        "the summary is replayed"
    );

    // E4: missing credentials are said in a sentence an editor can show.
    let no_key = r["auth_no_key"].to_string();
    assert!(
        no_key.contains("GEMINI_API_KEY") && no_key.contains("aistudio.google.com"),
        "{no_key}"
    );
    let no_vertex = r["auth_no_vertex"].to_string();
    assert!(
        no_vertex.contains("GOOGLE_APPLICATION_CREDENTIALS")
            && no_vertex.contains("gcloud auth application-default login"),
        "{no_vertex}"
    );
    let new = r["new_without_auth"].to_string();
    assert!(new.contains("GEMINI_API_KEY"), "{new}");
    // Vertex AI: the token from the key's token endpoint signs the request.
    assert!(r["vertex_auth"].get("answered").is_some(), "{}", r["vertex_auth"]);
    assert_eq!(r["vertex"]["text"], "Hello from Vertex.", "{}", r["vertex"]);
    let bearer = received[3].headers.get("authorization").unwrap().to_str().unwrap();
    assert_eq!(bearer, "Bearer tok-vertex-1");
    assert!(received[3].headers.get("x-goog-api-key").is_none());
    let token_request = &received[2];
    assert_eq!(token_request.path, "/token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_uses_commands_sessions_models_and_sign_in() {
    let dir = clients().clone();
    let mut c = std::process::Command::new(dir.join("venv/bin/python"));
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/editor.py"))
        .arg(env!("CARGO_BIN_EXE_toolbelt"));
    let (t, report, received) = scenario(c).await;
    check(&t, &report, &received);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_uses_commands_sessions_models_and_sign_in() {
    let dir = clients().clone();
    let mut c = std::process::Command::new("node");
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/editor.mjs"))
        .arg(&dir)
        .arg(env!("CARGO_BIN_EXE_toolbelt"));
    let (t, report, received) = scenario(c).await;
    check(&t, &report, &received);
}
