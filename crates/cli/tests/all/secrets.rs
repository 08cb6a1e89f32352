//! Issue 17: secrets stay secret. `GEMINI_API_KEY`, `OPENAI_API_KEY`, `GITHUB_TOKEN`,
//! `AWS_SECRET_ACCESS_KEY`, `DATABASE_URL` reached every child: shell commands, hooks,
//! discovered tools and MCP stdio servers (under `toolbelt run` the model could read the key
//! that pays for it).

use toolbelt_test_support::TempTree;

use crate::command;

const SECRETS: &[(&str, &str)] = &[
    ("GEMINI_API_KEY", "AIza-not-a-real-key"),
    ("OPENAI_API_KEY", "sk-not-real"),
    ("GITHUB_TOKEN", "gh-not-real"),
    ("AWS_SECRET_ACCESS_KEY", "aws-not-real"),
    ("DATABASE_URL", "postgres://u:p@db/x"),
];

fn run(t: &TempTree, args: &[&str]) -> crate::Run {
    let mut c = command(t, args);
    for (k, v) in SECRETS {
        c.env(k, v);
    }
    c.env("TOOLBELT_VISIBLE", "plain-value");
    let out = c.stdin(std::process::Stdio::null()).output().unwrap();
    crate::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn assert_clean(what: &str, env_dump: &str) {
    assert!(
        env_dump.contains("TOOLBELT_VISIBLE=plain-value"),
        "{what}: the dump is not an env dump: {env_dump}"
    );
    for (k, v) in SECRETS {
        assert!(!env_dump.contains(k) && !env_dump.contains(v), "{what} got {k}: {env_dump}");
    }
}

#[test]
fn no_child_sees_the_secrets() {
    let t = TempTree::new();
    let dumps = t.home().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    let d = dumps.display();
    let settings = serde_json::json!({
        "hooks": {"BeforeTool": [{"matcher": "read_file", "hooks": [
            {"type": "command", "command": format!("env > {d}/hook.txt; echo '{{}}'")}
        ]}]},
        "tools": {"discoveryCommand": format!("sh -c \"env > {d}/discovery.txt; echo '[]'\"")},
        "mcpServers": {"dump": {"command": "sh", "args": ["-c", format!("env > {d}/mcp.txt")]}}
    });
    std::fs::write(t.home().join("settings.json"), settings.to_string()).unwrap();

    let r =
        run(&t, &["call", "run_shell_command", r#"{"command":"env"}"#, "--approval-mode", "yolo"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_clean("a shell command", &r.stdout);

    t.file("a.txt", "x");
    let r = run(&t, &["call", "read_file", r#"{"file_path":"a.txt"}"#]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_clean("a hook", &std::fs::read_to_string(dumps.join("hook.txt")).unwrap());
    assert_clean(
        "the discovery command",
        &std::fs::read_to_string(dumps.join("discovery.txt")).unwrap(),
    );

    let _ = run(&t, &["mcp", "list", "--json"]);
    assert_clean("an MCP stdio server", &std::fs::read_to_string(dumps.join("mcp.txt")).unwrap());
}

/// `security.environmentVariableRedaction.allowed` passes a named variable on; `enabled: false`
/// passes everything but toolbelt's own credentials.
#[test]
fn settings_name_what_passes() {
    let t = TempTree::new();
    std::fs::write(
        t.home().join("settings.json"),
        r#"{"security": {"environmentVariableRedaction": {"allowed": ["GITHUB_TOKEN"]}}}"#,
    )
    .unwrap();
    let r =
        run(&t, &["call", "run_shell_command", r#"{"command":"env"}"#, "--approval-mode", "yolo"]);
    assert!(r.stdout.contains("GITHUB_TOKEN=gh-not-real"), "{}", r.stdout);
    assert!(!r.stdout.contains("AWS_SECRET_ACCESS_KEY"), "{}", r.stdout);
    std::fs::write(
        t.home().join("settings.json"),
        r#"{"security": {"environmentVariableRedaction": {"enabled": false}}}"#,
    )
    .unwrap();
    let r =
        run(&t, &["call", "run_shell_command", r#"{"command":"env"}"#, "--approval-mode", "yolo"]);
    assert!(r.stdout.contains("AWS_SECRET_ACCESS_KEY=aws-not-real"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("GEMINI_API_KEY") && !r.stdout.contains("OPENAI_API_KEY"),
        "{}",
        r.stdout
    );
}
