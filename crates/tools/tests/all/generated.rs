//! Generated-input tests (proptest) of every built-in tool's arguments: whatever JSON a model
//! sends, validation answers with a result or an error, never a panic; calls of the tools
//! that only read run to a result in a small tree. `TOOLBELT_PROPTEST_CASES` (default 1,000).

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::tool::ExecContext;
use toolbelt_core::{Kind, ModelFamily, Registry};
use toolbelt_test_support::TempTree;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..5000).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        prop::sample::select(
            &[
                "",
                ".",
                "..",
                "a.txt",
                "sub",
                "sub/b.md",
                "*.txt",
                "**/*",
                "/etc/passwd",
                "../outside",
                "~",
                "a",
                "[",
                "(?i)a",
                "\\\\",
                "%2e%2e",
                "@a.txt",
                "file:///x",
                "pending",
                "completed",
                "x\\u{0}y",
                "https://example.com",
                "Ä",
            ][..]
        )
        .prop_map(Value::from),
        "\\PC{0,16}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn registry() -> Registry {
    Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap()
}

/// The declared parameter names of each tool, to aim the generated objects at.
fn tools_and_keys() -> Vec<(String, Vec<String>, bool)> {
    registry()
        .tools()
        .map(|t| {
            let d = t.declaration(ModelFamily::Legacy);
            let keys = d.parameters["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            let reads = matches!(t.kind(), Kind::Read | Kind::Search);
            (t.name().to_string(), keys, reads)
        })
        .collect()
}

fn call() -> impl Strategy<Value = (String, Value, bool)> {
    prop::sample::select(tools_and_keys()).prop_flat_map(|(name, keys, reads)| {
        let key = if keys.is_empty() {
            "[a-z_]{1,8}".boxed()
        } else {
            prop_oneof![4 => prop::sample::select(keys), 1 => "[a-z_]{1,8}"].boxed()
        };
        let args = prop_oneof![
            8 => prop::collection::btree_map(key, json_value(), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            1 => json_value(),
        ];
        (Just(name), args, Just(reads))
    })
}

thread_local! {
    static TREE: TempTree = {
        let t = TempTree::new();
        t.file("a.txt", "alpha\nbeta\n").file("sub/b.md", "# b\n").file(".env", "SECRET=1\n");
        t
    };
    static REGISTRY: Arc<Registry> = Arc::new(registry());
    static RT: tokio::runtime::Runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: toolbelt_core::testing::proptest_cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Arguments against each declared schema: a validation error or a call; calls of tools
    /// that only read run to a result, and never show the secret.
    #[test]
    fn any_arguments_give_a_result_or_a_validation_error((name, args, reads) in call()) {
        TREE.with(|tree| REGISTRY.with(|registry| RT.with(|rt| {
            let env = tree.env(&[]);
            match registry.build_call(&name, args.clone(), &env) {
                Err(e) => prop_assert!(!e.message.is_empty(), "{} {}", name, args),
                Ok(built) if reads => {
                    let ctx = ExecContext::new("g", CancellationToken::new());
                    let r = rt.block_on(async {
                        tokio::time::timeout(
                            std::time::Duration::from_secs(20),
                            built.invocation.execute(ctx),
                        )
                        .await
                    });
                    let r = r.map_err(|_| TestCaseError::fail(format!("{name} {args} hung")))?;
                    let text = serde_json::to_string(&r.llm_content).unwrap();
                    prop_assert!(!text.contains("SECRET=1"), "{} {} read the secret", name, args);
                }
                Ok(_) => {}
            }
            Ok(())
        })))?;
    }
}
