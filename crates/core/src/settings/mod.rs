//! Settings files in Gemini CLI's `settings.json` format (nested v2 keys; the older flat keys
//! are mapped), layered: `~/.gemini/settings.json` < `~/.toolbelt/settings.json` <
//! `<root>/.gemini/settings.json` < `<root>/.toolbelt/settings.json`. Objects merge key by key,
//! arrays are replaced except the exclusion lists, which are united. Every leaf remembers the
//! file that set it. Unknown keys are kept and ignored; a known key with the wrong type is an
//! error naming the file, the line and the key.
//!
//! In a folder that is not trusted ([`crate::trust`]) a project file may only tighten
//! ([`UNTRUSTED_PROJECT_KEYS`]); everything else it sets is skipped and said so.

mod duplicates;
pub mod keys;
mod model;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use model::{FailMode, HookEntry, HookGroup, HookSettings, McpServerSettings, ToolSettings};

/// Where a settings file sits, lowest precedence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// `~/.gemini/settings.json`.
    GeminiUser,
    /// `~/.toolbelt/settings.json`.
    User,
    /// `<project>/.gemini/settings.json`.
    GeminiProject,
    /// `<project>/.toolbelt/settings.json`.
    Project,
}

impl Scope {
    /// Whether the file belongs to the project (and needs trust to run commands).
    pub fn is_project(self) -> bool {
        matches!(self, Scope::GeminiProject | Scope::Project)
    }

    /// The scope's name for people.
    pub fn label(self) -> &'static str {
        match self {
            Scope::GeminiUser => "user (Gemini CLI)",
            Scope::User => "user",
            Scope::GeminiProject => "project (Gemini CLI)",
            Scope::Project => "project",
        }
    }
}

/// A malformed settings file: which file, where, which key, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {}{message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default())]
pub struct SettingsError {
    /// The file.
    pub path: PathBuf,
    /// The line of the problem, when known.
    pub line: Option<usize>,
    /// The key of the problem, when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// One loaded file.
#[derive(Clone, Debug)]
pub struct SettingsFile {
    /// Where the file sits.
    pub scope: Scope,
    /// The file.
    pub path: PathBuf,
    /// Its top-level object.
    pub value: Map<String, Value>,
}

/// What a project may set in a folder that is not trusted: only keys that tighten (deny more,
/// ask more, hide more, forbid yolo). Anything else toolbelt acts on is skipped there, so a
/// cloned repository cannot lower the user's guard by a key nobody thought to forbid
/// (`hooksConfig.enabled: false`, `security.environmentVariableRedaction.enabled: false`, ...).
/// Keys toolbelt does not act on have no effect either way.
pub const UNTRUSTED_PROJECT_KEYS: &[&str] = &[
    "tools.exclude",
    "tools.confirmationRequired",
    "mcp.excluded",
    "security.sensitivePaths",
    "security.environmentVariableRedaction.blocked",
    "security.disableYoloMode",
];

/// Whether a project file in an untrusted folder may set `key` (a leaf or map root).
fn allowed_untrusted(key: &str) -> bool {
    UNTRUSTED_PROJECT_KEYS.iter().any(|k| keys::under(key, k))
        || !matches!(
            keys::status(key),
            keys::KeyStatus::Honoured | keys::KeyStatus::NotSupported(Some(_))
        )
}

/// Flat (v1) keys and their nested (v2) places.
const LEGACY_KEYS: &[(&str, &str)] = &[
    ("coreTools", "tools.core"),
    ("allowedTools", "tools.allowed"),
    ("excludeTools", "tools.exclude"),
    ("toolDiscoveryCommand", "tools.discoveryCommand"),
    ("toolCallCommand", "tools.callCommand"),
    ("truncateToolOutputThreshold", "tools.truncateToolOutputThreshold"),
    ("allowMCPServers", "mcp.allowed"),
    ("excludeMCPServers", "mcp.excluded"),
];

/// Arrays that are united across files instead of replaced (each layer may only add).
const UNION_KEYS: &[&str] =
    &["tools.exclude", "mcp.excluded", "security.environmentVariableRedaction.blocked"];

/// The merged settings and where each value came from.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// The files read, lowest precedence first.
    pub files: Vec<SettingsFile>,
    /// All files merged.
    pub merged: Map<String, Value>,
    /// Dotted leaf key -> the file that set it.
    pub origin: BTreeMap<String, PathBuf>,
    /// Keys of project files skipped because the folder is not trusted, with their file.
    pub skipped: Vec<(PathBuf, String)>,
}

