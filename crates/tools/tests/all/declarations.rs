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
