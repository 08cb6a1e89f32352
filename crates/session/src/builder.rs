//! [`SessionBuilder`]: everything a front end knows (roots, policy paths, approval mode, model,
//! who answers questions and approvals, overrides of the settings) goes in; a [`Session`] with a
//! ready scheduler comes out. The layers are applied in one order, in one place.

use std::path::PathBuf;
use std::sync::Arc;

use toolbelt_core::approver::{Approver, FixedApprover, Outcome, Questioner};
use toolbelt_core::config::Config;
use toolbelt_core::hooks::{CommandHooks, HookContext, ToolHooks};
use toolbelt_core::model::ModelAccess;
use toolbelt_core::policy::lint::never_matching;
use toolbelt_core::policy::sources::{
    load_sources, misspelled_tools, settings_rules, standard_sources,
};
use toolbelt_core::policy::{
    ApprovalMode, Loaded, PolicyEngine, PolicyFileError, Tier, toml::load_path,
};
use toolbelt_core::scheduler::EventSink;
use toolbelt_core::settings::ToolSettings;
use toolbelt_core::timings;
use toolbelt_core::{ModelFamily, Registry, Scheduler, SchedulerOptions, Tool, ToolEnv, Workspace};

use crate::SessionError;
use crate::session::Session;
use crate::settings::{load_settings_from, primary_root};

/// An override the front end applies to the settings last (its command-line flags).
type Override = Box<dyn FnOnce(&mut Config) + Send>;

/// Collects what a front end knows; [`SessionBuilder::build`] assembles the session.
pub struct SessionBuilder {
    roots: Vec<PathBuf>,
    policy_paths: Vec<PathBuf>,
    approval_mode: Option<ApprovalMode>,
    interactive: bool,
    family: ModelFamily,
    model: Option<Arc<dyn ModelAccess>>,
    questioner: Option<Arc<dyn Questioner>>,
    approver: Option<Arc<dyn Approver>>,
    events: Option<EventSink>,
    overrides: Vec<Override>,
    mcp_servers: bool,
    extra_mcp_servers: Vec<toolbelt_core::settings::McpServerSettings>,
    sources: Option<SettingsSources>,
    sandbox: bool,
    editor: Option<Arc<dyn toolbelt_core::editor::EditorFiles>>,
}

/// Where settings, policies and trust decisions are read from.
#[derive(Clone, Debug)]
pub struct SettingsSources {
    /// toolbelt's state folder (`~/.toolbelt`, or `TOOLBELT_HOME`): its settings, policies,
    /// trusted folders and saved approvals.
    pub state_dir: PathBuf,
    /// The user's home folder, for `~/.gemini` (`None`: no user-level Gemini CLI files).
    pub user_home: Option<PathBuf>,
}

impl Default for SettingsSources {
    /// The state folder from the environment, the user's home folder from the system.
    fn default() -> Self {
        Self {
            state_dir: toolbelt_core::config::default_home_dir(),
            user_home: toolbelt_core::files::user_home(),
        }
    }
}

impl Default for SessionBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionBuilder {
    /// A headless session over the current folder, in the settings' approval mode.
    pub fn new() -> Self {
        Self {
            roots: Vec::new(),
            policy_paths: Vec::new(),
            approval_mode: None,
            interactive: false,
            family: ModelFamily::Legacy,
            model: None,
            questioner: None,
            approver: None,
            events: None,
            overrides: Vec::new(),
            mcp_servers: false,
            extra_mcp_servers: Vec::new(),
            sources: None,
            sandbox: false,
            editor: None,
        }
    }

