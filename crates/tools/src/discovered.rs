//! Tools discovered by a command: `tools.discoveryCommand` prints function
//! declarations as JSON; each becomes `discovered_tool_<name>`, run through
//! `tools.callCommand <name>` with the arguments as JSON on stdin. Unlike upstream, discovery
//! and calls have a timeout and a cancelled call kills its process.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::shell::split_words;
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv,
};

pub const PREFIX: &str = "discovered_tool_";
/// Each output stream of the discovery command is limited to this (upstream's limit).
pub const MAX_DISCOVERY_OUTPUT: usize = 10 * 1024 * 1024;
/// A call's output kept per stream.
const MAX_CALL_OUTPUT: usize = 10 * 1024 * 1024;

/// Why discovery failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DiscoveryError {
    #[error("Tool discovery command is empty.")]
    Empty,
    #[error("Tool discovery command could not be started ({program}): {message}")]
    Spawn { program: String, message: String },
    #[error("Tool discovery command output exceeded size limit of {MAX_DISCOVERY_OUTPUT} bytes.")]
    TooLarge,
    #[error("Tool discovery command timed out after {0} ms.")]
    Timeout(u64),
    #[error("Tool discovery command failed with exit code {code}{}", stderr_excerpt(.stderr))]
    Failed { code: String, stderr: String },
    #[error("Tool discovery command did not return a JSON array of tools.{}", detail_excerpt(.detail))]
    NotArray { detail: String },
}

fn stderr_excerpt(s: &str) -> String {
    let s = s.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!(": {}", s.chars().take(500).collect::<String>())
    }
}

fn detail_excerpt(s: &str) -> String {
    if s.is_empty() { String::new() } else { format!(" ({s})") }
}

/// How to discover and call the tools.
#[derive(Clone, Debug)]
pub struct DiscoveryConfig {
    pub discovery_command: String,
    pub call_command: Option<String>,
    /// Where both commands run (upstream: the process's working directory).
    pub cwd: PathBuf,
    pub discovery_timeout_ms: u64,
    /// What of toolbelt's environment the commands get.
    pub env_redaction: toolbelt_core::process::EnvRedaction,
    /// The sandbox both commands run in, if any.
    pub sandbox: Option<toolbelt_core::process::Sandbox>,
}

struct Output {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: Option<std::process::ExitStatus>,
    too_large: bool,
}

