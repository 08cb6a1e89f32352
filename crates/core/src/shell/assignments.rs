//! Variable assignments in front of a command (`NAME=value cmd`, `env NAME=value cmd`): which
//! ones are known not to change what runs or what it loads. Anything else (`PATH`, `BASH_ENV`,
//! `LD_PRELOAD`, `GIT_*`, `PAGER`, `HOME`, or a name not in the list) makes the command ask.

/// Names whose value only changes formatting, language or diagnostics output.
const HARMLESS: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "GREP_COLOR",
    "GREP_COLORS",
    "LS_COLORS",
    "TIME_STYLE",
    "QUOTING_STYLE",
    "BLOCK_SIZE",
    "POSIXLY_CORRECT",
    "RUST_BACKTRACE",
    "RUST_LOG",
];

/// Whether `word` is an assignment (`NAME=value`, NAME a shell identifier).
pub fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Whether the assignment `word` is known to be harmless: a name from the list (or `LC_*`)
/// and a value without expansions.
pub fn is_harmless(word: &str) -> bool {
    let Some((name, value)) = word.split_once('=') else { return false };
    let known = HARMLESS.contains(&name) || name.starts_with("LC_");
    known && !value.contains(['$', '`'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_names_are_harmless() {
        assert!(is_harmless("LC_ALL=C"));
        assert!(is_harmless("TZ=UTC"));
        for w in ["PATH=.", "BASH_ENV=x", "LD_PRELOAD=x", "GIT_DIR=x", "HOME=.", "FOO=1", "TZ=$x"] {
            assert!(!is_harmless(w), "{w}");
        }
        assert!(is_assignment("A_1=x"));
        assert!(!is_assignment("1A=x"));
        assert!(!is_assignment("--opt=x"));
    }
}
