//! The model a front end talks to (`run`, `acp`), from the flags and the environment: a
//! recording (`--replay`), an OpenAI-compatible server (`--base-url`), the Gemini API (an API
//! key) or Vertex AI (Application Default Credentials, or an API key in express mode).

use std::sync::Arc;

use toolbelt_agent::client::adc::{self, Adc};
use toolbelt_agent::client::{
    Credentials, Endpoint, GeminiClient, ModelClient, OpenAiClient, REPLAY_DEMO, Recorder, Replay,
};

use super::EXIT_TOOL_FAILED;
use super::run::{EXIT_AUTH, EXIT_INPUT};
use crate::cli::ModelArgs;

pub const DEFAULT_GEMINI_MODEL: &str = toolbelt_agent::models::DEFAULT_MODEL;

/// What the settings files say about the model: `model.name` and
/// `security.auth.selectedType`.
#[derive(Clone, Debug, Default)]
pub struct ModelSettings {
    pub name: Option<String>,
    pub auth_type: Option<String>,
}

impl ModelSettings {
    pub fn of(tools: &toolbelt_core::settings::ToolSettings) -> Self {
        Self { name: tools.model_name.clone(), auth_type: tools.auth_type.clone() }
    }
}

/// How toolbelt signs in to Google's models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoogleAuth {
    /// `GEMINI_API_KEY` (or `GOOGLE_API_KEY`): the Gemini API.
    ApiKey,
    /// Vertex AI: Application Default Credentials, or `GOOGLE_API_KEY` (express mode).
    Vertex,
}

impl GoogleAuth {
    /// The ACP method id (Gemini CLI's `selectedType` names).
    pub fn id(self) -> &'static str {
        match self {
            GoogleAuth::ApiKey => "gemini-api-key",
            GoogleAuth::Vertex => "vertex-ai",
        }
    }

    pub fn of_id(id: &str) -> Option<Self> {
        match id {
            "gemini-api-key" | "use_gemini" => Some(GoogleAuth::ApiKey),
            "vertex-ai" | "use_vertex_ai" => Some(GoogleAuth::Vertex),
            _ => None,
        }
    }

    /// The way the environment and settings choose (Gemini CLI's order): Vertex AI when
    /// `GOOGLE_GENAI_USE_VERTEXAI` is true or the settings selected it, else the API key.
    pub fn chosen(settings: &ModelSettings) -> Self {
        let env_vertex = env("GOOGLE_GENAI_USE_VERTEXAI")
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        if env_vertex || settings.auth_type.as_deref() == Some("vertex-ai") {
            GoogleAuth::Vertex
        } else {
            GoogleAuth::ApiKey
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The Gemini model client for `auth`, or one sentence saying what is missing and how to set
/// it (for a terminal, and for an editor's `authenticate`).
pub fn google_client(auth: GoogleAuth, model: &str) -> Result<GeminiClient, String> {
    let model = toolbelt_agent::models::resolve(model)?;
    match auth {
        GoogleAuth::ApiKey => {
            let Some(key) = env("GEMINI_API_KEY").or_else(|| env("GOOGLE_API_KEY")) else {
                return Err("no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment toolbelt starts in; get a key at https://aistudio.google.com/apikey".into());
            };
            Ok(GeminiClient::new(key, model, env("GOOGLE_GEMINI_BASE_URL")))
        }
        GoogleAuth::Vertex => {
            let location = env("GOOGLE_CLOUD_LOCATION").unwrap_or_else(|| "global".into());
            if !adc::is_location(&location) {
                return Err(
                    "GOOGLE_CLOUD_LOCATION is not a Vertex AI location (global, us-central1, ...)"
                        .into(),
                );
            }
            let base = env("GOOGLE_VERTEX_BASE_URL");
            let project = env("GOOGLE_CLOUD_PROJECT");
            if project.as_deref().is_some_and(|p| !adc::is_project_id(p)) {
                return Err(
                    "GOOGLE_CLOUD_PROJECT is not a Google Cloud project id (letters, digits and -)"
                        .into(),
                );
            }
            // Express mode: an API key and no project.
            if project.is_none()
                && let Some(key) = env("GOOGLE_API_KEY")
            {
                let endpoint = Endpoint::Vertex { project: None, location };
                return Ok(GeminiClient::with_endpoint(
                    Credentials::ApiKey(key),
                    endpoint,
                    model,
                    base,
                ));
            }
            let home = toolbelt_core::files::user_home();
            let adc = Adc::find(env("GOOGLE_APPLICATION_CREDENTIALS").as_deref(), home.as_deref())?;
            let Some(project) = project.or_else(|| adc.project().map(String::from)) else {
                return Err("Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION, default global)".into());
            };
            let endpoint = Endpoint::Vertex { project: Some(project), location };
            Ok(GeminiClient::with_endpoint(Credentials::Adc(Arc::new(adc)), endpoint, model, base))
        }
    }
}

/// The model client the flags and environment ask for.
/// `settings` are `model.name` (used for Gemini when neither `-m` nor `GEMINI_MODEL` names a
/// model: upstream's order) and the sign-in the settings selected.
pub fn client(
    args: &ModelArgs,
    settings: &ModelSettings,
) -> Result<Arc<dyn ModelClient>, (i32, String)> {
    client_with(args, settings, GoogleAuth::chosen(settings)).map_err(|(code, msg)| {
        if code == EXIT_AUTH {
            (
                code,
                format!(
                    "no model to talk to: {msg}; or give --base-url for an OpenAI-compatible server, or --replay for a recorded session (--replay alone plays the built-in demo)"
                ),
            )
        } else {
            (code, msg)
        }
    })
}

/// [`client`] with the Google sign-in given; a missing credential is `EXIT_AUTH` with one
/// sentence saying what is missing and how to set it.
pub fn client_with(
    args: &ModelArgs,
    settings: &ModelSettings,
    auth: GoogleAuth,
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
        let model = openai_model(args);
        Arc::new(OpenAiClient::new(base, model, env("OPENAI_API_KEY")))
    } else {
        let model = toolbelt_agent::models::resolve(&gemini_model(args, settings))
            .map_err(|e| (EXIT_INPUT, e))?;
        Arc::new(google_client(auth, &model).map_err(|e| (EXIT_AUTH, e))?)
    };
    match &args.record {
        Some(path) => Recorder::create(inner, path)
            .map(|r| Arc::new(r) as Arc<dyn ModelClient>)
            .map_err(|e| (EXIT_INPUT, format!("cannot create {}: {e}", path.display()))),
        None => Ok(inner),
    }
}

/// The Gemini model a person chose: `-m`, else `GEMINI_MODEL`, else `model.name`, else 0.61's
/// default (`auto`).
pub fn gemini_model(args: &ModelArgs, settings: &ModelSettings) -> String {
    args.model
        .clone()
        .or_else(|| env("GEMINI_MODEL"))
        .or_else(|| settings.name.clone())
        .unwrap_or_else(|| DEFAULT_GEMINI_MODEL.into())
}

/// The model asked of an OpenAI-compatible server: `-m`, else `OPENAI_MODEL`, else `default`.
pub fn openai_model(args: &ModelArgs) -> String {
    args.model.clone().or_else(|| env("OPENAI_MODEL")).unwrap_or_else(|| "default".into())
}
