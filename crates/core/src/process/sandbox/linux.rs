//! Landlock and seccomp on Linux, through the crates their maintainers keep (`landlock` from the
//! Landlock authors, `seccompiler` from Firecracker): the rules are built in the parent from
//! the sandbox's open handles, where allocating is safe, and only applied (a few system calls,
//! no allocation) in the child after fork.

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
    // Changing mounts (the read-only binds of the control folders among them): a command run
    // as root cleared `MOUNT_ATTR_RDONLY` with mount_setattr, which Landlock does not check
    // (issue 33, second review).
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_mount_setattr,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_pivot_root,
    // Reading another process's memory, rebooting, port I/O.
    libc::SYS_process_vm_readv,
    libc::SYS_reboot,
    libc::SYS_iopl,
    libc::SYS_ioperm,
];

/// Capabilities a command run as root loses (from the bounding set, so it never gets them back
/// at exec): administration, modules, raw I/O, devices (`mknod` of a disk or the console),
/// tracing, networks, clocks, auditing, namespaces' chroot. `CAP_SETPCAP`, needed to drop the
/// others, goes last. File access (`CAP_DAC_*`, `CAP_CHOWN`, `CAP_FOWNER`) stays: Landlock
/// decides it.
const DROPPED_CAPABILITIES: &[i32] = &[
    9,  // CAP_LINUX_IMMUTABLE
    12, // CAP_NET_ADMIN
    13, // CAP_NET_RAW
    16, // CAP_SYS_MODULE
    17, // CAP_SYS_RAWIO
    18, // CAP_SYS_CHROOT
    19, // CAP_SYS_PTRACE
    20, // CAP_SYS_PACCT
    21, // CAP_SYS_ADMIN
    22, // CAP_SYS_BOOT
    24, // CAP_SYS_RESOURCE
    25, // CAP_SYS_TIME
    26, // CAP_SYS_TTY_CONFIG
    27, // CAP_MKNOD
    29, // CAP_AUDIT_WRITE
    30, // CAP_AUDIT_CONTROL
    31, // CAP_SETFCAP
    32, // CAP_MAC_OVERRIDE
    33, // CAP_MAC_ADMIN
    34, // CAP_SYSLOG
    35, // CAP_WAKE_ALARM
    36, // CAP_BLOCK_SUSPEND
    37, // CAP_AUDIT_READ
    38, // CAP_PERFMON
    39, // CAP_BPF
    40, // CAP_CHECKPOINT_RESTORE
    8,  // CAP_SETPCAP, last
];

