//! Issue 16: a Gemini CLI user's own `~/.gemini/settings.json` and policy files, meaning what
//! they mean upstream, and failing closed where they cannot be understood.

use toolbelt_test_support::TempTree;

use crate::toolbelt;

fn user_settings(t: &TempTree, json: &str) {
    let p = t.home().join(".gemini/settings.json");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, json).unwrap();
}

fn shell(t: &TempTree, command: &str, extra: &[&str]) -> crate::Run {
    let args = serde_json::json!({ "command": command }).to_string();
    let mut argv = vec!["call", "run_shell_command", args.as_str()];
    argv.extend_from_slice(extra);
    toolbelt(t, &argv, None)
}

/// `tools.core: ["read_file", "run_shell_command(git)"]` let every shell command run headless
/// (`whoami; echo not-git` ran); it allows git only.
#[test]
fn core_run_shell_command_git_allows_git_only() {
    let t = TempTree::new();
    user_settings(&t, r#"{"tools": {"core": ["read_file", "run_shell_command(git)"]}}"#);
    let r = shell(&t, "git --version", &[]);
    assert_eq!(r.code, 0, "git must run: {} {}", r.stdout, r.stderr);
    assert!(r.stdout.contains("git version"), "{}", r.stdout);
    let r = shell(&t, "whoami; echo not-git", &[]);
    assert_ne!(r.code, 0, "whoami must not run: {}", r.stdout);
    assert!(!r.stdout.contains("not-git"), "{}", r.stdout);
    let r = toolbelt(&t, &["policy", "list", "--all"], None);
    assert!(r.stdout.contains("run_shell_command") && r.stdout.contains("git"), "{}", r.stdout);
    // A tool the list leaves out is refused.
    let r = toolbelt(&t, &["call", "glob", r#"{"pattern":"*"}"#], None);
    assert_ne!(r.code, 0, "{}", r.stdout);
}

/// `tools.exclude: ["run_shell_command(rm)"]` refused every shell command, even in yolo; it
/// refuses `rm` only.
#[test]
fn exclude_run_shell_command_rm_refuses_rm_only() {
    let t = TempTree::new();
    t.file("victim.txt", "keep me\n");
    user_settings(&t, r#"{"tools": {"exclude": ["run_shell_command(rm)"]}}"#);
    let yolo = ["--approval-mode", "yolo"];
    let r = shell(&t, "echo still-here", &yolo);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert!(r.stdout.contains("still-here"), "{}", r.stdout);
    let r = shell(&t, "rm victim.txt", &yolo);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(t.root().join("victim.txt").exists(), "rm ran");
    let r = toolbelt(&t, &["tools", "list", "--approval-mode", "yolo"], None);
    assert!(r.stdout.contains("run_shell_command"), "the shell stays visible: {}", r.stdout);
}

fn user_policy(t: &TempTree, name: &str, toml: &str) -> std::path::PathBuf {
    let p = t.home().join(".gemini/policies").join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, toml).unwrap();
    p
}

/// A policy file with a deny rule for `curl` and one rule with `decision = "ask-user"` was
/// skipped whole with a warning, and curl then ran. Now nothing runs: exit 2, one message
/// naming the file, the line and the problem; `toolbelt mcp` refuses to start the same way.
#[test]
fn one_bad_rule_stops_everything_instead_of_dropping_the_file() {
    let t = TempTree::new();
    let file = user_policy(
        &t,
        "mine.toml",
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch\"\ndecision = \"deny\"\npriority = 900\n\n[[rule]]\ntoolName = \"glob\"\ndecision = \"ask-user\"\npriority = 10\n",
    );
    let r = shell(&t, "touch RAN", &["--approval-mode", "yolo"]);
    assert_eq!(r.code, 2, "{} {}", r.stdout, r.stderr);
    assert!(!t.root().join("RAN").exists(), "the command ran");
    let at = format!("{}:7: rule #2: `decision` must be", file.display());
    assert!(r.stderr.contains(&at), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was run"), "{}", r.stderr);

    let lint = toolbelt(&t, &["policy", "lint"], None);
    assert_eq!(lint.code, 2, "{}", lint.stdout);
    assert!(lint.stdout.contains(&at), "{}", lint.stdout);
    let lint = toolbelt(&t, &["policy", "lint", file.to_str().unwrap(), "--json"], None);
    assert_eq!(lint.code, 2);
    assert_eq!(lint.json()["problems"][0]["line"], 7);

    let mcp = toolbelt(&t, &["mcp"], Some(""));
    assert_eq!(mcp.code, 2, "{} {}", mcp.stdout, mcp.stderr);
    assert!(mcp.stderr.contains(&at), "{}", mcp.stderr);

    // Fixed, everything works again and the deny rule applies.
    std::fs::write(
        &file,
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch\"\ndecision = \"deny\"\npriority = 900\n",
    )
    .unwrap();
    assert_eq!(toolbelt(&t, &["policy", "lint"], None).code, 0);
    let r = shell(&t, "touch RAN", &["--approval-mode", "yolo"]);
    assert_eq!(r.code, 3, "{} {}", r.stdout, r.stderr);
    assert!(!t.root().join("RAN").exists());
    assert_eq!(shell(&t, "echo ok", &["--approval-mode", "yolo"]).code, 0);
}

/// Keys outside the schema and tools that do not exist but look like a typo would make a rule
/// silently not apply (an allow rule without its `argsPattern` allows everything).
#[test]
fn typos_in_policy_files_are_problems_with_a_suggestion() {
    let t = TempTree::new();
    let file = user_policy(
        &t,
        "typos.toml",
        "[[rule]]\ntoolName = \"run_shell_comand\"\ndecision = \"deny\"\npriority = 1\n\n[[rule]]\ntoolName = \"read_file\"\nargPattern = \"x\"\ndecision = \"allow\"\npriority = 1\n",
    );
    let r = toolbelt(&t, &["policy", "lint", file.to_str().unwrap()], None);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stdout.contains("unknown key `argPattern` (did you mean `argsPattern`?)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(":2: a rule names the tool `run_shell_comand`, which does not exist (did you mean `run_shell_command`?)"),
        "{}",
        r.stdout
    );
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"x"}"#], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// `context.includeDirectories` was shown by `config show` but the folder stayed "not in
/// workspace".
#[test]
fn include_directories_become_workspace_roots() {
    let t = TempTree::new();
    let other = TempTree::new();
    other.file("lib/notes.txt", "from the included folder\n");
    let included = other.root().join("lib");
    user_settings(
        &t,
        &serde_json::json!({"context": {"includeDirectories": [included, "~/also-missing"]}})
            .to_string(),
    );
    let file = included.join("notes.txt");
    let args = serde_json::json!({ "file_path": file }).to_string();
    let r = toolbelt(&t, &["call", "read_file", &args], None);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "from the included folder\n");
    assert!(r.stderr.contains("also-missing is not a folder"), "{}", r.stderr);
    // Outside the included folder is still outside.
    let args = serde_json::json!({ "file_path": other.root().join("x.txt") }).to_string();
    t.file("x.txt", "");
    assert_ne!(toolbelt(&t, &["call", "read_file", &args], None).code, 0);
}

/// A cloned repository must not widen its own workspace to the user's home.
#[test]
fn project_include_directories_need_trust() {
    let t = TempTree::new();
    let other = TempTree::new();
    other.file("secret.txt", "NOT FOR THE REPO\n");
    t.file(
        ".gemini/settings.json",
        serde_json::json!({"context": {"includeDirectories": [other.root()]}}).to_string(),
    );
    let args = serde_json::json!({ "file_path": other.root().join("secret.txt") }).to_string();
    let r = toolbelt(&t, &["call", "read_file", &args], None);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(!r.stdout.contains("NOT FOR THE REPO"));
    assert!(r.stderr.contains("context.includeDirectories"), "{}", r.stderr);
}

/// Typos (`tools.exlude`, `mcpServer`) were accepted without a word, and `config show` listed
/// keys toolbelt ignores as if they applied.
#[test]
fn unknown_keys_get_one_warning_with_a_suggestion_and_config_show_marks_every_key() {
    let t = TempTree::new();
    user_settings(
        &t,
        r#"{"tools": {"truncateToolOutputThreshhold": 5, "sandbox": "docker", "exclude": ["web_fetch"]},
            "mcpServer": {"x": {"command": "y"}}, "ui": {"theme": "Dracula"},
            "experimental": {"directWebFetch": true}}"#,
    );
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"nothing"}"#], None);
    let settings = t.home().join(".gemini/settings.json");
    let warning = format!(
        "{}: unknown setting tools.truncateToolOutputThreshhold (did you mean tools.truncateToolOutputThreshold?); it is ignored",
        settings.display()
    );
    assert_eq!(r.stderr.matches(&warning).count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("unknown setting mcpServer (did you mean mcpServers?)"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("ui.theme"),
        "known Gemini CLI keys are not warned about: {}",
        r.stderr
    );

    let show = toolbelt(&t, &["config", "show"], None).stdout;
    for (key, mark) in [
        ("tools.exclude", "# honoured;"),
        (
            "tools.truncateToolOutputThreshhold",
            "# unknown (did you mean tools.truncateToolOutputThreshold?);",
        ),
        ("tools.sandbox", "# honoured;"),
        ("ui.theme", "# not supported;"),
        ("experimental.directWebFetch", "# honoured;"),
    ] {
        let line = show.lines().find(|l| l.starts_with(&format!("{key} ="))).unwrap_or_default();
        assert!(line.contains(mark), "{key}: {line:?}\n{show}");
    }
    let json = toolbelt(&t, &["config", "show", "--json"], None).json();
    assert_eq!(json["marks"]["model.name"], serde_json::Value::Null);
    assert_eq!(json["marks"]["tools.exclude"], "honoured");
}

/// Hints were fixed text: in an untrusted folder `git status` with `--approval-mode yolo` was
/// told to "pass --approval-mode yolo". Each hint now comes from the decision that refused.
/// Issue 49 F2: the README's `git status && ls` with `--approval-mode yolo` exited 3 in a fresh
/// clone (untrusted): yolo now runs it, and the hint offers both ways.
#[test]
fn refusal_hints_come_from_the_decision() {
    let t = TempTree::new();
    // Untrusted folder, git: the hint offers yolo, and yolo runs it.
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(t.root()).status();
    assert!(git.is_ok_and(|s| s.success()));
    let r = shell(&t, "git status && ls", &[]);
    assert_eq!(r.code, 3, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("--approval-mode yolo"), "{}", r.stderr);
    let r = shell(&t, "git status && ls", &["--approval-mode", "yolo"]);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);

    // An edit headless in default mode: auto_edit really allows it.
    let r = toolbelt(&t, &["call", "write_file", r#"{"file_path":"a.txt","content":"x"}"#], None);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("--approval-mode auto_edit"), "{}", r.stderr);

    // A shell command: auto_edit does not allow it, yolo does.
    let r = shell(&t, "echo hi > out.txt", &[]);
    assert_eq!(r.code, 3);
    assert!(
        r.stderr.contains("--approval-mode yolo") && !r.stderr.contains("auto_edit"),
        "{}",
        r.stderr
    );

    // A user's deny rule: the hint names the rule's file, not a mode.
    let file = user_policy(
        &t,
        "no-glob.toml",
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 100\n",
    );
    let r = toolbelt(&t, &["call", "glob", r#"{"pattern":"*"}"#, "--approval-mode", "yolo"], None);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains(&file.display().to_string()), "{}", r.stderr);
    assert!(!r.stderr.contains("approval-mode"), "{}", r.stderr);

    // A setting's deny: the hint names the key.
    user_settings(&t, r#"{"tools": {"exclude": ["list_directory"]}}"#);
    let r = toolbelt(&t, &["policy", "check", "list_directory", r#"{"dir_path":"."}"#], None);
    assert!(r.stdout.contains("from Settings (tools.exclude)"), "{}", r.stdout);
    assert!(r.stdout.contains("to allow it: denied by the setting tools.exclude"), "{}", r.stdout);

    // policy check on a tool that does not exist says so.
    let r = toolbelt(&t, &["policy", "check", "read_fil"], None);
    assert!(
        r.stdout.contains("unknown tool: Tool \"read_fil\" not found. Did you mean"),
        "{}",
        r.stdout
    );
}

/// A hook's block was followed by the policy hint, which had nothing to do with it.
#[test]
fn a_hook_block_gets_no_policy_hint() {
    let t = TempTree::new();
    let hook = t.home().join("block.sh");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho '{\"decision\":\"block\",\"reason\":\"no reading today\"}'\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    user_settings(
        &t,
        &serde_json::json!({"hooks": {"BeforeTool": [{"matcher": "read_file", "hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    );
    t.file("a.txt", "x");
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"a.txt"}"#], None);
    assert_eq!(r.code, 3, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no reading today"), "{}", r.stderr);
    assert!(!r.stderr.contains("hint"), "{}", r.stderr);
}

/// Found by an adversarial review: `tools.exclude` entries that did nothing without a word
/// (class names as upstream's registry reads them; names of no tool at all).
#[test]
fn exclude_entries_that_would_do_nothing_are_refused_or_honoured() {
    let t = TempTree::new();
    t.file("f.txt", "hi\n");
    // Upstream's class names exclude their tools.
    user_settings(&t, r#"{"tools": {"exclude": ["ShellTool", "ReadFileTool"]}}"#);
    let r = toolbelt(
        &t,
        &["call", "read_file", r#"{"file_path":"f.txt"}"#, "--approval-mode", "yolo"],
        None,
    );
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert_ne!(shell(&t, "echo hi", &["--approval-mode", "yolo"]).code, 0);
    // An entry that names no tool stops the command.
    for entry in ["run_shell_command (git)", "run_shell_command(git", ""] {
        user_settings(&t, &serde_json::json!({"tools": {"exclude": [entry]}}).to_string());
        let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"f.txt"}"#], None);
        assert_eq!(r.code, 2, "{entry:?}: {} {}", r.stdout, r.stderr);
        assert!(r.stderr.contains("names no tool"), "{entry:?}: {}", r.stderr);
    }
    // Built-in tools this session does not offer are still tools.
    user_settings(&t, r#"{"tools": {"exclude": ["google_web_search", "ask_user"]}}"#);
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"f.txt"}"#], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Found by an adversarial review: a key written twice dropped the first (and its deny); a
/// typo in a section toolbelt leaves to Gemini CLI got no warning; `security.disableYoloMode`
/// was shown but did nothing; a hint named one of two rules that deny.
#[test]
fn settings_and_hints_after_the_review() {
    let t = TempTree::new();
    t.file("f.txt", "hi\n");
    user_settings(&t, "{\"tools\": {\"exclude\": [\"read_file\"]},\n \"tools\": {}}");
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"f.txt"}"#], None);
    assert_eq!(r.code, 2, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains(":2: the key \"tools\" appears twice"), "{}", r.stderr);

    user_settings(&t, r#"{"general": {"defaultApprovalmode": "plan"}}"#);
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"f.txt"}"#], None);
    assert!(r.stderr.contains("did you mean general.defaultApprovalMode?"), "{}", r.stderr);

    user_settings(&t, r#"{"security": {"disableYoloMode": true, "enableConseca": true}}"#);
    let r = toolbelt(
        &t,
        &["call", "read_file", r#"{"file_path":"f.txt"}"#, "--approval-mode", "yolo"],
        None,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("yolo mode is disabled by security.disableYoloMode"), "{}", r.stderr);
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"f.txt"}"#], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("security.enableConseca is not supported by toolbelt"),
        "{}",
        r.stderr
    );

    let file = user_policy(
        &t,
        "no-read.toml",
        "[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 100\n",
    );
    user_settings(&t, r#"{"tools": {"exclude": ["read_file"]}}"#);
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"f.txt"}"#], None);
    assert_eq!(r.code, 3);
    assert!(
        r.stderr.contains("the setting tools.exclude")
            && r.stderr.contains(&file.display().to_string()),
        "{}",
        r.stderr
    );
}

/// Found by a second adversarial review: a misspelled restriction (`tools.Exclude`,
/// `tools.excludeTools`, `security.disableYOLOMode`, `mcp.exclude`, an MCP server's
/// `excludetools`, a server name in the wrong case) was only warned about and the call ran; a
/// `commandPrefix` with white space around it never matched; a hint for a command whose program
/// is only known at run time said to add an allow rule, which does not help.
#[test]
fn misspelled_restrictions_stop_the_command() {
    let t = TempTree::new();
    t.file("victim", "x");
    for settings in [
        r#"{"tools": {"Exclude": ["run_shell_command"]}}"#,
        r#"{"tools": {"exlude": ["run_shell_command"]}}"#,
        r#"{"tools": {"excludeTools": ["run_shell_command"]}}"#,
        r#"{"tool": {"exclude": ["run_shell_command"]}}"#,
        r#"{"security": {"disableYOLOMode": true}}"#,
        r#"{"mcp": {"exclude": ["self"]}}"#,
        r#"{"mcpServers": {"self": {"command": "x", "excludetools": ["read_file"]}}}"#,
        r#"{"mcpServers": {"self": {"command": "x"}}, "mcp": {"excluded": ["Self"]}}"#,
    ] {
        user_settings(&t, settings);
        let r = shell(&t, "echo RAN", &["--approval-mode", "yolo"]);
        assert_eq!(r.code, 2, "{settings}: {} {}", r.stdout, r.stderr);
        assert!(!r.stdout.contains("RAN"), "{settings}");
        assert!(r.stderr.contains("did you mean"), "{settings}: {}", r.stderr);
    }
    user_settings(&t, "{}");
    user_policy(
        &t,
        "p.toml",
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm \"\ndecision = \"deny\"\npriority = 500\n",
    );
    let r = shell(&t, "rm victim", &["--approval-mode", "yolo"]);
    assert_eq!(r.code, 2, "{} {}", r.stdout, r.stderr);
    assert!(t.root().join("victim").exists());

    user_policy(
        &t,
        "p.toml",
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 500\n",
    );
    let r = shell(&t, "x=echo; $x victim", &["--approval-mode", "yolo"]);
    assert_eq!(r.code, 3, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("write the command out"), "{}", r.stderr);
    assert!(!r.stderr.contains("add an allow rule"), "{}", r.stderr);
}
