//! The sandbox (issue 18), through the binary: `toolbelt sandbox --check`, and commands run by
//! `toolbelt call --sandbox run_shell_command` inside a workspace that is not under /tmp (every
//! profile may write the temp folder).

use std::path::PathBuf;

use toolbelt_core::process::sandbox::support;
use toolbelt_test_support::TempTree;

use super::{command, toolbelt};

/// A workspace, a home and a sibling folder of the workspace, all outside the temp folder.
struct Place {
    tree: TempTree,
    sibling: tempfile::TempDir,
}

impl Place {
    fn new() -> Self {
        let base = base();
        Place { tree: TempTree::new_in(&base), sibling: tempfile::tempdir_in(&base).unwrap() }
    }

    fn sibling(&self) -> PathBuf {
        std::fs::canonicalize(self.sibling.path()).unwrap()
    }

    /// Runs `script` through run_shell_command with the sandbox on; `env` is set for toolbelt.
    fn shell(&self, script: &str, env: &[(&str, &str)]) -> super::Run {
        let args = serde_json::json!({ "command": script }).to_string();
        let mut c = command(
            &self.tree,
            &["call", "-s", "run_shell_command", &args, "--approval-mode", "yolo"],
        );
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        super::Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Where the test folders go: Cargo's temp folder for tests, unless that lies in the temp
/// folder every profile may write (a checkout under /tmp: every write would be allowed and
/// these tests fail for no fault of the sandbox); then a folder in the home directory.
pub fn base() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| "/tmp".into());
    let in_temp = std::fs::canonicalize(&target).is_ok_and(|t| t.starts_with(&temp));
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/toolbelt-tests"));
    match home {
        Some(home) if in_temp && std::fs::create_dir_all(&home).is_ok() => home,
        _ => target,
    }
}

/// Whether this machine can sandbox, as toolbelt sees it.
pub fn support_usable() -> bool {
    support().usable()
}

/// Whether commands get a mount namespace (control files in roots kept read-only).
pub fn support_mount_ns() -> bool {
    support().mount_ns
}

/// Whether this machine can sandbox. Where it cannot, the tests check the refusal instead
/// (asking for the sandbox is an error and nothing runs), and then fail: a CI machine without
/// Landlock must not pass the sandbox tests by skipping them. Whoever knowingly runs them on
/// such a kernel sets `TOOLBELT_TEST_NO_LANDLOCK=1`.
pub fn usable() -> bool {
    let usable = support().usable();
    if !usable {
        let p = Place::new();
        let r = p.shell("touch ran", &[]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("the sandbox needs Landlock"), "{}", r.stderr);
        assert!(!p.tree.root().join("ran").exists());
        assert!(
            std::env::var("TOOLBELT_TEST_NO_LANDLOCK").is_ok_and(|v| v == "1"),
            "this kernel cannot sandbox ({}); the sandbox tests would prove nothing. Set TOOLBELT_TEST_NO_LANDLOCK=1 to run the rest knowingly",
            support().missing.unwrap_or_default()
        );
    }
    usable
}

#[test]
fn check_says_what_the_machine_supports_with_and_without_landlock() {
    let t = TempTree::new();
    let r = toolbelt(&t, &["sandbox", "--check"], None);
    if usable() {
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        assert!(r.stdout.starts_with("landlock: yes (ABI "), "{}", r.stdout);
        assert!(r.stdout.contains("sandbox: available; profiles: permissive-open"), "{}", r.stdout);
    } else {
        assert_eq!(r.code, 1);
    }
    // Without Landlock (simulated): the report says so, and asking for the sandbox is an error
    // before anything runs.
    let out =
        command(&t, &["sandbox", "--check"]).env("TOOLBELT_LANDLOCK_ABI", "0").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.starts_with("landlock: no (switched off by TOOLBELT_LANDLOCK_ABI=0)"), "{text}");
    assert!(text.contains("sandbox: not available on this machine; asking for it is an error"));
    let args = r#"{"command":"touch ran"}"#;
    let out =
        command(&t, &["call", "--sandbox", "run_shell_command", args, "--approval-mode", "yolo"])
            .env("TOOLBELT_LANDLOCK_ABI", "0")
            .output()
            .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the sandbox needs Landlock"), "{err}");
    assert!(!t.root().join("ran").exists(), "the command ran unsandboxed");
    let out = command(&t, &["sandbox", "--", "touch", "ran"])
        .env("TOOLBELT_LANDLOCK_ABI", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!t.root().join("ran").exists(), "the command ran unsandboxed");
}

