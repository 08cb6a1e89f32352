//! What a server sends is bounded while it is read (issue 35).

use serde_json::json;
use toolbelt_core::limits::MCP_MESSAGE_VALUES;

use crate::client::{call, clients, ctx, stdio};

/// Issue 35: rmcp parsed a server's whole message at some 30 times its size (a 12 MB tool
/// list took 350 MB). An answer of 300,000 JSON values (600 KB) is now refused before it is
/// parsed, at once and saying why, and the server stays usable.
#[tokio::test]
async fn an_answer_of_too_many_values_fails_at_once_saying_why() {
    let c = clients(vec![stdio("fx", &["--values"], 20_000)]).await;
    let started = std::time::Instant::now();
    let r = call(&c, "mcp_fx_values", json!({}), ctx()).await;
    let error = r.error.expect("refused");
    assert!(
        error.message.contains(&format!("JSON values, over the limit of {MCP_MESSAGE_VALUES}")),
        "{}",
        error.message
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let r = call(&c, "mcp_fx_echo", json!({"text": "still here"}), ctx()).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    c.shutdown().await;
}
