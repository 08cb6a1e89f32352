//! Word-level views of a command: a shell-quote style splitter (quotes removed, operators as
//! their own tokens, `$VAR` kept literally), wrapper stripping (`bash -c '...'`), unwrapping of
//! prefix commands (`env`, `sudo`, `VAR=x`, ...), and upstream's command-substitution guard.

use std::sync::LazyLock;

use regex::Regex;

use super::assignments;

/// The operator tokens [`split_words`] yields as words of their own.
pub const OPERATORS: &[&str] =
    &["&&", "||", ";;", "|&", ">>", ">&", "<<", "&", ";", "(", ")", "|", "<", ">"];

/// Splits a command into words and operator tokens. Quotes are removed and escapes applied;
/// variables stay as written (`$HOME`), so a later check sees that the value is unknown;
/// newlines become `;`; comments are dropped.
pub fn split_words(command: &str) -> Vec<String> {
    let chars: Vec<char> = command.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    let flush = |word: &mut String, in_word: &mut bool, out: &mut Vec<String>| {
        if *in_word {
            out.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() && "$`\"\\\n".contains(chars[i + 1])
                    {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '\\' if i + 1 < chars.len() => {
                in_word = true;
                if chars[i + 1] != '\n' {
                    word.push(chars[i + 1]);
                }
                i += 2;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\n' => {
                flush(&mut word, &mut in_word, &mut out);
                out.push(";".into());
                i += 1;
            }
            c if c.is_whitespace() => {
                flush(&mut word, &mut in_word, &mut out);
                i += 1;
            }
            _ => {
                let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
                if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(*op)) {
                    flush(&mut word, &mut in_word, &mut out);
                    out.push((*op).to_string());
                    i += op.chars().count();
                } else {
                    in_word = true;
                    word.push(c);
                    i += 1;
                }
            }
        }
    }
    flush(&mut word, &mut in_word, &mut out);
    out
}

/// Quotes a word for bash when it needs it.
pub fn quote_word(w: &str) -> String {
    if !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c)) {
        return w.to_string();
    }
    format!("'{}'", w.replace('\'', r"'\''"))
}

static WRAPPER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:(?:(?:\S+/)?(?:sh|bash|zsh))\s+-c|cmd\.exe\s+/c|powershell(?:\.exe)?\s+(?:-NoProfile\s+)?-Command|pwsh(?:\.exe)?\s+(?:-NoProfile\s+)?-Command)\s+",
    )
    .ok()
});

/// Removes a leading `sh|bash|zsh -c`, `cmd.exe /c` or PowerShell `-Command` wrapper and one
/// level of surrounding quotes; otherwise returns the command trimmed.
pub fn strip_shell_wrapper(command: &str) -> String {
    let Some(m) = WRAPPER.as_ref().and_then(|re| re.find(command)) else {
        return command.trim().to_string();
    };
    let inner = command[m.end()..].trim();
    let quoted = inner.len() >= 2
        && ((inner.starts_with('"') && inner.ends_with('"'))
            || (inner.starts_with('\'') && inner.ends_with('\'')));
    if !quoted {
        return inner.to_string();
    }
    if m.as_str().trim_end().ends_with("-c") && inner.starts_with('"') {
        let words = split_words(inner);
        if let [one] = words.as_slice() {
            return one.clone();
        }
    }
    inner[1..inner.len() - 1].to_string()
}

