//! A model the tools may ask (web_fetch processes pages with it, google_web_search searches
//! with it). The front end injects one; core knows only this interface.

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Which of the model's own tools to give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grounding {
    /// None: a plain answer.
    None,
    /// Google Search grounding (`googleSearch`).
    GoogleSearch,
    /// Reading the URLs in the prompt (`urlContext`).
    UrlContext,
}

/// A model's answer: its text and the candidate's `groundingMetadata`, if any.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelAnswer {
    /// The model's answer.
    pub text: String,
    /// The grounding metadata, as the API sent it.
    pub grounding: Option<Value>,
}

/// The session's model, for tools that ask it (web_fetch, google_web_search).
#[async_trait]
pub trait ModelAccess: Send + Sync {
    /// Whether the model offers search and URL-context grounding (the Gemini API does;
    /// OpenAI-compatible servers do not).
    fn supports_grounding(&self) -> bool;

    /// One question, one answer.
    async fn ask(
        &self,
        prompt: &str,
        grounding: Grounding,
        cancel: &CancellationToken,
    ) -> Result<ModelAnswer, String>;
}