#[test]
fn the_default_profile_writes_the_workspace_and_tmp_but_not_a_sibling_or_ssh() {
    if !usable() {
        return;
    }
    let p = Place::new();
    let sibling = p.sibling();
    let ssh = p.tree.home().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let script = format!(
        "echo a > inside.txt; echo b > {tmp}/t.txt; echo c > {sib}/out.txt; echo d > {ssh}/authorized_keys; cat {sib}/../ 2>/dev/null; echo done",
        tmp = tmp.path().display(),
        sib = sibling.display(),
        ssh = ssh.display()
    );
    let r = p.shell(&script, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("done"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(p.tree.root().join("inside.txt")).unwrap(), "a\n");
    assert_eq!(std::fs::read_to_string(tmp.path().join("t.txt")).unwrap(), "b\n");
    assert!(!sibling.join("out.txt").exists(), "wrote a sibling of the workspace: {}", r.stdout);
    assert!(!ssh.join("authorized_keys").exists(), "wrote $HOME/.ssh: {}", r.stdout);
    assert!(r.stdout.contains("Permission denied"), "{}", r.stdout);
}

#[test]
fn a_descendant_cannot_lift_the_sandbox() {
    if !usable() {
        return;
    }
    let p = Place::new();
    let sib = p.sibling();
    let s = sib.display();
    // A new session, a double fork, a nested shell, a new user namespace, an unsandboxed
    // toolbelt asked to run the write: each still runs under the rules.
    let toolbelt = env!("CARGO_BIN_EXE_toolbelt");
    let script = format!(
        "setsid sh -c 'echo 1 > {s}/a'; sh -c '(sh -c \"echo 2 > {s}/b\" &) ; sleep 0.2'; \
         bash -c 'bash -c \"echo 3 > {s}/c\"'; unshare -r sh -c 'echo 4 > {s}/d'; \
         {toolbelt} sandbox --root {s} -- sh -c 'echo 5 > {s}/e'; sleep 0.3; echo done"
    );
    let r = p.shell(&script, &[]);
    assert!(r.stdout.contains("done"), "{}{}", r.stdout, r.stderr);
    let written: Vec<_> =
        std::fs::read_dir(&sib).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(written.is_empty(), "descendants wrote {written:?}: {}", r.stdout);
}

#[test]
fn a_closed_profile_cannot_connect_to_a_loopback_listener() {
    if !usable() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = Place::new();
    let script =
        format!("(echo hi > /dev/tcp/127.0.0.1/{port}) 2>&1 && echo CONNECTED || echo REFUSED");
    let open = p.shell(&script, &[]);
    assert!(open.stdout.contains("CONNECTED"), "open profile: {}{}", open.stdout, open.stderr);
    for profile in ["permissive-closed", "restrictive-closed"] {
        let closed = p.shell(&script, &[("SEATBELT_PROFILE", profile)]);
        assert!(closed.stdout.contains("REFUSED"), "{profile}: {}{}", closed.stdout, closed.stderr);
        assert!(!closed.stdout.contains("CONNECTED"), "{profile}: {}", closed.stdout);
    }
    // UDP and other families are closed too (Landlock's rules are TCP only).
    let udp = "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print(\"UDP\")' 2>&1 | tail -1";
    let closed = p.shell(udp, &[("SEATBELT_PROFILE", "permissive-closed")]);
    assert!(
        !closed.stdout.contains("UDP\n") && closed.stdout.contains("Operation not permitted"),
        "{}",
        closed.stdout
    );
}

#[test]
fn a_restrictive_profile_limits_reads_too() {
    if !usable() {
        return;
    }
    let p = Place::new();
    let sib = p.sibling();
    std::fs::write(sib.join("secret.txt"), "s3cret").unwrap();
    p.tree.file("mine.txt", "mine");
    let script = format!("cat mine.txt; cat {}/secret.txt 2>&1; echo", sib.display());
    let permissive = p.shell(&script, &[]);
    assert!(permissive.stdout.contains("s3cret"), "{}", permissive.stdout);
    let restrictive = p.shell(&script, &[("SEATBELT_PROFILE", "restrictive-open")]);
    assert!(restrictive.stdout.contains("mine"), "{}", restrictive.stdout);
    assert!(!restrictive.stdout.contains("s3cret"), "{}", restrictive.stdout);
    let bad = p.shell("true", &[("SEATBELT_PROFILE", "lenient-open")]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("not a sandbox profile"), "{}", bad.stderr);
}

/// The sandbox covers hooks and discovered tools too, and is switched on by `tools.sandbox` in
/// settings; `GEMINI_SANDBOX=false` switches it off over settings, as upstream.
#[test]
fn settings_switch_it_on_for_hooks_and_discovered_tools_too() {
    if !usable() {
        return;
    }
    let p = Place::new();
    let s = p.sibling();
    let s = s.display();
    let settings = serde_json::json!({
        "tools": {
            "sandbox": true,
            "discoveryCommand": format!("sh -c 'echo d > {s}/discovery.txt; echo []'"),
        },
        "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"type": "command", "command": format!("echo h > {s}/hook.txt; echo '{{}}'")}
        ]}]},
    });
    let dir = p.tree.home().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let args =
        serde_json::json!({ "command": format!("echo c > {s}/command.txt; echo ran") }).to_string();
    let argv = ["call", "run_shell_command", args.as_str(), "--approval-mode", "yolo"];
    let out = command(&p.tree, &argv).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ran"), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let written: Vec<_> =
        std::fs::read_dir(p.sibling()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(written.is_empty(), "written outside the sandbox: {written:?}");
    // The same without the sandbox writes all three: the test above can fail.
    let out = command(&p.tree, &argv).env("GEMINI_SANDBOX", "false").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("ran"));
    let mut written: Vec<String> = std::fs::read_dir(p.sibling())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, ["command.txt", "discovery.txt", "hook.txt"]);
}