/// Upstream's guard: `$(`, a backtick, or `<(` / `>(` outside single quotes (process
/// substitution only outside double quotes) means bash would run a substitution.
pub fn has_command_substitution(command: &str) -> bool {
    let c: Vec<char> = command.chars().collect();
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\'' && !double {
            single = !single;
        } else if ch == '"' && !single {
            double = !double;
        } else if !single {
            if ch == '\\' && i + 1 < c.len() && (!double || "$`\"\\\n".contains(c[i + 1])) {
                i += 2;
                continue;
            }
            let next = c.get(i + 1).copied();
            if (ch == '$' && next == Some('('))
                || (!double && (ch == '<' || ch == '>') && next == Some('('))
                || ch == '`'
            {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// Redirection operators: they and their target are not part of the command that runs.
const REDIRECTIONS: &[&str] = &[">>", ">&", "<<", "<", ">"];

/// The words of a simple command without its redirections (`>/dev/null rm x` -> `rm x`,
/// `xargs rm <<< x` -> `xargs rm`, `2>&1`), so a check sees the program that runs.
pub(crate) fn without_redirections(words: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let fd_before_op = !w.is_empty()
            && w.chars().all(|c| c.is_ascii_digit() || c == '&')
            && words.get(i + 1).is_some_and(|n| REDIRECTIONS.contains(&n.as_str()));
        if fd_before_op {
            i += 1;
            continue;
        }
        if REDIRECTIONS.contains(&w) {
            // The operator, any operator glued to it (`<<<` splits as `<<` `<`), the target.
            i += 1;
            while words.get(i).is_some_and(|n| REDIRECTIONS.contains(&n.as_str())) {
                i += 1;
            }
            i += 1;
            continue;
        }
        out.push(words[i].clone());
        i += 1;
    }
    out
}

/// The command as bash will see it: quotes and escapes resolved (`'r'm x` -> `rm x`) and the
/// program reduced to its base name (`/bin/rm` -> `rm`). `None` when that changes nothing.
/// The flag says whether only quoting changed (a different path may be a different program).
pub fn canonical_command(simple: &str) -> Option<(String, bool)> {
    let mut words = without_redirections(split_words(simple));
    if words.is_empty() || words.iter().any(|w| OPERATORS.contains(&w.as_str())) {
        return None;
    }
    let base = words[0].rsplit('/').next().unwrap_or("").to_string();
    let same_program = base == words[0];
    if !base.is_empty() {
        words[0] = base;
    }
    let text = words.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ");
    (text != simple.trim()).then_some((text, same_program))
}

/// A simple command with a prefix command or assignments removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unwrapped {
    /// The command the prefix runs, re-quoted.
    pub inner: String,
    /// The prefix only sets the environment or times the command (`VAR=x`, `env`, `time`,
    /// `nohup`, `command`, `exec`, `nice`, `timeout`): the inner command's decision is the
    /// whole command's. Otherwise (`sudo`, `xargs`, `eval`, an assignment not known to be
    /// harmless, ...) both must be allowed.
    pub transparent: bool,
    /// The folder the inner command runs in, relative to the outer one (`env -C DIR`).
    pub chdir: Option<String>,
}

/// The command a program runs when it is given as one string or after a marker: `env -S 'cmd'`,
/// `script -c 'cmd'`, `su -c 'cmd'`, `sg group 'cmd'`, `trap 'cmd' SIG`, `gdb --args cmd`,
/// `find ... -exec cmd ;`.
fn command_argument(base: &str, rest: &[String]) -> Option<String> {
    let after = |flags: &[&str]| {
        rest.iter().position(|w| flags.contains(&w.as_str())).and_then(|j| rest.get(j + 1)).cloned()
    };
    // `env`'s `-S STRING`, also attached (`-S'cmd'`) or last in a cluster (`-iS 'cmd'`).
    let env_short = |j: usize, w: &str| -> Option<String> {
        let cluster = w.strip_prefix('-').filter(|c| !c.starts_with('-'))?;
        for (k, c) in cluster.char_indices() {
            if matches!(c, 'u' | 'C' | 'S') {
                let value = &cluster[k + 1..];
                if c != 'S' {
                    return None;
                }
                return if value.is_empty() {
                    rest.get(j + 1).cloned()
                } else {
                    Some(value.into())
                };
            }
        }
        None
    };
    let split_string = || {
        rest.iter()
            .find_map(|w| w.strip_prefix("--split-string=").map(String::from))
            .or_else(|| after(&["--split-string"]))
            .or_else(|| rest.iter().enumerate().find_map(|(j, w)| env_short(j, w)))
    };
    match base {
        "env" => split_string(),
        "script" | "su" | "runuser" => {
            // `-c CMD`, also combined with other short flags (`-qc CMD`).
            let j = rest.iter().position(|w| {
                w == "--command" || (w.starts_with('-') && !w.starts_with("--") && w.ends_with('c'))
            })?;
            rest.get(j + 1).cloned()
        }
        "sg" => rest.get(1).cloned(),
        "trap" => rest.first().filter(|w| !w.starts_with('-')).cloned(),
        "gdb" | "lldb" => {
            let j = rest.iter().position(|w| w == "--args" || w == "--")?;
            let cmd = &rest[j + 1..];
            (!cmd.is_empty())
                .then(|| cmd.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" "))
        }
        "find" => {
            let j = rest
                .iter()
                .position(|w| matches!(w.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))?;
            let cmd: Vec<&String> = rest[j + 1..]
                .iter()
                .take_while(|w| !matches!(w.as_str(), ";" | "\\;" | "+"))
                .collect();
            (!cmd.is_empty())
                .then(|| cmd.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" "))
        }
        _ => None,
    }
}

