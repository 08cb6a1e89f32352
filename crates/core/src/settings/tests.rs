use std::path::Path;

use super::*;

fn file(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

struct Layout {
    _dir: tempfile::TempDir,
    home: PathBuf,
    user: PathBuf,
    root: PathBuf,
}

fn layout() -> Layout {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().to_path_buf();
    Layout { home: base.join("tb"), user: base.join("u"), root: base.join("proj"), _dir: dir }
}

impl Layout {
    fn candidates(&self) -> Vec<(Scope, PathBuf)> {
        candidate_files(&self.home, Some(&self.user), Some(&self.root))
    }
}

#[test]
fn layers_merge_in_order_and_remember_their_file() {
    let l = layout();
    let gu = file(
        &l.user,
        ".gemini/settings.json",
        r#"{"tools": {"exclude": ["a"], "truncateToolOutputThreshold": 100, "shell": {"inactivityTimeout": 10}}}"#,
    );
    let u = file(
        &l.home,
        "settings.json",
        r#"{"tools": {"exclude": ["b"], "truncateToolOutputThreshold": 200}}"#,
    );
    let gp = file(&l.root, ".gemini/settings.json", r#"{"tools": {"toolCallTimeoutMs": 5000}}"#);
    let p = file(
        &l.root,
        ".toolbelt/settings.json",
        "{\n  // project\n  \"tools\": {\"toolCallTimeoutMs\": 7000, \"exclude\": [\"a\", \"c\"]},\n  \"somethingElse\": {\"kept\": true}\n}",
    );
    let s = Settings::load(&l.candidates(), true).unwrap();
    assert_eq!(s.get("tools.truncateToolOutputThreshold"), Some(&serde_json::json!(200)));
    assert_eq!(s.get("tools.toolCallTimeoutMs"), Some(&serde_json::json!(7000)));
    assert_eq!(
        s.get("tools.exclude"),
        Some(&serde_json::json!(["a", "b", "c"])),
        "exclusions are united"
    );
    assert_eq!(
        s.get("somethingElse.kept"),
        Some(&serde_json::json!(true)),
        "unknown keys are kept"
    );
    assert_eq!(s.origin["tools.truncateToolOutputThreshold"], u);
    assert_eq!(s.origin["tools.shell.inactivityTimeout"], gu);
    assert_eq!(s.origin["tools.toolCallTimeoutMs"], p);
    assert!(!s.origin.values().any(|o| o == &gp), "every key gp set was overridden");
    let mut c = crate::config::Config::default();
    s.apply_to(&mut c);
    assert_eq!(c.tool_call_timeout_ms, 7000);
    assert_eq!(c.truncate_tool_output_threshold_chars, 200);
    assert_eq!(c.shell_inactivity_timeout_ms, 10_000);
}

#[test]
fn malformed_files_name_the_file_line_and_key() {
    let l = layout();
    let p =
        file(&l.home, "settings.json", "{\n  \"tools\": {\n    \"exclude\": \"read_file\"\n  }\n}");
    let e = Settings::load(&l.candidates(), true).unwrap_err();
    assert_eq!(e.path, p);
    assert_eq!(e.line, Some(3));
    assert_eq!(e.key.as_deref(), Some("tools.exclude"));
    assert_eq!(
        e.to_string(),
        format!("{}:3: tools.exclude: must be an array of strings", p.display())
    );

    file(&l.home, "settings.json", "{\"tools\": {,}}");
    let e = Settings::load(&l.candidates(), true).unwrap_err();
    assert!(e.to_string().contains("not valid JSON") && e.line == Some(1), "{e}");

    file(&l.home, "settings.json", r#"{"mcpServers": {"gh": {"args": ["x"]}}}"#);
    let e = Settings::load(&l.candidates(), true).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("mcpServers.gh"));

    file(
        &l.home,
        "settings.json",
        r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "x", "fail": "maybe"}]}]}}"#,
    );
    let e = Settings::load(&l.candidates(), true).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("hooks.BeforeTool[0].hooks[0].fail"));

    file(&l.home, "settings.json", r#"{"general": {"defaultApprovalMode": "yolo"}}"#);
    assert!(
        Settings::load(&l.candidates(), true).unwrap_err().message.contains("yolo cannot be set")
    );
}

