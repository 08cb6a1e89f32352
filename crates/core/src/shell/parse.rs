//! Commands parsed with tree-sitter-bash: every `command` node anywhere in the tree (lists,
//! pipelines, subshells, command and process substitutions) plus markers for redirections,
//! heredocs, herestrings, substitutions and subshells, as upstream's `parseCommandDetails`.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, Parser};

/// The text of all commands found may be at most this many times the command's length (plus
/// 1 MiB); beyond it the command is unreadable (see [`parse_command`]).
const TEXT_BUDGET_FACTOR: usize = 16;

/// Parsing is cut off after this long; a partial tree is never trusted.
const PARSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Marker names: entries that are not commands.
pub const MARKER_NAMES: &[&str] = &[
    "redirection (<)",
    "redirection (>)",
    "heredoc (<<)",
    "herestring (<<<)",
    "command substitution",
    "backtick substitution",
    "process substitution",
    "subshell",
];

/// One command (or marker) found in the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandDetail {
    /// The command name (quotes stripped) or a marker name.
    pub name: String,
    /// The node's source text, trimmed.
    pub text: String,
    /// Where the node starts in the source, in bytes.
    pub start: usize,
}

impl CommandDetail {
    /// Whether the command is one of the shell's markers (no program of its own).
    pub fn is_marker(&self) -> bool {
        MARKER_NAMES.contains(&self.name.as_str())
    }
}

/// What the parser made of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedCommand {
    /// In source order.
    pub details: Vec<CommandDetail>,
    /// A syntax error, nothing found, or a `${var@P}` prompt transform (which can run commands).
    pub has_error: bool,
    /// A redirection, heredoc or herestring anywhere.
    pub has_redirection: bool,
    /// Every file redirection's target: whether it reads (`<`) and the target's text, quotes
    /// stripped (`2>&1` gives `&1`).
    pub redirect_targets: Vec<(bool, String)>,
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
}

fn new_parser() -> Option<Parser> {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
    Some(p)
}

/// The command with each byte of a non-ASCII character replaced by `x`: the
/// same shape for the parser (offsets unchanged; such characters are word characters to bash
/// and can never be operators or quotes). tree-sitter-bash's scanner passes characters to C's
/// `isdigit` and friends, which read out of bounds for large code points: `{` followed by
/// U+E0130 or U+31860 crashed the whole process with SIGSEGV (tree-sitter-bash issue #337,
/// found here by the generated-input tests).
fn ascii_shape(command: &str) -> Vec<u8> {
    command.bytes().map(|b| if b.is_ascii() { b } else { b'x' }).collect()
}