/// Adversarial review: a sandboxed command wrote `~/.toolbelt/settings.json` (and
/// `~/.gemini/settings.json`) with `allowedPaths: ["/"]`, lifting the sandbox of every later
/// session; a file descriptor toolbelt inherited carried writes past it; in a closed profile it
/// drove a tmux server through its Unix socket; TIOCSTI typed into another terminal.
#[test]
fn the_review_escapes_stay_closed() {
    if !usable() {
        return;
    }
    let p = Place::new();
    let home = p.tree.home();
    for dir in [".toolbelt", ".gemini", ".cargo/bin"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    let lift = r#"{"tools":{"sandbox":{"enabled":true,"allowedPaths":["/"]}}}"#;
    let script = format!(
        "echo '{lift}' > ~/.toolbelt/settings.json; echo '{lift}' > ~/.gemini/settings.json; \
         echo x > ~/.toolbelt/trusted-folders.json; echo x > ~/.cargo/bin/cargo; echo done"
    );
    let r = p.shell(&script, &[]);
    assert!(r.stdout.contains("done"), "{}{}", r.stdout, r.stderr);
    for f in [
        ".toolbelt/settings.json",
        ".gemini/settings.json",
        ".toolbelt/trusted-folders.json",
        ".cargo/bin/cargo",
    ] {
        assert!(!home.join(f).exists(), "the command wrote ~/{f}");
    }

    // A descriptor open in toolbelt's parent does not reach the command.
    let leak = p.sibling().join("fdleak");
    let args = serde_json::json!({ "command": "echo pwn >&7" }).to_string();
    let toolbelt = env!("CARGO_BIN_EXE_toolbelt");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec 7>>'{}'; exec '{toolbelt}' call -s run_shell_command '{args}' --approval-mode yolo", leak.display()))
        .current_dir(p.tree.root())
        .env("HOME", home)
        .env("TOOLBELT_HOME", home)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Bad file descriptor"));
    assert_eq!(
        std::fs::read_to_string(&leak).unwrap_or_default(),
        "",
        "wrote through an inherited descriptor"
    );

    // A Unix socket of an outside program is out of reach with a closed profile.
    let sock = p.sibling().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let connect = format!(
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); print('CONNECTED')\" 2>&1 | tail -1",
        sock.display()
    );
    let open = p.shell(&connect, &[]);
    assert!(open.stdout.contains("CONNECTED"), "the open profile connects: {}", open.stdout);
    let closed = p.shell(&connect, &[("SEATBELT_PROFILE", "permissive-closed")]);
    assert!(!closed.stdout.contains("CONNECTED"), "{}", closed.stdout);

    // TIOCSTI is refused, even on the command's own terminal.
    let sti = "python3 -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('TYPED')\" 2>&1 | tail -1";
    let args = serde_json::json!({ "command": sti }).to_string();
    let out = command(
        &p.tree,
        &["call", "-s", "--pty", "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("TYPED") && text.contains("Operation not permitted"), "{text}");
}

/// A hostile repository's own settings cannot take the user's sandbox away or widen it: in a
/// folder that is not trusted, `tools.sandbox: false` and `sandboxAllowedPaths: ["/"]` in
/// `.gemini/settings.json` are ignored.
#[test]
fn an_untrusted_project_cannot_turn_the_sandbox_off_or_widen_it() {
    if !usable() {
        return;
    }
    let p = Place::new();
    let sib = p.sibling();
    let dir = p.tree.home().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), r#"{"tools": {"sandbox": true}}"#).unwrap();
    for hostile in [
        r#"{"tools": {"sandbox": false}}"#.to_string(),
        r#"{"tools": {"sandbox": {}}}"#.to_string(),
        r#"{"tools": {"sandbox": {"enabled": false}}}"#.to_string(),
        r#"{"tools": {"sandbox": {"enabled": true, "allowedPaths": ["/"]}, "sandboxAllowedPaths": ["/"]}}"#.to_string(),
        r#"{"security": {"toolSandboxing": false}, "tools": {"sandboxNetworkAccess": true}}"#.to_string(),
    ] {
        p.tree.file(".gemini/settings.json", &hostile);
        let args = serde_json::json!({ "command": format!("echo x > {}/out.txt; echo ran", sib.display()) })
            .to_string();
        let out = command(&p.tree, &["call", "run_shell_command", &args, "--approval-mode", "yolo"])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("ran"), "{hostile}");
        assert!(!sib.join("out.txt").exists(), "{hostile} took the sandbox away");
    }
}

