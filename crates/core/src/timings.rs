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
    phases_of(&MARKS.locked())
}

/// The phases of `marks` (each charged the time since the mark before it).
fn phases_of(marks: &[(&'static str, Instant)]) -> Vec<(&'static str, Duration)> {
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
    Some(report_of(&phases()))
}

/// The report's text for `phases`.
fn report_of(phases: &[(&'static str, Duration)]) -> String {
    let total: Duration = phases.iter().map(|(_, d)| *d).sum();
    let mut s = String::from("toolbelt timings (from main; exec and loading come before):\n");
    for (name, d) in phases {
        s.push_str(&format!("  {name:<28} {:>8} µs\n", d.as_micros()));
    }
    s.push_str(&format!("  {:<28} {:>8} µs\n", "total in main", total.as_micros()));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On marks made here, not the process's: other tests in the same process (`cargo test`
    /// runs them on threads) mark phases of their own while timings are on, which made the
    /// first version of this test fail now and then.
    #[test]
    fn phases_are_charged_the_time_since_the_previous_mark_and_repeats_add_up() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let marks = [("start", t0), ("one", at(2)), ("two", at(3)), ("one", at(7))];
        let p = phases_of(&marks);
        assert_eq!(p, [("one", Duration::from_millis(6)), ("two", Duration::from_millis(1))]);
        let text = report_of(&p);
        assert!(text.contains("  one ") && text.contains("6000 µs"), "{text}");
        assert!(text.contains("total in main") && text.contains("7000 µs"), "{text}");
    }
}
