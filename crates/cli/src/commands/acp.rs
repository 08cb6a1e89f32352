//! `toolbelt acp` (and `toolbelt --experimental-acp`): toolbelt as an Agent Client Protocol
//! agent for editors, over stdio. The models come from the same flags and environment as
//! `toolbelt run`'s.

use std::sync::{Arc, Mutex};

use toolbelt_acp::{AcpOptions, Models, Unavailable};
use toolbelt_agent::client::ModelClient;
use toolbelt_agent::models::ModelChoice;
use toolbelt_core::sync::LockExt as _;

use super::EXIT_OK;
use super::model::{GoogleAuth, ModelSettings, client_with, gemini_model, openai_model};
use crate::cli::{AcpArgs, ModelArgs};
use crate::error::{CliError, CliResult};

struct CliModels {
    args: ModelArgs,
    /// `model.name` and the sign-in from the user's settings.
    settings: ModelSettings,
    /// The Google sign-in in use (the environment's and settings' choice until the editor
    /// authenticates with another).
    auth: Mutex<GoogleAuth>,
}

impl CliModels {
    fn google(&self) -> bool {
        self.args.base_url.is_none() && self.args.replay.is_none()
    }

    fn make(
        &self,
        model: Option<&str>,
        auth: GoogleAuth,
    ) -> Result<Arc<dyn ModelClient>, Unavailable> {
        let mut args = self.args.clone();
        if let Some(m) = model {
            args.model = Some(m.to_string());
        }
        client_with(&args, &self.settings, auth).map_err(|(code, msg)| {
            if code == super::run::EXIT_AUTH {
                // One sentence an editor can show: what is missing and how to set it.
                Unavailable::Auth(msg)
            } else {
                Unavailable::Refused(msg)
            }
        })
    }
}

impl Models for CliModels {
    fn default_model(&self) -> String {
        if self.args.base_url.is_some() {
            return openai_model(&self.args);
        }
        gemini_model(&self.args, &self.settings)
    }

    fn choices(&self) -> Vec<ModelChoice> {
        // A recording or an OpenAI-compatible server has the one model it was started with
        // (the session shows its current model among the choices).
        if self.google() { toolbelt_agent::models::offered() } else { Vec::new() }
    }

    fn client(&self, model: &str) -> Result<Arc<dyn ModelClient>, Unavailable> {
        // A recording answers whatever it recorded, under any name.
        let named = self.args.replay.is_none().then_some(model);
        self.make(named, *self.auth.locked())
    }

    fn grounding(&self) -> bool {
        self.args.base_url.is_none()
    }

    fn auth_methods(&self) -> Vec<(String, String, String)> {
        if self.args.replay.is_some() {
            return vec![(
                "replay".into(),
                "Recorded session".into(),
                "Answers come from the --replay recording; no credentials are needed.".into(),
            )];
        }
        if let Some(url) = &self.args.base_url {
            return vec![(
                "openai-compatible".into(),
                "OpenAI-compatible server".into(),
                format!(
                    "The chat-completions server at {url}; a key from OPENAI_API_KEY when it needs one."
                ),
            )];
        }
        vec![
            (
                GoogleAuth::ApiKey.id().into(),
                "Gemini API key".into(),
                "Uses GEMINI_API_KEY (or GOOGLE_API_KEY) from the environment the editor starts toolbelt in.".into(),
            ),
            (
                GoogleAuth::Vertex.id().into(),
                "Vertex AI".into(),
                "Uses GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION (default global) and Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, or gcloud auth application-default login); or GOOGLE_API_KEY alone for express mode.".into(),
            ),
        ]
    }

    fn authenticate(&self, method: &str) -> Result<(), Unavailable> {
        let auth = match GoogleAuth::of_id(method) {
            Some(a) if self.google() => a,
            // The only method there is: usable when a client can be made.
            _ => *self.auth.locked(),
        };
        self.make(None, auth)?;
        *self.auth.locked() = auth;
        Ok(())
    }
}

pub async fn run(args: AcpArgs) -> CliResult {
    if let Some(replay) = args.models.replay.as_deref().filter(|r| !r.is_empty())
        && let Err(e) = std::fs::File::open(replay)
    {
        return Err(CliError::failed(format!("cannot read {replay}: {e}")));
    }
    let state = toolbelt_core::config::default_home_dir();
    // The user's own `model.name` and sign-in (project settings are read per session, for
    // its folder).
    let settings = std::env::current_dir()
        .ok()
        .and_then(|cwd| toolbelt_session::load_settings(&state, &cwd).ok())
        .map(|(s, _)| ModelSettings::of(&s.tools()))
        .unwrap_or_default();
    let auth = Mutex::new(GoogleAuth::chosen(&settings));
    let options = AcpOptions {
        models: Arc::new(CliModels { args: args.models, settings, auth }),
        policy_paths: args.policies,
        approval_mode: args.approval_mode,
        sandbox: args.sandbox,
        max_turns: args.max_turns,
        store_dir: state.join("acp-sessions"),
    };
    toolbelt_acp::serve(options).await.map_err(CliError::failed)?;
    Ok(EXIT_OK)
}
