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
    let ws = super::shell::workspace(ctx);
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
        super::shell::redirections_stay_in_workspace(command, Some(&base.to_string_lossy()), ctx)
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
    let mut options = true;
    for w in &words[1..] {
        let value = if options && w == "--" {
            options = false;
            continue;
        } else if options && w.starts_with("--") {
            match w.split_once('=') {
                Some((_, v)) => v,
                None => continue,
            }
        } else if options && w.starts_with('-') && w.len() > 1 {
            // A value glued to a short option (`-o/etc/x`): judged from its first `/` or `~`.
            match w.find(['/', '~']) {
                Some(at) => &w[at..],
                None => continue,
            }
        } else {
            w.as_str()
        };
        if let Some(why) = path_beyond(value, at) {
            return Some(why);
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
