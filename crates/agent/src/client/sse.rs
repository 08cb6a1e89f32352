//! The `data:` payloads of a server-sent-events body, one event at a time.

use futures::stream::BoxStream;
use futures::StreamExt;

use super::ModelError;

pub(super) struct Events {
    body: BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>,
    buf: Vec<u8>,
    data: Vec<String>,
}

impl Events {
    pub(super) fn new(response: reqwest::Response) -> Self {
        Self { body: response.bytes_stream().boxed(), buf: Vec::new(), data: Vec::new() }
    }

    /// The next event's data; `None` at the end of the body.
    pub(super) async fn next(&mut self) -> Result<Option<String>, ModelError> {
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
