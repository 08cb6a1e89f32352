//! `toolbelt acp` (and `toolbelt --experimental-acp`): toolbelt as an Agent Client Protocol
//! agent for editors, over stdio. The models come from the same flags and environment as
//! `toolbelt run`'s.

use std::sync::Arc;

use toolbelt_acp::{AcpOptions, Models};
use toolbelt_agent::client::ModelClient;

use super::EXIT_OK;
use super::model::{DEFAULT_GEMINI_MODEL, client};
use crate::cli::{AcpArgs, ModelArgs};
use crate::error::{CliError, CliResult};

/// Gemini models an editor may switch to (the default model, or `-m`, is added when missing).
const GEMINI_MODELS: &[&str] = &["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"];

struct CliModels {
    args: ModelArgs,
    /// `model.name` from the user's settings.
    settings_model: Option<String>,
}

impl CliModels {
    fn with_model(&self, model: Option<&str>) -> Result<Arc<dyn ModelClient>, String> {
        let mut args = self.args.clone();
        if let Some(m) = model {
            args.model = Some(m.to_string());
        }
        client(&args, self.settings_model.clone()).map_err(|(_, msg)| msg)
    }
}

impl Models for CliModels {
    fn default_model(&self) -> String {
        match self.with_model(None) {
            Ok(c) => c.model().to_string(),
            Err(_) => self
                .args
                .model
                .clone()
                .or_else(|| std::env::var("GEMINI_MODEL").ok().filter(|m| !m.is_empty()))
                .or_else(|| self.settings_model.clone())
                .unwrap_or_else(|| DEFAULT_GEMINI_MODEL.into()),
        }
    }

    fn choices(&self) -> Vec<String> {
        let current = self.default_model();
        if self.args.base_url.is_some() || self.args.replay.is_some() {
            return vec![current];
        }
        let mut all: Vec<String> = GEMINI_MODELS.iter().map(|m| m.to_string()).collect();
        if !all.contains(&current) {
            all.insert(0, current);
        }
        all
    }

    fn client(&self, model: &str) -> Result<Arc<dyn ModelClient>, String> {
        // A recording answers whatever it recorded, under any name.
        let named = (self.args.replay.is_none()).then_some(model);
        self.with_model(named)
    }

    fn grounding(&self) -> bool {
        self.args.base_url.is_none()
    }

    fn auth_methods(&self) -> Vec<(String, String, String)> {
        let (id, name, about) = if self.args.replay.is_some() {
            (
                "replay",
                "Recorded session",
                "Answers come from the --replay recording; no credentials are needed.",
            )
        } else if let Some(url) = &self.args.base_url {
            return vec![(
                "openai-compatible".into(),
                "OpenAI-compatible server".into(),
                format!(
                    "The chat-completions server at {url}; a key from OPENAI_API_KEY when it needs one."
                ),
            )];
        } else {
            (
                "gemini-api-key",
                "Gemini API key",
                "Set GEMINI_API_KEY in the environment the editor starts toolbelt with.",
            )
        };
        vec![(id.into(), name.into(), about.into())]
    }
}

pub async fn run(args: AcpArgs) -> CliResult {
    if let Some(replay) = args.models.replay.as_deref().filter(|r| !r.is_empty())
        && let Err(e) = std::fs::File::open(replay)
    {
        return Err(CliError::failed(format!("cannot read {replay}: {e}")));
    }
    let state = toolbelt_core::config::default_home_dir();
    // The user's own `model.name` (project settings are read per session, for its folder).
    let settings_model = std::env::current_dir()
        .ok()
        .and_then(|cwd| toolbelt_session::load_settings(&state, &cwd).ok())
        .and_then(|(s, _)| s.tools().model_name);
    let options = AcpOptions {
        models: Arc::new(CliModels { args: args.models, settings_model }),
        policy_paths: args.policies,
        approval_mode: args.approval_mode,
        sandbox: args.sandbox,
        max_turns: args.max_turns,
        store_dir: state.join("acp-sessions"),
    };
    toolbelt_acp::serve(options).await.map_err(CliError::failed)?;
    Ok(EXIT_OK)
}
