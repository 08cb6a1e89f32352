//! Folder trust: project settings that can run commands or allow more (hooks, discovery and
//! call commands, MCP servers, allow rules) take effect only in folders the user trusted.
//! Decisions live in `~/.toolbelt/trusted-folders.json` (what `toolbelt trust` writes) and in
//! Gemini CLI's own `~/.gemini/trustedFolders.json`, both in its format:
//! `{"/abs/path": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}`, and they are taken as
//! Gemini CLI takes them (the longest entry that covers a folder wins).
//! `TOOLBELT_TRUST_WORKSPACE=1` trusts the current run.
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

/// The recorded decisions: toolbelt's own file, then Gemini CLI's (`trustedFolders.json`), each
/// in its file's order.
#[derive(Clone, Debug, Default)]
pub struct TrustStore {
    path: PathBuf,
    own: Vec<(PathBuf, Level)>,
    gemini: Vec<(PathBuf, Level)>,
}

/// Gemini CLI's file of trust decisions: `GEMINI_CLI_TRUSTED_FOLDERS_PATH`, or
/// `trustedFolders.json` in the `.gemini` folder of `GEMINI_CLI_HOME` or of the user's home.
pub fn gemini_file(user_home: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| user_home.map(Path::to_path_buf))?;
    Some(home.join(".gemini").join("trustedFolders.json"))
}

impl TrustStore {
    /// Reads `<home>/trusted-folders.json`, toolbelt's own decisions (missing: none); what
    /// `toolbelt trust` changes and saves.
    pub fn load(home: &Path) -> Result<Self, TrustError> {
        let path = home.join(FILE_NAME);
        let own = read_decisions(&path)?;
        Ok(Self { path, own, gemini: Vec::new() })
    }

    /// toolbelt's own decisions and Gemini CLI's ([`gemini_file`]), so a folder trusted in
    /// either is trusted in both. A file that is not what Gemini CLI writes is an error that
    /// names it, as Gemini CLI stops on it.
    pub fn load_all(home: &Path, user_home: Option<&Path>) -> Result<Self, TrustError> {
        let mut store = Self::load(home)?;
        if let Some(path) = gemini_file(user_home) {
            store.gemini = read_decisions(&path)?;
        }
        Ok(store)
    }

    /// The decision for `dir`, as Gemini CLI takes it: of the entries that cover `dir` (a
    /// `TRUST_PARENT` entry covers its parent folder and all below it), the one whose own path
    /// is longest, the first of equal ones (toolbelt's file before Gemini CLI's); paths are
    /// compared with their links resolved where they exist. `Some(true)` trusted,
    /// `Some(false)` not, `None` never decided.
    pub fn decision(&self, dir: &Path) -> Option<bool> {
        let dir = real(dir);
        let mut best: Option<(usize, bool)> = None;
        for (p, level) in self.own.iter().chain(&self.gemini) {
            let (scope, trusted) = match level {
                Level::TrustFolder => (p.clone(), true),
                Level::TrustParent => (p.parent().unwrap_or(p).to_path_buf(), true),
                Level::DoNotTrust => (p.clone(), false),
            };
            if dir.starts_with(real(&scope)) {
                // Gemini CLI measures the entry's text (in UTF-16 units, as JavaScript does).
                let length = p.to_string_lossy().encode_utf16().count();
                if best.is_none_or(|(l, _)| length > l) {
                    best = Some((length, trusted));
                }
            }
        }
        best.map(|(_, t)| t)
    }

    /// Records a decision for `dir` in toolbelt's own file.
    pub fn set(&mut self, dir: &Path, level: Level) {
        let dir = lexical(dir);
        match self.own.iter_mut().find(|(p, _)| *p == dir) {
            Some(entry) => entry.1 = level,
            None => self.own.push((dir, level)),
        }
    }

