//! [`Session`]: what [`crate::SessionBuilder`] assembled, with the changes a live front end
//! makes (roots added or replaced) and the end of the session.

use std::path::PathBuf;
use std::sync::Arc;

use toolbelt_core::config::Config;
use toolbelt_core::hooks::{CommandHooks, ToolHooks};
use toolbelt_core::policy::{ApprovalMode, PolicyEngine};
use toolbelt_core::settings::ToolSettings;
use toolbelt_core::{ModelFamily, Registry, Scheduler, ToolEnv, Workspace};

use crate::SessionError;

/// A built session: its settings, policy, tools and a ready scheduler.
pub struct Session {
    /// The session's id (hooks get it as `session_id`; `toolbelt run` reports it).
    pub id: String,
    /// The merged settings (defaults < files < environment < the front end's overrides).
    pub config: Config,
    /// What the settings files say about tools, policy, hooks and MCP servers.
    pub tool_settings: ToolSettings,
    /// The first root, absolute: where project settings and policies came from.
    pub root: PathBuf,
    /// Every root of the workspace, the first where relative paths start.
    pub roots: Vec<PathBuf>,
    /// Whether the first root is a trusted folder.
    pub trusted: bool,
    /// The session's policy engine (shared with the scheduler: session rules added by "always
    /// allow" answers show here too).
    pub policy: Arc<PolicyEngine>,
    /// Built-in, discovered and (when asked for) MCP tools.
    pub registry: Arc<Registry>,
    /// What the built-in tools share: the model, the questioner, background processes.
    pub services: toolbelt_tools::Services,
    /// The settings' hooks, if any.
    pub hooks: Option<Arc<CommandHooks>>,
    /// The approval mode the session started in (plan-mode tools change the scheduler's).
    pub mode: ApprovalMode,
    /// `security.disableYoloMode` (or `admin.secureModeEnabled`): no one switches to yolo.
    pub yolo_disabled: bool,
    /// Whether a person can answer questions.
    pub interactive: bool,
    /// The declarations and response shape the scheduler uses.
    pub family: ModelFamily,
    /// The configured MCP servers, when the builder was asked to connect them.
    pub mcp: Option<toolbelt_mcp::client::McpClients>,
    /// What could not be used but did not stop the session, for the front end to show.
    pub notices: Vec<String>,
    pub(crate) scheduler: Arc<Scheduler>,
}

impl Session {
    /// The session's scheduler: every call of every front end goes through it.
    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    /// The tool environment calls are built with now.
    pub fn env(&self) -> ToolEnv {
        self.scheduler.env()
    }

    /// Replaces the workspace roots of the live session (an MCP client's roots, a skill's
    /// folder): calls built from now on see the new workspace. Settings and policies stay those
    /// of the first root the session was built with; another project wants a new session.
    pub fn set_roots(&mut self, roots: Vec<PathBuf>) -> Result<(), SessionError> {
        if roots.is_empty() {
            return Err(SessionError::NoRoots);
        }
        let workspace = Workspace::new(&roots, &self.config)?;
        self.scheduler.set_workspace(workspace);
        self.roots = roots;
        Ok(())
    }

    /// Adds one root to the live session's workspace.
    pub fn add_root(&mut self, root: PathBuf) -> Result<(), SessionError> {
        let mut roots = self.roots.clone();
        if !roots.contains(&root) {
            roots.push(root);
        }
        self.set_roots(roots)
    }

    /// Names of the tools policy denies outright in `mode`, plus `tools.exclude`: they are left
    /// out of what the model is shown.
    pub fn excluded_tools(&self, mode: ApprovalMode) -> std::collections::HashSet<String> {
        excluded_tools(&self.policy, &self.registry, mode, &self.tool_settings.exclude)
    }

    /// The parts an MCP server needs to serve this session's tools (each connection builds
    /// its own scheduler from them).
    pub fn server_parts(&self) -> toolbelt_mcp::server::ServerParts {
        toolbelt_mcp::server::ServerParts {
            registry: self.registry.clone(),
            rules: self.policy.rules(),
            workspace: self.root.clone(),
            trusted: self.trusted,
            env: self.env(),
            hooks: self.hooks.clone().map(|h| h as Arc<dyn ToolHooks>),
            mode: self.mode,
            yolo_disabled: self.yolo_disabled,
            family: self.family,
            excluded: self
                .tool_settings
                .exclude
                .iter()
                .filter(|e| !e.contains('('))
                .cloned()
                .collect(),
            client_roots: true,
            root_refused: None,
            trust: Some({
                let state = self.config.home_dir.clone();
                let home = toolbelt_core::files::user_home();
                Arc::new(move |dir: &std::path::Path| {
                    crate::settings::root_trusted(&state, home.as_deref(), dir)
                })
            }),
        }
    }

    /// Ends the session: processes it started are stopped (unless kept; SIGTERM, then SIGKILL
    /// after the configured grace) and MCP servers are closed.
    pub async fn shutdown(&self) {
        self.services
            .shutdown(std::time::Duration::from_millis(self.config.shell_kill_grace_ms))
            .await;
        if let Some(m) = &self.mcp {
            m.shutdown().await;
        }
    }
}

/// Names of the tools that `policy` denies outright in `mode`, plus `exclude` (tools.exclude).
pub fn excluded_tools(
    policy: &PolicyEngine,
    registry: &Registry,
    mode: ApprovalMode,
    exclude: &[String],
) -> std::collections::HashSet<String> {
    registry.hidden_tools(policy, mode, exclude)
}