#[test]
fn legacy_flat_keys_are_read() {
    let l = layout();
    file(
        &l.home,
        "settings.json",
        r#"{"excludeTools": ["glob"], "toolDiscoveryCommand": "./discover", "coreTools": ["read_file"]}"#,
    );
    let t = Settings::load(&l.candidates(), true).unwrap().tools();
    assert_eq!(t.exclude, ["glob"]);
    assert_eq!(t.discovery_command.as_deref(), Some("./discover"));
    assert_eq!(t.core, Some(vec!["read_file".to_string()]));
}

#[test]
fn untrusted_project_files_cannot_run_commands_or_allow_more() {
    let l = layout();
    let p = file(
        &l.root,
        ".toolbelt/settings.json",
        r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "evil"}]}]},
            "tools": {"discoveryCommand": "evil", "allowed": ["run_shell_command"], "exclude": ["glob"]},
            "mcpServers": {"x": {"command": "evil"}}}"#,
    );
    file(&l.home, "settings.json", r#"{"tools": {"callCommand": "./mine"}}"#);
    let s = Settings::load(&l.candidates(), false).unwrap();
    let t = s.tools();
    assert!(t.hooks.events.is_empty() && t.discovery_command.is_none() && t.allowed.is_empty());
    assert!(t.mcp_servers.is_empty());
    assert_eq!(t.exclude, ["glob"], "restrictions still apply");
    assert_eq!(t.call_command.as_deref(), Some("./mine"), "user settings need no trust");
    let notice = s.skipped_notice().unwrap();
    assert!(
        notice.contains("hooks")
            && notice.contains("tools.discoveryCommand")
            && notice.contains(&p.display().to_string()),
        "{notice}"
    );
    let trusted = Settings::load(&l.candidates(), true).unwrap();
    assert_eq!(trusted.tools().hooks.events["BeforeTool"][0].hooks[0].command, "evil");
    assert!(trusted.skipped_notice().is_none());
}

#[test]
fn hooks_are_parsed_with_their_defaults() {
    let l = layout();
    file(
        &l.home,
        "settings.json",
        r#"{"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "sequential": true, "hooks": [
              {"type": "command", "command": "a.sh", "name": "guard", "timeout": 500, "fail": "closed", "env": {"X": "1"}},
              {"type": "command", "command": "b.sh"},
              {"type": "plugin", "command": "ignored"},
              {"type": "command"}]}],
            "enabled": true},
           "hooksConfig": {"disabled": ["b.sh"]}}"#,
    );
    let h = Settings::load(&l.candidates(), true).unwrap().tools().hooks;
    assert!(h.enabled);
    assert_eq!(h.disabled, ["b.sh"]);
    let g = &h.events["BeforeTool"][0];
    assert_eq!(g.matcher.as_deref(), Some("run_shell_command"));
    assert!(g.sequential);
    assert_eq!(g.hooks.len(), 2);
    assert_eq!(g.hooks[0].timeout_ms, 500);
    assert_eq!(g.hooks[0].fail, FailMode::Closed);
    assert_eq!(g.hooks[0].env["X"], "1");
    assert_eq!(g.hooks[1].timeout_ms, 60_000);
    assert_eq!(g.hooks[1].fail, FailMode::Open);
    assert_eq!(g.hooks[1].label(), "b.sh");
}

