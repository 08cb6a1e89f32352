//! Parameters of older Gemini CLI versions and of the design documents, accepted while the
//! declarations stay as Gemini CLI 0.61's (issue 19). Each was refused or ignored before.

use serde_json::json;
use toolbelt_test_support::TempTree;

use super::harness::run;

#[test]
fn replace_without_instruction_and_by_its_older_name() {
    let t = TempTree::new();
    t.file("a.txt", "one two\n");
    let o =
        run(&t, "replace", json!({"file_path": "a.txt", "old_string": "one", "new_string": "1"}));
    assert!(o.error_type.is_none(), "{}", o.model);
    let o = run(
        &t,
        "smart-edit",
        json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"}),
    );
    assert!(o.error_type.is_none(), "{}", o.model);
    assert_eq!(std::fs::read_to_string(t.root().join("a.txt")).unwrap(), "1 2\n");
    // The declaration still asks for an instruction.
    let decl = toolbelt_tools::builtin_tools()
        .into_iter()
        .find(|t| t.name() == "replace")
        .unwrap()
        .declaration(toolbelt_core::ModelFamily::Legacy);
    assert!(decl.parameters["required"].as_array().unwrap().contains(&json!("instruction")));
    assert!(decl.parameters["properties"].get("expected_replacements").is_none());
}

#[test]
fn expected_replacements_needs_exactly_that_many() {
    let t = TempTree::new();
    t.file("b.txt", "x x x\n");
    let o = run(
        &t,
        "replace",
        json!({"file_path": "b.txt", "old_string": "x", "new_string": "y", "expected_replacements": 2}),
    );
    assert_eq!(o.error_type.as_deref(), Some("edit_expected_occurrence_mismatch"));
    assert!(
        o.error().starts_with(
            "Failed to edit, Expected 2 occurrences but found 3 for old_string in file:"
        ),
        "{}",
        o.error()
    );
    let o = run(
        &t,
        "replace",
        json!({"file_path": "b.txt", "old_string": "x", "new_string": "y", "expected_replacements": 3}),
    );
    assert!(o.error_type.is_none(), "{}", o.model);
    assert_eq!(std::fs::read_to_string(t.root().join("b.txt")).unwrap(), "y y y\n");
    let o = run(
        &t,
        "replace",
        json!({"file_path": "b.txt", "old_string": "y", "new_string": "z", "expected_replacements": 0}),
    );
    assert_eq!(o.error_type.as_deref(), Some("invalid_tool_params"), "{}", o.model);
}

#[test]
fn require_final_newline_for_write_file_and_replace() {
    let t = TempTree::new();
    let o = run(
        &t,
        "write_file",
        json!({"file_path": "c.txt", "content": "no newline", "require_final_newline": true}),
    );
    assert!(o.error_type.is_none(), "{}", o.model);
    assert_eq!(std::fs::read_to_string(t.root().join("c.txt")).unwrap(), "no newline\n");
    t.file("d.txt", "end");
    let o = run(
        &t,
        "replace",
        json!({"file_path": "d.txt", "old_string": "end", "new_string": "END", "require_final_newline": true}),
    );
    assert!(o.error_type.is_none(), "{}", o.model);
    assert_eq!(std::fs::read_to_string(t.root().join("d.txt")).unwrap(), "END\n");
}

#[test]
fn read_file_line_numbers_save_memory_content_and_shell_reasoning() {
    let t = TempTree::new();
    t.file("e.txt", "alpha\nbeta\n");
    let o = run(&t, "read_file", json!({"file_path": "e.txt", "enable_line_numbers": true}));
    assert_eq!(o.output(), "     1|alpha\n     2|beta\n");
    let o = run(&t, "read_file", json!({"file_path": "e.txt", "enable_line_numbers": "yes"}));
    assert_eq!(o.error_type.as_deref(), Some("invalid_tool_params"));
    let o = run(&t, "save_memory", json!({"content": "the build uses cargo"}));
    assert!(o.error_type.is_none(), "{}", o.model);
    let o = run(&t, "run_shell_command", json!({"command": "echo hi", "reasoning": "to greet"}));
    assert!(o.output().contains("hi"), "{}", o.model);
}

#[test]
fn read_many_files_older_parameters() {
    let t = TempTree::new();
    t.file("a.txt", "1\n2\n3\n4\n").file("b.txt", "one\ntwo\nthree\n");
    let o = run(
        &t,
        "read_many_files",
        json!({"file_paths": ["a.txt", "b.txt"], "start_line": 2, "end_line": 3, "enable_line_numbers": true}),
    );
    assert!(o.error_type.is_none(), "{}", o.model);
    let text = o.model.to_string();
    assert!(text.contains("a.txt ---\\n\\n     2|2\\n     3|3\\n"), "{text}");
    assert!(text.contains("b.txt ---\\n\\n     2|two\\n     3|three\\n"), "{text}");
    assert!(!text.contains("WARNING: This file was truncated"), "{text}");
    let o = run(
        &t,
        "read_many_files",
        json!({"file_paths": ["a.txt"], "start_line": 3, "end_line": 2}),
    );
    assert_eq!(o.error_type.as_deref(), Some("invalid_tool_params"), "{}", o.model);
}

#[test]
fn write_todos_merge_updates_by_id() {
    let t = TempTree::new();
    // One registry (one session): the tool remembers the last list it wrote.
    let session = super::harness::Session::new(super::harness::env_for(&t, &[]));
    let call = |args: serde_json::Value| {
        let o = session.run("write_todos", args);
        match o.result {
            Some(r) => Ok(format!("{:?}", r.llm_content)),
            None => Err(o.model["error"].as_str().unwrap_or_default().to_string()),
        }
    };
    call(json!({"todos": [
        {"id": "a", "description": "write code", "status": "in_progress"},
        {"id": "b", "description": "test it", "status": "pending"},
    ]}))
    .unwrap();
    let out = call(json!({"merge": true, "todos": [
        {"id": "a", "description": "write code", "status": "completed"},
        {"id": "c", "description": "ship", "status": "pending"},
    ]}))
    .unwrap();
    assert!(
        out.contains("1. [completed] write code\\n2. [pending] test it\\n3. [pending] ship"),
        "{out}"
    );
    // Without merge the list is replaced, as upstream.
    let out = call(json!({"todos": [{"description": "only", "status": "pending"}]})).unwrap();
    assert!(out.contains("now:\\n1. [pending] only"), "{out}");
    let err = call(json!({"todos": [{"description": "x"}]})).unwrap_err();
    assert_eq!(err, "params/todos/0 must have required property 'status'");
}
