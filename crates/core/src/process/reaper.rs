//! The reaper every command runs under. Between fork and exec the child becomes a session
//! leader and a child subreaper (`PR_SET_CHILD_SUBREAPER`), then forks the command itself and
//! stays behind: whatever the command starts, however it detaches (`setsid -f`, a double fork,
//! `( cmd & )`), ends up the reaper's descendant, so it can be found and stopped. The reaper
//! reports the command's exit on a pipe, lives while any descendant does, and
//!
//! - on SIGUSR1 (toolbelt stopping the command) kills every descendant and exits;
//! - on SIGUSR2 (`PR_SET_PDEATHSIG`: toolbelt died, even by SIGKILL) does the same, unless
//!   SIGWINCH told it beforehand to leave the tree running (`--keep-background`);
//! - ignores SIGTERM, SIGINT and SIGHUP (sent to the group to stop the command), so that it
//!   outlives the command and can collect what it leaves behind.
//!
//! Everything here runs in a forked child of a multi-threaded process: only system calls, no
//! allocation, no locks.

#![allow(unsafe_code)]

use std::os::fd::RawFd;

/// Signal that tells a reaper to kill everything and exit.
pub const STOP_SIGNAL: i32 = libc::SIGUSR1;
/// The reaper's parent-death signal.
const PARENT_DIED: i32 = libc::SIGUSR2;
/// Signal that tells a reaper to leave the tree running when toolbelt exits
/// (`--keep-background`). The reaper has no terminal that could be resized.
pub const DETACH_SIGNAL: i32 = libc::SIGWINCH;

fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 { Err(last_error()) } else { Ok(()) }
}

/// The signals the reaper waits for or holds back.
fn reaper_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset only write the set on our stack.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [
            libc::SIGCHLD,
            STOP_SIGNAL,
            PARENT_DIED,
            DETACH_SIGNAL,
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
        ] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// What runs in the forked child: becomes the reaper and forks the command, which returns
/// `Ok` (to go on to exec) after `in_command` ran. The reaper itself never returns.
///
/// `status_fd` is the write end of the exit pipe; `parent` is toolbelt's pid.
pub fn fork_command(
    status_fd: RawFd,
    parent: libc::pid_t,
    terminal: bool,
    in_command: &mut dyn FnMut() -> std::io::Result<()>,
) -> std::io::Result<()> {
    // SAFETY: each call below is a plain system call on values owned by this process.
    unsafe {
        check(libc::setsid())?;
        if terminal {
            // stdin is the terminal: make it the session's controlling terminal.
            check(libc::ioctl(0, libc::TIOCSCTTY, 0))?;
        }
        check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
        let held = reaper_signals();
        check(libc::sigprocmask(libc::SIG_BLOCK, &held, std::ptr::null_mut()))?;
        let reaper = libc::getpid();
        let command = libc::fork();
        if command < 0 {
            return Err(last_error());
        }
        if command == 0 {
            let empty: libc::sigset_t = std::mem::zeroed();
            check(libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()))?;
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            if libc::getppid() != reaper {
                libc::_exit(127);
            }
            libc::close(status_fd);
            // Nothing toolbelt's own parent left open reaches the command (an inherited file or
            // socket would carry writes past the sandbox): every descriptor above stderr is
            // closed at exec. Close-on-exec, not closed now: the spawn-error pipe must work.
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC);
            return in_command();
        }
        reaper_main(command, status_fd, parent, &held)
    }
}

/// The reaper: close everything but the exit pipe, then reap until no descendant is left.
unsafe fn reaper_main(
    command: libc::pid_t,
    status_fd: RawFd,
    parent: libc::pid_t,
    held: &libc::sigset_t,
) -> ! {
    // SAFETY: plain system calls; `held` is a valid signal set.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"toolbelt-reaper".as_ptr(), 0, 0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_DIED, 0, 0, 0);
        if libc::getppid() != parent {
            stop_all();
        }
        // The command's pipes and toolbelt's spawn-error pipe must close when the command's
        // copies do; the reaper keeps only the exit pipe.
        let status_fd = if status_fd == 3 { 3 } else { libc::dup2(status_fd, 3) };
        if status_fd == 3 {
            libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32);
            for fd in 0..3 {
                libc::close(fd);
            }
        }
        let mut reported = false;
        let mut detached = false;
        loop {
            loop {
                let mut status: libc::c_int = 0;
                let pid = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if pid == command && !reported {
                    let bytes = status.to_ne_bytes();
                    libc::write(status_fd, bytes.as_ptr().cast(), bytes.len());
                    libc::close(status_fd);
                    reported = true;
                } else if pid == 0 {
                    break;
                } else if pid < 0 {
                    if *libc::__errno_location() == libc::EINTR {
                        continue;
                    }
                    libc::_exit(0);
                }
            }
            let mut sig: libc::c_int = 0;
            if libc::sigwait(held, &mut sig) != 0 {
                continue;
            }
            // Lower-numbered signals come first: a detach sent before toolbelt exited may
            // still be pending behind the parent-death signal.
            let mut pending: libc::sigset_t = std::mem::zeroed();
            libc::sigpending(&mut pending);
            if sig == DETACH_SIGNAL || libc::sigismember(&pending, DETACH_SIGNAL) == 1 {
                detached = true;
            }
            if sig == STOP_SIGNAL || (sig == PARENT_DIED && !detached && libc::getppid() != parent)
            {
                stop_all();
            }
        }
    }
}

/// Kills every descendant (a killed child's children become the reaper's, and are found on
/// the next round), reaps them, and exits.
unsafe fn stop_all() -> ! {
    // SAFETY: plain system calls on a buffer on our stack.
    unsafe {
        let path = c"/proc/thread-self/children";
        for _ in 0..100_000 {
            let mut buf = [0u8; 4096];
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            let n = if fd >= 0 { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } else { -1 };
            if fd >= 0 {
                libc::close(fd);
            }
            let mut any = false;
            let mut pid: libc::pid_t = 0;
            let len = usize::try_from(n).unwrap_or(0);
            for &b in buf.iter().take(len).chain(std::iter::once(&b' ')) {
                if b.is_ascii_digit() {
                    pid = pid.saturating_mul(10).saturating_add(libc::pid_t::from(b - b'0'));
                } else if pid > 0 {
                    libc::kill(pid, libc::SIGKILL);
                    any = true;
                    pid = 0;
                }
            }
            let mut status = 0;
            if !any {
                // Nothing listed (or no /proc): reap what is left and go.
                while libc::waitpid(-1, &mut status, 0) > 0 {}
                libc::_exit(0);
            }
            // Reap one: its children are ours by the time it can be reaped.
            if libc::waitpid(-1, &mut status, 0) < 0 {
                libc::_exit(0);
            }
        }
        libc::_exit(0)
    }
}
