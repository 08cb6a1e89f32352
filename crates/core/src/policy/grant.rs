//! What an "always allow" answer covers (issue 46). A person who answers "always" to `rm a.txt`
//! judged the removal of a file of this workspace, not `rm -rf ~/.ssh`; the rule the answer
//! leaves behind names the program (upstream's `commandPrefix`), so every later command it
//! matches is held to the boundary that decides what runs unasked (issue 34) before the
//! answer counts: the command stays in the workspace, in a form that is not dangerous, and
//! touches no sensitive file and no file that decides what runs. Anything else is asked as if
//! no "always" had been given. Saved answers (`auto-saved.toml`) are held to the same line.

use std::path::{Path, PathBuf};

use super::call::PolicyContext;
use crate::shell::place::{Place, normalized, path_escapes, path_inside};
use crate::shell::words::{unwrap_command, without_redirections};
use crate::shell::{assignments, parse_command, split_words};

/// What an "always" answer for the programs `roots` covers, in words a person reads before
/// choosing it (the same sentence in every front door).
pub fn covers(roots: &[String]) -> String {
    let names: Vec<String> = roots.iter().map(|r| format!("`{r}`")).collect();
    format!(
        "{} commands that stay in this workspace (dangerous forms, paths outside, sensitive files and files that decide what runs are still asked)",
        names.join(", ")
    )
}

/// How many wrappers (`sudo`, `env`, `timeout`, ...) are looked through.
const MAX_WRAPPERS: usize = 8;

/// Why `command`, run in `dir_path`, goes beyond what an "always" answer covers; `None` when
/// it stays within it.
pub(super) fn beyond(
    command: &str,
    dir_path: Option<&str>,
    ctx: &PolicyContext<'_>,
) -> Option<String> {
    let ws = super::places::workspace(ctx);
    let cwd = normalized(&dir_path.map_or_else(|| ws.clone(), |d| ws.join(d)));
    if !path_inside(&cwd, &ws) {
        return Some("it runs in a folder outside the workspace".into());
    }
    if crate::shell::has_command_substitution(command)
        || !crate::shell::expansion::scan(command).plain()
    {
        return Some(
            "part of it is only known when it runs (an expansion or a command substitution)".into(),
        );
    }
    let Some(parsed) = parse_command(command).filter(|p| !p.has_error) else {
        return Some("it could not be parsed, so what it touches cannot be told".into());
    };
    // Where each sub-command may run: a `cd` adds its folder to the ones before it (in a
    // subshell or behind `||` it may or may not apply); a wrapper's `-C` moves only the
    // command it wraps.
    let mut bases = vec![cwd];
    for detail in parsed.details.iter().filter(|d| !d.is_marker()) {
        let mut moved = Vec::new();
        for base in &bases {
            let (why, cd) = sub_beyond(detail.text.trim(), base, &ws, ctx);
            if why.is_some() {
                return why;
            }
            moved.extend(cd.filter(|c| !bases.contains(c) && !moved.contains(c)));
        }
        bases.extend(moved);
        if bases.len() > MAX_FOLDERS {
            return Some("it changes folders more often than can be followed".into());
        }
    }
    // Redirection targets, from every folder a sub-command may be in.
    let stays = |base: &PathBuf| {
        super::places::redirections_stay_in_workspace(command, Some(&base.to_string_lossy()), ctx)
    };
    if parsed.has_redirection && !bases.iter().all(stays) {
        return Some("it redirects to or from a file outside the workspace, a sensitive file or a file that decides what runs".into());
    }
    None
}

/// How many folders a command's `cd`s are followed into.
const MAX_FOLDERS: usize = 8;

/// One sub-command run in `base`: why it goes beyond a grant, and the folder a `cd` moves to.
fn sub_beyond(
    sub: &str,
    base: &Path,
    ws: &Path,
    ctx: &PolicyContext<'_>,
) -> (Option<String>, Option<PathBuf>) {
    let mut text = sub.to_string();
    let mut here = base.to_path_buf();
    let mut cd = None;
    for _ in 0..MAX_WRAPPERS {
        let at = Place {
            workspace: ws,
            cwd: &here,
            files: ctx.files,
            confined: ctx.confinable,
            search_path: ctx.search_path,
        };
        let words = without_redirections(split_words(&text));
        if let Some(why) = simple_beyond(&words, at) {
            return (Some(why), None);
        }
        let inner = unwrap_command(&text);
        if let Some(dir) = inner.as_ref().and_then(|u| u.chdir.as_deref())
            && path_escapes(dir, at)
        {
            return (Some(format!("it runs a command in `{dir}`, outside the workspace")), None);
        }
        if let [name, target] = words.as_slice()
            && (name == "cd" || name == "pushd")
        {
            cd = Some(normalized(&here.join(target)));
        }
        if let Some(dir) = inner.as_ref().and_then(|u| u.chdir.as_deref()) {
            here = normalized(&here.join(dir));
        }
        let Some(inner) = inner else { break };
        text = inner.inner;
    }
    (None, cd)
}

