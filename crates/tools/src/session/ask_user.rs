//! `ask_user`: questions to the person running the session, answered on their terminal (or
//! whatever front end provides a [`Questioner`]). Policy denies it where nobody can answer.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::approver::Questioner;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

pub const NAME: &str = "ask_user";

pub struct AskUser {
    questioner: Option<Arc<dyn Questioner>>,
}

impl AskUser {
    pub fn new(questioner: Option<Arc<dyn Questioner>>) -> Self {
        Self { questioner }
    }
}

/// The literal two-character escapes `\n` and `\r\n` become line breaks (upstream).
fn unescape(s: &str) -> String {
    s.replace("\\r\\n", "\n").replace("\\n", "\n")
}

fn normalize(q: &mut Value) {
    for key in ["question", "header", "placeholder"] {
        if let Some(Value::String(s)) = q.get_mut(key) {
            *s = unescape(s);
        }
    }
    if let Some(Value::Array(opts)) = q.get_mut("options") {
        for o in opts {
            if let Some(Value::String(s)) = o.get_mut("label") {
                *s = unescape(s);
            }
            if let Some(Value::String(s)) = o.get_mut("description") {
                *s = unescape(s.trim());
            }
        }
    }
}

fn check(questions: &[Value]) -> Result<(), String> {
    if questions.is_empty() {
        return Err("At least one question is required.".into());
    }
    for (i, q) in questions.iter().enumerate() {
        let n = i + 1;
        if q.get("type").and_then(Value::as_str).unwrap_or("choice") != "choice" {
            continue;
        }
        let opts = q.get("options").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        if opts.len() < 2 {
            return Err(format!(
                "Question {n}: type='choice' requires 'options' array with 2-4 items."
            ));
        }
        if opts.len() > 4 {
            return Err(format!("Question {n}: 'options' array must have at most 4 items."));
        }
        for (j, o) in opts.iter().enumerate() {
            if o.get("label").and_then(Value::as_str).is_none_or(|l| l.trim().is_empty()) {
                return Err(format!(
                    "Question {n}, option {}: 'label' is required and must be a non-empty string.",
                    j + 1
                ));
            }
            if !o.get("description").is_some_and(Value::is_string) {
                return Err(format!(
                    "Question {n}, option {}: 'description' is required and must be a string.",
                    j + 1
                ));
            }
        }
    }
    Ok(())
}

impl Tool for AskUser {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Ask User"
    }
    fn kind(&self) -> Kind {
        Kind::Communicate
    }

    fn declaration(&self, family: ModelFamily) -> Declaration {
        let description = match family {
            ModelFamily::Legacy => include_str!("descriptions/ask_user.legacy.md"),
            ModelFamily::Gemini3 => include_str!("descriptions/ask_user.gemini3.md"),
        };
        Declaration {
            name: NAME.into(),
            description: description.trim_end().into(),
            parameters: json!({
                "type": "object",
                "required": ["questions"],
                "properties": {"questions": {
                    "type": "array", "minItems": 1, "maxItems": 4,
                    "items": {
                        "type": "object",
                        "required": ["question", "header", "type"],
                        "properties": {
                            "question": {"type": "string", "description": "The whole question, clear and specific, ending with a question mark."},
                            "header": {"type": "string", "description": "A very short label shown as a tag, e.g. \"Auth\", \"Library\", \"Approach\"."},
                            "type": {"type": "string", "enum": ["choice", "text", "yesno"], "default": "choice",
                                     "description": "'choice' (the default): pick from options; 'text': a free answer; 'yesno': yes or no. Choice and yes/no questions also offer 'Other'."},
                            "options": {"type": "array", "description": "For 'choice': 2 to 4 options ('Other' is added automatically).",
                                        "items": {"type": "object", "required": ["label", "description"], "properties": {
                                            "label": {"type": "string", "description": "The option in 1 to 5 words, e.g. \"OAuth 2.0\"."},
                                            "description": {"type": "string", "description": "What choosing it means, briefly."}}}},
                            "multiSelect": {"type": "boolean", "description": "For 'choice': allow several options."},
                            "placeholder": {"type": "string", "description": "A hint shown where the user types."}
                        }
                    }
                }}
            }),
        }
    }

    fn build(&self, params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let Params { mut questions } = toolbelt_core::schema::parse_params(params)?;
        check(&questions)?;
        questions.iter_mut().for_each(normalize);
        Ok(Box::new(AskCall { questions, questioner: self.questioner.clone() }))
    }
}

/// The questions stay JSON: they go to the questioner as the model wrote them (normalised).
#[derive(serde::Deserialize)]
struct Params {
    questions: Vec<Value>,
}

struct AskCall {
    questions: Vec<Value>,
    questioner: Option<Arc<dyn Questioner>>,
}

#[async_trait]
impl Invocation for AskCall {
    fn description(&self) -> String {
        let qs: Vec<&str> = self
            .questions
            .iter()
            .filter_map(|q| q.get("question").and_then(Value::as_str))
            .collect();
        format!("Asking user: {}", qs.join(", "))
    }

    fn confirms_itself(&self) -> bool {
        true
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let types: Vec<&str> = self
            .questions
            .iter()
            .map(|q| q.get("type").and_then(Value::as_str).unwrap_or("choice"))
            .collect();
        let Some(questioner) = &self.questioner else {
            return ToolResult::simple_error(
                ErrorType::ExecutionFailed,
                "Nobody can answer questions in this session (a run without a terminal, or an editor that has no way to ask them). Decide yourself and say what you chose.",
            );
        };
        let Some(answers) = questioner.ask(&self.questions, &ctx.cancel).await else {
            return ToolResult {
                data: Some(json!({"ask_user": {"question_types": types, "dismissed": true}})),
                ..ToolResult::text(
                    "User dismissed ask_user dialog without answering.",
                    "User dismissed dialog",
                )
            };
        };
        let display = if answers.is_empty() {
            "User submitted without answering questions.".to_string()
        } else {
            let lines: Vec<String> = answers
                .iter()
                .map(|(i, a)| {
                    let header = i
                        .parse::<usize>()
                        .ok()
                        .and_then(|n| self.questions.get(n))
                        .and_then(|q| q.get("header"))
                        .and_then(Value::as_str)
                        .map(String::from)
                        .unwrap_or_else(|| format!("Q{i}"));
                    let prefix = format!("  {header} → ");
                    let pad = " ".repeat(prefix.chars().count());
                    let answer = a.as_str().map(String::from).unwrap_or_else(|| a.to_string());
                    format!("{prefix}{}", answer.replace('\n', &format!("\n{pad}")))
                })
                .collect();
            format!("**User answered:**\n{}", lines.join("\n"))
        };
        let count = answers.len();
        ToolResult {
            data: Some(json!({"ask_user": {"question_types": types, "dismissed": false,
                "empty_submission": count == 0, "answer_count": count}})),
            ..ToolResult::text(json!({"answers": Value::Object(answers)}).to_string(), display)
        }
    }
}
