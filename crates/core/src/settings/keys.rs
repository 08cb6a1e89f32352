//! What each key of a settings file means to toolbelt: honoured, known from Gemini CLI but not
//! supported, or unknown to both (most often a typo, which gets a suggestion). `config show`
//! marks every key this way, and a session warns once about each unknown key.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The keys Gemini CLI knows (see the file's header).
const UPSTREAM: &str = include_str!("upstream_keys.txt");

/// Subtrees whose keys the user names (servers, hooks, tools): not checked below their root.
const MAPS: &[&str] = &[
    "mcpServers",
    "hooks",
    "tools.toolTimeoutsMs",
    "ui.customThemes",
    "model.summarizeToolOutput",
    "modelConfigs",
    "agents.overrides",
];

/// Gemini CLI's own subtrees that toolbelt has no use for (its terminal UI, telemetry, ...):
/// whatever is in them is "not supported", never "unknown", since their keys change with every
/// Gemini CLI release.
const OPEN: &[&str] = &[
    "ui",
    "telemetry",
    "general",
    "experimental",
    "advanced",
    "agents",
    "billing",
    "ide",
    "privacy",
    "output",
    "extensions",
    "skills",
    "admin",
    "modelConfigs",
];

/// Keys Gemini CLI writes into a settings file by itself, for its own use (the sign-in method
/// it last used, its theme, its editor, the model picked in its dialog, ...; recorded from
/// 0.61's code that saves settings). They are the user's Gemini CLI state, not a choice made
/// for toolbelt, so a key of these toolbelt does not act on is passed over without a word.
const GEMINI_CLI_OWN: &[&str] = &[
    "security.auth",
    "ui.theme",
    "ui.footer",
    "general.preferredEditor",
    "general.vimMode",
    "ide.hasSeenNudge",
    "ide.enabled",
    "experimental.gemmaModelRouter",
    "experimental.voice",
    "agents.overrides",
    "skills.disabled",
    "hooksConfig.disabled",
];

/// Whether Gemini CLI writes `key` by itself (the keys it keeps for its own sign-in, UI and session state).
pub fn written_by_gemini_cli(key: &str) -> bool {
    GEMINI_CLI_OWN.iter().any(|root| under(key, root))
}

/// Keys toolbelt knows but cannot honour yet, and why.
const NOT_YET: &[(&str, &str)] = &[];

/// What a key means to toolbelt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyStatus {
    /// toolbelt does what the key says.
    Honoured,
    /// A Gemini CLI key toolbelt does not act on (with why, when there is more to say).
    NotSupported(Option<&'static str>),
    /// Neither toolbelt nor Gemini CLI knows it; the closest known key, if any is close.
    Unknown(Option<String>),
}

impl KeyStatus {
    /// The mark `config show` prints.
    pub fn mark(&self) -> String {
        match self {
            KeyStatus::Honoured => "honoured".into(),
            KeyStatus::NotSupported(None) => "not supported".into(),
            KeyStatus::NotSupported(Some(why)) => format!("not supported: {why}"),
            KeyStatus::Unknown(None) => "unknown".into(),
            KeyStatus::Unknown(Some(k)) => format!("unknown (did you mean {k}?)"),
        }
    }
}

/// The keys toolbelt acts on: the typed ones (`sensitivePaths` lists are also read file by
/// file, `mcpServers` and `hooks` as a whole; all are typed).
fn honoured() -> impl Iterator<Item = &'static str> {
    super::model::KEYS.iter().map(|(k, _)| *k)
}

fn known() -> &'static BTreeSet<&'static str> {
    static KNOWN: OnceLock<BTreeSet<&'static str>> = OnceLock::new();
    KNOWN.get_or_init(|| {
        UPSTREAM
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .chain(honoured())
            .chain(MAPS.iter().copied())
            .collect()
    })
}

/// Whether `key` is `root` or a key below it.
pub(super) fn under(key: &str, root: &str) -> bool {
    key == root || key.strip_prefix(root).is_some_and(|rest| rest.starts_with('.'))
}

/// The status of a dotted key (a leaf, or the root of a map).
pub fn status(key: &str) -> KeyStatus {
    if let Some((_, why)) = NOT_YET.iter().find(|(k, _)| under(key, k)) {
        return KeyStatus::NotSupported(Some(why));
    }
    if honoured().any(|k| under(key, k)) {
        return KeyStatus::Honoured;
    }
    let known = known();
    if known.contains(key) || known.iter().any(|k| under(key, k) && MAPS.contains(k)) {
        return KeyStatus::NotSupported(None);
    }
    let top = key.split('.').next().unwrap_or(key);
    if OPEN.contains(&top) {
        // A near-miss of a key toolbelt acts on is a typo (`general.defaultApprovalmode`),
        // even in a section toolbelt otherwise leaves to Gemini CLI.
        if let Some(close) = crate::spelling::did_you_mean(key, honoured()) {
            return KeyStatus::Unknown(Some(close.to_string()));
        }
        return KeyStatus::NotSupported(None);
    }
    if !known.iter().any(|k| under(k, top)) {
        // The whole section is unknown (`mcpServer`): suggest a section.
        let tops: BTreeSet<&str> = known.iter().filter_map(|k| k.split('.').next()).collect();
        return KeyStatus::Unknown(crate::spelling::did_you_mean(top, tops).map(String::from));
    }
    KeyStatus::Unknown(crate::spelling::did_you_mean(key, known.iter().copied()).map(String::from))
}

