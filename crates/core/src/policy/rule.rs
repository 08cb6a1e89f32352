//! Policy data: rules, decisions, approval modes, tiers.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use fancy_regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What policy says about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run without asking.
    Allow,
    /// Refuse.
    Deny,
    /// Ask a person.
    AskUser,
}

impl Decision {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::AskUser => "ask_user",
        }
    }

    /// The TOML spelling, parsed.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "allow" => Some(Decision::Allow),
            "deny" => Some(Decision::Deny),
            "ask_user" => Some(Decision::AskUser),
            _ => None,
        }
    }
}

/// Approval modes, least to most permissive: plan < default < auto_edit < yolo.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum ApprovalMode {
    /// Read-only planning: tools that change things are denied.
    #[serde(rename = "plan")]
    Plan,
    /// Ask before anything that changes things.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// Edits (and web fetches) without asking.
    #[serde(rename = "autoEdit")]
    AutoEdit,
    /// Everything without asking.
    #[serde(rename = "yolo")]
    Yolo,
}

impl ApprovalMode {
    /// Accepts the CLI spelling (`auto_edit`) and the TOML one (`autoEdit`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "default" => Some(ApprovalMode::Default),
            "auto_edit" | "autoEdit" => Some(ApprovalMode::AutoEdit),
            "yolo" => Some(ApprovalMode::Yolo),
            "plan" => Some(ApprovalMode::Plan),
            _ => None,
        }
    }

    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Default => "default",
            ApprovalMode::AutoEdit => "autoEdit",
            ApprovalMode::Yolo => "yolo",
            ApprovalMode::Plan => "plan",
        }
    }

    /// This mode and every more permissive one (for "always allow" rules).
    pub fn and_more_permissive(self) -> Vec<ApprovalMode> {
        [ApprovalMode::Plan, ApprovalMode::Default, ApprovalMode::AutoEdit, ApprovalMode::Yolo]
            .into_iter()
            .filter(|m| *m >= self)
            .collect()
    }
}

/// Where rules come from; the tier is the integer part of a rule's final priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Tier {
    /// The bundled defaults.
    Default = 1,
    /// Extensions.
    Extension = 2,
    /// The workspace's `.gemini/policies`.
    Workspace = 3,
    /// The user's policies and `--policy` paths.
    User = 4,
    /// The system administrator's policies.
    Admin = 5,
}

impl Tier {
    /// The tier's name for people.
    pub fn label(self) -> &'static str {
        match self {
            Tier::Default => "Default",
            Tier::Extension => "Extension",
            Tier::Workspace => "Workspace",
            Tier::User => "User",
            Tier::Admin => "Admin",
        }
    }
}

/// Where a rule was written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleSource {
    /// e.g. `Default: read-only.toml` or `Dynamic (Confirmed)`.
    pub label: String,
    /// The file, when the rule came from one on disk.
    pub file: Option<PathBuf>,
}

/// A pattern compiled within the program and cache limits of [`crate::limits`].
fn compile(source: &str) -> Result<Regex, fancy_regex::Error> {
    fancy_regex::RegexBuilder::new(source)
        .delegate_size_limit(crate::limits::PATTERN_PROGRAM_BYTES)
        .delegate_dfa_size_limit(crate::limits::PATTERN_CACHE_BYTES)
        .build()
}

/// An `argsPattern`: checked when loaded, compiled the first time a rule needs it (compiling
/// every bundled pattern up front would cost more than the rest of start-up).
#[derive(Clone, Debug)]
pub struct ArgsPattern {
    source: String,
    /// The pattern compiled, and whether it needs the backtracking engine.
    compiled: Arc<OnceLock<Option<(Regex, bool)>>>,
}

