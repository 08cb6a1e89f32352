//! Issue 16: settings -> policy rules, compared with upstream Gemini CLI's own conversion
//! (recorded from its code into `tests/fixtures/settings_rules.json` by
//! `scripts/record-settings-rules.mjs`). `tools.core: ["run_shell_command(git)"]` used to become a
//! blanket allow of the shell, and `tools.exclude: ["run_shell_command(rm)"]` a deny of it all.

use std::path::Path;

use serde_json::{Value, json};
use toolbelt_core::policy::Rule;
use toolbelt_core::policy::sources::settings_rules;
use toolbelt_core::settings::{Scope, Settings, parse_file};

/// A rule in the recorded shape: what upstream's `PolicyRule` holds, minus its source label.
fn shape(r: &Rule) -> Value {
    let mut v = json!({
        "toolName": r.tool_name,
        "decision": r.decision.as_str(),
        "priority": r.priority,
    });
    if let Some(p) = &r.args_pattern {
        v["argsPattern"] = json!(p.source());
    }
    if let Some(m) = &r.mcp_name {
        v["mcpName"] = json!(m);
    }
    if !r.modes.is_empty() {
        let modes: Vec<&str> = r.modes.iter().map(|m| m.as_str()).collect();
        v["modes"] = json!(modes);
    }
    v
}

/// Sorted, with priorities rounded (both sides compute `4.3 - 0.01` the same way, but the
/// record passes through JSON).
fn normalized(rules: impl IntoIterator<Item = Value>) -> Vec<String> {
    let mut v: Vec<String> = rules
        .into_iter()
        .map(|mut r| {
            let p = r["priority"].as_f64().unwrap();
            r["priority"] = json!(format!("{p:.6}"));
            r.to_string()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn settings_become_the_rules_upstream_builds() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/settings_rules.json"),
    )
    .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 20, "the issue asks for at least 20 settings files");
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let file =
            parse_file(&c["settings"].to_string(), Path::new("/s/settings.json"), Scope::User)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let t = Settings::from_files(vec![file], true).tools();
        let interactive = c["interactive"].as_bool().unwrap_or(true);
        let ours = normalized(settings_rules(&t, interactive).iter().map(shape));
        let expected = match (&c["deviation"], &c["toolbelt"]) {
            (Value::String(_), Value::Array(rules)) => rules.clone(),
            (Value::Null, _) => c["upstream"].as_array().unwrap().clone(),
            _ => panic!("{name}: a deviation needs its row and the rules toolbelt builds"),
        };
        if ours != normalized(expected) {
            failures
                .push(format!("{name}:\n  ours:     {ours:?}\n  expected: {:?}", c["upstream"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_deviation_is_a_row_in_compat_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let compat = std::fs::read_to_string(root.join("docs/compat.md")).unwrap();
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("crates/core/tests/fixtures/settings_rules.json"))
            .unwrap(),
    )
    .unwrap();
    for c in doc["cases"].as_array().unwrap() {
        if let Some(row) = c["deviation"].as_str() {
            assert!(compat.contains(&format!("| {row} |")), "docs/compat.md has no row {row}");
        }
    }
}

/// Every rule names the key and the file it came from (`policy check` shows it).
#[test]
fn settings_rules_name_their_key_and_file() {
    let file = parse_file(
        r#"{"tools": {"allowed": ["run_shell_command(git)"]}}"#,
        Path::new("/home/u/.gemini/settings.json"),
        Scope::GeminiUser,
    )
    .unwrap();
    let t = Settings::from_files(vec![file], true).tools();
    let rules = settings_rules(&t, true);
    assert_eq!(rules.len(), 2);
    for r in &rules {
        assert_eq!(r.source.label, "Settings (tools.allowed)");
        assert_eq!(r.source.file.as_deref(), Some(Path::new("/home/u/.gemini/settings.json")));
    }
}
