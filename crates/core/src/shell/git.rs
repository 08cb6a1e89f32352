//! Read-only git, for the known-safe table and the dangerous-command table: `status`, `log`,
//! `diff`, `show` and branch listings, with no option that writes or runs a program, judged
//! from the folder git runs in (`-C`), and only where the repository's configuration names no
//! program for git to run (an external diff, a textconv or clean filter, a signing program;
//! issue 34: a repository written by the model under another name ran its `diff.external`).

use std::path::{Path, PathBuf};

use super::place::{Place, path_escapes};
use super::words::option_given;

#[path = "git_contents.rs"]
mod contents;

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

/// The git commands an "always" answer for git can cover (then judged further by
/// [`beyond_grant`]); any other (`remote-ext`, `send-email`, `mailinfo`, `write-tree`, ...)
/// runs programs or writes objects by design, or is not one a person means by "git".
const GRANTABLE: &[&str] = &[
    "add",
    "archive",
    "bisect",
    "blame",
    "branch",
    "cat-file",
    "checkout",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "commit",
    "config",
    "count-objects",
    "describe",
    "diff",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "help",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "merge-base",
    "mv",
    "name-rev",
    "notes",
    "pull",
    "push",
    "range-diff",
    "rebase",
    "reflog",
    "remote",
    "reset",
    "restore",
    "revert",
    "rev-list",
    "rev-parse",
    "rm",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "submodule",
    "switch",
    "tag",
    "verify-commit",
    "verify-tag",
    "version",
    "whatchanged",
];