/// Drops [`DROPPED_CAPABILITIES`] from the bounding set (a capability the kernel does not know
/// is skipped). Only system calls: called between fork and exec.
#[allow(unsafe_code)]
fn drop_capabilities() -> std::io::Result<()> {
    for cap in DROPPED_CAPABILITIES {
        // SAFETY: prctl(PR_CAPBSET_DROP) changes only this process's bounding set.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, *cap, 0, 0, 0) };
        if rc < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

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

/// Whether commands can be sandboxed (Landlock and seccomp), without the probe for a mount
/// namespace that [`support`] makes (a fork: a third of every start's policy set-up, issue 37).
pub fn usable() -> bool {
    static USABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *USABLE.get_or_init(|| {
        let (abi, _, seccomp) = basic();
        abi >= 1 && seccomp
    })
}

fn read_support() -> Support {
    let (abi, missing, seccomp) = basic();
    let mount_ns = abi >= 1 && super::mounts::available();
    Support { landlock_abi: abi, missing, seccomp, mount_ns }
}

/// The Landlock ABI in use (or why none), and whether seccomp filters can be installed.
#[allow(unsafe_code)]
fn basic() -> (i32, Option<String>, bool) {
    let cap = std::env::var(ABI_CAP_VAR).ok().and_then(|v| v.trim().parse::<i32>().ok());
    let (abi, missing) = match (kernel_abi(), cap) {
        (_, Some(c)) if c < 1 => (0, Some(format!("switched off by {ABI_CAP_VAR}={c}"))),
        (Ok(v), Some(c)) => (v.min(c), None),
        (Ok(v), None) => (v, None),
        (Err(why), _) => (0, Some(why)),
    };
    // SAFETY: prctl(PR_GET_SECCOMP) only reads this process's seccomp mode.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    (abi, missing, seccomp)
}

fn setup(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(e.to_string())
}

/// The rules for one command, ready to apply in its process.
#[derive(Debug)]
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    filter: BpfProgram,
    mounts: Option<super::mounts::Plan>,
}

impl Prepared {
    /// Builds the Landlock ruleset, the seccomp filter and the read-only mounts for `sandbox`.
    /// Fails, rather than run a command unconfined, when the kernel has no Landlock, and when a
    /// protected path now leads through a symlink.
    /// `cwd` is the folder the command runs in.
    pub fn new(sandbox: &Sandbox, cwd: &std::path::Path) -> Result<Self, SandboxError> {
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
            Reads::Permissive => {
                let root = PathFd::new("/").map_err(setup)?;
                created = created.add_rule(PathBeneath::new(root, read)).map_err(setup)?;
            }
            Reads::Restrictive => {
                for g in sandbox.readable() {
                    created = add(created, g.fd(), read, abi)?;
                }
            }
        }
        // No device files made anywhere (`mknod` of the console or a disk, as root).
        let write = AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
        for g in sandbox.writable().iter().chain(sandbox.terminal()) {
            created = add(created, g.fd(), write, abi)?;
        }
        let mounts = super::mounts::Plan::new(sandbox.protected(), cwd)?;
        Ok(Prepared { ruleset: Some(created), filter: filter(closed, abi as i32)?, mounts })
    }

    /// Applies the rules to the calling process: the read-only mounts first (they need the
    /// privileges Landlock takes away), then Landlock (it sets no_new_privs), then the seccomp
    /// filter. Called in the child between fork and exec: it only makes system calls.
    pub fn apply(&mut self) -> std::io::Result<()> {
        if let Some(m) = &self.mounts {
            m.apply()?;
        }
        // SAFETY: geteuid only reads this process's credentials.
        #[allow(unsafe_code)]
        if unsafe { libc::geteuid() } == 0 {
            drop_capabilities()?;
        }
        let ruleset =
            self.ruleset.take().ok_or_else(|| std::io::Error::other("sandbox applied twice"))?;
        ruleset.restrict_self().map_err(|_| std::io::Error::last_os_error())?;
        seccompiler::apply_filter(&self.filter).map_err(|_| std::io::Error::last_os_error())
    }
}

/// Grants `access` beneath the open `fd` (a file gets the rights that apply to files).
fn add(
    created: RulesetCreated,
    fd: std::os::fd::BorrowedFd<'_>,
    access: landlock::BitFlags<AccessFs>,
    abi: ABI,
) -> Result<RulesetCreated, SandboxError> {
    let Ok(st) = rustix::fs::fstat(fd) else { return Ok(created) };
    let dir = rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory;
    let access = if dir { access } else { access & AccessFs::from_file(abi) };
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
    // The request numbers are `c_ulong` in glibc's headers and `c_int` in musl's.
    #[allow(clippy::unnecessary_cast)]
    let (sti, linux) = (libc::TIOCSTI as u64, libc::TIOCLINUX as u64);
    rules.insert(libc::SYS_ioctl, vec![ioctl(sti)?, ioctl(linux)?]);
    let eperm = SeccompAction::Errno(u32::try_from(libc::EPERM).unwrap_or(1));
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch).map_err(setup)?;
    let program: BpfProgram = filter.try_into().map_err(setup)?;
    Ok(refuse_x32(program))
}

