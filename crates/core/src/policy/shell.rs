//! The shell part of the policy engine: heuristics that turn "ask" into
//! "allow" for known-safe commands and "allow" into "ask" for dangerous ones, and the compound
//! check that makes a command as strict as its strictest sub-command.
//!
//! Beyond upstream (docs/compat.md, P-rows): heuristics also apply to each sub-command, so
//! `ls; pwd` runs without a prompt and `ls && rm -rf x` is asked about even under an allow-all
//! rule; prefix commands (`env`, `sudo`, `xargs`, `eval`, `VAR=x`, ...) are unwrapped and the
//! command they run is checked too; nesting deeper than [`MAX_DEPTH`] is asked about.

use std::path::Path;

/// Why a command whose program is only known when it runs is denied or asked about.
pub(super) const RUNTIME_PROGRAM: &str = "runs a program only known when it runs (a variable, a glob or brace pattern, or a script read from input)";

/// Whether the program `program` (a simple command, unwrapped) is only known at run time: its
/// name holds an expansion (`$x`, `/bin/r[m]`, `{rm,x}`), or it is a shell reading its script
/// from a redirection (`bash <<< 'rm x'`).
/// Whether any deny rule is about shell commands (a prefix or a command pattern): then a command
/// those rules cannot be checked against is denied rather than run.
fn shell_denies(rules: &[Rule]) -> bool {
    rules.iter().any(|r| r.decision == Decision::Deny && r.matches_command())
}

/// The decision for a command whose program is only known at run time (`text` names it in the
/// reason): denied when shell deny rules exist, else asked about instead of allowed (yolo keeps
/// its allow). `Err` carries a deny; `Ok` the decision and its reason, if it changed.
fn runtime_decision(
    text: &str,
    current: Decision,
    rules: &[Rule],
    ctx: &PolicyContext<'_>,
) -> Result<Option<(Decision, String)>, String> {
    if shell_denies(rules) {
        return Err(format!("`{text}` {RUNTIME_PROGRAM}, and deny rules for shell commands apply"));
    }
    if ctx.mode != ApprovalMode::Yolo && current == Decision::Allow {
        return Ok(Some((Decision::AskUser, format!("`{text}` {RUNTIME_PROGRAM}"))));
    }
    Ok(None)
}

