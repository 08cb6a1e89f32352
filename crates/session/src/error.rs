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
    /// A live root change with no root.
    #[error("a session needs at least one root")]
    NoRoots,
}
