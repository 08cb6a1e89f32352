//! Where one process spends its time: phases marked as they end, reported on stderr when
//! `TOOLBELT_TIMINGS` is set (`toolbelt call ...` prints one line per phase at exit). Off, a mark
//! is one load of a flag; nothing is recorded and nothing printed.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::sync::LockExt;

const UNKNOWN: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);
static MARKS: Mutex<Vec<(&'static str, Instant)>> = Mutex::new(Vec::new());

/// Whether phases are recorded (`TOOLBELT_TIMINGS` set to anything but empty or `0`).
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => {
            let on =
                std::env::var_os("TOOLBELT_TIMINGS").is_some_and(|v| !v.is_empty() && v != "0");
            STATE.store(if on { ON } else { OFF }, Ordering::Relaxed);
            on
        }
    }
}

/// Marks the start of the measured span (the first thing `main` does).
pub fn start() {
    if enabled() {
        let mut marks = MARKS.locked();
        marks.clear();
        marks.push(("start", Instant::now()));
    }
}

/// Marks the end of `phase`: the time since the previous mark is charged to it.
pub fn mark(phase: &'static str) {
    if enabled() {
        MARKS.locked().push((phase, Instant::now()));
    }
}

/// The phases so far with their durations, in order (a phase marked twice is summed).
pub fn phases() -> Vec<(&'static str, Duration)> {
    let marks = MARKS.locked();
    let mut out: Vec<(&'static str, Duration)> = Vec::new();
    for pair in marks.windows(2) {
        let spent = pair[1].1.duration_since(pair[0].1);
        match out.iter_mut().find(|(name, _)| *name == pair[1].0) {
            Some((_, total)) => *total += spent,
            None => out.push((pair[1].0, spent)),
        }
    }
    out
}

/// The report printed at exit: one `phase: N µs` line per phase and the total, or `None` when
/// timings are off.
pub fn report() -> Option<String> {
    if !enabled() {
        return None;
    }
    let phases = phases();
    let total: Duration = phases.iter().map(|(_, d)| *d).sum();
    let mut s = String::from("toolbelt timings (from main; exec and loading come before):\n");
    for (name, d) in &phases {
        s.push_str(&format!("  {name:<28} {:>8} µs\n", d.as_micros()));
    }
    s.push_str(&format!("  {:<28} {:>8} µs\n", "total in main", total.as_micros()));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_charged_the_time_since_the_previous_mark_and_repeats_add_up() {
        STATE.store(ON, Ordering::Relaxed);
        start();
        std::thread::sleep(Duration::from_millis(2));
        mark("one");
        mark("two");
        std::thread::sleep(Duration::from_millis(2));
        mark("one");
        let p = phases();
        assert_eq!(p.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["one", "two"]);
        assert!(p[0].1 >= Duration::from_millis(4), "{p:?}");
        assert!(p[1].1 < Duration::from_millis(2), "{p:?}");
        let text = report().unwrap_or_default();
        assert!(text.contains("  one ") && text.contains("total in main"), "{text}");
        STATE.store(OFF, Ordering::Relaxed);
        assert!(report().is_none());
    }
}
