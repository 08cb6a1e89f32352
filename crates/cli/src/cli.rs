//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use toolbelt_core::ModelFamily;
use toolbelt_core::policy::ApprovalMode;

mod fast_call;

#[derive(Debug, Parser)]
#[command(
    name = "toolbelt",
    version,
    about = "Run Gemini-CLI-compatible tool calls: from a shell, an MCP client or an agent loop"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Parses the command line. `toolbelt call ...`, the command scripts start most often, is read
/// by [`fast_call`] when it is written plainly, else parsed with the `call` subcommand's
/// definition alone (building every subcommand's definition costs
/// more than the rest of a small call's start-up); anything that does not parse that way —
/// help, version, a mistake — goes through the whole definition, so what it prints is the same.
pub fn parse(mut args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    // Gemini CLI's spellings for its ACP agent (`gemini --experimental-acp`, `--acp`), so an
    // editor set up for it only needs the program's name changed.
    if let Some(at) = args.iter().skip(1).position(|a| a == "--experimental-acp" || a == "--acp") {
        args.remove(at + 1);
        args.insert(1, "acp".into());
    }
    if args.get(1).is_some_and(|a| a == "call") {
        if let Some(call) = fast_call::parse(&args[2..]) {
            return Ok(Cli { command: Command::Call(call) });
        }
        let call =
            CallArgs::augment_args(clap::Command::default().name("call").bin_name("toolbelt call"));
        if let Ok(matches) = call.try_get_matches_from(&args[1..])
            && let Ok(call) = CallArgs::from_arg_matches(&matches)
        {
            return Ok(Cli { command: Command::Call(call) });
        }
    }
    Cli::try_parse_from(args)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one tool call through the whole pipeline (validation, policy, confirmation, execution)
    Call(CallArgs),
    /// List the tools or print their declarations
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Ask the policy engine about a call, or list and revoke saved approvals
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Run the agent: send a prompt to a model and run its tool calls until it answers
    #[command(after_help = SIGN_IN_HELP)]
    Run(RunArgs),
    /// Serve the tools to MCP clients (stdio, or Streamable HTTP with --http)
    Mcp(McpArgs),
    /// Serve editors (Zed, JetBrains, Neovim, Emacs) over the Agent Client Protocol on stdio
    /// (also `toolbelt --experimental-acp`, as Gemini CLI)
    #[command(after_help = SIGN_IN_HELP)]
    Acp(AcpArgs),
    /// Show the merged settings and the file that set each key
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Trust a folder: its project settings may then run commands (hooks, tool discovery,
    /// MCP servers) and allow more
    Trust {
        /// The folder (default: .)
        dir: Option<PathBuf>,
    },
    /// Stop trusting a folder
    Untrust {
        /// The folder (default: .)
        dir: Option<PathBuf>,
    },
    /// Run one command in the sandbox, or say what this machine supports (--check)
    Sandbox(SandboxArgs),
    /// Print a shell completion script (e.g. `toolbelt completions bash >
    /// ~/.local/share/bash-completion/completions/toolbelt`)
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; e.g. `toolbelt man > ~/.local/share/man/man1/toolbelt.1`)
    Man,
}

/// `toolbelt sandbox [--profile P] [--root DIR]... -- CMD [ARGS]...` / `toolbelt sandbox --check`.
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Say what this machine supports (Landlock ABI, seccomp) and exit (1 when it cannot sandbox)
    #[arg(long, conflicts_with = "command")]
    pub check: bool,
    /// The profile: permissive-open, permissive-closed, restrictive-open, restrictive-closed
    /// (default: SEATBELT_PROFILE, else permissive-open)
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,
    /// A folder the command may write (repeatable; default: .)
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// The command and its arguments
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

/// `--approval-mode`'s spellings: the engine's own names and two more for auto_edit. An alias
/// reaches the parser as written (`auto-edit` ran in the default mode before the `call` line
/// tests caught it), so every spelling is looked up here, by clap and by [`fast_call`] alike.
const APPROVAL_MODES: &[(&str, ApprovalMode)] = &[
    ("default", ApprovalMode::Default),
    ("auto_edit", ApprovalMode::AutoEdit),
    ("auto-edit", ApprovalMode::AutoEdit),
    ("autoEdit", ApprovalMode::AutoEdit),
    ("yolo", ApprovalMode::Yolo),
    ("plan", ApprovalMode::Plan),
];

