use toolbelt_test_support::TempTree;

use crate::toolbelt;

#[test]
fn tools_list_names_every_builtin_tool() {
    let t = TempTree::new();
    let r = toolbelt(&t, &["tools", "list", "--json"], None);
    assert_eq!(r.code, 0);
    let names: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "update_topic",
            "list_directory",
            "read_file",
            "grep_search",
            "glob",
            "replace",
            "write_file",
            "write_todos",
            "save_memory",
            "ask_user",
            "enter_plan_mode",
            "exit_plan_mode",
            "web_fetch",
            "run_shell_command",
            "list_background_processes",
            "read_background_output",
            "read_many_files"
        ]
    );
    let r = toolbelt(&t, &["tools", "list"], None);
    assert!(r.stdout.contains("read_file") && r.stdout.contains("ReadFile"));
}

#[test]
fn tools_schema_prints_declarations_per_family() {
    let t = TempTree::new();
    let r = toolbelt(&t, &["tools", "schema"], None);
    assert_eq!(r.code, 0);
    let shown = r.json();
    let names: Vec<&str> =
        shown.as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    // Headless default mode: tools that policy denies outright are not shown to the model.
    assert_eq!(
        names,
        [
            "update_topic",
            "list_directory",
            "read_file",
            "grep_search",
            "glob",
            "enter_plan_mode",
            "read_many_files"
        ]
    );
    let everything = toolbelt(&t, &["tools", "schema", "--all"], None).json();
    assert_eq!(everything.as_array().unwrap().len(), 17);
    // Interactive default mode: everything but exit_plan_mode (not in Plan Mode).
    let interactive = toolbelt(&t, &["tools", "schema", "--interactive"], None).json();
    assert_eq!(interactive.as_array().unwrap().len(), 16);
    // Headless yolo allows everything but ask_user, which nobody could answer.
    let yolo = toolbelt(&t, &["tools", "schema", "--approval-mode", "yolo"], None).json();
    let names: Vec<&str> =
        yolo.as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 16);
    assert!(!names.contains(&"ask_user"));
    let all = everything;
    assert!(all[0]["parametersJsonSchema"]["properties"].is_object());
    let legacy = toolbelt(&t, &["tools", "schema", "read_file"], None).json();
    let g3 =
        toolbelt(&t, &["tools", "schema", "read_file", "--model-family", "gemini-3"], None).json();
    assert_eq!(legacy["name"], "read_file");
    assert_ne!(legacy["description"], g3["description"]);
    assert_eq!(legacy["parametersJsonSchema"], g3["parametersJsonSchema"]);
    let r = toolbelt(&t, &["tools", "schema", "nope"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("Tool \"nope\" not found."));
}