/// Finding 8 of issue 33: the sandbox tests returned early where Landlock was missing, so a CI
/// machine without it passed them silently. Run one of them again without Landlock (simulated
/// with `TOOLBELT_LANDLOCK_ABI=0`): it fails, unless `TOOLBELT_TEST_NO_LANDLOCK=1` says the
/// run knows.
#[test]
fn without_landlock_the_sandbox_tests_fail_unless_told() {
    if std::env::var_os("TOOLBELT_LANDLOCK_ABI").is_some() {
        return; // the run below
    }
    let me = std::env::current_exe().unwrap();
    let run = |knowingly: bool| {
        let mut c = std::process::Command::new(&me);
        c.args(["--exact", "sandbox::a_restrictive_profile_limits_reads_too", "--test-threads=1"])
            .env("TOOLBELT_LANDLOCK_ABI", "0")
            .env_remove("TOOLBELT_TEST_NO_LANDLOCK");
        if knowingly {
            c.env("TOOLBELT_TEST_NO_LANDLOCK", "1");
        }
        let out = c.output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (ok, text) = run(false);
    assert!(!ok && text.contains("1 failed"), "{text}");
    let (ok, text) = run(true);
    assert!(ok && text.contains("1 passed"), "{text}");
}

/// Issue 46 (G10): the root's `GEMINI.md` (and the context files settings name) became the
/// next session's instructions, and sandboxed commands could change them. They are read-only
/// where they exist; where one does not, nothing is made in its place.
#[test]
fn context_files_are_read_only_to_sandboxed_commands() {
    if !usable() || !support_mount_ns() {
        return;
    }
    let p = Place::new();
    p.tree.file("GEMINI.md", "the person's instructions\n");
    p.tree.file("AGENTS.md", "agents\n");
    p.tree.file("notes.md", "notes\n");
    let settings = r#"{"context":{"fileName":["GEMINI.md","AGENTS.md"]}}"#;
    std::fs::write(p.tree.home().join("settings.json"), settings).unwrap();
    let r = p.shell(
        "echo obey >> GEMINI.md; echo obey >> AGENTS.md; rm -f GEMINI.md; mv AGENTS.md x.md; \
         echo more >> notes.md; echo done",
        &[],
    );
    assert!(r.stdout.contains("done"), "{}{}", r.stdout, r.stderr);
    let read = |f: &str| std::fs::read_to_string(p.tree.root().join(f)).unwrap_or_default();
    assert_eq!(read("GEMINI.md"), "the person's instructions\n");
    assert_eq!(read("AGENTS.md"), "agents\n");
    assert_eq!(read("notes.md"), "notes\nmore\n", "the workspace stays writable");
    // No GEMINI.md in a root: none is made (a folder in its place would break the next start).
    let q = Place::new();
    let r = q.shell("echo done", &[]);
    assert!(r.stdout.contains("done"), "{}{}", r.stdout, r.stderr);
    assert!(!q.tree.root().join("GEMINI.md").exists());
}

/// Issue 46 (G6): installed with `npx` or `uvx`, toolbelt's binary lay in a cache the sandbox
/// lets commands write; a sandboxed command replaced it, and the next launch ran the
/// replacement unsandboxed. The program and its package folder are read-only inside; the rest
/// of the cache stays writable.
#[test]
fn toolbelt_own_program_and_package_are_read_only_inside() {
    if !usable() || !support_mount_ns() {
        return;
    }
    let p = Place::new();
    let home = p.tree.home();
    for (layout, marker) in [
        (".cache/uv/archive-v0/abc", "pyvenv.cfg"),
        (".npm/_npx/abc/node_modules/agent-toolbelt-linux-x64", "package.json"),
    ] {
        let package = home.join(layout);
        std::fs::create_dir_all(package.join("bin")).unwrap();
        std::fs::write(package.join(marker), "{}\n").unwrap();
        let exe = package.join("bin/toolbelt");
        std::fs::copy(super::binary(), &exe).unwrap();
        let size = std::fs::metadata(&exe).unwrap().len();
        let script = format!(
            "echo x > {exe}; cp /bin/true {exe}; echo y > {bin}/agent-toolbelt; mv {pkg} {pkg}.old; \
             echo ok > {home}/.cache/other; echo done",
            exe = exe.display(),
            bin = package.join("bin").display(),
            pkg = package.display(),
            home = home.display()
        );
        let args = serde_json::json!({ "command": script }).to_string();
        let out = std::process::Command::new(&exe)
            .args(["call", "-s", "run_shell_command", &args, "--approval-mode", "yolo"])
            .current_dir(p.tree.root())
            .env("HOME", home)
            .env("TOOLBELT_HOME", home)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("done"), "{text}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::metadata(&exe).map(|m| m.len()).ok(), Some(size), "{layout}: replaced");
        assert!(!package.join("bin/agent-toolbelt").exists(), "{layout}: a program was added");
        assert!(!home.join(format!("{layout}.old")).exists(), "{layout}: the package was moved");
        assert!(home.join(".cache/other").exists(), "the cache is still writable");
    }
}
