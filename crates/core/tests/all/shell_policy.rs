//! Attempts to get a denied command past an allow rule, each with the decision it must get.
//! Rules: `ls` and `echo` allowed by commandPrefix, `rm` denied by commandPrefix, on top of the
//! bundled defaults, in an interactive session in default mode.

use serde_json::json;
use toolbelt_core::policy::toml::load_str;
use toolbelt_core::policy::{
    ApprovalMode, Decision, PolicyCall, PolicyEngine, Tier, default_rules,
};

const RULES: &str = r#"
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["ls", "echo"]
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandPrefix = "rm"
decision = "deny"
priority = 200
"#;

fn engine(interactive: bool) -> (PolicyEngine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut loaded = default_rules();
    let user = load_str(RULES, Tier::User, "shell.toml", None);
    assert!(user.errors.is_empty(), "{:?}", user.errors);
    loaded.extend(user);
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (PolicyEngine::new(loaded.rules, interactive).with_workspace(root), dir)
}

fn decide(e: &PolicyEngine, command: &str, mode: ApprovalMode) -> Decision {
    let args = json!({ "command": command });
    e.check(
        &PolicyCall {
            name: "run_shell_command",
            args: &args,
            server_name: None,
            annotations: None,
            canonical: None,
        },
        mode,
    )
    .decision
}

use Decision::{Allow, AskUser as Ask, Deny};

const CASES: &[(&str, Decision)] = &[
    // plain commands
    ("ls", Allow),
    ("ls -la src", Allow),
    ("echo hello", Allow),
    ("rm x", Deny),
    ("rm -rf x", Deny),
    ("lsblk", Ask),
    ("ls-evil", Ask),
    // chaining
    ("ls && rm -rf x", Deny),
    ("ls; rm x", Deny),
    ("ls || rm x", Deny),
    ("ls & rm x", Deny),
    ("ls\nrm x", Deny),
    ("ls \\\n && rm x", Deny),
    ("echo hi; rm -rf /", Deny),
    ("echo hi && ls", Allow),
    // pipes
    ("ls | sh", Ask),
    ("echo rm x | bash", Ask),
    ("ls | xargs rm", Deny),
    ("ls | grep x", Allow),
    ("echo ok | tee out", Ask),
    // substitutions and subshells
    ("echo $(rm x)", Deny),
    ("echo `rm x`", Deny),
    ("echo \"$(rm x)\"", Deny),
    ("cat <(rm x)", Deny),
    ("echo >(rm x)", Deny),
    ("(rm x)", Deny),
    ("{ rm x; }", Deny),
    ("ls $(echo x)", Allow),
    // wrappers and prefix commands
    ("bash -c 'rm x'", Deny),
    ("sh -c \"rm x\"", Deny),
    ("/bin/bash -c 'ls && rm x'", Deny),
    ("ls && bash -c \"echo ok && rm x\"", Deny),
    ("env rm x", Deny),
    ("/usr/bin/env FOO=1 rm x", Deny),
    ("FOO=1 rm x", Deny),
    ("sudo rm x", Deny),
    ("sudo -u root rm -rf /", Deny),
    ("xargs rm < list", Deny),
    ("eval \"rm x\"", Deny),
    ("time rm x", Deny),
    ("nohup rm x &", Deny),
    ("command rm x", Deny),
    ("exec rm x", Deny),
    ("timeout 5 rm x", Deny),
    // issue 18: an assignment not known to be harmless may change what runs
    ("FOO=1 ls", Ask),
    ("LC_ALL=C ls", Allow),
    ("env ls -la", Allow),
    ("busybox rm x", Ask),
    ("find . -exec rm {} \\;", Deny),
    // quoting and escapes
    ("'rm' x", Deny),
    ("\"rm\" -rf x", Deny),
    ("r\\m x", Deny),
    ("r''m x", Deny),
    ("/bin/rm x", Deny),
    ("echo 'rm x'", Allow),
    ("echo \"a;rm x\"", Allow),
    ("ls # && rm x", Allow),
    // control flow
    ("if true; then rm x; fi", Deny),
    ("for f in a b; do rm $f; done", Deny),
    ("while true; do rm x; done", Deny),
    ("f() { rm x; }; f", Deny),
    ("case a in a) rm x;; esac", Deny),
    // heredocs and redirection: never silently allowed
    ("echo hi > f", Ask),
    ("ls > /dev/null 2>&1", Ask),
    ("cat <<EOF\nrm x\nEOF", Ask),
    ("bash <<EOF\nrm x\nEOF", Ask),
    ("sh < script.sh", Ask),
    ("ls && echo x >> ~/.bashrc", Ask),
    // things the parser cannot vouch for are asked about
    ("ls 'unterminated", Ask),
    ("echo ${x@P}", Ask),
    // The program is only known at run time and a deny rule for shell commands applies.
    ("$CMD x", Deny),
];

