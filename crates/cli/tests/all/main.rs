//! Integration tests that run the `toolbelt` binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(unix)]
mod acp;
#[cfg(unix)]
mod acp_editor;
#[cfg(unix)]
mod acp_protocol;
#[cfg(unix)]
mod approval_boundary;
#[cfg(unix)]
mod bounded_json;
mod bounds;
mod call;
mod config;
#[cfg(unix)]
mod docs;
#[cfg(unix)]
mod escapes;
mod gemini_settings;
#[cfg(unix)]
mod grants;
mod ignore_files;
#[cfg(unix)]
mod mcp;
#[cfg(unix)]
mod mcp_client;
#[cfg(unix)]
mod mcp_protocol;
#[cfg(unix)]
mod mcp_session;
#[cfg(unix)]
mod models;
#[cfg(target_os = "linux")]
mod no_openat2;
#[cfg(target_os = "linux")]
mod orphans;
mod policy;
mod run;
#[cfg(unix)]
mod run_progress;
#[cfg(target_os = "linux")]
mod sandbox;
#[cfg(target_os = "linux")]
mod sandbox_seams;
#[cfg(unix)]
mod secret_seams;
#[cfg(unix)]
mod secrets;
#[cfg(unix)]
mod shell;
#[cfg(unix)]
mod slash_commands;
mod tools;
#[cfg(unix)]
mod web_bounds;

use std::io::Write;
use std::process::{Command, Stdio};

use toolbelt_test_support::TempTree;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!("stdout is not JSON ({e}): {:?} / {:?}", self.stdout, self.stderr)
        })
    }
}

/// The binary under test: this build's, or `TOOLBELT_TEST_BINARY` (to watch a test fail on
/// an older build: `TOOLBELT_TEST_BINARY=/old/toolbelt cargo test ...`).
pub fn binary() -> std::ffi::OsString {
    std::env::var_os("TOOLBELT_TEST_BINARY")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_toolbelt").into())
}

/// `toolbelt ARGS` in the tree's root, with the tree's home as toolbelt's and the user's.
pub fn command(tree: &TempTree, args: &[&str]) -> Command {
    let mut c = Command::new(binary());
    c.args(args)
        .current_dir(tree.root())
        .env("TOOLBELT_HOME", tree.home())
        // No ~/.gemini settings or policies of the machine's user leak into a test.
        .env("HOME", tree.home())
        .env_remove("TOOLBELT_TRUST_WORKSPACE")
        .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
        .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("GEMINI_RESTRICTED_MODE")
        .env_remove("TOOLBELT_TOOL_CALL_TIMEOUT_MS")
        .env_remove("TOOLBELT_ALLOW_SENSITIVE_PATHS")
        // Nor the prompt file or sign-in of the machine's user.
        .env_remove("GEMINI_SYSTEM_MD")
        .env_remove("GOOGLE_GENAI_USE_VERTEXAI");
    c
}

/// Runs `toolbelt ARGS` in the tree's root, with stdin from `input` (not a terminal).
pub fn toolbelt(tree: &TempTree, args: &[&str], input: Option<&str>) -> Run {
    let mut child = command(tree, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolbelt");
    {
        let mut stdin = child.stdin.take().unwrap();
        if let Some(text) = input {
            stdin.write_all(text.as_bytes()).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `toolbelt mcp ARGS` over stdio, initialized: the child, its stdin and its stdout (lines).
#[cfg(unix)]
pub fn mcp_stdio(
    tree: &TempTree,
    args: &[&str],
) -> (std::process::Child, std::process::ChildStdin, std::io::BufReader<std::process::ChildStdout>)
{
    mcp_stdio_in(tree, tree.root(), args)
}

/// [`mcp_stdio`] started in `cwd`.
#[cfg(unix)]
pub fn mcp_stdio_in(
    tree: &TempTree,
    cwd: &std::path::Path,
    args: &[&str],
) -> (std::process::Child, std::process::ChildStdin, std::io::BufReader<std::process::ChildStdout>)
{
    use std::io::BufRead;
    let mut argv = vec!["mcp"];
    argv.extend_from_slice(args);
    let (child, mut stdin, mut stdout) = mcp_spawn(command(tree, &argv).current_dir(cwd));
    writeln!(stdin, "{}", mcp_initialize()).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    (child, stdin, stdout)
}

/// `command` (a `toolbelt mcp`) started with pipes for stdin and stdout, stderr dropped, not
/// initialized.
#[cfg(unix)]
pub fn mcp_spawn(
    command: &mut Command,
) -> (std::process::Child, std::process::ChildStdin, std::io::BufReader<std::process::ChildStdout>)
{
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn toolbelt mcp");
    let stdin = child.stdin.take().unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

/// A client's `initialize` request (id 0), one line.
pub fn mcp_initialize() -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// A field of `/proc/PID/status` in kB (`VmRSS`, `VmHWM`).
#[cfg(target_os = "linux")]
pub fn status_kb(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(u64::MAX)
}