    /// The workspace roots. The first is where relative paths start and whose project settings
    /// and policies apply; none means the current folder.
    pub fn roots(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Self {
        self.roots = roots.into_iter().collect();
        self
    }

    /// Policy files or folders loaded at the user tier, after the standard ones.
    pub fn policy_paths(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.policy_paths = paths.into_iter().collect();
        self
    }

    /// The approval mode; `None` takes `general.defaultApprovalMode` from settings.
    pub fn approval_mode(mut self, mode: Option<ApprovalMode>) -> Self {
        self.approval_mode = mode;
        self
    }

    /// Whether a person can answer: policy's "ask" is asked instead of denied, and ask_user
    /// gets the questioner.
    pub fn interactive(mut self, interactive: bool) -> Self {
        self.interactive = interactive;
        self
    }

    /// Which declarations and response shape the scheduler uses.
    pub fn model_family(mut self, family: ModelFamily) -> Self {
        self.family = family;
        self
    }

    /// The session's model, for the tools that ask one (web_fetch, google_web_search).
    pub fn model(mut self, model: Arc<dyn ModelAccess>) -> Self {
        self.model = Some(model);
        self
    }

    /// Who answers ask_user's questions (only used in interactive sessions).
    pub fn questioner(mut self, questioner: Arc<dyn Questioner>) -> Self {
        self.questioner = Some(questioner);
        self
    }

    /// Who answers confirmations (default: nobody; every question is refused).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Where the scheduler's state changes and live output go.
    pub fn events(mut self, sink: EventSink) -> Self {
        self.events = Some(sink);
        self
    }

    /// Changes the settings after every other layer (defaults, files, environment): the front
    /// end's flags. May be called more than once; applied in order.
    pub fn configure(mut self, f: impl FnOnce(&mut Config) + Send + 'static) -> Self {
        self.overrides.push(Box::new(f));
        self
    }

    /// Where settings, policies and trust come from (default: [`SettingsSources::default`]).
    pub fn settings_sources(mut self, sources: SettingsSources) -> Self {
        self.sources = Some(sources);
        self
    }

    /// Runs commands in the sandbox (`--sandbox`), whatever the settings say; `GEMINI_SANDBOX`
    /// still decides when it is set.
    pub fn sandbox(mut self, on: bool) -> Self {
        self.sandbox = on;
        self
    }

    /// Also connects the MCP servers configured in settings; their tools join the registry.
    pub fn mcp_servers(mut self, connect: bool) -> Self {
        self.mcp_servers = connect;
        self
    }

    /// MCP servers the front end brings (an editor's own), connected with those of the settings;
    /// one with the name of a configured server takes its place.
    pub fn extra_mcp_servers(
        mut self,
        servers: Vec<toolbelt_core::settings::McpServerSettings>,
    ) -> Self {
        self.extra_mcp_servers = servers;
        self
    }

    /// An editor that holds text files (an ACP client's `fs/*`): the file tools read and write
    /// UTF-8 text through it once the file layer has checked the path.
    pub fn editor(mut self, editor: Arc<dyn toolbelt_core::editor::EditorFiles>) -> Self {
        self.editor = Some(editor);
        self
    }

    /// Assembles the session. What could not be used but did not stop it (a skipped policy
    /// file, a discovery command that failed, an MCP server that is down) is in
    /// [`Session::notices`].
    pub async fn build(self) -> Result<Session, SessionError> {
        let mut notices = Vec::new();
        let sources = self.sources.unwrap_or_default();
        let mut config = Config { home_dir: sources.state_dir.clone(), ..Config::default() };
        let root = primary_root(&self.roots)?;
        let (settings, trusted) =
            load_settings_from(&sources.state_dir, sources.user_home.as_deref(), &root)?;
        notices.extend(settings.skipped_notice());
        settings.restriction_typo()?;
        let mut tool_settings = settings.tools();
        let has_extra = !self.extra_mcp_servers.is_empty();
        for extra in self.extra_mcp_servers {
            tool_settings.mcp_servers.retain(|s| s.name != extra.name);
            tool_settings.mcp_servers.push(extra);
        }
        server_typos(&tool_settings)?;
        notices.extend(settings.unknown_key_notices());
        // Off Linux nothing is confined: said once, at the start, rather than pretended.
        if !cfg!(target_os = "linux") {
            notices.push(
                "this system cannot sandbox commands (Landlock is Linux only; macOS and Windows \
                 are not sandboxed yet): `--sandbox` is refused, and the read-only commands that \
                 run unasked (ls, cat, grep, ...) run unconfined; git is asked (docs/compat.md X15)"
                    .to_string(),
            );
        }
        settings.apply_to(&mut config);
        config.apply_env()?;
        for f in self.overrides {
            f(&mut config);
        }
        timings::mark("settings");
        let mut roots = if self.roots.is_empty() { vec![root.clone()] } else { self.roots };
        // A folder the sensitive rules refuse (`~/.ssh`, `~/.aws`) must not become a root:
        // beneath it, its files would no longer look sensitive.
        let rules = toolbelt_core::workspace::SensitiveRules::new(
            &config.sensitive_paths,
            &config.allow_sensitive_paths,
        )
        .ok();
        let refused = |real: &std::path::Path| {
            rules.as_ref().and_then(|r| r.check_folder(real)).map(|hit| hit.rule)
        };
        let home = sources.user_home.as_deref().and_then(|h| std::fs::canonicalize(h).ok());
        let broad = |real: &std::path::Path| {
            toolbelt_core::workspace::paths::holds_home(real, home.as_deref())
                .filter(|_| !config.allow_home_or_root_workspace)
        };
        for dir in &tool_settings.include_directories {
            let p = included_dir(dir, &root, sources.user_home.as_deref());
            match std::fs::canonicalize(&p) {
                // Issue 46 (G7): every file of the account would be the tools'.
                Ok(real) if real.is_dir() && broad(&real).is_some() => notices.push(format!(
                    "context.includeDirectories: {} is {}; it is not part of the workspace (TOOLBELT_ALLOW_HOME_WORKSPACE=1 allows it)",
                    real.display(),
                    broad(&real).unwrap_or_default()
                )),
                Ok(real) if real.is_dir() && refused(&real).is_some() => notices.push(format!(
                    "context.includeDirectories: {} matches the sensitive-path rule \"{}\"; it is not part of the workspace",
                    real.display(),
                    refused(&real).unwrap_or_default()
                )),
                Ok(real) if real.is_dir() => {
                    if !roots.contains(&real) {
                        roots.push(real);
                    }
                }
                _ => notices.push(format!(
                    "context.includeDirectories: {} is not a folder; it is not part of the workspace",
                    p.display()
                )),
            }
        }
        let sandbox_request =
            crate::sandbox::requested(&settings, self.sandbox, &|k| std::env::var(k).ok())?;
        if let Some(req) = &sandbox_request {
            let home = sources.user_home.as_deref();
            let mut state = vec![sources.state_dir.clone(), config.home_dir.clone()];
            state.extend(home.map(|h| h.join(".gemini")));
            config.sandbox = Some(
                crate::sandbox::build(req, home, &root, &state)?
                    .with_context_files(&tool_settings.context_file_names),
            );
            if let Some(gaps) = toolbelt_core::process::sandbox::support().gaps() {
                notices.push(format!("sandbox: {gaps}"));
            }
        }
        let interactive = self.interactive;
        let mode = match (self.approval_mode, tool_settings.default_approval_mode.as_deref()) {
            (Some(m), _) => m,
            (None, Some(m)) => ApprovalMode::parse(m).unwrap_or(ApprovalMode::Default),
            (None, None) => ApprovalMode::Default,
        };

        // `security.disableYoloMode` (or `admin.secureModeEnabled`, as upstream): no one
        // switches this session to yolo, not the command line, not a model, not a client.
        let yolo_key = ["security.disableYoloMode", "admin.secureModeEnabled"]
            .into_iter()
            .find(|k| settings.get(k).and_then(serde_json::Value::as_bool) == Some(true));
        if mode == ApprovalMode::Yolo
            && let Some(key) = yolo_key
        {
            let file = settings.origin.get(key).cloned().unwrap_or_default();
            return Err(SessionError::YoloDisabled(file));
        }
        let yolo_disabled = yolo_key.is_some();
        let policy = policy(
            &sources,
            &root,
            trusted,
            &self.policy_paths,
            &tool_settings,
            interactive,
            &mut notices,
        )?;
        timings::mark("policy");

        let skills = if tool_settings.skills_enabled {
            let dirs = toolbelt_tools::session::skills::skill_dirs(
                sources.user_home.as_deref(),
                &root,
                trusted,
            );
            let (found, skill_notices) =
                toolbelt_tools::session::skills::discover(&dirs, &tool_settings.skills_disabled);
            notices.extend(skill_notices);
            found
        } else {
            Vec::new()
        };
        let services = toolbelt_tools::Services {
            model: self.model,
            skills: Arc::new(skills),
            web_fetch_direct: config.web_fetch_direct,
            custom_search: config.google_api_key.is_some() && config.google_cse_id.is_some(),
            questioner: self.questioner.filter(|_| interactive),
            ..toolbelt_tools::Services::default()
        };
        timings::mark("skills");
        let workspace = Workspace::new(&roots, &config)?;
        let mut tools: Vec<Arc<dyn Tool>> = toolbelt_tools::builtin_tools_with(&services);
        tools
            .extend(discovered(&tool_settings, &root, &workspace, &mut config, &mut notices).await);
        let mcp = if self.mcp_servers || has_extra {
            connect_mcp(&tool_settings, &root, &mut config, &mut tools, &mut notices).await
        } else {
            None
        };
        timings::mark("tools");
        let registry = Arc::new(Registry::builder().tools(tools).build()?);
        let typos = misspelled_tools(&policy.rules(), &registry.names(), true);
        if !typos.is_empty() {
            return Err(SessionError::Policy(typos));
        }
        let id = session_id();
        let hooks = (!tool_settings.hooks.events.is_empty()).then(|| {
            CommandHooks::new(
                tool_settings.hooks.clone(),
                HookContext {
                    env_redaction: config.env_redaction.clone(),
                    sandbox: config.sandbox.clone(),
                    project_dir: root.clone(),
                    session_id: id.clone(),
                    transcript_path: String::new(),
                },
            )
        });

        timings::mark("registry");
        let mut env = ToolEnv::new(workspace, config.clone());
        env.editor = self.editor;
        let approver = self.approver.unwrap_or_else(|| Arc::new(FixedApprover(Outcome::Cancel)));
        let options = SchedulerOptions {
            family: self.family,
            mode,
            yolo_disabled,
            ..SchedulerOptions::default()
        };
        let mut scheduler =
            Scheduler::new(registry.clone(), policy.clone(), approver, env, options);
        if let Some(h) = &hooks {
            scheduler = scheduler.with_hooks(h.clone() as Arc<dyn ToolHooks>);
        }
        if let Some(sink) = self.events {
            scheduler = scheduler.with_events(sink);
        }
        timings::mark("scheduler");
        Ok(Session {
            id,
            config,
            tool_settings,
            root,
            roots,
            trusted,
            policy,
            registry,
            services,
            hooks,
            mode,
            yolo_disabled,
            interactive,
            family: self.family,
            mcp,
            notices,
            scheduler: Arc::new(scheduler),
        })
    }
}

/// The policy engine: the standard sources of every tier, the front end's paths at the user
/// tier, then the rules the settings imply.
fn policy(
    sources: &SettingsSources,
    root: &std::path::Path,
    trusted: bool,
    paths: &[PathBuf],
    tool_settings: &ToolSettings,
    interactive: bool,
    notices: &mut Vec<String>,
) -> Result<Arc<PolicyEngine>, SessionError> {
    let mut loaded = policy_files(sources, root, trusted, paths);
    timings::mark("policy: files");
    if !loaded.errors.is_empty() {
        return Err(SessionError::Policy(loaded.errors));
    }
    notices.extend(loaded.notices.iter().map(ToString::to_string));
    notices.extend(never_matching(&loaded.rules).iter().map(ToString::to_string));
    loaded.rules.extend(settings_rules(tool_settings, interactive));
    timings::mark("policy: lint and settings");
    Ok(Arc::new(
        PolicyEngine::new(loaded.rules, interactive)
            .with_workspace(root)
            .with_trusted_folder(trusted)
            .with_confinable(toolbelt_core::process::sandbox::usable()),
    ))
}

/// Every policy file a session reads (the standard folders of each tier, then the front end's
/// paths at the user tier), loaded, with every problem. A `--policy` path that does not exist
/// is a problem: the rules the user meant to apply would not.
pub fn policy_files(
    sources: &SettingsSources,
    root: &std::path::Path,
    trusted: bool,
    paths: &[PathBuf],
) -> Loaded {
    let standard =
        standard_sources(&sources.state_dir, sources.user_home.as_deref(), Some(root), trusted);
    let mut loaded = load_sources(&standard);
    timings::mark("policy: default and standard files");
    for p in paths {
        if !p.exists() {
            loaded.errors.push(PolicyFileError {
                file: p.display().to_string(),
                line: None,
                message: "does not exist".into(),
            });
        }
        loaded.extend(load_path(p, Tier::User));
    }
    loaded.check_pattern_budget();
    loaded
}

/// The tools `tools.discoveryCommand` prints, if set. Their calls get `tools.callTimeoutMs`
/// when set, else the engine's tool-call deadline (upstream: none).
async fn discovered(
    t: &ToolSettings,
    root: &std::path::Path,
    workspace: &Workspace,
    config: &mut Config,
    notices: &mut Vec<String>,
) -> Vec<Arc<dyn Tool>> {
    let Some(cmd) = &t.discovery_command else { return Vec::new() };
    let cfg = toolbelt_tools::discovered::DiscoveryConfig {
        env_redaction: config.env_redaction.clone(),
        sandbox: config.sandbox.clone(),
        discovery_command: cmd.clone(),
        call_command: t.call_command.clone(),
        cwd: root.to_path_buf(),
        discovery_timeout_ms: t.discovery_timeout_ms,
    };
    match toolbelt_tools::discovered::discover_counted(&cfg, workspace).await {
        Ok((found, left_out)) => {
            if left_out > 0 {
                let limit = toolbelt_core::limits::DISCOVERED_TOOLS;
                notices.push(format!(
                    "the discovery command declared {} tools; the first {limit} are used",
                    limit + left_out
                ));
            }
            if let Some(ms) = t.call_timeout_ms {
                for tool in &found {
                    config.tool_timeouts_ms.insert(tool.name().to_string(), ms);
                }
            }
            found.into_iter().map(|t| t as Arc<dyn Tool>).collect()
        }
        Err(e) => {
            notices.push(format!("no discovered tools: {e}"));
            Vec::new()
        }
    }
}

/// Connects the configured MCP servers (in parallel; the slow and the broken become notices)
/// and adds their tools. Servers in `mcp.excluded`, or missing from a non-empty `mcp.allowed`,
/// are not started.
async fn connect_mcp(
    t: &ToolSettings,
    root: &std::path::Path,
    config: &mut Config,
    tools: &mut Vec<Arc<dyn Tool>>,
    notices: &mut Vec<String>,
) -> Option<toolbelt_mcp::client::McpClients> {
    use toolbelt_mcp::client::{DEFAULT_CONNECT_TIMEOUT_MS, ServerState, connect_all, spec};
    if t.mcp_servers.is_empty() {
        return None;
    }
    let specs = t
        .mcp_servers
        .iter()
        .filter(|s| !t.mcp_excluded.iter().any(|e| e == &s.name || e == "*"))
        .filter(|s| t.mcp_allowed.is_empty() || t.mcp_allowed.contains(&s.name))
        .map(|s| spec(s, &config.env_redaction).map_err(|e| (s.name.clone(), e)))
        .collect();
    let clients =
        connect_all(specs, root, std::time::Duration::from_millis(DEFAULT_CONNECT_TIMEOUT_MS))
            .await;
    for (name, state) in &clients.servers {
        match state {
            ServerState::Failed(why) => {
                notices.push(format!("MCP server '{name}' is unavailable: {why}"))
            }
            ServerState::Connected { dropped, .. } => {
                for (tool, why) in dropped {
                    notices.push(format!("MCP server '{name}': tool '{tool}' left out: {why}"));
                }
            }
        }
    }
    for tool in &clients.tools {
        // The engine's deadline applies as to any tool: `tools.toolTimeoutsMs` by full name,
        // else the server's `timeout`, else the global one. (The server's own request timeout,
        // extended by progress, still applies inside.)
        if let Some(ms) = tool.server_timeout_ms() {
            config.tool_timeouts_ms.entry(tool.name().to_string()).or_insert(ms);
        }
        tools.push(tool.clone() as Arc<dyn Tool>);
    }
    Some(clients)
}

fn session_id() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("toolbelt-{}-{ms}", std::process::id())
}

