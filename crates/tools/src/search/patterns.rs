//! grep_search's patterns, compiled with a ceiling: a 13-byte pattern compiled to about
//! 230 MiB, and 64 at once aborted `toolbelt mcp` (issue 35). A pattern is first refused by its
//! size (`toolbelt_core::limits::check_pattern`, nothing compiled), then compiled with the
//! program and cache limits of `toolbelt_core::limits`; either way the error names the limit.

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use toolbelt_core::limits;

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The search pattern's matcher and the exclude pattern, if any.
pub(super) fn compile(
    pattern: &str,
    fixed: bool,
    case_sensitive: bool,
    exclude: Option<&str>,
) -> Result<(RegexMatcher, Option<regex::Regex>), String> {
    limits::check_pattern(pattern, fixed)?;
    if let Some(x) = exclude {
        limits::check_pattern(x, false)?;
    }
    if !fixed {
        // Parsed first for upstream's message (the matcher's own says less).
        regex_syntax::Parser::new().parse(pattern).map_err(|e| {
            format!(
                "Invalid regular expression pattern provided: {pattern}. Error: {}",
                one_line(&e.to_string())
            )
        })?;
    }
    let exclude = match exclude {
        Some(x) => Some(
            regex::RegexBuilder::new(x)
                .case_insensitive(!case_sensitive)
                .size_limit(limits::PATTERN_PROGRAM_BYTES)
                .dfa_size_limit(limits::PATTERN_CACHE_BYTES)
                .build()
                .map_err(|e| match e {
                    regex::Error::CompiledTooBig(_) => limits::too_large(None),
                    e => format!(
                        "Invalid exclude regular expression pattern provided: {x}. Error: {}",
                        one_line(&e.to_string())
                    ),
                })?,
        ),
        None => None,
    };
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(!case_sensitive)
        .fixed_strings(fixed)
        .line_terminator(Some(b'\n'))
        .size_limit(limits::PATTERN_PROGRAM_BYTES)
        .dfa_size_limit(limits::PATTERN_CACHE_BYTES)
        .build(pattern)
        .map_err(|e| {
            let text = e.to_string();
            if text.contains("size limit") || text.contains("exceeds") {
                return limits::too_large(None);
            }
            format!(
                "Invalid regular expression pattern provided: {pattern}. Error: {}",
                one_line(&text)
            )
        })?;
    Ok((matcher, exclude))
}
