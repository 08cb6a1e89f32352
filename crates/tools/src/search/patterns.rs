//! grep_search's patterns, compiled with a ceiling: a 13-byte pattern compiled to about
//! 230 MiB, and 64 at once aborted `toolbelt mcp` (issue 35). A pattern is first refused by its
//! size (`toolbelt_core::limits::check_pattern`, nothing compiled), then compiled with the
//! program and cache limits of `toolbelt_core::limits`; either way the error names the limit.

use toolbelt_core::limits;
use toolbelt_core::result::{ErrorType, ToolResult};

use super::matcher::{BuildError, LineMatcher};

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Checks the patterns when the call is built, compiling nothing: first as upstream checks
/// them, with JavaScript's `RegExp` (its message, word for word: see [`super::js_syntax`]),
/// then their price (the estimate of `toolbelt_core::limits`, case folding included). The
/// compile waits for the call's turn among the costly calls (64 calls compiling at once took
/// 510 MB, issue 35); a pattern JavaScript accepts and the matcher does not (a lookbehind, a
/// backreference) is refused then, with the matcher's words.
pub(super) fn check(
    pattern: &str,
    fixed: bool,
    case_sensitive: bool,
    exclude: Option<&str>,
) -> Result<(), String> {
    let js = |p: &str, what: &str| {
        super::js_syntax::error(p).map_or(Ok(()), |why| {
            Err(format!(
                "Invalid {what}regular expression pattern provided: {p}. Error: Invalid regular expression: /{p}/: {why}"
            ))
        })
    };
    if !fixed {
        js(pattern, "")?;
    }
    if let Some(x) = exclude {
        js(x, "exclude ")?;
    }
    limits::check_pattern_with(pattern, fixed, !case_sensitive)?;
    if let Some(x) = exclude {
        limits::check_pattern_with(x, false, !case_sensitive)?;
    }
    Ok(())
}

/// Why a checked pattern was not compiled.
pub(super) enum Refused {
    /// Over a ceiling, or an exclude pattern the matcher cannot read: an invalid-parameters
    /// error.
    Params(String),
    /// A pattern JavaScript accepts and ripgrep does not (a lookbehind, a backreference, `\k`):
    /// what ripgrep prints (upstream passes it on as the search's failure, not as an error).
    Ripgrep(String),
}

/// The search pattern's matcher and the exclude pattern, if any. The call was built after
/// [`check`] passed: the patterns are not priced or parsed for their message again.
pub(super) fn compile(
    pattern: &str,
    fixed: bool,
    case_sensitive: bool,
    exclude: Option<&str>,
) -> Result<(LineMatcher, Option<regex::Regex>), Refused> {
    let exclude = match exclude {
        Some(x) => Some(
            regex::RegexBuilder::new(x)
                .case_insensitive(!case_sensitive)
                .size_limit(limits::PATTERN_PROGRAM_BYTES)
                .dfa_size_limit(limits::PATTERN_CACHE_BYTES)
                .build()
                .map_err(|e| match e {
                    regex::Error::CompiledTooBig(_) => Refused::Params(limits::too_large(None)),
                    e => Refused::Params(format!(
                        "Invalid exclude regular expression pattern provided: {x}. Error: {}",
                        one_line(&e.to_string())
                    )),
                })?,
        ),
        None => None,
    };
    let matcher = LineMatcher::new(pattern, fixed, !case_sensitive).map_err(|e| match e {
        BuildError::TooLarge => Refused::Params(limits::too_large(None)),
        BuildError::Invalid(text) => Refused::Ripgrep(ripgrep_says(&text)),
    })?;
    Ok((matcher, exclude))
}

impl Refused {
    /// The tool's answer: an error, or (as upstream answers ripgrep's refusal) the search's
    /// failure.
    pub(super) fn answer(self) -> ToolResult {
        match self {
            Refused::Params(e) => ToolResult::simple_error(ErrorType::InvalidToolParams, e),
            Refused::Ripgrep(said) => ToolResult::text(
                format!("Error during grep search operation: Process exited with code 2: {said}"),
                format!("Error: Process exited with code 2: {said}"),
            ),
        }
    }
}

/// What the model reads upstream when ripgrep cannot compile a pattern (recorded from the
/// oracle with rg 13, a fact of the output): the parser's error, then, for look-around and
/// backreferences, the advice line ripgrep prints.
fn ripgrep_says(error: &str) -> String {
    let pcre2 = error.contains("look-around") || error.contains("backreferences");
    let advice = if pcre2 {
        "\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around.\n"
    } else {
        ""
    };
    format!("{error}\n{advice}")
}
