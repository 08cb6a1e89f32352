//! What an "always allow" answer covers (issue 46). A person who answers "always" to `rm a.txt`
//! judged the removal of a file of this workspace, not `rm -rf ~/.ssh`; the rule the answer
//! leaves behind names the program (upstream's `commandPrefix`), so every later command it
//! matches is held to the boundary that decides what runs unasked (issue 34) before the
//! answer counts: the command stays in the workspace, in a form that is not dangerous, and
//! touches no sensitive file and no file that decides what runs. Anything else is asked as if
//! no "always" had been given. Saved answers (`auto-saved.toml`) are held to the same line.

use std::path::{Path, PathBuf};

use super::call::PolicyContext;
use super::rule::Rule;

mod programs;
use crate::shell::place::{Place, normalized, path_escapes, path_inside};
use crate::shell::words::{unwrap_command, without_redirections};
use crate::shell::{assignments, parse_command, split_words};
use programs::{code_on_the_line, program_beyond};

/// What an "always" answer for the programs `roots` covers, in words a person reads before
/// choosing it (the same sentence in every front door).
pub fn covers(roots: &[String]) -> String {
    let names: Vec<String> = roots.iter().map(|r| format!("`{r}`")).collect();
    format!(
        "{} commands that stay in this workspace (dangerous forms, paths outside, sensitive files and files that decide what runs are still asked)",
        names.join(", ")
    )
}

/// Programs whose first word names what they do (`git add`, `npm test`, `kubectl get`): an
/// answer is for that subcommand, not the program's others (`npm pkg set`, `kubectl config
/// view --raw`, `terraform console`).
const SUBCOMMANDS: &[&str] = &[
    "git",
    "npm",
    "yarn",
    "pnpm",
    "bun",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "poetry",
    "cargo",
    "go",
    "rustup",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "tofu",
    "gh",
    "glab",
    "apt",
    "apt-get",
    "brew",
    "dnf",
    "yum",
    "conda",
    "mamba",
    "bundle",
    "gem",
    "composer",
    "dotnet",
    "gradle",
    "mvn",
    "deno",
    "swift",
    "flutter",
    "dart",
    "mix",
    "stack",
    "cabal",
    "nix",
    "gcloud",
    "aws",
    "az",
    "systemctl",
    "journalctl",
    "npx",
    "pnpx",
    "bunx",
    "uvx",
];

/// The shape an "always" answer remembers for each program of a command: the program (with
/// its subcommand, or the package a runner ran) as the rule's prefix, and the options it
/// was given. `None` for a command that does not parse.
pub fn shapes(command: &str) -> Option<Vec<(String, Vec<String>)>> {
    let parsed = parse_command(command).filter(|p| !p.has_error)?;
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for detail in parsed.details.iter().filter(|d| !d.is_marker()) {
        let words = dashed(without_redirections(split_words(detail.text.trim())));
        let start = words.iter().take_while(|w| assignments::is_assignment(w)).count();
        let Some(program) = words.get(start) else { continue };
        let args = &words[start + 1..];
        let mut prefix = program.clone();
        // A runner's package may come after its options (`npx --yes prettier`).
        let runner = matches!(program.as_str(), "npx" | "pnpx" | "bunx" | "uvx");
        let sub = if runner {
            args.iter().find(|a| !a.starts_with('-'))
        } else {
            args.first().filter(|a| !a.starts_with('-'))
        };
        if SUBCOMMANDS.contains(&program.as_str())
            && let Some(sub) = sub
            && !sub.contains(['"', '\\', '\'', '$', '`', '&', '|', ';', '>', '<'])
        {
            prefix = format!("{program} {sub}");
        }
        let mut options = options_of(args);
        // What an installer installed (`=name`): another package is another question.
        if INSTALLERS.contains(&prefix.as_str()) {
            options.extend(operands(&args[1..]).map(|o| format!("={o}")));
        }
        match out.iter_mut().find(|(p, _)| *p == prefix) {
            Some((_, seen)) => {
                for o in options {
                    if !seen.contains(&o) {
                        seen.push(o);
                    }
                }
            }
            None => out.push((prefix, options)),
        }
    }
    Some(out)
}

/// The option names among `args` (before `--`): long ones without their values, and each
/// letter of a cluster of short ones up to the first character that is not a letter.
fn options_of(args: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |o: String| {
        if !out.contains(&o) {
            out.push(o);
        }
    };
    for a in args.iter().take_while(|a| *a != "--") {
        if let Some(long) = a.strip_prefix("--") {
            add(format!("--{}", long.split('=').next().unwrap_or(long)));
        } else if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            for c in cluster.chars().take_while(char::is_ascii_alphanumeric) {
                add(format!("-{c}"));
            }
            if !cluster.starts_with(|c: char| c.is_ascii_alphanumeric()) {
                add(a.clone());
            }
        }
    }
    out
}

/// Subcommands that install packages, whose install scripts run (`npm install ./pkg`,
/// `pip install URL`): an answer covers the packages it installed, not others.
const INSTALLERS: &[&str] = &[
    "npm install",
    "npm i",
    "npm add",
    "npm ci",
    "npm update",
    "pnpm add",
    "pnpm install",
    "pnpm i",
    "yarn add",
    "yarn install",
    "bun add",
    "bun install",
    "pip install",
    "pip3 install",
    "pipx install",
    "uv add",
    "uv pip",
    "poetry add",
    "cargo install",
    "cargo add",
    "gem install",
    "go install",
    "go get",
    "bundle add",
    "composer require",
    "dotnet add",
];

