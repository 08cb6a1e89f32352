//! Why a session could not be built. Each variant keeps its source and names what failed.

/// A session that could not be built or changed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The working directory (the default root) is unreadable.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// A settings file could not be read or parsed.
    #[error(transparent)]
    Settings(#[from] toolbelt_core::settings::SettingsError),
    /// The trusted-folders file could not be read.
    #[error(transparent)]
    Trust(#[from] toolbelt_core::trust::TrustError),
    /// An environment variable has a value toolbelt cannot use.
    #[error(transparent)]
    Config(#[from] toolbelt_core::config::ConfigError),
    /// Two tools share a name.
    #[error(transparent)]
    Registry(#[from] toolbelt_core::registry::RegistryError),
    /// A root is not a usable folder.
    #[error(transparent)]
    Workspace(#[from] toolbelt_core::workspace::WorkspaceError),
    /// Policy files that could not be fully understood: the session does not start, so no
    /// part of the user's rules silently fails to apply.
    #[error("{}", policy_problems(.0))]
    Policy(Vec<toolbelt_core::policy::PolicyFileError>),
    /// Yolo mode was asked for but a settings file forbids it.
    #[error("yolo mode is disabled by security.disableYoloMode in {0}")]
    YoloDisabled(std::path::PathBuf),
    /// The sandbox was asked for but cannot be had, or asked for in a way toolbelt does not
    /// understand: nothing runs unconfined by surprise.
    #[error("sandbox: {0}")]
    Sandbox(String),
    /// A live root change with no root.
    #[error("a session needs at least one root")]
    NoRoots,
}

fn policy_problems(errors: &[toolbelt_core::policy::PolicyFileError]) -> String {
    let list: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
    format!(
        "the policy cannot be fully understood, so nothing was run:\n{}\nFix the file (check it with `toolbelt policy lint FILE`) and try again.",
        list.join("\n")
    )
}
