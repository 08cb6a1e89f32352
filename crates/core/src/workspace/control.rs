//! The files that decide what runs: toolbelt's own state (settings, policies, trusted folders,
//! saved approvals), Gemini CLI's user folder, and in each root the project's `.gemini/` and
//! `.toolbelt/` (settings, policies, hooks, commands, skills), git's `.git/config` and hooks,
//! and `GEMINI.md` context files. A model never changes them without a person (issue 34): the
//! scheduler asks before a tool writes one, in every mode but `yolo`, and a redirection to one
//! is never let through by `auto_edit`. Scratch folders inside them (`~/.toolbelt/tmp`,
//! `~/.gemini/tmp`, a project's `.gemini/tmp`, where plans and saved outputs live) are not.

use std::path::{Component, Path, PathBuf};

/// Where the user-level control folders are, as they really are.
#[derive(Clone, Debug, Default)]
pub(crate) struct ControlFolders {
    /// toolbelt's state folder (`~/.toolbelt`, or `TOOLBELT_HOME`).
    pub state: Option<PathBuf>,
    /// Gemini CLI's user folder (`~/.gemini`).
    pub gemini: Option<PathBuf>,
}

impl ControlFolders {
    /// The folders for a state folder (`home_dir` of the settings) and the user's home.
    pub(crate) fn new(state: &Path, user_home: Option<&Path>) -> Self {
        let real = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
        ControlFolders {
            state: Some(real(state.to_path_buf())),
            gemini: user_home.map(|h| real(h.join(".gemini"))),
        }
    }
}

fn first(rel: &Path) -> Option<&std::ffi::OsStr> {
    match rel.components().next() {
        Some(Component::Normal(c)) => Some(c),
        _ => None,
    }
}

fn under_tmp(rel: &Path) -> bool {
    rel.components().nth(1).is_some_and(|c| c.as_os_str() == "tmp")
}

/// Why `real` (a resolved path) is a file that decides what runs, given the folders above and
/// the roots; `None`: it is not one.
pub(crate) fn reason(real: &Path, folders: &ControlFolders, roots: &[PathBuf]) -> Option<String> {
    if let Some(state) = &folders.state
        && let Ok(rel) = real.strip_prefix(state)
        && first(rel).is_none_or(|f| f != "tmp")
    {
        return Some(format!(
            "it is in toolbelt's own state folder ({}), which holds the settings, policies and trust decisions that govern every session",
            state.display()
        ));
    }
    if let Some(gemini) = &folders.gemini
        && let Ok(rel) = real.strip_prefix(gemini)
        && first(rel).is_none_or(|f| f != "tmp")
    {
        return Some(format!(
            "it is in {}, Gemini CLI's user settings folder (settings, policies, hooks, context)",
            gemini.display()
        ));
    }
    for root in roots {
        let Ok(rel) = real.strip_prefix(root) else { continue };
        let name = real.file_name().and_then(|n| n.to_str()).unwrap_or("");
        match first(rel).and_then(|f| f.to_str()) {
            // The project's scratch folder (plans live there): not a control file.
            Some(".gemini") if under_tmp(rel) => return None,
            Some(".gemini") => {
                return Some(
                    "it is in the project's .gemini folder (settings, policies, hooks, commands, skills)"
                        .into(),
                );
            }
            Some(".toolbelt") => {
                return Some(
                    "it is in the project's .toolbelt folder (settings and policies)".into(),
                );
            }
            Some(".git") => {
                let mut c = rel.components().skip(1);
                let second = c.next().map(|c| c.as_os_str().to_string_lossy().into_owned());
                let dot_git_file = rel.components().count() == 1 && !real.is_dir();
                if dot_git_file || matches!(second.as_deref(), Some("config") | Some("hooks")) {
                    return Some("it is git's configuration or hooks, which run programs".into());
                }
            }
            _ => {}
        }
        if name == "GEMINI.md" {
            return Some(
                "it is a GEMINI.md context file, read into the model's instructions".into(),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_decides_what_runs() {
        let folders = ControlFolders {
            state: Some("/h/.toolbelt".into()),
            gemini: Some("/h/.gemini".into()),
        };
        let roots = [PathBuf::from("/w")];
        let control = [
            "/h/.toolbelt/settings.json",
            "/h/.toolbelt/policies/x.toml",
            "/h/.toolbelt/trusted-folders.json",
            "/h/.gemini/settings.json",
            "/h/.gemini/GEMINI.md",
            "/w/.gemini/settings.json",
            "/w/.gemini/policies/p.toml",
            "/w/.gemini/commands/x.toml",
            "/w/.gemini/skills/s/SKILL.md",
            "/w/.toolbelt/settings.json",
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
            "/w/GEMINI.md",
            "/w/docs/GEMINI.md",
            "/w/plans/GEMINI.md",
        ];
        for p in control {
            assert!(reason(Path::new(p), &folders, &roots).is_some(), "{p}");
        }
        let plain = [
            "/w/src/main.rs",
            "/w/README.md",
            "/w/.gemini/tmp/toolbelt/plans/plan.md",
            "/w/.gemini/tmp/toolbelt/plans/GEMINI.md",
            "/w/.git/objects/ab/cd",
            "/w/.gitignore",
            "/h/.toolbelt/tmp/abc/tool-outputs/x.txt",
            "/h/.gemini/tmp/x/plans/p.md",
            "/elsewhere/GEMINI.md",
        ];
        for p in plain {
            assert!(reason(Path::new(p), &folders, &roots).is_none(), "{p}");
        }
    }
}
