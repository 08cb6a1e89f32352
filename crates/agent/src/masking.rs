//! History masking: before each model request, old function responses
//! beyond the newest ~50,000 tokens of tool output are saved to files and replaced by a short
//! preview with the file's path, once at least ~30,000 tokens can be saved that way. The
//! latest turn and the responses of question/plan tools are never masked.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::content::Content;

/// Thresholds, in estimated tokens (4 characters each).
#[derive(Clone, Debug)]
pub struct Masking {
    pub protect_tokens: usize,
    pub min_prunable_tokens: usize,
    /// Where masked outputs are saved.
    pub dir: PathBuf,
}

impl Masking {
    pub fn new(dir: PathBuf) -> Self {
        Self { protect_tokens: 50_000, min_prunable_tokens: 30_000, dir }
    }
}

const EXEMPT: [&str; 4] = ["activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"];
const PREVIEW_CHARS: usize = 250;

fn tokens(v: &Value) -> usize {
    v.to_string().len() / 4
}

fn preview(text: &str) -> String {
    let n = text.chars().count();
    if n <= PREVIEW_CHARS * 2 {
        return text.to_string();
    }
    let head: String = text.chars().take(PREVIEW_CHARS).collect();
    let tail: String = text.chars().skip(n - PREVIEW_CHARS).collect();
    format!("{head}\n...\n{tail}")
}

fn save(dir: &Path, name: &str, id: &str, text: &str) -> std::io::Result<PathBuf> {
    let safe = |s: &str| {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect::<String>()
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let path = dir.join(format!("{}_{}_{nanos:08x}.txt", safe(name), safe(id)));
    toolbelt_core::files::write_private(&path, text.as_bytes())?;
    Ok(path)
}

/// Masks in place; returns how many responses were masked.
pub fn mask(history: &mut [Content], m: &Masking) -> usize {
    // (message, part) of every maskable response, newest first, skipping the latest turn.
    let last_user = history.iter().rposition(|c| c.role == "user");
    let mut seen = 0usize;
    let mut prunable: Vec<(usize, usize)> = Vec::new();
    let mut prunable_tokens = 0usize;
    for (mi, c) in history.iter().enumerate().rev() {
        if Some(mi) == last_user || c.role != "user" {
            continue;
        }
        for (pi, p) in c.parts.iter().enumerate().rev() {
            let Some(fr) = p.get("functionResponse") else { continue };
            let name = fr.get("name").and_then(Value::as_str).unwrap_or("");
            let response = fr.get("response").cloned().unwrap_or(Value::Null);
            let masked = response
                .get("output")
                .and_then(Value::as_str)
                .is_some_and(|o| o.starts_with("<tool_output_masked>"));
            if EXEMPT.contains(&name) || masked {
                continue;
            }
            let t = tokens(&response);
            if seen > m.protect_tokens {
                prunable.push((mi, pi));
                prunable_tokens += t;
            }
            seen += t;
        }
    }
    if prunable_tokens < m.min_prunable_tokens {
        return 0;
    }
    let mut count = 0;
    for (mi, pi) in prunable {
        let fr = &mut history[mi].parts[pi]["functionResponse"];
        let name = fr.get("name").and_then(Value::as_str).unwrap_or("tool").to_string();
        let id = fr.get("id").and_then(Value::as_str).unwrap_or("call").to_string();
        let response = fr.get("response").cloned().unwrap_or(Value::Null);
        let text = match response.get("output").or_else(|| response.get("error")) {
            Some(Value::String(s)) => s.clone(),
            _ => response.to_string(),
        };
        let Ok(path) = save(&m.dir, &name, &id, &text) else { continue };
        fr["response"] = json!({"output": format!(
            "<tool_output_masked>\n{}\n\nOutput too large. Full output available at: {}\n</tool_output_masked>",
            preview(&text),
            path.display()
        )});
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn responses(sizes: &[usize]) -> Vec<Content> {
        let mut h = vec![Content::user_text("go")];
        for (i, n) in sizes.iter().enumerate() {
            h.push(Content {
                role: "model".into(),
                parts: vec![json!({"functionCall": {"name": "read_file", "args": {}}})],
            });
            h.push(Content { role: "user".into(), parts: vec![json!({"functionResponse": {"id": format!("c{i}"), "name": "read_file", "response": {"output": "x".repeat(*n)}}})] });
        }
        h
    }

    #[test]
    fn old_outputs_beyond_the_protected_window_are_saved_and_previewed() {
        let dir = tempfile::tempdir().unwrap();
        let m = Masking {
            protect_tokens: 1_000,
            min_prunable_tokens: 500,
            dir: dir.path().to_path_buf(),
        };
        // Oldest first: 3 outputs of ~1,000 tokens, then the latest turn (never masked). The
        // newest of the three fills the protected window; the two older ones are masked.
        let mut h = responses(&[4_000, 4_000, 4_000, 4_000]);
        assert_eq!(mask(&mut h, &m), 2);
        let out = h[2].parts[0]["functionResponse"]["response"]["output"].as_str().unwrap();
        assert!(out.starts_with("<tool_output_masked>\nxxxx"), "{out}");
        let path = out
            .split("Full output available at: ")
            .nth(1)
            .unwrap()
            .trim_end_matches("\n</tool_output_masked>");
        assert_eq!(std::fs::read_to_string(path).unwrap().len(), 4_000);
        let output = |i: usize| {
            h[i].parts[0]["functionResponse"]["response"]["output"].as_str().unwrap().to_string()
        };
        assert!(output(4).starts_with("<tool_output_masked>"));
        assert!(output(6).starts_with("xxx") && output(8).starts_with("xxx"));
        assert_eq!(mask(&mut h, &m), 0, "masked outputs are not masked again");
    }

    #[test]
    fn nothing_is_masked_below_the_minimum() {
        let dir = tempfile::tempdir().unwrap();
        let m = Masking {
            protect_tokens: 1_000,
            min_prunable_tokens: 5_000,
            dir: dir.path().to_path_buf(),
        };
        let mut h = responses(&[4_000, 4_000, 4_000, 4_000]);
        assert_eq!(mask(&mut h, &m), 0);
    }
}
