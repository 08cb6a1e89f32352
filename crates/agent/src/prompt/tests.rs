use super::*;

const ALL_TOOLS: &[&str] = &[
    "read_file",
    "read_many_files",
    "list_directory",
    "glob",
    "grep_search",
    "replace",
    "write_file",
    "run_shell_command",
    "web_fetch",
    "google_web_search",
    "write_todos",
    "save_memory",
    "ask_user",
    "enter_plan_mode",
    "exit_plan_mode",
];

const MODES: [ApprovalMode; 4] =
    [ApprovalMode::Default, ApprovalMode::AutoEdit, ApprovalMode::Yolo, ApprovalMode::Plan];

fn facts(family: ModelFamily, tools: &[&str], interactive: bool) -> PromptFacts {
    PromptFacts {
        family,
        tools: tools.iter().map(|t| t.to_string()).collect(),
        interactive,
        workspace: vec![PathBuf::from("/work/project")],
        git: true,
    }
}

/// Issue 50 E5: every section is there for every mode and model family, the mode's own part
/// is there only in its mode, and no directive reaches the model.
#[test]
fn every_section_is_rendered_for_each_mode_and_model_family() {
    let sections = [
        "# Explore before you edit",
        "# The project's conventions",
        "# Using the tools",
        "# Confirmations and refusals",
        "# Git and version control",
        "# Secrets and safety",
        "# When to ask the person",
        "# How to answer",
    ];
    for family in [ModelFamily::Legacy, ModelFamily::Gemini3] {
        for interactive in [true, false] {
            for mode in MODES {
                let text = SystemPrompt::new(facts(family, ALL_TOOLS, interactive), None, None)
                    .render(mode);
                let at = format!("{family:?} {mode:?} interactive={interactive}");
                for s in sections {
                    assert_eq!(text.matches(&format!("\n{s}\n")).count(), 1, "{s} in {at}");
                }
                assert_eq!(text.contains("# Plan mode (now)"), mode == ApprovalMode::Plan, "{at}");
                assert_eq!(text.contains("# Planning\n"), mode != ApprovalMode::Plan, "{at}");
                assert_eq!(text.contains("deny rules still hold"), mode == ApprovalMode::Yolo);
                assert_eq!(text.contains("No one is watching this run"), !interactive, "{at}");
                assert_eq!(text.contains("`ask_user` puts a question"), interactive, "{at}");
                assert_eq!(
                    text.contains("Think as much as the task needs"),
                    family == ModelFamily::Gemini3
                );
                assert_eq!(
                    text.contains("state the plan in a line"),
                    family == ModelFamily::Legacy
                );
                for leftover in ["@if", "@end", "@comment", "{{", "}}", "\n\n\n"] {
                    assert!(!text.contains(leftover), "{leftover:?} left in {at}");
                }
                assert!(text.contains("- /work/project\n"), "{at}");
                assert!(text.contains(&format!(" on {}", std::env::consts::OS)), "{at}");
                assert!(text.len() > 6_000, "{at}: {} bytes", text.len());
                let today = toolbelt_core::hooks::run::timestamp();
                assert!(text.contains(&format!("Today is {}.", &today[..10])), "{at}");
            }
        }
    }
}

/// A tool's guidance is there when the tool is offered, and only then.
#[test]
fn a_tool_s_guidance_follows_whether_it_is_offered() {
    let guided = [
        ("replace", "`replace` changes a file by exact text"),
        ("write_file", "`write_file` writes a whole file"),
        ("run_shell_command", "`run_shell_command` runs one command line"),
        ("grep_search", "with `grep_search`"),
        ("glob", "with `glob`"),
        ("save_memory", "`save_memory` keeps a fact"),
        ("write_todos", "with `write_todos`"),
    ];
    let all = SystemPrompt::new(facts(ModelFamily::Legacy, ALL_TOOLS, true), None, None)
        .render(ApprovalMode::Default);
    let read_only = SystemPrompt::new(
        facts(ModelFamily::Legacy, &["read_file", "list_directory"], true),
        None,
        None,
    )
    .render(ApprovalMode::Default);
    for (tool, line) in guided {
        assert!(all.contains(line), "{tool}");
        assert!(!read_only.contains(line), "{tool} is not offered");
    }
    let plan = SystemPrompt::new(facts(ModelFamily::Legacy, &["read_file"], true), None, None)
        .render(ApprovalMode::Plan);
    assert!(plan.contains("# Plan mode (now)") && !plan.contains("`exit_plan_mode`"));
}

