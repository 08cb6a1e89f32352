//! The server's newline-delimited JSON-RPC transport (stdio), answering every line.
//!
//! rmcp's own line transport drops what it cannot parse with a log line, so a client that sent
//! malformed JSON, an over-long message or a request with missing params waits forever. Here
//! each line gets exactly what JSON-RPC 2.0 prescribes: `-32700 Parse error` (id `null`) for
//! text that is not JSON, `-32600 Invalid Request` for JSON that is not a request and for a
//! message over the size limit (with the request's id when it can be read from the start of
//! the message), `-32602 Invalid params` for a known method with missing or malformed params,
//! `-32601 Method not found` for any other method. Notifications never get an answer.
//! Then it goes on reading.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The default limit of one message: rmcp's.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How much of an over-long message is kept to find its id.
const ID_PREFIX: usize = 4096;

/// The methods a client may call: a request for one of these that rmcp cannot read has bad
/// params, not an unknown method.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/directory/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// Reads newline-delimited JSON-RPC from `R`, writes answers to `W`.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read (its first bytes past the limit) and its length so far.
    line: (Vec<u8>, usize),
    write: Arc<Mutex<W>>,
    max_bytes: usize,
    /// An `initialize` request went to the server: before it, rmcp stops at anything but a
    /// request, so notifications and responses are dropped here.
    initialized: bool,
    /// Ids of the client's requests not answered yet: a second request with one of them would
    /// be lost (rmcp keys requests by id), so it is refused.
    pending: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport whose messages may be at most `max_bytes` long (newline excluded).
    pub fn new(read: R, write: W, max_bytes: usize) -> Self {
        Self {
            read: BufReader::with_capacity(64 * 1024, read),
            line: (Vec::new(), 0),
            write: Arc::new(Mutex::new(write)),
            max_bytes: max_bytes.max(1),
            initialized: false,
            pending: Arc::default(),
        }
    }

    /// Writes one JSON value and a newline, under the lock every answer takes.
    async fn write_line(write: &Mutex<W>, value: &impl serde::Serialize) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(value)?;
        line.push(b'\n');
        let mut w = write.lock().await;
        w.write_all(&line).await?;
        w.flush().await
    }

    /// The next line, or what stopped it: `Ok(None)` at the end of input. Never holds more
    /// than the limit: past it only the first bytes are kept. Cancel-safe: rmcp's service loop
    /// drops this future whenever other work is ready first, so a line's bytes taken from the
    /// buffer so far wait in `self.line`, not in the future.
    async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let (n, found) = {
                let buf = self.read.fill_buf().await?;
                if buf.is_empty() {
                    return Ok((self.line.1 > 0).then(|| self.take_line()));
                }
                let (n, found) = match buf.iter().position(|b| *b == b'\n') {
                    Some(i) => (i, true),
                    None => (buf.len(), false),
                };
                let (line, total) = &mut self.line;
                if *total + n > self.max_bytes {
                    line.truncate(ID_PREFIX);
                    let room = ID_PREFIX.saturating_sub(line.len()).min(n);
                    line.extend_from_slice(&buf[..room]);
                } else {
                    line.extend_from_slice(&buf[..n]);
                }
                *total += n;
                (n, found)
            };
            self.read.consume(n + usize::from(found));
            if found {
                return Ok(Some(self.take_line()));
            }
        }
    }

    /// The line read so far, whole or over the limit; the next one starts empty.
    fn take_line(&mut self) -> Line {
        let (line, total) = std::mem::take(&mut self.line);
        if total > self.max_bytes {
            Line::TooLong { prefix: line, total }
        } else {
            Line::Whole(line)
        }
    }
}

enum Line {
    Whole(Vec<u8>),
    TooLong { prefix: Vec<u8>, total: usize },
}

/// What to do with one line: hand a message to the server, answer it here, or drop it
/// (blank lines, notifications and responses that cannot be read).
#[derive(Debug)]
pub enum Verdict {
    /// A message for the server.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An error answer to write back.
    Answer(Value),
    /// Nothing to do.
    Ignore,
}

