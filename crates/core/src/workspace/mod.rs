//! The workspace: one or more root folders, the path rules every tool goes through, the
//! sensitive-path rules and the shared ignore service.

#[cfg(unix)]
mod beneath;
#[cfg(unix)]
mod commands;
mod control;
#[cfg(unix)]
mod folder;
mod ignore;
#[cfg(unix)]
mod links;
#[cfg(unix)]
mod open;
pub mod paths;
mod sensitive;
#[cfg(unix)]
pub mod walk;

use std::path::{Path, PathBuf};

#[cfg(unix)]
pub use self::folder::Folder;
pub use self::ignore::{
    FolderRules, GEMINI_IGNORE, IgnoreOptions, IgnoreService, Unreadable, check_ignore_file,
    check_ignore_file_lines,
};
#[cfg(unix)]
pub use self::open::{FileKindError, OpenError, WriteTarget};
pub use self::sensitive::{NodeModulesLifted, SensitiveHit, SensitiveRules, lift_node_modules};
use crate::config::Config;

/// A workspace root in the form it was given and in its resolved form.
#[derive(Clone, Debug)]
pub struct Root {
    /// The root as given.
    pub given: PathBuf,
    /// The root with every symlink resolved.
    pub real: PathBuf,
    /// Files beneath it can be read, never written (an activated skill's folder).
    pub read_only: bool,
}

/// Whether a tool reads or writes the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// The tool reads the path.
    Read,
    /// The tool writes the path.
    Write,
}

/// A path as the tool should report it (`lexical`) and as it really is (`real`, every symlink
/// resolved, also for parts that do not exist yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The path as the tool should report it.
    pub lexical: PathBuf,
    /// The path with every symlink resolved.
    pub real: PathBuf,
}

/// Why a path was refused. The messages are what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is malformed.
    #[error("Invalid path: {0}")]
    Invalid(String),
    /// The path could not be resolved.
    #[error("Failed to resolve path: {0}")]
    Resolve(String),
    #[error(
        "Path not in workspace: Attempted path \"{path}\" resolves outside the allowed workspace directories: {dirs} or the project temp directory: {temp}"
    )]
    /// The path is outside every root and the temp folder.
    Outside {
        /// The path as given.
        path: String,
        /// The roots, for the message.
        dirs: String,
        /// The project temp folder, for the message.
        temp: String,
    },
    /// The path lies in a root that may be read, not written.
    #[error(
        "\"{path}\" is in {root}, a folder added to the workspace for reading only (an activated skill's resources): it cannot be written. Write inside a project root instead."
    )]
    ReadOnly {
        /// The path as given.
        path: String,
        /// The read-only root.
        root: String,
    },
    #[error(
        "Access to \"{path}\" is refused: {} the {origin} sensitive-path rule \"{rule}\". To allow it, add \"{rule}\" to allow_sensitive_paths (environment: TOOLBELT_ALLOW_SENSITIVE_PATHS='{rule}', or the --allow-sensitive '{rule}' flag).",
        if *link { "it is a hard link, and another name of the same file matches" } else { "it matches" }
    )]
    /// The path matches a sensitive-path rule.
    Sensitive {
        /// The path as given.
        path: String,
        /// The rule it matched.
        rule: String,
        /// Where the rule comes from (built-in or settings).
        origin: &'static str,
        /// The rule matched another name of the file, a hard link (that name is not shown: it
        /// may itself be the secret, `~/.aws/prod-creds`).
        link: bool,
    },
}

impl PathError {
    /// A path that is not UTF-8: it could only be shown as another name (U+FFFD in its place).
    pub fn not_utf8() -> Self {
        PathError::Invalid("Path is not valid UTF-8.".into())
    }
}

/// A workspace could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// A root that cannot be used.
    #[error("workspace root {path} cannot be used: {why}")]
    Root {
        /// The root.
        path: PathBuf,
        /// Why it cannot be used (said in the message, so not also a source: printed with its
        /// causes, the reason came twice).
        why: std::io::Error,
    },
    /// A root that is not a folder.
    #[error("workspace root {0} is not a directory")]
    NotADirectory(PathBuf),
    /// No root was given.
    #[error("no workspace root given")]
    NoRoots,
    /// A sensitive-path rule that cannot be compiled.
    #[error("{0}")]
    Sensitive(String),
}

