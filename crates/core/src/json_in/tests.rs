use super::*;

fn budget(bytes: usize, values: usize, depth: usize) -> JsonBudget {
    JsonBudget { bytes, values, depth }
}

#[test]
fn values_are_counted_outside_strings_only() {
    let all = budget(usize::MAX, usize::MAX, usize::MAX);
    let shape = |t: &str| measure(t.as_bytes(), all).unwrap();
    assert_eq!(shape("0"), Shape { values: 1, depth: 0 });
    assert_eq!(shape("[0,1,2]"), Shape { values: 4, depth: 1 });
    assert_eq!(shape(r#"{"a":{"b":[1,2]}}"#), Shape { values: 5, depth: 3 });
    // Brackets, commas and escaped quotes inside strings are text.
    assert_eq!(shape(r#"["[,{\"],\\", "x"]"#), Shape { values: 3, depth: 1 });
    // An empty container counts as holding one value.
    assert_eq!(count_values(b"[[],[]]"), 5);
}

#[test]
fn each_limit_is_named_when_passed() {
    assert_eq!(
        measure(b"[0,0,0]", budget(6, 100, 10)),
        Err(JsonRefusal::TooLong { bytes: 7, limit: 6 })
    );
    assert_eq!(measure(b"[0,0,0]", budget(100, 4, 10)).unwrap().values, 4);
    assert_eq!(
        measure(b"[0,0,0,0]", budget(100, 4, 10)),
        Err(JsonRefusal::TooManyValues { limit: 4 })
    );
    assert_eq!(measure(b"[[[0]]]", budget(100, 100, 3)).unwrap().depth, 3);
    assert_eq!(measure(b"[[[[0]]]]", budget(100, 100, 3)), Err(JsonRefusal::TooDeep { limit: 3 }));
    let e = measure(b"[0,0,0,0]", budget(100, 4, 10)).unwrap_err().to_string();
    assert_eq!(e, "it holds more than 4 JSON values (objects, arrays and leaves)");
}

/// The depth limit is serde_json's own: text at the limit parses, one level more is refused
/// by the measure, not by a parser error.
#[test]
fn the_depth_limit_is_the_parsers() {
    let at = format!("{}{}", "[".repeat(JSON_DEPTH), "]".repeat(JSON_DEPTH));
    let over = format!("[{at}]");
    let b = JsonBudget::message(1 << 20);
    assert!(parse_str::<serde_json::Value>(&at, b).is_ok());
    assert!(matches!(
        parse_str::<serde_json::Value>(&over, b),
        Err(JsonError::Refused(JsonRefusal::TooDeep { limit: JSON_DEPTH }))
    ));
}

#[test]
fn a_text_within_the_budget_parses_and_invalid_text_is_the_parsers_to_refuse() {
    let b = JsonBudget::message(1 << 10);
    let v: serde_json::Value = parse(br#"{"a":[1,"x"]}"#, b).unwrap();
    assert_eq!(v["a"][1], "x");
    assert!(matches!(parse::<serde_json::Value>(b"[1,", b), Err(JsonError::Invalid(_))));
    assert!(matches!(parse::<serde_json::Value>(b"]]]]", b), Err(JsonError::Invalid(_))));
}

proptest::proptest! {
    /// However the text is cut and whatever it holds, the count never falls short of what the
    /// parser builds: a valid text's values are at most its count.
    #[test]
    fn the_count_is_never_below_the_parsed_values(v in value_strategy()) {
        let text = serde_json::to_vec(&v).unwrap();
        proptest::prop_assert!(count_values(&text) >= parsed_values(&v));
    }
}

fn parsed_values(v: &serde_json::Value) -> usize {
    1 + match v {
        serde_json::Value::Array(a) => a.iter().map(parsed_values).sum(),
        serde_json::Value::Object(o) => o.values().map(parsed_values).sum(),
        _ => 0,
    }
}

fn value_strategy() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i32>().prop_map(|n| serde_json::json!(n)),
        "[a-z\\[\\]{},\"\\\\]{0,6}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map("[a-z,\\[]{0,3}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}
