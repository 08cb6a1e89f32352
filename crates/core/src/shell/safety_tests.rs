//! Tests of the known-safe table.
use super::*;

fn w(s: &str) -> Vec<String> {
    crate::shell::split_words(s)
}

/// Every row of the table with a case it allows and one it asks about (issue 34: each row
/// has a test and says why it is safe).
#[test]
fn every_row_has_a_case() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(ws.join("src")).unwrap();
    std::fs::write(ws.join("f"), "x\n").unwrap();
    let at = Place::new(&ws, &ws);
    let rg = ["/usr/bin/rg", "/bin/rg", "/usr/local/bin/rg"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or("/usr/bin/rg");
    let rg_yes = format!("{rg} foo f");
    let rg_no = format!("{rg} --pre ./x foo f");
    let cases: Vec<(&str, &str, &str)> = vec![
        ("cat", "cat f", "cat /etc/passwd"),
        ("head", "head -n 2 f", "head ../f"),
        ("tail", "tail f", "tail /etc/shadow"),
        ("tac", "tac f", "tac ../x"),
        ("nl", "nl f", "nl /etc/passwd"),
        ("wc", "wc -l f", "wc --files0-from=list"),
        ("cut", "cut -c1 f", "cut -c1 /etc/passwd"),
        ("paste", "paste f f", "paste f /etc/passwd"),
        ("rev", "rev f", "rev ../f"),
        ("numfmt", "numfmt --to=iec 1024", "numfmt /etc/passwd"),
        ("stat", "stat f", "stat /etc/passwd"),
        ("ls", "ls -la src", "ls -L src"),
        ("uniq", "uniq f", "uniq f OUT"),
        ("grep", "grep -n x f", "grep -f /etc/passwd x f"),
        ("cd", "cd src", "cd .."),
        ("echo", "echo hi", ""),
        ("expr", "expr 1 + 1", ""),
        ("true", "true", ""),
        ("false", "false", ""),
        ("pwd", "pwd", ""),
        ("seq", "seq 3", ""),
        ("id", "id", ""),
        ("uname", "uname -a", ""),
        ("whoami", "whoami", ""),
        ("which", "which ls", ""),
        ("tr", "tr a b", ""),
        ("base64", "base64 f", "base64 -o out f"),
        ("find", "find . -name '*.rs'", "find . -delete"),
        ("sed", "sed -n 1p f", "sed -i s/a/b/ f"),
        ("git", "git status", "git -c core.pager=sh log"),
        ("rg", &rg_yes, &rg_no),
    ];
    for row in TABLE {
        let (_, yes, no) = cases
            .iter()
            .find(|(n, _, _)| *n == row.name)
            .unwrap_or_else(|| panic!("no case for the row {}", row.name));
        assert!(!row.why.is_empty(), "{} says why it is safe", row.name);
        if row.name != "rg" || Path::new(rg).is_file() {
            assert!(is_known_safe(&w(yes), at), "{yes}");
        }
        if !no.is_empty() {
            assert!(!is_known_safe(&w(no), at), "{no}");
        }
    }
    assert_eq!(cases.len(), TABLE.len(), "a case for every row and no other");
}

#[test]
fn safe_commands_stay_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let at = Place::new(&ws, &ws);
    assert!(is_known_safe(&w("ls -la"), at));
    assert!(is_known_safe(&w("cat src/a.rs"), at));
    assert!(is_known_safe(&w("git status"), at));
    assert!(is_known_safe(&w("git log --oneline -5"), at));
    assert!(is_known_safe(&w("sed -n 1,5p f"), at));
    assert!(is_known_safe(&w("bash -c 'ls; pwd'"), at));
    assert!(!is_known_safe(&w("cat /etc/passwd"), at));
    assert!(!is_known_safe(&w("cat ../x"), at));
    assert!(!is_known_safe(&w("cat $HOME/.ssh/id_rsa"), at));
    assert!(!is_known_safe(&w("git push"), at));
    assert!(!is_known_safe(&w("git -c core.pager=sh log"), at));
    assert!(!is_known_safe(&w("find . -delete"), at));
    assert!(!is_known_safe(&w("rm x"), at));
    assert!(!is_known_safe(&w("./rg foo"), at));
    std::os::unix::fs::symlink("/etc", ws.join("out")).unwrap();
    assert!(!is_known_safe(&w("cat out/passwd"), at));
}

#[test]
fn dangerous_commands() {
    assert!(is_dangerous(&w("rm -rf x")));
    assert!(is_dangerous(&w("sudo rm -f x")));
    assert!(is_dangerous(&w("find . -exec rm {} ;")));
    assert!(is_dangerous(&w("git -c x=y status")));
    assert!(is_dangerous(&w("git diff --output=f")));
    assert!(is_dangerous(&w("ln -s a b")));
    assert!(!is_dangerous(&w("rm x")));
    assert!(!is_dangerous(&w("git push")));
}

#[test]
fn git_is_found_after_prefixes() {
    assert!(contains_git(&w("git status")));
    assert!(contains_git(&w("ls && git push")));
    assert!(contains_git(&w("FOO=1 /usr/bin/git log")));
    assert!(!contains_git(&w("echo git")));
}