#[test]
fn skills_and_context_files_come_after_the_prompt() {
    let text = SystemPrompt::new(
        facts(ModelFamily::Legacy, ALL_TOOLS, true),
        Some("# Skills\n\n- tidy".into()),
        Some("--- Context from: GEMINI.md ---\nuse tabs".into()),
    )
    .render(ApprovalMode::Default);
    let (answer, skills, context) = (
        text.find("# How to answer").unwrap(),
        text.find("# Skills").unwrap(),
        text.find("# Context files\n\n--- Context from: GEMINI.md ---\nuse tabs").unwrap(),
    );
    assert!(answer < skills && skills < context);
}

#[test]
fn directives_nest_and_an_unknown_condition_keeps_nothing() {
    let template = "a\n@if mode=plan\nb\n@if tool=x\nc\n@end\nd\n@end\n@if sometimes\ne\n@end\nf";
    let f = facts(ModelFamily::Legacy, &["x"], true);
    assert_eq!(render(template, ApprovalMode::Plan, &f), "a\nb\nc\nd\nf");
    assert_eq!(render(template, ApprovalMode::Default, &f), "a\nf");
    let none = facts(ModelFamily::Legacy, &[], true);
    assert_eq!(render(template, ApprovalMode::Plan, &none), "a\nb\nd\nf");
}

#[test]
fn a_person_s_own_prompt_file_replaces_the_text() {
    let p = Path::new("/p");
    let home = Path::new("/home/me");
    assert_eq!(override_file(None, p, Some(home)), None);
    for off in ["", "false", "0", "FALSE"] {
        assert_eq!(override_file(Some(off), p, Some(home)), None, "{off}");
    }
    for on in ["true", "1", "True"] {
        assert_eq!(override_file(Some(on), p, Some(home)), Some(p.join(".gemini/system.md")));
    }
    assert_eq!(override_file(Some("~/my.md"), p, Some(home)), Some(home.join("my.md")));
    assert_eq!(override_file(Some("/etc/x.md"), p, Some(home)), Some(PathBuf::from("/etc/x.md")));
    let own = SystemPrompt::new(facts(ModelFamily::Legacy, &[], true), None, Some("ctx".into()))
        .with_template("Be a pirate.\n@if mode=plan\nPlan like one.\n@end".into());
    assert_eq!(own.render(ApprovalMode::Default), "Be a pirate.\n\n# Context files\n\nctx");
    assert!(own.render(ApprovalMode::Plan).starts_with("Be a pirate.\nPlan like one."));
}

#[test]
fn the_git_part_follows_whether_the_project_is_a_repository() {
    let mut f = facts(ModelFamily::Legacy, ALL_TOOLS, true);
    let with = SystemPrompt::new(f.clone(), None, None).render(ApprovalMode::Default);
    assert!(with.contains("`--no-verify`") && !with.contains("not a git repository"));
    f.git = false;
    let without = SystemPrompt::new(f, None, None).render(ApprovalMode::Default);
    assert!(without.contains("not a git repository") && !without.contains("`--no-verify`"));
    assert!(without.contains("# Git and version control\n"));
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("repo/.git")).unwrap();
    std::fs::create_dir_all(d.path().join("repo/sub")).unwrap();
    let of = |p: &str| {
        PromptFacts::of_workspace(ModelFamily::Legacy, vec![], true, vec![d.path().join(p)]).git
    };
    assert!(of("repo/sub") && of("repo"));
    assert!(!of("elsewhere"));
}
