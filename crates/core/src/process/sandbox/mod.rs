//! The sandbox every command can run in: on Linux, Landlock (the file system, and TCP bind and
//! connect where the kernel's ABI has them) plus a seccomp filter for what Landlock cannot say
//! (other socket families, io_uring, ptrace, kernel keyrings and modules). Both are applied in
//! the child before it runs the program, so every descendant inherits them and none can lift
//! them; no root, container or user namespace is needed.
//!
//! Profiles follow Gemini CLI's seatbelt profiles: `permissive-*` read everything and write only
//! to the workspace roots, the temp folders and the usual tool caches; `restrictive-*` also
//! limit reads to those, the system folders and tool configuration; `*-open` keep the network,
//! `*-closed` take it away.

#[cfg(unix)]
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::sync::Arc;

#[cfg(unix)]
mod grants;
mod support;
pub use support::Support;
#[cfg(not(target_os = "linux"))]
pub use support::{support, usable};
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
pub use linux::{Prepared, support, usable};

/// Whether commands may use the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Network {
    /// As outside the sandbox.
    Open,
    /// No TCP bind or connect, no sockets but Unix-domain ones.
    Closed,
}

/// What commands may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Everything.
    Permissive,
    /// The writable folders, the system folders and tool configuration.
    Restrictive,
}

/// A sandbox profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// What commands may read.
    pub reads: Reads,
    /// Whether they may use the network.
    pub network: Network,
}

impl Profile {
    /// The default profile (upstream's default, `permissive-open`).
    pub const DEFAULT: Profile = Profile { reads: Reads::Permissive, network: Network::Open };

    /// The profile names, for help and errors.
    pub const NAMES: &'static [&'static str] =
        &["permissive-open", "permissive-closed", "restrictive-open", "restrictive-closed"];

    /// A profile by name. Upstream's `*-proxied` (network only through a proxy toolbelt does not
    /// run) mean `*-closed`; `strict-*` mean `restrictive-*`.
    pub fn parse(name: &str) -> Option<Profile> {
        let (reads, network) = name.trim().split_once('-')?;
        let reads = match reads {
            "permissive" => Reads::Permissive,
            "restrictive" | "strict" => Reads::Restrictive,
            _ => return None,
        };
        let network = match network {
            "open" => Network::Open,
            "closed" | "proxied" => Network::Closed,
            _ => return None,
        };
        Some(Profile { reads, network })
    }

    /// A profile by name, or what to say about a name that is none.
    pub fn named(name: &str) -> Result<Profile, String> {
        Profile::parse(name).ok_or_else(|| {
            format!("{name:?} is not a sandbox profile; use one of {}", Profile::NAMES.join(", "))
        })
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match (self.reads, self.network) {
            (Reads::Permissive, Network::Open) => "permissive-open",
            (Reads::Permissive, Network::Closed) => "permissive-closed",
            (Reads::Restrictive, Network::Open) => "restrictive-open",
            (Reads::Restrictive, Network::Closed) => "restrictive-closed",
        }
    }
}

/// A folder (or device file) the sandbox grants, held open: the rules a command gets are
/// made from this handle, never from its name, so a folder swapped for a symlink after it was
/// opened grants nothing new.
#[derive(Clone, Debug)]
pub struct Grant {
    /// The path it was opened at (for reports and errors).
    pub path: PathBuf,
    #[cfg(unix)]
    fd: Arc<OwnedFd>,
}

