//! A fake model server on loopback: answers each POST with the next scripted reply (Gemini or
//! OpenAI-compatible streams, HTTP errors, a stream cut short, a hang) and records every
//! request, so tests can assert exactly what an agent sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// An event stream of these `data:` payloads (a stream without its final chunk is a cut).
    Events(Vec<Value>),
    /// Raw `data:` payloads (e.g. `[DONE]`).
    Raw(Vec<String>),
    /// An HTTP error with a body and an optional `Retry-After` (seconds).
    Status(u16, String, Option<u64>),
    /// A JSON body (an OAuth token endpoint's answer, say).
    Json(Value),
    /// Never answers.
    Hang,
}

/// A request as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    received: Vec<Received>,
}

pub struct FakeModel {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    script: Arc<Mutex<Script>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    State(script): State<Arc<Mutex<Script>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut s = script.lock().unwrap();
        s.received.push(Received {
            path: uri.to_string(),
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
        s.replies.pop_front()
    };
    let sse = |payloads: Vec<String>| {
        let body: String = payloads.iter().map(|p| format!("data: {p}\n\n")).collect();
        ([("content-type", "text/event-stream")], body).into_response()
    };
    match reply {
        None => {
            (StatusCode::INTERNAL_SERVER_ERROR, "the fake model has no reply left").into_response()
        }
        Some(Reply::Events(v)) => sse(v.iter().map(Value::to_string).collect()),
        Some(Reply::Raw(v)) => sse(v),
        Some(Reply::Status(code, body, retry_after)) => {
            let mut r = (StatusCode::from_u16(code).unwrap(), body).into_response();
            if let Some(s) = retry_after {
                r.headers_mut().insert("retry-after", s.to_string().parse().unwrap());
            }
            r
        }
        Some(Reply::Json(v)) => {
            ([("content-type", "application/json")], v.to_string()).into_response()
        }
        Some(Reply::Hang) => {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
    }
}

impl FakeModel {
    /// Serves the replies in order, on a loopback port.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let script = Arc::new(Mutex::new(Script { replies: replies.into(), received: Vec::new() }));
        let app = axum::Router::new().fallback(answer).with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { url, script, task }
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.script.lock().unwrap().received.clone()
    }

    /// The bodies of every request so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.received().into_iter().map(|r| r.body).collect()
    }
}

/// A Gemini stream chunk with these parts (and a finish reason, for the last chunk).
pub fn gemini_chunk(parts: Value, finish: Option<&str>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}});
    if let Some(f) = finish {
        candidate["finishReason"] = json!(f);
    }
    json!({"candidates": [candidate],
           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}})
}

/// A whole Gemini answer in one chunk.
pub fn gemini_answer(parts: Value) -> Reply {
    Reply::Events(vec![gemini_chunk(parts, Some("STOP"))])
}

/// An OpenAI chat-completions stream: text deltas, then tool calls `(id, name, arguments)`.
pub fn openai_answer(text: &[&str], calls: &[(&str, &str, &str)]) -> Reply {
    let mut out: Vec<String> = text
        .iter()
        .map(|t| json!({"choices": [{"index": 0, "delta": {"content": t}}]}).to_string())
        .collect();
    for (i, (id, name, args)) in calls.iter().enumerate() {
        // Split the arguments in two deltas, as servers stream them.
        let mid = args.len() / 2;
        let (a, b) = args.split_at(mid);
        out.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}}]}).to_string());
        out.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": b}}]}}]}).to_string());
    }
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    out.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}).to_string());
    out.push(json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}).to_string());
    out.push("[DONE]".into());
    Reply::Raw(out)
}
