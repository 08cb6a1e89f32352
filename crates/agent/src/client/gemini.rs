//! The Gemini API (`v1beta/models/{model}:streamGenerateContent?alt=sse`) and the same models
//! on Vertex AI (`v1/projects/{project}/locations/{location}/publishers/google/models/…`), with
//! function declarations. Requests are signed with an API key, or with an OAuth token from
//! Application Default Credentials (Vertex AI).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::sse::Events;
use super::{Attempt, ModelClient, ModelError, ModelRequest};
use super::{RetryPolicy, StreamEvent};
use toolbelt_core::tool::Declaration;

use crate::content::{Content, ModelTurn, Usage, text};

/// The public endpoint; `GOOGLE_GEMINI_BASE_URL` or `--base-url` replace it.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";

pub struct GeminiClient {
    http: reqwest::Client,
    base_url: String,
    credentials: Credentials,
    endpoint: Endpoint,
    model: String,
    retry: RetryPolicy,
}

/// How requests are signed.
pub enum Credentials {
    /// `x-goog-api-key` (the Gemini API; Vertex AI's express mode).
    ApiKey(String),
    /// `Authorization: Bearer`, from Application Default Credentials.
    Adc(Arc<super::adc::Adc>),
}

/// Which API the requests go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// The Gemini API.
    GeminiApi,
    /// Vertex AI: a project's models in a location (`global` or a region such as
    /// `us-central1`); with no project, express mode (an API key).
    Vertex { project: Option<String>, location: String },
}

/// Vertex AI's host for `location`.
pub fn vertex_base_url(location: &str) -> String {
    if location == "global" {
        "https://aiplatform.googleapis.com".into()
    } else {
        format!("https://{location}-aiplatform.googleapis.com")
    }
}

/// Whether `model` can name a Gemini model: it becomes part of the request's path, so only
/// the characters model names use (`gemini-2.5-pro`, `models/gemini-2.5-flash`,
/// `tunedModels/my-model-7`). An editor's model choice went into the path as it came:
/// `../../../_control/reset?` reached another endpoint of the server (issue 35).
pub fn check_model_name(model: &str) -> Result<(), String> {
    let name = model
        .strip_prefix("models/")
        .or_else(|| model.strip_prefix("tunedModels/"))
        .unwrap_or(model);
    let ok = name.len() <= 128
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{model:?} is not a Gemini model name (letters, digits, '-', '.' and '_', e.g. gemini-2.5-pro)"
        ))
    }
}

impl GeminiClient {
    pub fn new(
        api_key: impl Into<String>,
        model: impl Into<String>,
        base_url: Option<String>,
    ) -> Self {
        Self::with_endpoint(
            Credentials::ApiKey(api_key.into()),
            Endpoint::GeminiApi,
            model,
            base_url,
        )
    }

    /// A client of `endpoint` (its public host unless `base_url` names another).
    pub fn with_endpoint(
        credentials: Credentials,
        endpoint: Endpoint,
        model: impl Into<String>,
        base_url: Option<String>,
    ) -> Self {
        toolbelt_core::tls::ready();
        let base = base_url.unwrap_or_else(|| match &endpoint {
            Endpoint::GeminiApi => DEFAULT_BASE_URL.to_string(),
            Endpoint::Vertex { location, .. } => vertex_base_url(location),
        });
        Self {
            http: reqwest::Client::new(),
            base_url: base.trim_end_matches('/').to_string(),
            credentials,
            endpoint,
            model: model.into(),
            retry: RetryPolicy::default(),
        }
    }

    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The request body, serialised straight from the borrowed history (no copy per call).
    fn body<'a>(&self, request: &ModelRequest<'a>) -> Body<'a> {
        let mut tools = Vec::new();
        if !request.declarations.is_empty() {
            tools.push(ToolEntry::Functions { function_declarations: request.declarations });
        }
        tools.extend(request.builtin_tools.iter().map(ToolEntry::Builtin));
        Body {
            contents: request.contents,
            system_instruction: request
                .system_instruction
                .map(|si| json!({"parts": [{"text": si}]})),
            tools,
            generation_config: generation_config(&self.model),
        }
    }

    fn url(&self) -> String {
        let name = self.model.strip_prefix("models/").unwrap_or(&self.model);
        let path = match &self.endpoint {
            Endpoint::GeminiApi if name.starts_with("tunedModels/") => format!("v1beta/{name}"),
            Endpoint::GeminiApi => format!("v1beta/models/{name}"),
            Endpoint::Vertex { project: Some(p), location } => {
                format!("v1/projects/{p}/locations/{location}/publishers/google/models/{name}")
            }
            Endpoint::Vertex { project: None, .. } => {
                format!("v1/publishers/google/models/{name}")
            }
        };
        format!("{}/{path}:streamGenerateContent?alt=sse", self.base_url)
    }
}

/// `{"contents", "systemInstruction"?, "tools"?}`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    contents: &'a [Content],
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolEntry<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<Value>,
}

