//! The commands known to be safe to run without asking (upstream's lists,
//! `sandbox/utils/commandSafety.ts`, made stricter): read-only, every path they read checked
//! from the folder they run in, through the file layer's rules where the caller gives them
//! ([`Place::files`]: outside the workspace, sensitive files, hard links to either). One table,
//! a row per command with why it is safe ([`TABLE`]); `every_row_has_a_case` has cases per row.
//!
//! The table is a heuristic; what it allows also runs confined (a read-only, no-network
//! sandbox) wherever the kernel has Landlock, so a gap in it cannot write, reach the network or
//! read the home folder. Where commands cannot be confined ([`Place::confined`] false), the
//! rows whose safety leans on that (`git`, which runs what a repository configures) ask.

use std::path::{Path, PathBuf};

pub use super::place::{Place, ReadJudge, normalized, path_escapes, path_inside};
use super::place::{cwd_inside, normalize};

/// A row of the table: a command, why running it unasked is safe, and the check of its words.
pub struct SafeRow {
    /// The command's name.
    pub name: &'static str,
    /// Why it is safe, in words.
    pub why: &'static str,
    check: fn(&[String], Place<'_>) -> bool,
}

/// The known-safe commands.
pub const TABLE: &[SafeRow] = &[
    SafeRow {
        name: "cat",
        why: "prints the files it names; each is read only where read_file may read",
        check: readers,
    },
    SafeRow {
        name: "head",
        why: "prints the start of the files it names, checked as cat's",
        check: readers,
    },
    SafeRow {
        name: "tail",
        why: "prints the end of the files it names, checked as cat's",
        check: readers,
    },
    SafeRow {
        name: "tac",
        why: "prints the files it names backwards, checked as cat's",
        check: readers,
    },
    SafeRow {
        name: "nl",
        why: "numbers the lines of the files it names, checked as cat's",
        check: readers,
    },
    SafeRow { name: "wc", why: "counts the files it names, checked as cat's", check: readers },
    SafeRow {
        name: "cut",
        why: "prints columns of the files it names, checked as cat's",
        check: readers,
    },
    SafeRow { name: "paste", why: "joins the files it names, checked as cat's", check: readers },
    SafeRow {
        name: "rev",
        why: "reverses lines of the files it names, checked as cat's",
        check: readers,
    },
    SafeRow {
        name: "numfmt",
        why: "formats numbers of its arguments or files, checked as cat's",
        check: readers,
    },
    SafeRow {
        name: "stat",
        why: "prints metadata of the files it names, checked as cat's",
        check: readers,
    },
    SafeRow {
        name: "ls",
        why: "lists the folders it names (names only; -L, which follows links, asks)",
        check: readers,
    },
    SafeRow {
        name: "uniq",
        why: "prints the file it names without repeats; a second operand would be written, so it asks",
        check: uniq,
    },
    SafeRow {
        name: "grep",
        why: "searches the files it names, -f files included; -r and -R read whole trees, sensitive files too, so they ask",
        check: grep,
    },
    SafeRow {
        name: "cd",
        why: "changes the folder later commands run in (and are judged from); it must stay in the workspace",
        check: cd,
    },
    SafeRow { name: "echo", why: "prints its arguments (a bash builtin)", check: always },
    SafeRow { name: "expr", why: "evaluates its arguments", check: always },
    SafeRow { name: "true", why: "does nothing (a bash builtin)", check: always },
    SafeRow { name: "false", why: "does nothing (a bash builtin)", check: always },
    SafeRow { name: "pwd", why: "prints the folder (a bash builtin)", check: always },
    SafeRow { name: "seq", why: "prints numbers", check: always },
    SafeRow { name: "id", why: "prints the user's identity", check: always },
    SafeRow { name: "uname", why: "prints the system's name", check: always },
    SafeRow { name: "whoami", why: "prints the user's name", check: always },
    SafeRow { name: "which", why: "prints where commands are on PATH", check: always },
    SafeRow { name: "tr", why: "translates its input (it takes no files)", check: always },
    SafeRow {
        name: "base64",
        why: "encodes the file it names, checked as cat's; -o would write, so it asks",
        check: base64,
    },
    SafeRow {
        name: "find",
        why: "lists names under the folders it names; -exec, -delete, -fprint and link-following ask",
        check: find,
    },
    SafeRow {
        name: "sed",
        why: "only `sed -n N[,M]p FILE`: prints lines of a file, checked as cat's",
        check: sed,
    },
    SafeRow {
        name: "git",
        why: "status, log, diff, show and branch listings read the repository; asked where its config names a program to run, or where commands cannot be confined",
        check: git,
    },
    SafeRow {
        name: "rg",
        why: "a ripgrep installed in a system folder, searching the files it names; a search of folders reads sensitive files too, so it asks",
        check: rg,
    },
];

/// Commands bash runs as builtins whatever PATH says.
const BUILTINS: &[&str] = &["cd", "echo", "true", "false", "pwd"];
const FIND_UNSAFE: &[&str] =
    &["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"];

/// Path arguments of a reader (`cat`, `grep -f F`, `rg --file=F`, ...) stay inside.
fn args_stay_inside(args: &[String], at: Place<'_>, file_opts: bool) -> bool {
    let mut after_dashdash = false;
    let mut i = 1;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if !after_dashdash {
            if a == "--" {
                after_dashdash = true;
                continue;
            }
            if a == "-" {
                continue;
            }
            if file_opts && (a.starts_with("-f") || a.starts_with("--file")) {
                let file = if let Some(v) = a.strip_prefix("--file=") {
                    Some(v.to_string())
                } else if a == "--file" || a == "-f" {
                    i += 1;
                    args.get(i - 1).cloned()
                } else {
                    Some(a[2..].to_string())
                };
                if file.is_some_and(|f| path_escapes(&f, at)) {
                    return false;
                }
                continue;
            }
            if a.starts_with('-') {
                if let Some((_, v)) = a.split_once('=') {
                    if path_escapes(v, at) {
                        return false;
                    }
                    continue;
                }
                // An option, unless a file of that name exists.
                if at.cwd.join(a).symlink_metadata().is_err() {
                    continue;
                }
            }
        }
        if path_escapes(a, at) {
            return false;
        }
    }
    true
}