/// The roots of a session and the rules for paths beneath them.
#[derive(Debug)]
pub struct Workspace {
    roots: Vec<Root>,
    /// The roots, opened: every file is reached beneath one of these handles.
    #[cfg(unix)]
    root_dirs: Vec<beneath::RootDir>,
    /// Files with more than one name in the roots (found when first needed).
    #[cfg(unix)]
    linked: links::LinkIndex,
    temp_dir: PathBuf,
    sensitive: SensitiveRules,
    ignore: IgnoreService,
    ignore_defaults: IgnoreOptions,
    control: control::ControlFolders,
}

impl Workspace {
    /// Roots must exist and be folders; the first is the primary one (relative paths resolve
    /// against it).
    pub fn new(roots: &[PathBuf], config: &Config) -> Result<Self, WorkspaceError> {
        let roots: Vec<(PathBuf, bool)> = roots.iter().map(|r| (r.clone(), false)).collect();
        Self::build(&roots, config)
    }

    /// This workspace plus `dir` as a root that may be read and never written (an activated
    /// skill's folder), unless `dir` already lies in a root. A folder the sensitive-path rules
    /// refuse (`~/.ssh`) is refused: beneath it as a root its files would no longer look
    /// sensitive.
    pub fn with_read_only_root(&self, dir: &Path, config: &Config) -> Result<Self, WorkspaceError> {
        let real = std::fs::canonicalize(dir)
            .map_err(|source| WorkspaceError::Root { path: dir.to_path_buf(), why: source })?;
        if let Some(hit) = self.sensitive.check_folder(&real) {
            return Err(WorkspaceError::Sensitive(format!(
                "{} matches the sensitive-path rule \"{}\"; it cannot be added to the workspace",
                real.display(),
                hit.rule
            )));
        }
        let mut roots: Vec<(PathBuf, bool)> =
            self.roots.iter().map(|r| (r.given.clone(), r.read_only)).collect();
        if !self.roots.iter().any(|r| real.starts_with(&r.real)) {
            roots.push((real, true));
        }
        Self::build(&roots, config)
    }

    /// The read-only root `real` lies in, if any.
    fn read_only_root(&self, real: &Path) -> Option<&Root> {
        self.roots.iter().find(|r| r.read_only && real.starts_with(&r.real))
    }

