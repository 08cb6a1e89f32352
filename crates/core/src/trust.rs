//! Folder trust: project settings that can run commands or allow more (hooks, discovery and
//! call commands, MCP servers, allow rules) take effect only in folders the user trusted.
//! Decisions live in `~/.toolbelt/trusted-folders.json`, in Gemini CLI's `trustedFolders.json`
//! format: `{"/abs/path": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}`; the decision
//! nearest to a folder wins. `TOOLBELT_TRUST_WORKSPACE=1` trusts the current run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The file of trust decisions, in toolbelt's state folder.
pub const FILE_NAME: &str = "trusted-folders.json";
/// Set to `true` to trust the workspace without a recorded decision (CI).
pub const ENV_TRUST: &str = "TOOLBELT_TRUST_WORKSPACE";

/// A trust decision for a folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// This folder is trusted.
    TrustFolder,
    /// This folder's parent, and so its siblings, are trusted.
    TrustParent,
    /// This folder is not trusted.
    DoNotTrust,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::TrustFolder => "TRUST_FOLDER",
            Level::TrustParent => "TRUST_PARENT",
            Level::DoNotTrust => "DO_NOT_TRUST",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "TRUST_FOLDER" => Some(Level::TrustFolder),
            "TRUST_PARENT" => Some(Level::TrustParent),
            "DO_NOT_TRUST" => Some(Level::DoNotTrust),
            _ => None,
        }
    }
}

/// Trust decisions that could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The file is not a trust file toolbelt understands.
    #[error("{path}: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why it could not be written.
        source: std::io::Error,
    },
}

/// The recorded decisions.
#[derive(Clone, Debug, Default)]
pub struct TrustStore {
    path: PathBuf,
    entries: BTreeMap<PathBuf, Level>,
}

impl TrustStore {
    /// Reads `<home>/trusted-folders.json` (missing: no decisions).
    pub fn load(home: &Path) -> Result<Self, TrustError> {
        let path = home.join(FILE_NAME);
        let mut store = Self { path: path.clone(), entries: BTreeMap::new() };
        let text = match crate::files::read_text_bounded(&path, crate::limits::SETTINGS_BYTES) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(store),
            Err(e) => return Err(TrustError::Malformed { path, message: e.to_string() }),
        };
        let bad = |m: String| TrustError::Malformed { path: path.clone(), message: m };
        let budget = crate::json_in::JsonBudget::message(crate::limits::SETTINGS_BYTES);
        let v: Value = crate::json_in::parse_str(&text, budget).map_err(|e| match e {
            crate::json_in::JsonError::Invalid(e) => bad(format!("not valid JSON: {e}")),
            crate::json_in::JsonError::Refused(why) => bad(format!("not read: {why}")),
        })?;
        let Value::Object(map) = v else { return Err(bad("must be a JSON object".into())) };
        for (k, v) in map {
            let level = v.as_str().and_then(Level::parse).ok_or_else(|| {
                bad(format!("{k}: must be \"TRUST_FOLDER\", \"TRUST_PARENT\" or \"DO_NOT_TRUST\""))
            })?;
            store.entries.insert(PathBuf::from(k), level);
        }
        Ok(store)
    }

    /// The nearest decision for `dir`: `Some(true)` trusted, `Some(false)` not, `None` never
    /// decided.
    pub fn decision(&self, dir: &Path) -> Option<bool> {
        let mut best: Option<(usize, bool)> = None;
        for (p, level) in &self.entries {
            let (scope, trusted) = match level {
                Level::TrustFolder => (p.as_path(), true),
                Level::TrustParent => (p.parent().unwrap_or(p), true),
                Level::DoNotTrust => (p.as_path(), false),
            };
            if dir.starts_with(scope) {
                let depth = scope.components().count();
                if best.is_none_or(|(d, _)| depth >= d) {
                    best = Some((depth, trusted));
                }
            }
        }
        best.map(|(_, t)| t)
    }

    /// Records a decision for `dir`.
    pub fn set(&mut self, dir: &Path, level: Level) {
        self.entries.insert(dir.to_path_buf(), level);
    }

    /// Writes the file atomically.
    pub fn save(&self) -> Result<(), TrustError> {
        let map: serde_json::Map<String, Value> = self
            .entries
            .iter()
            .map(|(p, l)| (p.to_string_lossy().into_owned(), Value::String(l.as_str().into())))
            .collect();
        let text = serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default() + "\n";
        crate::files::replace_file(&self.path, text.as_bytes())
            .map_err(|source| TrustError::Write { path: self.path.clone(), source })
    }
}

/// Whether project settings of `dir` may take effect in this run: trust checking off, the
/// environment override, or a recorded decision.
pub fn is_trusted(home: &Path, dir: &Path, checking_enabled: bool) -> Result<bool, TrustError> {
    if !checking_enabled || std::env::var(ENV_TRUST).is_ok_and(|v| v == "1" || v == "true") {
        return Ok(true);
    }
    Ok(TrustStore::load(home)?.decision(dir).unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_decision_wins_and_survives_a_save() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = TrustStore::load(dir.path()).unwrap();
        assert_eq!(s.decision(Path::new("/w/a")), None);
        s.set(Path::new("/w"), Level::TrustFolder);
        s.set(Path::new("/w/a/secret"), Level::DoNotTrust);
        s.set(Path::new("/x/child"), Level::TrustParent);
        s.save().unwrap();
        let s = TrustStore::load(dir.path()).unwrap();
        assert_eq!(s.decision(Path::new("/w/a")), Some(true));
        assert_eq!(s.decision(Path::new("/w/a/secret/deeper")), Some(false));
        assert_eq!(s.decision(Path::new("/x/other")), Some(true));
        assert_eq!(s.decision(Path::new("/y")), None);
        assert!(is_trusted(dir.path(), Path::new("/w/b"), true).unwrap());
        assert!(!is_trusted(dir.path(), Path::new("/y"), true).unwrap());
        assert!(is_trusted(dir.path(), Path::new("/y"), false).unwrap());
    }

    #[test]
    fn a_malformed_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), r#"{"/w": "YES"}"#).unwrap();
        let e = TrustStore::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains(FILE_NAME) && e.contains("/w: must be"), "{e}");
    }
}
