//! What common programs do beyond their words, for the grant boundary: interpreters and
//! tools whose command line carries code, options that run other programs, folders copied,
//! unpacked or searched whole, names read from lists, and where a copied file lands.

use std::path::Path;

use crate::shell::place::{Place, normalized};
use crate::shell::words::option_given;

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

/// Database shells: what follows the database is SQL and dot-commands (`.shell`, `.output`,
/// `readfile()`), or it is read from input.
const SQL_SHELLS: &[&str] = &["sqlite3", "sqlite", "duckdb", "psql", "mysql", "mariadb"];

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
pub(super) fn code_on_the_line(base: &str, words: &[String]) -> Option<String> {
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
    if SQL_SHELLS.contains(&name) {
        return Some(format!("`{base}` runs the statements given on its command line or input"));
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
    let given = |names: &[&str]| option_given(args, names);
    match base {
        "cp" => given(&["-r", "-R", "-a", "--recursive", "--archive"]),
        "rsync" => given(&["-r", "-a", "--recursive", "--archive"]),
        "tar" | "bsdtar" => {
            // `tar xf`, `tar -xf`, `--extract`, `--get`.
            let first = args.first().map(String::as_str).unwrap_or("");
            (!first.starts_with('-') && first.contains('x')) || given(&["-x", "--extract", "--get"])
        }
        "unzip" | "gunzip" | "cpio" | "7z" | "7za" | "unrar" => {
            !(given(&["--list"]) || args.iter().any(|a| a == "-l" || a == "-t" || a == "l"))
        }
        _ => false,
    }
}

/// Why `words` (a program whose base name is `base`) goes beyond a grant by what the program
/// itself does with its options.
pub(super) fn program_beyond(base: &str, words: &[String], at: Place<'_>) -> Option<String> {
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
        && option_given(args, names)
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
    let reads_list = option_given(args, &list_options)
        || (base == "tar" && option_given(args, &["-T"]))
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
        "zip" => option_given(args, &["-r", "-R", "--recurse-paths", "--recurse-patterns"]),
        "diff" | "cmp" => option_given(args, &["-r", "--recursive", "--new-file"]),
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
        && (option_given(
            args,
            &["-r", "-R", "--recursive", "--dereference-recursive", "--directories"],
        ) || args.iter().take_while(|a| *a != "--").any(|a| a.starts_with("-d")));
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
