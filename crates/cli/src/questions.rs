//! ask_user's questions on the controlling terminal: numbered options, y/n or free text.

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// Answers ask_user's questions on the controlling terminal.
pub struct TerminalQuestioner;

fn questions_blocking(questions: Vec<Value>) -> Option<Map<String, Value>> {
    let tty_in = std::fs::File::open("/dev/tty").ok()?;
    let mut tty_out = std::fs::OpenOptions::new().write(true).open("/dev/tty").ok()?;
    let mut input = std::io::BufReader::new(tty_in);
    ask_on(&questions, &mut input, &mut tty_out)
}

#[async_trait]
impl toolbelt_core::approver::Questioner for TerminalQuestioner {
    async fn ask(
        &self,
        questions: &[Value],
        cancel: &CancellationToken,
    ) -> Option<Map<String, Value>> {
        let qs = questions.to_vec();
        tokio::select! {
            r = tokio::task::spawn_blocking(move || questions_blocking(qs)) => r.ok().flatten(),
            () = cancel.cancelled() => None,
        }
    }
}

/// Answers as the terminal front end collects them: for each question, the reply line is
/// read from `input` (a number or numbers for options, `y`/`n`, or free text); an empty line
/// leaves the question unanswered; end of input dismisses the whole dialog.
fn ask_on(
    questions: &[Value],
    input: &mut dyn std::io::BufRead,
    out: &mut dyn std::io::Write,
) -> Option<Map<String, Value>> {
    let mut answers = Map::new();
    for (i, q) in questions.iter().enumerate() {
        // The model wrote these: shown, never interpreted by the terminal.
        let s = |k: &str| crate::terminal::visible(q.get(k).and_then(Value::as_str).unwrap_or(""));
        let kind = q.get("type").and_then(Value::as_str).unwrap_or("choice");
        let multi = q.get("multiSelect").and_then(Value::as_bool) == Some(true);
        let opts: Vec<(String, String)> = q
            .get("options")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|o| {
                        (
                            crate::terminal::visible(o["label"].as_str().unwrap_or("")),
                            crate::terminal::visible(o["description"].as_str().unwrap_or("")),
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
    use serde_json::json;

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