/// A JSON-RPC error answer.
pub(crate) fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Judges one line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Verdict::Answer(error(
                Value::Null,
                -32700,
                format!("Parse error: the message is not valid UTF-8 ({e})"),
            ));
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Answer(error(Value::Null, -32700, format!("Parse error: {e}")));
        }
    };
    let Value::Object(obj) = &value else {
        let what = if value.is_array() {
            "batches are not supported (MCP 2025-06-18 removed them); send one message per line"
        } else {
            "a message must be a JSON object"
        };
        return Verdict::Answer(error(Value::Null, -32600, format!("Invalid Request: {what}")));
    };
    let id = obj.get("id").cloned();
    let valid_id = matches!(&id, Some(Value::String(_))) || id.as_ref().is_some_and(is_integer);
    if id.is_some() && !valid_id {
        return Verdict::Answer(error(
            Value::Null,
            -32600,
            "Invalid Request: the id must be a string or an integer".into(),
        ));
    }
    let invalid = |why: &str| {
        Verdict::Answer(error(
            id.clone().unwrap_or(Value::Null),
            -32600,
            format!("Invalid Request: {why}"),
        ))
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    let is_response = obj.contains_key("result") || obj.contains_key("error");
    // A request's method and whether it has params (a response has no method).
    let call = match (obj.get("method"), is_response) {
        (Some(Value::String(m)), false) => Some((m.clone(), obj.contains_key("params"))),
        (Some(Value::String(_)), true) => {
            return invalid(
                "a message is a request (\"method\") or a response (\"result\"/\"error\"), not both",
            );
        }
        (Some(_), _) => return invalid("\"method\" must be a string"),
        (None, true) if id.is_some() => None,
        (None, _) => {
            return invalid(
                "a request needs \"method\" (and \"id\"), a response \"id\" and \"result\" or \"error\"",
            );
        }
    };
    // Ids the server can carry: strings and integers that fit in 64 bits, signed.
    if let Some(Value::Number(n)) = &id
        && n.as_i64().is_none()
    {
        return invalid("an integer id must fit in a signed 64-bit integer");
    }
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
        // A request only the catch-all variant took: an unknown method, or a known one whose
        // params did not fit.
        Ok(rmcp::model::JsonRpcMessage::Request(r))
            if matches!(r.request, rmcp::model::ClientRequest::CustomRequest(_)) =>
        {
            let (method, has_params) = call.unwrap_or_default();
            Verdict::Answer(method_error(r.id.into_json_value(), &method, has_params))
        }
        Ok(msg) => Verdict::Message(Box::new(msg)),
        Err(e) => match (id, call) {
            (Some(id), Some((method, has_params))) => {
                Verdict::Answer(method_error(id, &method, has_params))
            }
            _ => {
                tracing::debug!("dropped a message that cannot be read: {e}");
                Verdict::Ignore
            }
        },
    }
}

fn is_integer(v: &Value) -> bool {
    v.as_i64().is_some() || v.as_u64().is_some()
}

/// `-32602` for a known method whose params do not fit, `-32601` for any other method.
fn method_error(id: Value, method: &str, has_params: bool) -> Value {
    if !KNOWN_METHODS.contains(&method) {
        return error(id, -32601, format!("Method not found: {method}"));
    }
    let why = if has_params {
        format!("the params of {method} do not have the shape the method takes")
    } else {
        format!("{method} needs params")
    };
    error(id, -32602, format!("Invalid params: {why}"))
}

