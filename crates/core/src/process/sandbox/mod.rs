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

use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::{Prepared, support};

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

/// A sandbox: a profile and the folders it grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    /// The profile.
    pub profile: Profile,
    /// Folders (and a few device files) commands may write, and so read.
    pub writable: Vec<PathBuf>,
    /// Folders commands may read (with a restrictive profile; a permissive one reads all).
    pub readable: Vec<PathBuf>,
}

/// Tool caches under the home folder that commands may write. Not the folders that hold
/// settings, policies, trust decisions or programs (`~/.gemini`, `~/.toolbelt`, `~/.cargo/bin`,
/// `~/.cargo/config.toml`): a sandboxed command that could write those would lift the sandbox
/// of every later session (adversarial review, issue 18).
const HOME_WRITABLE: &[&str] =
    &[".cache", ".npm", ".cargo/registry", ".cargo/git", ".gemini/tmp", ".toolbelt/tmp"];
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
/// System folders a restrictive profile reads.
const SYSTEM_READABLE: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc",
    "/sys", "/dev", "/run", "/nix", "/var/lib",
];
/// Device files every profile may write.
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"];

impl Sandbox {
    /// The sandbox for a session: `profile`, the workspace `roots`, the temp folders and the
    /// tool caches under `home`, and `extra` writable folders.
    pub fn new(
        profile: Profile,
        roots: &[PathBuf],
        home: Option<&Path>,
        extra: &[PathBuf],
    ) -> Self {
        let mut writable: Vec<PathBuf> = roots.to_vec();
        writable.extend(extra.iter().cloned());
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
        dedup(&mut writable);
        dedup(&mut readable);
        Sandbox { profile, writable, readable }
    }
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

/// What this machine supports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version in use (0: none).
    pub landlock_abi: i32,
    /// Why there is none, when there is none.
    pub missing: Option<String>,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
}

impl Support {
    /// Whether commands can be sandboxed.
    pub fn usable(&self) -> bool {
        self.landlock_abi >= 1 && self.seccomp
    }

    /// `Ok` when commands can be sandboxed, else why not.
    pub fn require(&self) -> Result<(), SandboxError> {
        if self.usable() {
            return Ok(());
        }
        let why = self.missing.clone().unwrap_or_else(|| "seccomp is not available".into());
        Err(SandboxError::Unsupported(why))
    }

    /// What this kernel's Landlock leaves uncovered, for a warning when the sandbox is on.
    pub fn gaps(&self) -> Option<String> {
        let abi = self.landlock_abi;
        if !self.usable() || abi >= 6 {
            return None;
        }
        let mut gaps = vec![
            "signals to processes outside the sandbox (so a command can kill its reaper and leave orphans)",
            "connecting to abstract Unix sockets",
        ];
        if abi < 4 {
            gaps.push(
                "TCP bind and connect (closed profiles still refuse sockets through seccomp)",
            );
        }
        if abi < 3 {
            gaps.push("truncating files (truncate(2) is refused through seccomp instead)");
        }
        Some(format!(
            "this kernel's Landlock (ABI {abi}) does not cover {}; Linux 6.12 or later covers all of it",
            gaps.join(", ")
        ))
    }

    /// A report for `toolbelt sandbox --check`, one line per feature.
    pub fn report(&self) -> String {
        let yes = |b: bool| if b { "yes" } else { "no" };
        let abi = self.landlock_abi;
        let mut out = String::new();
        match &self.missing {
            Some(why) => out.push_str(&format!("landlock: no ({why})\n")),
            None => out.push_str(&format!("landlock: yes (ABI {abi})\n")),
        }
        out.push_str(&format!("  file system rules: {}\n", yes(abi >= 1)));
        out.push_str(&format!("  truncate rules (ABI 3): {}\n", yes(abi >= 3)));
        out.push_str(&format!("  TCP bind/connect rules (ABI 4): {}\n", yes(abi >= 4)));
        out.push_str(&format!("  device ioctl rules (ABI 5): {}\n", yes(abi >= 5)));
        out.push_str(&format!("  signal and abstract socket scoping (ABI 6): {}\n", yes(abi >= 6)));
        out.push_str(&format!("seccomp: {}\n", yes(self.seccomp)));
        if let Some(gaps) = self.gaps() {
            out.push_str(&format!("warning: {gaps}\n"));
        }
        if self.usable() {
            out.push_str("sandbox: available; profiles: ");
            out.push_str(&Profile::NAMES.join(", "));
            out.push('\n');
        } else {
            out.push_str("sandbox: not available on this machine; asking for it is an error\n");
        }
        out
    }
}

/// What this machine supports: nothing, off Linux.
#[cfg(not(target_os = "linux"))]
pub fn support() -> Support {
    Support {
        landlock_abi: 0,
        missing: Some("Landlock is Linux only; macOS sandbox-exec profiles are planned".into()),
        seccomp: false,
    }
}

/// The prepared rules on a system without a sandbox: preparing always fails.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub struct Prepared;

#[cfg(not(target_os = "linux"))]
impl Prepared {
    pub fn new(_: &Sandbox) -> Result<Self, SandboxError> {
        Err(SandboxError::Unsupported(support().missing.unwrap_or_default()))
    }

    pub fn apply(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::other("no sandbox on this system"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_by_name_as_upstream_spells_them() {
        for name in Profile::NAMES {
            assert_eq!(Profile::parse(name).map(Profile::name), Some(*name));
        }
        assert_eq!(
            Profile::parse("permissive-proxied").map(Profile::name),
            Some("permissive-closed")
        );
        assert_eq!(Profile::parse("strict-open").map(Profile::name), Some("restrictive-open"));
        assert_eq!(Profile::parse("lenient-open"), None);
        assert_eq!(Profile::parse("permissive"), None);
    }

    #[test]
    fn writes_go_to_roots_temp_and_caches_only() {
        let s = Sandbox::new(Profile::DEFAULT, &["/w".into()], Some(Path::new("/h")), &[]);
        assert!(s.writable.contains(&PathBuf::from("/w")));
        assert!(s.writable.contains(&PathBuf::from("/h/.cache")));
        assert!(s.writable.contains(&PathBuf::from("/tmp")));
        assert!(!s.writable.iter().any(|p| p == Path::new("/h") || p.starts_with("/h/.ssh")));
        // Settings, policies and trust decisions stay out of reach.
        for p in ["/h/.gemini", "/h/.toolbelt", "/h/.cargo", "/h/.cargo/bin"] {
            assert!(!s.writable.contains(&PathBuf::from(p)), "{p}");
        }
    }
}
