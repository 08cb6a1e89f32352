use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::toolbelt;

#[test]
fn policy_check_names_the_rule_and_file() {
    let t = TempTree::new();
    let r = toolbelt(&t, &["policy", "check", "read_file", "{}"], None);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("decision: allow\nrule: toolName \"read_file\", priority 1.05, from Default: read-only.toml\n"), "{}", r.stdout);

    let r = toolbelt(&t, &["policy", "check", "write_file", "{}", "--json"], None);
    let v = r.json();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["interactive"], false);
    assert_eq!(v["rule"]["source"], "Default: write.toml");

    let r = toolbelt(&t, &["policy", "check", "write_file", "{}", "--interactive", "--json"], None);
    assert_eq!(r.json()["decision"], "ask_user");
    let r = toolbelt(
        &t,
        &["policy", "check", "write_file", "{}", "--approval-mode", "auto_edit", "--json"],
        None,
    );
    assert_eq!(r.json()["decision"], "allow");
}

#[test]
fn policy_check_with_user_files_and_arg_patterns() {
    let t = TempTree::new();
    t.file(
        "p/mine.toml",
        "[[rule]]\ntoolName = \"read_file\"\nargsPattern = '\"file_path\":\"secret'\ndecision = \"deny\"\npriority = 10\n",
    );
    let r = toolbelt(
        &t,
        &[
            "policy",
            "check",
            "read_file",
            r#"{"file_path":"secret.txt"}"#,
            "--policy",
            "p",
            "--json",
        ],
        None,
    );
    let v = r.json();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["rule"]["source"], "User: mine.toml");
    assert_eq!(v["rule"]["file"], t.abs("p/mine.toml"));
    assert!((v["rule"]["priority"].as_f64().unwrap() - 4.01).abs() < 1e-9);
    let r = toolbelt(
        &t,
        &[
            "policy",
            "check",
            "read_file",
            r#"{"file_path":"public.txt"}"#,
            "--policy",
            "p",
            "--json",
        ],
        None,
    );
    assert_eq!(r.json()["decision"], "allow");
}

/// Issue 16: a broken policy file used to be reported and skipped (its deny rules with it);
/// now it stops the command, naming the file, the line and the problem.
#[test]
fn broken_policy_files_stop_the_command() {
    let t = TempTree::new();
    t.file(
        "bad.toml",
        "[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 5000\n",
    );
    let r = toolbelt(&t, &["policy", "check", "read_file", "{}", "--policy", "bad.toml"], None);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("bad.toml:1: rule #1: `priority`"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

/// Issue 35 (fourth attack, N6), as a hostile repository would: twenty look-ahead rules
/// (they pass `policy lint`) in the untrusted workspace's `.gemini/policies` held a 60 KB
/// write for 181 s, past any deadline. Such a pattern is not run on long arguments: the deny
/// rules fail closed at once, and cannot be made to let the write through either.
#[test]
fn look_ahead_rules_from_a_repository_cannot_hold_a_call() {
    let t = TempTree::new();
    let rule = format!(
        "[[rule]]\ntoolName = \"write_file\"\nargsPattern = '(?=a){}b1'\ndecision = \"deny\"\npriority = 10\n",
        ".*".repeat(12)
    );
    t.file(".gemini/policies/evil.toml", rule.repeat(20));
    let args = json!({"file_path": "x.txt", "content": "a".repeat(60_000)}).to_string();
    let started = std::time::Instant::now();
    let r = toolbelt(&t, &["policy", "check", "write_file", &args, "--json"], None);
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
    assert_eq!(r.json()["decision"], "deny", "{}", r.stderr);
}