/// One option word of `env` (and the word after it): the folder it changes to, whether it
/// clears or unsets variables, and how many words it takes (0: not an option of that kind).
pub(crate) fn env_option(opt: &str, next: Option<&String>) -> (Option<String>, bool, usize) {
    if opt == "-" || opt == "--ignore-environment" || opt == "--null" {
        return (None, opt != "--null", 1);
    }
    if let Some(long) = opt.strip_prefix("--") {
        let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
        let takes = |full: &str| !name.is_empty() && full.starts_with(name);
        if takes("chdir") || takes("unset") {
            let (v, used) = match value {
                Some(v) => (Some(v.to_string()), 1),
                None => (next.cloned(), 2),
            };
            return if takes("chdir") { (v, false, used) } else { (None, true, used) };
        }
        return (None, false, 0);
    }
    let Some(cluster) = opt.strip_prefix('-').filter(|c| !c.is_empty()) else {
        return (None, false, 0);
    };
    let mut clears = false;
    for (at, c) in cluster.char_indices() {
        match c {
            'i' => clears = true,
            'C' | 'u' | 'S' => {
                let rest = &cluster[at + 1..];
                let (value, used) =
                    if rest.is_empty() { (next.cloned(), 2) } else { (Some(rest.to_string()), 1) };
                return match c {
                    'C' => (value, clears, used),
                    'u' => (None, true, used),
                    // `-S` is read by `command_argument` as the command it runs.
                    _ => (None, clears, 0),
                };
            }
            _ => {}
        }
    }
    (None, clears, 1)
}