/// Parses a command; `None` when the parser is unavailable, the command is blank, or parsing
/// took too long.
pub fn parse_command(command: &str) -> Option<ParsedCommand> {
    if command.trim().is_empty() {
        return None;
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = slot.as_mut()?;
        let deadline = Instant::now() + PARSE_TIMEOUT;
        let mut timed_out = false;
        let mut progress = |_: &tree_sitter::ParseState| {
            timed_out = Instant::now() > deadline;
            timed_out
        };
        let bytes = command.as_bytes();
        // The parser reads an ASCII copy (see [`ascii_shape`]); names and text come from the
        // command itself, at the same byte offsets.
        let shape = ascii_shape(command);
        let mut read = |i: usize, _| if i < shape.len() { &shape[i..] } else { &[][..] };
        let tree = parser.parse_with_options(
            &mut read,
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        if timed_out {
            parser.reset();
            return None;
        }
        let tree = tree?;
        let root = tree.root_node();
        let mut details = Vec::new();
        // Each nested command keeps its own text, so text grows with the square of the
        // nesting: 16,000 `$(` in 32 KB took 10 GB. Past this budget the command counts as
        // unreadable (and is asked about, or denied), in bounded memory.
        let mut budget = TEXT_BUDGET_FACTOR.saturating_mul(command.len()).saturating_add(1 << 20);
        let mut has_redirection = false;
        let mut redirect_targets = Vec::new();
        let mut prompt_transform = false;
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if let Some(name) = name_of(node, bytes) {
                let text = command.get(node.start_byte()..node.end_byte()).unwrap_or("").trim();
                budget = budget.checked_sub(text.len())?;
                details.push(CommandDetail {
                    name,
                    text: text.to_string(),
                    start: node.start_byte(),
                });
            }
            match node.kind() {
                "file_redirect" => {
                    has_redirection = true;
                    let input = name_of(node, bytes).is_some_and(|n| n == "redirection (<)");
                    // The destination's text as written (quotes kept): what bash makes of
                    // quoting is judged by the caller, which refuses anything quoted.
                    let target = node
                        .child_by_field_name("destination")
                        .map(|d| text(d, bytes).trim().to_string());
                    // A target the grammar does not name cannot be judged: an empty one never
                    // passes.
                    redirect_targets.push((input, target.unwrap_or_default()));
                }
                "redirected_statement" | "heredoc_redirect" | "herestring_redirect" => {
                    has_redirection = true
                }
                "expansion" if is_prompt_transform(node, bytes) => prompt_transform = true,
                _ => {}
            }
            // Children by cursor: `child(i)` walks the siblings from the first each time, so
            // an error node with 48,000 children took 29 s (`"$(` nested 16,000 deep).
            let first = stack.len();
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
            stack[first..].reverse();
        }
        details.sort_by_key(|d| d.start);
        let has_error = root.has_error() || details.is_empty() || prompt_transform;
        Some(ParsedCommand { details, has_error, has_redirection, redirect_targets })
    })
}

/// The file redirections of `command` (see [`ParsedCommand::redirect_targets`]); `None` when it
/// does not parse.
pub fn redirection_targets(command: &str) -> Option<Vec<(bool, String)>> {
    parse_command(command).filter(|p| !p.has_error).map(|p| p.redirect_targets)
}

fn text<'a>(node: Node<'_>, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

fn normalize_name(raw: &str) -> String {
    let b = raw.as_bytes();
    if b.len() >= 2
        && ((b[0] == b'"' && b[b.len() - 1] == b'"') || (b[0] == b'\'' && b[b.len() - 1] == b'\''))
    {
        return raw[1..raw.len() - 1].to_string();
    }
    raw.trim().to_string()
}

fn name_of(node: Node<'_>, src: &[u8]) -> Option<String> {
    Some(match node.kind() {
        "command" => normalize_name(text(node.child_by_field_name("name")?, src)),
        "declaration_command" | "unset_command" | "test_command" => {
            normalize_name(text(node.child(0)?, src))
        }
        "file_redirect" => {
            let mut name = "redirection (>)";
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                let t = text(c, src);
                if t.contains('<') {
                    name = "redirection (<)";
                    break;
                }
                if t.contains('>') {
                    break;
                }
            }
            name.to_string()
        }
        "heredoc_redirect" => "heredoc (<<)".into(),
        "herestring_redirect" => "herestring (<<<)".into(),
        "command_substitution" => "command substitution".into(),
        "backtick_substitution" => "backtick substitution".into(),
        "process_substitution" => "process substitution".into(),
        "subshell" => "subshell".into(),
        _ => return None,
    })
}

/// `${var@P}` expands prompt escapes, which can run command substitutions.
fn is_prompt_transform(node: Node<'_>, src: &[u8]) -> bool {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    children.windows(2).any(|w| text(w[0], src) == "@" && text(w[1], src).eq_ignore_ascii_case("p"))
}

/// Whether the command redirects input or output anywhere. Without any `<` or `>` it cannot.
pub fn has_redirection(command: &str) -> bool {
    if !command.contains(['<', '>']) {
        return false;
    }
    parse_command(command).is_none_or(|p| p.has_redirection)
}

