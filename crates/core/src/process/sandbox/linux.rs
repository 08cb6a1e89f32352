//! Landlock and seccomp on Linux, through the crates their maintainers keep (`landlock` from the
//! Landlock authors, `seccompiler` from Firecracker): the rules are built in the parent, where
//! allocating is safe, and only applied (a few system calls, no allocation) in the child after
//! fork.

use std::collections::BTreeMap;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::{Network, Reads, Sandbox, SandboxError, Support};

/// The newest ABI toolbelt asks for; older kernels get what they have.
const ABI_WANTED: ABI = ABI::V6;

/// Caps the ABI used (`0` pretends there is no Landlock): for tests and for pinning behaviour.
const ABI_CAP_VAR: &str = "TOOLBELT_LANDLOCK_ABI";

/// System calls no sandboxed command needs and that reach past Landlock: tracing other
/// processes, kernel keyrings, modules, BPF, perf events, userfaultfd and io_uring (whose
/// operations skip the socket filter).
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_writev,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_add_key,
    libc::SYS_keyctl,
    libc::SYS_request_key,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];

fn abi_from(v: i32) -> Option<ABI> {
    Some(match v {
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        v if v >= 6 => ABI::V6,
        _ => return None,
    })
}

/// The kernel's Landlock ABI version, or why there is none.
#[allow(unsafe_code)]
fn kernel_abi() -> Result<i32, String> {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns the
    // version; it reads and writes no memory.
    let v = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32)
    };
    if v >= 1 {
        return Ok(i32::try_from(v).unwrap_or(i32::MAX));
    }
    Err(match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built in but switched off (add landlock to the lsm= boot parameter)".into()
        }
        _ => {
            "the kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)".into()
        }
    })
}

/// What this machine supports (the ABI capped by `TOOLBELT_LANDLOCK_ABI`), found once per
/// process: every sandboxed spawn asks.
pub fn support() -> Support {
    static SUPPORT: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
    SUPPORT.get_or_init(read_support).clone()
}

#[allow(unsafe_code)]
fn read_support() -> Support {
    let cap = std::env::var(ABI_CAP_VAR).ok().and_then(|v| v.trim().parse::<i32>().ok());
    let (abi, missing) = match (kernel_abi(), cap) {
        (_, Some(c)) if c < 1 => (0, Some(format!("switched off by {ABI_CAP_VAR}={c}"))),
        (Ok(v), Some(c)) => (v.min(c), None),
        (Ok(v), None) => (v, None),
        (Err(why), _) => (0, Some(why)),
    };
    // SAFETY: prctl(PR_GET_SECCOMP) only reads this process's seccomp mode.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    Support { landlock_abi: abi, missing, seccomp }
}

fn setup(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(e.to_string())
}

/// The rules for one command, ready to apply in its process.
#[derive(Debug)]
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    filter: BpfProgram,
}

impl Prepared {
    /// Builds the Landlock ruleset and the seccomp filter for `sandbox`. Fails, rather than run
    /// a command unconfined, when the kernel has no Landlock.
    pub fn new(sandbox: &Sandbox) -> Result<Self, SandboxError> {
        let support = support();
        support.require()?;
        let abi = abi_from(support.landlock_abi)
            .ok_or_else(|| SandboxError::Unsupported("unknown Landlock ABI".into()))?;
        let abi = if (abi as i32) > (ABI_WANTED as i32) { ABI_WANTED } else { abi };
        let closed = sandbox.profile.network == Network::Closed;
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .map_err(setup)?
            .set_compatibility(CompatLevel::BestEffort);
        if closed && (abi as i32) >= 4 {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(setup)?;
        }
        if (abi as i32) >= 6 {
            ruleset = ruleset.scope(Scope::from_all(abi)).map_err(setup)?;
        }
        let mut created = ruleset.create().map_err(setup)?;
        let read = AccessFs::from_read(abi);
        match sandbox.profile.reads {
            Reads::Permissive => created = add(created, "/".as_ref(), read, abi)?,
            Reads::Restrictive => {
                for p in &sandbox.readable {
                    created = add(created, p, read, abi)?;
                }
            }
        }
        for p in &sandbox.writable {
            created = add(created, p, AccessFs::from_all(abi), abi)?;
        }
        Ok(Prepared { ruleset: Some(created), filter: filter(closed, abi as i32)? })
    }

    /// Applies the rules to the calling process: Landlock first (it sets no_new_privs), then the
    /// seccomp filter. Called in the child between fork and exec: it only makes system calls.
    pub fn apply(&mut self) -> std::io::Result<()> {
        let ruleset =
            self.ruleset.take().ok_or_else(|| std::io::Error::other("sandbox applied twice"))?;
        ruleset.restrict_self().map_err(|_| std::io::Error::last_os_error())?;
        seccompiler::apply_filter(&self.filter).map_err(|_| std::io::Error::last_os_error())
    }
}

/// Grants `access` beneath `path`, if it exists (a file gets the rights that apply to files).
fn add(
    created: RulesetCreated,
    path: &std::path::Path,
    access: landlock::BitFlags<AccessFs>,
    abi: ABI,
) -> Result<RulesetCreated, SandboxError> {
    let Ok(meta) = std::fs::metadata(path) else { return Ok(created) };
    let Ok(fd) = PathFd::new(path) else { return Ok(created) };
    let access = if meta.is_dir() { access } else { access & AccessFs::from_file(abi) };
    created.add_rule(PathBeneath::new(fd, access)).map_err(setup)
}

/// The seccomp filter: [`DENIED`] calls fail with EPERM, so do the terminal ioctls that type
/// into another program's input, and with a closed network so does opening any socket (UDP,
/// raw, netlink and Unix ones, which Landlock's TCP rules do not cover).
fn filter(closed: bool, abi: i32) -> Result<BpfProgram, SandboxError> {
    let arch = std::env::consts::ARCH.try_into().map_err(setup)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|s| (*s, Vec::new())).collect();
    if abi < 3 {
        // Before ABI 3 Landlock does not govern truncate(2) by path: any file could be emptied.
        rules.insert(libc::SYS_truncate, Vec::new());
    }
    if closed {
        // Every socket: Landlock does not cover connecting to a Unix socket by path, and an
        // outside program listening on one (tmux, an ssh agent, docker) would run commands for
        // the sandboxed one. `socketpair` stays.
        rules.insert(libc::SYS_socket, Vec::new());
    }
    // Typing into a terminal (TIOCSTI) or through the console (TIOCLINUX) would run commands
    // in whatever shell reads that terminal, outside the sandbox.
    let ioctl = |cmd: u64| -> Result<SeccompRule, SandboxError> {
        let c = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, cmd)
            .map_err(setup)?;
        SeccompRule::new(vec![c]).map_err(setup)
    };
    rules.insert(libc::SYS_ioctl, vec![ioctl(libc::TIOCSTI)?, ioctl(libc::TIOCLINUX)?]);
    let eperm = SeccompAction::Errno(u32::try_from(libc::EPERM).unwrap_or(1));
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch).map_err(setup)?;
    filter.try_into().map_err(setup)
}
