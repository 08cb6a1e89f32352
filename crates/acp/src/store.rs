//! Conversations kept for `session/load`: one private JSON file per session in the state
//! folder, written whole (to a new file, then renamed over the old) after each prompt.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolbelt_agent::content::Content;

/// What a session needs to go on after toolbelt restarts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Saved {
    /// The folder the editor opened the session in.
    pub cwd: PathBuf,
    /// The conversation, as the model was sent it.
    pub history: Vec<Content>,
    /// The session's approval mode (its ACP id).
    pub mode: String,
    /// The model it used.
    pub model: String,
    /// Its title (`update_topic`), if the model gave one.
    #[serde(default)]
    pub title: Option<String>,
}

/// Whether `id` can name a saved session: the ids toolbelt makes (letters, digits, `-`), never
/// a path (an editor's `session/load` names any id it likes).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn file(dir: &Path, id: &str) -> Option<PathBuf> {
    valid_id(id).then(|| dir.join(format!("{id}.json")))
}

/// Keeps `saved` as session `id`.
pub fn save(dir: &Path, id: &str, saved: &Saved) -> std::io::Result<()> {
    let Some(path) = file(dir, id) else {
        return Err(std::io::Error::other(format!("not a session id: {id:?}")));
    };
    let text = serde_json::to_vec(saved).map_err(std::io::Error::other)?;
    let fresh = dir.join(format!("{id}.json.new"));
    toolbelt_core::files::write_private(&fresh, &text)?;
    std::fs::rename(&fresh, &path)
}

/// Session `id` as kept; `Ok(None)` when there is none.
pub fn load(dir: &Path, id: &str) -> std::io::Result<Option<Saved>> {
    let Some(path) = file(dir, id) else { return Ok(None) };
    // A kept conversation is toolbelt's own file; a link or a huge file is not one.
    match toolbelt_core::files::read_regular(&path, toolbelt_core::limits::ACP_SESSION_BYTES, false)
    {
        Ok((bytes, _)) => {
            use toolbelt_core::json_in::{self, JsonBudget, JsonError};
            use toolbelt_core::limits::{ACP_SESSION_BYTES, ACP_SESSION_VALUES};
            let budget = JsonBudget::message(usize::try_from(ACP_SESSION_BYTES).unwrap_or(0))
                .with_values(ACP_SESSION_VALUES);
            json_in::parse(&bytes, budget).map(Some).map_err(|e| match e {
                JsonError::Refused(why) => std::io::Error::other(format!(
                    "the stored session was not read: {why}; start a new session"
                )),
                JsonError::Invalid(e) => std::io::Error::other(e),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: a 7.9 MB stored session of 200,000 one-part messages took the agent to 413 MB
    /// when loaded (2,000,000 parts in 16 MiB: 684 MB). It is refused before it is parsed.
    #[test]
    fn a_stored_session_of_too_many_values_is_refused_before_it_is_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let parts = vec![r#"{"text":"a"}"#; 250_000].join(",");
        let text = format!(
            r#"{{"cwd":"/w","mode":"default","model":"m","history":[{{"role":"user","parts":[{parts}]}}]}}"#
        );
        std::fs::write(dir.path().join("s-1.json"), text).unwrap();
        let e = load(dir.path(), "s-1").unwrap_err().to_string();
        assert!(
            e.contains("more than 200000 JSON values") && e.contains("start a new session"),
            "{e}"
        );
    }

    #[test]
    fn sessions_round_trip_and_ids_are_never_paths() {
        let dir = tempfile::tempdir().unwrap();
        let saved = Saved {
            cwd: "/w".into(),
            history: vec![Content::user_text("hi")],
            mode: "default".into(),
            model: "m".into(),
            title: Some("t".into()),
        };
        save(dir.path(), "abc-1", &saved).unwrap();
        let back = load(dir.path(), "abc-1").unwrap().unwrap();
        assert_eq!(back.history, saved.history);
        assert_eq!(back.title.as_deref(), Some("t"));
        assert!(load(dir.path(), "nope").unwrap().is_none());
        for bad in ["../x", "a/b", "", ".", "a.json"] {
            assert!(!valid_id(bad), "{bad}");
            assert!(load(dir.path(), bad).unwrap().is_none());
            assert!(save(dir.path(), bad, &saved).is_err());
        }
    }
}
