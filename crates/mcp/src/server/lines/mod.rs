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
//!
//! How many requests run or wait is bounded (see [`flow`]); reading never stops for them, so
//! a cancellation or the client's answer to a question the server asked always gets through.
//! A read dropped by rmcp's service loop loses nothing: the line read so far is kept here, and
//! the transport's own answers are written by tasks of their own.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use toolbelt_core::json_in::{self, JsonBudget};
use toolbelt_core::sync::LockExt as _;

/// The default limit of one message: rmcp's.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

mod answers;
pub mod flow;
mod ids;
pub use toolbelt_core::json_in::leading_id;
pub(crate) use toolbelt_core::json_in::top_value;

pub(crate) use answers::error;
use answers::{busy, duplicate, unanswerable};

/// How much of an over-long message is kept to find its id.
const ID_PREFIX: usize = 4096;

/// The methods a client may call: a request for one of these that rmcp cannot read has bad
/// params, not an unknown method.
pub const KNOWN_METHODS: &[&str] = &[
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
    /// The client's requests not answered yet (a second request with one of their ids would
    /// be lost, as rmcp keys requests by id, so it is refused), and the places they take.
    flow: flow::Flow,
    /// Requests waiting for a place, oldest first.
    queue: flow::Queue,
    /// The input ended (what waits is still handed over).
    ended: bool,
    /// The server's questions to the client (a confirmation) not answered yet, by id: once the
    /// input ended, each gets an error in the client's place, so the call asking ends.
    asked: Arc<std::sync::Mutex<std::collections::HashMap<String, rmcp::model::RequestId>>>,
    /// The client's request ids, exchanged for the transport's own at rmcp (`None` in the unit
    /// tests of the flow, which look at the ids rmcp is given).
    ids: Option<ids::Ids>,
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
            // One message of the largest size may always wait.
            flow: flow::Flow::new(flow::Limits {
                waiting_bytes: flow::MAX_WAITING_BYTES.max(max_bytes),
                ..flow::Limits::default()
            }),
            queue: flow::Queue::default(),
            ended: false,
            asked: Arc::default(),
            ids: Some(ids::Ids::default()),
        }
    }

    /// Other limits than [`flow`]'s (tests).
    #[cfg(test)]
    fn with_limits(self, limits: flow::Limits) -> Self {
        Self { flow: flow::Flow::new(limits), ids: None, ..self }
    }

    /// Writes one of the transport's own answers on a task of its own: a write in `receive`
    /// would be lost, or cut off in the middle of the line, when rmcp drops the read.
    fn answer(&self, value: Value) {
        let (write, flow) = (self.write.clone(), self.flow.clone());
        flow.writing_own();
        tokio::spawn(async move {
            if let Err(e) = Self::write_line(&write, &value).await {
                tracing::debug!("stdout: {e}");
            }
            flow.own_written();
        });
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

/// A batch (a JSON array): each request in it is answered with its id, in one array as
/// JSON-RPC answers a batch, saying batches are not run (MCP 2025-06-18 removed them); its
/// ids were lost under one answer with a null id (issue 35).
fn batch(items: &[Value]) -> Verdict {
    const WHY: &str = "Invalid Request: batches are not supported (MCP 2025-06-18 removed them); send one message per line";
    if items.is_empty() {
        return Verdict::Answer(error(Value::Null, -32600, WHY.into()));
    }
    let answers: Vec<Value> = items
        .iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id").filter(|id| !id.is_null()).cloned())
        .map(|id| error(id, -32600, WHY.into()))
        .collect();
    if answers.is_empty() { Verdict::Ignore } else { Verdict::Answer(Value::Array(answers)) }
}

/// Judges one line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore;
    }
    // Measured before it is parsed (issue 47): a message of tiny values just under the size
    // limit took gigabytes; one past the values or the depth allowed is refused with its id,
    // and the transport goes on reading.
    let shape = match json_in::measure(line, JsonBudget::message(usize::MAX)) {
        Ok(shape) => shape,
        Err(why) => {
            let id = leading_id(line).unwrap_or(Value::Null);
            let message = format!("Invalid Request: not read, as {why}");
            return Verdict::Answer(error(id, -32600, message));
        }
    };
    // Bytes that are not UTF-8 read as U+FFFD (as the ACP agent reads them): the request
    // keeps its id and is answered (it was answered with a null id, issue 35).
    let text = String::from_utf8_lossy(line);
    toolbelt_core::memory::note_parsed(line.len(), shape.values);
    let value: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        // An id still readable at the start of the message is answered (a lone surrogate
        // escape in a string made the answer's id null).
        Err(e) => {
            let id = leading_id(line).unwrap_or(Value::Null);
            return Verdict::Answer(error(id, -32700, format!("Parse error: {e}")));
        }
    };
    let Value::Object(obj) = &value else {
        if let Value::Array(items) = &value {
            return batch(items);
        }
        let what = "a message must be a JSON object";
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

impl<R, W> LineTransport<R, W> {
    /// What of a readable message goes to the server: before `initialize`, notifications and
    /// responses are dropped; a cancellation forgets its request (a waiting one never runs).
    fn admit(&mut self, msg: RxJsonRpcMessage<RoleServer>) -> Option<RxJsonRpcMessage<RoleServer>> {
        use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage};
        // A cancelled request is never answered (rmcp drops its response): its id is free again.
        if let JsonRpcMessage::Notification(n) = &msg
            && let ClientNotification::CancelledNotification(c) = &n.notification
            && let Some(id) = &c.params.request_id
        {
            let id = key(id);
            if self.flow.cancel(&id) {
                self.queue.remove(&id);
            }
        }
        let JsonRpcMessage::Request(r) = &msg else {
            if !self.initialized {
                tracing::debug!("dropped a notification or response sent before initialize");
                return None;
            }
            return Some(msg);
        };
        if matches!(r.request, ClientRequest::InitializeRequest(_)) {
            self.initialized = true;
        }
        Some(msg)
    }

    /// The client answered one of the server's questions.
    fn answered(&self, m: &RxJsonRpcMessage<RoleServer>) {
        use rmcp::model::JsonRpcMessage;
        let id = match m {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            self.asked.locked().remove(&key(id));
        }
    }

    /// One of the server's questions not answered yet, forgotten.
    fn take_asked(&self) -> Option<rmcp::model::RequestId> {
        let mut asked = self.asked.locked();
        let key = asked.keys().next()?.clone();
        asked.remove(&key)
    }

    /// An error answer of the transport, unless its id belongs to a request not answered yet:
    /// a second answer with that id would be taken for that request's.
    fn unless_pending(&self, answer: Value) -> Value {
        match answer.get("id").filter(|id| !id.is_null()) {
            Some(id) if self.flow.is_pending(&id.to_string()) => duplicate(id.clone()),
            _ => answer,
        }
    }
}