/// The top-level `id` of a JSON object's text, read from its start (an over-long message's
/// first bytes): a string or an integer at depth one.
pub fn leading_id(prefix: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(prefix);
    let s = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < s.len() {
        match s[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < s.len() && s[j] != b'"' {
                    j += if s[j] == b'\\' { 2 } else { 1 };
                }
                if j >= s.len() {
                    return None;
                }
                i = j + 1;
                if depth == 1 && &s[start..j] == b"id" {
                    let rest = text[i..].trim_start();
                    if let Some(value) = rest.strip_prefix(':') {
                        return scalar(value.trim_start());
                    }
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A JSON string or integer at the start of `s`.
fn scalar(s: &str) -> Option<Value> {
    let mut stream = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    match stream.next()?.ok()? {
        v @ Value::String(_) => Some(v),
        v if is_integer(&v) => Some(v),
        _ => None,
    }
}

impl<R, W> LineTransport<R, W> {
    /// What of a readable message goes to the server: before `initialize`, notifications and
    /// responses are dropped; a request whose id is still pending is answered here.
    fn admit(
        &mut self,
        msg: RxJsonRpcMessage<RoleServer>,
    ) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Value> {
        use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage};
        use toolbelt_core::sync::LockExt as _;
        // A cancelled request is never answered (rmcp drops its response): its id is free again.
        if let JsonRpcMessage::Notification(n) = &msg
            && let ClientNotification::CancelledNotification(c) = &n.notification
            && let Some(id) = &c.params.request_id
        {
            self.pending.locked().remove(&id.clone().into_json_value().to_string());
        }
        let JsonRpcMessage::Request(r) = &msg else {
            if !self.initialized {
                tracing::debug!("dropped a notification or response sent before initialize");
                return Ok(None);
            }
            return Ok(Some(msg));
        };
        let id = r.id.clone().into_json_value();
        if !self.pending.locked().insert(id.to_string()) {
            return Err(error(
                id.clone(),
                -32600,
                format!(
                    "Invalid Request: the id {id} belongs to a request that has not been answered yet; use a new id for each request"
                ),
            ));
        }
        if matches!(r.request, ClientRequest::InitializeRequest(_)) {
            self.initialized = true;
        }
        Ok(Some(msg))
    }
}

impl<R, W> rmcp::transport::Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        let pending = self.pending.clone();
        async move {
            use rmcp::model::JsonRpcMessage;
            use toolbelt_core::sync::LockExt as _;
            // An answer frees its id for the client's next request.
            let answered = match &item {
                JsonRpcMessage::Response(r) => Some(r.id.clone()),
                JsonRpcMessage::Error(e) => e.id.clone(),
                _ => None,
            };
            if let Some(id) = answered {
                pending.locked().remove(&id.into_json_value().to_string());
            }
            Self::write_line(&write, &item).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = match self.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(e) => {
                    tracing::debug!("stdin: {e}");
                    return None;
                }
            };
            let answer = match line {
                Line::Whole(bytes) => match judge(&bytes) {
                    Verdict::Message(m) => match self.admit(*m) {
                        Ok(Some(m)) => return Some(m),
                        Ok(None) => continue,
                        Err(a) => a,
                    },
                    Verdict::Ignore => continue,
                    Verdict::Answer(a) => a,
                },
                Line::TooLong { prefix, total } => error(
                    leading_id(&prefix).unwrap_or(Value::Null),
                    -32600,
                    format!(
                        "Invalid Request: the message has more than {} bytes ({total} read); the limit is {} bytes (toolbelt mcp --max-message-bytes)",
                        self.max_bytes, self.max_bytes
                    ),
                ),
            };
            if let Err(e) = Self::write_line(&self.write, &answer).await {
                tracing::debug!("stdout: {e}");
                return None;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leading_id_is_the_top_level_one() {
        let id = |s: &str| leading_id(s.as_bytes());
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"method":"x""#), Some(json!(7)));
        assert_eq!(id(r#"{"params":{"id":1},"id":"a\"b","#), Some(json!("a\"b")));
        assert_eq!(id(r#"{"method":"x","params":{"text":"\"id\":5"#), None);
        assert_eq!(id(r#"{"x":"id","id" : -3}"#), Some(json!(-3)));
        assert_eq!(id(r#"{"id":1.5}"#), None);
        assert_eq!(id(r#"{"id":{"a":1}}"#), None);
        assert_eq!(id("\u{e9}\"id\":1"), None);
    }

    /// rmcp's service loop selects over `receive` and its other work (answers going out), so a
    /// read waiting for the rest of a line is dropped whenever an answer is sent first. The
    /// bytes it had taken from the buffer went with it: with requests pipelined, every line
    /// across a 64 KiB boundary of the read buffer was lost and never answered (66 of 50,000
    /// read_file calls).
    #[tokio::test]
    async fn a_read_dropped_in_the_middle_of_a_line_loses_none_of_it() {
        use tokio::io::AsyncWriteExt as _;
        let (mut client, server) = tokio::io::duplex(1024);
        let mut t = LineTransport::new(server, tokio::io::sink(), 64);
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        for (i, part) in line.chunks(7).enumerate() {
            client.write_all(part).await.unwrap();
            let wait = std::time::Duration::from_millis(if i % 2 == 0 { 0 } else { 20 });
            assert!(tokio::time::timeout(wait, t.next_line()).await.is_err());
        }
        client.write_all(b"\n").await.unwrap();
        match t.next_line().await {
            Ok(Some(Line::Whole(got))) => {
                assert_eq!(got, line, "{}", String::from_utf8_lossy(&got))
            }
            Ok(Some(Line::TooLong { total, .. })) => panic!("too long: {total}"),
            other => panic!("{:?}", other.map(|l| l.is_some())),
        }
        // The same with a line over the limit: its length and id survive the drops too.
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"x":"{}"}}}}"#,
            "y".repeat(100)
        );
        for part in long.as_bytes().chunks(9) {
            client.write_all(part).await.unwrap();
            assert!(tokio::time::timeout(std::time::Duration::ZERO, t.next_line()).await.is_err());
        }
        client.write_all(b"\n").await.unwrap();
        match t.next_line().await {
            Ok(Some(Line::TooLong { prefix, total })) => {
                assert_eq!(total, long.len());
                assert_eq!(leading_id(&prefix), Some(json!(7)));
            }
            other => panic!("{:?}", other.map(|l| l.is_some())),
        }
    }

    #[test]
    fn blank_lines_and_unreadable_responses_are_not_answered() {
        assert!(matches!(judge(b"   \r"), Verdict::Ignore));
        assert!(!matches!(judge(br#"{"jsonrpc":"2.0","id":1,"result":7}"#), Verdict::Answer(_)));
        assert!(!matches!(judge(br#"{"jsonrpc":"2.0","id":1,"error":5}"#), Verdict::Answer(_)));
        assert!(matches!(
            judge(br#"{"jsonrpc":"2.0","method":"x/y"}"#),
            Verdict::Message(_) | Verdict::Ignore
        ));
        assert!(matches!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Message(_)
        ));
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{Verdict, judge, leading_id};

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            "\\PC{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{0,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn method() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(super::KNOWN_METHODS).prop_map(String::from),
            "[a-z/]{0,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: toolbelt_core::testing::proptest_cases(),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Any bytes: a verdict, never a panic; the id finder never panics either.
        #[test]
        fn any_line_gets_a_verdict(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = judge(&bytes);
            let _ = leading_id(&bytes);
        }

        /// Issue 20: every request gets exactly one answer: from the server (a message it
        /// reads) or from the transport, with the request's own id.
        #[test]
        fn every_request_is_answered_with_its_id(
            id in prop_oneof![any::<i64>().prop_map(Value::from), "[a-z0-9-]{1,8}".prop_map(Value::from)],
            method in method(),
            params in prop::option::of(json_value()),
        ) {
            let mut msg = json!({"jsonrpc": "2.0", "id": id.clone(), "method": method});
            if let Some(p) = params {
                msg["params"] = p;
            }
            let line = serde_json::to_vec(&msg).unwrap();
            match judge(&line) {
                Verdict::Message(_) => {}
                Verdict::Answer(a) => prop_assert_eq!(&a["id"], &id, "{}", a),
                Verdict::Ignore => prop_assert!(false, "request ignored: {}", msg),
            }
        }
    }
}
