//! Issue 34: the known-safe table judged through the file layer, where the command runs, with
//! the program PATH really names; redirections in `auto_edit`; what runs unasked runs confined.
//! Each row reproduces a finding of the attack on the table as it was (allowed without asking,
//! and the secret or the program reached the model).

use std::path::{Path, PathBuf};

use serde_json::json;
use toolbelt_core::Workspace;
use toolbelt_core::config::Config;
use toolbelt_core::policy::{
    ApprovalMode, Decision, PolicyCall, PolicyEngine, Verdict, default_rules,
};

use Decision::{Allow, AskUser as Ask};

struct Place {
    _dir: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
    workspace: Workspace,
}

/// A trusted workspace with secrets, links out, a planted `bin/ls` and a bare repository under
/// another name whose config runs a program.
fn place() -> Place {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    let state = base.join("state");
    for d in ["src", "docs", "keys", "bin", "x/objects", "x/refs", ".gemini", ".git"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(state.join("policies")).unwrap();
    let write = |p: &Path, s: &str| std::fs::write(p, s).unwrap();
    write(&root.join(".env"), "CANARY=1\n");
    write(&root.join("id_rsa"), "CANARY key\n");
    write(&root.join("keys/server.pem"), "CANARY pem\n");
    write(&root.join(".git/config"), "[core]\n\tbare = false\n");
    write(&root.join("inside.txt"), "a\n");
    write(&root.join("a.txt"), "a\n");
    write(&root.join("b.txt"), "b\n");
    write(&root.join("src/a.txt"), "a\n");
    write(&outside.join("secret.txt"), "CANARY outside\n");
    std::fs::hard_link(outside.join("secret.txt"), root.join("hard_out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("docs/notes")).unwrap();
    std::os::unix::fs::symlink("/", root.join("r")).unwrap();
    std::os::unix::fs::symlink(".", root.join("x_here")).unwrap();
    std::os::unix::fs::symlink(".env", root.join("e")).unwrap();
    write(&root.join("bin/ls"), "#!/bin/sh\ntouch PWNED\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join("bin/ls"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&root.join("x/HEAD"), "ref: refs/heads/main\n");
    write(&root.join("x/config"), "[core]\n\tbare = true\n[diff]\n\texternal = ./evil.sh\n");
    let config = Config { home_dir: state.clone(), ..Config::default() };
    let workspace = Workspace::new(std::slice::from_ref(&root), &config).unwrap();
    Place { _dir: dir, root, state, workspace }
}

fn engine(p: &Place) -> PolicyEngine {
    PolicyEngine::new(default_rules().rules, true).with_workspace(&p.root).with_trusted_folder(true)
}

fn check(e: &PolicyEngine, p: &Place, command: &str, mode: ApprovalMode) -> Verdict {
    let args = json!({ "command": command });
    let call = PolicyCall::builtin("run_shell_command", &args);
    e.check_in(&call, mode, Some(&p.workspace))
}

#[test]
fn known_safe_commands_are_judged_through_the_file_layer_where_they_run() {
    let p = place();
    let e = engine(&p);
    let rows: &[(&str, Decision, &str)] = &[
        // finding 2: readers of what read_file refuses
        ("cat .env", Ask, "a sensitive file"),
        ("cat id_rsa", Ask, "a key"),
        ("head keys/server.pem", Ask, "a key"),
        ("cat .git/config", Ask, "git's config"),
        ("grep -r CANARY .", Ask, "a recursive reader"),
        ("grep -rn CANARY src", Ask, "a recursive reader"),
        ("head hard_out", Ask, "a hard link to an outside file"),
        ("cat *", Ask, "a glob that matches sensitive files"),
        ("cat inside.txt", Allow, "a plain file"),
        ("grep -n a inside.txt", Allow, "a plain file"),
        // finding 4: `cd` hides a symlink
        ("cat docs/notes", Ask, "a link out"),
        ("cd docs && cat notes", Ask, "a link out, after cd"),
        ("cd docs; cat notes", Ask, "a link out, after cd"),
        // A `cd` in a subshell may or may not apply: both folders are judged.
        ("(cd docs) && cat notes", Ask, "a link out in one of the folders"),
        ("cd src && cat a.txt", Allow, "a plain file after cd"),
        ("cd \"$D\" && cat a.txt", Ask, "a cd the parser cannot follow"),
        ("cd - && cat a.txt", Ask, "a cd the parser cannot follow"),
        ("git -C docs diff --no-index notes ../inside.txt", Ask, "git -C hides a link"),
        // finding 3: a repository under another name with diff.external
        ("git -C x diff --no-index a.txt b.txt", Ask, "a repository config that runs a program"),
        ("git show HEAD:.env", Ask, "a sensitive path in a revision"),
        ("git status", Allow, "plain git"),
        // The second attack (helper review of issue 34):
        ("grep -d recurse CANARY", Ask, "grep -d recurse is recursive"),
        ("grep --directories=recurse CANARY .", Ask, "grep --directories=recurse"),
        ("grep --dir=recurse CANARY .", Ask, "an abbreviated --directories"),
        ("grep --rec CANARY .", Ask, "an abbreviated --recursive"),
        ("git diff --no-index src .", Ask, "git diff --no-index of folders"),
        ("cat r/../etc/passwd", Ask, "a .. after a link"),
        ("cat x_here/../ws/e", Ask, "a .. after a link that looks harmless"),
        ("head -2 r/../etc/passwd", Ask, "a .. after a link"),
    ];
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(cmd, want, why)| {
            let v = check(&e, &p, cmd, ApprovalMode::Default);
            (v.decision != *want)
                .then(|| format!("{cmd:?} ({why}): got {:?} ({})", v.decision, v.reason))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Finding 5: a relative or empty PATH entry turned a known-safe name into the workspace's own
/// program: `ls` ran `./bin/ls` unasked.
#[test]
fn a_name_is_known_safe_only_where_path_finds_it_outside_the_workspace() {
    let p = place();
    for path in ["bin:/usr/bin:/bin", ":/usr/bin:/bin", "/usr/bin:.:/bin"] {
        let e = engine(&p).with_search_path(path);
        assert_eq!(check(&e, &p, "ls", ApprovalMode::Default).decision, Ask, "PATH={path}");
    }
    let planted = format!("{}:/usr/bin:/bin", p.root.join("bin").display());
    let e = engine(&p).with_search_path(planted);
    assert_eq!(check(&e, &p, "ls", ApprovalMode::Default).decision, Ask);
    let e = engine(&p).with_search_path("/usr/bin:/bin");
    assert_eq!(check(&e, &p, "ls", ApprovalMode::Default).decision, Allow);
    // Builtins are bash's own whatever PATH says.
    let e = engine(&p).with_search_path("bin");
    assert_eq!(check(&e, &p, "echo hi", ApprovalMode::Default).decision, Allow);
}

/// Finding 6: `auto_edit` let redirections write anywhere (`echo ... >> ~/.toolbelt/policies/x.toml`
/// ran unasked, and the next session allowed every command).
#[test]
fn auto_edit_lets_a_redirection_through_only_to_a_plain_workspace_file() {
    let p = place();
    let e = engine(&p);
    let policy = p.state.join("policies/x.toml");
    let rows: Vec<(String, Decision)> = vec![
        (format!("echo '[[rule]]' >> {}", policy.display()), Ask),
        ("echo x > .gemini/settings.json".into(), Ask),
        ("echo x > .git/hooks/pre-commit".into(), Ask),
        ("echo x > GEMINI.md".into(), Ask),
        ("echo x > ../outside/f".into(), Ask),
        ("echo x > .env".into(), Ask),
        ("echo x > $HOME/f".into(), Ask),
        ("cat < .env".into(), Ask),
        (format!("echo x > '/'{}", policy.display().to_string().trim_start_matches('/')), Ask),
        ("echo x > .gem''ini/settings.json".into(), Ask),
        ("echo x > ./.g\\it/config".into(), Ask),
        ("tr a a < .e''nv > o3.txt".into(), Ask),
        ("echo x > \"notes.txt\"".into(), Ask),
        ("echo x > notes.txt".into(), Allow),
        ("echo x > src/out.txt 2>&1".into(), Allow),
        ("echo hi > /dev/null".into(), Allow),
    ];
    for (cmd, want) in &rows {
        let v = check(&e, &p, cmd, ApprovalMode::AutoEdit);
        assert_eq!(v.decision, *want, "{cmd}: {}", v.reason);
    }
    // Default mode still asks before any redirection; yolo lets everything through.
    assert_eq!(check(&e, &p, "echo x > notes.txt", ApprovalMode::Default).decision, Ask);
    assert_eq!(check(&e, &p, "echo x > .gemini/settings.json", ApprovalMode::Yolo).decision, Allow);
}

/// What the table allows runs confined; what a rule, a mode or a person allows does not.
#[test]
fn only_what_the_table_alone_allows_is_confined() {
    let p = place();
    let e = engine(&p);
    let v = check(&e, &p, "cat inside.txt | wc -l", ApprovalMode::Default);
    assert_eq!((v.decision, v.confine), (Allow, true), "{}", v.reason);
    let v = check(&e, &p, "echo hi", ApprovalMode::Yolo);
    assert_eq!((v.decision, v.confine), (Allow, false));
    let v = check(&e, &p, "echo x > notes.txt", ApprovalMode::AutoEdit);
    assert_eq!(v.decision, Allow);
    let mut rules = default_rules();
    rules.extend(toolbelt_core::policy::toml::load_str(
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"cat\"\ndecision = \"allow\"\npriority = 100\n",
        toolbelt_core::policy::Tier::User,
        "user.toml",
        None,
    ));
    let ruled = PolicyEngine::new(rules.rules, true).with_workspace(&p.root);
    let v = check(&ruled, &p, "cat inside.txt", ApprovalMode::Default);
    assert_eq!((v.decision, v.confine), (Allow, false), "the user's rule vouches: {}", v.reason);
}

/// Where commands cannot be confined (no Landlock), the table shrinks: git, which runs what a
/// repository configures, is asked.
#[test]
fn without_confinement_git_is_asked() {
    let p = place();
    let e = engine(&p).with_confinable(false);
    assert_eq!(check(&e, &p, "git status", ApprovalMode::Default).decision, Ask);
    assert_eq!(check(&e, &p, "cat inside.txt", ApprovalMode::Default).decision, Allow);
}
