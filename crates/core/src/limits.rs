//! Every request has a price ceiling (issue 35): the inputs whose cost is out of proportion to
//! their size, each with its ceiling and the error that names it. The numbers live here, so the
//! tools, the scheduler and the servers agree, and the docs list them from one place.

/// A compiled search pattern (grep_search's regular expression, its exclude pattern): the
/// program at most this big. `x{100000}{10}` (13 bytes) compiled to about 230 MiB before.
pub const PATTERN_PROGRAM_BYTES: usize = 8 << 20;

/// The lazy DFA cache one search thread keeps for a pattern.
pub const PATTERN_CACHE_BYTES: usize = 2 << 20;

/// The work one search may do on one line: the positions of its pattern (see
/// [`pattern_positions`]) times the line's bytes. A line is searched in one step no token can
/// stop, and a pattern whose lazy DFA overflows its cache falls back to tracking every
/// position at once, at some 3 to 11 ns a position and byte: `\w{150}\d\d\d` over a 32 MiB
/// line held its thread, and with it a costly turn, for minutes past the call's deadline
/// (issue 35, fifth attack), `a{50000}b` took 24 s over a 100 KB line. At this budget a line
/// costs a few seconds at most: that pattern searches lines of about 2 MiB, `a{50000}b` of
/// 7 KB, a pattern of under 11 positions any line a search holds.
pub const SEARCH_LINE_WORK: u64 = 360_000_000;

/// The shortest line limit a pattern gets, whatever its size (a pattern at the program ceiling
/// then costs some seconds a line).
pub const SEARCHABLE_LINE_FLOOR: usize = 4 << 10;

/// The longest line a search whose pattern has `positions` searches (between
/// [`SEARCHABLE_LINE_FLOOR`] and `most`).
pub fn searchable_line(positions: u64, most: usize) -> usize {
    let cap = SEARCH_LINE_WORK / positions.max(1);
    usize::try_from(cap).unwrap_or(usize::MAX).clamp(SEARCHABLE_LINE_FLOOR, most)
}

/// Costly calls (searches and reads over the workspace: grep_search, glob, read_many_files)
/// running at once in one process; the rest wait their turn, within their deadline.
pub const COSTLY_AT_ONCE: usize = 4;

/// Costly calls waiting for a turn; past this, a call is refused at once with a clear error
/// (a flood cannot grow memory without bound).
pub const COSTLY_WAITING: usize = 256;

/// Include and exclude patterns one read_many_files call may give (its defaults aside), and
/// `ignore` patterns one list_directory call may give.
pub const GLOB_PATTERNS: usize = 128;

/// Wildcards (`*`, `?`, `[`, `{`, `,`) in the glob patterns of one call together: each costs
/// about 1.3 KB compiled (a glob of 63,000 `*` took 84 MB, 16,000 `ignore` patterns of one
/// character 234 MB; 32 HTTP sessions at a time each reading with 2,048 wildcards in 128
/// patterns grew past 256 MiB; issue 35). A real call's patterns have a few dozen.
pub const GLOB_WILDCARDS: usize = 1_024;

/// Refuses the glob patterns of one call past [`GLOB_PATTERNS`] patterns or
/// [`GLOB_WILDCARDS`] wildcards together, saying which limit and what to do.
pub fn check_globs<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let (mut count, mut wild) = (0usize, 0usize);
    for p in patterns {
        count += 1;
        wild += p.bytes().filter(|b| matches!(b, b'*' | b'?' | b'[' | b'{' | b',')).count();
    }
    if count > GLOB_PATTERNS {
        return Err(format!(
            "Too many patterns: {count}; at most {GLOB_PATTERNS}. Use fewer, broader patterns (`src/**/*.rs`)."
        ));
    }
    if wild > GLOB_WILDCARDS {
        return Err(format!(
            "Pattern too complex: {wild} wildcards (*, ?, [, {{, ,) in all; the limit is {GLOB_WILDCARDS}. Use fewer, simpler patterns."
        ));
    }
    Ok(())
}

/// A file toolbelt keeps of one command's output (a shell log past the memory cap): at most this
/// much is written; the rest is counted and said (a command printing 1 GB left a 954 MB log).
pub const SPILL_FILE_BYTES: u64 = 64 << 20;