/// One simple command's words (no redirections), judged where `at` says it runs.
fn simple_beyond(words: &[String], at: Place<'_>) -> Option<String> {
    let mut i = 0;
    while let Some(w) = words.get(i).filter(|w| assignments::is_assignment(w)) {
        if !assignments::is_harmless(w) {
            let name = w.split_once('=').map_or(w.as_str(), |(n, _)| n);
            return Some(format!("it sets `{name}`, which can change what the command runs"));
        }
        i += 1;
    }
    let words = &words[i..];
    let program = words.first()?;
    if let Some(why) = crate::shell::danger::dangerous(words) {
        return Some(format!("`{program}` here is a dangerous form: {why}"));
    }
    match program.as_str() {
        "cd" | "pushd" if words.len() != 2 => {
            return Some("it changes to a folder that cannot be told from its words".into());
        }
        "popd" => return Some("it changes to a folder that cannot be told from its words".into()),
        _ => {}
    }
    let base = Path::new(program).file_name().and_then(|f| f.to_str()).unwrap_or(program);
    if base == "git"
        && let Some(why) = crate::shell::git::beyond_grant(words, at)
    {
        return Some(why);
    }
    if let Some(why) = code_on_the_line(base, words).or_else(|| program_beyond(base, words, at)) {
        return Some(why);
    }
    // git's paths are read from the folder it runs in (`-C`), not the command's.
    let git_cwd;
    let at = if base == "git" {
        git_cwd = crate::shell::git::git_folder(words, at.cwd);
        Place { cwd: &git_cwd, ..at }
    } else {
        at
    };
    let mut options = true;
    for w in &words[1..] {
        if options && w == "--" {
            options = false;
            continue;
        }
        // The values a word may hold: itself; after `=` (`--out=x`, `of=x`); and in a cluster
        // of short options every tail, since any letter may take the rest as its value
        // (`-t..`, `-oGEMINI.md`, `-iC..`; issue 46).
        let mut values: Vec<&str> = Vec::new();
        if options && w.starts_with("--") {
            values.extend(w.split_once('=').map(|(_, v)| v));
        } else if options && w.starts_with('-') && w.len() > 1 {
            values.extend(w.char_indices().skip(2).map(|(i, _)| &w[i..]));
        } else {
            values.push(w);
            values.extend(w.split_once('=').map(|(_, v)| v));
        }
        for value in values {
            if let Some(why) = path_beyond(value, at) {
                return Some(why);
            }
        }
    }
    None
}

/// Why a word that may name a path takes a command beyond a grant.
fn path_beyond(word: &str, at: Place<'_>) -> Option<String> {
    if word.is_empty() {
        return None;
    }
    if word.contains(['*', '?', '[']) {
        return (!crate::shell::safety::globs_stay_inside(&[word.to_string()], at)).then(|| {
            format!(
                "the pattern `{word}` can match a path outside the workspace or a sensitive file"
            )
        });
    }
    if path_escapes(word, at) {
        return Some(format!(
            "`{word}` is outside the workspace, or a file the file tools refuse (a sensitive file, a link out)"
        ));
    }
    let path: PathBuf = normalized(&at.cwd.join(word));
    let why = at.files.and_then(|f| f.control(&path))?;
    Some(format!("`{word}` decides what runs: {why}"))
}

/// Interpreters: an "always" for one covers running a script file of the workspace with it
/// (`python tools/gen.py`), not code given on the command line or read from input
/// (`python -c ...`, `bash -c ...`, `echo ... | python`): that code is what a person judges.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "ipython",
    "perl",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "tclsh",
    "wish",
    "pwsh",
    "powershell",
    "osascript",
    "jshell",
    "groovy",
    "scala",
    "kotlin",
    "elixir",
    "erl",
    "escript",
    "julia",
];

/// Tools whose first operand is a program in their own language (`sed 's/a/b/w ~/.bashrc'`,
/// `awk '{system("...")}'`) unless it is read from a file (`-f`).
const SCRIPTED: &[&str] = &["sed", "gsed", "awk", "gawk", "mawk", "nawk", "busybox"];

/// Package runners that run a command or package given on the command line.
const RUNNERS: &[(&str, &[&str])] = &[
    ("npm", &["exec", "x", "-c", "--call"]),
    ("npx", &["-c", "--call"]),
    ("pnpm", &["exec", "dlx", "-c"]),
    ("pnpx", &[]),
    ("yarn", &["exec", "dlx"]),
    ("bunx", &[]),
    ("uvx", &[]),
    ("pipx", &["run"]),
    ("uv", &["run"]),
    ("make", &["--eval", "-E"]),
];

