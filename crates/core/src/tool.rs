//! The tool abstraction: a [`Tool`] validates arguments and builds an [`Invocation`], which the
//! scheduler confirms and executes.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::kind::Kind;
use crate::result::ToolResult;
use crate::workspace::Workspace;

/// Which family of declarations to send: upstream picks `gemini-3` for `gemini-3*` models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ModelFamily {
    /// Every model before gemini-3.
    #[default]
    #[serde(rename = "legacy")]
    Legacy,
    /// gemini-3 models.
    #[serde(rename = "gemini-3")]
    Gemini3,
}

impl ModelFamily {
    /// The family for a model id, as upstream decides it (`^gemini-3(\.|-|$)`).
    pub fn for_model(model: &str) -> Self {
        match model.strip_prefix("gemini-3") {
            Some(rest) if rest.is_empty() || rest.starts_with('.') || rest.starts_with('-') => {
                ModelFamily::Gemini3
            }
            _ => ModelFamily::Legacy,
        }
    }

    /// The family's name as the command line spells it.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "legacy" | "default-legacy" => Some(ModelFamily::Legacy),
            "gemini-3" => Some(ModelFamily::Gemini3),
            _ => None,
        }
    }
}

/// A function declaration as a Gemini request carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Declaration {
    /// The tool's name.
    pub name: String,
    /// What the model reads about the tool.
    pub description: String,
    /// The JSON schema of the arguments.
    #[serde(rename = "parametersJsonSchema")]
    pub parameters: Value,
}

/// What tools may use while building and running: the workspace and the settings.
#[derive(Clone, Debug)]
pub struct ToolEnv {
    /// The roots and the path rules.
    pub workspace: Arc<Workspace>,
    /// The settings.
    pub config: Arc<Config>,
    /// File contents the model has seen this session.
    pub files: Arc<crate::ledger::FileLedger>,
    /// The session is in plan mode: tools that write resolve names inside the plans folder.
    pub plan_mode: bool,
    /// An editor that reads and writes text files itself (an ACP client's `fs/*`).
    pub editor: Option<Arc<dyn crate::editor::EditorFiles>>,
}

impl ToolEnv {
    /// An environment with a fresh file ledger.
    pub fn new(workspace: Workspace, config: Config) -> Self {
        Self {
            workspace: Arc::new(workspace),
            config: Arc::new(config),
            files: Arc::default(),
            plan_mode: false,
            editor: None,
        }
    }
}

/// The live session's tool environment, shared by the scheduler with the tools that change it
/// (activating a skill adds its folder to the workspace): calls built after a change see it,
/// calls already built keep the environment they were built with.
#[derive(Clone)]
pub struct EnvHandle(Arc<std::sync::RwLock<ToolEnv>>);

impl EnvHandle {
    /// A handle over `env`.
    pub fn new(env: ToolEnv) -> Self {
        Self(Arc::new(std::sync::RwLock::new(env)))
    }

    /// The environment now.
    pub fn current(&self) -> ToolEnv {
        use crate::sync::RwLockExt as _;
        self.0.reading().clone()
    }

    /// Replaces the workspace; what the model has seen of files is kept.
    pub fn set_workspace(&self, workspace: Workspace) {
        use crate::sync::RwLockExt as _;
        self.0.writing().workspace = Arc::new(workspace);
    }

    /// Adds `dir` to the workspace as a folder that may be read, never written (see
    /// [`Workspace::with_read_only_root`]).
    pub fn add_read_only_root(
        &self,
        dir: &std::path::Path,
    ) -> Result<(), crate::workspace::WorkspaceError> {
        use crate::sync::RwLockExt as _;
        let mut env = self.0.writing();
        let workspace = env.workspace.with_read_only_root(dir, &env.config)?;
        env.workspace = Arc::new(workspace);
        Ok(())
    }
}

impl std::fmt::Debug for EnvHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvHandle").finish_non_exhaustive()
    }
}

