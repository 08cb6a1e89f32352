//! Read-only paths beneath writable folders: a mount namespace of the command's own, in which
//! each protected path (toolbelt's state, a root's `.gemini/`, `.git/config`, `.git/hooks`) is
//! bound onto itself read-only. Landlock cannot take a part of a granted folder back, and once
//! a command is landlocked it can neither unmount nor remount anything (Landlock refuses every
//! mount operation to a sandboxed process), so the binds hold for everything it starts.
//!
//! Where toolbelt runs as root the namespace is made directly; otherwise inside a user
//! namespace that maps the user to itself (as bubblewrap and codex do). Where the kernel allows
//! neither, [`Plan::new`] returns none and `toolbelt sandbox --check` says the protection is
//! missing.
//!
//! Every path is found again after the namespace exists (a handle from before would name the
//! old namespace's mounts), by the kernel's own no-symlink walk (`openat2` with
//! `RESOLVE_NO_SYMLINKS`, and `RESOLVE_BENEATH` below its base), and its base must still be the
//! folder toolbelt holds (same device and inode): a folder swapped for another or for a link
//! after the parent looked fails the command instead of protecting the wrong place. Mounts are
//! made with the descriptor-based mount API (`open_tree`, `mount_setattr`, `move_mount`), so
//! no name is looked up twice. Everything in [`Plan::apply`] runs between fork and exec: only
//! system calls on data built before the fork.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Protected, SandboxError};

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
const MOUNT_ATTR_RDONLY: u64 = 1;
const RESOLVE_BENEATH: u64 = 0x08;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// One protected path, as C strings made before the fork.
#[derive(Debug)]
struct Entry {
    base: CString,
    base_id: (u64, u64),
    rel: CString,
    read_only: bool,
}

/// The read-only mounts of one command.
#[derive(Debug)]
pub struct Plan {
    /// toolbelt is root: the mount namespace needs no user namespace.
    as_root: bool,
    uid_map: CString,
    gid_map: CString,
    entries: Vec<Entry>,
    /// The folder the command runs in, entered again once the mounts are made: the old
    /// working directory lies beneath a folder bound onto itself, where the read-only binds
    /// made on top do not show (a command wrote `.gemini/settings.json` through it).
    cwd: CString,
}

fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn check(rc: libc::c_long) -> std::io::Result<libc::c_long> {
    if rc < 0 { Err(last_error()) } else { Ok(rc) }
}

fn cstring(p: &Path) -> Result<CString, SandboxError> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Setup(format!("{} holds a NUL byte", p.display())))
}

/// `openat2(dir, path, flags, resolve)`, a raw descriptor.
fn openat2(
    dir: libc::c_int,
    path: &CString,
    flags: libc::c_int,
    resolve: u64,
) -> std::io::Result<libc::c_int> {
    let how = OpenHow {
        flags: u64::try_from(flags | libc::O_CLOEXEC).unwrap_or(0),
        mode: 0,
        resolve: resolve | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `path` is a valid C string and `how` a valid open_how of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    check(fd).map(|fd| fd as libc::c_int)
}

fn identity(fd: libc::c_int) -> std::io::Result<(u64, u64)> {
    // SAFETY: fstat writes into the zeroed stat on our stack.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) < 0 {
            return Err(last_error());
        }
        #[allow(clippy::useless_conversion)]
        Ok((u64::from(st.st_dev), u64::from(st.st_ino)))
    }
}

fn close(fd: libc::c_int) {
    // SAFETY: closing a descriptor this module opened.
    unsafe {
        libc::close(fd);
    }
}

/// Whether this machine lets toolbelt make a mount namespace for a command (found once, by
/// trying in a forked child).
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(probe)
}

fn probe() -> bool {
    let Ok(plan) = Plan::empty() else { return false };
    // SAFETY: the child makes only system calls (on the plan built above) and exits.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let ok = plan.enter().is_ok();
            libc::_exit(if ok { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                return false;
            }
        }
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }
}

impl Plan {
    fn empty() -> Result<Self, SandboxError> {
        // SAFETY: getuid/getgid/geteuid only read this process's credentials.
        let (uid, gid, euid) = unsafe { (libc::getuid(), libc::getgid(), libc::geteuid()) };
        let c = |s: String| CString::new(s).map_err(|e| SandboxError::Setup(e.to_string()));
        Ok(Plan {
            as_root: euid == 0,
            uid_map: c(format!("{uid} {uid} 1\n"))?,
            gid_map: c(format!("{gid} {gid} 1\n"))?,
            entries: Vec::new(),
            cwd: c("/".into())?,
        })
    }