/// Programs whose first word is a cluster of options without a dash (`tar cIf PROG ...`).
const DASHLESS: &[&str] = &["tar", "bsdtar", "gtar", "ar", "ps"];

/// `words` with such a first cluster given its dash, so options are seen as options.
fn dashed(mut words: Vec<String>) -> Vec<String> {
    let start = words.iter().take_while(|w| assignments::is_assignment(w)).count();
    let base = words.get(start).map(|p| p.rsplit('/').next().unwrap_or(p).to_string());
    if base.is_some_and(|b| DASHLESS.contains(&b.as_str()))
        && let Some(first) = words.get_mut(start + 1)
        && !first.starts_with('-')
        && !first.is_empty()
        && first.chars().all(|c| c.is_ascii_alphanumeric())
    {
        first.insert(0, '-');
    }
    words
}

/// The words of `args` that are not options (all after `--`).
fn operands(args: &[String]) -> impl Iterator<Item = &String> {
    let mut options = true;
    args.iter().filter(move |a| {
        if options && *a == "--" {
            options = false;
            return false;
        }
        !(options && a.starts_with('-'))
    })
}

/// Why `words` use options the answer did not see, when they are the granted program.
fn new_options(words: &[String], grant: &Rule) -> Option<String> {
    let prefix: Vec<&str> = grant.command_prefix.as_deref()?.split(' ').collect();
    let start = words.iter().take_while(|w| assignments::is_assignment(w)).count();
    let words = &words[start..];
    if words.len() < prefix.len() || words.iter().zip(&prefix).any(|(w, p)| w != p) {
        return None;
    }
    let installer = INSTALLERS.contains(&prefix.join(" ").as_str());
    let Some(allowed) = grant.grant_options.as_ref() else {
        // A saved answer for an installer covers the project's own install, no package named.
        return (installer && operands(&words[prefix.len()..]).next().is_some()).then(|| {
            format!("`{}` of a named package runs that package's install scripts", prefix.join(" "))
        });
    };
    if installer
        && let Some(p) =
            operands(&words[prefix.len()..]).find(|o| !allowed.contains(&format!("={o}")))
    {
        return Some(format!(
            "it installs `{p}`, which the answer did not see; installing runs a package's scripts"
        ));
    }
    // `pip --version` answered: `pip config set ...` is another subcommand.
    if let [program] = prefix.as_slice()
        && SUBCOMMANDS.contains(program)
        && !matches!(*program, "npx" | "pnpx" | "bunx" | "uvx")
        && let Some(sub) = words.get(1).filter(|a| !a.starts_with('-'))
    {
        return Some(format!("it runs `{program} {sub}`, a subcommand the answer did not see"));
    }
    let new: Vec<String> =
        options_of(&words[1..]).into_iter().filter(|o| !allowed.contains(o)).collect();
    (!new.is_empty()).then(|| {
        format!(
            "it uses options the answer did not see ({}); an \"always\" covers `{}` as it was asked",
            new.join(", "),
            prefix.join(" ")
        )
    })
}

/// [`covers`] for the command asked about: each program with its subcommand and the options
/// the answer will allow (`git add` with -A).
pub fn covers_command(command: &str, roots: &[String]) -> String {
    let shapes = shapes(&crate::shell::strip_shell_wrapper(command)).unwrap_or_default();
    let named: Vec<String> = roots
        .iter()
        .map(|root| {
            let shape =
                shapes.iter().find(|(p, _)| p == root || p.starts_with(&format!("{root} ")));
            match shape {
                Some((p, o)) if !o.is_empty() => format!("`{p}` (with {})", o.join(" ")),
                Some((p, _)) => format!("`{p}`"),
                None => format!("`{root}`"),
            }
        })
        .collect();
    format!(
        "{} commands that stay in this workspace (other options, dangerous forms, paths outside, sensitive files and files that decide what runs are still asked)",
        named.join(", ")
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
    grant: &Rule,
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
            let (why, cd) = sub_beyond(detail.text.trim(), base, &ws, ctx, grant);
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
    grant: &Rule,
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
        let words = dashed(without_redirections(split_words(&text)));
        if let Some(why) = new_options(&words, grant).or_else(|| simple_beyond(&words, at)) {
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
    // A `file:` URL names a path, with its %-escapes decoded (`file:///home/u/.%73sh/id_rsa`).
    if let Some(rest) =
        word.get(..5).filter(|s| s.eq_ignore_ascii_case("file:")).map(|_| &word[5..])
    {
        let path = rest.strip_prefix("//").map_or(rest, |r| r.find('/').map_or("/", |i| &r[i..]));
        let decoded = percent_decoded(path);
        if decoded.contains('%') || path_escapes(&decoded, at) || decoded != path {
            return Some(format!(
                "`{word}` names a file outside the workspace, or one given in escapes"
            ));
        }
        return path_beyond(&decoded, at);
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

/// `text` with its `%XX` escapes decoded (invalid ones kept).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|b| hex(*b)),
            bytes.get(i + 2).and_then(|b| hex(*b)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