/// Grants compare by the path they were opened at (the settings that hold a sandbox compare).
impl PartialEq for Grant {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for Grant {}

impl Grant {
    /// The open handle.
    #[cfg(unix)]
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// A path beneath a writable folder that stays read-only: toolbelt's state folders and the
/// files that decide what runs in each root (`.gemini/`, `.toolbelt/`, `.git/config`,
/// `.git/hooks`). Landlock cannot take a part of a granted folder back; these are made
/// read-only in a mount namespace of the command's own, where the kernel allows one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protected {
    /// The folder `rel` is found beneath (a workspace root, or the state folder's parent).
    pub base: PathBuf,
    /// Bound read-only (a control folder); `false`: bound onto itself as it is, so that it
    /// cannot be renamed or replaced from inside (a root, or a folder on the way to one).
    pub read_only: bool,
    /// The identity (device, inode) `base` must still have when the command starts: a folder
    /// swapped in its place is refused.
    pub base_id: (u64, u64),
    /// The protected path beneath `base` (no `..`, no symlink allowed on the way).
    pub rel: PathBuf,
    /// A file protected where it exists (a context file), never created where it does not.
    pub only_if_present: bool,
}

impl Protected {
    /// The protected path.
    pub fn path(&self) -> PathBuf {
        self.base.join(&self.rel)
    }
}

/// A sandbox: a profile and what it grants. A session holds one without the workspace's roots
/// ([`Sandbox::new`]); each command gets that one with the roots as they are when it starts
/// ([`Sandbox::with_roots`], through `Workspace::confine`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    /// The profile.
    pub profile: Profile,
    writable: Vec<Grant>,
    readable: Vec<Grant>,
    /// toolbelt's own state folders (settings, policies, trust decisions, saved outputs) and
    /// the user's `~/.gemini`: never writable from inside.
    state: Vec<PathBuf>,
    protected: Vec<Protected>,
    /// The command's own terminal (`--pty`), writable although other terminals are not.
    terminal: Option<Grant>,
    /// The context file names read into the model's instructions from each root
    /// (`context.fileName`; `GEMINI.md` always): read-only where they exist (issue 46, G10).
    context_files: Vec<String>,
    /// What runs toolbelt: its executable and the package folder it was installed in (real
    /// paths). Read-only inside even beneath a writable cache (issue 46, G6: a command
    /// replaced the binary in `~/.npm/_npx/...`, and the next launch ran it unsandboxed).
    enforcer: Vec<PathBuf>,
}

/// Tool caches under the home folder that commands may write. Not the folders that hold
/// settings, policies, trust decisions, saved outputs or programs (`~/.gemini`, `~/.toolbelt`,
/// `~/.cargo/bin`, `~/.cargo/config.toml`): a sandboxed command that could write those would
/// lift the sandbox of every later session, or redirect what toolbelt itself writes (adversarial
/// reviews, issues 18 and 33).
const HOME_WRITABLE: &[&str] = &[".cache", ".npm", ".cargo/registry", ".cargo/git"];
/// Configuration and toolchains under the home folder a restrictive profile still reads.
const HOME_READABLE: &[&str] = &[
    ".gitconfig",
    ".config",
    ".nvm",
    ".fnm",
    ".node",
    ".rustup",
    ".local",
    ".pyenv",
    ".npmrc",
    ".yarnrc",
];
/// Toolchains under the home folder that the confined profile still reads (the programs a
/// known-safe command may be, and what they load); not `.config`, which holds tokens.
const HOME_TOOLCHAINS: &[&str] =
    &[".cargo/bin", ".rustup", ".nvm", ".fnm", ".pyenv", ".local/bin", ".local/lib"];
/// System folders a restrictive profile reads.
const SYSTEM_READABLE: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc",
    "/sys", "/dev", "/run", "/nix", "/var/lib",
];
/// Device files every profile may write. Not `/dev/pts`: a command could draw on the user's
/// other terminals (a fake approval prompt); its own terminal is granted by handle.
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/shm"];

/// Paths in each writable root whose files decide what runs: they stay read-only. `.git`
/// whole, as codex and upstream's bubblewrap profile keep it: its config, hooks, `commondir`,
/// `config.worktree` and submodules' folders all decide what git runs (issue 33, second
/// review: `.git/commondir` moved the repository's config elsewhere). Commits and other git
/// writes then need a command run outside the sandbox.
pub const ROOT_CONTROL: &[&str] = &[".gemini", ".toolbelt", ".git"];

/// The context file every root may have (upstream's default `context.fileName`).
pub const ROOT_CONTEXT: &str = "GEMINI.md";