    /// The mounts for `protected`, checked now: a path that leads through a symlink, or whose
    /// base is no longer the folder toolbelt holds, is an error (the command does not run).
    /// Missing control folders (`.gemini`, `.toolbelt`, `.git/hooks` in a repository, the
    /// state folders) are created empty first, so that nothing can create them from inside.
    /// `None`: nothing to protect, or no namespace on this machine.
    pub fn new(protected: &[Protected], cwd: &Path) -> Result<Option<Self>, SandboxError> {
        if protected.is_empty() || !available() {
            return Ok(None);
        }
        let mut plan = Plan::empty()?;
        plan.cwd = cstring(cwd)?;
        for p in protected {
            let base = cstring(&p.base)?;
            let rel = cstring(&p.rel)?;
            let shown = p.path();
            let moved = || {
                SandboxError::Setup(format!(
                    "{} is no longer the folder toolbelt holds (it was moved, replaced or linked away); commands cannot run until the workspace is set again",
                    p.base.display()
                ))
            };
            let dir = openat2(
                libc::AT_FDCWD,
                &base,
                libc::O_PATH | libc::O_DIRECTORY,
                RESOLVE_NO_SYMLINKS,
            )
            .map_err(|_| moved())?;
            let same = identity(dir).map(|id| id == p.base_id).unwrap_or(false);
            let found =
                if same { ensure(dir, &p.rel, &rel, !p.only_if_present) } else { Ok(false) };
            close(dir);
            if !same {
                return Err(moved());
            }
            match found {
                Ok(true) => plan.entries.push(Entry {
                    base,
                    base_id: p.base_id,
                    rel,
                    read_only: p.read_only,
                }),
                Ok(false) => {}
                Err(e)
                    if e.raw_os_error() == Some(libc::ELOOP)
                        || e.raw_os_error() == Some(libc::EXDEV) =>
                {
                    return Err(SandboxError::Setup(format!(
                        "{} leads through a symbolic link, so it cannot be kept read-only inside the sandbox; replace the link with the folder itself (or run without the sandbox)",
                        shown.display()
                    )));
                }
                Err(e) => return Err(SandboxError::Setup(format!("{}: {e}", shown.display()))),
            }
        }
        Ok((!plan.entries.is_empty()).then_some(plan))
    }

    /// Makes the mount namespace (and the user namespace it needs, when not root) and stops
    /// mounts from travelling back to the parent's namespace.
    fn enter(&self) -> std::io::Result<()> {
        // SAFETY: plain system calls on C strings built before the fork.
        unsafe {
            let direct = self.as_root && libc::unshare(libc::CLONE_NEWNS) == 0;
            if !direct {
                // toolbelt is not dumpable (nothing of it readable through /proc), which makes
                // this process's /proc files root's: it could not write its own uid map. The
                // command is about to exec, which resets the flag anyway.
                // Dumpable only for the three writes: this process is a fork of toolbelt and
                // holds its secrets until it execs (issue 33, second review: a process of the
                // same user raced ptrace into the window).
                check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS).into())?;
                libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
                let maps = write_file(c"/proc/self/setgroups", b"deny")
                    .and_then(|()| write_file(c"/proc/self/uid_map", self.uid_map.as_bytes()))
                    .and_then(|()| write_file(c"/proc/self/gid_map", self.gid_map.as_bytes()));
                libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
                maps?;
            }
            check(
                libc::mount(
                    c"none".as_ptr(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                )
                .into(),
            )?;
        }
        Ok(())
    }

    /// In the child: the namespace, then each path bound onto itself read-only.
    pub fn apply(&self) -> std::io::Result<()> {
        self.enter()?;
        for e in &self.entries {
            let dir = openat2(
                libc::AT_FDCWD,
                &e.base,
                libc::O_PATH | libc::O_DIRECTORY,
                RESOLVE_NO_SYMLINKS,
            )?;
            if identity(dir)? != e.base_id {
                close(dir);
                return Err(std::io::Error::from_raw_os_error(libc::ESTALE));
            }
            let target = openat2(
                dir,
                &e.rel,
                libc::O_PATH | libc::O_NOFOLLOW,
                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
            );
            close(dir);
            let target = match target {
                Ok(fd) if is_symlink(fd) => {
                    close(fd);
                    return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
                }
                Ok(fd) => fd,
                // Removed since the parent looked: nothing left to protect there.
                Err(err) if err.raw_os_error() == Some(libc::ENOENT) => continue,
                Err(err) => return Err(err),
            };
            let done = bind(target, e.read_only);
            close(target);
            done?;
        }
        // SAFETY: chdir with a C string built before the fork.
        check(unsafe { libc::chdir(self.cwd.as_ptr()) }.into())?;
        Ok(())
    }
}

