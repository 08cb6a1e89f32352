//! Read-only git, for the known-safe table and the dangerous-command table: `status`, `log`,
//! `diff`, `show` and branch listings, with no option that writes or runs a program, judged
//! from the folder git runs in (`-C`), and only where the repository's configuration names no
//! program for git to run (an external diff, a textconv or clean filter, a signing program;
//! issue 34: a repository written by the model under another name ran its `diff.external`).

use std::path::{Path, PathBuf};

use super::place::{Place, path_escapes};

const GIT_READ_ONLY: &[&str] = &["status", "log", "diff", "show", "branch"];

/// Git's global options known not to change what git runs or writes; `-C` takes a folder,
/// checked against the workspace when `at` is given (the operands are then judged from it).
const GIT_GLOBAL_FLAGS: &[&str] =
    &["--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"];

/// The read-only subcommand, its index and the folder git runs in (`-C` joined to `cwd`),
/// when every global option before it is known (a pager, `-c`, `--exec-path`, `--git-dir`,
/// `--work-tree` and the like are not).
fn git_subcommand<'a>(
    args: &'a [String],
    at: Option<Place<'_>>,
) -> Option<(usize, &'a str, PathBuf)> {
    let mut i = 1;
    let mut chdir = PathBuf::new();
    while i < args.len() {
        let a = args[i].as_str();
        if GIT_GLOBAL_FLAGS.contains(&a) {
            i += 1;
            continue;
        }
        let folder = if a == "-C" {
            i += 2;
            args.get(i - 1).map(String::as_str)
        } else if a.starts_with("-C") && a.len() > 2 {
            i += 1;
            Some(&a[2..])
        } else if a.starts_with('-') {
            return None;
        } else {
            return GIT_READ_ONLY.contains(&a).then_some((i, a, chdir));
        };
        let folder = folder?;
        chdir = chdir.join(folder);
        if let Some(at) = at {
            let cwd = at.cwd.join(&chdir);
            if path_escapes(&cwd.to_string_lossy(), at) {
                return None;
            }
        }
    }
    None
}

/// Configuration keys with which git runs a program, or reads outside the work tree, during a
/// read-only command (`diff.external`, textconv and clean filters, signing programs, ...).
fn runs_programs(key: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    let (section, last) = (parts[0], parts[parts.len() - 1]);
    match section {
        "include" | "includeif" | "filter" => true,
        "diff" => matches!(last, "external" | "command" | "textconv"),
        "gpg" => last == "program",
        "merge" => last == "driver",
        "core" => matches!(
            last,
            "fsmonitor"
                | "hookspath"
                | "sshcommand"
                | "editor"
                | "askpass"
                | "gitproxy"
                | "alternaterefscommand"
                | "worktree"
        ),
        _ => false,
    }
}

/// Whether a git config file names a program to run (or cannot be read whole): see
/// [`runs_programs`]. Sections and keys are case-insensitive; a subsection keeps its case.
fn config_runs_programs(file: &Path) -> bool {
    let Ok((bytes, size)) = crate::files::read_regular(file, 256 * 1024, false) else {
        // No such file: nothing configured. Anything else (a FIFO, a link) cannot be judged.
        return file.symlink_metadata().is_ok();
    };
    if size > 256 * 1024 {
        return true;
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut section = String::new();
    let key_of = |s: &str| -> String {
        s.split(|c: char| c == '=' || c.is_whitespace()).next().unwrap_or("").to_ascii_lowercase()
    };
    for line in text.lines() {
        // A byte-order mark and any white space (tabs included) are git's white space too.
        let l = line.trim_start_matches('\u{feff}').trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if l.ends_with('\\') {
            return true; // a continued line: not judged
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some((head, tail)) = rest.split_once(']') else { return true };
            // `[diff "x"]`, `[diff.x]` (the old spelling): the section is the first word.
            let name = head.split(|c: char| c == '"' || c == '.' || c.is_whitespace()).next();
            section = name.unwrap_or("").trim().to_ascii_lowercase();
            if section == "include" || section.starts_with("includeif") {
                return true;
            }
            // `[diff] external = x`: a key may follow the header on the same line.
            let tail = tail.trim();
            if !tail.is_empty() && !tail.starts_with('#') && !tail.starts_with(';') {
                let key = key_of(tail);
                if runs_programs(&format!("{section}.{key}")) {
                    return true;
                }
            }
            continue;
        }
        let key = key_of(l);
        if runs_programs(&format!("{section}.{key}")) {
            return true;
        }
    }
    false
}

/// The repository git would use from `dir` (a `.git` folder, or the folder a `.git` file
/// names): whether its configuration names a program to run. No repository: nothing runs.
fn repository_runs_programs(dir: &Path) -> bool {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        // A bare repository (HEAD, objects, refs) is one git may use where it stands, under any
        // name: toolbelt's `safe.bareRepository=explicit` stops that, and its config is
        // judged all the same.
        let bare =
            d.join("HEAD").is_file() && d.join("objects").is_dir() && d.join("refs").is_dir();
        if bare && git_dir_runs_programs(d) {
            return true;
        }
        let dot = d.join(".git");
        match dot.symlink_metadata() {
            Ok(m) if m.is_dir() => return git_dir_runs_programs(&dot),
            Ok(m) if m.is_file() => {
                let Ok((bytes, _)) = crate::files::read_regular(&dot, 4096, false) else {
                    return true;
                };
                let text = String::from_utf8_lossy(&bytes);
                let Some(target) = text.trim().strip_prefix("gitdir:") else { return true };
                return git_dir_runs_programs(&d.join(target.trim()));
            }
            Ok(_) => return true,
            Err(_) => cur = d.parent(),
        }
    }
    false
}

