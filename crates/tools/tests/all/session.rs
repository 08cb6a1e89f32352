//! write_todos and save_memory: outputs as tools-spec.md gives them, and bad input.

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::{env_for, run, run_in};

#[test]
fn write_todos_lists_the_plan_and_clears_it() {
    let t = TempTree::new();
    let o = run(
        &t,
        "write_todos",
        json!({"todos": [{"description": "Find the theme code", "status": "completed"},
                         {"description": "Add the toggle", "status": "in_progress"},
                         {"description": "Write tests", "status": "pending"}]}),
    );
    assert_eq!(
        o.output(),
        "Successfully updated the todo list. The current list is now:\n1. [completed] Find the theme code\n2. [in_progress] Add the toggle\n3. [pending] Write tests"
    );
    assert_eq!(
        o.display()["todos"][1],
        json!({"description": "Add the toggle", "status": "in_progress"})
    );
    let o = run(&t, "write_todos", json!({"todos": []}));
    assert_eq!(o.output(), "Successfully cleared the todo list.");
}

#[test]
fn write_todos_refuses_bad_lists() {
    let t = TempTree::new();
    let two = json!({"todos": [{"description": "a", "status": "in_progress"}, {"description": "b", "status": "in_progress"}]});
    assert_eq!(
        run(&t, "write_todos", two).error(),
        "Invalid parameters: Only one task can be \"in_progress\" at a time."
    );
    let blank = json!({"todos": [{"description": "  ", "status": "pending"}]});
    assert_eq!(
        run(&t, "write_todos", blank).error(),
        "Each todo must have a non-empty description string"
    );
    let bad = run(&t, "write_todos", json!({"todos": [{"description": "a", "status": "done"}]}));
    assert!(bad.error().contains("status"), "{}", bad.error());
    let extra = run(&t, "write_todos", json!({"todos": [], "more": 1}));
    assert!(extra.error().contains("additional"), "{}", extra.error());
}

#[test]
fn save_memory_adds_to_the_global_section_and_the_project_file() {
    let t = TempTree::new();
    let env = env_for(&t, &[]);
    let global = t.home().join(".gemini/GEMINI.md");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(&global, "# My notes\nUse tabs.").unwrap();
    let o = run_in(&env, "save_memory", json!({"fact": "- I use pnpm\n"}));
    assert_eq!(
        o.output(),
        r#"{"success":true,"message":"Okay, I've remembered that: \"I use pnpm\""}"#
    );
    assert_eq!(o.display(), json!("Okay, I've remembered that: \"I use pnpm\""));
    run_in(&env, "save_memory", json!({"fact": "Tests run with nextest", "scope": "global"}));
    assert_eq!(
        std::fs::read_to_string(&global).unwrap(),
        "# My notes\nUse tabs.\n\n## Gemini Added Memories\n- I use pnpm\n- Tests run with nextest\n"
    );
    run_in(&env, "save_memory", json!({"fact": "This repo pins Rust 1.88", "scope": "project"}));
    let project = env.workspace.temp_dir().join("memory/MEMORY.md");
    assert_eq!(std::fs::read_to_string(project).unwrap(), "- This repo pins Rust 1.88\n");
}

#[test]
fn save_memory_refuses_empty_facts_and_unknown_parameters() {
    let t = TempTree::new();
    assert_eq!(
        run(&t, "save_memory", json!({"fact": " -- "})).error(),
        "Parameter \"fact\" must be a non-empty string."
    );
    let injected = run(&t, "save_memory", json!({"fact": "x", "modified_by_user": true}));
    assert!(injected.error().contains("additional"), "{}", injected.error());
    assert!(!t.home().join(".gemini/GEMINI.md").exists());
}
