//! Upstream's command lists (`sandbox/utils/commandSafety.ts`): commands known to be safe
//! (read-only, paths inside the workspace) and commands known to be dangerous. They look at
//! the words of one command; compound commands are split by the policy engine first.

use std::path::{Component, Path, PathBuf};

const SAFE: &[&str] = &[
    "cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste", "pwd",
    "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc", "which", "whoami", "numfmt",
    "tac",
];
const FILE_READERS: &[&str] = &[
    "cat", "head", "tail", "tac", "nl", "stat", "wc", "cut", "paste", "rev", "uniq", "numfmt", "ls",
];
const FIND_UNSAFE: &[&str] =
    &["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"];
const GIT_READ_ONLY: &[&str] = &["status", "log", "diff", "show", "branch"];

/// Where a command runs: the workspace root and its working directory.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    /// The workspace's primary root.
    pub workspace: &'a Path,
    /// Where the command runs.
    pub cwd: &'a Path,
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether a path-like argument may point outside the workspace: variables, `~user`, absolute
/// or relative paths that leave it, or a symlink on the way that does.
pub fn path_escapes(arg: &str, at: Place<'_>) -> bool {
    if arg.is_empty() {
        return false;
    }
    if arg.contains(['$', '`']) || (arg.starts_with('~') && arg != "~" && !arg.starts_with("~/")) {
        return true;
    }
    let target = if arg == "~" || arg.starts_with("~/") {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        normalize(&home.join(arg.trim_start_matches('~').trim_start_matches('/')))
    } else {
        normalize(&at.cwd.join(arg))
    };
    if !target.starts_with(at.workspace) {
        return true;
    }
    let mut cur = target.as_path();
    while cur.starts_with(at.workspace) && cur != at.workspace {
        if cur.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            match std::fs::canonicalize(cur) {
                Ok(real) if real.starts_with(at.workspace) => {}
                _ => return true,
            }
        }
        let Some(parent) = cur.parent() else { break };
        cur = parent;
    }
    false
}

fn cwd_inside(at: Place<'_>) -> bool {
    path_inside(at.cwd, at.workspace)
}

/// Whether `p` (made absolute and without `..`) is the workspace or inside it.
pub fn path_inside(p: &Path, workspace: &Path) -> bool {
    normalize(p).starts_with(workspace)
}

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

/// Git's global options known not to change what git runs or writes; `-C`, `--git-dir` and
/// `--work-tree` take a folder, checked against the workspace when `at` is given.
const GIT_GLOBAL_FLAGS: &[&str] =
    &["--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"];
const GIT_GLOBAL_FOLDERS: &[&str] = &["-C", "--git-dir", "--work-tree"];

/// The read-only subcommand and its index, when every global option before it is known (a
/// pager, `-c`, `--exec-path` and the like are not).
fn git_subcommand<'a>(args: &'a [String], at: Option<Place<'_>>) -> Option<(usize, &'a str)> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i].as_str();
        if GIT_GLOBAL_FLAGS.contains(&a) {
            i += 1;
            continue;
        }
        let folder = if GIT_GLOBAL_FOLDERS.contains(&a) {
            i += 2;
            args.get(i - 1).map(String::as_str)
        } else if let Some((o, v)) = a.split_once('=').filter(|(o, _)| o.starts_with("--")) {
            i += 1;
            GIT_GLOBAL_FOLDERS.contains(&o).then_some(v)
        } else if a.starts_with("-C") && a.len() > 2 {
            i += 1;
            Some(&a[2..])
        } else if a.starts_with('-') {
            return None;
        } else {
            return GIT_READ_ONLY.contains(&a).then_some((i, a));
        };
        let folder = folder?;
        if at.is_some_and(|at| path_escapes(folder, at)) {
            return None;
        }
    }
    None
}

fn git_config_override(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "-c"
            || a == "--config-env"
            || (a.starts_with("-c") && a.len() > 2)
            || a.starts_with("--config-env=")
    })
}

fn git_args_read_only(args: &[String]) -> bool {
    !args.iter().any(|a| {
        ["--output", "--ext-diff", "--textconv", "--exec", "--paginate"].contains(&a.as_str())
            || a.starts_with("--output=")
            || a.starts_with("--exec=")
    })
}

fn git_branch_read_only(args: &[String]) -> bool {
    if args.is_empty() {
        return true;
    }
    let flags = [
        "--list",
        "-l",
        "--show-current",
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-v",
        "-vv",
        "--verbose",
    ];
    args.iter().all(|a| flags.contains(&a.as_str()) || a.starts_with("--format="))
}