impl PartialEq for ArgsPattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl ArgsPattern {
    /// Upstream's `isSafeRegExp`: at most 2048 characters, no nested quantifiers, valid syntax.
    pub fn new(source: impl Into<String>) -> Result<Self, String> {
        let source = source.into();
        if source.len() > 2048 {
            return Err(format!("argsPattern is longer than 2048 characters: {:.40}...", source));
        }
        if has_nested_quantifier(&source) {
            return Err(format!(
                "argsPattern {source:?} has nested quantifiers, which can take exponential time"
            ));
        }
        // Its price (issue 35): `x{100000}` is 9 characters and no nesting.
        crate::limits::check_pattern(&source, false)
            .map_err(|e| format!("argsPattern {source:?}: {e}"))?;
        let compiled = OnceLock::new();
        if regex_syntax::ast::parse::Parser::new().parse(&source).is_err() {
            // Perhaps a look-around or back-reference: compile now to know.
            let re = compile(&source)
                .map_err(|e| format!("argsPattern {source:?} is not a valid regex: {e}"))?;
            // These run on a backtracking engine, which gives up on some inputs (a deny rule
            // then fails closed, see `matches_or`); a repeated group of alternatives is the
            // classic way to make it give up, so such patterns are refused here.
            if has_repeated_alternation(&source) {
                return Err(format!(
                    "argsPattern {source:?} repeats a group of alternatives and needs the \
                     backtracking engine (look-around or a back-reference), which can give up; \
                     rewrite it without one of the two"
                ));
            }
            let _ = compiled.set(Some((re, true)));
        }
        Ok(Self { source, compiled: Arc::new(compiled) })
    }

    /// A pattern from the policy files built into toolbelt, taken without the checks of
    /// [`Self::new`]: they cost more at every start than the rest of loading the files, and
    /// `bundled_patterns_pass_the_checks` runs them on every bundled pattern.
    pub fn bundled(source: impl Into<String>) -> Result<Self, String> {
        Ok(Self { source: source.into(), compiled: Arc::new(OnceLock::new()) })
    }

    /// The regular expression's source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches somewhere in `text` (a pattern that fails to compile or to
    /// run matches nothing; see [`Self::matches_or`] for rules that must fail closed).
    pub fn is_match(&self, text: &str) -> bool {
        self.try_match(text).unwrap_or(false)
    }

    /// Whether the pattern matches, with `on_error` when it cannot tell (it does not compile,
    /// or the backtracking engine gives up on `text`): a deny rule then matches and an allow
    /// rule does not, so a pattern that cannot be evaluated never lets a call through.
    pub fn matches_or(&self, text: &str, on_error: bool) -> bool {
        match self.try_match(text) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(
                    "argsPattern {:?} cannot be evaluated ({e}); taken as {}",
                    self.source,
                    if on_error { "a match" } else { "no match" }
                );
                on_error
            }
        }
    }

    /// [`Self::try_match`], for tests that need a pattern the engine gives up on.
    #[cfg(test)]
    pub(crate) fn try_match_for_test(&self, text: &str) -> Result<bool, String> {
        self.try_match(text)
    }

    fn try_match(&self, text: &str) -> Result<bool, String> {
        let re = self.compiled.get_or_init(|| match compile(&self.source) {
            // Needing the backtracking engine: the linear one cannot parse it.
            Ok(r) => Some((r, regex_syntax::Parser::new().parse(&self.source).is_err())),
            Err(e) => {
                tracing::warn!("argsPattern {:?} does not compile: {e}", self.source);
                None
            }
        });
        match re {
            // Look-around and back-references run on the backtracking engine, whose time grows
            // with the square of the text: it is given short texts only.
            Some((_, true)) if text.len() > crate::limits::BACKTRACKING_TEXT_BYTES => Err(format!(
                "the pattern needs the backtracking engine (look-around or a back-reference), which is given at most {} KiB of arguments",
                crate::limits::BACKTRACKING_TEXT_BYTES >> 10
            )),
            Some((r, _)) => r.is_match(text).map_err(|e| e.to_string()),
            None => Err("it does not compile".into()),
        }
    }
}