/// How the transport keys requests by id: the id's JSON text.
fn key(id: &rmcp::model::RequestId) -> String {
    id.clone().into_json_value().to_string()
}

/// Gives a running request's place back when its answer is written (or the write is dropped).
struct Place {
    flow: flow::Flow,
    bytes: usize,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.flow.written(self.bytes);
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
        let (write, flow) = (self.write.clone(), self.flow.clone());
        let item = match &self.ids {
            Some(ids) => ids.outward(item),
            None => Some(item),
        };
        if let Some(rmcp::model::JsonRpcMessage::Request(r)) = &item {
            let id = r.id.clone();
            self.asked.locked().insert(key(&id), id);
            self.flow.wake();
        }
        async move {
            use rmcp::model::JsonRpcMessage;
            let Some(item) = item else { return Ok(()) };
            let answered = match &item {
                JsonRpcMessage::Response(r) => Some(r.id.clone()),
                JsonRpcMessage::Error(e) => e.id.clone(),
                _ => None,
            };
            // The id is free for the client's next request at once; the place only once the
            // answer is written (whoever frees the id, this answer or a cancellation, gives
            // the place back).
            let place = answered
                .and_then(|id| flow.answering(&key(&id)))
                .map(|bytes| Place { flow, bytes });
            let written = Self::write_line(&write, &item).await;
            drop(place);
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let m = self.receive_raw().await?;
        Some(match &self.ids {
            Some(ids) => ids.inward(m),
            None => m,
        })
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// The next message for rmcp, with the client's ids.
    async fn receive_raw(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // The oldest waiting request, once a place is free.
            if let Some(w) = self.queue.front()
                && self.flow.start_waiting(&w.id, w.line.len())
            {
                let w = self.queue.pop()?;
                match judge(&w.line) {
                    Verdict::Message(m) => return Some(*m),
                    _ => continue,
                }
            }
            // Cancel-safe throughout: rmcp drops this future whenever other work is ready.
            let freed = self.flow.freed();
            // At the end of input, what waits still runs, what runs is answered, and every
            // answer of the transport is written, before the end is told (rmcp then gives
            // what still runs 5 s, and drops its answer). A question the client can no longer
            // answer gets an error in its place.
            if self.ended {
                if let Some(id) = self.take_asked() {
                    return Some(unanswerable(id));
                }
                if self.queue.is_empty() && self.flow.all_written() && self.flow.nothing_runs() {
                    return None;
                }
                freed.notified().await;
                continue;
            }
            if self.flow.too_much_unwritten() {
                freed.notified().await;
                continue;
            }
            let read = if self.queue.is_empty() {
                self.next_line().await
            } else {
                tokio::select! {
                    read = self.next_line() => read,
                    () = freed.notified() => continue,
                }
            };
            let line = match read {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.ended = true;
                    continue;
                }
                Err(e) => {
                    tracing::debug!("stdin: {e}");
                    self.ended = true;
                    continue;
                }
            };
            let answer = match line {
                Line::Whole(bytes) => match judge(&bytes) {
                    Verdict::Message(m) => match self.admit(*m) {
                        Some(rmcp::model::JsonRpcMessage::Request(r)) => {
                            let id = r.id.clone().into_json_value();
                            match self.flow.take(&id.to_string(), bytes.len(), self.queue.bytes()) {
                                Some(flow::Taken::Runs) => {
                                    return Some(rmcp::model::JsonRpcMessage::Request(r));
                                }
                                Some(flow::Taken::Waits) => {
                                    self.queue.push(flow::Waiting { id: id.to_string(), line: bytes });
                                    continue;
                                }
                                Some(flow::Taken::Busy) => busy(id),
                                None => duplicate(id),
                            }
                        }
                        Some(m) => {
                            self.answered(&m);
                            return Some(m);
                        }
                        None => continue,
                    },
                    Verdict::Ignore => continue,
                    Verdict::Answer(a) => self.unless_pending(a),
                },
                Line::TooLong { prefix, total } => self.unless_pending(error(
                    leading_id(&prefix).unwrap_or(Value::Null),
                    -32600,
                    format!(
                        "Invalid Request: the message has more than {} bytes ({total} read); the limit is {} bytes (toolbelt mcp --max-message-bytes)",
                        self.max_bytes, self.max_bytes
                    ),
                )),
            };
            self.answer(answer);
        }
    }
}

#[cfg(test)]
mod tests;