fn is_rg(cmd: &str) -> bool {
    matches!(Path::new(cmd).file_name().and_then(|f| f.to_str()), Some("rg" | "rg.exe"))
}

fn rg_unsafe_flag(args: &[String]) -> bool {
    args.iter().skip(1).any(|a| {
        a == "--search-zip"
            || a == "-z"
            || ["--pre", "--hostname-bin"].iter().any(|o| a == o || a.starts_with(&format!("{o}=")))
    })
}

fn sed_n_arg(a: &str) -> bool {
    let Some(core) = a.strip_suffix('p') else { return false };
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match core.split_once(',') {
        None => num(core),
        Some((x, y)) => num(x) && num(y),
    }
}

/// Whether `args` has the long option (`--x`, `--x=...`) or the short one (alone or in a
/// cluster such as `-Rn`).
/// A long option may be any unambiguous prefix (`--rec` is `--recursive` to GNU getopt): a
/// prefix counts as the option.
fn has_option(args: &[String], long: &[&str], short: Option<char>) -> bool {
    args.iter().skip(1).take_while(|a| *a != "--").any(|a| {
        let name = a.split('=').next().unwrap_or(a);
        long.iter().any(|l| name.len() > 2 && name.starts_with("--") && l.starts_with(name))
            || short.is_some_and(|c| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    })
}

/// Options of the known-safe commands that follow links found while walking, or take the
/// names to read from a file: either reads what no operand names.
fn reads_unnamed_paths(cmd: &str, args: &[String]) -> bool {
    has_option(args, &["--files0-from"], None)
        || match cmd {
            "grep" => has_option(args, &["--dereference-recursive"], Some('R')),
            "ls" => has_option(args, &["--dereference"], Some('L')),
            "find" => args.iter().any(|a| matches!(a.as_str(), "-L" | "-follow" | "-files0-from")),
            _ => false,
        }
}

/// Whether `uniq` is given an output file: its second operand (`uniq IN OUT`), other than `-`.
fn uniq_writes(args: &[String]) -> bool {
    const TAKES_VALUE: &[&str] =
        &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"];
    let mut operands = Vec::new();
    let mut i = 1;
    let mut options = true;
    while let Some(a) = args.get(i) {
        i += 1;
        if options && a == "--" {
            options = false;
        } else if options && TAKES_VALUE.contains(&a.as_str()) {
            i += 1;
        } else if !(options && a.starts_with('-') && a.len() > 1) {
            operands.push(a.as_str());
        }
    }
    operands.get(1).is_some_and(|o| *o != "-")
}

fn always(_: &[String], _: Place<'_>) -> bool {
    true
}

fn readers(args: &[String], at: Place<'_>) -> bool {
    args_stay_inside(args, at, false)
}

fn uniq(args: &[String], at: Place<'_>) -> bool {
    !uniq_writes(args) && args_stay_inside(args, at, false)
}

fn grep(args: &[String], at: Place<'_>) -> bool {
    // A recursive search reads every file of a tree, the ones read_file refuses too: with the
    // file layer at hand that is asked (without it, upstream's lexical check alone applies).
    let recursive = has_option(args, &["--recursive", "--dereference-recursive"], Some('r'))
        || has_option(args, &[], Some('R'))
        || directories_recurse(args);
    !(recursive && at.files.is_some()) && args_stay_inside(args, at, true)
}

/// `grep -d recurse`, `-drecurse`, `--directories=recurse` (or any prefix GNU grep takes for
/// it): a recursive search spelled another way (issue 34). An unknown action asks too.
fn directories_recurse(args: &[String]) -> bool {
    let mut i = 1;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" {
            break;
        }
        let value =
            if a == "-d" || (a.starts_with("--d") && "--directories".starts_with(a.as_str())) {
                i += 1;
                args.get(i - 1).map(String::as_str)
            } else if let Some(v) = a.strip_prefix("-d") {
                Some(v)
            } else if let Some((o, v)) = a.split_once('=') {
                (o.starts_with("--d") && "--directories".starts_with(o)).then_some(v)
            } else {
                None
            };
        if let Some(v) = value
            && !matches!(v, "read" | "skip")
        {
            return true;
        }
    }
    false
}

