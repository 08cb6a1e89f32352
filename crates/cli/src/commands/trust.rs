//! `toolbelt trust [DIR]` / `toolbelt untrust [DIR]`: folder trust decisions, recorded in
//! `~/.toolbelt/trusted-folders.json`.

use std::path::PathBuf;

use toolbelt_core::trust::{Level, TrustStore};

use super::EXIT_OK;
use crate::error::{CliError, CliResult};
use crate::output::out_line;

pub fn run(dir: Option<PathBuf>, trust: bool) -> CliResult {
    let dir = match dir {
        Some(d) => d,
        None => std::env::current_dir()?,
    };
    let dir = match std::fs::canonicalize(&dir) {
        Ok(d) if d.is_dir() => d,
        _ => return Err(CliError::usage(format!("{} is not a folder", dir.display()))),
    };
    let home = toolbelt_core::config::default_home_dir();
    let mut store = TrustStore::load(&home).map_err(CliError::failed)?;
    store.set(&dir, if trust { Level::TrustFolder } else { Level::DoNotTrust });
    store.save().map_err(CliError::failed)?;
    // The path may hold anything a folder name can: shown, never interpreted.
    let shown = crate::terminal::visible(&dir.display().to_string());
    if trust {
        out_line(&format!(
            "Trusted {shown} and every folder inside it (nested repositories and vendored \
             packages included): their project settings may now run hooks, tool discovery and \
             MCP servers, allow tools and load context files. `toolbelt untrust` on a subfolder \
             takes it back for that subfolder."
        ));
    } else {
        out_line(&format!(
            "{shown} and the folders inside it are not trusted: their project settings may only \
             restrict (they will not run commands, allow more or load context files)."
        ));
    }
    Ok(EXIT_OK)
}