    /// Roots given with whether each is read-only.
    fn build(roots: &[(PathBuf, bool)], config: &Config) -> Result<Self, WorkspaceError> {
        if roots.is_empty() {
            return Err(WorkspaceError::NoRoots);
        }
        let mut out = Vec::with_capacity(roots.len());
        #[cfg(unix)]
        let mut root_dirs = Vec::with_capacity(roots.len());
        for (given, read_only) in roots {
            if !given.is_dir() {
                return Err(match std::fs::metadata(given) {
                    Err(source) => WorkspaceError::Root { path: given.clone(), why: source },
                    Ok(_) => WorkspaceError::NotADirectory(given.clone()),
                });
            }
            // The handle first, its real path from the handle: see `RootDir::open_given`.
            #[cfg(unix)]
            let real = {
                let dir = beneath::RootDir::open_given(given)
                    .map_err(|source| WorkspaceError::Root { path: given.clone(), why: source })?;
                let real = dir.real.clone();
                root_dirs.push(dir);
                real
            };
            #[cfg(not(unix))]
            let real = std::fs::canonicalize(given)
                .map_err(|source| WorkspaceError::Root { path: given.clone(), why: source })?;
            // A root named through a symlink that leads to `/` serves the whole machine: a
            // folder replaced by such a link (from inside a sandbox, in a writable parent) must
            // not become that in a later session. Named `/` itself, it is the user's choice.
            // So does one that leads to the home folder or above it (a folder replaced by a link
            // to `~`; issue 33, second review).
            let named = std::path::absolute(given).unwrap_or_else(|_| given.clone());
            let through_link = paths::lexical_resolve(Path::new("/"), &named) != real;
            let home = crate::files::user_home().and_then(|h| std::fs::canonicalize(h).ok());
            let above_home = home.as_ref().is_some_and(|h| h.starts_with(&real));
            if through_link && (real == Path::new("/") || above_home) {
                return Err(WorkspaceError::Root {
                    path: given.clone(),
                    why: std::io::Error::other(format!(
                        "it is a symbolic link to {}, which holds the home folder; give that folder itself if you mean it",
                        real.display()
                    )),
                });
            }
            // Issue 46: `/`, the home folder or a folder above it gives the tools every file
            // of the account; an editor's `cwd` or a client's root must not do that by accident.
            if let Some(what) = paths::holds_home(&real, home.as_deref())
                .filter(|_| !config.allow_home_or_root_workspace && !*read_only)
            {
                return Err(WorkspaceError::Root {
                    path: given.clone(),
                    why: std::io::Error::other(format!(
                        "it is {what}, which would give the tools every file of your account; open a project folder instead (or set TOOLBELT_ALLOW_HOME_WORKSPACE=1 if you mean it)"
                    )),
                });
            }
            out.push(Root { given: given.clone(), real, read_only: *read_only });
        }
        let sensitive = SensitiveRules::new(&config.sensitive_paths, &config.allow_sensitive_paths)
            .map_err(WorkspaceError::Sensitive)?;
        let primary = out[0].real.clone();
        let temp_dir = config.home_dir.join("tmp").join(project_id(&primary));
        Ok(Self {
            ignore: IgnoreService::within(
                &primary,
                &out.iter().map(|r| r.real.clone()).collect::<Vec<_>>(),
            ),
            roots: out,
            #[cfg(unix)]
            root_dirs,
            #[cfg(unix)]
            linked: links::LinkIndex::default(),
            temp_dir,
            sensitive,
            ignore_defaults: IgnoreOptions {
                respect_git_ignore: config.respect_git_ignore,
                respect_gemini_ignore: config.respect_gemini_ignore,
            },
            control: control::ControlFolders::new(
                &config.home_dir,
                crate::files::user_home().as_deref(),
            ),
        })
    }

    /// The primary root (resolved): relative paths are taken from here.
    pub fn primary(&self) -> &Path {
        &self.roots[0].real
    }

    /// The roots, the primary first.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// Why `real` (a resolved path) is a file that decides what runs (settings, policies,
    /// hooks, trust decisions, `.git/config`, context files; see `workspace/control.rs`):
    /// writing it needs a person, in every mode but `yolo`.
    pub fn control_file(&self, real: &Path) -> Option<String> {
        let roots: Vec<PathBuf> = self.roots.iter().map(|r| r.real.clone()).collect();
        control::reason(real, &self.control, &roots)
    }

    /// Per-project scratch space (saved tool outputs); readable by tools.
    pub fn temp_dir(&self) -> &Path {
        &self.temp_dir
    }

    /// The ignore rules of the primary root.
    pub fn ignore(&self) -> &IgnoreService {
        &self.ignore
    }

    /// The ignore options from settings, with per-call overrides applied.
    pub fn ignore_options(&self, git: Option<bool>, gemini: Option<bool>) -> IgnoreOptions {
        IgnoreOptions {
            respect_git_ignore: git.unwrap_or(self.ignore_defaults.respect_git_ignore),
            respect_gemini_ignore: gemini.unwrap_or(self.ignore_defaults.respect_gemini_ignore),
        }
    }

