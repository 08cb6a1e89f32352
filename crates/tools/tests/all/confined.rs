//! Issue 34: what runs unasked because the known-safe table vouches for it runs confined. The
//! table is a heuristic; these tests make it deliberately wrong (the call is marked as the
//! table's own while the command writes, runs a repository's program, reads the home folder or
//! reaches the network) and check that the layer beneath holds.

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::Registry;
use toolbelt_core::tool::ExecContext;
use toolbelt_test_support::TempTree;

/// `command` through run_shell_command, confined (as the known-safe table's calls run) or not.
fn shell(t: &TempTree, command: &str, confine: bool) -> String {
    let env = t.env(&[]);
    let registry = Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
    let built =
        registry.build_call("run_shell_command", json!({ "command": command }), &env).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut ctx = ExecContext::new("c", CancellationToken::new());
    ctx.confine = confine;
    let r = rt.block_on(built.invocation.execute(ctx));
    format!("{:?}", r.llm_content)
}

fn confined_shell(t: &TempTree, command: &str) -> String {
    shell(t, command, true)
}

/// Whether this kernel confines; a kernel that cannot is skipped only when the run says so.
fn can_confine() -> bool {
    let usable = toolbelt_core::process::sandbox::support().usable();
    if !usable {
        assert!(
            std::env::var("TOOLBELT_TEST_NO_LANDLOCK").is_ok_and(|v| v == "1"),
            "this kernel cannot confine; set TOOLBELT_TEST_NO_LANDLOCK=1 to skip knowingly"
        );
    }
    usable
}

#[test]
fn a_wrong_row_in_the_table_still_writes_nothing_runs_nothing_and_reads_no_home() {
    if !can_confine() {
        return;
    }
    let t = TempTree::new();
    t.file("a.txt", "plain\n");
    let home = std::path::PathBuf::from(std::env::var("HOME").unwrap());
    let secret = tempfile::tempdir_in(&home).unwrap();
    std::fs::write(secret.path().join("token"), "CANARY-home\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // A planted git config: the repository's diff.external would write PWNED.
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(t.root()).status();
    assert!(git.is_ok_and(|s| s.success()));
    let pwned = t.root().join("PWNED");
    t.file("evil.sh", format!("#!/bin/sh\ntouch {}\n", pwned.display()));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.root().join("evil.sh"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    let script = format!(
        "touch written.txt; echo x > also.txt; \
         GIT_EXTERNAL_DIFF={evil} git diff --no-index a.txt evil.sh; \
         cat {secret}/token; \
         (echo hi > /dev/tcp/127.0.0.1/{port}) 2>&1 && echo CONNECTED; \
         cat a.txt; echo done",
        evil = t.root().join("evil.sh").display(),
        secret = secret.path().display(),
    );
    let text = confined_shell(&t, &script);
    assert!(text.contains("done") && text.contains("plain"), "reading the workspace works: {text}");
    assert!(
        !t.root().join("written.txt").exists() && !t.root().join("also.txt").exists(),
        "{text}"
    );
    assert!(!pwned.exists(), "a program ran with effect: {text}");
    assert!(!text.contains("CANARY-home"), "the home folder was read: {text}");
    assert!(!text.contains("CONNECTED"), "the network was reached: {text}");
    // git's read-only commands, which the table is for, still work confined.
    let text = confined_shell(&t, "git status --short && git log --oneline -1; echo rc=$?");
    assert!(text.contains("rc=") && !text.contains("Read-only file system"), "{text}");
}

/// Issue 49 F1: `toolbelt call run_shell_command '{"command":"ls"}' --interactive` printed
/// `bash: line 1: …/toolbelt-shell-XXXX/bgpids.tmp: Permission denied` after `ls`'s own output:
/// the read-only confinement kept the shell wrapper from writing its own list of background
/// jobs. Confined or not, a known-safe command's output is exactly its own.
#[test]
fn a_known_safe_command_confined_prints_exactly_what_it_prints_unconfined() {
    if !can_confine() {
        return;
    }
    let t = TempTree::new();
    t.file("a.txt", "plain\nsecond line\n");
    t.file("src/lib.rs", "fn main() {}\n");
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(t.root()).status();
    assert!(git.is_ok_and(|s| s.success()));
    for command in [
        "ls",
        "ls -la src",
        "cat a.txt",
        "head -n 1 a.txt",
        "wc -l a.txt",
        "grep -n line a.txt",
        "pwd",
        "echo hello",
        "git status --short",
        "ls missing-file",
    ] {
        // The process group differs from run to run; the rest must not.
        let pgid = |s: String| {
            s.split("Process Group PGID: ")
                .enumerate()
                .map(|(i, part)| {
                    if i == 0 {
                        part.to_string()
                    } else {
                        part.trim_start_matches(char::is_numeric).to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("Process Group PGID: N")
        };
        let confined = pgid(confined_shell(&t, command));
        let plain = pgid(shell(&t, command, false));
        assert_eq!(confined, plain, "`{command}` confined differs from its own output");
        assert!(!confined.contains("bgpids"), "`{command}`: {confined}");
    }
}
