//! Where a shell command stands for policy: the workspace it is measured against, and whether
//! its redirections stay in it. A leaf the shell check and the grant boundary both read.

use std::path::{Path, PathBuf};

use super::call::PolicyContext;

/// The workspace root shell paths are measured against (default: the process's folder).
pub(super) fn workspace(ctx: &PolicyContext<'_>) -> PathBuf {
    ctx.workspace
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

/// In `auto_edit`, a redirection goes through unasked only when every target is a plain file
/// of the workspace that the mode already lets the model write: a literal path, inside, not a
/// sensitive file, and not one of the files that decide what runs (settings, policies, hooks,
/// `.git/config`; see `crate::workspace::control`).
pub(super) fn redirections_stay_in_workspace(
    command: &str,
    dir_path: Option<&str>,
    ctx: &PolicyContext<'_>,
) -> bool {
    let Some(targets) = crate::shell::redirection_targets(command) else { return false };
    let Some(files) = ctx.files else { return false };
    let ws = workspace(ctx);
    let cwd = dir_path.map_or_else(|| ws.clone(), |d| ws.join(d));
    targets.iter().all(|(input, t)| {
        if t == "/dev/null"
            || (t.starts_with('&') && t[1..].bytes().all(|b| b.is_ascii_digit() || b == b'-'))
        {
            return true;
        }
        // Quotes and backslashes: bash removes them all, the grammar's text keeps them
        // (`'/'tmp/x` was judged as a name in the workspace; issue 34).
        if t.is_empty() || t.contains(['$', '`', '~', '*', '?', '[', '{', '&', '\'', '"', '\\']) {
            return false;
        }
        let path = crate::shell::safety::normalized(&cwd.join(t));
        crate::shell::safety::path_inside(&path, &ws)
            && if *input { files.may_read(&path).is_ok() } else { files.may_write(&path).is_ok() }
    })
}
