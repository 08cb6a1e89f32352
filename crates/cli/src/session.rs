//! Turns command-line options into the engine's pieces, in layers: defaults < settings files
//! (user, then project; project keys that run commands only in trusted folders) < environment
//! < flags; policies from every tier plus settings-derived rules; hooks; discovered tools.
//! Building a [`Session`] again is how settings are reloaded.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use toolbelt_core::approver::Approver;
use toolbelt_core::config::Config;
use toolbelt_core::hooks::{CommandHooks, HookContext};
use toolbelt_core::policy::sources::{load_sources, settings_rules, standard_sources, ToolFacts};
use toolbelt_core::policy::{toml::load_path, ApprovalMode, PolicyEngine, Tier};
use toolbelt_core::settings::{candidate_files, Settings, ToolSettings};
use toolbelt_core::{ModelFamily, Registry, Scheduler, SchedulerOptions, Tool, ToolEnv, Workspace};

use crate::cli::{Family, Mode, SessionArgs};
use crate::output::warn;

pub fn mode(m: Mode) -> ApprovalMode {
    match m {
        Mode::Default => ApprovalMode::Default,
        Mode::AutoEdit => ApprovalMode::AutoEdit,
        Mode::Yolo => ApprovalMode::Yolo,
        Mode::Plan => ApprovalMode::Plan,
    }
}

pub fn family(f: Family) -> ModelFamily {
    match f {
        Family::Legacy => ModelFamily::Legacy,
        Family::Gemini3 => ModelFamily::Gemini3,
    }
}

/// Interactive when a person is at the terminal, unless a flag says otherwise.
pub fn interactive(args: &SessionArgs) -> bool {
    if args.non_interactive {
        return false;
    }
    args.interactive || std::io::stdin().is_terminal()
}

/// The first root (default: the current folder), made absolute.
pub fn primary_root(roots: &[PathBuf]) -> anyhow::Result<PathBuf> {
    let root = match roots.first() {
        Some(r) => r.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(std::fs::canonicalize(&root).unwrap_or(root))
}

/// Whether folder trust is checked: on unless the *user* settings turn it off (a project
/// cannot switch off its own check).
fn trust_checking(settings_of_user: &Settings) -> bool {
    settings_of_user
        .get("security.folderTrust.enabled")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true)
}

/// Settings and trust for a root: the files (each read once), and whether the folder is
/// trusted.
pub fn load_settings(home: &Path, root: &Path) -> anyhow::Result<(Settings, bool)> {
    let mut files = Vec::new();
    for (scope, path) in
        candidate_files(home, toolbelt_core::files::user_home().as_deref(), Some(root))
    {
        if let Some(f) = toolbelt_core::settings::load_file(&path, scope)? {
            files.push(f);
        }
    }
    let user: Vec<_> = files.iter().filter(|f| !f.scope.is_project()).cloned().collect();
    let checking = trust_checking(&Settings::from_files(user, true));
    let trusted = toolbelt_core::trust::is_trusted(home, root, checking)?;
    Ok((Settings::from_files(files, trusted), trusted))
}

/// Everything a command needs to run calls.
pub struct Session {
    pub config: Config,
    pub tool_settings: ToolSettings,
    pub root: PathBuf,
    pub trusted: bool,
    pub policy: Arc<PolicyEngine>,
    pub registry: Arc<Registry>,
    pub services: toolbelt_tools::Services,
    pub hooks: Option<Arc<CommandHooks>>,
    pub mode: ApprovalMode,
    pub interactive: bool,
    /// The configured MCP servers, once connected ([`Session::connect_mcp`]).
    pub mcp: Option<toolbelt_mcp::client::McpClients>,
}

impl Session {
    /// Builds a session. `flags` applies command-line overrides to the config last.
    pub async fn build(
        args: &SessionArgs,
        flags: impl FnOnce(&mut Config),
    ) -> anyhow::Result<Session> {
        Self::build_with_model(args, flags, None).await
    }

