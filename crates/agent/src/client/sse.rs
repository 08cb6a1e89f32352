//! The `data:` payloads of a server-sent-events body, one event at a time.

use futures::stream::BoxStream;
use futures::StreamExt;

use tokio_util::sync::CancellationToken;

use super::{connect_error, http_failure, Attempt, ModelError};

pub(super) struct Events {
    body: BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>,
    buf: Vec<u8>,
    data: Vec<String>,
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
        Ok(Self { body: response.bytes_stream().boxed(), buf: Vec::new(), data: Vec::new() })
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

    /// The next event's data; `None` at the end of the body.
    async fn next(&mut self) -> Result<Option<String>, ModelError> {
        loop {
            while let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let raw: Vec<u8> = self.buf.drain(..=i).collect();
                let line = String::from_utf8_lossy(&raw);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.is_empty() {
                    if !self.data.is_empty() {
                        let data = self.data.join("\n");
                        self.data.clear();
                        return Ok(Some(data));
                    }
                } else if let Some(d) = line.strip_prefix("data:") {
                    self.data.push(d.strip_prefix(' ').unwrap_or(d).to_string());
                }
            }
            match self.body.next().await {
                Some(Ok(chunk)) => self.buf.extend_from_slice(&chunk),
                Some(Err(e)) => return Err(ModelError::Stream(e.to_string())),
                None => {
                    if !self.buf.is_empty() {
                        self.buf.push(b'\n');
                        continue;
                    }
                    if !self.data.is_empty() {
                        let data = self.data.join("\n");
                        self.data.clear();
                        return Ok(Some(data));
                    }
                    return Ok(None);
                }
            }
        }
    }
}
