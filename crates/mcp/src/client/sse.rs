//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp no longer ships: a long-lived
//! `GET` whose event stream first names the endpoint to `POST` messages to (`event: endpoint`),
//! then carries the server's messages (`event: message`). Messages are rmcp's own types,
//! serialised with serde; only the carrying is done here.

use std::collections::HashMap;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::SseStream;
use tokio::sync::mpsc;

/// What can go wrong on the wire.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    #[error("request to {url} failed: {source}")]
    Request { url: String, source: reqwest::Error },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{0}")]
    Protocol(String),
}

pub struct SseTransport {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl SseTransport {
    /// Opens the event stream and waits for the endpoint event.
    pub async fn connect(url: &str, headers: &HashMap<String, String>) -> Result<Self, SseError> {
        toolbelt_core::tls::ready();
        let http = reqwest::Client::builder()
            .default_headers(super::header_map(headers))
            .build()
            .map_err(|source| SseError::Request { url: url.into(), source })?;
        let base = reqwest::Url::parse(url)
            .map_err(|e| SseError::Protocol(format!("invalid URL {url}: {e}")))?;
        let response = http
            .get(base.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|source| SseError::Request { url: url.into(), source })?;
        if !response.status().is_success() {
            return Err(SseError::Status { url: url.into(), status: response.status().as_u16() });
        }
        let mut events = SseStream::from_bytes_stream(response.bytes_stream());
        let endpoint = loop {
            match events.next().await {
                Some(Ok(e)) if e.event.as_deref() == Some("endpoint") => {
                    let data = e.data.unwrap_or_default();
                    break base.join(data.trim()).map_err(|e| {
                        SseError::Protocol(format!("invalid endpoint {data:?} from {url}: {e}"))
                    })?;
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => {
                    return Err(SseError::Protocol(format!("bad event stream from {url}: {e}")));
                }
                None => {
                    return Err(SseError::Protocol(format!(
                        "{url} closed the event stream before naming its message endpoint"
                    )));
                }
            }
        };
        let (tx, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            while let Some(Ok(e)) = events.next().await {
                if !matches!(e.event.as_deref(), None | Some("message")) {
                    continue;
                }
                let Some(data) = e.data else { continue };
                let parsed = match super::screen::judge(data.as_bytes()) {
                    super::screen::Judged::Pass => serde_json::from_str(&data),
                    super::screen::Judged::Replace(other) => serde_json::from_slice(&other),
                    super::screen::Judged::Drop => continue,
                };
                match parsed as Result<RxJsonRpcMessage<RoleClient>, _> {
                    Ok(m) => {
                        if tx.send(m).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => tracing::warn!("ignoring an unreadable SSE message: {e}"),
                }
            }
        });
        Ok(Self { http, endpoint, incoming, reader })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (http, endpoint) = (self.http.clone(), self.endpoint.clone());
        async move {
            let url = endpoint.to_string();
            let body = serde_json::to_vec(&item)
                .map_err(|e| SseError::Protocol(format!("cannot encode a message: {e}")))?;
            let r = http
                .post(endpoint)
                .header(CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await
                .map_err(|source| SseError::Request { url: url.clone(), source })?;
            if !r.status().is_success() {
                return Err(SseError::Status { url, status: r.status().as_u16() });
            }
            Ok(())
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