/// The names of the commands, in order, without markers; empty when the parse failed.
pub fn command_roots(command: &str) -> Vec<String> {
    match parse_command(command) {
        Some(p) if !p.has_error => p
            .details
            .into_iter()
            .filter(|d| !d.is_marker() && !d.name.is_empty())
            .map(|d| d.name)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by an adversarial review (issue 20): 16,000 nested `$(` (32 KB) made the parse
    /// keep 10 GB of command text; such a command is now unreadable, in bounded memory.
    #[test]
    fn deep_nesting_is_unreadable_not_a_memory_bomb() {
        for open in ["$(", "\"$(", "<("] {
            let n = 16_000;
            let c = format!("{}echo{}", open.repeat(n), ")".repeat(n));
            let p = parse_command(&c);
            assert!(p.is_none_or(|p| p.has_error), "{open}");
        }
        // Ordinary nesting still parses.
        let p = parse_command("echo $(echo $(echo $(ls)))").unwrap();
        assert_eq!(p.details.iter().filter(|d| !d.is_marker()).count(), 4);
    }

    /// tree-sitter-bash issue #337: these crashed the process (SIGSEGV) before the parser was
    /// given an ASCII shape of the command.
    #[test]
    fn a_brace_then_a_large_code_point_does_not_crash_the_parser() {
        for c in [
            "{\u{e0130}",
            "{\u{31860}",
            "x{\u{f0000}",
            "echo `{\u{e0130}`",
            "&\u{97a}\u{16f98}?`/\u{a8f}\u{468}|?{\u{e0130}/",
        ] {
            let _ = parse_command(c);
        }
        let p = parse_command("echo caf\u{e9} | grep \u{e9}t\u{e9}").unwrap();
        let names: Vec<&str> = p.details.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["echo", "grep"]);
        assert_eq!(p.details[1].text, "grep \u{e9}t\u{e9}");
        assert!(!p.has_error);
        let p = parse_command("\u{e9}cho x").unwrap();
        assert_eq!(p.details[0].name, "\u{e9}cho");
    }

    fn names(cmd: &str) -> Vec<String> {
        parse_command(cmd).unwrap().details.into_iter().map(|d| d.name).collect()
    }

    #[test]
    fn finds_every_command_and_marker() {
        assert_eq!(names("ls -la && rm -rf x"), ["ls", "rm"]);
        assert_eq!(
            names("mkdir a && echo hi > a/f; ls"),
            ["mkdir", "echo", "redirection (>)", "ls"]
        );
        assert_eq!(
            names("cat < in | grep x > out"),
            ["cat", "redirection (<)", "grep", "redirection (>)"]
        );
        assert_eq!(names("echo $(rm x)"), ["echo", "command substitution", "rm"]);
        assert_eq!(names("(cd a && make)"), ["subshell", "cd", "make"]);
        assert_eq!(
            names("diff <(ls a) <(ls b)"),
            ["diff", "process substitution", "ls", "process substitution", "ls"]
        );
    }

    #[test]
    fn texts_are_the_sub_commands() {
        let p = parse_command("git log && rm -rf /").unwrap();
        let texts: Vec<_> = p.details.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(texts, ["git log", "rm -rf /"]);
        assert!(!p.has_error && !p.has_redirection);
    }

    #[test]
    fn errors_and_prompt_transforms_are_flagged() {
        assert!(parse_command("echo 'unterminated").unwrap().has_error);
        assert!(parse_command("if then fi )").unwrap().has_error);
        assert!(parse_command("echo ${x@P}").unwrap().has_error);
        assert!(parse_command("   ").is_none());
    }

    #[test]
    fn redirection_is_seen_only_where_it_is_real() {
        assert!(has_redirection("echo hi > f"));
        assert!(has_redirection("cat <<EOF\nx\nEOF"));
        assert!(!has_redirection("echo '>'"));
        assert!(!has_redirection("ls"));
    }

    #[test]
    fn roots_skip_markers() {
        assert_eq!(command_roots("cat < f | grep x"), ["cat", "grep"]);
        assert!(command_roots("echo 'x").is_empty());
    }
}
