//! The shell part of the policy engine: heuristics that turn "ask" into
//! "allow" for known-safe commands and "allow" into "ask" for dangerous ones, and the compound
//! check that makes a command as strict as its strictest sub-command.
//!
//! Beyond upstream (docs/compat.md, P-rows): heuristics also apply to each sub-command, so
//! `ls; pwd` runs without a prompt and `ls && rm -rf x` is asked about even under an allow-all
//! rule; prefix commands (`env`, `sudo`, `xargs`, `eval`, `VAR=x`, ...) are unwrapped and the
//! command they run is checked too; nesting deeper than [`MAX_DEPTH`] is asked about.

use std::path::{Path, PathBuf};

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

fn workspace(ctx: &PolicyContext<'_>) -> PathBuf {
    ctx.workspace
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

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
    let at = Place { workspace: &ws, cwd: &cwd };
    let yolo = ctx.mode == ApprovalMode::Yolo;
    let git_untrusted = !ctx.trusted_folder && safety::contains_git(&words);
    if !yolo && !crate::shell::safety::path_inside(&cwd, &ws) {
        return (Decision::AskUser, Some("its working directory is outside the workspace"));
    }
    if git_untrusted {
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
        return (Decision::Allow, Some("it is a known read-only command"));
    }
    (decision, None)
}

/// Whether a redirecting command's "allow" becomes "ask" (`redirects` is computed by the
/// caller, which may already know it from its parse).
fn downgrade_for_redirection(redirects: bool, allow: bool, ctx: &PolicyContext<'_>) -> bool {
    redirects && !allow && !matches!(ctx.mode, ApprovalMode::AutoEdit | ApprovalMode::Yolo)
}

/// The compound check (4.6): `decision` is the matched rule's (after heuristics), `rule` the
/// rule that matched, if any.
/// The evaluator, passed in so that this module does not import it back: each sub-command of a
/// compound command is evaluated as a call of its own, one level deeper.
pub(super) type EvaluateAt = fn(&PolicyCall<'_>, &[Rule], &PolicyContext<'_>, usize) -> Verdict;

#[allow(clippy::too_many_arguments)]
pub(super) fn check_command(
    call: &PolicyCall<'_>,
    command: &str,
    dir_path: Option<&str>,
    decision: Decision,
    rule: Option<&Rule>,
    rules: &[Rule],
    ctx: &PolicyContext<'_>,
    depth: usize,
    evaluate_at: EvaluateAt,
) -> Verdict {
    let verdict = |decision, rule: Option<&Rule>, reason: String| Verdict {
        decision,
        rule: rule.cloned(),
        reason,
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
    // Text the parser finds no command in (`{rm,x}` is a brace expansion to bash) still runs
    // something: its program is only known at run time.
    if parsed.details.iter().all(|d| d.is_marker()) && runtime_program(command.trim(), command) {
        match runtime_decision(command.trim(), agg, rules, ctx) {
            Err(reason) => return verdict(Decision::Deny, None, reason),
            Ok(Some((d, reason))) => (agg, why) = (d, reason),
            Ok(None) => {}
        }
    }
    for d in parsed.details.iter().filter(|d| !d.is_marker()) {
        let sub = d.text.trim();
        // Atomic: the rules above saw exactly this text. A sub-command that is only part of it
        // (` rm x`, `>/dev/null rm x`) is checked again on its own.
        let atomic = d.start == 0 && d.text.len() == command.len();
        let check_in = |text: &str, dir_path: Option<&str>| {
            let args = serde_json::json!({ "command": text, "dir_path": dir_path });
            let c = PolicyCall { args: &args, ..*call };
            evaluate_at(&c, rules, ctx, depth + 1)
        };
        let check = |text: &str| check_in(text, dir_path);
        // The sub-command on its own (the whole command was matched above).
        // `own_default`: no rule looked at this command's text, so a decision about the command
        // it runs (`FOO=1 ls` -> `ls`) is more specific.
        let generic = |r: Option<&Rule>| r.is_none_or(|r| r.args_pattern.is_none());
        let (mut eff, own_default) = if atomic {
            (agg, generic(rule))
        } else {
            let v = check(sub);
            if v.decision == Decision::Deny {
                return v;
            }
            if v.decision != Decision::Allow {
                responsible = v.rule.clone().or(responsible);
                why = format!("the sub-command `{sub}` needs approval ({})", v.reason);
            }
            (v.decision, generic(v.rule.as_ref()))
        };
        // Re-quoted forms (`cat '*'`) no longer show what bash expands: when the text has
        // expansions, they can only make the decision stricter.
        let expansions = crate::shell::expansion::scan(sub);
        let literal = expansions.plain() && !expansions.glob;
        let unwrapped = unwrap_command(sub);
        let stripped = strip_shell_wrapper(sub);
        if stripped != sub {
            let v = check(&stripped);
            if v.decision == Decision::Deny {
                return v;
            }
            if strictest(eff, v.decision) != eff {
                why = format!("the wrapped script `{stripped}` needs approval ({})", v.reason);
                responsible = v.rule.clone().or(responsible);
            }
            eff = strictest(eff, v.decision);
        }
        if let Some((canon, transparent)) = canonical_command(sub) {
            let v = check(&canon);
            if v.decision == Decision::Deny {
                return v;
            }
            if transparent && own_default && literal {
                eff = v.decision;
            } else {
                if strictest(eff, v.decision) != eff {
                    why = format!("`{sub}` runs `{canon}`, which needs approval ({})", v.reason);
                    responsible = v.rule.clone().or(responsible);
                }
                eff = strictest(eff, v.decision);
            }
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
                return v;
            }
            if u.transparent && own_default && literal {
                eff = v.decision;
            } else {
                if strictest(eff, v.decision) != eff {
                    why =
                        format!("the command `{}` it runs needs approval ({})", u.inner, v.reason);
                    responsible = v.rule.clone().or(responsible);
                }
                eff = strictest(eff, v.decision);
            }
        }
        // A program named by a variable (`x=rm; $x f`) is only known when the command runs: no
        // rule can have allowed it, and a deny rule might be about it.
        let program = unwrapped.map_or_else(|| sub.to_string(), |u| u.inner);
        // `${!x}` and `${a[...]}` evaluate text as code when the command runs.
        if runtime_program(&program, sub) || expansions.hidden_code {
            match runtime_decision(sub, eff, rules, ctx) {
                Err(reason) => return verdict(Decision::Deny, None, reason),
                Ok(Some((d, reason))) => (eff, why) = (d, reason),
                Ok(None) => {}
            }
        }
        if !atomic
            && eff == Decision::Allow
            && downgrade_for_redirection(has_redirection(sub), false, ctx)
        {
            eff = Decision::AskUser;
            why = format!("the sub-command `{sub}` redirects input or output");
        }
        agg = if atomic { eff } else { strictest(agg, eff) };
    }
    let allow_redirection = rule.is_some_and(|r| r.allow_redirection);
    if agg == Decision::Allow
        && downgrade_for_redirection(parsed.has_redirection, allow_redirection, ctx)
    {
        agg = Decision::AskUser;
        why = "the command redirects input or output".into();
        responsible = None;
    }
    if agg == decision {
        responsible = rule.cloned();
    }
    verdict(agg, responsible.as_ref(), why)
}
