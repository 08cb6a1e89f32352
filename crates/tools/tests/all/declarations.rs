//! Every declaration, snapshotted for both model families; names unique; schemas compile.

use std::collections::HashSet;

use toolbelt_core::schema::ParamValidator;
use toolbelt_core::ModelFamily;

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
