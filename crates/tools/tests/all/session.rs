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

struct Answering(Option<serde_json::Map<String, serde_json::Value>>);

#[async_trait::async_trait]
impl toolbelt_core::approver::Questioner for Answering {
    async fn ask(
        &self,
        _q: &[serde_json::Value],
        _c: &tokio_util::sync::CancellationToken,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.0.clone()
    }
}

/// Runs ask_user through a scheduler whose policy says "ask" interactively and whose
/// approver would refuse: the questions themselves are the confirmation.
fn ask(
    answers: Option<serde_json::Value>,
    args: serde_json::Value,
) -> toolbelt_core::CompletedCall {
    use std::sync::Arc;
    use toolbelt_core::approver::{FixedApprover, Outcome};
    use toolbelt_core::policy::{Decision, PolicyEngine, Rule};
    let t = TempTree::new();
    let env = env_for(&t, &[]);
    let services = toolbelt_tools::Services {
        questioner: Some(Arc::new(Answering(answers.map(|a| a.as_object().unwrap().clone())))),
        ..Default::default()
    };
    let registry = Arc::new(
        toolbelt_core::Registry::builder()
            .tools(toolbelt_tools::builtin_tools_with(&services))
            .build()
            .unwrap(),
    );
    let policy =
        Arc::new(PolicyEngine::new(vec![Rule::new("ask_user", Decision::AskUser, 1.0, "t")], true));
    let s = toolbelt_core::Scheduler::new(
        registry,
        policy,
        Arc::new(FixedApprover(Outcome::Cancel)),
        env,
        Default::default(),
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let req = toolbelt_core::CallRequest::new("q1", "ask_user", args);
    rt.block_on(s.schedule(vec![req], tokio_util::sync::CancellationToken::new())).remove(0)
}

fn questions() -> serde_json::Value {
    json!({"questions": [
        {"question": "Which\\nlibrary?", "header": "Library", "type": "choice",
         "options": [{"label": "serde", "description": " the usual "}, {"label": "miniserde", "description": "small"}]},
        {"question": "Proceed?", "header": "Go", "type": "yesno"}]})
}

#[test]
fn ask_user_answers_go_back_as_json_and_are_shown_per_header() {
    let done = ask(Some(json!({"0": "serde", "1": "Yes\nbut carefully"})), questions());
    assert_eq!(
        done.response.response_value(),
        json!({"output": "{\"answers\":{\"0\":\"serde\",\"1\":\"Yes\\nbut carefully\"}}"})
    );
    let r = done.result.unwrap();
    assert_eq!(
        r.return_display,
        json!("**User answered:**\n  Library → serde\n  Go → Yes\n       but carefully")
    );
    assert_eq!(r.data.unwrap()["ask_user"]["answer_count"], 2);
    let dismissed = ask(None, questions());
    assert_eq!(
        dismissed.response.response_value(),
        json!({"output": "User dismissed ask_user dialog without answering."})
    );
    let empty = ask(Some(json!({})), questions());
    assert_eq!(
        empty.result.unwrap().return_display,
        json!("User submitted without answering questions.")
    );
}

#[test]
fn ask_user_checks_its_questions() {
    let one_option = json!({"questions": [{"question": "Q?", "header": "H", "type": "choice", "options": [{"label": "a", "description": "x"}]}]});
    assert_eq!(
        run(&TempTree::new(), "ask_user", one_option).error(),
        "Question 1: type='choice' requires 'options' array with 2-4 items."
    );
    let blank = json!({"questions": [{"question": "Q?", "header": "H", "type": "choice", "options": [{"label": "a", "description": "x"}, {"label": " ", "description": "y"}]}]});
    assert_eq!(
        run(&TempTree::new(), "ask_user", blank).error(),
        "Question 1, option 2: 'label' is required and must be a non-empty string."
    );
    let none = run(&TempTree::new(), "ask_user", json!({"questions": []}));
    assert!(
        none.error().contains("fewer than 1") || none.error().contains("At least one"),
        "{}",
        none.error()
    );
}
