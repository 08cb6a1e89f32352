//! Memory given back after a large message (issue 47). The C library's allocator keeps what a
//! parse of many small values freed for the next allocation instead of returning it to the
//! system: after one 15 MiB request a server held 2.9 GB it no longer used. A parse of a large
//! text is noted here; a thread of its own then waits until no large text has come for a
//! moment (the message is answered and dropped by then) and asks the allocator to return its
//! free pages, once soon and once more a little later.

#![allow(unsafe_code)] // one call into the C library's allocator, below

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, Once};
use std::time::Duration;

/// A text at least this long counts as large.
pub const LARGE_TEXT: usize = 1 << 20;

/// A text of at least this many values counts as large (a megabyte of nested one-key objects
/// takes some 250 MB once parsed and copied into a call).
pub const LARGE_VALUES: usize = 10_000;

/// How long the trimmer waits after the last large text before it gives memory back, and
/// again after that.
const QUIET: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(1500)];

/// Large texts parsed so far.
static LARGE: AtomicU64 = AtomicU64::new(0);

/// Wakes the trimmer.
struct Signal {
    seen: Mutex<u64>,
    wake: Condvar,
}

static SIGNAL: Signal = Signal { seen: Mutex::new(0), wake: Condvar::new() };

/// The trimmer, started with the first large text.
static STARTED: Once = Once::new();

/// Notes a parse of a text of `bytes` bytes holding `values` values: a large one has the
/// memory it took given back soon after.
pub fn note_parsed(bytes: usize, values: usize) {
    if (bytes < LARGE_TEXT && values < LARGE_VALUES) || !trims() {
        return;
    }
    LARGE.fetch_add(1, Ordering::Relaxed);
    STARTED.call_once(|| {
        let started = std::thread::Builder::new().name("memory-trim".into()).spawn(trimmer);
        if let Err(e) = started {
            tracing::debug!("no memory trimmer: {e}");
        }
    });
    SIGNAL.wake.notify_one();
}

/// Whether this build can ask its allocator to give memory back.
const fn trims() -> bool {
    cfg!(all(target_os = "linux", target_env = "gnu"))
}

/// The trimmer: sleeps until a large text was noted, waits for quiet, gives memory back.
fn trimmer() {
    let signal = &SIGNAL;
    loop {
        let handled = {
            let mut seen = signal.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            while *seen == LARGE.load(Ordering::Relaxed) {
                seen = signal.wake.wait(seen).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            LARGE.load(Ordering::Relaxed)
        };
        for quiet in QUIET {
            // Quiet means no new large text for the whole wait.
            loop {
                let before = LARGE.load(Ordering::Relaxed);
                std::thread::sleep(quiet);
                if LARGE.load(Ordering::Relaxed) == before {
                    break;
                }
            }
            give_back();
        }
        // A large text noted while memory was given back is seen at once.
        *signal.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = handled;
    }
}

/// Asks the allocator to return its free pages to the system.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}
