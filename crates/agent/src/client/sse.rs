//! The `data:` payloads of a server-sent-events body, one event at a time, parsed by
//! `sse-stream` (the parser rmcp and the MCP client use: one SSE parser in the workspace).

use futures::StreamExt;
use futures::stream::BoxStream;
use sse_stream::SseStream;
use tokio_util::sync::CancellationToken;

use super::{Attempt, ModelError, connect_error, http_failure};

type Body = BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>;

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
        let body: Body = response.bytes_stream().boxed();
        Ok(Self { events: SseStream::from_bytes_stream(body) })
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