#[test]
fn policy_bypass_attempts_get_the_right_decision() {
    let (e, _dir) = engine(true);
    assert!(CASES.len() >= 40);
    let mut wrong = Vec::new();
    for (cmd, want) in CASES {
        let got = decide(&e, cmd, ApprovalMode::Default);
        if got != *want {
            wrong.push(format!("{cmd:?}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{} wrong:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn headless_runs_never_allow_what_would_be_asked() {
    // Headless, "ask" is refused by the scheduler; the engine may also say "deny" outright
    // (the bundled headless rule denies the shell unless a specific rule allows the command).
    let (e, _dir) = engine(false);
    for (cmd, want) in CASES {
        let got = decide(&e, cmd, ApprovalMode::Default);
        match want {
            Deny => assert_eq!(got, Deny, "{cmd:?}"),
            Ask => assert_ne!(got, Allow, "{cmd:?}"),
            Allow => {}
        }
    }
    assert_eq!(decide(&e, "ls -la", ApprovalMode::Default), Allow);
    assert_eq!(decide(&e, "make", ApprovalMode::Default), Deny);
}

#[test]
fn yolo_still_denies_denied_sub_commands() {
    let (e, _dir) = engine(true);
    assert_eq!(decide(&e, "ls && rm x", ApprovalMode::Yolo), Deny);
    assert_eq!(decide(&e, "bash -c 'rm x'", ApprovalMode::Yolo), Deny);
    assert_eq!(decide(&e, "echo hi > f", ApprovalMode::Yolo), Allow);
    assert_eq!(decide(&e, "make", ApprovalMode::Yolo), Allow);
}

#[test]
fn without_rules_known_safe_commands_run_and_dangerous_ones_are_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let e = PolicyEngine::new(default_rules().rules, true).with_workspace(&root);
    let d = |c| decide(&e, c, ApprovalMode::Default);
    assert_eq!(d("ls -la"), Allow);
    assert_eq!(d("git status"), Allow);
    assert_eq!(d("cat /etc/passwd"), Ask);
    assert_eq!(d("ls; pwd"), Allow);
    assert_eq!(d("ls && make"), Ask);
    assert_eq!(d("npm test"), Ask);
    let star = load_str(
        "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"allow\"\npriority = 100\n",
        Tier::User,
        "all.toml",
        None,
    );
    let mut rules = default_rules();
    rules.extend(star);
    let e = PolicyEngine::new(rules.rules, true).with_workspace(&root);
    let d = |c| decide(&e, c, ApprovalMode::Default);
    assert_eq!(d("make"), Allow);
    assert_eq!(d("rm -rf build"), Ask);
    assert_eq!(d("make && rm -rf build"), Ask);
    let untrusted = PolicyEngine::new(default_rules().rules, true)
        .with_workspace(&root)
        .with_trusted_folder(false);
    assert_eq!(decide(&untrusted, "git status", ApprovalMode::Default), Ask);
}

/// Issue 16, found by an adversarial review: a deny by command prefix was skipped when the
/// command started with white space or a redirection (` rm x`, `>/dev/null rm x`), ran behind
/// a here-string (`xargs rm <<< x`), or behind wrappers the checks did not know.
#[test]
fn a_denied_prefix_cannot_hide_behind_spacing_redirections_or_wrappers() {
    let (e, _d) = engine(true);
    for cmd in [
        " rm x",
        "\trm x",
        "\nrm x",
        ">/dev/null rm x",
        "2>/dev/null rm x",
        "</dev/null rm x",
        "xargs rm <<< x",
        "xargs -I{} rm {} <<< x",
        "ionice rm x",
        "chrt -o 0 rm x",
        "taskset -c 0 rm x",
        "strace -o /dev/null rm x",
        "exec -a foo rm x",
        "x=rm; $x victim",
        "RM=rm; ${RM} victim",
        // A second review: globs and braces as the program, keywords and builtins, shells
        // reading their script from input, wrappers that take a command string or argv.
        "/bin/r[m] victim",
        "/bin/[r]m victim",
        "/usr/bin/rm* victim",
        "{rm,victim}",
        "{rm,-f,victim}",
        "coproc rm victim",
        "trap \"rm victim\" EXIT",
        "bash <<< \"rm victim\"",
        "source /dev/stdin <<< \"rm victim\"",
        "env -S \"rm victim\"",
        "env --split-string=\"rm victim\"",
        "script -qc \"rm victim\" /dev/null",
        "su -c \"rm victim\"",
        "sg root \"rm victim\"",
        "chroot / rm /abs/victim",
        "gdb -batch -ex run --args rm victim",
        "valgrind rm victim",
        "find . -name victim -exec rm {} \\;",
    ] {
        for mode in [ApprovalMode::Default, ApprovalMode::Yolo] {
            assert_ne!(decide(&e, cmd, mode), Allow, "{cmd:?} in {mode:?}");
        }
        assert_eq!(decide(&e, cmd, ApprovalMode::Yolo), Deny, "{cmd:?} in yolo");
    }
}

/// A second `"command"` key nested in another argument matched an allow rule's prefix
/// (`{"command":"touch pwned","x":{"command":"git"}}` ran with git allowed).
#[test]
fn a_nested_command_key_does_not_satisfy_a_prefix_rule() {
    let (e, _d) = engine(false);
    let args = json!({"command": "touch pwned", "x": {"command": "ls"}});
    let v = e.check(
        &PolicyCall {
            name: "run_shell_command",
            args: &args,
            server_name: None,
            annotations: None,
            canonical: None,
        },
        ApprovalMode::Default,
    );
    assert_ne!(v.decision, Allow, "{v:?}");
}