/// The sampling and thinking settings Gemini CLI 0.61 asks its chat models for: temperature 1,
/// top-p 0.95, top-k 64, and the model's thoughts included (gemini-3 models at the high
/// thinking level, gemini-2.5 ones with 8,192 thinking tokens). Other models (Gemma, tuned
/// models) get none: what they accept differs.
pub fn generation_config(model: &str) -> Option<Value> {
    let name = model.strip_prefix("models/").unwrap_or(model);
    let thinking = match toolbelt_core::ModelFamily::for_model(name) {
        toolbelt_core::ModelFamily::Gemini3 => {
            json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
        }
        _ if name.starts_with("gemini-2.5") => {
            json!({"includeThoughts": true, "thinkingBudget": 8192})
        }
        _ => return None,
    };
    Some(json!({"temperature": 1, "topP": 0.95, "topK": 64, "thinkingConfig": thinking}))
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum ToolEntry<'a> {
    #[serde(rename_all = "camelCase")]
    Functions {
        function_declarations: &'a [Declaration],
    },
    Builtin(&'a Value),
}

/// Folds one streamed chunk into the turn.
fn absorb(
    turn: &mut ModelTurn,
    chunk: &Value,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<(), ModelError> {
    if let Some(reason) = chunk.pointer("/promptFeedback/blockReason").and_then(Value::as_str) {
        return Err(ModelError::Http {
            status: 400,
            body: format!("the prompt was blocked ({reason})"),
        });
    }
    if let Some(u) = chunk.get("usageMetadata") {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        turn.usage = Usage {
            input_tokens: n("promptTokenCount"),
            output_tokens: n("candidatesTokenCount"),
            total_tokens: n("totalTokenCount"),
        };
    }
    let Some(candidate) = chunk.pointer("/candidates/0") else { return Ok(()) };
    if let Some(parts) = candidate.pointer("/content/parts").and_then(Value::as_array) {
        for part in parts {
            if let Some(t) = text(part).filter(|t| !t.is_empty()) {
                on_event(StreamEvent::Text(t.to_string()));
            } else if part.get("thought").and_then(Value::as_bool) == Some(true)
                && let Some(t) = part.get("text").and_then(Value::as_str).filter(|t| !t.is_empty())
            {
                on_event(StreamEvent::Thought(t.to_string()));
            }
            turn.push_part(part.clone());
        }
    }
    if let Some(g) = candidate.get("groundingMetadata") {
        turn.grounding = Some(g.clone());
    }
    if let Some(r) = candidate.get("finishReason").and_then(Value::as_str) {
        turn.finish_reason = Some(r.to_string());
    }
    Ok(())
}

#[async_trait]
impl ModelClient for GeminiClient {
    fn model(&self) -> &str {
        &self.model
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    async fn attempt(
        &self,
        request: &ModelRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelTurn, Attempt> {
        let url = self.url();
        let post = self.http.post(&url).json(&self.body(request));
        let post = match &self.credentials {
            Credentials::ApiKey(key) => post.header("x-goog-api-key", key),
            Credentials::Adc(adc) => {
                let token = tokio::select! {
                    t = adc.token() => t.map_err(ModelError::SignIn)?,
                    () = cancel.cancelled() => return Err(ModelError::Cancelled.into()),
                };
                post.bearer_auth(token)
            }
        };
        let mut events = Events::open(post, &url, cancel).await?;
        let mut turn = ModelTurn::default();
        let mut budget = super::AnswerBudget::new();
        while let Some(data) = events.next_or_cancel(cancel).await? {
            let chunk = budget.parse(&data)?;
            if let Some(err) = chunk.get("error") {
                let status = err.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
                return Err(ModelError::Http { status, body: err.to_string() }.into());
            }
            absorb(&mut turn, &chunk, on_event)?;
        }
        match turn.finish_reason.as_deref() {
            None => {
                Err(ModelError::Stream("no finishReason before the end of the stream".into())
                    .into())
            }
            Some("MALFORMED_FUNCTION_CALL") => Err(ModelError::Stream(
                "the model sent a malformed function call (MALFORMED_FUNCTION_CALL)".into(),
            )
            .into()),
            Some(_) => Ok(turn),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 50 (E4): the Gemini API's paths, Vertex AI's for a project and location, and its
    /// express mode's.
    #[test]
    fn each_endpoint_has_its_path() {
        let url = |endpoint: Endpoint, model: &str| {
            GeminiClient::with_endpoint(Credentials::ApiKey("k".into()), endpoint, model, None)
                .url()
        };
        assert_eq!(
            url(Endpoint::GeminiApi, "gemini-2.5-pro"),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(Endpoint::GeminiApi, "tunedModels/mine"),
            "https://generativelanguage.googleapis.com/v1beta/tunedModels/mine:streamGenerateContent?alt=sse"
        );
        let vertex = |location: &str| Endpoint::Vertex {
            project: Some("p-1".into()),
            location: location.into(),
        };
        assert_eq!(
            url(vertex("us-central1"), "gemini-2.5-pro"),
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p-1/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(vertex("global"), "models/gemini-3-pro-preview"),
            "https://aiplatform.googleapis.com/v1/projects/p-1/locations/global/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(Endpoint::Vertex { project: None, location: "global".into() }, "gemini-2.5-pro"),
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
    }
}
