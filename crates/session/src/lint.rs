//! `policy lint`: every problem in the policy files (and the settings-derived rules) a session
//! would load, found without running anything (no discovery command, no MCP server).

use std::path::PathBuf;

use toolbelt_core::policy::lint::never_matching;
use toolbelt_core::policy::sources::{misspelled_tools, settings_rules};
use toolbelt_core::policy::{Loaded, PolicyFileError, Tier, toml::load_path};

use crate::SessionError;
use crate::builder::{SettingsSources, policy_files};
use crate::settings::{load_settings_from, primary_root};

/// What was checked and what is wrong.
#[derive(Debug, Default)]
pub struct LintReport {
    /// Rules that loaded.
    pub rules: usize,
    /// Every problem, with its file and line.
    pub problems: Vec<PolicyFileError>,
    /// What a session would set aside on purpose (untrusted allow rules, unsafe admin folders).
    pub notices: Vec<PolicyFileError>,
}

/// Checks `paths` (files or folders of `*.toml`), or, when empty, everything a session in
/// `roots` would load: the standard policy folders and the settings files.
pub fn lint(
    sources: &SettingsSources,
    roots: &[PathBuf],
    paths: &[PathBuf],
) -> Result<LintReport, SessionError> {
    let mut loaded = if paths.is_empty() {
        let root = primary_root(roots)?;
        let (settings, trusted) =
            load_settings_from(&sources.state_dir, sources.user_home.as_deref(), &root)?;
        let mut l = policy_files(sources, &root, trusted, &[]);
        l.rules.extend(settings_rules(&settings.tools(), true));
        l
    } else {
        let mut l = Loaded::default();
        for p in paths {
            if !p.exists() {
                l.errors.push(PolicyFileError {
                    file: p.display().to_string(),
                    line: None,
                    message: "does not exist".into(),
                });
            }
            l.extend(load_path(p, Tier::User));
        }
        l
    };
    let tools = toolbelt_tools::builtin_tools_with(&toolbelt_tools::Services::default());
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    loaded.errors.extend(misspelled_tools(&loaded.rules, &names, false));
    loaded.errors.extend(never_matching(&loaded.rules));
    Ok(LintReport { rules: loaded.rules.len(), problems: loaded.errors, notices: loaded.notices })
}
