//! `--record FILE` keeps every model answer (one JSON object per line, after retries);
//! `--replay FILE` answers from such a file instead of a model, in order, so a session can be
//! rerun offline. Blank lines and lines starting with `#` are skipped.

use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use toolbelt_core::sync::LockExt;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Attempt, ModelClient, ModelError, ModelRequest, RetryPolicy, StreamEvent};
use crate::content::{ModelTurn, text};

/// The demo session shipped in the binary (`toolbelt run --replay` without a file).
pub const REPLAY_DEMO: &str = include_str!("../../sessions/demo.jsonl");

/// Wraps a client and appends each answer to a file.
pub struct Recorder {
    inner: Arc<dyn ModelClient>,
    file: Mutex<std::fs::File>,
}

impl Recorder {
    pub fn create(inner: Arc<dyn ModelClient>, path: &Path) -> std::io::Result<Self> {
        let mut file = std::fs::File::create(path)?;
        writeln!(file, "# toolbelt session recording: one model answer per line")?;
        Ok(Self { inner, file: Mutex::new(file) })
    }
}

#[async_trait]
impl ModelClient for Recorder {
    fn model(&self) -> &str {
        self.inner.model()
    }

    async fn attempt(
        &self,
        request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, Attempt> {
        self.inner.attempt(request, on_event, cancel).await
    }

    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, ModelError> {
        let turn = self.inner.generate(request, on_event, cancel).await?;
        let line = serde_json::to_string(&turn).map_err(|e| ModelError::Replay(e.to_string()))?;
        let mut f = self.file.locked();
        if let Err(e) = writeln!(f, "{line}").and_then(|()| f.flush()) {
            tracing::warn!("cannot write the session recording: {e}");
        }
        Ok(turn)
    }
}

/// Answers from a recording.
pub struct Replay {
    name: String,
    turns: Mutex<VecDeque<ModelTurn>>,
    served: Mutex<usize>,
}

impl Replay {
    /// Reads a recording; a line that is not a model answer is an error naming it.
    pub fn parse(name: &str, text: &str) -> Result<Self, String> {
        let mut turns = VecDeque::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let budget = toolbelt_core::json_in::JsonBudget::message(line.len());
            let turn: ModelTurn = toolbelt_core::json_in::parse_str(line, budget)
                .map_err(|e| format!("{name}:{}: not a recorded model answer: {e}", i + 1))?;
            turns.push_back(turn);
        }
        if turns.is_empty() {
            return Err(format!("{name}: the recording holds no model answers"));
        }
        Ok(Self { name: name.to_string(), turns: Mutex::new(turns), served: Mutex::new(0) })
    }
}

#[async_trait]
impl ModelClient for Replay {
    fn model(&self) -> &str {
        "replay"
    }

    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_attempts: 1, ..RetryPolicy::default() }
    }

    async fn attempt(
        &self,
        _request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, Attempt> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled.into());
        }
        let mut served = self.served.locked();
        *served += 1;
        let Some(turn) = self.turns.locked().pop_front() else {
            return Err(ModelError::Replay(format!(
                "{}: no recorded answer left for model call {} (the session went differently from the recording)",
                self.name, *served
            ))
            .into());
        };
        for p in &turn.parts {
            if let Some(t) = text(p).filter(|t| !t.is_empty()) {
                on_event(StreamEvent::Text(t.to_string()));
            }
        }
        Ok(turn)
    }
}
