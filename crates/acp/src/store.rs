//! Conversations kept for `session/load`: one private JSON file per session in the state
//! folder, written whole (to a new file, then renamed over the old) after each prompt, with a
//! small `.meta` file beside it (folder, title, last update) for `session/list`.

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
    replace(dir, &path, &text)?;
    write_meta(dir, id, saved, toolbelt_core::hooks::run::timestamp())
}

/// Writes `bytes` as the private file `path` in `dir`: to a new file, then renamed over it.
fn replace(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let fresh = dir.join(format!("{name}.new"));
    toolbelt_core::files::write_private(&fresh, bytes)?;
    std::fs::rename(&fresh, path)
}

/// Writes the `.meta` file of session `id`, last updated at `updated_at`.
fn write_meta(dir: &Path, id: &str, saved: &Saved, updated_at: String) -> std::io::Result<()> {
    let meta =
        Meta { id: id.to_string(), cwd: saved.cwd.clone(), title: title_of(saved), updated_at };
    let bytes = serde_json::to_vec(&meta).map_err(std::io::Error::other)?;
    replace(dir, &dir.join(format!("{id}.meta")), &bytes)
}

/// What `session/list` shows of a kept session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub id: String,
    pub cwd: PathBuf,
    pub title: Option<String>,
    /// ISO 8601, UTC.
    pub updated_at: String,
}

/// A session's title: the model's (`update_topic`), else the start of the person's first
/// message.
fn title_of(saved: &Saved) -> Option<String> {
    if let Some(t) = saved.title.as_ref().filter(|t| !t.trim().is_empty()) {
        return Some(t.clone());
    }
    first_line(&saved.history)
}

/// The start of the person's first message (at most 80 characters of its first line).
pub fn first_line(history: &[Content]) -> Option<String> {
    let first = history.iter().find(|c| c.role == "user")?;
    let text = first.parts.iter().find_map(|p| p.get("text")?.as_str())?.trim();
    let line = text.lines().next()?.trim();
    if line.is_empty() {
        return None;
    }
    let cut: String = line.chars().take(80).collect();
    Some(if cut.len() < line.len() { format!("{cut}…") } else { cut })
}

/// The kept sessions (of folder `cwd`, when given), the latest first.
pub fn list(dir: &Path, cwd: Option<&Path>) -> Vec<Meta> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else { continue };
        if !valid_id(id) {
            continue;
        }
        let meta = read_meta(dir, id).or_else(|| {
            // A session kept before `.meta` files: read once, and its `.meta` written with
            // the time its file was last written.
            let saved = load(dir, id).ok()??;
            let modified = e.metadata().ok()?.modified().ok()?;
            let _ = write_meta(dir, id, &saved, toolbelt_core::hooks::run::timestamp_at(modified));
            read_meta(dir, id)
        });
        if let Some(m) = meta
            && cwd.is_none_or(|c| m.cwd == c)
        {
            out.push(m);
        }
    }
    out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
    out
}

fn read_meta(dir: &Path, id: &str) -> Option<Meta> {
    let path = dir.join(format!("{id}.meta"));
    let (bytes, _) = toolbelt_core::files::read_regular(&path, 64 * 1024, false).ok()?;
    serde_json::from_slice::<Meta>(&bytes).ok().filter(|m| m.id == id)
}

/// Session `id` as kept; `Ok(None)` when there is none.
pub fn load(dir: &Path, id: &str) -> std::io::Result<Option<Saved>> {
    let Some(path) = file(dir, id) else { return Ok(None) };
    // A kept conversation is toolbelt's own file; a link or a huge file is not one.
    match toolbelt_core::files::read_regular(&path, toolbelt_core::limits::ACP_SESSION_BYTES, false)
    {
        Ok((_, size)) if size > toolbelt_core::limits::ACP_SESSION_BYTES => {
            Err(std::io::Error::other(format!(
                "the stored session has {size} bytes, more than the {} MiB a session may have; start a new session",
                toolbelt_core::limits::ACP_SESSION_BYTES >> 20
            )))
        }
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

    /// Issue 50 (E2): kept sessions are listed latest first, by folder, with the title the
    /// model gave or the first line of the first message; a session kept before `.meta`
    /// files is listed too.
    #[test]
    fn kept_sessions_are_listed_latest_first_by_folder() {
        let dir = tempfile::tempdir().unwrap();
        let saved = |cwd: &str, first: &str, title: Option<&str>| Saved {
            cwd: cwd.into(),
            history: vec![Content::user_text(first)],
            mode: "default".into(),
            model: "auto".into(),
            title: title.map(String::from),
        };
        save(dir.path(), "a-1", &saved("/w", "Fix the parser\nit fails on tabs", None)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        save(dir.path(), "b-2", &saved("/other", "hello", Some("Greeting"))).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        save(dir.path(), "c-3", &saved("/w", &"x".repeat(100), None)).unwrap();
        // A session from before `.meta` files.
        std::thread::sleep(std::time::Duration::from_millis(5));
        save(dir.path(), "d-4", &saved("/w", "old one", None)).unwrap();
        std::fs::remove_file(dir.path().join("d-4.meta")).unwrap();
        // Its time is its file's (file times are coarse: set it clear of the others).
        std::fs::File::options()
            .write(true)
            .open(dir.path().join("d-4.json"))
            .unwrap()
            .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
            .unwrap();
        let all: Vec<(String, Option<String>)> =
            list(dir.path(), None).into_iter().map(|m| (m.id, m.title)).collect();
        assert_eq!(all.len(), 4, "{all:?}");
        assert_eq!(all[0].0, "d-4");
        assert!(all.contains(&("b-2".into(), Some("Greeting".into()))));
        let w: Vec<String> =
            list(dir.path(), Some(Path::new("/w"))).into_iter().map(|m| m.id).collect();
        assert_eq!(w, ["d-4", "c-3", "a-1"]);
        let a = list(dir.path(), None).into_iter().find(|m| m.id == "a-1").unwrap();
        assert_eq!(a.title.as_deref(), Some("Fix the parser"));
        let c = list(dir.path(), None).into_iter().find(|m| m.id == "c-3").unwrap();
        assert_eq!(c.title.unwrap(), format!("{}…", "x".repeat(80)));
        assert!(list(&dir.path().join("none"), None).is_empty());
    }

    /// Issue 50 review: a 30 MB prompt was kept as a 30 MB session that `session/load` then
    /// answered with "EOF while parsing a string at line 1 column 16777216".
    #[test]
    fn a_stored_session_over_the_limit_is_refused_saying_so() {
        let dir = tempfile::tempdir().unwrap();
        let saved = Saved {
            cwd: "/w".into(),
            history: vec![Content::user_text("x".repeat(17 << 20))],
            mode: "default".into(),
            model: "auto".into(),
            title: None,
        };
        save(dir.path(), "big-1", &saved).unwrap();
        let e = load(dir.path(), "big-1").unwrap_err().to_string();
        assert!(e.contains("more than the 16 MiB") && e.contains("start a new session"), "{e}");
    }
}
