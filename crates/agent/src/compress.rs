//! `/compress`: the conversation so far replaced by the model's own summary of it, so a long
//! session goes on with room for more. The summary is asked for with no tools on offer, and
//! the conversation is left as it was when the model fails or gives nothing.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::client::{ModelClient, ModelRequest};
use crate::content::Content;

/// What the model is asked for.
const ASK: &str = "Summarise our conversation so far for your own later use; it will replace \
the conversation. Keep what is needed to go on: the person's goal and requests, decisions \
made and why, the files read and changed (with paths), commands run and what they showed, \
errors met and how they were solved, and what is left to do. Be complete but terse; use \
Markdown headings and lists. Write only the summary.";

/// The outcome of a compression.
#[derive(Debug)]
pub struct Compressed {
    /// The new conversation: the summary, and the model's acknowledgement.
    pub history: Vec<Content>,
    /// Messages replaced by the summary.
    pub replaced: usize,
    /// Approximate sizes (characters of JSON) before and after.
    pub before_chars: usize,
    pub after_chars: usize,
}

fn size(history: &[Content]) -> usize {
    serde_json::to_string(history).map_or(0, |s| s.len())
}

/// Asks `client` for a summary of `history` and returns the shorter conversation.
pub async fn compress(
    client: &dyn ModelClient,
    system: Option<&str>,
    history: &[Content],
    cancel: &CancellationToken,
) -> Result<Compressed, String> {
    if history.len() < 2 {
        return Err("there is nothing to compress yet".into());
    }
    let mut asked = history.to_vec();
    push_ask(&mut asked, ASK);
    let request = ModelRequest {
        system_instruction: system,
        contents: &asked,
        declarations: &[],
        builtin_tools: &[],
    };
    let turn = client
        .generate(&request, &mut |_| {}, cancel)
        .await
        .map_err(|e| format!("the summary was not made: {e}"))?;
    let summary = turn.text();
    if summary.trim().is_empty() {
        return Err("the model gave an empty summary; the conversation is unchanged".into());
    }
    let new = vec![
        Content::user_text(format!(
            "<conversation_summary>\n{}\n</conversation_summary>\nThis is a summary of our conversation so far; go on from it.",
            summary.trim()
        )),
        Content {
            role: "model".into(),
            parts: vec![json!({"text": "Understood; I will go on from the summary."})],
        },
    ];
    Ok(Compressed {
        replaced: history.len(),
        before_chars: size(history),
        after_chars: size(&new),
        history: new,
    })
}

/// The request for a summary as the person's message (after a model turn, or joined to a
/// person's message left unanswered).
fn push_ask(history: &mut Vec<Content>, text: &str) {
    match history.last_mut() {
        Some(last)
            if last.role == "user"
                && !last.parts.iter().any(|p| p.get("functionResponse").is_some()) =>
        {
            last.parts.push(json!({"text": text}));
        }
        _ => history.push(Content::user_text(text)),
    }
}