/// Keys that restrict what may run: a typo in one of them would silently lift the restriction,
/// so a near-miss of these is a problem, not a warning.
pub const RESTRICTIONS: &[&str] = &[
    "tools.exclude",
    "tools.core",
    "tools.confirmationRequired",
    "mcp.excluded",
    "hooks",
    "security.sensitivePaths",
    "security.disableYoloMode",
    "security.environmentVariableRedaction.blocked",
];

/// The restriction an unknown key most likely meant, if it is a near-miss of one (also with
/// a different case: `tools.Exclude`, `security.disableYOLOMode`).
pub fn meant_restriction(key: &str) -> Option<&'static str> {
    if known().contains(key) {
        return None;
    }
    // Same section, and one last part begins with the other (`tools.excludeTools`,
    // `mcp.exclude`).
    let related = |r: &str| {
        let (rs, rl) = r.rsplit_once('.').unwrap_or(("", r));
        let (ks, kl) = key.rsplit_once('.').unwrap_or(("", key));
        let (rl, kl) = (rl.to_ascii_lowercase(), kl.to_ascii_lowercase());
        rs.eq_ignore_ascii_case(ks) && (kl.starts_with(&rl) || rl.starts_with(&kl)) && kl.len() > 3
    };
    RESTRICTIONS
        .iter()
        .copied()
        .find(|r| r.eq_ignore_ascii_case(key))
        .or_else(|| crate::spelling::did_you_mean(key, RESTRICTIONS.iter().copied()))
        .or_else(|| RESTRICTIONS.iter().copied().find(|r| related(r)))
        .filter(|r| *r != key)
}

/// The key to name when `key` is unknown: its section, when the whole section is unknown.
pub fn unknown_at(key: &str) -> &str {
    let top = key.split('.').next().unwrap_or(key);
    if known().iter().any(|k| under(k, top)) { key } else { top }
}

/// The dotted keys of a settings object: its leaves, and the roots of maps.
pub fn leaf_keys(map: &Map<String, Value>) -> Vec<String> {
    fn walk(v: &Map<String, Value>, prefix: &str, out: &mut Vec<String>) {
        for (k, x) in v {
            let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            match x {
                Value::Object(inner) if !inner.is_empty() && !MAPS.contains(&key.as_str()) => {
                    walk(inner, &key, out);
                }
                _ => out.push(key),
            }
        }
    }
    let mut out = Vec::new();
    walk(map, "", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_honoured_unsupported_or_unknown() {
        assert_eq!(status("tools.exclude"), KeyStatus::Honoured);
        assert_eq!(status("mcpServers"), KeyStatus::Honoured);
        assert_eq!(status("tools.toolTimeoutsMs"), KeyStatus::Honoured);
        assert_eq!(status("ui.theme"), KeyStatus::NotSupported(None));
        assert_eq!(status("ui.someFutureKey"), KeyStatus::NotSupported(None));
        assert_eq!(status("tools.sandbox"), KeyStatus::Honoured);
        assert_eq!(status("tools.exlude"), KeyStatus::Unknown(Some("tools.exclude".into())));
        assert_eq!(status("mcpServer"), KeyStatus::Unknown(Some("mcpServers".into())));
        assert_eq!(status("mcpServer.x.command"), KeyStatus::Unknown(Some("mcpServers".into())));
        assert_eq!(unknown_at("mcpServer.x.command"), "mcpServer");
        assert_eq!(unknown_at("tools.exlude"), "tools.exlude");
        assert_eq!(status("zzzz.qqqq"), KeyStatus::Unknown(None));
        assert_eq!(
            status("general.defaultApprovalmode"),
            KeyStatus::Unknown(Some("general.defaultApprovalMode".into()))
        );
    }

    #[test]
    fn near_misses_of_restrictions_are_found() {
        for (typo, meant) in [
            ("tools.Exclude", "tools.exclude"),
            ("tools.excluded", "tools.exclude"),
            ("tools.excludeTools", "tools.exclude"),
            ("tool.exclude", "tools.exclude"),
            ("security.disableYOLOMode", "security.disableYoloMode"),
            ("mcp.exclude", "mcp.excluded"),
        ] {
            assert_eq!(meant_restriction(typo), Some(meant), "{typo}");
        }
        assert_eq!(meant_restriction("tools.exclude"), None);
        assert_eq!(meant_restriction("ui.theme"), None);
    }

    #[test]
    fn every_typed_key_is_honoured() {
        for (k, _) in super::super::model::KEYS {
            assert_eq!(status(k), KeyStatus::Honoured, "{k}");
        }
    }
}
