//! The `data:` payloads of a server-sent-events body, one event at a time, parsed by
//! `sse-stream` (the parser rmcp and the MCP client use: one SSE parser in the workspace).

use futures::StreamExt;
use futures::stream::BoxStream;
use sse_stream::SseStream;
use tokio_util::sync::CancellationToken;

use super::{Attempt, ModelError, connect_error, http_failure};

type Body = BoxStream<'static, Result<bytes::Bytes, std::io::Error>>;

/// The bytes of one model answer, at most: an event that never ended (a `data:` line with no
/// end) grew to 23 GB, and endless text chunks to 1.5 GB in 16 s (issue 35).
pub(super) const MAX_ANSWER_BYTES: usize = 32 << 20;

/// `body` cut with an error once it passes [`MAX_ANSWER_BYTES`].
fn bounded(
    body: impl futures::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + 'static,
) -> Body {
    let mut seen = 0usize;
    body.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        seen = seen.saturating_add(chunk.len());
        if seen > MAX_ANSWER_BYTES {
            return Err(std::io::Error::other(format!(
                "the model's answer passed {} MiB, the most one answer may take",
                MAX_ANSWER_BYTES >> 20
            )));
        }
        Ok(chunk)
    })
    .take_while({
        let mut over = false;
        move |c| {
            let go = !over;
            over |= c.is_err();
            futures::future::ready(go)
        }
    })
    .boxed()
}

/// How long the model may send nothing (before its answer's head, or between events) before
/// the attempt counts as a broken stream (and is tried again).
pub(super) const SILENCE: std::time::Duration = std::time::Duration::from_secs(300);

/// How long one answer may take in all: a model trickling a byte now and then held `run` for
/// ever (issue 35). Not tried again.
pub(super) const WHOLE_ANSWER: std::time::Duration = std::time::Duration::from_secs(30 * 60);

pub(super) struct Events {
    events: SseStream<sse_stream::ByteStreamBody<Body, bytes::Bytes>>,
    /// Bytes of the body read so far.
    read: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    silence: std::time::Duration,
    deadline: tokio::time::Instant,
}

impl Events {
    /// Sends the request and opens its event stream: connection failures, HTTP errors and
    /// cancellation come back as a failed attempt.
    pub(super) async fn open(
        request: reqwest::RequestBuilder,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<Self, Attempt> {
        let started = tokio::time::Instant::now();
        let response = tokio::select! {
            r = tokio::time::timeout(SILENCE, request.send()) => match r {
                Ok(r) => r.map_err(|e| connect_error(url, &e))?,
                Err(_) => return Err(silent(SILENCE).into()),
            },
            () = cancel.cancelled() => return Err(ModelError::Cancelled.into()),
        };
        if !response.status().is_success() {
            return Err(http_failure(response).await);
        }
        Ok(Self::new(bounded(response.bytes_stream()), SILENCE, started + WHOLE_ANSWER))
    }

    fn new(body: Body, silence: std::time::Duration, deadline: tokio::time::Instant) -> Self {
        let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = read.clone();
        let body = body
            .inspect(move |c| {
                if let Ok(b) = c {
                    counter.fetch_add(b.len(), std::sync::atomic::Ordering::Relaxed);
                }
            })
            .boxed();
        Self { events: SseStream::from_bytes_stream(body), read, silence, deadline }
    }

    /// The next event's data, unless `cancel` fires first.
    pub(super) async fn next_or_cancel(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, ModelError> {
        tokio::select! {
            n = self.next() => n,
            () = cancel.cancelled() => Err(ModelError::Cancelled),
        }
    }

    /// The next event that carries data; `None` at the end of the body. A broken body or a
    /// line that is not server-sent events ends the attempt as a cut stream.
    async fn next(&mut self) -> Result<Option<String>, ModelError> {
        let mut read = self.read.load(std::sync::atomic::Ordering::Relaxed);
        loop {
            let quiet_until = tokio::time::Instant::now() + self.silence;
            let until = quiet_until.min(self.deadline);
            let next = match tokio::time::timeout_at(until, self.events.next()).await {
                Ok(next) => next,
                Err(_) if until == self.deadline => {
                    return Err(ModelError::TooSlow(format!(
                        "the model's answer took over {} minutes, the longest one answer may take",
                        WHOLE_ANSWER.as_secs() / 60
                    )));
                }
                Err(_) => {
                    // Bytes came, only no whole event yet: not silent.
                    let now = self.read.load(std::sync::atomic::Ordering::Relaxed);
                    if now == read {
                        return Err(silent(self.silence));
                    }
                    read = now;
                    continue;
                }
            };
            match next {
                Some(Ok(event)) => match event.data {
                    Some(data) => return Ok(Some(data)),
                    None => continue,
                },
                Some(Err(e)) => {
                    return Err(ModelError::Stream(toolbelt_core::result::error_chain(&e)));
                }
                None => return Ok(None),
            }
        }
    }
}

/// The error of a model that sent nothing for `quiet`.
fn silent(quiet: std::time::Duration) -> ModelError {
    ModelError::Stream(format!("the model sent nothing for {} s", quiet.as_secs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 (fourth attack, N2): an answer that never ends is cut at the ceiling with an
    /// error that says why, and nothing is read after it.
    #[tokio::test]
    async fn an_endless_answer_is_cut_at_the_ceiling() {
        let chunk = bytes::Bytes::from(vec![b'a'; 1 << 20]);
        let endless = futures::stream::repeat_with(move || Ok::<_, reqwest::Error>(chunk.clone()));
        let items: Vec<_> = bounded(endless).collect().await;
        let ok: usize = items.iter().filter_map(|c| c.as_ref().ok()).map(bytes::Bytes::len).sum();
        assert_eq!(ok, MAX_ANSWER_BYTES);
        let last = items.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(last.contains("passed 32 MiB"), "{last}");
        assert_eq!(items.iter().filter(|c| c.is_err()).count(), 1);
    }

    /// Issue 35: a model sending one byte now and then (never quiet long enough to be cut)
    /// held the agent for ever. The whole answer has a deadline; a silence has its own.
    #[tokio::test(start_paused = true)]
    async fn a_trickling_answer_is_cut_at_its_deadline_and_a_silent_one_sooner() {
        let trickle = futures::stream::unfold(0u64, |i| async move {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
            let line = if i == 0 { "data: {\"a\":1}\n\n" } else { ":" };
            Some((Ok::<_, std::io::Error>(bytes::Bytes::from(line)), i + 1))
        });
        let deadline = tokio::time::Instant::now() + WHOLE_ANSWER;
        let mut events = Events::new(trickle.boxed(), SILENCE, deadline);
        assert_eq!(events.next().await.unwrap().as_deref(), Some("{\"a\":1}"));
        let e = events.next().await.unwrap_err();
        assert!(matches!(e, ModelError::TooSlow(_)) && !e.retryable(), "{e}");
        assert!(e.to_string().contains("over 30 minutes"), "{e}");
        assert!(tokio::time::Instant::now() >= deadline);
        let silent = futures::stream::pending::<Result<bytes::Bytes, std::io::Error>>();
        let started = tokio::time::Instant::now();
        let mut events = Events::new(silent.boxed(), SILENCE, started + WHOLE_ANSWER);
        let e = events.next().await.unwrap_err();
        assert!(matches!(e, ModelError::Stream(_)) && e.retryable(), "{e}");
        assert!(e.to_string().contains("sent nothing for 300 s"), "{e}");
        assert_eq!(started.elapsed(), SILENCE);
    }
}