    /// Turns a path a model sent into an absolute one: NULs stripped, `file://` URLs and
    /// `@`-prefixes handled as upstream, `%XX` decoded only when the literal name does not exist
    /// and the decoded one does, relative paths taken from the primary root, and every symlink
    /// resolved.
    pub fn resolve(&self, raw: &str) -> Result<ResolvedPath, PathError> {
        let base = self.primary();
        let mut p: String = raw.chars().filter(|c| *c != '\0').collect();
        if let Some(rest) = p.strip_prefix("file://") {
            p = paths::percent_decoded(rest).unwrap_or_else(|| rest.to_string());
        }
        let exists =
            |s: &str| paths::lexical_resolve(base, Path::new(s)).symlink_metadata().is_ok();
        // Only an `@` prefix or a `%` escape can be read another way; other paths are taken as
        // they are without asking the file system first.
        if (p.starts_with('@') || p.contains('%')) && !exists(&p) {
            p = strip_at_prefix(&p, base);
            if let Some(decoded) = paths::percent_decoded(&p).filter(|d| exists(d)) {
                p = decoded;
            }
        }
        // Upstream's words for a name no file system takes (it was the system's "File name too
        // long (os error 36)" behind "Failed to resolve path").
        if let Some(long) = Path::new(&p).iter().find(|c| c.len() > 255) {
            let shown: String = long.to_string_lossy().chars().take(20).collect();
            return Err(PathError::Invalid(format!(
                "Path component \"{shown}...\" is too long (maximum 255 characters)."
            )));
        }
        self.resolved(paths::lexical_resolve(base, Path::new(&p)))
    }

    /// A lexical path with its real form: symlinks followed by the file layer's rules.
    fn resolved(&self, lexical: PathBuf) -> Result<ResolvedPath, PathError> {
        #[cfg(unix)]
        let real = self.real_path(&lexical)?;
        #[cfg(not(unix))]
        let real =
            paths::robust_realpath(&lexical).map_err(|e| PathError::Resolve(e.to_string()))?;
        Ok(ResolvedPath { lexical, real })
    }

    /// The checks every tool applies before touching a path: the pre-flight validator, the
    /// containment check on the resolved path, and the sensitive-path rules.
    pub fn check_access(&self, path: &ResolvedPath, access: Access) -> Result<(), PathError> {
        self.check_real_as(&path.real, &path.lexical)?;
        if access == Access::Write {
            self.check_writable(&path.real, &path.lexical)?;
        }
        Ok(())
    }

    /// Refuses a write to a read-only root.
    fn check_writable(&self, real: &Path, asked: &Path) -> Result<(), PathError> {
        match self.read_only_root(real) {
            Some(root) => Err(PathError::ReadOnly {
                path: asked.to_string_lossy().into_owned(),
                root: root.real.to_string_lossy().into_owned(),
            }),
            None => Ok(()),
        }
    }

    /// The containment check and the sensitive-path rules, on a resolved path.
    fn check_real(&self, real: &Path) -> Result<(), PathError> {
        self.check_real_as(real, real)
    }

    /// [`Self::check_real`], naming a path outside the workspace as `asked` (the path as the
    /// caller spelled it): where a link outside leads is outside information.
    fn check_real_as(&self, real: &Path, asked: &Path) -> Result<(), PathError> {
        let Some(text) = real.to_str() else { return Err(PathError::not_utf8()) };
        paths::preflight(text).map_err(PathError::Invalid)?;
        if let Some(root) = self.check_base(real) {
            let rel = paths::relative_to(real, root);
            if let Some(hit) = self.sensitive.check(&rel) {
                // Named as asked: an innocent link to a secret must not reveal its name.
                return Err(PathError::Sensitive {
                    path: asked.to_string_lossy().into_owned(),
                    rule: hit.rule,
                    origin: hit.origin,
                    link: false,
                });
            }
            return Ok(());
        }
        Err(self.outside(asked.to_string_lossy().into_owned()))
    }

    /// What the sensitive rules read `real` relative to: the first root it lies under, or the
    /// project temp folder (it holds outputs and plans; the rules apply there too).
    fn check_base(&self, real: &Path) -> Option<&Path> {
        self.roots
            .iter()
            .map(|r| r.real.as_path())
            .find(|r| real.starts_with(r))
            .or_else(|| real.starts_with(&self.temp_dir).then_some(self.temp_dir.as_path()))
    }

