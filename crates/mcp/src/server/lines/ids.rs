//! The client's request ids, each replaced by one of the transport's own on its way to rmcp
//! and given back on its answer. rmcp keys running requests by id: a request reusing the id of
//! a cancelled one still winding down got no answer, and the cancelled one's answer went out
//! under its id (issue 35, fifth attack). A cancelled request's answer is now dropped, as MCP
//! asks ("receivers SHOULD NOT send a response for the cancelled request").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, JsonRpcMessage, NumberOrString, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use toolbelt_core::sync::LockExt;

/// Requests remembered at most before the cancelled ones are forgotten (their answers, should
/// rmcp still send them, are then dropped all the same).
const LIVE: usize = 10_000;

/// The requests handed to rmcp and not answered yet.
#[derive(Clone, Default)]
pub(super) struct Ids(Arc<Mutex<Inner>>);

#[derive(Default)]
struct Inner {
    /// The last id given (the first is 1).
    next: i64,
    /// By the transport's id: the client's, and whether the client cancelled it.
    live: HashMap<i64, (RequestId, bool)>,
    /// The transport's id of each live request not cancelled, by the client's id (its key).
    by_client: HashMap<String, i64>,
}

fn key(id: &RequestId) -> String {
    id.clone().into_json_value().to_string()
}

impl Ids {
    /// A message on its way to rmcp: a request gets an id of the transport's own, and a
    /// cancellation names that id instead of the client's.
    pub(super) fn inward(
        &self,
        mut m: RxJsonRpcMessage<RoleServer>,
    ) -> RxJsonRpcMessage<RoleServer> {
        let mut inner = self.0.locked();
        match &mut m {
            JsonRpcMessage::Request(r) => {
                inner.next += 1;
                let ours = inner.next;
                let client = std::mem::replace(&mut r.id, NumberOrString::Number(ours));
                inner.by_client.insert(key(&client), ours);
                inner.live.insert(ours, (client, false));
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &mut n.notification
                    && let Some(id) = &mut c.params.request_id
                {
                    // A request rmcp never got (it waited, and is dropped) names no request of
                    // rmcp's: 0, which the transport never gives (the client's own number
                    // could be another request's id at rmcp).
                    let ours = inner.by_client.remove(&key(id)).unwrap_or(0);
                    if let Some(live) = inner.live.get_mut(&ours) {
                        live.1 = true;
                    }
                    // Cancelled requests rmcp never answers are forgotten past a bound.
                    if inner.live.len() > LIVE {
                        inner.live.retain(|_, (_, cancelled)| !*cancelled);
                    }
                    *id = NumberOrString::Number(ours);
                }
            }
            _ => {}
        }
        m
    }

    /// An answer on its way to the client, with the client's id back; `None`: its request was
    /// cancelled, and it is not sent.
    pub(super) fn outward(
        &self,
        mut m: TxJsonRpcMessage<RoleServer>,
    ) -> Option<TxJsonRpcMessage<RoleServer>> {
        let id = match &mut m {
            JsonRpcMessage::Response(r) => Some(&mut r.id),
            JsonRpcMessage::Error(e) => e.id.as_mut(),
            _ => None,
        };
        let Some(id) = id else { return Some(m) };
        let NumberOrString::Number(ours) = *id else { return Some(m) };
        let mut inner = self.0.locked();
        let (client, cancelled) = inner.live.remove(&ours)?;
        if cancelled {
            return None;
        }
        let k = key(&client);
        if inner.by_client.get(&k) == Some(&ours) {
            inner.by_client.remove(&k);
        }
        *id = client;
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rx(v: serde_json::Value) -> RxJsonRpcMessage<RoleServer> {
        serde_json::from_value(v).unwrap()
    }

    /// A cancellation naming a request rmcp never got must not reach another request whose
    /// transport id happens to be the client's number.
    #[test]
    fn a_cancellation_reaches_only_its_own_request() {
        let ids = Ids::default();
        let call = |id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let first = serde_json::to_value(ids.inward(rx(call(json!("a"))))).unwrap();
        assert_eq!(first["id"], 1);
        let cancel = |id| json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
        // The client's 1 was never handed over (it waited): it names nothing at rmcp.
        let c = serde_json::to_value(ids.inward(rx(cancel(json!(1))))).unwrap();
        assert_eq!(c["params"]["requestId"], 0);
        let c = serde_json::to_value(ids.inward(rx(cancel(json!("a"))))).unwrap();
        assert_eq!(c["params"]["requestId"], 1);
        // The cancelled request's answer is not sent.
        let answer: TxJsonRpcMessage<RoleServer> =
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "result": {}})).unwrap();
        assert!(ids.outward(answer).is_none());
    }
}
