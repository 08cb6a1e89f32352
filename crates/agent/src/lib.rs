//! toolbelt-agent: model clients and the headless turn loop.
//!
//! - [`content`]: the conversation in the Gemini API's shape
//! - [`client`]: the Gemini API, OpenAI-compatible chat completions, retries, record/replay
//! - [`agent`]: the turn loop — model call, every function call through the scheduler, one
//!   response per call, until the model answers without calls or the turn limit is reached
//! - [`compress`]: `/compress`, the conversation replaced by the model's summary of it
//! - [`context`]: GEMINI.md context files for the system instruction
//! - [`models`]: the Gemini models on offer (0.61's list), aliases, unknown names refused
//! - [`prompt`]: the system prompt (`prompt/system.md`), rendered per mode, family and tools
//! - [`masking`]: old tool outputs saved to files and previewed, before each model call
//! - [`bridge`]: the session's model for the tools that ask one (web_fetch, google_web_search)

pub mod agent;
pub mod bridge;
pub mod client;
pub mod compress;
pub mod content;
pub mod context;
pub mod masking;
pub mod metrics;
pub mod models;
pub mod prompt;
