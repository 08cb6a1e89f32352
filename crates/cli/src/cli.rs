//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one tool call through the whole pipeline (validation, policy, confirmation, execution)
    Call(CallArgs),
    /// List the tools or print their declarations
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Ask the policy engine about a call without running it
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Default,
    #[value(name = "auto_edit", alias = "auto-edit", alias = "autoEdit")]
    AutoEdit,
    Yolo,
    Plan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Family {
    Legacy,
    #[value(name = "gemini-3")]
    Gemini3,
}

/// Options every command that builds a session shares.
#[derive(Debug, Args)]
pub struct SessionArgs {
    /// Approval mode
    #[arg(long, value_enum, default_value = "default")]
    pub approval_mode: Mode,
    /// A policy file or folder of *.toml files, loaded at the user tier (repeatable)
    #[arg(long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,
    /// Treat the run as headless even on a terminal (ask_user becomes an error)
    #[arg(long, conflicts_with = "interactive")]
    pub non_interactive: bool,
    /// Treat the run as interactive even without a terminal on stdin
    #[arg(long)]
    pub interactive: bool,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// Tool name, e.g. read_file
    pub tool: String,
    /// Arguments as a JSON object; `-` reads them from stdin
    #[arg(default_value = "{}")]
    pub args: String,
    /// Workspace root (repeatable; the first is where relative paths start; default: .)
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// Print one JSON object: name, response, llmContent, returnDisplay, error
    #[arg(long)]
    pub json: bool,
    /// Deadline for the call in milliseconds (0: none; default 180000)
    #[arg(long, value_name = "N")]
    pub timeout_ms: Option<u64>,
    /// Which declarations and response shape to use
    #[arg(long, value_enum, default_value = "legacy")]
    pub model_family: Family,
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

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Names, kinds and display names of the built-in tools
    List {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Function declarations as JSON (all tools, or one)
    Schema {
        tool: Option<String>,
        #[arg(long, value_enum, default_value = "legacy")]
        model_family: Family,
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
}