fn cd(args: &[String], at: Place<'_>) -> bool {
    let paths: Vec<_> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    if paths.is_empty() {
        !path_escapes("~", at)
    } else {
        !paths.iter().any(|p| path_escapes(p, at))
    }
}

fn base64(args: &[String], at: Place<'_>) -> bool {
    !args[1..]
        .iter()
        .any(|a| a == "-o" || a == "--output" || a.starts_with("--output=") || a.starts_with("-o"))
        && !args[1..].iter().any(|a| !a.starts_with('-') && path_escapes(a, at))
}

fn find(args: &[String], at: Place<'_>) -> bool {
    !args.iter().any(|a| FIND_UNSAFE.contains(&a.as_str()))
        && !args[1..].iter().any(|a| !a.starts_with('-') && path_escapes(a, at))
}

fn sed(args: &[String], at: Place<'_>) -> bool {
    // GNU sed takes options anywhere: an operand like `-ew FILE` is a script that writes, so the
    // file operand must not start with `-`.
    args.len() <= 4
        && args.get(1).is_some_and(|a| a == "-n")
        && args.get(2).is_some_and(|a| sed_n_arg(a))
        && !args.get(3).is_some_and(|f| f.starts_with('-') || path_escapes(f, at))
}

fn git(args: &[String], at: Place<'_>) -> bool {
    // git runs what a repository configures (an external diff, a textconv or clean filter, a
    // signing program): without confinement the table cannot vouch for it.
    at.confined && super::git::read_only(args, Some(at)).unwrap_or(false)
}

