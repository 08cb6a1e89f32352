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

pub(super) struct Events {
    events: SseStream<sse_stream::ByteStreamBody<Body, bytes::Bytes>>,
}

impl Events {
    /// Sends the request and opens its event stream: connection failures, HTTP errors and
    /// cancellation come back as a failed attempt.
    pub(super) async fn open(
        request: reqwest::RequestBuilder,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<Self, Attempt> {
        let response = tokio::select! {
            r = request.send() => r.map_err(|e| connect_error(url, &e))?,
            () = cancel.cancelled() => return Err(ModelError::Cancelled.into()),
        };
        if !response.status().is_success() {
            return Err(http_failure(response).await);
        }
        Ok(Self { events: SseStream::from_bytes_stream(bounded(response.bytes_stream())) })
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
        loop {
            match self.events.next().await {
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
}
