//! `update_topic`: the model names the chapter it is in (`title`, `summary`) and states its
//! immediate intent; the session remembers the current topic and intent, and the model gets
//! upstream's texts back (`Current topic: ...`, `Strategic Intent: ...`).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::ToolResult;
use toolbelt_core::sync::LockExt;
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

pub const NAME: &str = "update_topic";

/// The session's topic and intent (upstream's `TopicState`).
#[derive(Debug, Default)]
struct Topic {
    title: Option<String>,
    intent: Option<String>,
}

/// The tool, with the session's current topic.
#[derive(Default)]
pub struct UpdateTopic {
    state: Arc<Mutex<Topic>>,
}

#[derive(Deserialize)]
struct Params {
    title: Option<String>,
    summary: Option<String>,
    strategic_intent: Option<String>,
}

impl Tool for UpdateTopic {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Update Topic Context"
    }
    fn kind(&self) -> Kind {
        Kind::Think
    }

    /// It only names the session's topic (upstream allows it in read-only mode as innocuous).
    fn effects(&self) -> toolbelt_core::kind::Effects {
        toolbelt_core::kind::Effects::of_kind(Kind::Read)
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/update_topic.md").trim_end().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "The new chapter's title."},
                    "summary": {"type": "string", "description": "(OPTIONAL) Five to ten sentences: what the previous chapter did and what the new one sets out to do. Give it whenever the topic changes."},
                    "strategic_intent": {"type": "string", "description": "Required: one sentence on what you are about to do."}
                },
                "required": ["strategic_intent"]
            }),
        }
    }

    fn build(&self, params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        Ok(Box::new(UpdateTopicCall { params: p, state: self.state.clone() }))
    }
}

struct UpdateTopicCall {
    params: Params,
    state: Arc<Mutex<Topic>>,
}

/// Trimmed, line breaks turned into spaces, `None` when empty (upstream's sanitising).
fn clean(s: Option<&str>) -> Option<String> {
    let s = s?.trim();
    let one_line: String =
        s.split(['\r', '\n']).filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ");
    (!one_line.is_empty()).then_some(one_line)
}

#[async_trait]
impl Invocation for UpdateTopicCall {
    fn description(&self) -> String {
        match (&self.params.title, &self.params.strategic_intent) {
            (Some(t), _) if !t.is_empty() => format!("Update topic to: \"{t}\""),
            (_, intent) => {
                format!("Update tactical intent: \"{}\"", intent.as_deref().unwrap_or("..."))
            }
        }
    }

    async fn execute(&self, _ctx: ExecContext) -> ToolResult {
        let p = &self.params;
        let mut state = self.state.locked();
        let title = p.title.as_deref().map(str::trim).filter(|t| !t.is_empty());
        let is_new = title.is_some_and(|t| Some(t) != state.title.as_deref());
        if let Some(t) = clean(p.title.as_deref()) {
            state.title = Some(t);
        }
        if let Some(i) = clean(p.strategic_intent.as_deref()) {
            state.intent = Some(i);
        }
        let topic = state.title.clone().unwrap_or_else(|| "...".into());
        let intent_given = p.strategic_intent.as_deref().map(str::trim).filter(|i| !i.is_empty());
        let intent = intent_given
            .map(String::from)
            .or_else(|| state.intent.clone())
            .unwrap_or_else(|| "...".into());
        let summary = p.summary.as_deref().filter(|s| !s.is_empty()).unwrap_or("...");
        let (mut llm, mut display) = if is_new {
            (
                format!("Current topic: \"{topic}\"\nTopic summary: {summary}"),
                format!("## 📂 Topic: **{topic}**\n\n**Summary:**\n{summary}"),
            )
        } else {
            (
                format!("Strategic Intent: {intent}"),
                format!("> [!STRATEGY]\n> **Intent:** {intent}"),
            )
        };
        if is_new && let Some(i) = intent_given {
            llm.push_str(&format!("\n\nStrategic Intent: {i}"));
            display.push_str(&format!("\n\n> [!STRATEGY]\n> **Intent:** {i}"));
        }
        // Front ends show the topic as the session's title (ACP's session info).
        let mut r = ToolResult::text(llm, display);
        if let Some(t) = &state.title {
            r.data = Some(serde_json::json!({"topic": t}));
        }
        r
    }
}