impl Sandbox {
    /// The sandbox of a session, without its roots: `profile`, the temp folders, the tool
    /// caches under `home`, and `extra` writable folders (`allowedPaths`), each opened now.
    /// `state` are toolbelt's own folders (its state folder, `~/.gemini`): never writable.
    ///
    /// A path whose way leads through a symlink someone other than root could have planted
    /// (a temp folder replaced by a link, say) is not granted (a warning in the log says why).
    #[cfg(unix)]
    pub fn new(
        profile: Profile,
        home: Option<&Path>,
        state: &[PathBuf],
        extra: &[PathBuf],
    ) -> Result<Self, SandboxError> {
        let mut writable: Vec<PathBuf> = extra.to_vec();
        writable.push(std::env::temp_dir());
        writable.extend(["/tmp", "/var/tmp"].map(PathBuf::from));
        writable.extend(DEVICES.iter().map(PathBuf::from));
        let mut readable: Vec<PathBuf> = SYSTEM_READABLE.iter().map(PathBuf::from).collect();
        if let Some(home) = home {
            writable.extend(HOME_WRITABLE.iter().map(|d| home.join(d)));
            readable.extend(HOME_READABLE.iter().map(|d| home.join(d)));
        }
        // Programs on PATH must stay readable (and runnable) under a restrictive profile.
        if let Some(path) = std::env::var_os("PATH") {
            readable.extend(std::env::split_paths(&path).filter(|p| p.is_absolute()));
        }
        let mut state: Vec<PathBuf> = state.to_vec();
        dedup(&mut state);
        let state_real: Vec<PathBuf> =
            state.iter().map(|s| std::fs::canonicalize(s).unwrap_or_else(|_| s.clone())).collect();
        let open = |paths: Vec<PathBuf>, write: bool| -> Result<Vec<Grant>, SandboxError> {
            let mut out: Vec<Grant> = Vec::new();
            for p in paths {
                let opened = if write { grants::open_writable(&p)? } else { grants::open(&p)? };
                let Some(grant) = opened else { continue };
                // A writable folder reached through a symlink that leads above toolbelt's state
                // or the home folder would hand them out whole (a TMPDIR that now leads to `/`
                // or `~`). Named so by the user (`allowedPaths: ["~"]`), it is the user's call.
                if write
                    && grant.path != p
                    && let Some(home) = home
                    && let Some(hit) = grants::covers(&grant.path, home, &state_real)
                {
                    return Err(SandboxError::Setup(format!(
                        "{} leads to {}, which holds {}: it cannot be writable inside the sandbox",
                        p.display(),
                        grant.path.display(),
                        hit.display()
                    )));
                }
                if !out.iter().any(|g| g.path == grant.path) {
                    out.push(grant);
                }
            }
            Ok(out)
        };
        Ok(Sandbox {
            profile,
            writable: open(writable, true)?,
            readable: open(readable, false)?,
            state,
            protected: Vec::new(),
            terminal: None,
            context_files: vec![ROOT_CONTEXT.to_string()],
            enforcer: enforcer_paths(),
        })
    }

    /// This sandbox keeping the context files `names` of each root read-only too (besides
    /// `GEMINI.md`): they become the next session's instructions. Plain names only.
    pub fn with_context_files(mut self, names: &[String]) -> Self {
        for n in names {
            let plain = !n.is_empty() && !n.contains('/') && n != "." && n != "..";
            if plain && !self.context_files.contains(n) {
                self.context_files.push(n.clone());
            }
        }
        self
    }

