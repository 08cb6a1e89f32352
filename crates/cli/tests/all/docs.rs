//! Issue 49: every command the README and `docs/` show runs as written. Each ```` ```sh ````
//! block is run with bash (`set -e`, `pipefail`), in a copy of the repository's files made a
//! git repository (as a fresh clone is), with a fresh home folder, an environment holding only
//! `PATH`, `HOME` and `LANG`, and stdin from `/dev/null`. The word after `sh` says what must
//! happen:
//!
//! - nothing: every line succeeds;
//! - `fails`: the block exits non-zero (an example of a refusal);
//! - `serves`: a server, still running two seconds after it started (then stopped);
//! - `not-run: WHY`: shown only, with the reason (a model key, a package not yet published,
//!   the test suite itself); the reason must be given.
//!
//! `toolbelt` is the binary these tests were built with, and `cargo run --release -- ARGS`
//! runs it too: building a release inside the tests would double CI's time, and CI checks the
//! README's build command itself. Blocks in another language (`json`, `toml`, `bash` scripts,
//! plain output) are not commands.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A fenced block of shell commands.
struct Block {
    file: PathBuf,
    line: usize,
    mode: String,
    text: String,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The documents a newcomer reads.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

fn sh_blocks(file: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some((i + 1, info.trim().to_string(), String::new()));
                }
            }
            Some((start, info, body)) => {
                if line.trim_start() == "```" {
                    let (lang, mode) = info.split_once(' ').unwrap_or((info.as_str(), ""));
                    if lang == "sh" {
                        out.push(Block {
                            file: file.to_path_buf(),
                            line: *start,
                            mode: mode.trim().to_string(),
                            text: std::mem::take(body),
                        });
                    }
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "{}: a fenced block is never closed", file.display());
    out
}

/// The repository's tracked files copied into `to`, which is then made a git repository.
fn copy_repository(root: &Path, to: &Path) {
    let listed = Command::new("git").args(["ls-files", "-z"]).current_dir(root).output().unwrap();
    assert!(listed.status.success(), "git ls-files failed");
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let rel = Path::new(std::str::from_utf8(name).unwrap());
        let from = root.join(rel);
        if !from.is_file() {
            continue;
        }
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&from, &dest).unwrap();
    }
    let init = Command::new("git").args(["init", "-q"]).current_dir(to).status().unwrap();
    assert!(init.success());
}

/// What the block's commands are run with: `cargo run --release --` runs the built binary;
/// any other cargo command is refused, so a block that needs one must say `not-run`.
const PRELUDE: &str = r#"set -e -o pipefail
cargo() {
  if [ "$1" = run ] && [ "$2" = --release ] && [ "$3" = -- ]; then shift 3; toolbelt "$@"
  else echo "docs test: \`cargo $*\` is not run here; mark the block not-run" >&2; return 97; fi
}
"#;

struct Outcome {
    code: Option<i32>,
    output: String,
}

fn run_block(block: &Block, dir: &Path, home: &Path, serves: bool) -> Outcome {
    let bin = Path::new(env!("CARGO_BIN_EXE_toolbelt")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("{PRELUDE}{}", block.text))
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .stdin(if serves { Stdio::piped() } else { Stdio::null() })
        .stdout(log.reopen().unwrap())
        .stderr(log.reopen().unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let limit = if serves { Duration::from_secs(2) } else { Duration::from_secs(120) };
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > limit {
            // The whole group: a server and whatever the block started.
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    Outcome { code, output }
}

use std::os::unix::process::CommandExt as _;

#[test]
fn every_documented_command_runs_as_written() {
    let root = repo_root();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut shown_only = Vec::new();
    for doc in documents(&root) {
        let blocks = sh_blocks(&doc);
        if blocks.is_empty() {
            continue;
        }
        // Each document in a fresh copy and a fresh home, its blocks in order.
        let work = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        copy_repository(&root, work.path());
        for block in blocks {
            let at = format!(
                "{}:{}",
                block.file.strip_prefix(&root).unwrap_or(&block.file).display(),
                block.line
            );
            if let Some(why) = block.mode.strip_prefix("not-run:") {
                assert!(!why.trim().is_empty(), "{at}: `not-run:` needs a reason");
                shown_only.push(format!("{at}: {}", why.trim()));
                continue;
            }
            let serves = block.mode == "serves";
            assert!(
                matches!(block.mode.as_str(), "" | "fails" | "serves"),
                "{at}: unknown mark `{}` (none, `fails`, `serves` or `not-run: WHY`)",
                block.mode
            );
            ran += 1;
            let o = run_block(&block, work.path(), home.path(), serves);
            let ok = match block.mode.as_str() {
                "fails" => o.code.is_some_and(|c| c != 0),
                "serves" => o.code.is_none() || o.code == Some(0),
                _ => o.code == Some(0),
            };
            if !ok {
                let shown: String = o.output.chars().take(2000).collect();
                failures.push(format!(
                    "{at} ({}): exit {:?}\n{}\n--- output ---\n{shown}",
                    if block.mode.is_empty() { "must succeed" } else { &block.mode },
                    o.code,
                    block.text
                ));
            }
        }
    }
    eprintln!("{ran} blocks run; shown only:\n  {}", shown_only.join("\n  "));
    assert!(ran >= 8, "only {ran} command blocks were found");
    assert!(
        failures.is_empty(),
        "{} block(s) did not do what they show:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