fn runtime_program(program: &str, sub: &str) -> bool {
    let words = crate::shell::words::without_redirections(split_words(program));
    let Some(first) = words.first() else { return false };
    if first.contains(['$', '[', ']', '*', '?', '{', '}']) {
        return true;
    }
    let base = first.rsplit('/').next().unwrap_or(first);
    let shell =
        matches!(base, "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "fish" | "source" | ".");
    let script_operand = words[1..].iter().any(|w| !w.starts_with('-') && w != "/dev/stdin");
    shell && !script_operand && crate::shell::has_redirection(sub)
}

/// Why a git command is asked about in a folder that is not trusted.
pub(super) const UNTRUSTED_GIT: &str = "it runs git in an untrusted folder";

use super::call::{PolicyCall, PolicyContext, Verdict};
use super::places::{redirections_stay_in_workspace, workspace};
use super::rule::{ApprovalMode, Decision, Rule};
use crate::shell::safety::{self, Place};
use crate::shell::words::{canonical_command, unwrap_command};
use crate::shell::{has_redirection, parse_command, split_words, strip_shell_wrapper};

/// How deep wrappers and sub-commands are followed before giving up (and asking).
pub const MAX_DEPTH: usize = 8;

fn strictest(a: Decision, b: Decision) -> Decision {
    let rank = |d| match d {
        Decision::Allow => 0,
        Decision::AskUser => 1,
        Decision::Deny => 2,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn default_decision(ctx: &PolicyContext<'_>) -> Decision {
    if ctx.interactive { Decision::AskUser } else { Decision::Deny }
}

/// Why a command was allowed by the known-safe table.
pub(super) const KNOWN_SAFE: &str = "it is a known read-only command";

/// Heuristics on the words of a command (4.5).
pub(super) fn heuristics(
    command: &str,
    decision: Decision,
    dir_path: Option<&str>,
    ctx: &PolicyContext<'_>,
) -> (Decision, Option<&'static str>) {
    if decision == Decision::Deny {
        return (decision, None);
    }
    let words = split_words(command);
    let ws = workspace(ctx);
    let cwd = dir_path.map_or_else(|| ws.clone(), |d| ws.join(d));
    let at = Place {
        workspace: &ws,
        cwd: &cwd,
        files: ctx.files,
        confined: ctx.confinable,
        search_path: ctx.search_path,
    };
    let yolo = ctx.mode == ApprovalMode::Yolo;
    let git_untrusted = !ctx.trusted_folder && safety::contains_git(&words);
    if !yolo && !crate::shell::safety::path_inside(&cwd, &ws) {
        return (Decision::AskUser, Some("its working directory is outside the workspace"));
    }
    // `yolo` is the person's word that every call runs (a repository that can steer the model
    // could have it run any program anyway); the question is for the other modes.
    if git_untrusted && !yolo {
        return (Decision::AskUser, Some(UNTRUSTED_GIT));
    }
    if safety::is_dangerous(&words) {
        return if yolo {
            (decision, None)
        } else {
            (Decision::AskUser, Some("it is a dangerous command"))
        };
    }
    // The words must be the words bash will run: no brace expansion, ANSI-C quoting or
    // parameter expansion, and globs that match nothing outside.
    let expansions = crate::shell::expansion::scan(command);
    if decision == Decision::AskUser
        && expansions.plain()
        && safety::is_known_safe(&words, at)
        && (!expansions.glob || safety::globs_stay_inside(&words, at))
    {
        return (Decision::Allow, Some(KNOWN_SAFE));
    }
    (decision, None)
}

/// Whether a redirecting command's "allow" becomes "ask" (`redirects` is computed by the
/// caller, which may already know it from its parse). Only `yolo` lets a redirection through
/// unasked (`auto_edit` did too, so `echo ... >> ~/.toolbelt/policies/x.toml` ran unasked;
/// issue 34): in `auto_edit`, [`redirections_stay_in_workspace`] decides.
fn downgrade_for_redirection(
    redirects: bool,
    allow: bool,
    command: &str,
    dir_path: Option<&str>,
    ctx: &PolicyContext<'_>,
) -> bool {
    if !redirects || allow || ctx.mode == ApprovalMode::Yolo {
        return false;
    }
    !(ctx.mode == ApprovalMode::AutoEdit && redirections_stay_in_workspace(command, dir_path, ctx))
}

/// The compound check (4.6): `decision` is the matched rule's (after heuristics), `rule` the
/// rule that matched, if any, and `confine` whether the known-safe table made it an allow.
/// The evaluator, passed in so that this module does not import it back: each sub-command of a
/// compound command is evaluated as a call of its own, one level deeper.
pub(super) type EvaluateAt = fn(&PolicyCall<'_>, &[Rule], &PolicyContext<'_>, usize) -> Verdict;

/// Where the sub-commands of a compound command run: every folder a `cd` before them may have
/// moved to (a `cd` in a subshell or behind `||` may or may not apply, so both count), or
/// unknown after a `cd` the parser cannot follow (`cd $X`, `cd -`, `popd`).
#[derive(Clone, Debug)]
struct Folders {
    candidates: Vec<Option<String>>,
    unknown: bool,
}

/// More candidate folders than this: unknown.
const MAX_FOLDERS: usize = 8;

impl Folders {
    fn new(dir_path: Option<&str>) -> Self {
        Folders { candidates: vec![dir_path.map(String::from)], unknown: false }
    }

    /// After the sub-command `words`: a `cd`/`pushd` adds where it goes.
    fn after(&mut self, words: &[String]) {
        let Some(first) = words.first() else { return };
        match first.as_str() {
            "cd" | "pushd" => {}
            "popd" => {
                self.unknown = true;
                return;
            }
            _ => return,
        }
        let ops: Vec<&String> =
            words[1..].iter().filter(|w| !w.starts_with('-') || *w == "-").collect();
        let Some(target) = ops.first().filter(|t| {
            ops.len() == 1
                && !t.is_empty()
                && **t != "-"
                && !t.contains(['$', '`', '~', '*', '?', '[', '{'])
        }) else {
            self.unknown = true;
            return;
        };
        let mut next = self.candidates.clone();
        for c in &self.candidates {
            let joined = Path::new(c.as_deref().unwrap_or("")).join(target);
            let j = Some(joined.to_string_lossy().into_owned());
            if !next.contains(&j) {
                next.push(j);
            }
        }
        if next.len() > MAX_FOLDERS {
            self.unknown = true;
        }
        self.candidates = next;
    }
}

/// What one sub-command comes to.
struct Judged {
    decision: Decision,
    rule: Option<Rule>,
    why: String,
    /// Allowed by the known-safe table.
    confine: bool,
    /// An allow rule allowed (part of) it.
    ruled: bool,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn check_command(
    call: &PolicyCall<'_>,
    command: &str,
    dir_path: Option<&str>,
    decision: Decision,
    rule: Option<&Rule>,
    confine: bool,
    rules: &[Rule],
    ctx: &PolicyContext<'_>,
    depth: usize,
    evaluate_at: EvaluateAt,
) -> Verdict {
    let verdict = |decision, rule: Option<&Rule>, reason: String| {
        Verdict::new(decision, rule.cloned(), reason)
    };
    if command.trim().is_empty() {
        return verdict(decision, rule, "empty command".into());
    }
    if depth > MAX_DEPTH {
        let d = strictest(decision, default_decision(ctx));
        return verdict(d, rule, format!("the command nests deeper than {MAX_DEPTH} levels"));
    }
    let parsed = parse_command(command).filter(|p| !p.has_error);
    let Some(parsed) = parsed else {
        if decision == Decision::Deny {
            return verdict(
                Decision::Deny,
                rule,
                "denied (the command could not be parsed)".into(),
            );
        }
        if ctx.mode == ApprovalMode::Yolo {
            // Deny rules for shell commands cannot be checked against a command that does not
            // parse (`{rm,x}` is a brace expansion bash runs): it is denied when there are any.
            let d = if shell_denies(rules) || rule.is_some_and(|r| r.args_pattern.is_some()) {
                Decision::Deny
            } else {
                Decision::Allow
            };
            return verdict(d, rule, "yolo mode; the command could not be parsed".into());
        }
        return verdict(
            default_decision(ctx),
            rule,
            "the command could not be parsed, so it cannot be checked".into(),
        );
    };
    if decision == Decision::Deny {
        return verdict(Decision::Deny, rule, String::new());
    }
    let mut agg = decision;
    let mut responsible: Option<Rule> = rule.cloned();
    let mut why = String::new();
    let mut confined = confine;
    let mut ruled = rule.is_some_and(|r| r.decision == Decision::Allow);
    // Text the parser finds no command in (`{rm,x}` is a brace expansion to bash) still runs
    // something: its program is only known at run time.
    if parsed.details.iter().all(|d| d.is_marker()) && runtime_program(command.trim(), command) {
        match runtime_decision(command.trim(), agg, rules, ctx) {
            Err(reason) => return verdict(Decision::Deny, None, reason),
            Ok(Some((d, reason))) => (agg, why) = (d, reason),
            Ok(None) => {}
        }
    }
    let mut folders = Folders::new(dir_path);
    for d in parsed.details.iter().filter(|d| !d.is_marker()) {
        let sub = d.text.trim();
        // Atomic: the rules above saw exactly this text. A sub-command that is only part of it
        // (` rm x`, `>/dev/null rm x`) is checked again on its own.
        let atomic = d.start == 0 && d.text.len() == command.len();
        if folders.unknown {
            // Issue 34: `cd` hides what a later path names; a `cd` the parser cannot follow
            // leaves the rest to a person.
            let v = judge_sub(
                call,
                command,
                sub,
                false,
                dir_path,
                decision,
                rule,
                confine,
                rules,
                ctx,
                depth,
                evaluate_at,
            );
            let j = match v {
                Ok(j) => j,
                Err(v) => return *v,
            };
            if j.decision == Decision::Deny {
                return verdict(Decision::Deny, j.rule.as_ref(), j.why);
            }
            agg = strictest(agg, strictest(j.decision, Decision::AskUser));
            why = format!("`{sub}` runs after a `cd` whose folder cannot be told");
            responsible = None;
            confined = false;
            folders.after(&split_words(sub));
            continue;
        }
        let mut eff: Option<Judged> = None;
        for dir in folders.candidates.clone() {
            let j = match judge_sub(
                call,
                command,
                sub,
                atomic,
                dir.as_deref(),
                decision,
                rule,
                confine,
                rules,
                ctx,
                depth,
                evaluate_at,
            ) {
                Ok(j) => j,
                Err(v) => return *v,
            };
            eff = Some(match eff {
                None => j,
                Some(prev) if strictest(prev.decision, j.decision) != prev.decision => {
                    Judged { confine: prev.confine || j.confine, ruled: prev.ruled || j.ruled, ..j }
                }
                Some(prev) => Judged {
                    confine: prev.confine || j.confine,
                    ruled: prev.ruled || j.ruled,
                    ..prev
                },
            });
        }
        folders.after(&split_words(sub));
        let Some(j) = eff else { continue };
        if j.decision == Decision::Allow {
            confined |= j.confine;
            ruled |= j.ruled;
        }
        if strictest(agg, j.decision) != agg || atomic {
            if !j.why.is_empty() {
                why = j.why.clone();
            }
            if j.rule.is_some() {
                responsible = j.rule.clone();
            }
        }
        agg = if atomic { j.decision } else { strictest(agg, j.decision) };
    }
    let allow_redirection = rule.is_some_and(|r| r.allow_redirection);
    if agg == Decision::Allow
        && downgrade_for_redirection(
            parsed.has_redirection,
            allow_redirection,
            command,
            dir_path,
            ctx,
        )
    {
        agg = Decision::AskUser;
        why = "the command redirects input or output".into();
        responsible = None;
    }
    if agg == decision {
        responsible = rule.cloned();
    }
    let mut v = verdict(agg, responsible.as_ref(), why);
    // A redirection that is still allowed was let through by `auto_edit` (a person's choice of
    // mode): the write is what the command is for, so it runs as the mode allows, unconfined.
    v.confine = agg == Decision::Allow
        && confined
        && !ruled
        && !parsed.has_redirection
        && ctx.mode != ApprovalMode::Yolo;
    v
}

/// One sub-command, in the folder `dir_path`: its own rules and heuristics, the scripts and
/// commands it wraps, redirections. `Err` is a verdict that ends the whole check (a deny).
#[allow(clippy::too_many_arguments)]
fn judge_sub(
    call: &PolicyCall<'_>,
    command: &str,
    sub: &str,
    atomic: bool,
    dir_path: Option<&str>,
    decision: Decision,
    rule: Option<&Rule>,
    confine: bool,
    rules: &[Rule],
    ctx: &PolicyContext<'_>,
    depth: usize,
    evaluate_at: EvaluateAt,
) -> Result<Judged, Box<Verdict>> {
    let check_in = |text: &str, dir_path: Option<&str>| {
        let args = serde_json::json!({ "command": text, "dir_path": dir_path });
        let c = PolicyCall { args: &args, ..*call };
        let v = evaluate_at(&c, rules, ctx, depth + 1);
        // A command an "always" allowed inside a wrapper (`env -u X git ...`): the wrapper's
        // words are held to the same boundary (issue 46).
        let grant = v
            .rule
            .as_ref()
            .filter(|r| v.decision == Decision::Allow && r.decision == Decision::Allow)
            .filter(|r| r.is_always_allow());
        match grant.and_then(|g| super::grant::beyond(sub, dir_path, ctx, g)) {
            Some(why) if ctx.mode != ApprovalMode::Yolo => Verdict::new(
                Decision::AskUser,
                v.rule.clone(),
                format!("an \"always allow\" answer does not cover `{sub}`: {why}"),
            ),
            _ => v,
        }
    };
    let check = |text: &str| check_in(text, dir_path);
    let allowed_by_rule =
        |v: &Verdict| v.rule.as_ref().is_some_and(|r| r.decision == Decision::Allow);
    let mut responsible: Option<Rule> = None;
    let mut why = String::new();
    // The sub-command on its own (the whole command was matched above, in the folder the call
    // names; in another folder a `cd` moved to, it is judged again there).
    // `own_default`: no rule looked at this command's text, so a decision about the command
    // it runs (`FOO=1 ls` -> `ls`) is more specific.
    let generic = |r: Option<&Rule>| r.is_none_or(|r| r.args_pattern.is_none());
    let (mut eff, own_default, mut confined, mut ruled) = if atomic && dir_path == dir_path_of(call)
    {
        (decision, generic(rule), confine, rule.is_some_and(|r| r.decision == Decision::Allow))
    } else {
        let v = check(sub);
        if v.decision == Decision::Deny {
            return Err(Box::new(v));
        }
        if v.decision != Decision::Allow {
            responsible = v.rule.clone();
            why = format!("the sub-command `{sub}` needs approval ({})", v.reason);
        }
        (v.decision, generic(v.rule.as_ref()), v.confine, allowed_by_rule(&v))
    };
    let _ = command;
    // Re-quoted forms (`cat '*'`) no longer show what bash expands: when the text has
    // expansions, they can only make the decision stricter.
    let expansions = crate::shell::expansion::scan(sub);
    let literal = expansions.plain() && !expansions.glob;
    let unwrapped = unwrap_command(sub);
    let stripped = strip_shell_wrapper(sub);
    let mut take = |eff: &mut Decision, v: &Verdict, what: String, replace: bool| {
        if replace {
            *eff = v.decision;
        } else {
            if strictest(*eff, v.decision) != *eff {
                why = what;
                responsible = v.rule.clone().or(responsible.take());
            }
            *eff = strictest(*eff, v.decision);
        }
        if v.decision == Decision::Allow {
            confined |= v.confine;
            ruled |= allowed_by_rule(v);
        }
    };
    if stripped != sub {
        let v = check(&stripped);
        if v.decision == Decision::Deny {
            return Err(Box::new(v));
        }
        let what = format!("the wrapped script `{stripped}` needs approval ({})", v.reason);
        take(&mut eff, &v, what, false);
    }
    if let Some((canon, transparent)) = canonical_command(sub) {
        let v = check(&canon);
        if v.decision == Decision::Deny {
            return Err(Box::new(v));
        }
        let what = format!("`{sub}` runs `{canon}`, which needs approval ({})", v.reason);
        take(&mut eff, &v, what, transparent && own_default && literal);
    }
    if let Some(u) = &unwrapped {
        // `env -C DIR cmd` runs `cmd` in DIR: it is judged there.
        let dir = u.chdir.as_deref().map(|c| {
            if c.contains(['$', '`', '~']) {
                // A folder only known when the command runs: judged as outside.
                "/".to_string()
            } else {
                Path::new(dir_path.unwrap_or("")).join(c).to_string_lossy().into_owned()
            }
        });
        let v = check_in(&u.inner, dir.as_deref().or(dir_path));
        if v.decision == Decision::Deny {
            return Err(Box::new(v));
        }
        let what = format!("the command `{}` it runs needs approval ({})", u.inner, v.reason);
        take(&mut eff, &v, what, u.transparent && own_default && literal);
    }
    // A program named by a variable (`x=rm; $x f`) is only known when the command runs: no
    // rule can have allowed it, and a deny rule might be about it.
    let program = unwrapped.map_or_else(|| sub.to_string(), |u| u.inner);
    // `${!x}` and `${a[...]}` evaluate text as code when the command runs.
    if runtime_program(&program, sub) || expansions.hidden_code {
        match runtime_decision(sub, eff, rules, ctx) {
            Err(reason) => return Err(Box::new(Verdict::new(Decision::Deny, None, reason))),
            Ok(Some((d, reason))) => (eff, why) = (d, reason),
            Ok(None) => {}
        }
    }
    if !atomic
        && eff == Decision::Allow
        && downgrade_for_redirection(has_redirection(sub), false, sub, dir_path, ctx)
    {
        eff = Decision::AskUser;
        why = format!("the sub-command `{sub}` redirects input or output");
    }
    Ok(Judged { decision: eff, rule: responsible, why, confine: confined, ruled })
}

/// The `dir_path` a shell call names.
fn dir_path_of<'a>(call: &PolicyCall<'a>) -> Option<&'a str> {
    call.args.get("dir_path").and_then(serde_json::Value::as_str)
}