    /// This sandbox with the workspace's roots as they are now: `roots` are each root's real
    /// path, its open handle and whether it may only be read. The folders in each writable
    /// root that decide what runs, and toolbelt's state folders beneath any writable grant,
    /// become [`Protected`].
    #[cfg(unix)]
    pub fn with_roots(
        &self,
        roots: &[(&Path, BorrowedFd<'_>, bool)],
    ) -> Result<Self, SandboxError> {
        let mut s = self.clone();
        let mut grants = Vec::new();
        let mut controls = Vec::new();
        for (path, fd, read_only) in roots {
            let fd = fd.try_clone_to_owned().map_err(|e| SandboxError::Setup(e.to_string()))?;
            let grant = Grant { path: path.to_path_buf(), fd: Arc::new(fd) };
            if *read_only {
                s.readable.push(grant);
            } else {
                let id = grants::identity(grant.fd())?;
                for rel in ROOT_CONTROL {
                    controls.push(Protected {
                        base: path.to_path_buf(),
                        base_id: id,
                        rel: PathBuf::from(rel),
                        read_only: true,
                        only_if_present: false,
                    });
                }
                for name in &self.context_files {
                    controls.push(Protected {
                        base: path.to_path_buf(),
                        base_id: id,
                        rel: PathBuf::from(name),
                        read_only: true,
                        only_if_present: true,
                    });
                }
                grants.push(grant);
            }
        }
        let root_paths: Vec<PathBuf> = grants.iter().map(|g| g.path.clone()).collect();
        grants.append(&mut s.writable);
        s.writable = grants;
        // toolbelt's own program and package, where a writable folder holds them but no root
        // does (a program built inside the workspace is the workspace's to rebuild).
        let mut enforcer = Vec::new();
        for path in &self.enforcer {
            if root_paths.iter().any(|r| path.starts_with(r))
                || !s.writable.iter().any(|g| path.starts_with(&g.path))
            {
                continue;
            }
            enforcer.extend(read_only_entry(path, true)?);
        }
        let mut state = Vec::new();
        for st in &self.state {
            let Ok(real) = std::fs::canonicalize(st) else { continue };
            if !s.writable.iter().any(|g| real.starts_with(&g.path)) {
                continue;
            }
            state.extend(read_only_entry(&real, false)?);
        }
        // A bind keeps a folder's contents, not its name: a writable root (or the folder that
        // holds a protected state folder) beneath another writable folder could be renamed
        // away and a lookalike made in its place, which a later session takes by its name
        // (issue 33, second review). Each such folder, and every folder between it and the
        // writable folder above it, is bound onto itself: a mount point cannot be renamed.
        let mut pins: Vec<PathBuf> = Vec::new();
        let targets = roots
            .iter()
            .filter(|(_, _, ro)| !ro)
            .map(|(p, _, _)| p.to_path_buf())
            .chain(state.iter().map(|p| p.base.clone()))
            .chain(enforcer.iter().map(|p| p.base.clone()));
        for target in targets {
            let Some(above) = s
                .writable
                .iter()
                .map(|g| g.path.as_path())
                .filter(|g| target.starts_with(g) && *g != target)
                .max_by_key(|g| g.components().count())
            else {
                continue;
            };
            let mut chain: Vec<PathBuf> =
                target.ancestors().take_while(|a| *a != above).map(Path::to_path_buf).collect();
            chain.reverse();
            for dir in chain {
                if !pins.contains(&dir) {
                    pins.push(dir);
                }
            }
        }
        let mut protected = Vec::new();
        for dir in pins {
            let Some(g) = grants::open_writable(&dir)? else { continue };
            protected.push(Protected {
                base: dir,
                base_id: grants::identity(g.fd())?,
                rel: PathBuf::from("."),
                read_only: false,
                only_if_present: false,
            });
        }
        protected.extend(controls);
        protected.extend(state);
        protected.extend(enforcer);
        s.protected = protected;
        Ok(s)
    }

    /// The confined profile for commands that run unasked only because the known-safe table
    /// vouches for them (issue 34): they read the system and the workspace's `roots` (real
    /// path, handle), write nothing but `/dev/null` and the pipes they were given, use no
    /// network, and read nothing in the user's home folder outside the roots but the
    /// toolchains commands are run from. A gap in the table can then neither write, run a
    /// repository's program with effect, nor read a secret outside the workspace.
    #[cfg(unix)]
    pub fn read_only(
        home: Option<&Path>,
        roots: &[(&Path, BorrowedFd<'_>)],
    ) -> Result<Self, SandboxError> {
        let home = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
        // The top-level folder the home folder is in (`/home`, `/root`) is left out whole.
        let hidden = home
            .as_deref()
            .and_then(|h| h.components().nth(1).map(|c| Path::new("/").join(c.as_os_str())));
        let mut readable = Vec::new();
        for entry in std::fs::read_dir("/").map_err(|e| SandboxError::Setup(e.to_string()))? {
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            if hidden.as_ref().is_some_and(|h| *h == path) {
                continue;
            }
            if let Some(grant) = grants::open(&path)? {
                // A top-level link that leads into the home folder (`/u -> /home/u`) too.
                if hidden.as_ref().is_some_and(|h| grant.path.starts_with(h)) {
                    continue;
                }
                readable.push(grant);
            }
        }
        if let Some(home) = &home {
            for d in HOME_TOOLCHAINS {
                if let Some(g) = grants::open(&home.join(d))? {
                    readable.push(g);
                }
            }
        }
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path).filter(|p| p.is_absolute()) {
                if let Some(g) = grants::open(&dir)? {
                    readable.push(g);
                }
            }
        }
        for (path, fd) in roots {
            let fd = fd.try_clone_to_owned().map_err(|e| SandboxError::Setup(e.to_string()))?;
            readable.push(Grant { path: path.to_path_buf(), fd: Arc::new(fd) });
        }
        let writable: Vec<Grant> =
            grants::open_writable(Path::new("/dev/null"))?.into_iter().collect();
        Ok(Sandbox {
            profile: Profile { reads: Reads::Restrictive, network: Network::Closed },
            writable,
            readable,
            state: Vec::new(),
            protected: Vec::new(),
            terminal: None,
            context_files: Vec::new(),
            enforcer: Vec::new(),
        })
    }

    /// This sandbox with `terminal` (the command's own pseudo-terminal) writable.
    #[cfg(unix)]
    pub fn with_terminal(
        &self,
        terminal: BorrowedFd<'_>,
        path: &Path,
    ) -> Result<Self, SandboxError> {
        let fd = terminal.try_clone_to_owned().map_err(|e| SandboxError::Setup(e.to_string()))?;
        let mut s = self.clone();
        s.terminal = Some(Grant { path: path.to_path_buf(), fd: Arc::new(fd) });
        Ok(s)
    }

    /// This sandbox with `dir` writable too: a private scratch folder toolbelt made for one
    /// command and removes after it (the shell wrapper's list of background jobs). A folder
    /// reached through a symbolic link is refused, as every writable grant is.
    #[cfg(unix)]
    pub fn with_scratch(&self, dir: &Path) -> Result<Self, SandboxError> {
        let grant = grants::open_writable(dir)?.ok_or_else(|| {
            SandboxError::Setup(format!("the scratch folder {} is gone", dir.display()))
        })?;
        let mut s = self.clone();
        s.writable.push(grant);
        Ok(s)
    }

    /// What commands may write (and read).
    pub fn writable(&self) -> &[Grant] {
        &self.writable
    }

    /// What commands may read (with a restrictive profile; a permissive one reads all).
    pub fn readable(&self) -> &[Grant] {
        &self.readable
    }

    /// The paths beneath writable folders that stay read-only.
    pub fn protected(&self) -> &[Protected] {
        &self.protected
    }

    /// The command's own terminal, if granted.
    pub fn terminal(&self) -> Option<&Grant> {
        self.terminal.as_ref()
    }
}

/// `path` kept read-only, found beneath its parent folder as that folder is now (`None`: the
/// parent is gone, or `path` is `/`).
#[cfg(unix)]
fn read_only_entry(path: &Path, only_if_present: bool) -> Result<Option<Protected>, SandboxError> {
    let (Some(base), Some(name)) = (path.parent(), path.file_name()) else { return Ok(None) };
    let Some(base_grant) = grants::open(base)? else { return Ok(None) };
    Ok(Some(Protected {
        base: base.to_path_buf(),
        base_id: grants::identity(base_grant.fd())?,
        rel: PathBuf::from(name),
        read_only: true,
        only_if_present,
    }))
}

/// toolbelt's executable and the package folder it came in, as real paths: the nearest
/// `node_modules` folder above it (npm, npx), or the Python environment (`pyvenv.cfg`: uvx,
/// uv tools, pipx, a venv) it is installed in.
fn enforcer_paths() -> Vec<PathBuf> {
    let Ok(exe) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return Vec::new();
    };
    let package = exe.ancestors().skip(1).find(|d| {
        d.file_name().is_some_and(|n| n == "node_modules") || d.join("pyvenv.cfg").is_file()
    });
    let mut out = vec![exe.clone()];
    out.extend(package.map(Path::to_path_buf));
    out
}

fn dedup(v: &mut Vec<PathBuf>) {
    let mut seen = std::collections::BTreeSet::new();
    v.retain(|p| seen.insert(p.clone()));
}

/// Why a sandbox cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel has no Landlock (or it is switched off).
    #[error(
        "the sandbox needs Landlock, which this kernel does not offer ({0}); commands were not run. Run `toolbelt sandbox --check` for details, or turn the sandbox off (no --sandbox, tools.sandbox false, GEMINI_SANDBOX unset)"
    )]
    Unsupported(String),
    /// Setting the rules up failed.
    #[error("could not set the sandbox up: {0}")]
    Setup(String),
}

/// The prepared rules on a system without a sandbox: preparing always fails.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub struct Prepared;

#[cfg(not(target_os = "linux"))]
impl Prepared {
    pub fn new(_: &Sandbox, _: &Path) -> Result<Self, SandboxError> {
        Err(SandboxError::Unsupported(support().missing.unwrap_or_default()))
    }

    pub fn apply(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::other("no sandbox on this system"))
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
