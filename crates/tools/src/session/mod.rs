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