/// The mode an `--approval-mode` spelling names.
fn approval_mode_named(name: &str) -> Option<ApprovalMode> {
    APPROVAL_MODES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

/// `--approval-mode`: the engine's own [`ApprovalMode`], by its names (and two spellings more).
fn approval_mode() -> impl TypedValueParser<Value = ApprovalMode> {
    PossibleValuesParser::new([
        PossibleValue::new("default"),
        PossibleValue::new("auto_edit").aliases(["auto-edit", "autoEdit"]),
        PossibleValue::new("yolo"),
        PossibleValue::new("plan"),
    ])
    // Only the spellings above get here.
    .map(|name| approval_mode_named(&name).unwrap_or_default())
}

/// `--model-family`'s names.
const MODEL_FAMILIES: [&str; 2] = ["legacy", "gemini-3"];

/// `--model-family`: the engine's own [`ModelFamily`].
fn model_family() -> impl TypedValueParser<Value = ModelFamily> {
    PossibleValuesParser::new(MODEL_FAMILIES)
        .map(|name| ModelFamily::parse(&name).unwrap_or_default())
}

/// Options every command that builds a session shares.
#[derive(Debug, Args)]
pub struct SessionArgs {
    /// Approval mode (default: `general.defaultApprovalMode` from settings, else default)
    #[arg(long, value_parser = approval_mode())]
    pub approval_mode: Option<ApprovalMode>,
    /// Workspace root (repeatable; the first is where relative paths start and whose project
    /// settings apply; default: .)
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// A policy file or folder of *.toml files, loaded at the user tier (repeatable)
    #[arg(long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,
    /// Treat the run as headless even on a terminal (ask_user becomes an error)
    #[arg(long, conflicts_with = "interactive")]
    pub non_interactive: bool,
    /// Treat the run as interactive even without a terminal on stdin
    #[arg(long)]
    pub interactive: bool,
    /// Run commands (shell, background, hooks, discovered tools) in the sandbox; the profile
    /// comes from SEATBELT_PROFILE or tools.sandboxProfile (default: permissive-open)
    #[arg(long, short = 's')]
    pub sandbox: bool,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// Tool name, e.g. read_file
    pub tool: String,
    /// Arguments as a JSON object; `-` reads them from stdin
    #[arg(default_value = "{}")]
    pub args: String,
    /// Print one JSON object: name, response, llmContent, returnDisplay, error
    #[arg(long)]
    pub json: bool,
    /// Print the text as it is: escape sequences and control characters included (by default
    /// they are shown visibly, piped or not; CRLF line ends are kept either way)
    #[arg(long, conflicts_with = "json")]
    pub raw: bool,
    /// Deadline for the call in milliseconds (0: none; default 180000)
    #[arg(long, value_name = "N")]
    pub timeout_ms: Option<u64>,
    /// Which declarations and response shape to use
    #[arg(long, value_parser = model_family(), default_value = "legacy")]
    pub model_family: ModelFamily,
    /// Let tools touch paths that match this sensitive-path pattern (repeatable)
    #[arg(long = "allow-sensitive", value_name = "GLOB")]
    pub allow_sensitive: Vec<String>,
    /// Stream scheduler events to stderr as JSON lines
    #[arg(long)]
    pub events: bool,
    /// Leave processes started in the background running when toolbelt exits
    #[arg(long)]
    pub keep_background: bool,
    /// Run shell commands on a pseudo-terminal (colours and progress output, rendered)
    #[arg(long)]
    pub pty: bool,
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    #[value(name = "stream-json")]
    StreamJson,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt (also read from stdin when it is not a terminal; both are joined)
    pub prompt: Option<String>,
    /// Print the model's text as it is: escape sequences and control characters included
    /// (by default they are shown visibly, piped or not)
    #[arg(long)]
    pub raw: bool,
    #[command(flatten)]
    pub models: ModelArgs,
    /// text (streamed), json (one object at the end) or stream-json (one event per line)
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// stream-json: leave out toolbelt's `tool_output` events (a running tool's output as it
    /// comes), for consumers that expect Gemini CLI's exact event types
    #[arg(long)]
    pub compat_events: bool,
    /// Stop after this many model calls (exit code 53)
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Leave processes started in the background running when toolbelt exits
    #[arg(long)]
    pub keep_background: bool,
    #[command(flatten)]
    pub session: SessionArgs,
}

/// Which model the agent talks to (`run` and `acp`).
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// The model (default: $GEMINI_MODEL, else the settings' model.name, else auto, which is
    /// gemini-3-pro-preview; aliases pro, flash, flash-lite; with --base-url: $OPENAI_MODEL)
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Talk to an OpenAI-compatible chat-completions server instead of the Gemini API, e.g.
    /// http://127.0.0.1:8080/v1 (llama.cpp, Ollama, vLLM); key from $OPENAI_API_KEY if set
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Answer from a recorded session instead of a model: `--replay FILE`, or `--replay`
    /// alone for the built-in demo session (`--replay "a prompt"` plays the demo too)
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    pub replay: Option<String>,
    /// Save every model answer to FILE (replay it with --replay FILE)
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

/// How `run` and `acp` reach a model, and the slash commands (issue 50).
const SIGN_IN_HELP: &str = "Models: the Gemini API with GEMINI_API_KEY (or GOOGLE_API_KEY); Vertex AI with \
GOOGLE_GENAI_USE_VERTEXAI=true, GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION (default global) and \
Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, or gcloud auth \
application-default login); an OpenAI-compatible server with --base-url.\n\
A prompt that is /help, /tools, /mcp, /about, /memory show|add|refresh, /init or /compress is \
answered by toolbelt itself.";

/// `toolbelt acp`: serve editors over the Agent Client Protocol.
#[derive(Debug, Args)]
pub struct AcpArgs {
    #[command(flatten)]
    pub models: ModelArgs,
    /// Stop a prompt's turn after this many model calls
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Approval mode sessions start in (default: `general.defaultApprovalMode`, else default);
    /// the editor may change it per session
    #[arg(long, value_parser = approval_mode())]
    pub approval_mode: Option<ApprovalMode>,
    /// A policy file or folder of *.toml files, loaded at the user tier (repeatable)
    #[arg(long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,
    /// Run commands (shell, background, hooks, discovered tools) in the sandbox
    #[arg(long, short = 's')]
    pub sandbox: bool,
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Names, kinds and display names of the tools (built-in and discovered)
    List {
        /// Print JSON
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        session: SessionArgs,
    },
    /// Function declarations as JSON, as the model gets them (all tools, or one)
    Schema {
        tool: Option<String>,
        #[arg(long, value_parser = model_family(), default_value = "legacy")]
        model_family: ModelFamily,
        /// Include tools that policy hides in this mode
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        session: SessionArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the decision for a call and the rule that made it
    Check {
        tool: String,
        /// Arguments as a JSON object
        #[arg(default_value = "{}")]
        args: String,
        /// Print JSON
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        session: SessionArgs,
    },
    /// The saved "always allow" rules (`~/.toolbelt/policies/auto-saved.toml`), with their ids
    List {
        /// Every loaded rule instead, highest priority first, with its source
        #[arg(long)]
        all: bool,
        /// Print JSON
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        session: SessionArgs,
    },
    /// Remove a saved "always allow" rule by its id
    Revoke { id: String },
    /// Check policy files without running anything: every problem with its file and line
    /// (exit 2 when there is one). Without PATH: every policy and settings file a session here
    /// would load
    Lint {
        /// Policy files or folders of *.toml files
        paths: Vec<std::path::PathBuf>,
        /// Workspace root whose project files are checked too (default: the current folder)
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<std::path::PathBuf>,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Connect the configured MCP servers and show each one's state and tools
    List {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Sign in to a configured HTTP MCP server that uses OAuth (tokens are saved and refreshed)
    Auth {
        /// The server's name in mcpServers
        server: String,
        /// Forget the saved tokens instead
        #[arg(long)]
        logout: bool,
        /// Only print the sign-in URL; do not try to open a browser
        #[arg(long)]
        no_browser: bool,
        /// Also ask for these scopes (space-separated; may be repeated), beside the
        /// configured ones and those granted before
        #[arg(long = "scope", value_name = "SCOPES")]
        scopes: Vec<String>,
    },
    /// Check a Streamable HTTP MCP server: list its tools and call each with sample arguments
    /// (signing in with OAuth at once, headless, when the server asks; the client credentials
    /// default to those of MCP_CONFORMANCE_CONTEXT, which the MCP conformance suite sets)
    Probe {
        /// The server's URL, e.g. http://127.0.0.1:8765/mcp
        url: String,
        /// A pre-registered OAuth client
        #[arg(long)]
        client_id: Option<String>,
        #[arg(long)]
        client_secret: Option<String>,
        /// The HTTPS URL of this client's metadata document (used as the client ID where the
        /// authorization server accepts such documents)
        #[arg(long)]
        client_metadata_url: Option<String>,
    },
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = false)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: Option<McpCommand>,
    /// Also serve the tools of the MCP servers configured in settings (proxied)
    #[arg(long)]
    pub proxy: bool,
    /// Serve a test fixture instead of the tools: `conformance` (what the official MCP
    /// conformance suite calls)
    #[cfg(feature = "conformance-fixture")]
    #[arg(long, value_name = "NAME", value_parser = ["conformance"])]
    pub fixture: Option<String>,
    /// Serve Streamable HTTP at this address (e.g. 127.0.0.1:8765) instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Refused: a token on the command line is visible to every user in the process list.
    /// Use $TOOLBELT_MCP_TOKEN or --token-file
    #[arg(long, value_name = "TOKEN", hide = true)]
    pub token: Option<String>,
    /// Require `Authorization: Bearer TOKEN` over HTTP, the token read from this file (default:
    /// $TOOLBELT_MCP_TOKEN). Required when --http binds an address other than loopback
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// Sessions open at once over HTTP (default 256; idle sessions end after 5 minutes)
    #[arg(long, value_name = "N")]
    pub max_sessions: Option<usize>,
    /// Another browser origin allowed over HTTP (repeatable; loopback origins always are)
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// Largest JSON-RPC message read, in bytes; a longer one is answered with an error naming
    /// the limit
    #[arg(long, value_name = "BYTES", default_value_t = toolbelt_mcp::server::lines::DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,
    /// Deadline of each call in milliseconds (0: none)
    #[arg(long, value_name = "N")]
    pub timeout_ms: Option<u64>,
    /// Which declarations to serve
    #[arg(long, value_parser = model_family(), default_value = "legacy")]
    pub model_family: ModelFamily,
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The merged settings, each key with the file that set it
    Show {
        /// Print JSON: {"settings", "origins", "files", "trusted"}
        #[arg(long)]
        json: bool,
        /// Workspace root whose project settings apply (default: .)
        #[arg(long = "root", value_name = "DIR")]
        root: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(args: &[&str]) -> (String, String) {
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let fast = match parse(args.clone()) {
            Ok(c) => format!("{c:?}"),
            Err(e) => format!("{:?}: {}", e.kind(), e.render()),
        };
        let full = match Cli::try_parse_from(args) {
            Ok(c) => format!("{c:?}"),
            Err(e) => format!("{:?}: {}", e.kind(), e.render()),
        };
        (fast, full)
    }

    #[test]
    fn the_call_fast_path_parses_exactly_as_the_whole_definition() {
        let cases: &[&[&str]] = &[
            &["toolbelt", "call", "read_file"],
            &["toolbelt", "call", "read_file", r#"{"file_path":"a"}"#, "--root", "/x", "--json"],
            &["toolbelt", "call", "run_shell_command", "-", "--timeout-ms", "5", "--pty", "-s"],
            &["toolbelt", "call", "grep_search", "{}", "--approval-mode", "yolo", "--events"],
            &["toolbelt", "call", "x", "--model-family", "gemini3", "--allow-sensitive", "*.pem"],
            &["toolbelt", "call", "--root", "/r", "read_file", "{}", "--policy", "p.toml"],
            // Mistakes, help and version: the fast path gives up and the full parse answers.
            &["toolbelt", "call"],
            &["toolbelt", "call", "--help"],
            &["toolbelt", "call", "-h"],
            &["toolbelt", "call", "read_file", "--nope"],
            &["toolbelt", "call", "read_file", "--timeout-ms", "soon"],
            &["toolbelt", "call", "read_file", "{}", "extra"],
            &["toolbelt", "call", "--version"],
            &["toolbelt", "--version"],
            &["toolbelt", "tools", "list"],
        ];
        for case in cases {
            let (fast, full) = both(case);
            assert_eq!(fast, full, "{case:?}");
        }
        // The comparison can fail: a parse differs from an error.
        assert!(both(&["toolbelt", "call", "read_file"]).0.contains("Call(CallArgs"));
    }
}