/// Issue 47: a cloned repository brings its own settings, and they were parsed whole however
/// many small values they held. Now the load fails with an error that gives the limit, and a
/// file larger than 8 MiB is not even read to its end.
#[test]
fn a_settings_file_of_too_many_values_or_bytes_is_refused_naming_the_limit() {
    let l = layout();
    let p =
        file(&l.root, ".gemini/settings.json", &format!(r#"{{"x":[{}0]}}"#, "0,".repeat(250_000)));
    let e = Settings::load(&l.candidates(), true).unwrap_err();
    assert_eq!(e.path, p);
    assert!(e.message.contains("not read: it holds more than 100000 JSON values"), "{e}");
    file(&l.root, ".gemini/settings.json", &format!(r#"{{"x":"{}"}}"#, "a".repeat(9 << 20)));
    let e = Settings::load(&l.candidates(), true).unwrap_err();
    assert!(e.message.contains("over the limit of 8388608 bytes"), "{e}");
}

/// Issue 47's attack: a repository's settings of 16,000 unknown keys took 44 s of every command
/// (each key's notice looked at every recorded origin, and every key was measured against every
/// known key). Now the keys past the first 200 are counted, not each named.
#[test]
fn a_settings_file_of_many_unknown_keys_is_noted_briefly() {
    let l = layout();
    let keys: serde_json::Map<String, Value> =
        (0..16_000).map(|i| (format!("unknownKey{i}"), Value::from(i))).collect();
    file(&l.home, "settings.json", &Value::Object(keys).to_string());
    let s = Settings::load(&l.candidates(), true).unwrap();
    let notices = s.unknown_key_notices();
    assert_eq!(notices.len(), 201, "{:?}", &notices[..3]);
    assert!(
        notices[0].ends_with("16000 settings; only the first 200 were checked for unknown keys")
    );
}

/// Issue 49 F4: a settings file Gemini CLI had written itself (its sign-in choice among other
/// things) drew a "not supported" notice on every command. Every key 0.61
/// writes on its own (sign-in, theme, editor, model dialog, IDE nudge, `gemini mcp add`, hook
/// and skill toggles, agent overrides) and every key of its settings schema is known: no notice.
#[test]
fn a_settings_file_gemini_cli_wrote_itself_gives_no_notice() {
    let l = layout();
    let written = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key", "useExternal": false},
                     "folderTrust": {"enabled": true}},
        "ui": {"theme": "GitHub", "footer": {"items": ["cwd"], "showLabels": true},
               "accessibility": {"enableLoadingPhrases": false}},
        "general": {"preferredEditor": "vim", "vimMode": true, "enableAutoUpdate": false,
                    "enableAutoUpdateNotification": false, "defaultApprovalMode": "default"},
        "ide": {"hasSeenNudge": true, "enabled": true},
        "model": {"name": "gemini-2.5-pro"},
        "mcpServers": {"docs": {"command": "true"}},
        "hooksConfig": {"disabled": ["x"]},
        "skills": {"disabled": ["y"]},
        "agents": {"overrides": {"codebase_investigator": {"enabled": false}}},
        "experimental": {"voice": {"backend": "x"}, "gemmaModelRouter": {"enabled": false}},
        "contextManagement": {"historyWindow": {"maxTokens": 1000}},
        "tools": {"shell": {"backgroundCompletionBehavior": "notify"}},
        "context": {"includeDirectoryTree": true, "fileFiltering": {"enableFileWatcher": true}},
    });
    file(&l.home, "settings.json", &written.to_string());
    let s = Settings::load(&l.candidates(), true).unwrap();
    assert_eq!(s.unknown_key_notices(), Vec::<String>::new());
    // A security key a person chose that toolbelt does not act on is still named.
    file(&l.home, "settings.json", r#"{"security": {"enableConseca": true}}"#);
    let s = Settings::load(&l.candidates(), true).unwrap();
    assert_eq!(s.unknown_key_notices().len(), 1);
}

/// Issue 50 review: a project's `security.auth.selectedType` switched an untrusted folder's
/// sessions to Vertex AI. The sign-in is a key toolbelt acts on: an untrusted project's is
/// skipped, a trusted one's is taken.
#[test]
fn an_untrusted_project_cannot_choose_the_sign_in() {
    let l = layout();
    file(
        &l.root,
        ".gemini/settings.json",
        r#"{"security": {"auth": {"selectedType": "vertex-ai"}}}"#,
    );
    let untrusted = Settings::load(&l.candidates(), false).unwrap();
    assert_eq!(untrusted.tools().auth_type, None);
    let trusted = Settings::load(&l.candidates(), true).unwrap();
    assert_eq!(trusted.tools().auth_type.as_deref(), Some("vertex-ai"));
}