/// The x32 ABI shares x86_64's audit architecture, its system calls numbered with bit 30 set:
/// a filter that checks the architecture and then exact numbers lets every x32 call through
/// (`socket`, `ioctl(TIOCSTI)`, io_uring on a kernel built with x32). Before the filter, every
/// call with that bit set fails with EPERM. Other architectures have no such alias.
fn refuse_x32(program: BpfProgram) -> BpfProgram {
    if std::env::consts::ARCH != "x86_64" {
        return program;
    }
    const X32_BIT: u32 = 0x4000_0000;
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    let ins = |code: u32, jt: u8, jf: u8, k: u32| seccompiler::sock_filter {
        code: u16::try_from(code).unwrap_or(0),
        jt,
        jf,
        k,
    };
    let eperm = 0x0005_0000 | u32::try_from(libc::EPERM).unwrap_or(1); // SECCOMP_RET_ERRNO
    let mut out = vec![
        // A = arch; not x86_64: on to the filter (which refuses other architectures itself).
        ins(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, 4),
        ins(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0, 3, AUDIT_ARCH_X86_64),
        // A = nr; bit 30 set: refuse.
        ins(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, 0),
        ins(libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K, 0, 1, X32_BIT),
        ins(libc::BPF_RET | libc::BPF_K, 0, 0, eperm),
    ];
    out.extend(program);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a seccomp BPF program on a system call: the action it returns.
    fn run(program: &[seccompiler::sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_ne_bytes());
        }
        let (mut a, mut pc) = (0u32, 0usize);
        loop {
            let ins = &program[pc];
            let code = u32::from(ins.code);
            pc += 1;
            match code & 0x07 {
                0x00 => {
                    assert_eq!(code, libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, "{ins:?}");
                    let at = ins.k as usize;
                    a = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                }
                0x04 => {
                    assert_eq!(code, libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, "{ins:?}");
                    a &= ins.k;
                }
                0x05 => {
                    let op = code & 0xf0;
                    if op == libc::BPF_JA {
                        pc += ins.k as usize;
                        continue;
                    }
                    let taken = match op {
                        0x10 => a == ins.k,
                        0x20 => a > ins.k,
                        0x30 => a >= ins.k,
                        0x40 => a & ins.k != 0,
                        _ => panic!("{ins:?}"),
                    };
                    pc += usize::from(if taken { ins.jt } else { ins.jf });
                }
                0x06 => return ins.k,
                _ => panic!("unexpected instruction {ins:?}"),
            }
        }
    }

    const ARCH: u32 = 0xc000_003e;
    const ERRNO_EPERM: u32 = 0x0005_0000 | libc::EPERM as u32;
    const ALLOW: u32 = 0x7fff_0000;

    /// Issue 33, finding 6: the filter checked the architecture but not the x32 bit, so on a
    /// kernel with x32 enabled `socket`, `ioctl(TIOCSTI)` and io_uring went through as x32 calls.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_system_calls_are_refused() {
        let program = filter(true, 6).unwrap();
        let x32 = 0x4000_0000u32;
        let socket = libc::SYS_socket as u32;
        let ioctl = libc::SYS_ioctl as u32;
        let uring = libc::SYS_io_uring_setup as u32;
        // The x86_64 calls: refused as before (closed network, TIOCSTI, io_uring).
        assert_eq!(run(&program, ARCH, socket, [2, 1, 0, 0, 0, 0]), ERRNO_EPERM);
        assert_eq!(run(&program, ARCH, ioctl, [0, libc::TIOCSTI, 0, 0, 0, 0]), ERRNO_EPERM);
        assert_eq!(run(&program, ARCH, uring, [0; 6]), ERRNO_EPERM);
        // Their x32 spellings: refused too.
        for nr in [socket, ioctl, uring, libc::SYS_read as u32] {
            assert_eq!(
                run(&program, ARCH, nr | x32, [0, libc::TIOCSTI, 0, 0, 0, 0]),
                ERRNO_EPERM,
                "{nr}"
            );
        }
        // Ordinary calls still pass.
        assert_eq!(run(&program, ARCH, libc::SYS_read as u32, [0; 6]), ALLOW);
        assert_eq!(run(&program, ARCH, ioctl, [0, libc::TCGETS, 0, 0, 0, 0]), ALLOW);
        // The open profile keeps its sockets.
        let open = filter(false, 6).unwrap();
        assert_eq!(run(&open, ARCH, socket, [2, 1, 0, 0, 0, 0]), ALLOW);
        assert_eq!(run(&open, ARCH, socket | x32, [2, 1, 0, 0, 0, 0]), ERRNO_EPERM);
    }
}
