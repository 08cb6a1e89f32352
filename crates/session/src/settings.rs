//! Settings files and folder trust for a root: each file read once, project files applied only
//! as far as the folder's trust allows.

use std::path::{Path, PathBuf};

use toolbelt_core::settings::{Settings, candidate_files};

use crate::SessionError;

/// The first root (default: the current folder), made absolute.
pub fn primary_root(roots: &[PathBuf]) -> Result<PathBuf, SessionError> {
    let root = match roots.first() {
        Some(r) => r.clone(),
        None => std::env::current_dir().map_err(SessionError::CurrentDir)?,
    };
    Ok(std::fs::canonicalize(&root).unwrap_or(root))
}

/// Whether folder trust is checked: on unless the *user* settings turn it off (a project
/// cannot switch off its own check).
fn trust_checking(settings_of_user: &Settings) -> bool {
    settings_of_user
        .get("security.folderTrust.enabled")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true)
}

/// Settings and trust for a root: the files (each read once), and whether the folder is
/// trusted. `home` is toolbelt's state folder; the user's own `~/.gemini` is looked up in the
/// user's home folder.
pub fn load_settings(home: &Path, root: &Path) -> Result<(Settings, bool), SessionError> {
    load_settings_from(home, toolbelt_core::files::user_home().as_deref(), root)
}

/// As [`load_settings`], with the user's home folder given (`None`: no user settings).
pub fn load_settings_from(
    home: &Path,
    user_home: Option<&Path>,
    root: &Path,
) -> Result<(Settings, bool), SessionError> {
    let mut files = Vec::new();
    for (scope, path) in candidate_files(home, user_home, Some(root)) {
        if let Some(f) = toolbelt_core::settings::load_file(&path, scope)? {
            files.push(f);
        }
    }
    let user: Vec<_> = files.iter().filter(|f| !f.scope.is_project()).cloned().collect();
    let checking = trust_checking(&Settings::from_files(user, true));
    let trusted = toolbelt_core::trust::is_trusted(home, user_home, root, checking)?;
    Ok((Settings::from_files(files, trusted), trusted))
}

/// Whether `root` is a trusted folder, judged for that folder (its own trust decision, the
/// user's `security.folderTrust` setting); anything that cannot be read counts as not trusted.
pub fn root_trusted(home: &Path, user_home: Option<&Path>, root: &Path) -> bool {
    load_settings_from(home, user_home, root).map(|(_, trusted)| trusted).unwrap_or(false)
}