/// The four candidate files for a home (`~/.toolbelt`), the user's home and a project root.
pub fn candidate_files(
    toolbelt_home: &Path,
    user_home: Option<&Path>,
    root: Option<&Path>,
) -> Vec<(Scope, PathBuf)> {
    let mut out = Vec::new();
    if let Some(h) = user_home {
        out.push((Scope::GeminiUser, h.join(".gemini").join("settings.json")));
    }
    out.push((Scope::User, toolbelt_home.join("settings.json")));
    if let Some(r) = root {
        out.push((Scope::GeminiProject, r.join(".gemini").join("settings.json")));
        out.push((Scope::Project, r.join(".toolbelt").join("settings.json")));
    }
    out
}

fn line_of(text: &str, key: &str) -> Option<usize> {
    let last = key.rsplit('.').next().unwrap_or(key);
    let needle = format!("\"{last}\"");
    text.find(&needle).map(|i| text[..i].matches('\n').count() + 1)
}

/// Reads one file; a missing file is `Ok(None)`.
pub fn load_file(path: &Path, scope: Scope) -> Result<Option<SettingsFile>, SettingsError> {
    let text = match crate::files::read_text_bounded(path, crate::limits::SETTINGS_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(SettingsError {
                path: path.into(),
                line: None,
                key: None,
                message: format!("cannot be read: {e}"),
            });
        }
    };
    parse_file(&text, path, scope).map(Some)
}

/// Parses settings text (JSON; `//` comments, as Gemini CLI allows, are removed first).
pub fn parse_file(text: &str, path: &Path, scope: Scope) -> Result<SettingsFile, SettingsError> {
    let clean = crate::json_in::strip_comments(text);
    // A workspace's settings come with the repository: measured before they are parsed.
    let budget = crate::json_in::JsonBudget::message(crate::limits::SETTINGS_BYTES);
    let value: Value = crate::json_in::parse_str(&clean, budget).map_err(|e| {
        let (line, message) = match e {
            crate::json_in::JsonError::Invalid(e) => {
                (Some(e.line()), format!("not valid JSON: {e}"))
            }
            crate::json_in::JsonError::Refused(why) => (None, format!("not read: {why}")),
        };
        SettingsError { path: path.into(), line, key: None, message }
    })?;
    if let Some((line, message)) = duplicates::first_duplicate(&clean) {
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        return Err(SettingsError { path: path.into(), line: Some(line), key: None, message });
    }
    let Value::Object(mut map) = value else {
        return Err(SettingsError {
            path: path.into(),
            line: Some(1),
            key: None,
            message: "must be a JSON object".into(),
        });
    };
    for (old, new) in LEGACY_KEYS {
        if let Some(v) = map.remove(*old)
            && get_path(&map, new).is_none()
        {
            set_path(&mut map, new, v);
        }
    }
    model::validate(&map).map_err(|(key, message)| SettingsError {
        path: path.into(),
        line: line_of(text, &key),
        key: Some(key),
        message,
    })?;
    Ok(SettingsFile { scope, path: path.into(), value: map })
}

/// The value at a dotted path (`tools.core`) in a JSON object.
pub fn get_path<'a>(map: &'a Map<String, Value>, dotted: &str) -> Option<&'a Value> {
    let mut parts = dotted.split('.');
    let mut cur = map.get(parts.next()?)?;
    for p in parts {
        cur = cur.as_object()?.get(p)?;
    }
    Some(cur)
}

