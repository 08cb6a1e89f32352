//! OpenAI-compatible chat completions (`POST {base}/chat/completions`, streamed) with tool
//! calls: llama.cpp, Ollama, vLLM and other local servers, or OpenAI itself.

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::sse::Events;
use super::{Attempt, ModelClient, ModelError, ModelRequest};
use super::{RetryPolicy, StreamEvent};
use crate::content::{Content, ModelTurn, Usage, function_call, text};
use toolbelt_core::scheduler::new_call_id;

pub struct OpenAiClient {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    model: String,
    retry: RetryPolicy,
}

impl OpenAiClient {
    /// `base_url` up to and including the version, e.g. `http://127.0.0.1:8080/v1`.
    pub fn new(base_url: &str, model: impl Into<String>, api_key: Option<String>) -> Self {
        toolbelt_core::tls::ready();
        Self {
            http: reqwest::Client::new(),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            model: model.into(),
            retry: RetryPolicy::default(),
        }
    }

    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The JSON body of a request.
    pub fn body(&self, request: &ModelRequest<'_>) -> Value {
        let mut messages = Vec::new();
        if let Some(si) = request.system_instruction {
            messages.push(json!({"role": "system", "content": si}));
        }
        for c in request.contents {
            messages.extend(messages_of(c));
        }
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !request.declarations.is_empty() {
            body["tools"] = request
                .declarations
                .iter()
                .map(|d| {
                    json!({"type": "function", "function": {
                        "name": d.name, "description": d.description, "parameters": d.parameters}})
                })
                .collect();
        }
        body
    }
}

/// One history entry as chat messages.
fn messages_of(c: &Content) -> Vec<Value> {
    let texts: String = c.parts.iter().filter_map(text).collect::<Vec<_>>().join("");
    if c.role == "model" {
        let calls: Vec<Value> = c
            .parts
            .iter()
            .filter_map(|p| {
                let fc = function_call(p)?;
                let arguments = fc.malformed.clone().unwrap_or_else(|| fc.args.to_string());
                Some(json!({"id": fc.id.unwrap_or_default(), "type": "function",
                    "function": {"name": fc.name, "arguments": arguments}}))
            })
            .collect();
        let mut m = json!({"role": "assistant", "content": if texts.is_empty() { Value::Null } else { Value::String(texts) }});
        if !calls.is_empty() {
            m["tool_calls"] = Value::Array(calls);
        }
        return vec![m];
    }
    let mut out: Vec<Value> = c
        .parts
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .map(|fr| {
            json!({"role": "tool", "tool_call_id": fr.get("id").cloned().unwrap_or(Value::Null),
                "content": fr.get("response").map(Value::to_string).unwrap_or_default()})
        })
        .collect();
    if !texts.is_empty() {
        out.push(json!({"role": "user", "content": texts}));
    }
    out
}

#[derive(Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn model(&self) -> &str {
        &self.model
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    async fn attempt(
        &self,
        request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, Attempt> {
        let url = format!("{}/chat/completions", self.base_url);
        let mut builder = self.http.post(&url).json(&self.body(request));
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        let mut events = Events::open(builder, &url, cancel).await?;
        let mut content = String::new();
        let mut calls: Vec<PendingCall> = Vec::new();
        let mut usage = Usage::default();
        let mut finish: Option<String> = None;
        let mut done = false;
        let mut budget = super::AnswerBudget::new();
        while let Some(data) = events.next_or_cancel(cancel).await? {
            if data.trim() == "[DONE]" {
                done = true;
                break;
            }
            let chunk = budget.parse(&data)?;
            if let Some(err) = chunk.get("error") {
                return Err(ModelError::Http { status: 500, body: err.to_string() }.into());
            }
            if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
                let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                usage = Usage {
                    input_tokens: n("prompt_tokens"),
                    output_tokens: n("completion_tokens"),
                    total_tokens: n("total_tokens"),
                };
            }
            let Some(choice) = chunk.pointer("/choices/0") else { continue };
            let delta = choice.get("delta").cloned().unwrap_or(Value::Null);
            if let Some(t) = delta.get("content").and_then(Value::as_str)
                && !t.is_empty()
            {
                on_event(StreamEvent::Text(t.to_string()));
                content.push_str(t);
            }
            for tc in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                let i =
                    tc.get("index").and_then(Value::as_u64).unwrap_or(calls.len() as u64) as usize;
                while calls.len() <= i {
                    calls.push(PendingCall::default());
                }
                let c = &mut calls[i];
                if let Some(id) = tc.get("id").and_then(Value::as_str) {
                    c.id = id.to_string();
                }
                if let Some(n) = tc.pointer("/function/name").and_then(Value::as_str) {
                    c.name.push_str(n);
                }
                if let Some(a) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                    c.arguments.push_str(a);
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                finish = Some(r.to_string());
            }
        }
        if !done && finish.is_none() {
            return Err(ModelError::Stream(
                "the stream ended without a finish_reason or [DONE]".into(),
            )
            .into());
        }
        let mut turn = ModelTurn { usage, finish_reason: finish, ..ModelTurn::default() };
        if !content.is_empty() {
            turn.push_part(json!({"text": content}));
        }
        for c in calls {
            // A server that sends no id gets the engine's one format of call ids.
            let id = if c.id.is_empty() { new_call_id(&c.name) } else { c.id };
            let raw = if c.arguments.trim().is_empty() { "{}".to_string() } else { c.arguments };
            let mut part = Map::new();
            // Counted with the rest of the answer: arguments past its budget refuse the answer.
            match budget.parse(&raw) {
                Err(e @ ModelError::TooCostly(_)) => return Err(e.into()),
                Ok(args @ Value::Object(_)) => {
                    part.insert(
                        "functionCall".into(),
                        json!({"id": id, "name": c.name, "args": args}),
                    );
                }
                _ => {
                    part.insert(
                        "functionCall".into(),
                        json!({"id": id, "name": c.name, "args": {}}),
                    );
                    part.insert("_malformedArguments".into(), Value::String(raw));
                }
            }
            turn.parts.push(Value::Object(part));
        }
        Ok(turn)
    }
}
