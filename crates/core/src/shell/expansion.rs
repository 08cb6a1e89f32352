//! What bash will expand in a command that a word-level view does not see: ANSI-C and locale
//! quoting (`$'--output'`), parameter expansions (`${x}`, `${!x}`), brace expansion
//! (`{-exec,touch}`) and globs. A command that uses them is not "known safe" on its words alone
//! (adversarial review, issue 18): `find a {-exec,touch} x \;` ran a program and
//! `git diff $'--output=x'` wrote a file, both allowed without asking.

/// The expansions found outside single quotes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expansions {
    /// `$'...'` or `$"..."`.
    pub special_quotes: bool,
    /// `${...}`.
    pub parameter: bool,
    /// An unquoted `{a,b}` or `{a..b}`.
    pub brace: bool,
    /// An unquoted `*`, `?` or `[`.
    pub glob: bool,
    /// `${!name}` (indirection) or `${name[...]}` (a subscript, evaluated as arithmetic, which
    /// can run command substitutions): code only known when the command runs.
    pub hidden_code: bool,
}

impl Expansions {
    /// Whether the words a splitter sees are the words bash will run, globs aside.
    pub fn plain(&self) -> bool {
        !(self.special_quotes || self.parameter || self.brace)
    }
}

/// Scans `command` for expansions, following bash's quoting.
pub fn scan(command: &str) -> Expansions {
    let chars: Vec<char> = command.chars().collect();
    let mut e = Expansions::default();
    let mut i = 0;
    let mut double = false;
    // Per word: an unquoted `{` seen, and a `,` or `..` after it.
    let mut brace_open = false;
    let mut brace_sep = false;
    // The next `}` and `[` at or after a position, found by pointers that only move forward:
    // a body scanned to its `}` at every `${` took seconds on `${` repeated 20,000 times.
    let (mut close, mut bracket) = (0, 0);
    let next_of = |from: usize, at: &mut usize, wanted: char| {
        *at = (*at).max(from);
        while *at < chars.len() && chars[*at] != wanted {
            *at += 1;
        }
        *at
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\\' => {
                i += 2;
                continue;
            }
            '\'' if !double => {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            '"' => double = !double,
            '$' if !double && matches!(next, Some('\'' | '"')) => e.special_quotes = true,
            '$' if next == Some('{') => {
                e.parameter = true;
                let end = next_of(i + 2, &mut close, '}');
                if chars.get(i + 2) == Some(&'!') || next_of(i + 2, &mut bracket, '[') < end {
                    e.hidden_code = true;
                }
            }
            '{' if !double => brace_open = true,
            ',' if !double && brace_open => brace_sep = true,
            '.' if !double && brace_open && next == Some('.') => brace_sep = true,
            '}' if !double && brace_open && brace_sep => e.brace = true,
            '*' | '?' | '[' if !double => e.glob = true,
            c if c.is_whitespace() && !double => {
                brace_open = false;
                brace_sep = false;
            }
            _ => {}
        }
        i += 1;
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_bash_would_do_are_found() {
        assert!(scan("find a {-exec,touch} x \\;").brace);
        assert!(scan("cat {..,.}/secret").brace);
        assert!(scan("echo {1..3}").brace);
        assert!(!scan("echo '{a,b}'").brace);
        assert!(!scan("echo \"{a,b}\"").brace);
        assert!(!scan("find . -exec ls {} ;").brace);
        assert!(scan("git diff $'--output=x'").special_quotes);
        assert!(!scan("echo '$x'").special_quotes);
        assert!(scan("echo ${HOME}").parameter);
        assert!(scan("echo \"${HOME}\"").parameter);
        assert!(!scan("echo '${HOME}'").parameter);
        assert!(scan("echo ${y:=a[x]} ${!y}").hidden_code);
        assert!(!scan("echo ${HOME}").hidden_code);
        assert!(scan("cat *.txt").glob);
        assert!(!scan("grep '*' f").glob);
        assert!(!scan("ls $'x'").plain());
        assert!(scan("ls -la src").plain());
        assert!(scan("echo ${a} ${b[0]}").hidden_code);
        assert!(!scan("echo ${a} [x] ${b}").hidden_code);
        // Linear: 200,000 unclosed `${` (was seconds, scanning to the end at each).
        let many = "${".repeat(200_000);
        let t = std::time::Instant::now();
        assert!(scan(&many).parameter);
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
    }
}
