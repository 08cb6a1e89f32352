//! Model clients: one trait, the Gemini API and OpenAI-compatible chat completions behind it,
//! retries with backoff around both, and recording/replay of their answers.

pub mod adc;
mod gemini;
mod openai;
mod record;
mod sse;

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolbelt_core::tool::Declaration;

pub use gemini::{Credentials, Endpoint, GeminiClient, check_model_name, vertex_base_url};
pub use openai::OpenAiClient;
pub use record::{REPLAY_DEMO, Recorder, Replay};

use crate::content::{Content, ModelTurn};

/// What one model call sends (borrowed: the loop's history is not copied for each call).
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelRequest<'a> {
    pub system_instruction: Option<&'a str>,
    pub contents: &'a [Content],
    pub declarations: &'a [Declaration],
    /// Extra Gemini tools, e.g. `{"googleSearch": {}}` or `{"urlContext": {}}`.
    pub builtin_tools: &'a [Value],
}

/// Pieces of an answer as they arrive.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    Text(String),
    /// The model's thinking, as it streams in (a part marked `thought`).
    Thought(String),
    /// The stream broke and the request is being sent again (text already shown may repeat).
    Retrying {
        attempt: u32,
        reason: String,
    },
}

/// Why a model call failed for good.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the model API refused the credentials (HTTP {status}): {body}")]
    Auth { status: u16, body: String },
    /// No credentials to send: the sign-in failed before any request (no token).
    #[error("{0}")]
    SignIn(String),
    #[error("the model API answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("cannot reach the model API at {url}: {message}")]
    Connect { url: String, message: String },
    #[error("the model's answer stream ended early: {0}")]
    Stream(String),
    #[error("the model's answer could not be read: {0}")]
    Decode(String),
    #[error("the model's answer was not read: {0}")]
    TooCostly(String),
    #[error("{0}")]
    TooSlow(String),
    #[error("cancelled")]
    Cancelled,
    #[error("{0}")]
    Replay(String),
}

/// What one model answer may hold over all its chunks (issue 47): its JSON values, counted
/// before each chunk (and each call's arguments) is parsed. A hostile or broken model's
/// function call of 8 MiB of tiny values took 3 GB; past the budget the answer is refused,
/// saying so.
pub(crate) struct AnswerBudget {
    left: usize,
}

impl AnswerBudget {
    pub(crate) fn new() -> Self {
        Self { left: toolbelt_core::limits::MESSAGE_VALUES }
    }

    /// Parses one piece of the answer, counting its values against what is left.
    pub(crate) fn parse(&mut self, text: &str) -> Result<Value, ModelError> {
        use toolbelt_core::json_in::{self, JsonBudget, JsonRefusal};
        use toolbelt_core::limits::MESSAGE_VALUES;
        let budget = JsonBudget::message(usize::MAX).with_values(self.left);
        let shape = json_in::measure(text.as_bytes(), budget).map_err(|why| {
            let why = match why {
                JsonRefusal::TooManyValues { .. } => format!(
                    "it holds more than {MESSAGE_VALUES} JSON values (objects, arrays and leaves)"
                ),
                other => other.to_string(),
            };
            ModelError::TooCostly(why)
        })?;
        self.left -= shape.values.min(self.left);
        toolbelt_core::memory::note_parsed(text.len(), shape.values);
        serde_json::from_str(text).map_err(|e| ModelError::Decode(format!("{e} in {text:.200}")))
    }
}

impl ModelError {
    /// Worth sending again: rate limits, server errors, broken connections and streams.
    pub fn retryable(&self) -> bool {
        match self {
            ModelError::Http { status, .. } => *status == 429 || *status >= 500,
            ModelError::Connect { .. } | ModelError::Stream(_) => true,
            _ => false,
        }
    }
}

/// A failed attempt, with the server's `Retry-After` if it sent one.
#[derive(Debug)]
pub struct Attempt {
    pub error: ModelError,
    pub retry_after: Option<Duration>,
}

impl From<ModelError> for Attempt {
    fn from(error: ModelError) -> Self {
        Self { error, retry_after: None }
    }
}

/// A model API: one call, streamed.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// The model's name, for reports.
    fn model(&self) -> &str;

    /// One attempt; `on_event` gets text as it arrives.
    async fn attempt(
        &self,
        request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, Attempt>;

    /// The call with retries (see [`RetryPolicy`]).
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, ModelError> {
        self.retry_policy().run(self, request, on_event, cancel).await
    }

    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy::default()
    }
}

/// Exponential backoff on 429, 5xx, connection errors and broken streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    async fn run<C: ModelClient + ?Sized>(
        &self,
        client: &C,
        request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, ModelError> {
        let mut attempt = 1;
        loop {
            let failed = match client.attempt(request, on_event, cancel).await {
                Ok(turn) => return Ok(turn),
                Err(a) => a,
            };
            if !failed.error.retryable() || attempt >= self.max_attempts || cancel.is_cancelled() {
                return Err(failed.error);
            }
            let backoff = self.base_delay.saturating_mul(1 << (attempt - 1).min(16));
            let delay = failed.retry_after.unwrap_or(backoff).min(self.max_delay);
            // The front end says it once, from the event; this is for `RUST_LOG=debug`.
            tracing::debug!(
                "model call failed ({}); attempt {} of {} in {} ms",
                failed.error,
                attempt + 1,
                self.max_attempts,
                delay.as_millis()
            );
            on_event(StreamEvent::Retrying {
                attempt: attempt + 1,
                reason: failed.error.to_string(),
            });
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
            }
            attempt += 1;
        }
    }
}

/// Reads an HTTP error response into an attempt.
async fn http_failure(response: reqwest::Response) -> Attempt {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    // Read as far as it is shown (an endless error body was read whole).
    let mut bytes = Vec::new();
    let mut response = response;
    while bytes.len() < 8 * 1024 {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    let mut body = String::from_utf8_lossy(&bytes).into_owned();
    if body.len() > 2000 {
        let mut cut = 2000;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push_str("...");
    }
    let error = if status == 401 || status == 403 {
        ModelError::Auth { status, body }
    } else {
        ModelError::Http { status, body }
    };
    Attempt { error, retry_after }
}

fn connect_error(url: &str, e: &reqwest::Error) -> Attempt {
    let message = toolbelt_core::result::error_chain(e);
    ModelError::Connect { url: url.to_string(), message }.into()
}
