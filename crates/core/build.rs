//! Turns the bundled default policies (`src/policy/defaults/*.toml`) into Rust data, so a
//! start reads no TOML and no JSON: reading them took a tenth of a small call's start-up
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
    let mut out =
        String::from("/// The bundled default policies (tier 1), equivalent to upstream's.\n");
    out.push_str("pub const DEFAULT_POLICY_FILES: &[(&str, &str)] = &[\n");
    for f in FILES {
        let _ = writeln!(
            out,
            "    ({f:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/src/policy/defaults/{f}\"))),"
        );
    }
    out.push_str("];\n\n/// Their rules, as written (file, rule).\n");
    out.push_str("const BUNDLED_RULES: &[(&str, toml::Bundled)] = &[\n");
    for f in FILES {
        let path = format!("src/policy/defaults/{f}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("{path}: {e}"));
        let rules = doc.get("rule").and_then(toml::Value::as_array);
        for rule in rules.into_iter().flatten() {
            let t = rule.as_table().unwrap_or_else(|| panic!("{path}: a rule is not a table"));
            let _ = writeln!(out, "    ({f:?}, {}),", bundled(t, &path));
        }
    }
    out.push_str("];\n");
    let dest =
        std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|e| panic!("OUT_DIR: {e}")))
            .join("bundled_policies.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}

/// One rule as a `toml::Bundled` expression. Every key is read as the loader reads it; a key
/// or a type the loader would refuse stops the build.
fn bundled(t: &toml::Table, path: &str) -> String {
    if let Some(k) = t.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
        panic!("{path}: unknown key `{k}` in a bundled rule");
    }
    let opt_str = |k: &str| match t.get(k) {
        None => "None".to_string(),
        Some(toml::Value::String(s)) => format!("Some({s:?})"),
        Some(_) => panic!("{path}: `{k}` must be a string"),
    };
    let list = |k: &str| match t.get(k) {
        None => None,
        Some(toml::Value::String(s)) => Some(format!("&[{s:?}]")),
        Some(toml::Value::Array(a)) => Some(format!(
            "&[{}]",
            a.iter()
                .map(|v| format!(
                    "{:?}",
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
            "Some({:?})",
            serde_json::to_string(a).unwrap_or_else(|e| panic!("{path}: {e}"))
        ),
        Some(_) => panic!("{path}: toolAnnotations must be a table"),
    };
    let deny = match (t.get("denyMessage"), t.get("deny_message")) {
        (Some(_), _) => opt_str("denyMessage"),
        (None, _) => opt_str("deny_message"),
    };
    format!(
        "toml::Bundled {{ name: {}, tool_names: {}, mcp_name: {}, subagent: {}, args_pattern: {}, \
         command_prefix: {}, command_regex: {}, decision: {decision}, priority: {priority}, \
         modes: &[{}], interactive: {}, annotations: {annotations}, allow_redirection: {}, \
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