fn git_dir_runs_programs(git_dir: &Path) -> bool {
    let mut dirs = vec![git_dir.to_path_buf()];
    // A linked work tree's repository keeps its config in the common folder.
    if let Ok((bytes, _)) = crate::files::read_regular(&git_dir.join("commondir"), 4096, false) {
        dirs.push(git_dir.join(String::from_utf8_lossy(&bytes).trim()));
    }
    dirs.iter().any(|d| {
        config_runs_programs(&d.join("config")) || config_runs_programs(&d.join("config.worktree"))
    })
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
pub(super) fn read_only(args: &[String], at: Option<Place<'_>>) -> Option<bool> {
    if git_config_override(args) {
        return Some(false);
    }
    let (idx, sub, chdir) = git_subcommand(args, at)?;
    let rest = &args[idx + 1..];
    if let Some(at) = at {
        // Judged from the folder git runs in (`git -C docs diff notes`).
        let cwd = at.cwd.join(&chdir);
        let here = Place { cwd: &cwd, ..at };
        // Operands name revisions or paths; a path outside (`git diff --no-index /etc/passwd
        // x`, `git diff ../secret x`), or a sensitive one (`git show HEAD:.env`), is read.
        let reads = |a: &String| {
            let path = a.split_once(':').map_or(a.as_str(), |(_, p)| p);
            !a.starts_with('-') && !path.is_empty() && path_escapes(path, here)
        };
        if rest.iter().any(reads) {
            return Some(false);
        }
        // `diff --no-index` of folders compares every file beneath them, sensitive ones too
        // (issue 34: `git diff --no-index sub2 .` printed `.env` and `.git/config`).
        if sub == "diff"
            && rest.iter().any(|a| a == "--no-index")
            && rest.iter().any(|a| !a.starts_with('-') && cwd.join(a).is_dir())
        {
            return Some(false);
        }
        // What the repository's configuration would run (issue 34: a repository under another
        // name, written by the model, with `diff.external`).
        if repository_runs_programs(&cwd) {
            return Some(false);
        }
    }
    Some(git_args_read_only(rest) && (sub != "branch" || git_branch_read_only(rest)))
}

/// A read-only git subcommand given options that make it write or run programs.
pub(super) fn made_unsafe(args: &[String]) -> bool {
    read_only(args, None).is_some_and(|ro| !ro)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34: a tab before `=` on the header's line, or a byte-order mark, hid
    /// `diff.external` from the check; git reads both.
    #[test]
    fn every_spelling_git_reads_is_judged() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config");
        for text in [
            "[diff]\n\texternal = ./evil.sh\n",
            "[diff] external\t= ./evil.sh\n",
            "\u{feff}[diff]\n\texternal = ./evil.sh\n",
            "[DIFF]\n\tExternal=./evil.sh\n",
            "[diff \"x\"]\n\ttextconv = ./evil.sh\n",
            "[diff.x]\n\ttextconv = ./evil.sh\n",
            "[filter \"lfs\"]\n\tclean = ./evil.sh\n",
            "[include]\n\tpath = other\n",
            "[includeIf \"gitdir:/\"]\n\tpath = other\n",
            "[core]\n\tworktree = /etc\n",
            "[gpg]\n\tprogram = ./evil.sh\n",
            "[core]\r\n\tfsmonitor = ./evil.sh\r\n",
        ] {
            std::fs::write(&f, text).unwrap();
            assert!(config_runs_programs(&f), "{text:?}");
        }
        for text in ["[core]\n\tbare = false\n", "[user]\n\tname = x\n", "# [diff] external = x\n"]
        {
            std::fs::write(&f, text).unwrap();
            assert!(!config_runs_programs(&f), "{text:?}");
        }
    }
}
