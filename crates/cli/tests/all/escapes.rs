//! Issue 35, finding 5 and 9: what a server, a repository or a model names reaches the
//! terminal only through the terminal-output function, piped or not: `tools list` printed an MCP
//! server's `ESC [2K CR` as is, and `policy list` and `config show` passed escape sequences
//! through when piped. Each listing is fed ESC, CSI, OSC 52, CR and a bidi control.

use toolbelt_test_support::TempTree;

use super::toolbelt;

const EVIL: &str = "x\u{1b}]52;c;cm0gLXJm\u{7}\u{1b}[2K\ry\u{202e}z";

fn clean(text: &str) -> bool {
    !text.contains('\u{1b}')
        && !text.contains('\r')
        && !text.contains('\u{202e}')
        && !text.contains('\u{7}')
}

#[test]
fn listings_show_escape_sequences_instead_of_sending_them() {
    let t = TempTree::new();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/fixtures/server.py");
    let settings = serde_json::json!({
        "mcpServers": {"evil": {"command": "python3", "args": [fixture, "--evil-name"], "description": EVIL}},
        "model": {"name": EVIL},
    });
    std::fs::write(t.home().join("settings.json"), settings.to_string()).unwrap();
    std::fs::create_dir_all(t.home().join("policies")).unwrap();
    std::fs::write(
        t.home().join("policies/auto-saved.toml"),
        format!(
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = {}\ndecision = \"allow\"\npriority = 100\n",
            serde_json::to_string(&format!("ls{EVIL}")).unwrap()
        ),
    )
    .unwrap();
    for argv in [
        vec!["tools", "list"],
        vec!["mcp", "list"],
        vec!["config", "show"],
        vec!["policy", "list"],
        vec!["policy", "list", "--all"],
    ] {
        let r = toolbelt(&t, &argv, None);
        assert_eq!(r.code, 0, "{argv:?}: {}", r.stderr);
        assert!(!r.stdout.is_empty(), "{argv:?}");
        assert!(clean(&r.stdout), "{argv:?} sent escapes: {:?}", r.stdout);
        assert!(clean(&r.stderr), "{argv:?} sent escapes on stderr: {:?}", r.stderr);
    }
    let r = toolbelt(&t, &["tools", "list"], None);
    assert!(r.stdout.contains("delete_all_repos\\e[2K\\rlist_repos"), "{}", r.stdout);
    // JSON stays exact (its own escaping).
    let r = toolbelt(&t, &["tools", "list", "--json"], None);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v.to_string().contains("delete_all_repos\\u001b[2K\\rlist_repos"), "{}", r.stdout);
}

/// Issue 35, finding 9: piped, `run` passed the model's escape sequences through (OSC 52 writes
/// the clipboard of the terminal the pipe ends in). Shown visibly now, piped or not; `--raw`
/// asks for the bytes; `-o json` stays exact.
#[tokio::test]
async fn the_models_escape_sequences_are_shown_not_sent() {
    let t = TempTree::new();
    let evil = "before\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2K\rafter \u{202e}txt.exe";
    for (extra, raw) in [(vec![], false), (vec!["--raw"], true)] {
        let fake = toolbelt_test_support::fake_model::FakeModel::start(vec![
            toolbelt_test_support::fake_model::gemini_answer(serde_json::json!([{"text": evil}])),
        ])
        .await;
        let mut argv = vec!["hi"];
        argv.extend(extra);
        let (code, stdout, stderr) =
            super::run::output(super::run::command(&t, &argv, Some(&fake.url))).await;
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(stdout.contains('\u{1b}'), raw, "{stdout:?}");
        if !raw {
            assert!(
                stdout.contains("\\e]52;c;")
                    && !stdout.contains('\r')
                    && !stdout.contains('\u{202e}'),
                "{stdout:?}"
            );
        }
    }
    let fake = toolbelt_test_support::fake_model::FakeModel::start(vec![
        toolbelt_test_support::fake_model::gemini_answer(serde_json::json!([{"text": evil}])),
    ])
    .await;
    let (_, stdout, _) =
        super::run::output(super::run::command(&t, &["hi", "-o", "json"], Some(&fake.url))).await;
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["response"], evil, "-o json is exact");
}

/// Issue 35, second attack: `toolbelt call` printed a tool's text as it was when piped, so
/// `toolbelt call read_file ... | cat` sent a file's OSC 52 (a clipboard write), CR and bidi
/// controls to the terminal. Shown visibly now, piped or not; `--raw` gives the bytes and
/// `--json` stays exact; CRLF line ends are kept.
#[test]
fn a_tools_text_is_shown_not_sent_when_piped() {
    let t = TempTree::new();
    t.file("e.txt", format!("{EVIL}\nsecond\n"));
    for tool in ["read_file", "grep_search"] {
        let args = if tool == "read_file" {
            r#"{"file_path":"e.txt"}"#
        } else {
            r#"{"pattern":"second|x"}"#
        };
        let r = toolbelt(&t, &["call", tool, args], None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(clean(&r.stdout), "{tool}: {:?}", r.stdout);
        assert!(r.stdout.contains("\\e]52;c;"), "{tool}: {:?}", r.stdout);
        let raw = toolbelt(&t, &["call", tool, args, "--raw"], None);
        assert!(raw.stdout.contains('\u{1b}'), "{tool} --raw: {:?}", raw.stdout);
        let json = toolbelt(&t, &["call", tool, args, "--json"], None);
        let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert!(v["response"]["output"].as_str().unwrap().contains('\u{1b}'), "--json is exact");
    }
    let crlf = TempTree::new();
    crlf.file("w.txt", "a\r\nb\r\n");
    let r = toolbelt(
        &crlf,
        &["call", "run_shell_command", r#"{"command":"cat w.txt"}"#, "--approval-mode", "yolo"],
        None,
    );
    assert!(r.stdout.contains("a\r\nb"), "CRLF kept: {:?}", r.stdout);
}