/// Everything toolbelt keeps under its state folder's `tmp/` (saved outputs, shell and
/// background logs): past this total the oldest files go first.
pub const KEPT_TOTAL_BYTES: u64 = 512 << 20;

/// An MCP tool's description as the model is shown it: longer ones are cut (with a notice).
pub const MCP_DESCRIPTION_CHARS: usize = 16 * 1024;

/// An MCP tool's input schema (as JSON): a larger one leaves the tool out, with the reason.
pub const MCP_SCHEMA_BYTES: usize = 256 * 1024;

/// Values (objects, arrays, leaves) in one MCP tool's input schema: a larger one leaves the
/// tool out. In memory a schema of small objects takes some 60 times its JSON (a 60 KB schema
/// of `{"a":0}` objects took 3.6 MB).
pub const MCP_SCHEMA_NODES: usize = 20_000;

/// Values in all of one server's input schemas together: past this the list is cut.
pub const MCP_SCHEMA_NODES_TOTAL: usize = 200_000;

/// MCP tools one server may bring: the rest are left out, with the reason.
pub const MCP_TOOLS_PER_SERVER: usize = 2_000;

/// JSON values (objects, arrays, leaves) in one message a client, an editor or a model sends
/// (an MCP or ACP request, a model's answer, a tool call's arguments, a hook's output), counted
/// before it is parsed (see `json_in`): past it the message is refused, saying so. A
/// parse takes at most [`PARSED_BYTES_PER_VALUE`] a value, and a tool call's arguments are held
/// about three times over while the call is built (the request, the checked arguments, the
/// tool's own), so a message within it stays near 150 MiB at worst (nested one-key objects);
/// a real one holds a few thousand (a `write_file` of any size is one value, a long todo list
/// a few hundred).
pub const MESSAGE_VALUES: usize = 100_000;

/// What a parsed JSON value takes at most at the parse's peak, its text's bytes aside (measured:
/// nested one-key objects about 300, a `0` in a long array 141, an empty object 70): the
/// multiple `json_in`'s budgets are chosen by, checked by a property test
/// (`crates/core/tests/json_cost.rs`).
pub const PARSED_BYTES_PER_VALUE: usize = 512;

/// How deep one JSON text from outside may nest (objects and arrays): serde_json's own
/// recursion limit (it refuses the 128th level), checked before the parse so that the refusal
/// names it.
pub const JSON_DEPTH: usize = 127;

/// `toolbelt call`'s ARGS (given as an argument or on standard input), at most: a longer text
/// is refused before it is read whole (60 MiB of tiny values took 16 GB, issue 47).
pub const CALL_ARGS_BYTES: usize = 48 << 20;

/// A settings, trusted-folders or credentials file read as JSON, at most (a longer one is
/// refused, saying so).
pub const SETTINGS_BYTES: usize = 8 << 20;

/// The size of one policy file (TOML) toolbelt reads: past it the file's rules stay out and
/// the session names the file and the size. TOML of small values swells in memory much like
/// JSON; a thousand real rules come to about 100 KB.
pub const POLICY_FILE_BYTES: usize = 1 << 20;

/// JSON values (objects, arrays, leaves) in one message from an MCP server, counted before it
/// is parsed: past this a tool list keeps its first tools, another answer becomes an error and
/// a request is dropped. Parsed, a message takes some 30 times its size (a 12 MB list of
/// 400,000 tiny tools took 350 MB); a real tool list or answer stays far below.
pub const MCP_MESSAGE_VALUES: usize = 250_000;

/// Tools taken from a discovery command, at most (the first ones; the rest are named in a
/// notice).
pub const DISCOVERED_TOOLS: usize = 2_000;

/// Pages of an MCP server's tool list read at most: a list that has not ended by then is cut
/// (a server can answer every page with one more cursor).
pub const MCP_TOOL_PAGES: usize = 1_000;