/// A group holding `|` and followed by a quantifier (`(a|aa)*`), checked without a regex.
fn has_repeated_alternation(p: &str) -> bool {
    let b = p.as_bytes();
    let mut opens: Vec<(usize, bool)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'(' => opens.push((i, false)),
            b'|' => {
                if let Some(top) = opens.last_mut() {
                    top.1 = true;
                }
            }
            b')' => {
                if let Some((_, alternation)) = opens.pop()
                    && alternation
                    && b.get(i + 1).is_some_and(|c| matches!(c, b'*' | b'+' | b'{'))
                {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// Upstream rejects patterns matching `\([^)]*[*+?{].*\)[*+?{]` (a quantified group that
/// contains a quantifier), checked here without a regex.
fn has_nested_quantifier(p: &str) -> bool {
    let b = p.as_bytes();
    let quant = |c: u8| matches!(c, b'*' | b'+' | b'?' | b'{');
    for (i, _) in b.iter().enumerate().filter(|(_, c)| **c == b'(') {
        let Some(j) = b[i + 1..]
            .iter()
            .take_while(|c| **c != b')')
            .position(|c| quant(*c))
            .map(|j| i + 1 + j)
        else {
            continue;
        };
        let rest = &b[j + 1..];
        let line_end = rest.iter().position(|c| *c == b'\n').unwrap_or(rest.len());
        if rest[..line_end].windows(2).any(|w| w[0] == b')' && quant(w[1])) {
            return true;
        }
    }
    false
}

/// One policy rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// A name for people (shown by `policy list`).
    pub name: Option<String>,
    /// `*`, an exact name, `mcp_<server>_*`, `mcp_*`, or another `*` wildcard.
    pub tool_name: String,
    /// Only calls to tools of this MCP server.
    pub mcp_name: Option<String>,
    /// Only calls from this subagent.
    pub subagent: Option<String>,
    /// A regular expression the call's stable-stringified arguments must match.
    pub args_pattern: Option<ArgsPattern>,
    /// The `commandPrefix` the args pattern was made from, if any (kept for display and for
    /// saving the rule as it was written).
    pub command_prefix: Option<String>,
    /// The pattern was written about the shell command (`commandRegex`; `commandPrefix` rules
    /// have `command_prefix`): it is matched against the top-level `command` alone, so another
    /// argument holding a `"command"` key cannot satisfy it.
    pub command_regex: bool,
    /// Annotations the MCP tool must have, key by key.
    pub tool_annotations: Option<Map<String, Value>>,
    /// What the rule decides.
    pub decision: Decision,
    /// Final priority: tier + priority/1000.
    pub priority: f64,
    /// The approval modes the rule applies in (empty: all).
    pub modes: Vec<ApprovalMode>,
    /// Only in interactive (`Some(true)`) or headless (`Some(false)`) sessions.
    pub interactive: Option<bool>,
    /// Whether an allowed shell command may redirect output.
    pub allow_redirection: bool,
    /// Added to the model's message when the rule denies.
    pub deny_message: Option<String>,
    /// Where the rule came from.
    pub source: RuleSource,
    /// For an "always" answer's shell rule of this session: the options the approved command
    /// used; a later command of the same program and subcommand may use no other (issue 46).
    pub grant_options: Option<Vec<String>>,
}

impl Rule {
    /// A rule with only a tool name, decision and final priority set.
    pub fn new(
        tool_name: impl Into<String>,
        decision: Decision,
        priority: f64,
        label: &str,
    ) -> Self {
        Self {
            name: None,
            tool_name: tool_name.into(),
            mcp_name: None,
            subagent: None,
            args_pattern: None,
            command_prefix: None,
            command_regex: false,
            tool_annotations: None,
            decision,
            priority,
            modes: Vec::new(),
            interactive: None,
            allow_redirection: false,
            deny_message: None,
            source: RuleSource { label: label.to_string(), file: None },
            grant_options: None,
        }
    }

    /// The tier the rule's priority lies in (`tier + priority/1000`).
    pub fn tier(&self) -> Option<Tier> {
        match self.priority.floor() as i64 {
            1 => Some(Tier::Default),
            2 => Some(Tier::Extension),
            3 => Some(Tier::Workspace),
            4 => Some(Tier::User),
            5 => Some(Tier::Admin),
            _ => None,
        }
    }

    /// Whether the args pattern is about the shell command alone (see `command_regex`).
    pub fn matches_command(&self) -> bool {
        self.command_prefix.is_some() || self.command_regex
    }

    /// "Always allow" rules sit at x.95.
    pub fn is_always_allow(&self) -> bool {
        ((self.priority.fract() * 1000.0).round() as i64) == 950
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_quantifiers_are_refused_like_upstream() {
        for bad in ["(a+)+", "(a*)*", "x(a?b)+y", "(\\w{2})*"] {
            assert!(has_nested_quantifier(bad), "{bad}");
            assert!(ArgsPattern::new(bad).is_err(), "{bad}");
        }
        for ok in ["(a|b)+", "a+b*", "\"command\":\"git", "(ab)"] {
            assert!(!has_nested_quantifier(ok), "{ok}");
        }
    }

    #[test]
    fn patterns_are_checked_now_and_compiled_later() {
        assert!(ArgsPattern::new("(unclosed").is_err());
        assert!(ArgsPattern::new("a".repeat(2049)).is_err());
        // Issue 35: short, not nested, and megabytes compiled.
        let big = ArgsPattern::new("\"x{1000000}\"").unwrap_err();
        assert!(big.contains("Pattern too large") && big.contains("limit is 8 MiB"), "{big}");
        let p = ArgsPattern::new("\\x00\"file_path\":\"[\\w-]+\\.md\"").unwrap();
        assert!(p.is_match("\x00\"file_path\":\"plan.md\""));
        assert!(!p.is_match("\"file_path\":\"plan.rs\""));
        let look = ArgsPattern::new("foo(?!bar)").unwrap();
        assert!(look.is_match("foobaz") && !look.is_match("foobar"));
        // Issue 17: a deny rule whose look-ahead makes the backtracking engine give up denied
        // with 20 `a`s and allowed with 25 (the error was read as "no match").
        let source = "(a|aa)*(?=[^\"]*EVIL)c";
        // Refused at load now; built by hand here to check evaluation fails closed anyway.
        assert!(ArgsPattern::new(source).unwrap_err().contains("repeats a group of alternatives"));
        let hard = ArgsPattern { source: source.into(), compiled: Arc::new(OnceLock::new()) };
        let long = format!("{}b EVIL", "a".repeat(40));
        assert!(hard.matches_or(&long, true), "a deny rule that cannot tell matches");
        assert!(!hard.matches_or(&long, false), "an allow rule that cannot tell does not");
    }

    /// Issue 35 (fourth attack, N6): twenty rules of this shape in an untrusted repository's
    /// policy folder held `call --timeout-ms 2000` for 181 s on a 60 KB write (about 9 s a
    /// rule). A pattern that needs the backtracking engine is not run on long arguments, and
    /// the rule fails closed.
    #[test]
    fn a_backtracking_pattern_gives_up_early() {
        let p = ArgsPattern::new(format!("(?=a){}b1", ".*".repeat(12))).unwrap();
        let text = "a".repeat(60_000);
        let started = std::time::Instant::now();
        let r = p.try_match_for_test(&text);
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(r.is_err(), "{r:?}");
        assert!(p.matches_or(&text, true) && !p.matches_or(&text, false));
        // Short arguments are matched as ever; linear patterns on any length.
        let look = ArgsPattern::new("foo(?!bar)").unwrap();
        assert!(look.is_match("xx foobaz") && !look.is_match("foobar"));
        let plain = ArgsPattern::new(format!("{}b1", ".*".repeat(12))).unwrap();
        assert!(plain.try_match_for_test(&format!("{text}b1")) == Ok(true));
    }
}
