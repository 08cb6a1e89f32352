//! toolbelt-tools: the built-in tools, one file per tool, and the tools a discovery command
//! declares. Each tool describes itself to the engine (kind, schema, what an approval covers);
//! the engine knows none of them by name.
//!
//! - [`fs`]: `read_file`, `list_directory`, `read_many_files`
//! - [`search`]: `grep_search`, `glob`
//! - [`edit`]: `replace`, `write_file`
//! - `shell` (Unix only): `run_shell_command`, `list_background_processes`,
//!   `read_background_output`; elsewhere a `run_shell_command` that explains it cannot run
//! - [`web`]: `web_fetch`, `google_web_search`
//! - [`session`]: `update_topic`, `activate_skill`, `write_todos`, `save_memory`,
//!   `ask_user`, `enter_plan_mode`, `exit_plan_mode`
//! - [`discovered`]: tools declared by `tools.discoveryCommand`, run by `tools.callCommand`
//! - [`collate`]: the sort order upstream's listings use
//! - [`builtin_tools_with`]: the whole set for one session, sharing [`Services`]

pub mod collate;
pub mod discovered;
pub mod edit;
pub mod fs;
pub mod parallel;
pub mod search;
pub mod session;
#[cfg(unix)]
pub mod shell;
#[cfg(not(unix))]
pub mod shell_unsupported;
pub mod web;

use std::sync::Arc;

use toolbelt_core::Tool;

/// Every built-in tool, in upstream's registration order, with a background-process registry
/// of their own (see [`builtin_tools_with`] to keep a handle on it).
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    builtin_tools_with(&Services::default())
}

/// What the built-in tools of one session share.
#[derive(Clone, Default)]
pub struct Services {
    /// The session's model, for web_fetch and google_web_search.
    pub model: Option<Arc<dyn toolbelt_core::model::ModelAccess>>,
    /// web_fetch in direct mode (one `url`, the page as it is).
    pub web_fetch_direct: bool,
    /// Google Custom Search credentials are configured (google_web_search takes `num_results`).
    pub custom_search: bool,
    /// Who answers ask_user's questions (the terminal); none: nobody can.
    pub questioner: Option<Arc<dyn toolbelt_core::approver::Questioner>>,
    /// The agent skills found for the session; `activate_skill` is offered when there is one.
    pub skills: Arc<Vec<session::skills::Skill>>,
    /// Background shell processes; stop them with `shutdown` when the session ends.
    #[cfg(unix)]
    pub background: Arc<shell::BackgroundRegistry>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("model", &self.model.is_some())
            .field("web_fetch_direct", &self.web_fetch_direct)
            .field("custom_search", &self.custom_search)
            .field("questioner", &self.questioner.is_some())
            .field("skills", &self.skills.len())
            .finish_non_exhaustive()
    }
}

impl Services {
    /// Leaves background processes running when the session ends.
    pub fn keep_background(&self, keep: bool) {
        #[cfg(unix)]
        self.background.keep_on_exit(keep);
        #[cfg(not(unix))]
        let _ = keep;
    }

    /// Ends the session: stops every process it started (unless kept), SIGTERM then SIGKILL
    /// after `grace`.
    pub async fn shutdown(&self, grace: std::time::Duration) {
        #[cfg(unix)]
        self.background.shutdown(grace).await;
        #[cfg(not(unix))]
        let _ = grace;
    }
}

/// Every built-in tool, sharing `services`.
pub fn builtin_tools_with(services: &Services) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(session::update_topic::UpdateTopic::default()),
        Arc::new(fs::list_directory::ListDirectory),
        Arc::new(fs::read_file::ReadFile),
        Arc::new(search::grep_search::GrepSearch),
        Arc::new(search::glob::Glob),
    ];
    if !services.skills.is_empty() {
        tools.push(Arc::new(session::activate_skill::ActivateSkill::new(services.skills.clone())));
    }
    tools.extend::<[Arc<dyn Tool>; _]>([
        Arc::new(edit::replace::Replace),
        Arc::new(edit::write_file::WriteFile),
        Arc::new(session::write_todos::WriteTodos::default()),
        Arc::new(session::save_memory::SaveMemory),
        Arc::new(session::ask_user::AskUser::new(services.questioner.clone())),
        Arc::new(session::enter_plan_mode::EnterPlanMode),
        Arc::new(session::exit_plan_mode::ExitPlanMode::new(services.questioner.clone())),
        Arc::new(web::web_fetch::WebFetch::new(services.model.clone(), services.web_fetch_direct)),
    ]);
    // Searching needs the model's search grounding or Custom Search credentials; without
    // either the tool is not offered.
    if services.custom_search || services.model.as_ref().is_some_and(|m| m.supports_grounding()) {
        tools.push(Arc::new(web::google_web_search::GoogleWebSearch::new(
            services.model.clone(),
            services.custom_search,
        )));
    }
    #[cfg(unix)]
    {
        let bg = &services.background;
        tools.push(Arc::new(shell::run_shell_command::RunShellCommand::new(bg.clone())));
        tools.push(Arc::new(shell::list_background_processes::ListBackgroundProcesses::new(
            bg.clone(),
        )));
        tools.push(Arc::new(shell::read_background_output::ReadBackgroundOutput::new(bg.clone())));
        tools.push(Arc::new(fs::read_many_files::ReadManyFiles));
    }
    #[cfg(not(unix))]
    {
        let _ = services;
        tools.push(Arc::new(shell_unsupported::UnsupportedShell));
        tools.push(Arc::new(fs::read_many_files::ReadManyFiles));
    }
    tools
}
