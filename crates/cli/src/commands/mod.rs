pub mod acp;
pub mod call;
pub mod config;
pub mod help;
pub mod mcp;
pub mod model;
pub mod policy;
pub mod run;
pub mod sandbox;
pub mod tools;
pub mod trust;

/// Exit statuses of the CLI contract.
pub const EXIT_OK: i32 = 0;
pub const EXIT_TOOL_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_REFUSED: i32 = 3;

/// Reads the ARGS operand: JSON text, or `-` for stdin. Errors are usage errors.
pub fn read_args(raw: &str) -> Result<serde_json::Value, String> {
    let text = if raw == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .map_err(|e| format!("cannot read arguments from stdin: {e}"))?;
        String::from_utf8(buf).map_err(|e| {
            format!(
                "arguments on stdin are not valid UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            )
        })?
    } else {
        raw.to_string()
    };
    serde_json::from_str(&text).map_err(|e| format!("ARGS is not valid JSON: {e}"))
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP: the running calls are then cancelled and whatever
/// they started is stopped before toolbelt exits.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let hup = signal(SignalKind::hangup());
        if let (Ok(mut term), Ok(mut hup)) = (term, hup) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
