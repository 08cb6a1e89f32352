//! Every declaration, snapshotted for both model families; names unique; schemas compile.

use std::collections::HashSet;

use toolbelt_core::ModelFamily;
use toolbelt_core::schema::ParamValidator;

struct Grounded;

#[async_trait::async_trait]
impl toolbelt_core::model::ModelAccess for Grounded {
    fn supports_grounding(&self) -> bool {
        true
    }
    async fn ask(
        &self,
        _: &str,
        _: toolbelt_core::model::Grounding,
        _: &tokio_util::sync::CancellationToken,
    ) -> Result<toolbelt_core::model::ModelAnswer, String> {
        Err("not asked in this test".into())
    }
}

#[test]
fn declarations_are_unique_valid_and_stable() {
    // With a model that has search grounding, so that google_web_search is offered too.
    let services = toolbelt_tools::Services {
        model: Some(std::sync::Arc::new(Grounded)),
        ..toolbelt_tools::Services::default()
    };
    let tools = toolbelt_tools::builtin_tools_with(&services);
    assert!(tools.iter().any(|t| t.name() == "google_web_search"));
    assert!(
        !toolbelt_tools::builtin_tools().iter().any(|t| t.name() == "google_web_search"),
        "no model, no search"
    );
    let mut names = HashSet::new();
    for t in &tools {
        assert!(names.insert(t.name().to_string()), "duplicate tool name {}", t.name());
        for family in [ModelFamily::Legacy, ModelFamily::Gemini3] {
            let d = t.declaration(family);
            assert_eq!(d.name, t.name());
            assert!(!d.description.trim().is_empty());
            assert_eq!(d.parameters["type"], "object");
            assert!(
                ParamValidator::new(d.parameters.clone()).is_compiled(),
                "{} schema compiles",
                t.name()
            );
            // FW-07: only the background-process tools declare `wait_for_previous`.
            let waits = matches!(t.name(), "list_background_processes" | "read_background_output");
            assert_eq!(
                d.parameters["properties"].get("wait_for_previous").is_some(),
                waits,
                "FW-07 {}",
                t.name()
            );
            let label = match family {
                ModelFamily::Legacy => "legacy",
                ModelFamily::Gemini3 => "gemini-3",
            };
            insta::assert_json_snapshot!(format!("{}.{label}", t.name()), d);
        }
    }
}

/// The engine knows no tool by name: each tool says what an "always allow" covers and whether
/// it runs alone. These are upstream's choices (`getPolicyUpdateOptions`, the edit tools'
/// switch to auto_edit, sequential edits), which the scheduler used to hold in a name table.
#[test]
fn tools_describe_their_approval_scope_and_scheduling() {
    use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};
    let tools = toolbelt_tools::builtin_tools();
    let find = |n: &str| {
        tools.iter().find(|t| t.name() == n).unwrap_or_else(|| panic!("no tool {n}")).clone()
    };
    let arg = |a| AlwaysAllow { scope: AlwaysScope::Argument(a), enables_auto_edit: false };
    let edit = AlwaysAllow { scope: AlwaysScope::Argument("file_path"), enables_auto_edit: true };
    assert_eq!(find("read_file").always_allow(), arg("file_path"));
    assert_eq!(find("write_file").always_allow(), edit);
    assert_eq!(find("replace").always_allow(), edit);
    assert_eq!(find("list_directory").always_allow(), arg("dir_path"));
    assert_eq!(find("glob").always_allow(), arg("pattern"));
    assert_eq!(find("grep_search").always_allow(), arg("pattern"));
    assert_eq!(find("read_many_files").always_allow(), arg("include"));
    assert_eq!(
        find("run_shell_command").always_allow().scope,
        AlwaysScope::CommandRoots("command")
    );
    assert_eq!(find("write_todos").always_allow(), AlwaysAllow::default());
    let args = serde_json::json!({"file_path": "a", "content": ""});
    for n in ["write_file", "replace", "run_shell_command"] {
        assert!(find(n).is_mutating(&args), "{n} must run alone");
    }
    assert!(!find("read_file").is_mutating(&args));
    let waits = serde_json::json!({"wait_for_previous": true});
    assert!(find("list_background_processes").waits_for_previous(&waits));
    assert!(!find("list_background_processes").waits_for_previous(&serde_json::json!({})));
}