/// A tool: declaration plus a builder of invocations.
///
/// The engine validates the raw arguments against [`Tool::declaration`]'s schema (legacy family)
/// before calling [`Tool::build`], so `build` only performs the tool's own value checks.
pub trait Tool: Send + Sync {
    /// The API name the model calls.
    fn name(&self) -> &str;
    /// The name shown to people.
    fn display_name(&self) -> &str;
    /// What the tool does, for scheduling and policy.
    fn kind(&self) -> Kind;
    /// The declaration for a model family (name, description, JSON schema).
    fn declaration(&self, family: ModelFamily) -> Declaration;
    /// Maps older parameter names and forms that models still send onto the current ones,
    /// before validation (see [`crate::schema::rename_params`]).
    fn normalize_args(&self, _args: &mut Value) {}
    /// The schema arguments are validated against, when it differs from the declared one:
    /// parameters of older versions the declaration no longer lists (`expected_replacements`,
    /// `enable_line_numbers`, ...) are accepted without being offered to the model.
    fn accepted_parameters(&self) -> Option<Value> {
        None
    }
    /// Whether a call may take much memory or CPU whatever the size of its arguments (a search
    /// or read over the whole workspace): such calls take turns, a few at a time per process
    /// (`crate::limits::COSTLY_AT_ONCE`).
    fn costly(&self) -> bool {
        false
    }
    /// Whether the engine's output truncation applies to this tool's text output
    /// (upstream: the shell and MCP tools; the others bound their own output).
    fn truncates_output(&self) -> bool {
        false
    }
    /// The MCP server this tool comes from, if any (used by policy rules with `mcpName`).
    fn server_name(&self) -> Option<&str> {
        None
    }
    /// An MCP tool's own `mcp_<server>_<tool>` name where a clash with another server's tool
    /// gave it another (`mcp_a_b_x_2`): policy rules about the first name apply to it too.
    fn canonical_name(&self) -> Option<&str> {
        None
    }
    /// Whether this call changes the world: a mutating call never runs alongside others.
    /// Default: the tool's [`Kind`].
    fn is_mutating(&self, _args: &Value) -> bool {
        self.kind().is_mutating()
    }
    /// Whether this call waits until every earlier call of its batch has finished. Default:
    /// upstream's `wait_for_previous` argument, which any tool may be sent.
    fn waits_for_previous(&self, args: &Value) -> bool {
        args.get(crate::names::WAIT_FOR_PREVIOUS).and_then(Value::as_bool).unwrap_or(false)
    }
    /// What an "always allow" answer for this tool covers (upstream's policy update options).
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow::default()
    }
    /// What the tool's calls can do to the world (MCP's hints for clients). Default: what its
    /// [`Kind`] implies.
    fn effects(&self) -> crate::kind::Effects {
        crate::kind::Effects::of_kind(self.kind())
    }
    /// MCP tool annotations (e.g. `readOnlyHint`), matched by policy rules.
    fn annotations(&self) -> Option<&serde_json::Map<String, Value>> {
        None
    }
    /// For tools whose proposal a person may edit before it runs (write_file, replace): the
    /// arguments that apply `edited` instead of the model's proposal. `current` is the file as
    /// it is now.
    fn modified_args(&self, _args: &Value, _current: &str, _edited: &str) -> Option<Value> {
        None
    }
    /// Checks values the schema cannot express and binds typed parameters.
    /// The error string is what the model receives.
    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String>;
}

/// What an "always allow" answer covers: the scope of the session rule it adds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlwaysScope {
    /// Every call of the tool.
    #[default]
    Tool,
    /// Calls with the same value of this argument; without the argument nothing is remembered.
    Argument(&'static str),
    /// Shell commands with the same root commands as the command in this argument; an
    /// unparsable command is not remembered.
    CommandRoots(&'static str),
}

/// How a tool's approvals are remembered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlwaysAllow {
    /// What the session rule covers.
    pub scope: AlwaysScope,
    /// "Always allow" also switches the session to `auto_edit` (upstream's edit tools).
    pub enables_auto_edit: bool,
}

/// A place a call touches, for front ends.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Location {
    /// The path.
    pub path: String,
    /// The line, when one is meant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// What a person is asked before a call runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConfirmationDetails {
    /// Generic question with a prompt (upstream `info`).
    Info {
        /// The question's title.
        title: String,
        /// What the person is asked.
        prompt: String,
        /// URLs the call would fetch.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        urls: Vec<String>,
    },
    /// A file change with its unified diff.
    Edit {
        /// The question's title.
        title: String,
        /// The file's name.
        file_name: String,
        /// The file's path.
        file_path: String,
        /// The change, as a unified diff.
        file_diff: String,
    },
    /// A shell command.
    Exec {
        /// The question's title.
        title: String,
        /// The command as it would run.
        command: String,
        /// The programs it runs (what "always allow" would cover).
        root_commands: Vec<String>,
    },
    /// A call to an MCP server's tool.
    Mcp {
        /// The question's title.
        title: String,
        /// The MCP server.
        server_name: String,
        /// The tool's name on that server.
        tool_name: String,
    },
}

impl ConfirmationDetails {
    /// The title of any kind of confirmation.
    pub fn title(&self) -> &str {
        match self {
            ConfirmationDetails::Info { title, .. }
            | ConfirmationDetails::Edit { title, .. }
            | ConfirmationDetails::Exec { title, .. }
            | ConfirmationDetails::Mcp { title, .. } => title,
        }
    }
}

/// Receives live output chunks while a call runs.
pub type OutputSink = Arc<dyn Fn(&str) + Send + Sync>;

