//! Settings layers, folder trust, hooks and discovered tools end to end, and saved approvals
//! across runs.

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::toolbelt;

fn executable(t: &TempTree, rel: &str, body: &str) -> String {
    t.file(rel, format!("#!/bin/bash\n{body}\n"));
    let p = t.root().join(rel);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p.display().to_string()
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn settings_layers_merge_and_config_show_names_each_file() {
    let t = TempTree::new();
    let gemini_user = t.home().join(".gemini/settings.json");
    let user = t.home().join("settings.json");
    write(&gemini_user, r#"{"tools": {"truncateToolOutputThreshold": 111, "exclude": ["glob"]}}"#);
    write(
        &user,
        r#"{"tools": {"truncateToolOutputThreshold": 222}, "ui": {"theme": "kept but unused"}}"#,
    );
    t.file(".gemini/settings.json", r#"{"tools": {"toolCallTimeoutMs": 1000}}"#);
    t.file(
        ".toolbelt/settings.json",
        r#"{"tools": {"toolCallTimeoutMs": 2000, "exclude": ["list_directory"]}}"#,
    );
    // Trusted: an untrusted project may only tighten (its timeout would be skipped).
    assert_eq!(toolbelt(&t, &["trust"], None).code, 0);
    let r = toolbelt(&t, &["config", "show", "--json"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["settings"]["tools"]["truncateToolOutputThreshold"], 222);
    assert_eq!(v["settings"]["tools"]["toolCallTimeoutMs"], 2000);
    assert_eq!(v["settings"]["tools"]["exclude"], json!(["glob", "list_directory"]));
    assert_eq!(v["origins"]["tools.truncateToolOutputThreshold"], user.display().to_string());
    assert_eq!(
        v["origins"]["tools.toolCallTimeoutMs"],
        t.root().join(".toolbelt/settings.json").display().to_string()
    );
    assert_eq!(v["files"].as_array().unwrap().len(), 4);
    let text = toolbelt(&t, &["config", "show"], None).stdout;
    assert!(
        text.contains(&format!(
            "tools.truncateToolOutputThreshold = 222    # honoured; {}",
            user.display()
        )),
        "{text}"
    );

    // The excluded tools are denied and hidden from the model.
    let r = toolbelt(&t, &["call", "glob", r#"{"pattern":"*"}"#], None);
    assert_eq!(r.code, 3, "{} {}", r.stdout, r.stderr);
    let list = toolbelt(&t, &["tools", "list", "--json"], None).json();
    let hidden: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["hiddenByPolicy"] == true)
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(hidden.contains(&"glob") && hidden.contains(&"list_directory"), "{hidden:?}");
}

#[test]
fn a_malformed_settings_file_is_a_clear_error() {
    let t = TempTree::new();
    t.file(
        ".toolbelt/settings.json",
        "{\n  \"tools\": {\n    \"toolCallTimeoutMs\": \"soon\"\n  }\n}\n",
    );
    let r = toolbelt(&t, &["call", "read_file", r#"{"file_path":"x"}"#], None);
    assert_eq!(r.code, 2);
    let want = format!(
        "toolbelt: {}:3: tools.toolCallTimeoutMs: must be a whole number, 0 or more",
        t.root().join(".toolbelt/settings.json").display()
    );
    assert_eq!(r.stderr.trim(), want);
    t.file(".toolbelt/settings.json", "{ not json");
    let r = toolbelt(&t, &["config", "show"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("settings.json:1: not valid JSON"), "{}", r.stderr);
}

/// A project with a hook that blocks `rm` in shell commands and a discovered tool.
fn project(t: &TempTree) {
    let guard = executable(
        t,
        "hooks/no-rm.sh",
        r#"input=$(cat)
if printf '%s' "$input" | grep -q '"command":"[^"]*\brm '; then
  echo "rm is not allowed in this project" >&2
  exit 2
fi
exit 0"#,
    );
    let discover = executable(
        t,
        "tools/discover.sh",
        r#"echo '[{"name": "greet", "description": "Greets someone.", "parametersJsonSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}]'"#,
    );
    let call = executable(
        t,
        "tools/call.sh",
        r#"input=$(cat); name=$(printf '%s' "$input" | sed 's/.*"name":"\([^"]*\)".*/\1/'); echo "Hello, $name! (via $1)""#,
    );
    let settings = json!({
        "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": guard, "name": "no-rm"}]}]},
        "tools": {"discoveryCommand": discover, "callCommand": call}
    });
    t.file(".toolbelt/settings.json", settings.to_string());
    t.file("victim.txt", "keep me");
}

#[test]
fn untrusted_projects_run_no_hooks_or_discovery_until_trusted() {
    let t = TempTree::new();
    project(&t);
    let r = toolbelt(
        &t,
        &["call", "discovered_tool_greet", r#"{"name":"Ada"}"#, "--approval-mode", "yolo"],
        None,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("this folder is not trusted, so these project settings were skipped: hooks, tools.discoveryCommand, tools.callCommand"), "{}", r.stderr);
    assert!(r.stderr.contains("not found"), "{}", r.stderr);

    let trust = toolbelt(&t, &["trust"], None);
    assert_eq!(trust.code, 0, "{}", trust.stderr);
    let saved = std::fs::read_to_string(t.home().join("trusted-folders.json")).unwrap();
    assert!(saved.contains("TRUST_FOLDER"));

    // The discovered tool is registered and called through the call command.
    let r = toolbelt(
        &t,
        &["call", "discovered_tool_greet", r#"{"name":"Ada"}"#, "--approval-mode", "yolo"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A discovered tool's output is outside content for the model (issue 17).
    assert_eq!(r.stdout, "<untrusted_context>\nHello, Ada! (via greet)\n\n</untrusted_context>\n");
    // Headless default mode denies discovered tools, as upstream.
    let r = toolbelt(&t, &["call", "discovered_tool_greet", r#"{"name":"Ada"}"#], None);
    assert_eq!(r.code, 3);

    // The hook blocks rm, before policy, even in yolo mode; other commands run.
    let r = toolbelt(
        &t,
        &[
            "call",
            "run_shell_command",
            r#"{"command":"ls && rm -f victim.txt"}"#,
            "--approval-mode",
            "yolo",
        ],
        None,
    );
    assert_eq!(r.code, 3, "{} {}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr.lines().next().unwrap(),
        "Tool execution blocked: rm is not allowed in this project"
    );
    assert!(t.root().join("victim.txt").exists());
    let r = toolbelt(
        &t,
        &[
            "call",
            "run_shell_command",
            r#"{"command":"cat victim.txt"}"#,
            "--approval-mode",
            "yolo",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Output: keep me"));

    let r = toolbelt(&t, &["untrust"], None);
    assert_eq!(r.code, 0);
    let r = toolbelt(
        &t,
        &[
            "call",
            "run_shell_command",
            r#"{"command":"rm -f victim.txt"}"#,
            "--approval-mode",
            "yolo",
        ],
        None,
    );
    assert_eq!(r.code, 0, "untrusted again: the project's hook no longer runs");
    assert!(!t.root().join("victim.txt").exists());
}

#[cfg(unix)]
#[test]
fn always_allow_and_save_persists_across_runs_and_can_be_revoked() {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::io::{Read, Write};
    let t = TempTree::new();
    // Run 1, on a terminal: the person answers "s" (always allow and save). `printf` is not on
    // the known-safe list, so it is asked about.
    let pair = native_pty_system()
        .openpty(PtySize { rows: 40, cols: 200, pixel_width: 0, pixel_height: 0 })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_toolbelt"));
    cmd.args(["call", "run_shell_command", r#"{"command":"printf 'first run'"}"#, "--interactive"]);
    cmd.cwd(t.root());
    cmd.env("TOOLBELT_HOME", t.home());
    cmd.env("HOME", t.home());
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("> ") {
        let n = reader.read(&mut buf).unwrap();
        assert!(n > 0, "toolbelt ended before asking: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(
        seen.contains("Confirm Shell Command")
            && seen.contains("`printf` commands that stay in this workspace"),
        "{seen}"
    );
    writer.write_all(b"s\n").unwrap();
    let status = child.wait().unwrap();
    assert!(status.success());

    // Run 2, headless: the saved rule allows `printf` without asking.
    let r =
        toolbelt(&t, &["call", "run_shell_command", r#"{"command":"printf 'second run'"}"#], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Output: second run"));
    let check =
        toolbelt(&t, &["policy", "check", "run_shell_command", r#"{"command":"printf x"}"#], None);
    assert!(check.stdout.contains("from User: auto-saved.toml"), "{}", check.stdout);

    let list = toolbelt(&t, &["policy", "list", "--json"], None).json();
    let rules = list["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0]["commandPrefix"], "printf");
    let id = rules[0]["id"].as_str().unwrap().to_string();
    let r = toolbelt(&t, &["policy", "revoke", &id], None);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with(&format!(
        "Revoked {id}: run_shell_command for `printf` commands that stay in this workspace"
    )));
    assert_eq!(toolbelt(&t, &["policy", "revoke", &id], None).code, 1);

    // Run 3: asked again, so headless it is refused.
    let r =
        toolbelt(&t, &["call", "run_shell_command", r#"{"command":"printf 'third run'"}"#], None);
    assert_eq!(r.code, 3, "{}", r.stdout);
}

/// Issue 49 F3: folders trusted in Gemini CLI had to be trusted again: its
/// `~/.gemini/trustedFolders.json` was not read. Written as Gemini CLI writes it (two-space
/// JSON; comments allowed), it trusts the folder, with Gemini CLI's precedence: the longest
/// entry covering the folder wins, a `TRUST_PARENT` entry covers its parent.
#[test]
fn a_folder_trusted_in_gemini_cli_is_trusted() {
    let t = TempTree::new();
    t.file(".gemini/settings.json", r#"{"tools": {"toolCallTimeoutMs": 1000}}"#);
    let timeout = |t: &TempTree| {
        let r = toolbelt(t, &["config", "show", "--json"], None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json()["settings"]["tools"]["toolCallTimeoutMs"].clone()
    };
    assert_eq!(timeout(&t), serde_json::Value::Null, "untrusted at first");
    let root = std::fs::canonicalize(t.root()).unwrap();
    let file = t.home().join(".gemini/trustedFolders.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let write = |entries: &[(String, &str)]| {
        let map: serde_json::Map<String, serde_json::Value> =
            entries.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let text = serde_json::to_string_pretty(&serde_json::Value::Object(map)).unwrap();
        std::fs::write(&file, format!("// written by Gemini CLI\n{text}")).unwrap();
    };
    let at = |p: &std::path::Path| p.display().to_string();
    write(&[(at(&root), "TRUST_FOLDER")]);
    assert_eq!(timeout(&t), 1000, "TRUST_FOLDER");
    // TRUST_PARENT on a sibling covers the parent and so this folder.
    write(&[(at(&root.with_file_name("a-sibling")), "TRUST_PARENT")]);
    assert_eq!(timeout(&t), 1000, "TRUST_PARENT of a sibling");
    // The longer entry wins: the folder itself untrusted under a trusted parent.
    write(&[(at(root.parent().unwrap()), "TRUST_FOLDER"), (at(&root), "DO_NOT_TRUST")]);
    assert_eq!(timeout(&t), serde_json::Value::Null, "DO_NOT_TRUST, longer");
    // toolbelt's own decision for the same folder comes first on a tie.
    assert_eq!(toolbelt(&t, &["trust"], None).code, 0);
    assert_eq!(timeout(&t), 1000, "toolbelt trust over Gemini CLI's equal entry");
    // A value Gemini CLI would stop on is an error naming the file.
    std::fs::write(&file, r#"{"/x": "YES"}"#).unwrap();
    let r = toolbelt(&t, &["config", "show"], None);
    assert!(r.stderr.contains("trustedFolders.json"), "{} {}", r.code, r.stderr);
}

/// Issue 49 F9: with no settings file, `config show` said only "defaults apply", not what
/// they are. Each honoured key no file sets is listed with the value in use.
#[test]
fn config_show_lists_the_defaults_in_use() {
    let t = TempTree::new();
    let r = toolbelt(&t, &["config", "show"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("tools.toolCallTimeoutMs = 180000    # default"), "{}", r.stdout);
    assert!(r.stdout.contains("general.defaultApprovalMode = \"default\"    # default"));
    t.file(".toolbelt/settings.json", r#"{"tools": {"toolCallTimeoutMs": 5000}}"#);
    assert_eq!(toolbelt(&t, &["trust"], None).code, 0);
    let v = toolbelt(&t, &["config", "show", "--json"], None).json();
    assert_eq!(
        v["defaults"]["tools.toolCallTimeoutMs"],
        serde_json::Value::Null,
        "set, not a default"
    );
    assert_eq!(v["defaults"]["security.folderTrust.enabled"], true);
}
