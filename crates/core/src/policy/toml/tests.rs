//! The TOML policy loader: every problem with its line, and the rules it builds.
use super::*;

#[test]
fn loads_rules_with_tier_priorities_and_arrays() {
    let l = load_str(
        r#"
[[rule]]
toolName = ["glob", "read_file"]
decision = "allow"
priority = 50

[[rule]]
toolName = "replace"
decision = "ask_user"
priority = 10
interactive = true
modes = ["default", "autoEdit"]
deny_message = "old spelling"

[rule.safety_checker]
type = "in-process"
"#,
        Tier::User,
        "mine.toml",
        None,
    );
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    assert_eq!(l.rules.len(), 3);
    assert_eq!(l.rules[0].tool_name, "glob");
    assert!((l.rules[0].priority - 4.05).abs() < 1e-9);
    assert_eq!(l.rules[0].source.label, "User: mine.toml");
    assert_eq!(l.rules[2].modes, vec![ApprovalMode::Default, ApprovalMode::AutoEdit]);
    assert_eq!(l.rules[2].interactive, Some(true));
    assert_eq!(l.rules[2].deny_message.as_deref(), Some("old spelling"));
}

/// Every problem is reported with its line; the session refuses to start on any (see
/// `toolbelt_session`), so nothing here is "skipped".
#[test]
fn every_problem_is_reported_with_its_line() {
    for (bad, line) in [
        ("[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1000\n", 5),
        ("[[rule]]\ndecision = \"allow\"\npriority = 1\n", 5),
        ("[[rule]]\ntoolName = \"a\"\ndecision = \"maybe\"\npriority = 1\n", 5),
        (
            "[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1\nmodes = [\"sometimes\"]\n",
            5,
        ),
        ("[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\n", 5),
        ("[[rule]]\ntoolName = \"a\"\ndecision = \"deny\"\npriority = 1\ntoolname = \"b\"\n", 5),
        ("[[safety_checker]]\ntoolName = \"a\"\n", 5),
        ("this is not toml", 5),
    ] {
        let l = load_str(
            &format!("[[rule]]\ntoolName = \"ok\"\ndecision = \"allow\"\npriority = 1\n{bad}"),
            Tier::User,
            "f.toml",
            None,
        );
        assert_eq!(l.errors.len(), 1, "{bad}: {:?}", l.errors);
        assert_eq!(l.errors[0].line, Some(line), "{bad}: {}", l.errors[0]);
        assert!(
            l.errors[0].to_string().starts_with(&format!("f.toml:{line}: ")),
            "{}",
            l.errors[0]
        );
        assert!(!l.errors[0].message.contains("skipped"), "{}", l.errors[0]);
    }
}

/// Found by an adversarial review: rules that loaded but could never apply.
#[test]
fn rules_that_could_never_apply_are_problems() {
    for (bad, says) in [
        ("toolName = []\ndecision = \"deny\"", "`toolName` must not be empty"),
        (
            "toolName = \"read_file\"\ncommandPrefix = \"cat\"\ndecision = \"deny\"",
            "can only be used with",
        ),
        (
            "toolName = \"read_file\"\ncommandRegex = \"cat\"\ndecision = \"deny\"",
            "can only be used with",
        ),
        (
            "toolName = \"run_shell_command\"\ncommandPrefix = \"\"\ndecision = \"deny\"",
            "`commandPrefix` must not be empty",
        ),
        (
            "toolName = \"run_shell_command\"\ncommandPrefix = []\ndecision = \"deny\"",
            "`commandPrefix` must not be empty",
        ),
        ("toolName = \"x\"\nsubagent = \"\"\ndecision = \"deny\"", "`subagent` must not be empty"),
        ("toolName = \"w*\"\ndecision = \"allow\"", "would allow nothing"),
    ] {
        let l = load_str(&format!("[[rule]]\n{bad}\npriority = 1\n"), Tier::User, "f.toml", None);
        assert_eq!(l.errors.len(), 1, "{bad}: {:?}", l.errors);
        assert!(l.errors[0].message.contains(says), "{bad}: {}", l.errors[0]);
    }
    // Upstream's wildcards and generic ones in deny rules are fine.
    for ok in [
        "toolName = \"mcp_gh_*\"\ndecision = \"allow\"",
        "toolName = \"*\"\nmcpName = \"gh\"\ndecision = \"allow\"",
        "toolName = \"w*\"\ndecision = \"deny\"",
    ] {
        let l = load_str(&format!("[[rule]]\n{ok}\npriority = 1\n"), Tier::User, "f.toml", None);
        assert!(l.errors.is_empty(), "{ok}: {:?}", l.errors);
    }
}