/// What a running invocation gets: its cancellation token (fired on cancel *and* on timeout)
/// and a channel for live output.
#[derive(Clone)]
pub struct ExecContext {
    /// The call's id.
    pub call_id: String,
    /// Fired on cancellation and on timeout.
    pub cancel: CancellationToken,
    /// Where live output goes, if anyone listens.
    pub output: Option<OutputSink>,
    /// Set by the scheduler just before it fires `cancel` because the deadline passed.
    pub deadline_passed: Arc<std::sync::atomic::AtomicBool>,
    /// The session's approval mode, which plan-mode tools switch.
    pub mode: Option<ModeHandle>,
    /// The session's tool environment, which tools that widen the workspace change.
    pub env: Option<EnvHandle>,
    /// Policy allowed the call only because the known-safe command table vouches for it: a
    /// program it starts must run confined (read-only, no network; issue 34).
    pub confine: bool,
    /// The call's commit point: a tool whose effect becomes visible in one step (an edit's
    /// rename) takes it through this gate, which the scheduler closes before it reports a
    /// timeout or a cancellation (issue 35).
    pub commit: crate::commit::CommitGate,
    /// The call's turn among the costly calls, when it is one. Work that outlives the call's
    /// future (a blocking thread, which a timeout cannot stop) holds it through
    /// [`ExecContext::spawn_blocking`], so a turn comes back only when the work has ended.
    pub turn: Option<Arc<crate::limits::CostlyTurn>>,
}

/// The scheduler's approval mode, shared with the tools that change it (through
/// [`crate::mode::SessionMode`], which keeps a model from raising it).
pub type ModeHandle = Arc<crate::mode::SessionMode>;

impl ExecContext {
    /// A context with no output sink and no mode handle.
    pub fn new(call_id: impl Into<String>, cancel: CancellationToken) -> Self {
        Self {
            call_id: call_id.into(),
            cancel,
            output: None,
            deadline_passed: Arc::default(),
            mode: None,
            env: None,
            confine: false,
            commit: crate::commit::CommitGate::new(),
            turn: None,
        }
    }

    /// Runs `work` on a blocking thread that holds the call's costly turn until it ends:
    /// a call that timed out is answered at once, but its thread, which cannot be stopped
    /// mid-search, keeps the turn (16 searches timing out one after another left 88 threads
    /// and 400 MB running, issue 35).
    pub fn spawn_blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> tokio::task::JoinHandle<T> {
        let turn = self.turn.clone();
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            work()
        })
    }

    /// Whether the call is being stopped because it ran out of time (not by a person).
    pub fn timed_out(&self) -> bool {
        self.deadline_passed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Sends a live output chunk, if anyone listens.
    pub fn emit(&self, chunk: &str) {
        if let Some(out) = &self.output {
            out(chunk);
        }
    }
}

/// A validated call, bound to typed parameters.
#[async_trait]
pub trait Invocation: Send + Sync {
    /// A one-line description of what this call will do (markdown).
    fn description(&self) -> String;
    /// Paths this call reads or writes.
    fn locations(&self) -> Vec<Location> {
        Vec::new()
    }
    /// The files this call would create or change, as they really are (symlinks resolved): the
    /// engine asks a person before a write to a file that decides what runs (settings,
    /// policies, hooks, `.git/config`; `Workspace::control_file`), whatever the mode but `yolo`.
    fn writes(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
    /// Edit tools skip confirmation in `auto_edit` mode.
    fn respects_auto_edit(&self) -> bool {
        false
    }
    /// The call is itself the question to the person (ask_user): where policy says "ask",
    /// it runs instead of being asked about.
    fn confirms_itself(&self) -> bool {
        false
    }
    /// What to show when policy asks for confirmation; `None` uses a generic prompt.
    fn confirmation(&self) -> Option<ConfirmationDetails> {
        None
    }
    /// How many of the costly calls' turns this call takes although its tool may not be costly
    /// (0: none; [`Tool::costly`] makes it at least 1): a read of a large file takes one or
    /// two, an edit of a large file three.
    fn costly_turns(&self) -> u32 {
        0
    }
    /// For editable proposals: the file's current content and the content this call would
    /// write, so a person can change the proposal in an editor.
    fn proposal(&self) -> Option<(String, String)> {
        None
    }
    /// Runs the call. Must honour `ctx.cancel` promptly: the scheduler fires it on cancellation
    /// and on timeout, and abandons the call shortly after.
    async fn execute(&self, ctx: ExecContext) -> ToolResult;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_family_follows_upstream_regex() {
        assert_eq!(ModelFamily::for_model("gemini-3"), ModelFamily::Gemini3);
        assert_eq!(ModelFamily::for_model("gemini-3-pro-preview"), ModelFamily::Gemini3);
        assert_eq!(ModelFamily::for_model("gemini-3.1-flash"), ModelFamily::Gemini3);
        assert_eq!(ModelFamily::for_model("gemini-30"), ModelFamily::Legacy);
        assert_eq!(ModelFamily::for_model("gemini-2.5-pro"), ModelFamily::Legacy);
    }
}
