//! Whether commands run in the sandbox, and in which profile, switched on as in Gemini CLI:
//! `GEMINI_SANDBOX` (when set and not empty) over the `--sandbox` flag over `tools.sandbox` in
//! settings (also `security.toolSandboxing`); the profile from `SEATBELT_PROFILE`, else
//! `tools.sandboxProfile`, else `permissive-open`. Asked for on a machine that cannot do it,
//! the session does not start: commands never run unconfined by surprise.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolbelt_core::process::sandbox::{Network, Profile, Sandbox};
use toolbelt_core::settings::Settings;

use crate::error::SessionError;

/// Container commands upstream runs its whole CLI in; toolbelt sandboxes each command instead.
const CONTAINERS: &[&str] = &["docker", "podman", "sandbox-exec", "runsc", "lxc", "windows-native"];

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub profile: Profile,
    /// Extra writable folders (`tools.sandbox.allowedPaths`, `tools.sandboxAllowedPaths`).
    pub allowed_paths: Vec<String>,
}

fn bad(source: &str, value: &str, why: &str) -> SessionError {
    SessionError::Sandbox(format!("{source}={value:?}: {why}"))
}

/// Reads a switch (`GEMINI_SANDBOX` or a `tools.sandbox` string): `Some(on)` or an error.
fn switch(source: &str, value: &str) -> Result<bool, SessionError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" | "" => Ok(false),
        c if CONTAINERS.contains(&c) => Ok(true),
        _ => Err(bad(
            source,
            value,
            "expected true, false, 1, 0 or a sandbox command (docker, podman, sandbox-exec, runsc, lxc)",
        )),
    }
}

/// Whether the sandbox is on, and how, from the environment (`env`), the flag and settings.
pub fn requested(
    settings: &Settings,
    flag: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Request>, SessionError> {
    let setting = settings.get("tools.sandbox");
    let from_settings = match setting {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => switch("tools.sandbox", s)?,
        Some(Value::Object(o)) => o.get("enabled").and_then(Value::as_bool).unwrap_or(false),
        Some(other) => {
            return Err(bad(
                "tools.sandbox",
                &other.to_string(),
                "expected true, false, a command or an object",
            ));
        }
    } || settings.get("security.toolSandboxing").and_then(Value::as_bool)
        == Some(true);
    let on = match env("GEMINI_SANDBOX").filter(|v| !v.trim().is_empty()) {
        Some(v) => switch("GEMINI_SANDBOX", &v)?,
        None => flag || from_settings,
    };
    if !on {
        return Ok(None);
    }
    let name = env("SEATBELT_PROFILE")
        .filter(|v| !v.trim().is_empty())
        .map(|v| ("SEATBELT_PROFILE", v))
        .or_else(|| {
            settings
                .get("tools.sandboxProfile")
                .and_then(Value::as_str)
                .map(|v| ("tools.sandboxProfile", v.to_string()))
        });
    let mut profile = match name {
        None => Profile::DEFAULT,
        Some((source, v)) => {
            Profile::named(&v).map_err(|e| SessionError::Sandbox(format!("{source}: {e}")))?
        }
    };
    let object = setting.and_then(Value::as_object);
    let network = object
        .and_then(|o| o.get("networkAccess"))
        .or_else(|| settings.get("tools.sandboxNetworkAccess"))
        .and_then(Value::as_bool);
    if network == Some(false) {
        profile.network = Network::Closed;
    }
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default()
    };
    let mut allowed_paths = strings(object.and_then(|o| o.get("allowedPaths")));
    allowed_paths.extend(strings(settings.get("tools.sandboxAllowedPaths")));
    Ok(Some(Request { profile, allowed_paths }))
}

/// The session's sandbox, without its roots (each command is granted the workspace's roots as
/// they are when it starts); an error when this machine cannot sandbox. `state` are
/// toolbelt's own folders, which stay out of reach.
pub fn build(
    request: &Request,
    home: Option<&Path>,
    root: &Path,
    state: &[PathBuf],
) -> Result<Sandbox, SessionError> {
    toolbelt_core::process::sandbox::support()
        .require()
        .map_err(|e| SessionError::Sandbox(e.to_string()))?;
    let extra: Vec<PathBuf> = request
        .allowed_paths
        .iter()
        .map(|p| match (p.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => root.join(p),
        })
        .collect();
    Sandbox::new(request.profile, home, state, &extra)
        .map_err(|e| SessionError::Sandbox(e.to_string()))
}