/// A value every part of `schema` accepts: each property present, the first `enum` value,
/// numbers at their minimum, one item in each array.
fn sample(schema: &serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::String(t) => t.as_str(),
        Value::Array(ts) => ts.first().and_then(Value::as_str).unwrap_or("null"),
        _ => "null",
    };
    match kind {
        "object" => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, s)| (k.clone(), sample(s)))
                .collect(),
        ),
        "string" => json!("x".repeat(schema["minLength"].as_u64().unwrap_or(1).max(1) as usize)),
        "integer" | "number" => json!(schema["minimum"].as_f64().map_or(1, |m| m.ceil() as i64)),
        "boolean" => json!(true),
        "array" => json!([sample(&schema["items"])]),
        _ => Value::Null,
    }
}

/// `value` (which fits `schema`) with one thing changed: a property left out, given a value
/// of another kind, or one added; an item of another kind; nested values likewise.
fn variants(
    schema: &serde_json::Value,
    value: &serde_json::Value,
    depth: usize,
) -> Vec<serde_json::Value> {
    use serde_json::{Value, json};
    let junk = [
        json!(null),
        json!(""),
        json!("x"),
        json!(0),
        json!(-1),
        json!(1),
        json!(1.5),
        serde_json::from_str::<Value>("1.0").unwrap_or_default(),
        json!(1e300),
        json!(u64::MAX),
        json!(true),
        json!([]),
        json!(["x"]),
        json!([1]),
        json!({}),
        json!({"k": 1}),
        json!("y".repeat(5000)),
    ];
    let mut out: Vec<Value> = junk.to_vec();
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let mut without = map.clone();
                without.remove(key);
                out.push(Value::Object(without));
                let nested = if depth < 3 {
                    variants(&schema["properties"][key], inner, depth + 1)
                } else {
                    junk.to_vec()
                };
                for v in nested {
                    let mut changed = map.clone();
                    changed.insert(key.clone(), v);
                    out.push(Value::Object(changed));
                }
            }
            let mut extra = map.clone();
            extra.insert("zz_extra".into(), json!(1));
            out.push(Value::Object(extra));
        }
        Value::Array(items) if depth < 3 => {
            for v in variants(&schema["items"], items.first().unwrap_or(&Value::Null), depth + 1) {
                out.push(json!([v]));
                let mut more = items.clone();
                more.push(v);
                out.push(Value::Array(more));
            }
        }
        _ => {}
    }
    out
}

/// Issue 37: the quick check that spares a small call the schema's compile never passes
/// arguments the compiled schema refuses, and it covers every built-in tool's schema (a
/// plainly valid call of each passes it).
#[test]
fn quick_checks_never_pass_what_the_schema_refuses() {
    let mut checked = 0;
    for t in toolbelt_tools::builtin_tools() {
        let mut schemas = vec![
            t.declaration(ModelFamily::Legacy).parameters,
            t.declaration(ModelFamily::Gemini3).parameters,
        ];
        schemas.extend(t.accepted_parameters());
        for schema in schemas {
            let v = ParamValidator::new(schema.clone());
            // web_fetch accepts `url` or `prompt` (`if`/`else`): that schema is compiled.
            let plain = schema.get("if").is_none();
            assert_eq!(v.has_quick_check(), plain, "{}: {schema}", t.name());
            let valid = sample(&schema);
            assert!(v.fully_accepts(&valid), "{}: the sample {valid} should fit", t.name());
            assert_eq!(v.quickly_accepts(&valid), plain, "{}: {valid}", t.name());
            for variant in variants(&schema, &valid, 0) {
                if v.quickly_accepts(&variant) {
                    assert!(v.fully_accepts(&variant), "{}: {variant}", t.name());
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
