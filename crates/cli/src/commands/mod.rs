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

/// Reads the ARGS operand: JSON text, or `-` for stdin. Errors are usage errors. The text is
/// measured before it is parsed (at most `CALL_ARGS_BYTES`, `MESSAGE_VALUES` values; issue 47:
/// 60 MiB of tiny values on stdin took 16 GB), and stdin is read no further than the limit.
pub fn read_args(raw: &str) -> Result<serde_json::Value, String> {
    use toolbelt_core::json_in::{self, JsonBudget, JsonError};
    use toolbelt_core::limits::CALL_ARGS_BYTES;
    let text = if raw == "-" {
        let mut buf = Vec::new();
        let limit = u64::try_from(CALL_ARGS_BYTES).unwrap_or(u64::MAX);
        std::io::Read::read_to_end(&mut std::io::Read::take(std::io::stdin(), limit + 1), &mut buf)
            .map_err(|e| format!("cannot read arguments from stdin: {e}"))?;
        if buf.len() > CALL_ARGS_BYTES {
            return Err(format!(
                "the arguments on stdin are longer than the limit of {CALL_ARGS_BYTES} bytes; \
                 pass large content in a file the tool reads instead"
            ));
        }
        String::from_utf8(buf).map_err(|e| {
            format!(
                "arguments on stdin are not valid UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            )
        })?
    } else {
        raw.to_string()
    };
    json_in::parse_str(&text, JsonBudget::message(CALL_ARGS_BYTES)).map_err(|e| match e {
        JsonError::Refused(why) => format!("ARGS was not read: {why}"),
        JsonError::Invalid(e) => format!("ARGS is not valid JSON: {e}"),
    })
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
