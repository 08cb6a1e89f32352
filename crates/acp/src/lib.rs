//! toolbelt-acp: toolbelt as an Agent Client Protocol agent (`toolbelt acp`). An editor (Zed,
//! a JetBrains IDE, Neovim, Emacs) starts it and talks JSON-RPC over its stdio; each editor
//! session is a toolbelt session (settings, policy, tools, MCP servers) driven by the model
//! loop of `toolbelt run`. The engine knows nothing of ACP: this crate maps what it reports.
//!
//! - [`agent`]: the protocol's table of methods: initialize, sessions, prompts, modes, models
//! - [`commands`]: slash commands (`/help`, `/memory`, `/init`, ...) handled by toolbelt
//! - [`session`]: one editor session: its toolbelt session, conversation, model and turn
//! - [`updates`]: the scheduler's and the loop's events as `session/update` notifications
//! - [`permission`]: policy's "ask" as `session/request_permission`
//! - [`files`]: the editor's `fs/*` as the tools' view of open files
//! - [`prompt`]: the editor's content blocks as the model's parts, and a conversation replayed
//! - [`store`]: conversations kept for `session/load`

use std::path::PathBuf;
use std::sync::Arc;

use toolbelt_agent::client::ModelClient;
use toolbelt_core::policy::ApprovalMode;

pub mod agent;
pub mod commands;
pub mod files;
pub mod permission;
pub mod prompt;
pub mod session;
pub mod store;
pub mod updates;
pub mod wire;

pub use agent::serve;

/// Why no model client could be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// Credentials are missing or unusable: one sentence saying what and how to set them.
    Auth(String),
    /// The model or its settings are refused (an unknown model name).
    Refused(String),
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unavailable::Auth(s) | Unavailable::Refused(s) => f.write_str(s),
        }
    }
}

/// The models an editor session may use.
pub trait Models: Send + Sync {
    /// The model sessions start with (as a person names it: `auto`, an alias, a model).
    fn default_model(&self) -> String;
    /// The models an editor may switch to (a session adds the one it uses when missing).
    fn choices(&self) -> Vec<toolbelt_agent::models::ModelChoice>;
    /// A client for `model`, or why none can be made.
    fn client(&self, model: &str) -> Result<Arc<dyn ModelClient>, Unavailable>;
    /// Whether the models are Gemini's API (web search and URL context for the web tools).
    fn grounding(&self) -> bool;
    /// How a person gives credentials: `(id, name, description)` for each way.
    fn auth_methods(&self) -> Vec<(String, String, String)>;
    /// Signs in with method `id` for the sessions that follow; `Err` says what is missing.
    fn authenticate(&self, id: &str) -> Result<(), Unavailable>;
}

/// What `toolbelt acp` was started with.
pub struct AcpOptions {
    /// The model clients.
    pub models: Arc<dyn Models>,
    /// Policy files loaded at the user tier (`--policy`).
    pub policy_paths: Vec<PathBuf>,
    /// The mode sessions start in (`--approval-mode`; else the settings').
    pub approval_mode: Option<ApprovalMode>,
    /// Commands run in the sandbox (`--sandbox`).
    pub sandbox: bool,
    /// Model calls allowed in one prompt's turn (`None`: upstream's 100).
    pub max_turns: Option<u32>,
    /// Where conversations are kept for `session/load` (`<state>/acp-sessions`).
    pub store_dir: PathBuf,
}