fn rg(args: &[String], at: Place<'_>) -> bool {
    let Some(c) = args.first() else { return false };
    // Only an rg at a trusted system location, so a planted `./rg` can't pass.
    let trusted = Path::new(c).is_absolute()
        && std::fs::canonicalize(c).is_ok_and(|r| {
            ["/usr/bin/", "/bin/", "/usr/local/bin/", "/opt/homebrew/bin/"]
                .iter()
                .any(|d| r.starts_with(d))
        });
    // rg searches folders (the current one when none is named) whole: asked with the file
    // layer at hand, as `grep -r`.
    let searches_folders = at.files.is_some() && {
        let operands = operands(
            args,
            &[
                "-e",
                "--regexp",
                "-f",
                "--file",
                "-g",
                "--glob",
                "-t",
                "--type",
                "-T",
                "--type-not",
                "-m",
                "--max-count",
                "-A",
                "-B",
                "-C",
                "--context",
            ],
        );
        operands.len() < 2 || operands[1..].iter().any(|o| at.cwd.join(o).is_dir())
    };
    trusted && !searches_folders && !rg_unsafe_flag(args) && args_stay_inside(args, at, true)
}

/// The operands of `args` (the first is the pattern for search tools): words that are not
/// options, skipping the values of `takes_value` options; all words after `--`.
fn operands<'a>(args: &'a [String], takes_value: &[&str]) -> Vec<&'a String> {
    let mut out = Vec::new();
    let mut i = 1;
    let mut options = true;
    while let Some(a) = args.get(i) {
        i += 1;
        if options && a == "--" {
            options = false;
        } else if options && takes_value.contains(&a.as_str()) {
            i += 1;
        } else if !(options && a.starts_with('-') && a.len() > 1) {
            out.push(a);
        }
    }
    out
}

/// Whether `cmd` is the program the table means: a bash builtin, or found on PATH outside the
/// workspace. A relative or empty PATH entry (`PATH=bin:$PATH`, `PATH=:/usr/bin`) looks in the
/// folder the command runs in, where the repository could ship its own `ls`: that asks.
fn resolves_outside(cmd: &str, at: Place<'_>) -> bool {
    if cmd.contains('/') {
        let p = at.cwd.join(cmd);
        return !std::fs::canonicalize(&p).is_ok_and(|r| r.starts_with(at.workspace))
            && !normalize(&p).starts_with(at.workspace);
    }
    if BUILTINS.contains(&cmd) {
        return true;
    }
    let owned;
    let path = match at.search_path {
        Some(p) => p,
        None => {
            owned = std::env::var_os("PATH").unwrap_or_default();
            owned.as_os_str()
        }
    };
    let dirs: Vec<PathBuf> = std::env::split_paths(path).collect();
    if dirs.iter().any(|d| d.as_os_str().is_empty() || !d.is_absolute()) {
        return false;
    }
    for dir in dirs {
        let candidate = dir.join(cmd);
        let Ok(meta) = std::fs::metadata(&candidate) else { continue };
        use std::os::unix::fs::PermissionsExt;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            continue;
        }
        let real = std::fs::canonicalize(&candidate).unwrap_or(candidate);
        return !real.starts_with(at.workspace) && !dir.starts_with(at.workspace);
    }
    false
}