/// Rules of the `.gitignore` (and `.ignore`) files on the way to one path, together: past this,
/// the folder is not searched and the answer says why. 1000 nested folders of 200 rules each
/// cost 1.3 GB and the whole deadline (issue 35); real repositories stay far below.
pub const IGNORE_RULES_ON_PATH: usize = 4_000;

/// Rules of the `.gitignore` files a session keeps compiled (per folder, across calls).
pub const IGNORE_RULES_CACHED: usize = 20_000;

/// One ACP message from the editor (a JSON line): a longer one is dropped as it is read, never
/// held, and answered as a parse error. A 1.2 GB line with no end took the agent past 2 GB
/// (issue 35); an editor's prompt with a few images stays far below.
pub const ACP_MESSAGE_BYTES: usize = 32 << 20;

/// A stored ACP session that `session/load` reads, at most (a longer one is refused, saying
/// so): 26 MB of small parts took the agent past 2 GB (issue 35).
pub const ACP_SESSION_BYTES: u64 = 16 << 20;

/// JSON values (objects, arrays, leaves) in a stored ACP session that `session/load` parses:
/// a 7.9 MB file of 200,000 one-part messages took 413 MB (issue 35); a long real session
/// holds a few tens of thousands.
pub const ACP_SESSION_VALUES: usize = 200_000;

/// ACP sessions open at once in one agent: past it the one used longest ago is closed (it
/// stays stored; `session/load` opens it again).
pub const ACP_SESSIONS: usize = 32;

/// Roots an MCP client may name at once: more are refused as unusable.
pub const MCP_ROOTS: usize = 64;

/// The size a pattern would compile to, estimated from its syntax (before anything is
/// compiled): each literal byte counts once, a class once per range it holds (Unicode's `\w`
/// is some 770 ranges: `\w{150}` compiled to 7 MiB while a count of one per class said 38 KiB,
/// issue 35), each repetition multiplies what it repeats by its bound. Case-insensitive
/// patterns are counted with their case variants. `None`: it does not parse (the compile says
/// why).
pub fn pattern_units(pattern: &str, fixed: bool) -> Option<u64> {
    pattern_units_with(pattern, fixed, false)
}

/// [`pattern_units`] for a pattern matched without regard to case.
pub fn pattern_units_with(pattern: &str, fixed: bool, case_insensitive: bool) -> Option<u64> {
    if fixed {
        let n = pattern.len() as u64;
        return Some(if case_insensitive { n * 2 } else { n });
    }
    measure(pattern, case_insensitive, |ranges| (ranges as u64).max(1))
}

/// The positions of a pattern: what a search falling back from its lazy DFA tracks at once,
/// at worst. Counted as [`pattern_units`] but a class as one position whatever its ranges (a
/// case-insensitive letter is one class). `None`: it does not parse.
pub fn pattern_positions(pattern: &str, fixed: bool, case_insensitive: bool) -> Option<u64> {
    if fixed {
        return Some(pattern.len() as u64);
    }
    measure(pattern, case_insensitive, |_| 1)
}

/// A pattern's syntax measured: each literal byte 1, a class as `class` says from its ranges,
/// each repetition multiplying what it repeats by its bound.
fn measure(pattern: &str, case_insensitive: bool, class: fn(usize) -> u64) -> Option<u64> {
    use regex_syntax::hir::{Class, Hir, HirKind};
    fn size(h: &Hir, class: fn(usize) -> u64) -> u64 {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => 0,
            HirKind::Literal(l) => l.0.len() as u64,
            HirKind::Class(Class::Unicode(c)) => class(c.ranges().len()),
            HirKind::Class(Class::Bytes(c)) => class(c.ranges().len()),
            HirKind::Capture(c) => size(&c.sub, class),
            HirKind::Repetition(r) => {
                let n = u64::from(r.max.unwrap_or(r.min).max(r.min).max(1));
                size(&r.sub, class).saturating_mul(n)
            }
            HirKind::Concat(v) | HirKind::Alternation(v) => {
                v.iter().fold(0u64, |a, h| a.saturating_add(size(h, class)))
            }
        }
    }
    regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .build()
        .parse(pattern)
        .ok()
        .map(|h| size(&h, class))
}

