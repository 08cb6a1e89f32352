//! `ask_user`: questions to the person running the session, answered on their terminal (or
//! whatever front end provides a [`Questioner`]). Policy denies it where nobody can answer.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};
use toolbelt_core::approver::Questioner;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};
use toolbelt_core::Kind;

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
        let mut questions =
            params.get("questions").and_then(Value::as_array).cloned().unwrap_or_default();
        check(&questions)?;
        questions.iter_mut().for_each(normalize);
        Ok(Box::new(AskCall { questions, questioner: self.questioner.clone() }))
    }
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
                "Nobody can answer questions in this session (no terminal).",
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

/// Answers as the terminal front end collects them: for each question, the reply line is
/// read from `input` (a number or numbers for options, `y`/`n`, or free text); an empty line
/// leaves the question unanswered; end of input dismisses the whole dialog.
pub fn ask_on(
    questions: &[Value],
    input: &mut dyn std::io::BufRead,
    out: &mut dyn std::io::Write,
) -> Option<Map<String, Value>> {
    let mut answers = Map::new();
    for (i, q) in questions.iter().enumerate() {
        let s = |k: &str| q.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let kind = q.get("type").and_then(Value::as_str).unwrap_or("choice");
        let multi = q.get("multiSelect").and_then(Value::as_bool) == Some(true);
        let opts: Vec<(String, String)> = q
            .get("options")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|o| {
                        (
                            o["label"].as_str().unwrap_or("").to_string(),
                            o["description"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let _ = writeln!(out, "\n[{}] {}", s("header"), s("question"));
        match kind {
            "text" => {
                let _ = write!(
                    out,
                    "{}> ",
                    if s("placeholder").is_empty() {
                        String::new()
                    } else {
                        format!("({}) ", s("placeholder"))
                    }
                );
            }
            "yesno" => {
                let _ = write!(out, "y = Yes, n = No, or type another answer> ");
            }
            _ => {
                for (j, (label, desc)) in opts.iter().enumerate() {
                    let _ = writeln!(out, "  {}. {label} — {desc}", j + 1);
                }
                let _ = writeln!(out, "  {}. Other (type your answer)", opts.len() + 1);
                let _ = write!(
                    out,
                    "{}> ",
                    if multi {
                        "numbers separated by commas, or text"
                    } else {
                        "a number, or text"
                    }
                );
            }
        }
        let _ = out.flush();
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let reply = line.trim();
        if reply.is_empty() {
            continue;
        }
        let answer = match kind {
            "yesno" => match reply.to_ascii_lowercase().as_str() {
                "y" | "yes" => "Yes".to_string(),
                "n" | "no" => "No".to_string(),
                _ => reply.to_string(),
            },
            "choice" | "" => {
                let picked: Option<Vec<String>> = reply
                    .split(',')
                    .map(|p| {
                        p.trim()
                            .parse::<usize>()
                            .ok()
                            .filter(|n| (1..=opts.len()).contains(n))
                            .map(|n| opts[n - 1].0.clone())
                    })
                    .collect();
                match picked {
                    Some(labels) if multi || labels.len() == 1 => labels.join(", "),
                    _ => reply.to_string(),
                }
            }
            _ => reply.to_string(),
        };
        answers.insert(i.to_string(), Value::String(answer));
    }
    Some(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_answers_by_number_yes_no_text_and_skip() {
        let qs = vec![
            json!({"question": "Which auth?", "header": "Auth", "type": "choice", "options": [{"label": "OAuth", "description": "SSO"}, {"label": "Keys", "description": "simple"}]}),
            json!({"question": "Tests?", "header": "Tests", "type": "yesno"}),
            json!({"question": "Name?", "header": "Name", "type": "text"}),
            json!({"question": "Extras?", "header": "Extras", "type": "choice", "multiSelect": true, "options": [{"label": "A", "description": ""}, {"label": "B", "description": ""}]}),
            json!({"question": "Skip me?", "header": "Skip", "type": "text"}),
        ];
        let mut input = std::io::Cursor::new("2\ny\nwidget\n1, 2\n\n");
        let mut out = Vec::new();
        let a = ask_on(&qs, &mut input, &mut out).unwrap();
        assert_eq!(Value::Object(a), json!({"0": "Keys", "1": "Yes", "2": "widget", "3": "A, B"}));
        let shown = String::from_utf8(out).unwrap();
        assert!(
            shown.contains("[Auth] Which auth?\n  1. OAuth — SSO\n  2. Keys — simple\n  3. Other"),
            "{shown}"
        );
        let mut eof = std::io::Cursor::new("");
        assert_eq!(ask_on(&qs, &mut eof, &mut Vec::new()), None, "end of input dismisses");
    }
}