/// Why the words carry code of their own on the command line, which no earlier answer saw.
fn code_on_the_line(base: &str, words: &[String]) -> Option<String> {
    // `python3.12` is `python3`.
    let name = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let name = if name.is_empty() { base } else { name };
    let args = &words[1..];
    if INTERPRETERS.contains(&name) || INTERPRETERS.contains(&base) {
        // Covered: `prog SCRIPT [ARGS...]`, the script a file named before any option.
        let covered = args.first().is_some_and(|a| {
            !a.starts_with('-') && !matches!(a.as_str(), "eval" | "repl" | "x" | "exec")
        });
        return (!covered).then(|| {
            format!("`{base}` runs code given on its command line or its input here, not a script file of the workspace")
        });
    }
    if SCRIPTED.contains(&name) {
        let from_file = args.iter().any(|a| {
            a == "-f" || a.starts_with("--file") || (a.starts_with("-f") && !a.starts_with("--"))
        });
        return (!from_file)
            .then(|| format!("`{base}` runs the program written on its command line"));
    }
    let (_, flags) = RUNNERS.iter().find(|(r, _)| *r == name || *r == base)?;
    let runs = flags.is_empty() || args.iter().any(|a| flags.contains(&a.as_str()));
    runs.then(|| format!("`{base}` runs a command or package named on its command line"))
}

/// Options with which a common program runs another one, or reads or writes what its words do
/// not name (issue 46: `tar --checkpoint-action=exec=...`, `sort --compress-program`,
/// `rsync -e`, `less +!cmd`, `ssh -o ProxyCommand=...`).
const RUNS_PROGRAMS: &[(&str, &[&str])] = &[
    (
        "tar",
        &[
            "--checkpoint-action",
            "-I",
            "--use-compress-program",
            "--to-command",
            "-F",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
            "--rmt-command",
        ],
    ),
    ("sort", &["--compress-program"]),
    ("rsync", &["-e", "--rsh", "--rsync-path"]),
    ("zip", &["-TT", "--unzip-command"]),
    ("ssh", &["-o", "-F"]),
    ("scp", &["-S", "-o", "-F"]),
    ("sftp", &["-S", "-o", "-F"]),
    ("gdb", &["-ex", "-x", "--eval-command", "--command", "-batch"]),
    ("man", &["-P", "--pager", "-H", "--html"]),
    ("vim", &["-c", "--cmd", "-S"]),
    ("vi", &["-c", "--cmd", "-S"]),
    ("nvim", &["-c", "--cmd", "-S"]),
    ("emacs", &["--eval", "-l", "--load", "-f", "--funcall"]),
];

/// Searches that read every file of a folder, sensitive ones too (as `grep -r` asks in the
/// known-safe table).
const TREE_SEARCHES: &[&str] = &["rg", "ag", "ack", "ugrep", "ack-grep"];

/// Programs that copy or unpack whole folders: what lands where cannot be told from the words.
fn copies_trees(base: &str, args: &[String]) -> bool {
    let cluster_has = |letters: &[char]| {
        args.iter()
            .take_while(|a| *a != "--")
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letters))
    };
    let long = |names: &[&str]| crate::shell::git::option_given(args, names);
    match base {
        "cp" => cluster_has(&['r', 'R', 'a']) || long(&["--recursive", "--archive"]),
        "rsync" => cluster_has(&['r', 'a']) || long(&["--recursive", "--archive"]),
        "tar" | "bsdtar" => {
            // `tar xf`, `tar -xf`, `--extract`, `--get`.
            let first = args.first().map(String::as_str).unwrap_or("");
            (!first.starts_with('-') && first.contains('x'))
                || cluster_has(&['x'])
                || long(&["--extract", "--get"])
        }
        "unzip" | "gunzip" | "cpio" | "7z" | "7za" | "unrar" => {
            !(long(&["--list"]) || args.iter().any(|a| a == "-l" || a == "-t" || a == "l"))
        }
        _ => false,
    }
}

