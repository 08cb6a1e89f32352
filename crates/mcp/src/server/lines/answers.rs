//! The transport's own answers: JSON-RPC errors for what it refuses, and the error that stands
//! in for the client's answer once its input ended.

use rmcp::RoleServer;
use rmcp::service::RxJsonRpcMessage;
use serde_json::{Value, json};

use super::flow;

/// A JSON-RPC error answer.
pub(crate) fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The error that stands in for the client's answer to `id` once its input ended.
pub(super) fn unanswerable(id: rmcp::model::RequestId) -> RxJsonRpcMessage<RoleServer> {
    rmcp::model::JsonRpcMessage::Error(rmcp::model::JsonRpcError {
        jsonrpc: rmcp::model::JsonRpcVersion2_0,
        id: Some(id),
        error: rmcp::model::ErrorData::new(
            rmcp::model::ErrorCode(-32000),
            "the client closed its input before answering",
            None,
        ),
    })
}

/// The answer to a request whose id is pending.
pub(super) fn duplicate(id: Value) -> Value {
    error(
        id.clone(),
        -32600,
        format!(
            "Invalid Request: the id {id} belongs to a request that has not been answered yet; use a new id for each request"
        ),
    )
}

/// The answer to a request when too much waits already.
pub(super) fn busy(id: Value) -> Value {
    error(
        id,
        -32000,
        format!(
            "Server busy: {} requests run and {} MiB of requests wait; send this one again once answers come back",
            flow::MAX_RUNNING,
            flow::MAX_WAITING_BYTES >> 20
        ),
    )
}