/// About this many bytes of compiled program per unit of [`pattern_units`] (measured on the
/// regex crate's NFA for repeated literals and classes).
const BYTES_PER_UNIT: u64 = 64;

/// What a pattern would take compiled, estimated ([`pattern_units_with`]); `None` when it does
/// not parse.
pub fn pattern_bytes(pattern: &str, fixed: bool, case_insensitive: bool) -> Option<u64> {
    pattern_units_with(pattern, fixed, case_insensitive).map(|u| u.saturating_mul(BYTES_PER_UNIT))
}

/// The patterns of the policy files (`argsPattern`, `commandRegex`, `commandPrefix`) together:
/// at most this much compiled. 300 rules of `\w{100}N` in a repository's policy folder took
/// 1.76 GB (issue 35).
pub const POLICY_PATTERNS_BYTES: u64 = 32 << 20;

/// Refuses a pattern that would compile past [`PATTERN_PROGRAM_BYTES`], by its estimated size,
/// with what it would need. About 64 bytes of program per unit (measured on the regex crate's
/// NFA for repeated literals and classes).
pub fn check_pattern(pattern: &str, fixed: bool) -> Result<(), String> {
    check_pattern_with(pattern, fixed, false)
}

/// [`check_pattern`] for a pattern matched with or without regard to case.
pub fn check_pattern_with(
    pattern: &str,
    fixed: bool,
    case_insensitive: bool,
) -> Result<(), String> {
    let Some(need) = pattern_bytes(pattern, fixed, case_insensitive) else { return Ok(()) };
    if need > PATTERN_PROGRAM_BYTES as u64 {
        return Err(too_large(Some(need)));
    }
    Ok(())
}

/// The message for a pattern past the ceiling (`need`: what it would take, when known).
pub fn too_large(need: Option<u64>) -> String {
    let limit = PATTERN_PROGRAM_BYTES >> 20;
    match need {
        Some(n) => format!(
            "Pattern too large: compiled it would need about {} MiB; the limit is {limit} MiB. Use smaller repetition counts, or fixed_strings for a literal.",
            n.div_ceil(1 << 20)
        ),
        None => format!(
            "Pattern too large: compiled it would need more than {limit} MiB, the limit. Use smaller repetition counts, or fixed_strings for a literal."
        ),
    }
}

/// A turn to run a costly call: held while it runs.
pub type CostlyTurn = tokio::sync::SemaphorePermit<'static>;

