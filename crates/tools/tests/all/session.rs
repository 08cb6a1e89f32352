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

fn plan_ctx(
    mode: toolbelt_core::policy::ApprovalMode,
) -> (toolbelt_core::tool::ExecContext, toolbelt_core::tool::ModeHandle) {
    plan_ctx_for(mode, false)
}

fn plan_ctx_for(
    mode: toolbelt_core::policy::ApprovalMode,
    yolo_disabled: bool,
) -> (toolbelt_core::tool::ExecContext, toolbelt_core::tool::ModeHandle) {
    let handle = std::sync::Arc::new(toolbelt_core::mode::SessionMode::new(mode, yolo_disabled));
    let mut ctx =
        toolbelt_core::tool::ExecContext::new("p", tokio_util::sync::CancellationToken::new());
    ctx.mode = Some(handle.clone());
    (ctx, handle)
}

fn run_plan_tool(
    tool: &dyn toolbelt_core::Tool,
    env: &toolbelt_core::ToolEnv,
    args: serde_json::Value,
    ctx: toolbelt_core::tool::ExecContext,
) -> Result<toolbelt_core::ToolResult, String> {
    let inv = tool.build(args, env)?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    Ok(rt.block_on(inv.execute(ctx)))
}

#[test]
fn plan_mode_enter_then_approve_with_feedback_or_a_mode() {
    use std::sync::Arc;
    use toolbelt_core::policy::ApprovalMode;
    use toolbelt_tools::session::enter_plan_mode::EnterPlanMode;
    use toolbelt_tools::session::exit_plan_mode::ExitPlanMode;
    let t = TempTree::new();
    let env = env_for(&t, &[]);
    let (ctx, mode) = plan_ctx(ApprovalMode::Default);
    let r = run_plan_tool(&EnterPlanMode, &env, json!({"reason": "risky"}), ctx).unwrap();
    assert_eq!(
        (r.return_display.clone(), mode.get()),
        (json!("Switching to Plan mode: risky"), ApprovalMode::Plan)
    );
    let plans = toolbelt_tools::session::plans_dir(&env);
    assert!(plans.is_dir());

    let exit = |answer: Option<&str>| {
        ExitPlanMode::new(Some(Arc::new(Answering(
            answer.map(|a| json!({"0": a}).as_object().unwrap().clone()),
        ))))
    };
    let (ctx, _) = plan_ctx(ApprovalMode::Plan);
    let r =
        run_plan_tool(&exit(Some("Approve")), &env, json!({"plan_filename": "p.md"}), ctx).unwrap();
    assert_eq!(r.llm_content, toolbelt_core::Content::Text("Plan file does not exist: p.md. You must create the plan file before requesting approval.".into()));
    assert_eq!(r.return_display, json!("Error: Invalid plan"));
    std::fs::write(plans.join("p.md"), "\u{feff}  \n").unwrap();
    let (ctx, _) = plan_ctx(ApprovalMode::Plan);
    let r =
        run_plan_tool(&exit(Some("Approve")), &env, json!({"plan_filename": "p.md"}), ctx).unwrap();
    assert!(format!("{:?}", r.llm_content).contains("Plan file is empty."));
    std::fs::write(plans.join("p.md"), "# Plan\n").unwrap();
    let (ctx, mode) = plan_ctx(ApprovalMode::Plan);
    let r = run_plan_tool(
        &exit(Some("Approve, auto-edit")),
        &env,
        json!({"plan_filename": "p.md"}),
        ctx,
    )
    .unwrap();
    assert!(format!("{:?}", r.llm_content).contains(
        "Plan approved. Switching to Auto-Edit mode (edits will be applied automatically)."
    ));
    assert_eq!(mode.get(), ApprovalMode::AutoEdit);
    let (ctx, mode) = plan_ctx(ApprovalMode::Plan);
    let r =
        run_plan_tool(&exit(Some("add tests first")), &env, json!({"plan_filename": "p.md"}), ctx)
            .unwrap();
    assert_eq!(r.return_display, json!("Feedback: add tests first"));
    assert_eq!(mode.get(), ApprovalMode::Plan, "a rejected plan stays in Plan Mode");
    let (ctx, _) = plan_ctx(ApprovalMode::Plan);
    let r = run_plan_tool(&exit(None), &env, json!({"plan_filename": "p.md"}), ctx).unwrap();
    assert_eq!(r.return_display, json!("Cancelled"));
    // Issue 34, finding 1: headless (nobody to ask), the plan is approved and the session goes
    // back to the mode it was started in: never YOLO, as upstream switches to.
    for start in [ApprovalMode::Default, ApprovalMode::AutoEdit] {
        let (ctx, mode) = plan_ctx(start);
        mode.set_by_model(ApprovalMode::Plan);
        let r =
            run_plan_tool(&ExitPlanMode::new(None), &env, json!({"plan_filename": "p.md"}), ctx)
                .unwrap();
        assert_eq!(mode.get(), start, "{:?}", r.llm_content);
        assert!(!format!("{:?}", r.llm_content).contains("YOLO"), "{:?}", r.llm_content);
    }
    // With yolo disabled, a person's "YOLO" is not honoured either.
    let (ctx, mode) = plan_ctx_for(ApprovalMode::Default, true);
    mode.set_by_model(ApprovalMode::Plan);
    let r =
        run_plan_tool(&exit(Some("Approve, YOLO")), &env, json!({"plan_filename": "p.md"}), ctx)
            .unwrap();
    assert_ne!(mode.get(), ApprovalMode::Yolo, "{:?}", r.llm_content);
    // Paths that leave the plans folder are refused.
    let err = run_plan_tool(
        &exit(None),
        &env,
        json!({"plan_filename": "../../../../README.md"}),
        plan_ctx(ApprovalMode::Plan).0,
    )
    .err()
    .unwrap();
    assert!(err.starts_with("Access denied: plan path (../../../../README.md) must be within the designated plans directory"), "{err}");
    assert_eq!(
        run_plan_tool(
            &exit(None),
            &env,
            json!({"plan_filename": " "}),
            plan_ctx(ApprovalMode::Plan).0
        )
        .err()
        .unwrap(),
        "plan_filename is required."
    );
}
