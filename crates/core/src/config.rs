//! Typed settings that the engine and tools read. Layers: defaults < user file < project file <
//! environment < flags; this module owns the defaults and the environment layer, the binary adds
//! flags. Units are in key names.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Default deadline of one tool call (3 minutes).
pub const DEFAULT_TOOL_CALL_TIMEOUT_MS: u64 = 180_000;
/// Upstream's `tools.truncateToolOutputThreshold` default.
pub const DEFAULT_TRUNCATE_THRESHOLD_CHARS: usize = 40_000;

/// Key and credential files refused by default, on top of upstream's `.git`, `.env`,
/// `node_modules` and `gha-creds-*.json` segment rules.
pub const DEFAULT_SENSITIVE_PATHS: &[&str] = &[
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    ".env*",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    ".netrc*",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".ssh",
    ".aws",
    ".docker",
    ".gnupg",
    // The tokens a home folder keeps (issue 46: a workspace at `~` served them): Kubernetes,
    // Terraform, Vault, Azure, gcloud's token cache, and shell and REPL histories.
    ".kube",
    ".terraform.d",
    ".vault-token",
    ".azure",
    "access_tokens.db",
    ".*_history",
    ".history",
    "fish_history",
    ".lesshst",
    ".viminfo",
    ".gitconfig",
    "*credentials*",
    "*secret*",
];

/// The engine's typed settings: defaults < settings files < environment < flags.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Deadline for every tool call; 0 disables it.
    pub tool_call_timeout_ms: u64,
    /// Per-tool deadlines that override `tool_call_timeout_ms`.
    pub tool_timeouts_ms: BTreeMap<String, u64>,
    /// A deadline no call passes, whatever the settings give its tool (`--timeout-ms`: a
    /// setting of 600,000 ms for one MCP server outlasted it; issue 35).
    #[serde(skip)]
    pub tool_call_timeout_cap_ms: Option<u64>,
    /// Text longer than this (for tools whose output the engine bounds) is cut and saved to a file.
    pub truncate_tool_output_threshold_chars: usize,
    /// Glob patterns (matched against each path segment) of files no tool may touch.
    pub sensitive_paths: Vec<String>,
    /// Glob patterns exempted from the sensitive-path rules (built-in ones included).
    pub allow_sensitive_paths: Vec<String>,
    /// Lets the workspace be `/`, the home folder, or a folder that holds it
    /// (`TOOLBELT_ALLOW_HOME_WORKSPACE=1`): every file of the account would be the tools'.
    pub allow_home_or_root_workspace: bool,
    /// Whether file tools honour `.gitignore` (inside git repositories).
    pub respect_git_ignore: bool,
    /// Whether file tools honour `.geminiignore`.
    pub respect_gemini_ignore: bool,
    /// The sandbox commands run in (shell, background, hooks, discovered tools); `None`: none.
    /// Set by the session from `--sandbox`, `tools.sandbox` or `GEMINI_SANDBOX`.
    #[serde(skip)]
    pub sandbox: Option<crate::process::Sandbox>,
    /// toolbelt's own state folder (`~/.toolbelt`): saved outputs live under `tmp/`.
    pub home_dir: PathBuf,
    /// The global context file `save_memory` writes (upstream: `~/.gemini/GEMINI.md`).
    pub memory_file: PathBuf,
    /// web_fetch takes one `url` and returns the page itself (upstream's experimental direct
    /// mode) instead of a prompt processed by the model.
    pub web_fetch_direct: bool,
    /// Deadline of one web fetch, redirects included.
    pub web_fetch_timeout_ms: u64,
    /// Largest body web_fetch reads.
    pub web_fetch_max_bytes: u64,
    /// Hosts (`host` or `host:port`) web tools may reach although they are private or
    /// loopback; by default every private, loopback and link-local address is refused.
    pub web_allowed_private_hosts: Vec<String>,
    /// Google Custom Search credentials (`GOOGLE_API_KEY`, `GOOGLE_CSE_ID`): with both,
    /// google_web_search uses the Custom Search JSON API instead of the model.
    pub google_api_key: Option<String>,
    /// The Custom Search engine id for google_web_search (with `google_api_key`).
    pub google_cse_id: Option<String>,
    /// The Custom Search endpoint.
    pub google_search_url: String,
    /// A shell command that prints nothing for this long is stopped (upstream: 300 s); 0 disables.
    pub shell_inactivity_timeout_ms: u64,
    /// A shell command whose last line looks like a prompt and that then prints nothing for this
    /// long is stopped and reported as waiting for input; 0 disables.
    pub shell_prompt_idle_ms: u64,
    /// Between SIGTERM and SIGKILL when a command's process group is stopped.
    pub shell_kill_grace_ms: u64,
    /// Run shell commands on a pseudo-terminal (programs then print as they would for a
    /// person: colours, progress bars); the output is rendered as the terminal shows it.
    pub shell_pty: bool,
    /// Largest file the edit tools (write_file, replace) read and rewrite; larger ones are
    /// refused before anything is read (as read_file's 20 MiB).
    pub edit_max_file_bytes: u64,
    /// Output of one command kept in memory (first and last halves, 1 MiB in all by default;
    /// upstream keeps 16 MB). Beyond it everything goes to a file that the notice names.
    pub shell_output_cap_bytes: usize,
    /// What of toolbelt's environment its children get (`security.environmentVariableRedaction`).
    pub env_redaction: crate::process::EnvRedaction,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            tool_call_timeout_ms: DEFAULT_TOOL_CALL_TIMEOUT_MS,
            tool_call_timeout_cap_ms: None,
            tool_timeouts_ms: BTreeMap::new(),
            truncate_tool_output_threshold_chars: DEFAULT_TRUNCATE_THRESHOLD_CHARS,
            sensitive_paths: DEFAULT_SENSITIVE_PATHS.iter().map(|s| s.to_string()).collect(),
            allow_sensitive_paths: Vec::new(),
            allow_home_or_root_workspace: false,
            respect_git_ignore: true,
            respect_gemini_ignore: true,
            sandbox: None,
            home_dir: default_home_dir(),
            memory_file: default_memory_file(),
            web_fetch_direct: false,
            web_fetch_timeout_ms: 10_000,
            web_fetch_max_bytes: 10 * 1024 * 1024,
            web_allowed_private_hosts: Vec::new(),
            google_api_key: None,
            google_cse_id: None,
            google_search_url: "https://www.googleapis.com/customsearch/v1".into(),
            shell_inactivity_timeout_ms: 300_000,
            shell_pty: false,
            shell_prompt_idle_ms: 5_000,
            shell_kill_grace_ms: 500,
            shell_output_cap_bytes: 1024 * 1024,
            edit_max_file_bytes: 20 * 1024 * 1024,
            env_redaction: crate::process::EnvRedaction::default(),
        }
    }
}