    /// As [`Session::build`], with the session's model for the tools that ask one.
    pub async fn build_with_model(
        args: &SessionArgs,
        flags: impl FnOnce(&mut Config),
        model: Option<Arc<dyn toolbelt_core::model::ModelAccess>>,
    ) -> anyhow::Result<Session> {
        let mut config = Config::default();
        let root = primary_root(&args.roots)?;
        let (settings, trusted) = load_settings(&config.home_dir, &root)?;
        if let Some(notice) = settings.skipped_notice() {
            warn(&notice);
        }
        settings.apply_to(&mut config);
        config.apply_env()?;
        flags(&mut config);
        let tool_settings = settings.tools();
        let interactive = interactive(args);
        let mode = match (args.approval_mode, tool_settings.default_approval_mode.as_deref()) {
            (Some(m), _) => mode(m),
            (None, Some(m)) => ApprovalMode::parse(m).unwrap_or(ApprovalMode::Default),
            (None, None) => ApprovalMode::Default,
        };

        let sources = standard_sources(
            &config.home_dir,
            toolbelt_core::files::user_home().as_deref(),
            Some(&root),
            trusted,
        );
        let mut loaded = load_sources(&sources);
        for p in &args.policies {
            if !p.exists() {
                warn(&format!("policy path {} does not exist", p.display()));
            }
            loaded.extend(load_path(p, Tier::User));
        }
        for e in &loaded.errors {
            warn(&format!("policy file skipped in part: {e}"));
        }
        let mut rules = loaded.rules;
        rules.extend(settings_rules(&tool_settings, interactive));
        let policy = Arc::new(
            PolicyEngine::new(rules, interactive)
                .with_workspace(&root)
                .with_trusted_folder(trusted),
        );

        let services = toolbelt_tools::Services {
            model,
            web_fetch_direct: config.web_fetch_direct,
            custom_search: config.google_api_key.is_some() && config.google_cse_id.is_some(),
            questioner: interactive.then(|| {
                Arc::new(crate::questions::TerminalQuestioner)
                    as Arc<dyn toolbelt_core::approver::Questioner>
            }),
            ..toolbelt_tools::Services::default()
        };
        let mut tools: Vec<Arc<dyn Tool>> = toolbelt_tools::builtin_tools_with(&services);
        if let Some(cmd) = &tool_settings.discovery_command {
            let cfg = toolbelt_tools::discovered::DiscoveryConfig {
                discovery_command: cmd.clone(),
                call_command: tool_settings.call_command.clone(),
                cwd: root.clone(),
                discovery_timeout_ms: tool_settings.discovery_timeout_ms,
            };
            match toolbelt_tools::discovered::discover(&cfg).await {
                Ok(found) => {
                    for t in &found {
                        // Discovered calls get `tools.callTimeoutMs` when set, else the
                        // engine's tool-call deadline (upstream: none).
                        if let Some(ms) = tool_settings.call_timeout_ms {
                            config.tool_timeouts_ms.insert(t.name().to_string(), ms);
                        }
                    }
                    tools.extend(found.into_iter().map(|t| t as Arc<dyn Tool>));
                }
                Err(e) => warn(&format!("no discovered tools: {e}")),
            }
        }
        let registry = Arc::new(Registry::builder().tools(tools).build()?);
        let hooks = (!tool_settings.hooks.events.is_empty()).then(|| {
            CommandHooks::new(
                tool_settings.hooks.clone(),
                HookContext {
                    project_dir: root.clone(),
                    session_id: session_id(),
                    transcript_path: String::new(),
                },
            )
        });
        Ok(Session {
            config,
            tool_settings,
            root,
            trusted,
            policy,
            registry,
            services,
            hooks,
            mode,
            interactive,
            mcp: None,
        })
    }

    /// Connects the configured MCP servers (in parallel; the slow and the broken are reported
    /// on stderr) and adds their tools to the registry. Servers in `mcp.excluded`, or missing
    /// from a non-empty `mcp.allowed`, are not started.
    pub async fn connect_mcp(&mut self) -> anyhow::Result<()> {
        use toolbelt_mcp::client::{connect_all, spec, ServerState, DEFAULT_CONNECT_TIMEOUT_MS};
        let t = &self.tool_settings;
        if t.mcp_servers.is_empty() {
            return Ok(());
        }
        let specs = t
            .mcp_servers
            .iter()
            .filter(|s| !t.mcp_excluded.iter().any(|e| e == &s.name || e == "*"))
            .filter(|s| t.mcp_allowed.is_empty() || t.mcp_allowed.contains(&s.name))
            .map(|s| spec(s).map_err(|e| (s.name.clone(), e)))
            .collect();
        let clients = connect_all(
            specs,
            &self.root,
            std::time::Duration::from_millis(DEFAULT_CONNECT_TIMEOUT_MS),
        )
        .await;
        for (name, state) in &clients.servers {
            match state {
                ServerState::Failed(why) => {
                    warn(&format!("MCP server '{name}' is unavailable: {why}"))
                }
                ServerState::Connected { dropped, .. } => {
                    for (tool, why) in dropped {
                        warn(&format!("MCP server '{name}': tool '{tool}' left out: {why}"));
                    }
                }
            }
        }
        let mut tools: Vec<Arc<dyn Tool>> = self.registry.tools().cloned().collect();
        for t in &clients.tools {
            // MCP calls have their own timeout, extended by progress.
            self.config.tool_timeouts_ms.insert(t.name().to_string(), 0);
            tools.push(t.clone() as Arc<dyn Tool>);
        }
        self.registry = Arc::new(Registry::builder().tools(tools).build()?);
        self.mcp = Some(clients);
        Ok(())
    }

    /// The tool environment over the given roots (the primary root first).
    pub fn env(&self, roots: &[PathBuf]) -> anyhow::Result<ToolEnv> {
        let roots = if roots.is_empty() { vec![self.root.clone()] } else { roots.to_vec() };
        let workspace = Workspace::new(&roots, &self.config)?;
        Ok(ToolEnv::new(workspace, self.config.clone()))
    }

    /// The session's scheduler over `env`: its registry, policy, mode and hooks, with the
    /// terminal approver.
    pub fn scheduler(&self, env: ToolEnv, family: ModelFamily) -> Scheduler {
        let options = SchedulerOptions { family, mode: self.mode, ..SchedulerOptions::default() };
        let approver: Arc<dyn Approver> = Arc::new(crate::approver::TerminalApprover);
        let scheduler =
            Scheduler::new(self.registry.clone(), self.policy.clone(), approver, env, options);
        match &self.hooks {
            Some(h) => scheduler.with_hooks(h.clone()),
            None => scheduler,
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

    /// Names of the tools policy denies outright in this session's mode: they are left out of
    /// what the model is shown.
    pub fn excluded_tools(&self) -> Vec<String> {
        excluded_tools(&self.policy, &self.registry, self.mode, &self.tool_settings.exclude)
    }
}

/// Names of the tools that `policy` denies outright in `mode`, plus `exclude` (tools.exclude).
pub fn excluded_tools(
    policy: &PolicyEngine,
    registry: &Registry,
    mode: ApprovalMode,
    exclude: &[String],
) -> Vec<String> {
    let facts = registry.tools().map(|t| ToolFacts {
        name: t.name(),
        server_name: t.server_name(),
        annotations: t.annotations(),
    });
    let mut out = policy.excluded_tools(facts, mode);
    for e in exclude {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}

fn session_id() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("toolbelt-{}-{ms}", std::process::id())
}