/// Waits for `n` turns among the costly calls of this process ([`COSTLY_AT_ONCE`] at once;
/// most calls take one, an edit of a large file, which holds the file several times over while
/// it works, three); `Err` at once, with what to say, when [`COSTLY_WAITING`] calls are already
/// waiting.
pub async fn costly_turn(n: u32) -> Result<CostlyTurn, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static TURNS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(COSTLY_AT_ONCE);
    static WAITING: AtomicUsize = AtomicUsize::new(0);
    struct Waiting;
    impl Drop for Waiting {
        fn drop(&mut self) {
            WAITING.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let n = n.clamp(1, COSTLY_AT_ONCE as u32);
    if let Ok(turn) = TURNS.try_acquire_many(n) {
        return Ok(turn);
    }

    if WAITING.fetch_add(1, Ordering::SeqCst) >= COSTLY_WAITING {
        WAITING.fetch_sub(1, Ordering::SeqCst);
        return Err(format!(
            "toolbelt is busy: {COSTLY_AT_ONCE} searches or multi-file reads are running and {COSTLY_WAITING} more are waiting; try again when some have finished"
        ));
    }
    let _waiting = Waiting;
    TURNS.acquire_many(n).await.map_err(|e| e.to_string())
}

/// Bytes of a call's arguments a policy `argsPattern` that needs the backtracking engine
/// (look-around, back-references) is run on, at most; past them the rule fails closed (a deny
/// or ask rule matches, an allow rule does not). Its time grows with the square of the text:
/// twenty such rules from an untrusted repository's policy folder held a 60 KB write for 181 s
/// (issue 35). Patterns the linear engine takes run on any length.
pub const BACKTRACKING_TEXT_BYTES: usize = 16 << 10;

/// Function calls one model answer runs (`run`, `acp`); the rest are answered with an error
/// saying so, not run.
pub const CALLS_PER_ANSWER: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costly_patterns_search_shorter_lines() {
        let most = 32 << 20;
        let positions = |p: &str| pattern_positions(p, false, true).unwrap();
        assert_eq!(searchable_line(positions("return"), most), most);
        let cap = searchable_line(positions(r"\w{150}\d\d\d"), most);
        assert!((1 << 20..4 << 20).contains(&cap), "{cap}");
        // Review of session 9: 50,000 positions of one range each were priced at 50,000 units
        // and searched 5.5 MB lines (a 100 KB line took 24 s); they search 7 KB lines now.
        let cap = searchable_line(positions("a{50000}b"), most);
        assert!((4 << 10..8 << 10).contains(&cap), "{cap}");
        assert_eq!(searchable_line(u64::MAX, most), SEARCHABLE_LINE_FLOOR);
    }

    /// Issue 35 (fifth attack): 16,334 `ignore` patterns of `*` in 64 KB took one
    /// list_directory call to 234 MB; a glob of 63,000 `*` took 84 MB.
    #[test]
    fn glob_patterns_are_bounded_by_count_and_wildcards() {
        assert!(check_globs(["src/**/*.rs", "*.{ts,tsx}", "a?c"]).is_ok());
        let many = vec!["*"; GLOB_PATTERNS + 1];
        let e = check_globs(many.iter().copied()).unwrap_err();
        assert!(e.contains("Too many patterns: 129; at most 128"), "{e}");
        let stars = "*".repeat(63_000);
        let e = check_globs([stars.as_str()]).unwrap_err();
        assert!(e.contains("63000 wildcards") && e.contains("the limit is 1024"), "{e}");
        let braces = "{a,b}".repeat(600);
        assert!(check_globs([braces.as_str()]).is_err());
        // Literal paths cost nothing: 128 long file names pass.
        let long = "src/some/deep/folder/with/a_rather_long_file_name.rs".to_string();
        assert!(check_globs(vec![long.as_str(); 128]).is_ok());
    }

    /// Issue 35, finding 1: costly calls are queued, not refused, up to a bounded queue; past
    /// it the next is refused at once, and everyone gets a turn as turns come back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn costly_calls_take_turns_in_a_bounded_queue() {
        let mut held = Vec::new();
        for _ in 0..COSTLY_AT_ONCE {
            held.push(costly_turn(1).await.unwrap());
        }

        let waiters: Vec<_> = (0..COSTLY_WAITING)
            .map(|_| tokio::spawn(async { costly_turn(1).await.map(drop) }))
            .collect();
        // Let every waiter queue up.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;

        let refused = costly_turn(1).await.expect_err("the queue is full");
        assert!(refused.contains("busy"), "{refused}");
        drop(held);
        for w in waiters {
            assert!(w.await.unwrap().is_ok());
        }
        assert!(costly_turn(1).await.is_ok());
    }

    #[test]
    fn the_units_of_a_pattern_follow_its_repetitions() {
        assert_eq!(pattern_units("abc", false), Some(3));
        assert_eq!(pattern_units("x{100000}{10}", false), Some(1_000_000));
        assert_eq!(pattern_units("(a{1000}){1000}", false), Some(1_000_000));
        assert_eq!(pattern_units("a{5,}", false), Some(5));
        assert!(check_pattern("x{100000}{10}", false).unwrap_err().contains("Pattern too large"));
        assert!(check_pattern("fn main", false).is_ok());
        assert!(check_pattern("[a-z]+_[0-9]{1,4}", false).is_ok());
        // Issue 35, second attack: a class counts its ranges (`\w` is hundreds), and case
        // folding counts too.
        let w = pattern_units(r"\w", false).unwrap();
        assert!(w > 500, "{w}");
        assert_eq!(pattern_units(r"\w{150}", false), Some(150 * w));
        assert!(check_pattern(r"\w{200}", false).unwrap_err().contains("limit is 8 MiB"));
        assert!(
            pattern_units_with("[a-z]", false, true).unwrap()
                > pattern_units("[a-z]", false).unwrap()
        );
    }
}