    /// The refusal of a path outside every root and the temp folder, naming them.
    fn outside(&self, shown: String) -> PathError {
        PathError::Outside {
            path: shown,
            dirs: self
                .roots
                .iter()
                .map(|r| r.real.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", "),
            temp: self.temp_dir.to_string_lossy().into_owned(),
        }
    }

    /// Resolves an absolute path found by a walk (no `@` or `%` handling): every symlink
    /// followed by the file layer's rules.
    pub fn resolve_path(&self, p: &Path) -> Result<ResolvedPath, PathError> {
        self.resolved(paths::lexical_resolve(self.primary(), p))
    }

    /// Resolves and checks in one step.
    pub fn resolve_checked(&self, raw: &str, access: Access) -> Result<ResolvedPath, PathError> {
        let p = self.resolve(raw)?;
        self.check_access(&p, access)?;
        Ok(p)
    }

    /// Whether a path is hidden by the ignore files (symlinks: the target is checked too); an
    /// ignore file that applies to it but may not be read is the error.
    pub fn is_ignored(
        &self,
        path: &ResolvedPath,
        is_dir: bool,
        opts: IgnoreOptions,
    ) -> Result<bool, Unreadable> {
        Ok(self.ignore.check(&path.lexical, is_dir, opts)?
            || self.ignore.check(&path.real, is_dir, opts)?)
    }

    /// `p` relative to the primary root with `/` separators (`.` for the root itself).
    pub fn relative(&self, p: &Path) -> String {
        paths::relative_to(p, self.primary())
    }
}

/// Upstream's `@path` handling: `@/x` and `@\x` lose the `@` and leading slashes; `@seg/x` keeps
/// the `@` only when a folder named `@seg` exists.
fn strip_at_prefix(p: &str, base: &Path) -> String {
    let Some(rest) = p.strip_prefix('@').filter(|r| !r.is_empty()) else { return p.to_string() };
    if rest.starts_with(['/', '\\']) {
        let stripped = rest.trim_start_matches(['/', '\\']);
        return if stripped.is_empty() { p.to_string() } else { stripped.to_string() };
    }
    let first = p.split(['/', '\\']).next().unwrap_or(p);
    if base.join(first).exists() { p.to_string() } else { rest.to_string() }
}

