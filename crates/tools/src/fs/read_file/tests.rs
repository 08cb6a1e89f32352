use super::*;

#[test]
fn older_range_parameters_map_to_line_numbers() {
    let mut a = json!({"absolute_path": "/x", "offset": 10, "limit": 5});
    ReadFile.normalize_args(&mut a);
    assert_eq!(a, json!({"file_path": "/x", "start_line": 11, "end_line": 15}));
    let mut a = json!({"path": "x", "offset": 0});
    ReadFile.normalize_args(&mut a);
    assert_eq!(a, json!({"file_path": "x", "start_line": 1}));
    let mut a = json!({"file_path": "x", "start_line": 2, "offset": 9});
    ReadFile.normalize_args(&mut a);
    assert_eq!(a, json!({"file_path": "x", "start_line": 2, "offset": 9}), "current names win");
}

#[test]
fn ranges_and_headers() {
    let content: String = (1..=20).map(|i| format!("Line {i}")).collect::<Vec<_>>().join("\n");
    let r = text_result(&content, "p.txt", Some(6), Some(8), false);
    assert_eq!(r.return_display, json!("Read lines 6-8 of 20 from p.txt"));
    assert!(
        matches!(&r.llm_content, Content::Text(t) if t.ends_with("--- FILE CONTENT (truncated) ---\nLine 6\nLine 7\nLine 8") && t.contains("use start_line: 9."))
    );
    assert_eq!(r.summary.as_deref(), Some("6-8 of 20"));
    let r = text_result("a\nb\nc", "f.txt", Some(10), None, false);
    assert_eq!(r.return_display, json!("Read lines 4-3 of 3 from f.txt"));
    let r = text_result("Line 1\nLine 2", "t.txt", Some(1), Some(10), false);
    assert_eq!(r.llm_content, Content::Text("Line 1\nLine 2".into()));
    assert_eq!(r.summary.as_deref(), Some("2 lines"));
    let r = text_result("", "e.txt", None, None, false);
    assert_eq!(r.summary.as_deref(), Some("1 lines"));
    // Older versions' line numbers (issue 19).
    let r = text_result("a\nb\n", "n.txt", None, None, true);
    assert_eq!(r.llm_content, Content::Text("     1|a\n     2|b\n".into()));
    let r = text_result(&content, "p.txt", Some(9), Some(10), true);
    assert!(
        matches!(&r.llm_content, Content::Text(t) if t.ends_with("---\n     9|Line 9\n    10|Line 10"))
    );
}

/// Lines are numbered as they are selected (issue 35: a range over ten million lines made a
/// list of every line, 641 MB): the same text as numbering the selection afterwards, a last
/// empty line left bare.
#[test]
fn lines_are_numbered_in_the_same_pass() {
    let numbered = |c: &str, s, e| select_lines(c, s, e, true).body;
    assert_eq!(numbered("a\nb", None, None), "     1|a\n     2|b");
    assert_eq!(numbered("a\n", None, None), "     1|a\n");
    assert_eq!(numbered("", None, None), "");
    assert_eq!(numbered("a\r\n\nc\n", Some(2), Some(3)), "     2|\n     3|c");
    assert_eq!(select_lines("a\r\nb", None, None, false).body, "a\nb");
    let long = "x".repeat(3000);
    let sel = select_lines(&long, None, None, true);
    assert!(
        sel.shortened
            && sel.body.starts_with("     1|xxx")
            && sel.body.ends_with("... [truncated]")
    );
}