    /// Writes toolbelt's own file atomically.
    pub fn save(&self) -> Result<(), TrustError> {
        let map: serde_json::Map<String, Value> = self
            .own
            .iter()
            .map(|(p, l)| (p.to_string_lossy().into_owned(), Value::String(l.as_str().into())))
            .collect();
        let text = serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default() + "\n";
        crate::files::replace_file(&self.path, text.as_bytes())
            .map_err(|source| TrustError::Write { path: self.path.clone(), source })
    }
}

/// The entries of a trust file in its order (missing: none). Comments are allowed, as Gemini
/// CLI allows them; a value that is not one of the three levels makes the whole file an error.
fn read_decisions(path: &Path) -> Result<Vec<(PathBuf, Level)>, TrustError> {
    let text = match crate::files::read_text_bounded(path, crate::limits::SETTINGS_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(TrustError::Malformed { path: path.into(), message: e.to_string() });
        }
    };
    let bad = |m: String| TrustError::Malformed { path: path.into(), message: m };
    let budget = crate::json_in::JsonBudget::message(crate::limits::SETTINGS_BYTES);
    let text = crate::json_in::strip_comments(&text);
    let v: Value = crate::json_in::parse_str(&text, budget).map_err(|e| match e {
        crate::json_in::JsonError::Invalid(e) => bad(format!("not valid JSON: {e}")),
        crate::json_in::JsonError::Refused(why) => bad(format!("not read: {why}")),
    })?;
    let Value::Object(map) = v else { return Err(bad("must be a JSON object".into())) };
    let mut out = Vec::with_capacity(map.len());
    for (k, v) in map {
        let level = v.as_str().and_then(Level::parse).ok_or_else(|| {
            bad(format!("{k}: must be \"TRUST_FOLDER\", \"TRUST_PARENT\" or \"DO_NOT_TRUST\""))
        })?;
        out.push((lexical(Path::new(&k)), level));
    }
    Ok(out)
}

/// `p` made absolute (from the current folder) with `.` and `..` taken out by their words, as
/// Gemini CLI keys its entries.
fn lexical(p: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(p)
    };
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `p` with its links resolved where it exists, else as written.
fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| lexical(p))
}

/// Whether project settings of `dir` may take effect in this run, as Gemini CLI decides it:
/// `GEMINI_RESTRICTED_MODE=true` or `GEMINI_CLI_TRUST_WORKSPACE=false` never;
/// `GEMINI_CLI_TRUST_WORKSPACE=true` (or toolbelt's `TOOLBELT_TRUST_WORKSPACE=1`) always; with
/// trust checking off, always; else the decision recorded in toolbelt's or Gemini CLI's file.
pub fn is_trusted(
    home: &Path,
    user_home: Option<&Path>,
    dir: &Path,
    checking_enabled: bool,
) -> Result<bool, TrustError> {
    let set = |name: &str, to: &[&str]| std::env::var(name).is_ok_and(|v| to.contains(&v.as_str()));
    if set("GEMINI_RESTRICTED_MODE", &["true"]) || set("GEMINI_CLI_TRUST_WORKSPACE", &["false"]) {
        return Ok(false);
    }
    if !checking_enabled
        || set(ENV_TRUST, &["1", "true"])
        || set("GEMINI_CLI_TRUST_WORKSPACE", &["true"])
    {
        return Ok(true);
    }
    Ok(TrustStore::load_all(home, user_home)?.decision(dir).unwrap_or(false))
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
        assert!(is_trusted(dir.path(), None, Path::new("/w/b"), true).unwrap());
        assert!(!is_trusted(dir.path(), None, Path::new("/y"), true).unwrap());
        assert!(is_trusted(dir.path(), None, Path::new("/y"), false).unwrap());
    }

    #[test]
    fn a_malformed_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), r#"{"/w": "YES"}"#).unwrap();
        let e = TrustStore::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains(FILE_NAME) && e.contains("/w: must be"), "{e}");
    }
}
