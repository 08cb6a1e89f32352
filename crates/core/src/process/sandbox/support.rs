//! What a machine can do for the sandbox: the Landlock ABI, seccomp, a mount namespace; the
//! report of `toolbelt sandbox --check` and the warning a session gives.

use super::{Profile, SandboxError};

/// What this machine supports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version in use (0: none).
    pub landlock_abi: i32,
    /// Why there is none, when there is none.
    pub missing: Option<String>,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Whether a command can get a mount namespace of its own (as root, or through an
    /// unprivileged user namespace): what keeps control files inside writable folders
    /// read-only.
    pub mount_ns: bool,
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
        if !self.usable() {
            return None;
        }
        let mut gaps = Vec::new();
        if abi < 6 {
            gaps.push(
                "signals to processes outside the sandbox (so a command can kill its reaper and leave orphans)",
            );
            gaps.push("connecting to abstract Unix sockets");
        }
        if abi < 4 {
            gaps.push(
                "TCP bind and connect (closed profiles still refuse sockets through seccomp)",
            );
        }
        if abi < 3 {
            gaps.push("truncating files (truncate(2) is refused through seccomp instead)");
        }
        let mut out = Vec::new();
        if !gaps.is_empty() {
            out.push(format!(
                "this kernel's Landlock (ABI {abi}) does not cover {}; Linux 6.12 or later covers all of it",
                gaps.join(", ")
            ));
        }
        if !self.mount_ns {
            out.push(
                "no mount namespace can be made here (unprivileged user namespaces are off), so .gemini/, .toolbelt/, .git/config and .git/hooks inside the workspace's roots stay writable to sandboxed commands".to_string(),
            );
        }
        (!out.is_empty()).then(|| out.join("; "))
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
        out.push_str(&format!(
            "mount namespace: {}\n",
            if self.mount_ns {
                "yes (toolbelt's state and its own program, and .gemini/, .toolbelt/, .git and the context files (GEMINI.md) in each root, are read-only inside)"
            } else {
                "no (unprivileged user namespaces are off): control files inside the workspace's roots stay writable to sandboxed commands; writes to them by toolbelt's own tools are still asked"
            }
        ));
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

/// Whether commands can be sandboxed: not off Linux.
#[cfg(not(target_os = "linux"))]
pub fn usable() -> bool {
    false
}

/// What this machine supports: nothing, off Linux.
#[cfg(not(target_os = "linux"))]
pub fn support() -> Support {
    Support {
        landlock_abi: 0,
        missing: Some("Landlock is Linux only; macOS sandbox-exec profiles are planned".into()),
        seccomp: false,
        mount_ns: false,
    }
}
