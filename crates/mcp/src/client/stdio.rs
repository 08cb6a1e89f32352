//! A stdio server, started through the process layer: a reaper keeps the server's whole tree
//! together, so stopping the server (or toolbelt dying) leaves nothing of it running.

use std::collections::HashMap;
use std::path::Path;

use rmcp::RoleClient;
use rmcp::service::{RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;

use super::Handler;

/// Starts `command` in `dir` with the cleaned environment plus the server's own variables
/// (`vars`), and initializes it. The reaper's pid goes into `reaper` as soon as it runs.
pub(super) async fn connect(
    handler: Handler,
    command: &str,
    args: &[String],
    vars: (&HashMap<String, String>, &HashMap<String, String>),
    dir: &Path,
    reaper: &std::sync::atomic::AtomicI32,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let (inherit, env) = vars;
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        inherit.iter().map(|(k, v)| (k.into(), v.into())).collect();
    vars.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    let spawned = toolbelt_core::process::Launch::new(command, dir, &vars)
        .args(args)
        .envs([("GEMINI_CLI", "1"), ("TOOLBELT", "1")])
        .for_foreign_spawner()
        .and_then(|f| {
            f.spawn_with(|cmd| {
                TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn()
            })
        });
    let ((transport, _stderr), exit) =
        spawned.map_err(|e| format!("cannot start `{command}`: {e}"))?;
    if let Some(pid) = transport.id().and_then(|p| i32::try_from(p).ok()) {
        reaper.store(pid, std::sync::atomic::Ordering::SeqCst);
    }
    // A server that exits while something it started holds its stdout open would
    // otherwise be waited for until the connect deadline.
    tokio::select! {
        served = handler.serve(transport) => {
            served.map_err(|e| format!("initialization failed: {e}"))
        }
        status = exit.wait() => Err(match status {
            Some(s) => format!("the server exited ({s}) before it finished initializing"),
            None => "the server exited before it finished initializing".into(),
        }),
    }
}
