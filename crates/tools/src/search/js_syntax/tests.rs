//! JavaScript's own answers (V8, Node 20, recorded by `scripts/record-js-regex.mjs`) for the
//! issue's shapes and 3,000 random patterns of regex pieces: the check says what V8 says.

use serde_json::Value;

#[test]
fn every_recorded_pattern_gets_v8s_answer() {
    let cases: Value = serde_json::from_str(include_str!("cases.json")).unwrap();
    let mut wrong = Vec::new();
    let mut n = 0;
    for group in ["fixed", "random"] {
        for case in cases[group].as_array().unwrap() {
            let pattern = case[0].as_str().unwrap();
            let want = case[1].as_str();
            n += 1;
            if super::error(pattern) != want {
                wrong.push(format!("{pattern:?}: V8 {want:?}, ours {:?}", super::error(pattern)));
            }
        }
    }
    assert!(n > 3000, "{n} cases");
    assert!(wrong.is_empty(), "{} of {n} differ:\n{}", wrong.len(), wrong.join("\n"));
}