/// Binds what `target` names onto itself (read-only when asked): a detached copy of its mount
/// tree, made read-only, then moved over it. Either way it is a mount point from then on,
/// which cannot be renamed or removed.
fn bind(target: libc::c_int, read_only: bool) -> std::io::Result<()> {
    // SAFETY: system calls on descriptors this module holds; the attribute struct is on our
    // stack with the size given.
    unsafe {
        let tree = check(libc::syscall(
            libc::SYS_open_tree,
            target,
            c"".as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC as libc::c_uint
                | AT_RECURSIVE
                | libc::AT_EMPTY_PATH as libc::c_uint,
        ))? as libc::c_int;
        let attr =
            MountAttr { attr_set: MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
        let set = if read_only {
            check(libc::syscall(
                libc::SYS_mount_setattr,
                tree,
                c"".as_ptr(),
                libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ))
        } else {
            Ok(0)
        };
        let moved = set.and_then(|_| {
            check(libc::syscall(
                libc::SYS_move_mount,
                tree,
                c"".as_ptr(),
                target,
                c"".as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
            ))
        });
        libc::close(tree);
        moved.map(|_| ())
    }
}

/// Writes `bytes` to the file at `path` (a /proc control file).
unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: plain open/write/close on a valid C string and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(last_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if n < 0 { Err(last_error()) } else { Ok(()) }
    }
}

/// Whether `rel` exists beneath `dir` (no symlink on the way), creating the control folders
/// that may be missing: `.gemini`, `.toolbelt`, a state folder (one component), and `hooks` in a
/// repository's `.git`. `Ok(false)`: missing and not created (`.git/config` without `.git`), or
/// `.git` is a folder (only a `.git` file is protected whole).
/// `create`: a missing folder may be made (never a context file, which is a file).
fn ensure(dir: libc::c_int, rel: &Path, rel_c: &CString, create: bool) -> std::io::Result<bool> {
    match openat2(
        dir,
        rel_c,
        libc::O_PATH | libc::O_NOFOLLOW,
        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
    ) {
        Ok(fd) if is_symlink(fd) => {
            close(fd);
            return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
        }
        Ok(fd) => {
            close(fd);
            return Ok(true);
        }
        Err(e) if rel == Path::new(".git") && e.raw_os_error() == Some(libc::ENOENT) => {
            return Ok(false);
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
        Err(e) => return Err(e),
    }
    // `.git` is never made: an empty one would break git there.
    let creatable = create
        && rel != Path::new(".git")
        && matches!(rel.parent(), Some(p) if p.as_os_str().is_empty());
    if !creatable {
        return Ok(false);
    }
    let (parent, name) = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => {
            (Some(cstring_io(p)?), cstring_io(Path::new(rel.file_name().unwrap_or_default()))?)
        }
        None => (None, rel_c.clone()),
    };
    let at = match &parent {
        Some(p) => match openat2(
            dir,
            p,
            libc::O_PATH | libc::O_DIRECTORY,
            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
        ) {
            Ok(fd) => fd,
            // No `.git` folder (none, or a `gitdir:` file): nothing to create.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
                return Ok(false);
            }
            Err(e) => return Err(e),
        },
        None => dir,
    };
    // SAFETY: mkdirat on a descriptor we hold and a valid C string.
    let rc = unsafe { libc::mkdirat(at, name.as_ptr(), 0o700) };
    let err = (rc < 0).then(last_error);
    if parent.is_some() {
        close(at);
    }
    match err {
        None => Ok(true),
        Some(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(true),
        Some(e) => Err(e),
    }
}

fn file_type(fd: libc::c_int) -> libc::mode_t {
    // SAFETY: fstat writes into the zeroed stat on our stack.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) == 0 { st.st_mode & libc::S_IFMT } else { 0 }
    }
}

/// An `O_PATH | O_NOFOLLOW` open of a symlink gives the link itself: refused like a link on
/// the way.
fn is_symlink(fd: libc::c_int) -> bool {
    file_type(fd) == libc::S_IFLNK
}

fn cstring_io(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}
