//! Rules that load but can never do what they say: what `policy lint` reports beyond the
//! files' own errors, and what a session warns about.

use super::{PolicyFileError, Rule};

/// Shell rules whose `commandRegex` can never match: upstream (and toolbelt) match it against
/// the call's arguments as JSON, after the text `"command":"`, with no multi-line flag, so an
/// anchor (`^rm`, `\Arm`, `(^rm|shred)`, `rm$`) can never hold there. Such a deny rule silently
/// never applies (issue 34); `policy lint` reports it and a session warns.
pub fn never_matching(rules: &[Rule]) -> Vec<PolicyFileError> {
    let mut out: Vec<PolicyFileError> = Vec::new();
    for r in rules.iter().filter(|r| r.command_regex) {
        let Some(p) = &r.args_pattern else { continue };
        let Some(re) = p.source().strip_prefix("\"command\":\"") else { continue };
        if !anchored(re) {
            continue;
        }
        let file = r
            .source
            .file
            .as_ref()
            .map_or_else(|| r.source.label.clone(), |f| f.display().to_string());
        if out.iter().any(|e| e.file == file && e.message.contains(re)) {
            continue;
        }
        let unanchored = re.trim_start_matches('^').trim_start_matches("\\A").trim_end_matches('$');
        out.push(PolicyFileError {
            line: r.source.file.as_ref().and_then(|f| {
                let text = std::fs::read_to_string(f).ok()?;
                text.lines()
                    .position(|l| l.contains("commandRegex") && l.contains(unanchored))
                    .map(|i| i + 1)
            }),
            file,
            message: format!(
                "`commandRegex = {re:?}` can never match, so this {} rule never applies: the \
                 pattern is matched against the call's arguments as JSON, after `\"command\":\"`, \
                 where `^`, `\\A`, `$` and `\\z` cannot hold. Leave the anchor out \
                 (`commandRegex = {unanchored:?}` already matches at the start of the command), \
                 or use `commandPrefix`",
                r.decision.as_str()
            ),
        });
    }
    out
}

/// Whether a regex holds a start or end anchor (outside a class), by its syntax tree.
fn anchored(re: &str) -> bool {
    use regex_syntax::hir::{Hir, HirKind, Look};
    fn walk(h: &Hir) -> bool {
        match h.kind() {
            HirKind::Look(l) => matches!(
                l,
                Look::Start
                    | Look::End
                    | Look::StartLF
                    | Look::EndLF
                    | Look::StartCRLF
                    | Look::EndCRLF
            ),
            HirKind::Capture(c) => walk(&c.sub),
            HirKind::Repetition(r) => walk(&r.sub),
            HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().any(walk),
            _ => false,
        }
    }
    regex_syntax::Parser::new().parse(re).is_ok_and(|h| walk(&h))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34, finding 10: a deny rule with an anchored `commandRegex` never applied and
    /// `policy lint` said "no problems".
    #[test]
    fn anchored_command_regexes_are_reported() {
        for re in ["^rm", "\\Arm", "^(rm|shred) ", "(^rm|shred)", "rm -rf /$", "(?m)^rm"] {
            let text = format!(
                "[[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = {re:?}\ndecision = \"deny\"\npriority = 100\n"
            );
            let loaded =
                crate::policy::toml::load_str(&text, crate::policy::Tier::User, "t.toml", None);
            assert!(loaded.errors.is_empty(), "{re}: {:?}", loaded.errors);
            let found = never_matching(&loaded.rules);
            assert_eq!(found.len(), 1, "{re}");
            assert!(found[0].message.contains("can never match"), "{}", found[0].message);
        }
        for re in ["rm", "rm -rf", "(rm|shred) ", "[^a]rm", "\\^rm"] {
            let text = format!(
                "[[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = {re:?}\ndecision = \"deny\"\n"
            );
            let loaded =
                crate::policy::toml::load_str(&text, crate::policy::Tier::User, "t.toml", None);
            assert!(never_matching(&loaded.rules).is_empty(), "{re}");
        }
    }
}
