//! The model a front end talks to (`run`, `acp`), from the flags and the environment: a
//! recording (`--replay`), an OpenAI-compatible server (`--base-url`), or the Gemini API.

use std::sync::Arc;

use toolbelt_agent::client::{
    GeminiClient, ModelClient, OpenAiClient, REPLAY_DEMO, Recorder, Replay,
};

use super::EXIT_TOOL_FAILED;
use super::run::{EXIT_AUTH, EXIT_INPUT};
use crate::cli::ModelArgs;

pub const DEFAULT_GEMINI_MODEL: &str = "gemini-2.5-flash";

/// The model client the flags and environment ask for.
/// `settings_model` is `model.name` from the settings files: used for Gemini when neither `-m`
/// nor `GEMINI_MODEL` names a model (upstream's order).
pub fn client(
    args: &ModelArgs,
    settings_model: Option<String>,
) -> Result<Arc<dyn ModelClient>, (i32, String)> {
    let inner: Arc<dyn ModelClient> = if let Some(replay) = &args.replay {
        let r = if replay.is_empty() {
            Replay::parse("the built-in demo session", REPLAY_DEMO)
        } else {
            match std::fs::read_to_string(replay) {
                Err(e) => return Err((EXIT_TOOL_FAILED, format!("cannot read {replay}: {e}"))),
                Ok(text) => Replay::parse(replay, &text),
            }
        };
        Arc::new(r.map_err(|e| (EXIT_INPUT, e))?)
    } else if let Some(base) = &args.base_url {
        let model = args
            .model
            .clone()
            .or_else(|| std::env::var("OPENAI_MODEL").ok().filter(|m| !m.is_empty()))
            .unwrap_or_else(|| "default".into());
        let key = std::env::var("OPENAI_API_KEY").ok().filter(|k| !k.is_empty());
        Arc::new(OpenAiClient::new(base, model, key))
    } else {
        let Some(key) = std::env::var("GEMINI_API_KEY").ok().filter(|k| !k.is_empty()) else {
            return Err((
                EXIT_AUTH,
                "no model to talk to: set GEMINI_API_KEY, or give --base-url for an OpenAI-compatible server, or --replay for a recorded session (--replay alone plays the built-in demo)".into(),
            ));
        };
        let model = args
            .model
            .clone()
            .or_else(|| std::env::var("GEMINI_MODEL").ok().filter(|m| !m.is_empty()))
            .or(settings_model)
            .unwrap_or_else(|| DEFAULT_GEMINI_MODEL.into());
        toolbelt_agent::client::check_model_name(&model).map_err(|e| (EXIT_INPUT, e))?;
        let base = std::env::var("GOOGLE_GEMINI_BASE_URL").ok().filter(|b| !b.is_empty());
        Arc::new(GeminiClient::new(key, model, base))
    };
    match &args.record {
        Some(path) => Recorder::create(inner, path)
            .map(|r| Arc::new(r) as Arc<dyn ModelClient>)
            .map_err(|e| (EXIT_INPUT, format!("cannot create {}: {e}", path.display()))),
        None => Ok(inner),
    }
}