/// `~/.gemini/GEMINI.md`, the file Gemini CLI's memory tool wrote (else one in toolbelt's home).
pub fn default_memory_file() -> PathBuf {
    match crate::files::user_home() {
        Some(home) => home.join(".gemini").join("GEMINI.md"),
        None => default_home_dir().join("GEMINI.md"),
    }
}

/// `$TOOLBELT_HOME`, else `~/.toolbelt`, else a folder in the temp dir.
pub fn default_home_dir() -> PathBuf {
    crate::files::state_dir()
}

/// A malformed setting, naming where it came from.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: {key} must be {expected}, got {value:?}")]
pub struct ConfigError {
    /// Where the value came from (an environment variable's name).
    pub source_name: String,
    /// The setting it was meant for.
    pub key: String,
    /// What was expected, e.g. "a whole number".
    pub expected: &'static str,
    /// The value as given.
    pub value: String,
}

impl Config {
    /// The timeout for one tool, in ms (0 = none).
    pub fn timeout_ms_for(&self, tool: &str) -> u64 {
        let t = self.tool_timeouts_ms.get(tool).copied().unwrap_or(self.tool_call_timeout_ms);
        match self.tool_call_timeout_cap_ms {
            Some(cap) if cap > 0 && (t == 0 || t > cap) => cap,
            _ => t,
        }
    }

    /// Applies the environment layer: `TOOLBELT_TOOL_CALL_TIMEOUT_MS`,
    /// `TOOLBELT_TRUNCATE_TOOL_OUTPUT_THRESHOLD_CHARS`, `TOOLBELT_SHELL_INACTIVITY_TIMEOUT_MS`,
    /// `TOOLBELT_SHELL_PROMPT_IDLE_MS`, `TOOLBELT_SHELL_PTY` (1/0), `TOOLBELT_ALLOW_SENSITIVE_PATHS`
    /// (comma-separated), `TOOLBELT_ALLOW_HOME_WORKSPACE` (1/0).
    pub fn apply_env(&mut self) -> Result<(), ConfigError> {
        self.apply_vars(|k| std::env::var(k).ok())
    }

