//! `toolbelt trust [DIR]` / `toolbelt untrust [DIR]`: folder trust decisions, recorded in
//! `~/.toolbelt/trusted-folders.json`.

use std::path::PathBuf;

use toolbelt_core::trust::{Level, TrustStore};

use super::{EXIT_OK, EXIT_USAGE};
use crate::output::{err_line, out_line};

pub fn run(dir: Option<PathBuf>, trust: bool) -> anyhow::Result<i32> {
    let dir = match dir {
        Some(d) => d,
        None => std::env::current_dir()?,
    };
    let dir = match std::fs::canonicalize(&dir) {
        Ok(d) if d.is_dir() => d,
        _ => {
            err_line(&format!("toolbelt: {} is not a folder", dir.display()));
            return Ok(EXIT_USAGE);
        }
    };
    let home = toolbelt_core::config::default_home_dir();
    let mut store = TrustStore::load(&home)?;
    store.set(&dir, if trust { Level::TrustFolder } else { Level::DoNotTrust });
    store.save()?;
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
