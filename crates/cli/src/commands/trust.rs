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
    if trust {
        out_line(&format!(
            "Trusted {}: its project settings may now run hooks, tool discovery and MCP servers.",
            dir.display()
        ));
    } else {
        out_line(&format!(
            "{} is not trusted: its project settings will not run commands or allow more.",
            dir.display()
        ));
    }
    Ok(EXIT_OK)
}
