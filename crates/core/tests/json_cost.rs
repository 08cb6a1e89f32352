//! Issue 47: what a parse of an accepted message costs. A JSON message of tiny values cost
//! serde_json 100-700 bytes a value, so one just under a door's byte limit took gigabytes; the
//! doors now measure a text before parsing it (`json_in`), and this checks the multiple the
//! budgets are chosen by: no text the budget accepts takes more than
//! `PARSED_BYTES_PER_VALUE` a value, plus its own bytes, at its peak.
//!
//! A test binary of its own: it counts every allocation of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde_json::Value;
use toolbelt_core::json_in::{self, JsonBudget, JsonError};
use toolbelt_core::limits::{MESSAGE_VALUES, PARSED_BYTES_PER_VALUE};

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only sizes are counted.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: as the caller's contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Serialises the measurements (the test threads share the counters).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The most the parse of `text` held at once, above what was held before it.
fn parse_peak(text: &[u8], budget: JsonBudget) -> (Result<Value, JsonError>, usize) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let parsed = json_in::parse::<Value>(text, budget);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    (parsed, peak)
}

/// One tiny value of each costly kind, and how it repeats.
const UNITS: &[&str] = &[
    "0",
    "\"\"",
    "{}",
    "[]",
    "{\"a\":0}",
    "[0]",
    "{\"a\":{\"a\":{\"a\":0}}}",
    "true",
    "{\"\":\"\"}",
];

/// A message of `unit` repeated until it holds about `values` values, nested `depth` arrays
/// deep and wrapped like a request's arguments.
fn message(unit: &str, values: usize, depth: usize) -> String {
    let per = json_in::count_values(unit.as_bytes()).max(1);
    let n = (values.saturating_sub(depth + 8) / per).max(1);
    let mut list = String::with_capacity((unit.len() + 1) * n);
    for i in 0..n {
        if i > 0 {
            list.push(',');
        }
        list.push_str(unit);
    }
    let nested = format!("{}{list}{}", "[".repeat(depth), "]".repeat(depth));
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x","arguments":{{"a":[{nested}]}}}}}}"#
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every message the budget accepts costs at most the stated multiple at its peak; a
    /// message over it is refused before anything is built.
    #[test]
    fn no_accepted_message_costs_more_than_the_stated_multiple(
        unit in proptest::sample::select(UNITS),
        fill in 0.5f64..1.2,
        depth in 0usize..100,
    ) {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let text = message(unit, (MESSAGE_VALUES as f64 * fill) as usize, depth);
        let budget = JsonBudget::message(64 << 20);
        let (parsed, peak) = parse_peak(text.as_bytes(), budget);
        let values = json_in::count_values(text.as_bytes());
        match parsed {
            Ok(_) => {
                let cap = values * PARSED_BYTES_PER_VALUE + text.len();
                prop_assert!(peak <= cap, "{unit} x{values}: {peak} bytes > {cap}");
            }
            Err(JsonError::Refused(_)) => {
                prop_assert!(values > MESSAGE_VALUES);
                prop_assert!(peak < 4096, "a refusal built {peak} bytes");
            }
            Err(e) => prop_assert!(false, "{e}"),
        }
    }
}

/// The message of issue 47 (MCP over stdio: one 15 MiB `tools/call` of `0,` took 4.5 GB) is
/// refused at once, naming the limit, having built nothing.
#[test]
fn the_issues_fifteen_mib_message_is_refused_before_it_is_parsed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let text = message("0", 15 << 19, 0);
    assert!(text.len() > 15 << 20);
    let (parsed, peak) = parse_peak(text.as_bytes(), JsonBudget::message(16 << 20));
    let Err(JsonError::Refused(why)) = parsed else { panic!("parsed") };
    assert!(why.to_string().contains("more than 100000 JSON values"), "{why}");
    assert!(peak < 4096, "{peak}");
}
