//! A Streamable HTTP server's event streams judged as a stdio server's lines are (see
//! [`super::screen`]): each event's message is counted before rmcp parses it. An answer sent
//! as one JSON body is rmcp's own to read (bounded in bytes by rmcp).

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

use super::screen::{Judged, judge};

/// A client whose event streams are screened.
#[derive(Clone)]
pub(super) struct Screened<C>(pub C);

/// `events`, each message judged: passed, replaced, or left out.
fn screened(
    events: BoxStream<'static, Result<Sse, SseError>>,
) -> BoxStream<'static, Result<Sse, SseError>> {
    events
        .filter_map(|event| async move {
            let Ok(mut sse) = event else { return Some(event) };
            let Some(data) = &sse.data else { return Some(Ok(sse)) };
            match judge(data.as_bytes()) {
                Judged::Pass => {}
                Judged::Replace(other) => {
                    sse.data = Some(String::from_utf8_lossy(&other).into_owned());
                }
                Judged::Drop => return None,
            }
            Some(Ok(sse))
        })
        .boxed()
}

/// An answer to a POST with its event stream screened (a JSON body is rmcp's to read).
fn screened_answer(r: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
    match r {
        StreamableHttpPostResponse::Sse(events, id) => {
            StreamableHttpPostResponse::Sse(screened(events), id)
        }
        other => other,
    }
}

/// Both forms of each call are passed on: the defaults of the `_with_max_sse_event_size` forms
/// would call the plain ones and lose the inner client's bound on an event's bytes.
impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Screened<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let r = self.0.post_message(uri, message, session_id, auth_header, custom_headers).await?;
        Ok(screened_answer(r))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let r = self
            .0
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(screened_answer(r))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let events =
            self.0.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await?;
        Ok(screened(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let events = self
            .0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(screened(events))
    }
}