/// Why `words` (a program whose base name is `base`) goes beyond a grant by what the program
/// itself does with its options.
fn program_beyond(base: &str, words: &[String], at: Place<'_>) -> Option<String> {
    let args = &words[1..];
    // `env -i`, `-u NAME`: toolbelt sets variables that keep git and others from running
    // programs (`GIT_CONFIG_*`); a command that drops them is not the one answered for.
    if base == "env"
        && args
            .iter()
            .enumerate()
            .take_while(|(_, a)| a.starts_with('-'))
            .any(|(i, a)| crate::shell::words::env_option(a, args.get(i + 1)).1)
    {
        return Some(
            "`env` here clears or unsets variables toolbelt sets to keep programs from running"
                .into(),
        );
    }
    if let Some((_, names)) = RUNS_PROGRAMS.iter().find(|(p, _)| *p == base)
        && crate::shell::git::option_given(args, names)
    {
        return Some(format!("an option of `{base}` here runs another program"));
    }
    if matches!(base, "less" | "more" | "most") && args.iter().any(|a| a.starts_with('+')) {
        return Some(format!("`{base} +...` runs a command"));
    }
    // Programs whose work is only known from a file or their input: a patch (which files it
    // writes), a list of names (`tar -T`, `--files0-from`, `zip -@`, `xargs`, `cpio`), a
    // compiler's response file (`@args`).
    let list_options = ["--files-from", "--files0-from", "--arg-file", "--names-stdin", "-@"];
    let reads_list = crate::shell::git::option_given(args, &list_options)
        || (base == "tar" && crate::shell::git::option_given(args, &["-T"]))
        || matches!(base, "patch" | "xargs" | "cpio" | "ed" | "ex");
    if reads_list {
        return Some(format!(
            "`{base}` here works on files or arguments named in a file or its input, which cannot be judged from its words"
        ));
    }
    const COMPILERS: &[&str] = &[
        "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "gfortran", "javac", "java", "rustc",
    ];
    if COMPILERS.contains(&base)
        && args.iter().any(|a| {
            a.starts_with('@')
                || a.starts_with("-wrapper")
                || a.starts_with("-B")
                || a.starts_with("-specs")
                || a.starts_with("--specs")
                || a.starts_with("-fplugin")
                || a.starts_with("-Xplugin")
                || a.starts_with("-agentpath")
                || a.starts_with("-javaagent")
        })
    {
        return Some(format!("an option of `{base}` here runs or loads another program"));
    }
    // Programs that read whole folders (sensitive files too) into an archive or a listing.
    let reads_folders = match base {
        "tar" | "bsdtar" => {
            args.iter().skip(1).any(|a| !a.starts_with('-') && at.cwd.join(a).is_dir())
        }
        "zip" => {
            args.iter()
                .take_while(|a| *a != "--")
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(['r', 'R']))
                || crate::shell::git::option_given(args, &["--recurse-paths", "--recurse-patterns"])
        }
        "diff" | "cmp" => {
            crate::shell::git::option_given(args, &["--recursive", "--new-file"])
                || args
                    .iter()
                    .take_while(|a| *a != "--")
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains('r'))
        }
        _ => false,
    };
    if reads_folders {
        return Some(format!("`{base}` here reads whole folders, sensitive files too"));
    }
    if copies_trees(base, args) {
        return Some(format!(
            "`{base}` here copies or unpacks whole folders, whose files (settings, hooks, GEMINI.md) cannot be told from its words"
        ));
    }
    let recursive_grep = matches!(base, "grep" | "egrep" | "fgrep")
        && (crate::shell::git::option_given(
            args,
            &["--recursive", "--dereference-recursive", "--directories"],
        ) || args.iter().take_while(|a| *a != "--").any(|a| {
            a.starts_with('-')
                && !a.starts_with("--")
                && (a[1..].contains(['r', 'R']) || a.starts_with("-d"))
        }));
    let tree_search = TREE_SEARCHES.contains(&base)
        && (args.iter().filter(|a| !a.starts_with('-')).count() < 2
            || args.iter().skip(1).any(|a| !a.starts_with('-') && at.cwd.join(a).is_dir()));
    if recursive_grep || tree_search {
        return Some(format!("`{base}` here searches whole folders, sensitive files too"));
    }
    // `cp a b DIR/`, `mv x .`, `-t DIR`: what a file becomes in the folder it goes to.
    if matches!(base, "cp" | "mv" | "install" | "ln" | "rsync") {
        let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        let target = args
            .iter()
            .position(|a| a == "-t" || a == "--target-directory")
            .and_then(|i| args.get(i + 1))
            .or_else(|| operands.last().copied().filter(|_| operands.len() >= 2));
        if let Some(dir) = target.map(|t| at.cwd.join(t)).filter(|d| d.is_dir()) {
            for src in operands.iter().filter(|o| Some(**o) != target) {
                let Some(name) = Path::new(src.as_str()).file_name() else { continue };
                let landed = normalized(&dir.join(name));
                if let Some(why) = at.files.and_then(|f| f.control(&landed)) {
                    return Some(format!("`{src}` would become {}: {why}", landed.display()));
                }
                if base == "mv" && at.cwd.join(src.as_str()).is_dir() {
                    return Some(format!("`mv` of the folder `{src}` moves whatever it holds"));
                }
            }
        }
    }
    None
}