    fn apply_vars(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        let num = |key: &str, v: String| -> Result<u64, ConfigError> {
            v.trim().parse::<u64>().map_err(|_| ConfigError {
                source_name: "environment".into(),
                key: key.into(),
                expected: "a non-negative integer",
                value: v,
            })
        };
        if let Some(v) = get("TOOLBELT_TOOL_CALL_TIMEOUT_MS") {
            self.tool_call_timeout_ms = num("TOOLBELT_TOOL_CALL_TIMEOUT_MS", v)?;
        }
        if let Some(v) = get("TOOLBELT_TRUNCATE_TOOL_OUTPUT_THRESHOLD_CHARS") {
            let n = num("TOOLBELT_TRUNCATE_TOOL_OUTPUT_THRESHOLD_CHARS", v)?;
            self.truncate_tool_output_threshold_chars = usize::try_from(n).unwrap_or(usize::MAX);
        }
        for (var, slot) in [
            ("GOOGLE_API_KEY", &mut self.google_api_key),
            ("GOOGLE_CSE_ID", &mut self.google_cse_id),
        ] {
            if let Some(v) = get(var).filter(|v| !v.trim().is_empty()) {
                *slot = Some(v.trim().to_string());
            }
        }
        if let Some(v) = get("TOOLBELT_GOOGLE_SEARCH_URL").filter(|v| !v.is_empty()) {
            self.google_search_url = v;
        }
        if let Some(v) = get("TOOLBELT_WEB_ALLOWED_PRIVATE_HOSTS") {
            self.web_allowed_private_hosts =
                v.split(',').map(str::trim).filter(|h| !h.is_empty()).map(String::from).collect();
        }
        if let Some(v) = get("TOOLBELT_WEB_FETCH_DIRECT") {
            self.web_fetch_direct = matches!(v.trim(), "1" | "true" | "yes");
        }
        if let Some(v) = get("TOOLBELT_EDIT_MAX_FILE_BYTES") {
            self.edit_max_file_bytes = num("TOOLBELT_EDIT_MAX_FILE_BYTES", v)?;
        }
        if let Some(v) = get("TOOLBELT_SHELL_INACTIVITY_TIMEOUT_MS") {
            self.shell_inactivity_timeout_ms = num("TOOLBELT_SHELL_INACTIVITY_TIMEOUT_MS", v)?;
        }
        if let Some(v) = get("TOOLBELT_SHELL_PROMPT_IDLE_MS") {
            self.shell_prompt_idle_ms = num("TOOLBELT_SHELL_PROMPT_IDLE_MS", v)?;
        }
        if let Some(v) = get("TOOLBELT_SHELL_PTY") {
            self.shell_pty = match v.trim() {
                "1" | "true" | "yes" => true,
                "0" | "false" | "no" | "" => false,
                _ => {
                    return Err(ConfigError {
                        source_name: "environment".into(),
                        key: "TOOLBELT_SHELL_PTY".into(),
                        expected: "1 or 0",
                        value: v,
                    });
                }
            };
        }
        if let Some(v) = get("TOOLBELT_ALLOW_HOME_WORKSPACE") {
            self.allow_home_or_root_workspace = match v.trim() {
                "1" | "true" => true,
                "0" | "false" | "" => false,
                _ => {
                    return Err(ConfigError {
                        source_name: "TOOLBELT_ALLOW_HOME_WORKSPACE".into(),
                        key: "allow_home_or_root_workspace".into(),
                        expected: "1 or 0",
                        value: v,
                    });
                }
            };
        }
        if let Some(v) = get("TOOLBELT_ALLOW_SENSITIVE_PATHS") {
            self.allow_sensitive_paths
                .extend(v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_layer_overrides_defaults_and_rejects_garbage() {
        let mut c = Config::default();
        c.apply_vars(|k| match k {
            "TOOLBELT_TOOL_CALL_TIMEOUT_MS" => Some("250".into()),
            "TOOLBELT_ALLOW_SENSITIVE_PATHS" => Some("*.pem, .env.local".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(c.tool_call_timeout_ms, 250);
        assert_eq!(c.allow_sensitive_paths, vec!["*.pem", ".env.local"]);

        let err = Config::default()
            .apply_vars(|k| (k == "TOOLBELT_TOOL_CALL_TIMEOUT_MS").then(|| "soon".to_string()))
            .unwrap_err();
        assert!(err.to_string().contains("TOOLBELT_TOOL_CALL_TIMEOUT_MS"), "{err}");
    }

    #[test]
    fn per_tool_timeout_overrides_global() {
        let mut c = Config::default();
        c.tool_timeouts_ms.insert("read_file".into(), 5);
        assert_eq!(c.timeout_ms_for("read_file"), 5);
        assert_eq!(c.timeout_ms_for("glob"), DEFAULT_TOOL_CALL_TIMEOUT_MS);
    }
}
