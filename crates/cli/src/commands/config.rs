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
            "defaults": defaults(&settings).into_iter().collect::<serde_json::Map<_, _>>(),
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
    let unset = defaults(&settings);
    if !unset.is_empty() {
        out_line("defaults (no file sets these):");
        for (key, value) in unset {
            out_line(&format!("{key} = {value}    # default"));
        }
    }
    Ok(EXIT_OK)
}

/// The value toolbelt uses for each key it honours that no settings file sets (issue 49 F9:
/// with no settings, `config show` showed nothing to go on). Taken from the engine's own
/// defaults, so this list cannot disagree with them.
fn defaults(settings: &toolbelt_core::settings::Settings) -> Vec<(String, serde_json::Value)> {
    let c = toolbelt_core::config::Config::default();
    let list = [
        ("general.defaultApprovalMode", json!("default")),
        ("model.name", json!(super::model::DEFAULT_GEMINI_MODEL)),
        ("security.folderTrust.enabled", json!(true)),
        ("tools.toolCallTimeoutMs", json!(c.tool_call_timeout_ms)),
        ("tools.truncateToolOutputThreshold", json!(c.truncate_tool_output_threshold_chars)),
        ("tools.enableToolOutputTruncation", json!(c.truncate_tool_output_threshold_chars > 0)),
        ("tools.shell.inactivityTimeout", json!(c.shell_inactivity_timeout_ms / 1000)),
        ("tools.shell.promptIdleMs", json!(c.shell_prompt_idle_ms)),
        ("tools.shell.enableInteractiveShell", json!(c.shell_pty)),
        ("security.environmentVariableRedaction.enabled", json!(c.env_redaction.enabled)),
        ("context.fileFiltering.respectGitIgnore", json!(c.respect_git_ignore)),
        ("context.fileFiltering.respectGeminiIgnore", json!(c.respect_gemini_ignore)),
        ("context.fileName", json!("GEMINI.md")),
        ("experimental.directWebFetch", json!(c.web_fetch_direct)),
        ("hooksConfig.enabled", json!(true)),
    ];
    list.into_iter()
        .filter(|(k, _)| settings.get(k).is_none())
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}
