//! What a command could read of toolbelt through `/proc`. A command runs under a reaper that is
//! a fork of toolbelt and never execs, so the reaper's `/proc/PID/environ` (the start-up
//! environment block, wherever the variables were moved since) showed toolbelt's own: a shell
//! command walking its ancestors read the API key its own environment was cleaned of (issue 33).
//!
//! [`harden_process`], called first thing in `main`:
//!
//! - makes toolbelt not dumpable (`PR_SET_DUMPABLE` 0, kept by the reaper's fork and reset at
//!   every exec): its `/proc/PID/environ`, `mem` and `fd` become root's, so a command running as
//!   the same user cannot read them;
//! - moves every variable a child would not be given (secrets by name or by shape, toolbelt's
//!   own credentials) out of the start-up environment block and zeroes the block's copy, so
//!   that not even root reads them there. toolbelt itself still reads them
//!   (`std::env::var`), from the copy the C library keeps.

#![allow(unsafe_code)]

use std::ffi::{CStr, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// Makes this process's secrets unreadable to its children through `/proc` (see the module
/// docs). Call it before any thread starts: it changes the environment.
pub fn harden_process() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_DUMPABLE) only changes this process's dumpable flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    #[cfg(target_os = "linux")]
    scrub_environment_block(&|k, v| super::env::held_back(k, v));
}

/// The start-up environment block (`env_start`, `env_end` in `/proc/self/stat`).
#[cfg(target_os = "linux")]
fn environment_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // env_start and env_end are fields 50 and 51 (1-based), so 47 and 48 here.
    let start = fields.get(47)?.trim().parse().ok()?;
    let end = fields.get(48)?.trim().parse().ok()?;
    Some((start, end))
}

/// Moves the variables `hide` picks out of the start-up block into the C library's own copy,
/// and zeroes them in the block.
#[cfg(target_os = "linux")]
fn scrub_environment_block(hide: &dyn Fn(&str, &str) -> bool) {
    unsafe extern "C" {
        static mut environ: *const *const libc::c_char;
    }
    let mut found: Vec<(*mut u8, usize, OsString, OsString)> = Vec::new();
    // SAFETY: `environ` is the C library's NUL-terminated array of NUL-terminated strings;
    // nothing else runs (no thread has started) while it is read.
    unsafe {
        let mut p = environ;
        while !p.is_null() && !(*p).is_null() {
            let entry = CStr::from_ptr(*p);
            let bytes = entry.to_bytes();
            let addr = (*p) as usize;
            p = p.add(1);
            let Some(eq) = bytes.iter().position(|b| *b == b'=') else { continue };
            let (k, v) = (&bytes[..eq], &bytes[eq + 1..]);
            if hide(&String::from_utf8_lossy(k), &String::from_utf8_lossy(v)) {
                found.push((
                    addr as *mut u8,
                    bytes.len(),
                    OsString::from_vec(k.to_vec()),
                    OsString::from_vec(v.to_vec()),
                ));
            }
        }
    }
    // Where the start-up block lies is read only when there is something to hide (reading
    // `/proc/self/stat` was a fiftieth of a small call's start-up; issue 37). Only strings of
    // that block are zeroed: one the C library allocated since is its own.
    if found.is_empty() {
        return;
    }
    let Some((start, end)) = environment_block() else { return };
    found.retain(|(addr, ..)| (start..end).contains(&(*addr as usize)));
    for (addr, len, key, value) in found {
        if key.is_empty() || key.as_bytes().contains(&0) || value.as_bytes().contains(&0) {
            continue;
        }
        // SAFETY: no other thread exists yet (the caller's contract), so nothing reads the
        // environment while it changes; `addr..addr+len` is the old string in the start-up
        // block, which the C library no longer points to once the variable is set anew.
        unsafe {
            std::env::set_var(OsStr::from_bytes(key.as_bytes()), &value);
            std::ptr::write_bytes(addr, 0, len);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_start_up_block_is_found() {
        let (start, end) = environment_block().unwrap();
        assert!(start < end, "{start} {end}");
    }
}
