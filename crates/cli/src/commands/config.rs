//! `toolbelt config show`: the merged settings, which file set each key, and whether toolbelt
//! honours it (honoured / not supported / unknown).

use serde_json::json;

use toolbelt_core::settings::keys;
use toolbelt_session::{load_settings, primary_root};

use super::EXIT_OK;
use crate::cli::ConfigCommand;
use crate::error::{CliError, CliResult};
use crate::output::{out_json_line, out_line};

pub fn run(cmd: ConfigCommand) -> CliResult {
    let ConfigCommand::Show { json, root } = cmd;
    let home = toolbelt_core::config::default_home_dir();
    let root = primary_root(&root.into_iter().collect::<Vec<_>>()).map_err(CliError::failed)?;
    let (settings, trusted) = load_settings(&home, &root)?;
    if json {
        let files: Vec<_> = settings
            .files
            .iter()
            .map(|f| json!({"scope": f.scope.label(), "path": f.path.display().to_string()}))
            .collect();
        let origins: serde_json::Map<String, serde_json::Value> = settings
            .origin
            .iter()
            .map(|(k, p)| (k.clone(), json!(p.display().to_string())))
            .collect();
        let skipped: Vec<_> = settings
            .skipped
            .iter()
            .map(|(p, k)| json!({"key": k, "file": p.display().to_string()}))
            .collect();
        let marks: serde_json::Map<String, serde_json::Value> =
            settings.origin.keys().map(|k| (k.clone(), json!(keys::status(k).mark()))).collect();
        let report = json!({
            "settings": settings.merged,
            "origins": origins,
            "marks": marks,
            "files": files,
            "trusted": trusted,
            "skippedUntrusted": skipped,
        });
        out_json_line(&serde_json::to_string_pretty(&report)?);
        return Ok(EXIT_OK);
    }
    out_line(&format!(
        "folder: {} ({})",
        root.display(),
        if trusted {
            "trusted"
        } else {
            "not trusted: project settings that run commands are skipped"
        }
    ));
    if settings.files.is_empty() {
        out_line("no settings files; defaults apply");
    } else {
        out_line("files, lowest precedence first:");
        for f in &settings.files {
            out_line(&format!("  {:<22} {}", f.scope.label(), f.path.display()));
        }
    }
    for (key, path) in &settings.origin {
        let value = settings.get(key).map(|v| v.to_string()).unwrap_or_default();
        let mark = keys::status(key).mark();
        out_line(&format!("{key} = {value}    # {mark}; {}", path.display()));
    }
    for (path, key) in &settings.skipped {
        out_line(&format!("{key}: skipped (untrusted)    # {}", path.display()));
    }
    Ok(EXIT_OK)
}