/// A stable id for a project folder (FNV-1a of its path), used to name its temp folder.
fn project_id(root: &Path) -> String {
    format!("{:016x}", crate::files::fnv1a(root.to_string_lossy().bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn ws(extra_roots: usize) -> (Vec<tempfile::TempDir>, Workspace) {
        let dirs: Vec<_> = (0..=extra_roots).map(|_| tempfile::tempdir().unwrap()).collect();
        let roots: Vec<PathBuf> = dirs.iter().map(|d| d.path().to_path_buf()).collect();
        let cfg = Config { home_dir: dirs[0].path().join("home"), ..Config::default() };
        let w = Workspace::new(&roots, &cfg).unwrap();
        (dirs, w)
    }

    #[test]
    fn relative_and_dotdot_paths_resolve_against_the_primary_root() {
        let (_d, w) = ws(0);
        let root = w.primary().to_path_buf();
        fs::write(root.join("a.txt"), "x").unwrap();
        let p = w.resolve_checked("sub/../a.txt", Access::Read).unwrap();
        assert_eq!(p.real, root.join("a.txt"));
        let err = w.resolve_checked("../../../etc/passwd", Access::Read).unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }), "{err}");
        assert!(
            err.to_string().starts_with("Path not in workspace: Attempted path \"/etc/passwd\"")
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_cannot_lead_outside_even_when_dangling() {
        let (d, w) = ws(0);
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "s").unwrap();
        let root = w.primary().to_path_buf();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("new"), root.join("dangling")).unwrap();
        for p in ["link/secret", "dangling", "link/not-yet/created.txt"] {
            let err = w.resolve_checked(p, Access::Write).unwrap_err();
            assert!(matches!(err, PathError::Outside { .. }), "{p}: {err}");
        }
        // a link that stays inside is fine
        fs::create_dir(root.join("inner")).unwrap();
        std::os::unix::fs::symlink(root.join("inner"), root.join("in-link")).unwrap();
        assert!(w.resolve_checked("in-link/x", Access::Read).is_ok());
        drop(d);
    }

    #[test]
    fn secondary_roots_and_temp_dir_are_allowed() {
        let (d, w) = ws(1);
        let second = fs::canonicalize(d[1].path()).unwrap();
        assert!(w.resolve_checked(second.join("f").to_str().unwrap(), Access::Read).is_ok());
        let t = w.temp_dir().join("tool-outputs/x.txt");
        assert!(w.resolve_checked(t.to_str().unwrap(), Access::Read).is_ok());
    }

    #[test]
    fn sensitive_paths_name_the_rule_and_the_way_out() {
        let (_d, w) = ws(0);
        let err = w.resolve_checked(".git/config", Access::Read).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("sensitive-path rule \".git\"") && msg.contains("allow_sensitive_paths"),
            "{msg}"
        );
        let err = w.resolve_checked("keys/server.pem", Access::Read).unwrap_err();
        assert!(err.to_string().contains("\"*.pem\""), "{err}");
    }

    #[test]
    fn at_prefix_and_percent_decoding() {
        let (_d, w) = ws(0);
        let root = w.primary().to_path_buf();
        fs::create_dir(root.join("policies")).unwrap();
        fs::write(root.join("policies/p.txt"), "x").unwrap();
        fs::write(root.join("a b.txt"), "x").unwrap();
        fs::write(root.join("lit%20eral.txt"), "x").unwrap();
        assert_eq!(w.resolve("@policies/p.txt").unwrap().real, root.join("policies/p.txt"));
        assert_eq!(w.resolve("@/policies/p.txt").unwrap().real, root.join("policies/p.txt"));
        assert_eq!(w.resolve("a%20b.txt").unwrap().real, root.join("a b.txt"));
        assert_eq!(w.resolve("lit%20eral.txt").unwrap().real, root.join("lit%20eral.txt"));
        assert_eq!(w.resolve("x\0y").unwrap().real, root.join("xy"));
    }

    #[test]
    fn preflight_runs_on_the_resolved_path() {
        let (_d, w) = ws(0);
        let err = w.resolve_checked("bad\nname", Access::Read).unwrap_err();
        assert!(err.to_string().starts_with("Invalid path: Path contains invalid characters"));
    }

    /// Issue 33, finding 2: a root replaced by a symlink to `/` served the whole machine to a
    /// later session's file tools.
    #[cfg(unix)]
    #[test]
    fn a_root_that_is_a_symlink_to_the_file_system_root_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("project");
        std::os::unix::fs::symlink("/", &link).unwrap();
        let err = Workspace::new(&[link], &Config::default()).unwrap_err();
        assert!(err.to_string().contains("symbolic link to /"), "{err}");
        // The same for a link to the home folder.
        if let Some(home) = crate::files::user_home().and_then(|h| fs::canonicalize(h).ok()) {
            let link = d.path().join("home-link");
            std::os::unix::fs::symlink(&home, &link).unwrap();
            assert!(Workspace::new(&[link], &Config::default()).is_err());
        }
        // Named `/` itself it is refused too, unless asked for by name (issue 46, G7).
        let err = Workspace::new(&[PathBuf::from("/")], &Config::default()).unwrap_err();
        assert!(err.to_string().contains("TOOLBELT_ALLOW_HOME_WORKSPACE"), "{err}");
        let cfg = Config { allow_home_or_root_workspace: true, ..Config::default() };
        assert!(Workspace::new(&[PathBuf::from("/")], &cfg).is_ok());
    }

    #[test]
    fn missing_or_file_roots_are_errors() {
        let cfg = Config::default();
        assert!(Workspace::new(&[PathBuf::from("/definitely/not/here")], &cfg).is_err());
        assert!(matches!(Workspace::new(&[], &cfg), Err(WorkspaceError::NoRoots)));
    }
}