/// An `includeDirectories` entry as a path: `~` is the user's home, a relative path starts at
/// the primary root.
fn included_dir(entry: &str, root: &std::path::Path, home: Option<&std::path::Path>) -> PathBuf {
    match (entry.strip_prefix("~"), home) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
            h.join(rest.trim_start_matches('/'))
        }
        _ => root.join(entry),
    }
}

/// `mcp.excluded` entries that are near-misses of a configured server (`Self` for `self`): the
/// server the user meant to exclude would run.
fn server_typos(t: &ToolSettings) -> Result<(), SessionError> {
    let servers: Vec<&str> = t.mcp_servers.iter().map(|s| s.name.as_str()).collect();
    for e in t.mcp_excluded.iter().filter(|e| *e != "*" && !servers.contains(&e.as_str())) {
        let close = servers
            .iter()
            .copied()
            .find(|s| s.eq_ignore_ascii_case(e))
            .or_else(|| toolbelt_core::spelling::did_you_mean(e, servers.iter().copied()));
        if let Some(meant) = close {
            return Err(SessionError::Policy(vec![PolicyFileError {
                file: t
                    .origin_of("mcp.excluded")
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                line: None,
                message: format!(
                    "mcp.excluded: no MCP server is named `{e}` (did you mean `{meant}`?); as written the server would run"
                ),
            }]));
        }
    }
    Ok(())
}