async fn read_limited<R: AsyncReadExt + Unpin>(r: Option<R>, limit: usize) -> (Vec<u8>, bool) {
    let Some(mut r) = r else { return (Vec::new(), false) };
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => return (buf, false),
            Ok(n) if buf.len() + n > limit => return (buf, true),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Runs a program without a shell, feeding `stdin`, until it ends, its output passes `limit`,
/// `timeout` passes or `cancel` fires (then its process group is killed).
#[allow(clippy::too_many_arguments)]
async fn run_program(
    program: &str,
    args: &[String],
    cfg: &DiscoveryConfig,
    sandbox: Option<&toolbelt_core::process::Sandbox>,
    stdin: Option<Vec<u8>>,
    limit: usize,
    timeout: Option<Duration>,
    cancel: &tokio_util::sync::CancellationToken,
) -> std::io::Result<Option<Output>> {
    let env = toolbelt_core::process::child_env(
        &cfg.env_redaction,
        toolbelt_core::process::ChildPurpose::Tool,
    );
    let stdin_kind = if stdin.is_some() { Stdio::piped() } else { Stdio::null() };
    let toolbelt_core::process::Spawned { mut child, pid, exit } =
        toolbelt_core::process::Launch::new(program, &cfg.cwd, &env)
            .args(args)
            .sandbox(sandbox)
            .spawn(stdin_kind, Stdio::piped(), Stdio::piped())?;
    // Whatever happens below, nothing the program started outlives the call.
    let _tree = toolbelt_core::process::tree::TreeGuard::new(pid);
    let mut input = child.stdin.take();
    let feed = async move {
        if let (Some(pipe), Some(bytes)) = (input.as_mut(), stdin) {
            let _ = pipe.write_all(&bytes).await;
            let _ = pipe.shutdown().await;
        }
    };
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let work = async {
        let (_, (stdout, big_out), (stderr, big_err)) =
            tokio::join!(feed, read_limited(out, limit), read_limited(err, limit));
        let too_large = big_out || big_err;
        let status = if too_large { None } else { exit.wait().await };
        Output { stdout, stderr, status, too_large }
    };
    let far = Duration::from_secs(86_400 * 365);
    let result = tokio::select! {
        o = work => Some(o),
        () = tokio::time::sleep(timeout.unwrap_or(far)) => None,
        () = cancel.cancelled() => None,
    };
    Ok(result)
}

/// Runs the discovery command and turns its declarations into tools.
/// `workspace` is the session's: the sandbox (when set) grants its roots.
pub async fn discover(
    cfg: &DiscoveryConfig,
    workspace: &toolbelt_core::Workspace,
) -> Result<Vec<Arc<DiscoveredTool>>, DiscoveryError> {
    discover_counted(cfg, workspace).await.map(|(tools, _)| tools)
}

/// [`discover`], and how many declarations were left out past the first
/// [`DISCOVERED_TOOLS`](toolbelt_core::limits::DISCOVERED_TOOLS).
pub async fn discover_counted(
    cfg: &DiscoveryConfig,
    workspace: &toolbelt_core::Workspace,
) -> Result<(Vec<Arc<DiscoveredTool>>, usize), DiscoveryError> {
    // Split like a shell would, but run without one: operators are dropped, as upstream.
    let words = command_words(&cfg.discovery_command, &cfg.cwd);
    let Some((program, args)) = words.split_first() else { return Err(DiscoveryError::Empty) };
    let never = tokio_util::sync::CancellationToken::new();
    let timeout =
        (cfg.discovery_timeout_ms > 0).then(|| Duration::from_millis(cfg.discovery_timeout_ms));
    let sandbox = confined(cfg, workspace)
        .map_err(|e| DiscoveryError::Spawn { program: program.clone(), message: e })?;
    let out = run_program(
        program,
        args,
        cfg,
        sandbox.as_ref(),
        None,
        MAX_DISCOVERY_OUTPUT,
        timeout,
        &never,
    )
    .await
    .map_err(|e| DiscoveryError::Spawn { program: program.clone(), message: e.to_string() })?
    .ok_or(DiscoveryError::Timeout(cfg.discovery_timeout_ms))?;
    if out.too_large {
        return Err(DiscoveryError::TooLarge);
    }
    let status = out.status;
    if !status.is_some_and(|s| s.success()) {
        let code = status
            .and_then(|s| s.code())
            .map_or_else(|| "(none: killed by a signal)".into(), |c| c.to_string());
        return Err(DiscoveryError::Failed {
            code,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // Measured before it is parsed (issue 47): a list of up to DISCOVERED_TOOLS tools with
    // their schemas fits in an MCP server's budget of values.
    let budget = toolbelt_core::json_in::JsonBudget::message(MAX_DISCOVERY_OUTPUT)
        .with_values(toolbelt_core::limits::MCP_MESSAGE_VALUES);
    let parsed: Value = toolbelt_core::json_in::parse_str(text.trim(), budget)
        .map_err(|e| DiscoveryError::NotArray { detail: e.to_string() })?;
    let Value::Array(items) = parsed else {
        return Err(DiscoveryError::NotArray {
            detail: "the output is JSON but not an array".into(),
        });
    };
    let mut decls: Vec<&serde_json::Map<String, Value>> = Vec::new();
    for item in &items {
        let Some(obj) = item.as_object() else { continue };
        let nested = obj.get("function_declarations").or_else(|| obj.get("functionDeclarations"));
        match nested.and_then(Value::as_array) {
            Some(list) => decls.extend(list.iter().filter_map(Value::as_object)),
            None if obj.contains_key("name") => decls.push(obj),
            None => {}
        }
    }
    // The first ones only: 500,000 declarations in 9.4 MB of output made as many tools, 607 MB
    // on every call (issue 35).
    let limit = toolbelt_core::limits::DISCOVERED_TOOLS;
    let left_out = decls.len().saturating_sub(limit);
    decls.truncate(limit);
    let tools = decls
        .into_iter()
        .filter_map(|d| {
            let name = d.get("name")?.as_str()?.to_string();
            let description =
                d.get("description").and_then(Value::as_str).unwrap_or("").to_string();
            // `parametersJsonSchema`, else the `parameters` form (Gemini's `Schema`, whose
            // types may be upper case): upstream ignores the latter, and arguments then went
            // unchecked (issue 19, compat M11).
            let schema = d
                .get("parametersJsonSchema")
                .filter(|s| s.is_object())
                .cloned()
                .or_else(|| d.get("parameters").filter(|s| s.is_object()).map(lower_types))
                .unwrap_or_else(|| json!({}));
            Some(Arc::new(DiscoveredTool {
                full_name: format!("{PREFIX}{name}"),
                original: name,
                description,
                schema,
                cfg: cfg.clone(),
            }))
        })
        .collect();
    Ok((tools, left_out))
}

/// A Gemini `Schema` as JSON Schema: `"type": "OBJECT"` -> `"object"`, all the way down.
fn lower_types(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("type", Value::String(t)) => (k.clone(), Value::String(t.to_lowercase())),
                    _ => (k.clone(), lower_types(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(lower_types).collect()),
        other => other.clone(),
    }
}

/// The program and arguments of a command setting: split like a shell would, without one
/// (operators dropped), as upstream splits `discoveryCommand`. A `callCommand` that names an
/// existing file as a whole (a path with spaces; a relative one from `cwd`, where it runs) is
/// that program.
fn command_words(command: &str, cwd: &Path) -> Vec<String> {
    if cwd.join(command.trim()).is_file() {
        return vec![command.trim().to_string()];
    }
    split_words(command)
        .into_iter()
        .filter(|w| !toolbelt_core::shell::words::OPERATORS.contains(&w.as_str()))
        .collect()
}

/// One discovered tool.
#[derive(Debug)]
pub struct DiscoveredTool {
    /// `discovered_tool_<original>`: the name the model calls.
    full_name: String,
    /// The name the discovery command gave (passed to the call command).
    original: String,
    description: String,
    schema: Value,
    cfg: DiscoveryConfig,
}

impl DiscoveredTool {
    fn full_description(&self) -> String {
        let call = self.cfg.call_command.as_deref().unwrap_or("(no call command configured)");
        format!(
            "{}\n\nThis tool comes from the project's discovery command `{}`. Calling it runs `{} {}` in {} with the arguments as JSON on stdin. On success the command's standard output is returned as it is; otherwise the result lists Stdout, Stderr, Error, Exit Code and Signal.",
            self.description.trim_end(),
            self.cfg.discovery_command,
            call,
            self.original,
            self.cfg.cwd.display()
        )
    }
}

impl Tool for DiscoveredTool {
    fn name(&self) -> &str {
        &self.full_name
    }
    fn display_name(&self) -> &str {
        &self.full_name
    }
    fn kind(&self) -> Kind {
        Kind::Other
    }
    fn declaration(&self, _family: ModelFamily) -> Declaration {
        let mut schema = self.schema.clone();
        if schema.get("type").is_none()
            && let Some(o) = schema.as_object_mut()
        {
            o.insert("type".into(), json!("object"));
        }
        Declaration {
            name: self.full_name.clone(),
            description: self.full_description(),
            parameters: schema,
        }
    }
    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        Ok(Box::new(DiscoveredCall {
            name: self.original.clone(),
            full_name: self.full_name.clone(),
            params,
            cfg: self.cfg.clone(),
            workspace: env.workspace.clone(),
        }))
    }
}

struct DiscoveredCall {
    name: String,
    full_name: String,
    params: Value,
    cfg: DiscoveryConfig,
    workspace: Arc<toolbelt_core::Workspace>,
}

/// The configured sandbox with `workspace`'s roots, if a sandbox is set.
fn confined(
    cfg: &DiscoveryConfig,
    workspace: &toolbelt_core::Workspace,
) -> Result<Option<toolbelt_core::process::Sandbox>, String> {
    cfg.sandbox.as_ref().map(|s| workspace.confine(s)).transpose().map_err(|e| e.to_string())
}

fn failure(
    stdout: &str,
    stderr: &str,
    error: Option<&str>,
    code: Option<i32>,
    signal: Option<i32>,
) -> ToolResult {
    let or_empty = |s: &str| if s.is_empty() { "(empty)".to_string() } else { s.to_string() };
    let text = format!(
        "Stdout: {}\nStderr: {}\nError: {}\nExit Code: {}\nSignal: {}",
        or_empty(stdout),
        or_empty(stderr),
        error.unwrap_or("(none)"),
        code.map_or_else(|| "(none)".into(), |c| c.to_string()),
        signal.map_or_else(|| "(none)".into(), |s| s.to_string()),
    );
    ToolResult::simple_error(
        ErrorType::DiscoveredToolExecutionError,
        toolbelt_core::result::untrusted(&text),
    )
}

#[async_trait]
impl Invocation for DiscoveredCall {
    fn description(&self) -> String {
        let args = serde_json::to_string(&self.params).unwrap_or_default();
        format!("{} {args}", self.full_name)
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        Some(ConfirmationDetails::Info {
            title: format!("Confirm: {}", self.full_name),
            prompt: format!(
                "Run `{} {}` with {}",
                self.cfg.call_command.as_deref().unwrap_or("?"),
                self.name,
                serde_json::to_string(&self.params).unwrap_or_default()
            ),
            urls: Vec::new(),
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let Some(call) = self.cfg.call_command.as_deref().filter(|c| !c.trim().is_empty()) else {
            return failure("", "", Some("no tools.callCommand is configured"), None, None);
        };
        let input = serde_json::to_vec(&self.params).unwrap_or_default();
        // Split like the discovery command (`node call-tool.js` failed with "No such file":
        // upstream runs the whole string as one program path; compat M11).
        let words = command_words(call, &self.cfg.cwd);
        let Some((program, rest)) = words.split_first() else {
            return failure("", "", Some("tools.callCommand names no program"), None, None);
        };
        let mut args = rest.to_vec();
        args.push(self.name.clone());
        let sandbox = match confined(&self.cfg, &self.workspace) {
            Ok(s) => s,
            Err(e) => return failure("", "", Some(&e), None, None),
        };
        let ran = run_program(
            program,
            &args,
            &self.cfg,
            sandbox.as_ref(),
            Some(input),
            MAX_CALL_OUTPUT,
            None,
            &ctx.cancel,
        )
        .await;
        let out = match ran {
            Ok(Some(o)) => o,
            Ok(None) => {
                return failure(
                    "",
                    "",
                    Some("the call was cancelled or timed out and its process was stopped"),
                    None,
                    None,
                );
            }
            Err(e) => {
                return failure("", "", Some(&format!("could not start {call}: {e}")), None, None);
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if out.too_large {
            return failure(
                &stdout,
                &stderr,
                Some("output exceeded 10485760 bytes; the process was stopped"),
                None,
                None,
            );
        }
        #[cfg(unix)]
        let signal = {
            use std::os::unix::process::ExitStatusExt;
            out.status.and_then(|s| s.signal())
        };
        #[cfg(not(unix))]
        let signal: Option<i32> = None;
        let code = out.status.and_then(|s| s.code());
        if code == Some(0) && signal.is_none() && stderr.is_empty() {
            // A program's output: outside content for the model.
            return ToolResult::text(toolbelt_core::result::untrusted(&stdout), stdout);
        }
        failure(&stdout, &stderr, None, code, signal)
    }
}