/// The folder git runs in: `cwd` joined with each `-C` before the subcommand.
pub(crate) fn git_folder(args: &[String], cwd: &Path) -> PathBuf {
    let mut folder = cwd.to_path_buf();
    let mut i = 1;
    while let Some(a) = args.get(i) {
        if a == "-C" {
            if let Some(f) = args.get(i + 1) {
                folder = folder.join(f);
            }
            i += 2;
        } else if let Some(f) = a.strip_prefix("-C").filter(|f| !f.is_empty()) {
            folder = folder.join(f);
            i += 1;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    folder
}

/// Configuration keys with which git runs a program, or reads outside the work tree, during a
/// command (issue 46: checked against git-config(1)): hooks, diff and merge drivers and tools,
/// signing and credential programs, transports (`remote.*.uploadpack`, `core.sshCommand`),
/// editors, pagers, browsers, mail programs, submodule update commands, trace targets (files
/// written anywhere). Each `(section, last part of the key)`, lower case.
pub(crate) const PROGRAM_KEYS: &[(&str, &str)] = &[
    ("diff", "external"),
    ("diff", "command"),
    ("diff", "textconv"),
    ("diff", "tool"),
    ("diff", "guitool"),
    ("difftool", "cmd"),
    ("difftool", "path"),
    ("merge", "driver"),
    ("merge", "tool"),
    ("merge", "guitool"),
    ("mergetool", "cmd"),
    ("mergetool", "path"),
    ("gpg", "program"),
    ("gpg", "defaultkeycommand"),
    ("credential", "helper"),
    ("remote", "uploadpack"),
    ("remote", "receivepack"),
    ("remote", "vcs"),
    ("uploadpack", "packobjectshook"),
    ("core", "fsmonitor"),
    ("core", "hookspath"),
    ("core", "sshcommand"),
    ("core", "editor"),
    ("core", "askpass"),
    ("core", "gitproxy"),
    ("core", "alternaterefscommand"),
    ("core", "worktree"),
    ("core", "pager"),
    ("sequence", "editor"),
    ("submodule", "update"),
    ("interactive", "difffilter"),
    ("web", "browser"),
    ("browser", "cmd"),
    ("browser", "path"),
    ("man", "cmd"),
    ("man", "path"),
    ("man", "viewer"),
    ("sendemail", "sendmailcmd"),
    ("sendemail", "smtpserver"),
    ("sendemail", "tocmd"),
    ("sendemail", "cccmd"),
    ("sendemail", "headercmd"),
    ("instaweb", "httpd"),
    ("instaweb", "modulepath"),
    ("trace2", "normaltarget"),
    ("trace2", "perftarget"),
    ("trace2", "eventtarget"),
];

/// Sections every key of which names a program or another file of configuration: includes,
/// clean/smudge/process filters, aliases (`!cmd` runs a shell), pagers, and protocol permissions
/// (`protocol.ext.allow` lets a URL run a command).
const PROGRAM_SECTIONS: &[&str] = &["include", "includeif", "filter", "alias", "pager", "protocol"];

/// Whether git may run a program (or read outside the work tree) because of the key `key`
/// (`section[.subsection].name`, any case).
fn runs_programs(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let parts: Vec<&str> = key.split('.').collect();
    let (section, last) = (parts[0], parts[parts.len() - 1]);
    PROGRAM_SECTIONS.contains(&section)
        || PROGRAM_KEYS.iter().any(|(s, l)| *s == section && *l == last)
}

/// Why the git command `args` (the program first) goes beyond what an "always" answer for git
/// covers (issue 46): configuration given on the command line, global options that change the
/// repository or the programs git uses, a `-C` out of the workspace, `git config` that changes
/// something, options and subcommands that run a program by design, or a repository whose
/// configuration names a program to run. `None`: it stays within the answer.
pub(crate) fn beyond_grant(args: &[String], at: Place<'_>) -> Option<String> {
    if git_config_override(args) {
        return Some("it sets git configuration for this command (`-c`, `--config-env`), which can name a program to run".into());
    }
    let mut i = 1;
    let mut chdir = PathBuf::new();
    let sub = loop {
        let a = args.get(i)?.as_str();
        if GIT_GLOBAL_FLAGS.contains(&a) {
            i += 1;
            continue;
        }
        let folder = if a == "-C" {
            i += 2;
            args.get(i - 1)?.as_str()
        } else if let Some(f) = a.strip_prefix("-C").filter(|f| !f.is_empty()) {
            i += 1;
            f
        } else if a.starts_with('-') {
            return Some(format!(
                "the git option `{a}` changes the repository, the configuration or the programs git uses"
            ));
        } else {
            break a;
        };
        chdir = chdir.join(folder);
        if path_escapes(&at.cwd.join(&chdir).to_string_lossy(), at) {
            return Some(format!("`git -C {folder}` works in a folder outside the workspace"));
        }
    };
    let rest = &args[i + 1..];
    if !GRANTABLE.contains(&sub) {
        return Some(format!(
            "`git {sub}` is not a command an answer about git covers (helpers, transports and plumbing run programs or write what later checkouts write out)"
        ));
    }
    let has = |names: &[&str]| option_given(rest, names);
    // Pathspec magic (`:(top).env`, `:/.gemini`) names paths the words do not show; a
    // transport (`ext::sh ...`) runs a program.
    if let Some(w) = rest.iter().find(|a| a.starts_with(':') || a.contains("::")) {
        return Some(format!(
            "`{w}` is pathspec magic or a transport, whose files or program the words do not show"
        ));
    }
    let runs = match sub {
        "config" => {
            const READS: &[&str] =
                &["--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list"];
            const WRITES: &[&str] = &[
                "--add",
                "--unset",
                "--unset-all",
                "--replace-all",
                "--edit",
                "-e",
                "--rename-section",
                "--remove-section",
                "set",
                "unset",
                "edit",
                "rename-section",
                "remove-section",
            ];
            (!has(READS) || has(WRITES))
                .then_some("`git config` that changes a setting can name a program git runs later")
        }
        "rebase" => has(&["--exec", "-x"]).then_some("`git rebase --exec` runs a command"),
        "fetch" | "pull" | "ls-remote" => {
            has(&["--upload-pack", "-u"]).then_some("`--upload-pack` names a program git runs")
        }
        "clone" => has(&["--upload-pack", "-u", "--template", "--config", "--separate-git-dir"])
            .then_some("an option of `git clone` names a program, a template or configuration"),
        "push" | "send-pack" => has(&["--receive-pack", "--exec"])
            .then_some("`--receive-pack` names a program git runs"),
        "archive" => {
            has(&["--exec", "--remote"]).then_some("`git archive --exec` names a program git runs")
        }
        "submodule" => {
            rest.iter().any(|a| a == "foreach").then_some("`git submodule foreach` runs a command")
        }
        "bisect" => rest.iter().any(|a| a == "run").then_some("`git bisect run` runs a command"),
        "filter-branch" | "difftool" | "mergetool" | "instaweb" | "web--browse" | "daemon" => {
            Some("this git command runs programs by design")
        }
        "grep" => has(&["-O", "--open-files-in-pager"]).then_some("`git grep -O` runs a pager"),
        "init" => has(&["--template", "--config", "--separate-git-dir"])
            .then_some("a template or configuration given to a new repository can hold hooks"),
        // Plumbing that writes objects, the index or refs: what a later checkout writes into
        // the work tree (`.gemini/settings.json` through `update-index --cacheinfo`).
        "update-index" | "hash-object" | "read-tree" | "checkout-index" | "mktree"
        | "commit-tree" | "update-ref" | "symbolic-ref" | "apply" | "am" | "fast-import"
        | "unpack-objects" | "merge-file" | "replace" | "worktree" => Some(
            "this git command writes the index, objects or refs that later checkouts write out",
        ),
        _ => has(&["--ext-diff", "--exec", "--upload-pack", "--receive-pack", "--template"])
            .then_some("an option of this git command names a program to run"),
    };
    if let Some(why) = runs {
        return Some(why.into());
    }
    // `git checkout REV -- .`, `git restore --source=REV dir`: every file the revision holds
    // there is written, settings and hooks included (issue 46: a tree made of a subfolder,
    // checked out at the root, wrote `.gemini/settings.json`).
    if matches!(sub, "checkout" | "restore") {
        let after = rest.iter().skip_while(|a| *a != "--").skip(1);
        let folders = after
            .chain(rest.iter().filter(|a| !a.starts_with('-')))
            .any(|a| a.contains(['*', '?', '[']) || at.cwd.join(&chdir).join(a).is_dir());
        if folders && (rest.iter().any(|a| a == "--") || has(&["--source", "-s"])) {
            return Some(format!(
                "`git {sub}` of folders writes whatever the revision holds there"
            ));
        }
    }
    let cwd = at.cwd.join(&chdir);
    let here = Place { cwd: &cwd, ..at };
    // What it can print: `rev:path` of a sensitive file, history, object ids (G8).
    let prints = matches!(
        sub,
        "show" | "cat-file" | "diff" | "log" | "whatchanged" | "blame" | "grep" | "archive"
    );
    let names_secret = prints
        && rest.iter().any(|a| {
            !a.starts_with('-')
                && a.split_once(':').is_some_and(|(_, p)| !p.is_empty() && path_escapes(p, here))
        });
    if names_secret || !contents::bounded(sub, rest, here) {
        return Some("it can print files the file tools refuse (history, object ids, searches of every file); name the files to show".into());
    }
    repository_runs_programs(&at.cwd.join(&chdir))
        .then(|| "the repository's configuration names a program git would run (a hook path, filter, diff driver, transport, pager, alias, ...)".into())
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
    !option_given(args, &["--output", "--ext-diff", "--textconv", "--exec", "--paginate"])
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
        // `-L<range>:<file>` (glued) reads that file's history.
        let line_range_escapes = rest.iter().any(|a| {
            a.strip_prefix("-L")
                .and_then(|r| r.rsplit_once(':'))
                .is_some_and(|(_, p)| !p.is_empty() && path_escapes(p, here))
        });
        if line_range_escapes || !contents::bounded(sub, rest, here) {
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
#[path = "git_tests.rs"]
mod tests;
