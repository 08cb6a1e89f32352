//! Turns the bundled default policies (`src/policy/defaults/*.toml`) into Rust code that makes
//! their rules as written (`RawRule`s, which the loader checks and compiles), so a start reads
//! no TOML and no JSON: reading them took a tenth of a small call's start-up
//! (issue 37). The files stay the source; what is generated is never checked in. A test
//! (`policy::tests::bundled_rules_are_the_toml_files`) checks the result against the files
//! read the way a user's policy file is.

use std::fmt::Write as _;

// `RULE_KEYS`: the keys a rule may hold, as the loader knows them.
include!("src/policy/toml/rule_keys.rs");

/// The bundled files, in the order their rules are listed (ties in priority keep it).
const FILES: &[&str] = &[
    "read-only.toml",
    "write.toml",
    "yolo.toml",
    "plan.toml",
    "agents.toml",
    "discovered.toml",
    "non-interactive.toml",
];

fn main() {
    println!("cargo::rerun-if-changed=src/policy/defaults");
    println!("cargo::rerun-if-changed=src/policy/toml/rule_keys.rs");
    // A policy file added to the folder but not to `FILES` would be left out silently.
    let mut present: Vec<String> = std::fs::read_dir("src/policy/defaults")
        .unwrap_or_else(|e| panic!("src/policy/defaults: {e}"))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    present.sort();
    let mut listed: Vec<String> = FILES.iter().map(|f| (*f).to_string()).collect();
    listed.sort();
    assert_eq!(present, listed, "src/policy/defaults and build.rs's FILES differ");

    let mut files =
        String::from("/// The bundled default policies (tier 1), equivalent to upstream's.\n");
    files.push_str("pub const DEFAULT_POLICY_FILES: &[(&str, &str)] = &[\n");
    let mut rules = String::from("vec![\n");
    for f in FILES {
        let _ = writeln!(
            files,
            "    ({f:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/src/policy/defaults/{f}\"))),"
        );
        let path = format!("src/policy/defaults/{f}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("{path}: {e}"));
        for rule in doc.get("rule").and_then(toml::Value::as_array).into_iter().flatten() {
            let t = rule.as_table().unwrap_or_else(|| panic!("{path}: a rule is not a table"));
            let _ = writeln!(rules, "    ({f:?}, {}),", raw_rule(t, &path));
        }
    }
    files.push_str("];\n");
    rules.push_str("]\n");
    let out = std::env::var("OUT_DIR").unwrap_or_else(|e| panic!("OUT_DIR: {e}"));
    for (name, text) in [("bundled_policies.rs", files), ("bundled_rules.rs", rules)] {
        let dest = std::path::Path::new(&out).join(name);
        std::fs::write(&dest, text).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
    }
}

/// One rule as a `RawRule` expression. Every key is read as the loader reads it; a key or a
/// type the loader would refuse stops the build.
fn raw_rule(t: &toml::Table, path: &str) -> String {
    if let Some(k) = t.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
        panic!("{path}: unknown key `{k}` in a bundled rule");
    }
    let opt_str = |k: &str| match t.get(k) {
        None => "None".to_string(),
        Some(toml::Value::String(s)) => format!("Some({s:?}.to_string())"),
        Some(_) => panic!("{path}: `{k}` must be a string"),
    };
    let list = |k: &str| match t.get(k) {
        None => None,
        Some(toml::Value::String(s)) => Some(format!("vec![{s:?}.to_string()]")),
        Some(toml::Value::Array(a)) => Some(format!(
            "vec![{}]",
            a.iter()
                .map(|v| format!(
                    "{:?}.to_string()",
                    v.as_str().unwrap_or_else(|| panic!("{path}: `{k}` entries must be strings"))
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Some(_) => panic!("{path}: `{k}` must be a string or a list"),
    };
    let opt_bool = |keys: &[&str]| {
        keys.iter().find_map(|k| t.get(*k)).map_or("None".to_string(), |v| {
            format!("Some({})", v.as_bool().unwrap_or_else(|| panic!("{path}: not a boolean")))
        })
    };
    let decision = match t.get("decision").and_then(toml::Value::as_str) {
        Some("allow") => "Decision::Allow",
        Some("deny") => "Decision::Deny",
        Some("ask_user") => "Decision::AskUser",
        other => panic!("{path}: decision {other:?}"),
    };
    let priority = t
        .get("priority")
        .and_then(toml::Value::as_integer)
        .unwrap_or_else(|| panic!("{path}: priority"));
    let modes: Vec<&str> = t
        .get("modes")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| match m.as_str() {
            Some("default") => "ApprovalMode::Default",
            Some("autoEdit") => "ApprovalMode::AutoEdit",
            Some("yolo") => "ApprovalMode::Yolo",
            Some("plan") => "ApprovalMode::Plan",
            other => panic!("{path}: mode {other:?}"),
        })
        .collect();
    let annotations = match t.get("toolAnnotations") {
        None => "None".to_string(),
        Some(toml::Value::Table(a)) => format!(
            "serde_json::json!({}).as_object().cloned()",
            serde_json::to_string(a).unwrap_or_else(|e| panic!("{path}: {e}"))
        ),
        Some(_) => panic!("{path}: toolAnnotations must be a table"),
    };
    let deny = opt_str(if t.contains_key("denyMessage") { "denyMessage" } else { "deny_message" });
    format!(
        "RawRule {{ name: {}, tool_names: {}, mcp_name: {}, subagent: {}, args_pattern: {}, \
         command_prefix: {}, command_regex: {}, decision: {decision}, priority: {priority}, \
         modes: vec![{}], interactive: {}, annotations: {annotations}, allow_redirection: {}, \
         deny_message: {deny} }}",
        opt_str("name"),
        list("toolName").unwrap_or_else(|| panic!("{path}: toolName is required")),
        opt_str("mcpName"),
        opt_str("subagent"),
        opt_str("argsPattern"),
        list("commandPrefix").map_or("None".to_string(), |l| format!("Some({l})")),
        opt_str("commandRegex"),
        modes.join(", "),
        opt_bool(&["interactive"]),
        opt_bool(&["allowRedirection", "allow_redirection"]).as_str() == "Some(true)",
    )
}