fn set_path(map: &mut Map<String, Value>, dotted: &str, v: Value) {
    let parts: Vec<&str> = dotted.split('.').collect();
    let mut cur = map;
    for p in &parts[..parts.len() - 1] {
        let entry = cur.entry(p.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(next) = entry else { return };
        cur = next;
    }
    cur.insert(parts[parts.len() - 1].to_string(), v);
}

/// Removes the key at a dotted path. An object the removal leaves empty goes too: it would
/// otherwise replace a lower layer's value (`"tools": {"sandbox": {"enabled": true}}` from a
/// project that is not trusted left `{}` over the user's `"sandbox": true`, turning the
/// sandbox off).
fn remove_path(map: &mut Map<String, Value>, dotted: &str) -> bool {
    match dotted.split_once('.') {
        None => map.remove(dotted).is_some(),
        Some((head, rest)) => {
            let Some(Value::Object(inner)) = map.get_mut(head) else { return false };
            let removed = remove_path(inner, rest);
            if removed && inner.is_empty() {
                map.remove(head);
            }
            removed
        }
    }
}

fn merge_into(
    dst: &mut Map<String, Value>,
    src: &Map<String, Value>,
    prefix: &str,
    path: &Path,
    origin: &mut BTreeMap<String, PathBuf>,
) {
    for (k, v) in src {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match (dst.get_mut(k), v) {
            (Some(Value::Object(d)), Value::Object(s)) => merge_into(d, s, &key, path, origin),
            (Some(Value::Array(d)), Value::Array(s)) if UNION_KEYS.contains(&key.as_str()) => {
                for x in s {
                    if !d.contains(x) {
                        d.push(x.clone());
                    }
                }
                origin.insert(key, path.into());
            }
            _ => {
                // The key and the keys under it (`key.` up to `key/`, the next character):
                // a look at the whole map for each key took 21 s for a file of 16,000 keys.
                origin.remove(&key);
                let under: Vec<String> = origin
                    .range(format!("{key}.")..format!("{key}/"))
                    .map(|(o, _)| o.clone())
                    .collect();
                for o in under {
                    origin.remove(&o);
                }
                record_leaves(v, &key, path, origin);
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

fn record_leaves(v: &Value, key: &str, path: &Path, origin: &mut BTreeMap<String, PathBuf>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                record_leaves(x, &format!("{key}.{k}"), path, origin);
            }
        }
        _ => {
            origin.insert(key.to_string(), path.into());
        }
    }
}

impl Settings {
    /// Loads and merges the candidate files. Project keys not in [`UNTRUSTED_PROJECT_KEYS`] are
    /// dropped (and listed in `skipped`) when `trusted` is false.
    pub fn load(candidates: &[(Scope, PathBuf)], trusted: bool) -> Result<Self, SettingsError> {
        let mut files = Vec::new();
        for (scope, path) in candidates {
            if let Some(f) = load_file(path, *scope)? {
                files.push(f);
            }
        }
        Ok(Self::from_files(files, trusted))
    }

    /// Merges `files` (project files only as far as `trusted` allows).
    pub fn from_files(mut files: Vec<SettingsFile>, trusted: bool) -> Self {
        files.sort_by_key(|f| f.scope);
        let mut s = Settings::default();
        for f in &mut files {
            if f.scope.is_project() && !trusted {
                for key in keys::leaf_keys(&f.value) {
                    if !allowed_untrusted(&key) && remove_path(&mut f.value, &key) {
                        s.skipped.push((f.path.clone(), key));
                    }
                }
            }
            merge_into(&mut s.merged, &f.value, "", &f.path, &mut s.origin);
        }
        s.files = files;
        s
    }

    /// The merged value at a dotted path.
    pub fn get(&self, dotted: &str) -> Option<&Value> {
        get_path(&self.merged, dotted)
    }

    /// The typed view of the tool-related keys.
    pub fn tools(&self) -> ToolSettings {
        let mut t = model::tool_settings(&self.merged);
        t.origin = self.origin.clone();
        t
    }

    /// Applies the keys that map onto engine settings.
    pub fn apply_to(&self, config: &mut crate::config::Config) {
        model::apply(&self.merged, config);
        // Lists of sensitive paths add up across files (the merged value is only the last).
        for f in &self.files {
            if let Some(Value::Array(rules)) = get_path(&f.value, "security.sensitivePaths") {
                for rule in rules.iter().filter_map(Value::as_str) {
                    if !config.sensitive_paths.iter().any(|r| r == rule) {
                        config.sensitive_paths.push(rule.to_string());
                    }
                }
            }
        }
    }

    /// A key that is a near-miss of a restriction (`tools.Exclude`, `tool.exclude`,
    /// `security.disableYOLOMode`): the user meant to restrict something, and as written
    /// nothing would be. The first one found, as an error.
    pub fn restriction_typo(&self) -> Result<(), SettingsError> {
        for f in &self.files {
            for key in keys::leaf_keys(&f.value) {
                let at = keys::unknown_at(&key).to_string();
                // The cheap test first: the key's status looks for a near spelling among every
                // known key (a repository's file of 16,000 keys took 44 s, issue 47's attack).
                let Some(meant) =
                    keys::meant_restriction(&key).or_else(|| keys::meant_restriction(&at))
                else {
                    continue;
                };
                if let keys::KeyStatus::Unknown(_) = keys::status(&key) {
                    let text = std::fs::read_to_string(&f.path).unwrap_or_default();
                    return Err(SettingsError {
                        path: f.path.clone(),
                        line: line_of(&text, &key),
                        key: Some(key),
                        message: format!(
                            "unknown key (did you mean {meant}?); as written the restriction would not apply"
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Every key no one knows, once, with the file that holds it and the closest known key:
    /// `<file>: unknown setting tools.exlude (did you mean tools.exclude?); it is ignored`.
    pub fn unknown_key_notices(&self) -> Vec<String> {
        /// Keys of one file looked at for notices: each is matched against every known key
        /// for a near spelling, and a repository's file of 16,000 keys took 44 s of every
        /// command (issue 47's attack); the rest are counted.
        const LOOKED_AT: usize = 200;
        let mut out = Vec::new();
        for f in &self.files {
            let mut seen = std::collections::BTreeSet::new();
            let keys = keys::leaf_keys(&f.value);
            if keys.len() > LOOKED_AT {
                out.push(format!(
                    "{}: {} settings; only the first {LOOKED_AT} were checked for unknown keys",
                    f.path.display(),
                    keys.len()
                ));
            }
            for key in keys.into_iter().take(LOOKED_AT) {
                let status = keys::status(&key);
                // Security settings toolbelt does not act on are worth a word: the user may
                // believe they protect something.
                if key.starts_with("security.")
                    && matches!(status, keys::KeyStatus::NotSupported(_))
                    && !keys::written_by_gemini_cli(&key)
                    && seen.insert(key.clone())
                {
                    out.push(format!(
                        "{}: {key} is not supported by toolbelt; it has no effect",
                        f.path.display()
                    ));
                }
                if let keys::KeyStatus::Unknown(close) = status {
                    let at = keys::unknown_at(&key);
                    if !seen.insert(at.to_string()) {
                        continue;
                    }
                    let hint = close.map(|k| format!(" (did you mean {k}?)")).unwrap_or_default();
                    out.push(format!(
                        "{}: unknown setting {at}{hint}; it is ignored",
                        f.path.display()
                    ));
                }
            }
        }
        out
    }

    /// One line about skipped project keys, if any.
    pub fn skipped_notice(&self) -> Option<String> {
        if self.skipped.is_empty() {
            return None;
        }
        let mut by_file: BTreeMap<&Path, Vec<&str>> = BTreeMap::new();
        for (p, k) in &self.skipped {
            by_file.entry(p).or_default().push(k);
        }
        let parts: Vec<String> =
            by_file.iter().map(|(p, ks)| format!("{} ({})", ks.join(", "), p.display())).collect();
        Some(format!(
            "this folder is not trusted, so these project settings were skipped: {}; run `toolbelt trust` to use them",
            parts.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests;