/// Read-only git: status/log/diff/show (no output/exec flags) and listing branches; with `at`,
/// folders given to git stay inside the workspace.
fn git_read_only(args: &[String], at: Option<Place<'_>>) -> Option<bool> {
    if git_config_override(args) {
        return Some(false);
    }
    let (idx, sub) = git_subcommand(args, at)?;
    let rest = &args[idx + 1..];
    // Operands name revisions or paths; a path outside (`git diff --no-index /etc/passwd x`,
    // `git diff ../secret x`) is read.
    if let Some(at) = at
        && rest.iter().any(|a| !a.starts_with('-') && path_escapes(a, at))
    {
        return Some(false);
    }
    Some(git_args_read_only(rest) && (sub != "branch" || git_branch_read_only(rest)))
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
fn has_option(args: &[String], long: &[&str], short: Option<char>) -> bool {
    args.iter().skip(1).take_while(|a| *a != "--").any(|a| {
        long.iter().any(|l| a == l || a.starts_with(&format!("{l}=")))
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

fn safe_to_exec(args: &[String], at: Place<'_>) -> bool {
    let Some(cmd) = args.first().map(String::as_str) else { return false };
    if !cwd_inside(at) {
        return false;
    }
    if reads_unnamed_paths(cmd, args) {
        return false;
    }
    if SAFE.contains(&cmd) {
        if cmd == "cd" {
            let paths: Vec<_> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
            return if paths.is_empty() {
                !path_escapes("~", at)
            } else {
                !paths.iter().any(|p| path_escapes(p, at))
            };
        }
        if cmd == "uniq" && uniq_writes(args) {
            return false;
        }
        if FILE_READERS.contains(&cmd) {
            return args_stay_inside(args, at, false);
        }
        if cmd == "grep" {
            return args_stay_inside(args, at, true);
        }
        return true;
    }
    match cmd {
        "base64" => {
            !args[1..].iter().any(|a| {
                a == "-o" || a == "--output" || a.starts_with("--output=") || a.starts_with("-o")
            }) && !args[1..].iter().any(|a| !a.starts_with('-') && path_escapes(a, at))
        }
        "find" => {
            !args.iter().any(|a| FIND_UNSAFE.contains(&a.as_str()))
                && !args[1..].iter().any(|a| !a.starts_with('-') && path_escapes(a, at))
        }
        "git" => git_read_only(args, Some(at)).unwrap_or(false),
        "sed" => {
            // GNU sed takes options anywhere: an operand like `-ew FILE` is a script that
            // writes, so the file operand must not start with `-`.
            args.len() <= 4
                && args.get(1).is_some_and(|a| a == "-n")
                && args.get(2).is_some_and(|a| sed_n_arg(a))
                && !args.get(3).is_some_and(|f| f.starts_with('-') || path_escapes(f, at))
        }
        c if is_rg(c) => {
            // Only an rg at a trusted system location, so a planted `./rg` can't pass.
            let trusted = Path::new(c).is_absolute()
                && std::fs::canonicalize(c).is_ok_and(|r| {
                    ["/usr/bin/", "/bin/", "/usr/local/bin/", "/opt/homebrew/bin/"]
                        .iter()
                        .any(|d| r.starts_with(d))
                });
            trusted && !rg_unsafe_flag(args) && args_stay_inside(args, at, true)
        }
        _ => false,
    }
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

/// Whether the words are a command known to be dangerous (asked about even when allowed).
pub fn is_dangerous(args: &[String]) -> bool {
    let Some(cmd) = args.first().map(String::as_str) else { return false };
    match cmd {
        "ln" => args.iter().any(|a| {
            a == "-s"
                || a == "--symbolic"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
        }),
        "rm" => args.get(1).is_some_and(|a| a == "-f" || a == "-rf" || a == "-fr"),
        "sudo" => is_dangerous(&args[1..]),
        "find" => args.iter().any(|a| FIND_UNSAFE.contains(&a.as_str())),
        "git" => git_read_only(args, None).is_some_and(|ro| !ro),
        "base64" => args[1..]
            .iter()
            .any(|a| a.starts_with("-o") || a == "--output" || a.starts_with("--output=")),
        c if is_rg(c) => rg_unsafe_flag(args),
        _ => false,
    }
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
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        crate::shell::split_words(s)
    }

    #[test]
    fn safe_commands_stay_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let at = Place { workspace: &ws, cwd: &ws };
        assert!(is_known_safe(&w("ls -la"), at));
        assert!(is_known_safe(&w("cat src/a.rs"), at));
        assert!(is_known_safe(&w("git status"), at));
        assert!(is_known_safe(&w("git log --oneline -5"), at));
        assert!(is_known_safe(&w("sed -n 1,5p f"), at));
        assert!(is_known_safe(&w("bash -c 'ls; pwd'"), at));
        assert!(!is_known_safe(&w("cat /etc/passwd"), at));
        assert!(!is_known_safe(&w("cat ../x"), at));
        assert!(!is_known_safe(&w("cat $HOME/.ssh/id_rsa"), at));
        assert!(!is_known_safe(&w("git push"), at));
        assert!(!is_known_safe(&w("git -c core.pager=sh log"), at));
        assert!(!is_known_safe(&w("find . -delete"), at));
        assert!(!is_known_safe(&w("rm x"), at));
        assert!(!is_known_safe(&w("./rg foo"), at));
        std::os::unix::fs::symlink("/etc", ws.join("out")).unwrap();
        assert!(!is_known_safe(&w("cat out/passwd"), at));
    }

    #[test]
    fn dangerous_commands() {
        assert!(is_dangerous(&w("rm -rf x")));
        assert!(is_dangerous(&w("sudo rm -f x")));
        assert!(is_dangerous(&w("find . -exec rm {} ;")));
        assert!(is_dangerous(&w("git -c x=y status")));
        assert!(is_dangerous(&w("git diff --output=f")));
        assert!(is_dangerous(&w("ln -s a b")));
        assert!(!is_dangerous(&w("rm x")));
        assert!(!is_dangerous(&w("git push")));
    }

    #[test]
    fn git_is_found_after_prefixes() {
        assert!(contains_git(&w("git status")));
        assert!(contains_git(&w("ls && git push")));
        assert!(contains_git(&w("FOO=1 /usr/bin/git log")));
        assert!(!contains_git(&w("echo git")));
    }
}
