//! A model client as the tools' [`ModelAccess`]: web_fetch and google_web_search ask the
//! session's model, with Gemini's `urlContext` / `googleSearch` tools when it has them.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::model::{Grounding, ModelAccess, ModelAnswer};

use crate::client::{ModelClient, ModelRequest};
use crate::content::Content;

pub struct ModelBridge {
    client: Arc<dyn ModelClient>,
    grounding: bool,
}

impl ModelBridge {
    /// `grounding`: whether the client is the Gemini API (which has search and URL context).
    pub fn new(client: Arc<dyn ModelClient>, grounding: bool) -> Self {
        Self { client, grounding }
    }
}

#[async_trait]
impl ModelAccess for ModelBridge {
    fn supports_grounding(&self) -> bool {
        self.grounding
    }

    async fn ask(
        &self,
        prompt: &str,
        grounding: Grounding,
        cancel: &CancellationToken,
    ) -> Result<ModelAnswer, String> {
        let builtin_tools = match grounding {
            Grounding::None => vec![],
            Grounding::GoogleSearch => vec![json!({"googleSearch": {}})],
            Grounding::UrlContext => vec![json!({"urlContext": {}})],
        };
        let contents = [Content::user_text(prompt)];
        let request = ModelRequest {
            contents: &contents,
            builtin_tools: if self.grounding { &builtin_tools } else { &[] },
            ..ModelRequest::default()
        };
        let turn =
            self.client.generate(&request, &mut |_| {}, cancel).await.map_err(|e| e.to_string())?;
        Ok(ModelAnswer { text: turn.text(), grounding: turn.grounding })
    }
}