#[test]
fn policy_folder_entries_that_are_not_files_are_problems() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("d.toml")).unwrap();
    std::fs::write(d.path().join("UPPER.TOML"), "").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.path().join("nowhere"), d.path().join("dangling.toml")).unwrap();
    std::fs::write(d.path().join("notes.txt"), "not a policy").unwrap();
    let l = load_path(d.path(), Tier::User);
    let expected = if cfg!(unix) { 3 } else { 2 };
    assert_eq!(l.errors.len(), expected, "{:?}", l.errors);
}

/// A hostile repository's policy folder with a file named in non-ASCII letters (`éééé`): the
/// extension check sliced the name by bytes and panicked on a character boundary.
#[test]
fn non_ascii_file_names_in_a_policy_folder_do_not_panic() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("éééé"), "").unwrap();
    std::fs::write(
        d.path().join("ééé.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 1\n",
    )
    .unwrap();
    let l = load_path(d.path(), Tier::User);
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    assert_eq!(l.rules.len(), 1);
}

#[test]
fn a_misspelled_key_gets_a_suggestion() {
    let l = load_str(
        "[[rule]]\ntoolName = \"read_file\"\nargPattern = \"x\"\ndecision = \"allow\"\npriority = 1\n",
        Tier::User,
        "f.toml",
        None,
    );
    assert_eq!(
        l.errors[0].to_string(),
        "f.toml:1: rule #1: unknown key `argPattern` (did you mean `argsPattern`?)"
    );
}

#[test]
fn mcp_names_qualify_tool_names() {
    let l = load_str(
        "[[rule]]\nmcpName = \"gh\"\ntoolName = [\"*\", \"issues\"]\ndecision = \"allow\"\npriority = 5\n\n[[rule]]\nmcpName = \"*\"\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 4\n",
        Tier::Admin,
        "m.toml",
        None,
    );
    let names: Vec<_> = l.rules.iter().map(|r| r.tool_name.as_str()).collect();
    assert_eq!(names, ["mcp_gh_*", "mcp_gh_issues", "mcp_*"]);
    assert!((l.rules[0].priority - 5.005).abs() < 1e-9);
}

#[test]
fn saved_rules_load_back_at_the_same_strength() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("policies/auto-saved.toml");
    let mut r = Rule::new("write_file", Decision::Allow, 4.95, "Dynamic (Confirmed)");
    r.args_pattern = Some(ArgsPattern::new("\\x00\"file_path\":\"a\\.txt\"\\x00").unwrap());
    r.modes = vec![ApprovalMode::Default, ApprovalMode::AutoEdit];
    crate::policy::saved::save(&f, &r).unwrap();
    crate::policy::saved::save(&f, &Rule::new("glob", Decision::Allow, 4.95, "x")).unwrap();
    let l = load_path(&f, Tier::User);
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    assert_eq!(l.rules.len(), 2);
    assert!((l.rules[0].priority - 4.95).abs() < 1e-9);
    assert_eq!(
        l.rules[0].args_pattern.as_ref().unwrap().source(),
        r.args_pattern.as_ref().unwrap().source()
    );
    assert_eq!(l.rules[0].modes, r.modes);
}

#[test]
fn command_prefix_matches_on_word_boundaries() {
    let l = load_str(
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"git status\", \"ls\"]\ndecision = \"allow\"\npriority = 1\n",
        Tier::User,
        "s.toml",
        None,
    );
    assert_eq!(l.rules.len(), 2);
    let re = l.rules[0].args_pattern.as_ref().unwrap();
    let s =
        |cmd: &str| super::super::stringify::stable_stringify(&serde_json::json!({"command": cmd}));
    assert!(re.is_match(&s("git status")));
    assert!(re.is_match(&s("git status --short")));
    assert!(!re.is_match(&s("git statusx")));
    let ls = l.rules[1].args_pattern.as_ref().unwrap();
    assert!(ls.is_match(&s("ls -la")));
    assert!(!ls.is_match(&s("lsblk")));
}
