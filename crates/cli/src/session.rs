//! Turns command-line options into the engine's pieces: settings, workspace, registry, policy.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use toolbelt_core::config::Config;
use toolbelt_core::policy::{ApprovalMode, PolicyEngine, Tier};
use toolbelt_core::{ModelFamily, Registry, ToolEnv, Workspace};

use crate::cli::{Family, Mode, SessionArgs};

pub fn mode(m: Mode) -> ApprovalMode {
    match m {
        Mode::Default => ApprovalMode::Default,
        Mode::AutoEdit => ApprovalMode::AutoEdit,
        Mode::Yolo => ApprovalMode::Yolo,
        Mode::Plan => ApprovalMode::Plan,
    }
}

pub fn family(f: Family) -> ModelFamily {
    match f {
        Family::Legacy => ModelFamily::Legacy,
        Family::Gemini3 => ModelFamily::Gemini3,
    }
}

/// Interactive when a person is at the terminal, unless a flag says otherwise.
pub fn interactive(args: &SessionArgs) -> bool {
    if args.non_interactive {
        return false;
    }
    args.interactive || std::io::stdin().is_terminal()
}

/// Defaults, then the environment; flags are applied by the caller.
pub fn config() -> anyhow::Result<Config> {
    let mut c = Config::default();
    c.apply_env()?;
    Ok(c)
}

/// The bundled defaults, `~/.toolbelt/policies/` and `--policy` paths (user tier). Problems
/// in policy files are reported on stderr; the rest still loads.
pub fn policy(args: &SessionArgs, config: &Config, interactive: bool) -> PolicyEngine {
    let user_dir = config.home_dir.join("policies");
    let mut paths: Vec<(&Path, Tier)> = vec![(user_dir.as_path(), Tier::User)];
    paths.extend(args.policies.iter().map(|p| (p.as_path(), Tier::User)));
    for p in &args.policies {
        if !p.exists() {
            crate::output::warn(&format!("policy path {} does not exist", p.display()));
        }
    }
    let (engine, errors) = PolicyEngine::load(&paths, interactive);
    for e in errors {
        crate::output::warn(&format!("policy file skipped in part: {e}"));
    }
    engine
}

pub fn registry() -> anyhow::Result<Arc<Registry>> {
    registry_with(&toolbelt_tools::Services::default())
}

/// The registry of built-in tools sharing `services` (the caller stops background processes).
pub fn registry_with(services: &toolbelt_tools::Services) -> anyhow::Result<Arc<Registry>> {
    Ok(Arc::new(Registry::builder().tools(toolbelt_tools::builtin_tools_with(services)).build()?))
}

pub fn env(roots: &[PathBuf], config: Config) -> anyhow::Result<ToolEnv> {
    let roots = if roots.is_empty() {
        vec![std::env::current_dir().context("cannot read the current directory")?]
    } else {
        roots.to_vec()
    };
    let workspace = Workspace::new(&roots, &config)?;
    Ok(ToolEnv::new(workspace, config))
}
