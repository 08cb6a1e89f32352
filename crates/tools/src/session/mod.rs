//! Tools about the session itself: the model's todo list, its memory, questions to the user,
//! plan mode, the conversation's topic and agent skills.

pub mod activate_skill;
pub mod ask_user;
pub mod enter_plan_mode;
pub mod exit_plan_mode;
pub mod save_memory;
pub mod skills;
pub mod update_topic;
pub mod write_todos;

/// Where plans are written: `<project>/.gemini/tmp/toolbelt/plans`, inside the workspace and
/// where the plan-mode policy lets write_file and replace save Markdown files.
pub fn plans_dir(env: &toolbelt_core::ToolEnv) -> std::path::PathBuf {
    env.workspace.primary().join(".gemini").join("tmp").join("toolbelt").join("plans")
}

/// In plan mode, the path a tool that writes (write_file, replace) takes `name` for: inside the
/// plans folder, as upstream resolves it (`planUtils.resolveAndValidatePlanPath`): a bare
/// `GEMINI.md` or `README.md` is the plans folder's, never the project's (issue 34: plan mode
/// created `GEMINI.md` and overwrote `README.md` at the root). A path that lands elsewhere is
/// refused with upstream's words.
pub fn plan_path(name: &str, env: &toolbelt_core::ToolEnv) -> Result<String, String> {
    let plans = plans_dir(env);
    exit_plan_mode::resolve(name, env.workspace.primary(), &plans)
        .map(|p| p.to_string_lossy().into_owned())
}