/// `FOO=1 env -i nohup rm x` -> `rm x`. Returns `None` when there is nothing to unwrap.
pub fn unwrap_command(simple: &str) -> Option<Unwrapped> {
    let words = without_redirections(split_words(simple));
    // A `;` word in a simple command can only be quoted: `find ... -exec rm {} \;`.
    let find_exec =
        words.iter().any(|w| matches!(w.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"));
    if words.iter().any(|w| OPERATORS.contains(&w.as_str()) && !(find_exec && w == ";")) {
        return None;
    }
    let mut i = 0;
    let mut transparent = true;
    let mut chdir: Option<String> = None;
    loop {
        while i < words.len() && assignments::is_assignment(&words[i]) {
            transparent &= assignments::is_harmless(&words[i]);
            i += 1;
        }
        let Some(w) = words.get(i) else { break };
        let base = w.rsplit('/').next().unwrap_or(w);
        // Programs that take the command to run as one string, or after a marker.
        if let Some(inner) = command_argument(base, &words[i + 1..]) {
            return Some(Unwrapped { inner, transparent: false, chdir: None });
        }
        // (name, transparent, options that take a value)
        let (opaque, takes_value): (bool, &[&str]) = match base {
            "env" => (false, &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]),
            "time" | "nohup" | "command" | "builtin" | "exec" => (false, &[]),
            "nice" => (false, &["-n", "--adjustment"]),
            "timeout" => (false, &["-s", "--signal", "-k", "--kill-after"]),
            "stdbuf" => (false, &["-i", "-o", "-e"]),
            "sudo" | "doas" => (true, &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"]),
            "xargs" => (true, &["-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"]),
            "eval" | "watch" | "nsenter" | "chroot" | "setsid" | "unbuffer" | "flock" => {
                (true, &[])
            }
            "ionice" => (true, &["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"]),
            "coproc" | "valgrind" | "catchsegv" | "torsocks" | "proxychains" | "proxychains4" => {
                (true, &[])
            }
            "chrt" => (true, &["-T", "-P", "-D"]),
            "taskset" => (true, &[]),
            "strace" | "ltrace" => {
                (true, &["-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-O", "-S", "-X", "-P"])
            }
            "setpriv" | "runuser" | "su" | "unshare" | "prlimit" | "faketime" | "firejail" => {
                (true, &["-u", "-g", "-c", "--user", "--group"])
            }
            _ => break,
        };
        transparent &= !opaque;
        i += 1;
        while let Some(opt) = words.get(i) {
            if base == "env" {
                // Issue 46: `-iC..` is `-i -C ..` (GNU clusters). Clearing the environment
                // is judged by the grant boundary (`policy::grant`), not here.
                let (dir, _, used) = env_option(opt, words.get(i + 1));
                if let Some(dir) = dir {
                    let joined = std::path::Path::new(chdir.as_deref().unwrap_or("")).join(dir);
                    chdir = Some(joined.to_string_lossy().into_owned());
                }
                if used > 0 {
                    i += used;
                    continue;
                }
            }
            if takes_value.contains(&opt.as_str()) {
                i += 2;
            } else if opt.starts_with('-') && opt.len() > 1 {
                i += 1;
            } else {
                break;
            }
        }
        if base == "timeout" && i < words.len() {
            i += 1; // the duration
        }
        if matches!(base, "flock" | "chrt" | "taskset" | "faketime" | "chroot") && i < words.len() {
            i += 1; // the lock file, the priority, the CPU mask, the time, the new root
        }
        if base == "exec" && words.get(i - 1).is_some_and(|w| w == "-a") {
            i += 1; // `exec -a NAME`: the name
        }
    }
    if i == 0 || i >= words.len() {
        return None;
    }
    let inner = if words[..i].iter().any(|w| w.ends_with("eval")) {
        words[i..].join(" ")
    } else {
        words[i..].iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ")
    };
    Some(Unwrapped { inner, transparent, chdir })
}

/// Real long options that are also prefixes of the ones looked for (git's `--text`): taken
/// as they are.
const EXACT_OPTIONS: &[&str] = &["--text"];

/// Whether one of `names` is given among `args` (before `--`) in any spelling GNU-style parsers take (git's, getopt's): a
/// long option whole, with `=value`, or cut to an unambiguous prefix (`--ext-dif`); a short
/// one alone, with its value glued (`-Ocmd`) or in a cluster (issue 46).
pub(crate) fn option_given(args: &[String], names: &[&str]) -> bool {
    args.iter().take_while(|a| *a != "--").any(|a| {
        names.iter().any(|n| {
            if let Some(long) = n.strip_prefix("--") {
                let Some(given) = a.strip_prefix("--") else { return false };
                let given = given.split('=').next().unwrap_or(given);
                given.len() >= 3
                    && long.starts_with(given)
                    && (given == long || !EXACT_OPTIONS.contains(&a.split('=').next().unwrap_or(a)))
            } else if let Some(short) = n.strip_prefix('-').filter(|s| s.chars().count() == 1) {
                a.starts_with('-') && !a.starts_with("--") && a[1..].contains(short)
            } else {
                a == n
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_and_operators() {
        assert_eq!(split_words("ls -la && rm 'a b'"), ["ls", "-la", "&&", "rm", "a b"]);
        assert_eq!(split_words(r#"echo "x\"y" a\ b"#), ["echo", "x\"y", "a b"]);
        assert_eq!(split_words("a|b>c;d\ne # c"), ["a", "|", "b", ">", "c", ";", "d", ";", "e"]);
        assert_eq!(split_words("cat $HOME/x"), ["cat", "$HOME/x"]);
    }

    #[test]
    fn strips_wrappers() {
        assert_eq!(strip_shell_wrapper("bash -c 'rm x'"), "rm x");
        assert_eq!(strip_shell_wrapper("/bin/sh -c \"ls \\\"a\\\"\""), "ls \"a\"");
        assert_eq!(strip_shell_wrapper("pwsh -NoProfile -Command Get-Item"), "Get-Item");
        assert_eq!(strip_shell_wrapper("  ls  "), "ls");
        assert_eq!(strip_shell_wrapper("bashful -c x"), "bashful -c x");
    }

    #[test]
    fn substitution_guard_follows_quoting() {
        for bad in [
            "echo $(whoami)",
            "echo `whoami`",
            "echo \"$(whoami)\"",
            "echo >(x)",
            "echo <(x)",
            "echo \"`id`\"",
        ] {
            assert!(has_command_substitution(bad), "{bad}");
        }
        for ok in [
            "echo '$(whoami)'",
            "echo \\$(x)",
            "echo \"<(x)\"",
            "echo $HOME",
            "echo '`'",
            "echo \"\\$(x)\"",
        ] {
            assert!(!has_command_substitution(ok), "{ok}");
        }
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(canonical_command("'rm' x"), Some(("rm x".into(), true)));
        assert_eq!(canonical_command("r\\m x"), Some(("rm x".into(), true)));
        assert_eq!(canonical_command("/bin/rm -f x"), Some(("rm -f x".into(), false)));
        assert_eq!(canonical_command("echo \"a b\""), Some(("echo 'a b'".into(), true)));
        assert_eq!(canonical_command("ls -la"), None);
    }

    #[test]
    fn unwraps_prefix_commands() {
        let u = |s| unwrap_command(s);
        assert_eq!(
            u("env rm x"),
            Some(Unwrapped { inner: "rm x".into(), transparent: true, chdir: None })
        );
        assert_eq!(u("env -C ../o -i cat f").unwrap().chdir.as_deref(), Some("../o"));
        assert_eq!(u("env --chdir=d cat f").unwrap().chdir.as_deref(), Some("d"));
        assert!(!u("PATH=. ls").unwrap().transparent);
        assert!(u("LC_ALL=C ls").unwrap().transparent);
        assert_eq!(u("FOO=1 BAR=2 ls -la").unwrap().inner, "ls -la");
        assert_eq!(
            u("sudo -u root rm -rf /").unwrap(),
            Unwrapped { inner: "rm -rf /".into(), transparent: false, chdir: None }
        );
        assert_eq!(u("timeout -s KILL 5 nice -n 3 make").unwrap().inner, "make");
        assert_eq!(u("xargs -n 1 rm").unwrap().inner, "rm");
        assert_eq!(u("eval 'rm x; ls'").unwrap().inner, "rm x; ls");
        assert_eq!(u("/usr/bin/env 'a b' c").unwrap().inner, "'a b' c");
        assert_eq!(u("ls -la"), None);
        assert_eq!(u("env"), None);
    }
}