fn safe_to_exec(args: &[String], at: Place<'_>) -> bool {
    let Some(cmd) = args.first().map(String::as_str) else { return false };
    if !cwd_inside(at) {
        return false;
    }
    if reads_unnamed_paths(cmd, args) {
        return false;
    }
    let name = Path::new(cmd).file_name().and_then(|f| f.to_str()).unwrap_or(cmd);
    // Only `rg` may be named by a path (a system one); the rest by their bare names.
    let by_name = if is_rg(cmd) { name } else { cmd };
    let Some(row) = TABLE.iter().find(|r| r.name == by_name) else { return false };
    (is_rg(cmd) || resolves_outside(cmd, at)) && (row.check)(args, at)
}

/// Whether every glob among `args` (`cat *.txt`) matches only names that stay inside the
/// workspace: a glob names no path of its own, so each match is checked (a link to outside
/// matched by `cat *` was read). A glob in a folder part (`*/x`, `**`) is not followed.
pub fn globs_stay_inside(args: &[String], at: Place<'_>) -> bool {
    args.iter().filter(|a| a.contains(['*', '?', '['])).all(|a| {
        let p = Path::new(a.trim_start_matches('='));
        let (dir, name) = match (p.parent(), p.file_name().and_then(|n| n.to_str())) {
            (Some(d), Some(n)) => (d, n),
            _ => return false,
        };
        let dir_text = dir.to_string_lossy();
        if dir_text.contains(['*', '?', '[']) || name.contains("**") {
            return false;
        }
        if !dir_text.is_empty() && path_escapes(&dir_text, at) {
            return false;
        }
        let Ok(matcher) = globset::GlobBuilder::new(name)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher())
        else {
            return false;
        };
        let Ok(entries) = std::fs::read_dir(at.cwd.join(dir)) else { return true };
        entries.flatten().all(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            !matcher.is_match(n.as_ref())
                || !path_escapes(&dir.join(n.as_ref()).to_string_lossy(), at)
        })
    })
}

/// Whether the words are a command known to be safe to run without asking.
pub fn is_known_safe(args: &[String], at: Place<'_>) -> bool {
    let args: Vec<String> =
        args.iter().map(|a| if a == "zsh" { "bash".to_string() } else { a.clone() }).collect();
    if safe_to_exec(&args, at) {
        return true;
    }
    if args.len() == 3 && args[0] == "bash" && (args[1] == "-c" || args[1] == "-lc") {
        let script = &args[2];
        if script.contains(['(', ')', '<', '>']) || !super::expansion::scan(script).plain() {
            return false;
        }
        let Some(parsed) = super::parse_command(script).filter(|p| !p.has_error) else {
            return false;
        };
        let subs: Vec<_> = parsed.details.iter().filter(|d| !d.is_marker()).collect();
        return !subs.is_empty()
            && subs.iter().all(|d| {
                let w = super::split_words(&d.text);
                w.is_empty() || (safe_to_exec(&w, at) && globs_stay_inside(&w, at))
            });
    }
    false
}

/// Whether the words are a command known to be dangerous (asked about even when allowed): the
/// table in [`super::danger`].
pub fn is_dangerous(args: &[String]) -> bool {
    super::danger::dangerous(args).is_some()
}

/// Whether the words run git (as a command, possibly after `sudo`/`env`/assignments).
pub fn contains_git(args: &[String]) -> bool {
    const BEFORE: &[&str] = &["sudo", "env", "time", "&&", "||", ";", "|", "&", "("];
    args.iter().enumerate().any(|(i, a)| {
        let base = Path::new(a.trim()).file_name().and_then(|f| f.to_str()).unwrap_or("");
        if !base.eq_ignore_ascii_case("git") && !base.eq_ignore_ascii_case("git.exe") {
            return false;
        }
        let mut j = i;
        while j > 0
            && args[j - 1].split_once('=').is_some_and(|(k, _)| !k.is_empty() && !k.contains(' '))
        {
            j -= 1;
        }
        j == 0 || BEFORE.contains(&args[j - 1].to_lowercase().as_str())
    })
}

#[cfg(test)]
#[path = "safety_tests.rs"]
mod tests;
