//! Issue 15: the file tools tried as an attacker would. A cloned repository can ship a `s -> .`
//! link and a link to outside; a path of 41 `s/` hops then `link_out/...` was read, written,
//! listed and searched outside the workspace, and a folder swapped for a symlink while tools ran
//! leaked outside files.
#![cfg(unix)]

use std::path::Path;

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::run;

/// A workspace with `s -> .` and `link_out -> <outside>`, and an outside folder holding a secret.
fn hostile() -> (TempTree, TempTree) {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("secret.txt", "OUTSIDE-SECRET\n");
    t.file("inside.txt", "inside\n");
    t.symlink(".", "s");
    t.symlink(outside.root(), "link_out");
    (t, outside)
}

/// Trades two names atomically (`renameat2` with `RENAME_EXCHANGE`), over and over, on a thread
/// of its own until dropped: a name is always there, and is now one file, now the other.
struct Exchange {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Exchange {
    fn start(a: &Path, b: &Path) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (flag, a, b) = (stop.clone(), a.to_path_buf(), b.to_path_buf());
        let thread = std::thread::spawn(move || {
            use rustix::fs::{CWD, RenameFlags, renameat_with};
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE);
            }
        });
        Self { stop, thread: Some(thread) }
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn hops(n: usize, rest: &str) -> String {
    format!("{}{rest}", "s/".repeat(n))
}

fn refused(r: &crate::harness::Outcome, what: &str) {
    let text = r.model.to_string();
    assert!(!text.contains("OUTSIDE-SECRET"), "{what}: {text}");
    assert!(r.model.get("error").is_some(), "{what} must be refused: {text}");
}

#[test]
fn forty_one_symlink_hops_do_not_lead_outside() {
    let (t, outside) = hostile();
    for n in [0, 3, 41] {
        let path = hops(n, "link_out/secret.txt");
        refused(&run(&t, "read_file", json!({"file_path": path})), &format!("read_file {n}"));
        let r = run(
            &t,
            "write_file",
            json!({"file_path": hops(n, "link_out/new.txt"), "content": "x"}),
        );
        refused(&r, &format!("write_file {n}"));
        assert!(!outside.root().join("new.txt").exists(), "write_file {n} wrote outside");
        let r = run(
            &t,
            "replace",
            json!({"file_path": path, "old_string": "OUTSIDE", "new_string": "PWNED"}),
        );
        refused(&r, &format!("replace {n}"));
        let dir = hops(n, "link_out");
        refused(&run(&t, "list_directory", json!({"dir_path": dir})), &format!("list {n}"));
        let r = run(&t, "glob", json!({"pattern": "*.txt", "dir_path": dir}));
        refused(&r, &format!("glob {n}"));
        let r = run(&t, "grep_search", json!({"pattern": "SECRET", "dir_path": dir}));
        refused(&r, &format!("grep_search {n}"));
    }
    assert_eq!(
        std::fs::read_to_string(outside.root().join("secret.txt")).unwrap(),
        "OUTSIDE-SECRET\n"
    );
    // read_many_files takes globs and paths; none of them reaches outside.
    let r = run(
        &t,
        "read_many_files",
        json!({"include": [hops(41, "link_out/secret.txt"), "link_out/*"]}),
    );
    assert!(!r.model.to_string().contains("OUTSIDE-SECRET"), "{}", r.model);
    // A link that stays inside keeps working, however it is spelled.
    let r = run(&t, "read_file", json!({"file_path": hops(5, "inside.txt")}));
    assert_eq!(r.output(), "inside\n");
}

#[test]
fn a_loop_of_links_is_an_error_not_a_hang() {
    let t = TempTree::new();
    t.symlink("b", "a").symlink("a", "b");
    let r = run(&t, "read_file", json!({"file_path": "a"}));
    assert!(r.error().contains("Infinite recursion"), "{}", r.error());
}

/// A folder swapped for a symlink to outside while reads run: not one outside byte comes back.
#[test]
fn a_folder_swapped_for_a_symlink_never_leaks_outside_bytes() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("f.txt", "OUTSIDE-SECRET\n").file("outside-only.txt", "OUTSIDE-SECRET\n");
    t.file("d/f.txt", "inside\n");
    let (d, real_d, link) = (t.root().join("d"), t.root().join("d.real"), t.root().join("d.link"));
    std::os::unix::fs::symlink(outside.root(), &link).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, d, real_d, link) = (stop.clone(), d.clone(), real_d.clone(), link.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // d is the real folder, then the link to outside, then the folder again.
                let _ = std::fs::rename(&d, &real_d);
                let _ = std::fs::rename(&link, &d);
                std::thread::yield_now();
                let _ = std::fs::rename(&d, &link);
                let _ = std::fs::rename(&real_d, &d);
            }
        })
    };
    let env = crate::harness::env_for(&t, &[]);
    // Four readers in parallel, 125 rounds each: 500 of each call.
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let env = env.clone();
            std::thread::spawn(move || {
                let mut leaks = 0;
                for _ in 0..125 {
                    for (tool, args) in [
                        ("read_file", json!({"file_path": "d/f.txt"})),
                        ("grep_search", json!({"pattern": "SECRET|inside", "dir_path": "d"})),
                        ("list_directory", json!({"dir_path": "d"})),
                    ] {
                        let text = crate::harness::run_in(&env, tool, args).model.to_string();
                        if text.contains("OUTSIDE-SECRET") || text.contains("outside-only") {
                            leaks += 1;
                        }
                    }
                }
                leaks
            })
        })
        .collect();
    let leaks: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(leaks, 0, "outside bytes or names came back");
    assert!(Path::new(&outside.root().join("f.txt")).exists());
}

/// Issue 15 (adversarial review): the walks of glob, grep_search and read_many_files descended
/// into a folder by name, so a folder swapped for a symlink mid-walk listed outside *names*
/// (34 of 300 globs returned `outside-only.txt`). Whatever a walk yields is now confirmed by a
/// handle opened beneath the root: the same file, or it is left out.
#[test]
fn a_folder_swapped_mid_walk_never_leaks_outside_names() {
    let t = TempTree::new();
    let outside = TempTree::new();
    for i in 0..20 {
        outside.file(&format!("outside-only-{i}.txt"), "OUTSIDE-SECRET\n");
    }
    for i in 0..20 {
        t.file(&format!("d/inside-{i}.txt"), "inside\n");
    }
    let (d, link) = (t.root().join("d"), t.root().join("d.link"));
    std::os::unix::fs::symlink(outside.root(), &link).unwrap();
    let swapper = Exchange::start(&d, &link);
    let env = crate::harness::env_for(&t, &[]);
    let walkers: Vec<_> = (0..4)
        .map(|_| {
            let env = env.clone();
            std::thread::spawn(move || {
                let mut leaks = Vec::new();
                for _ in 0..100 {
                    for (tool, args) in [
                        ("glob", json!({"pattern": "**/*.txt"})),
                        ("grep_search", json!({"pattern": "SECRET|inside"})),
                        ("read_many_files", json!({"include": ["**/*.txt"]})),
                    ] {
                        // What the model sees and what a person is shown.
                        let r = crate::harness::run_in(&env, tool, args);
                        let shown = r.result.as_ref().map(|x| x.return_display.to_string());
                        let text = format!("{} {}", r.model, shown.unwrap_or_default());
                        if text.contains("OUTSIDE-SECRET") || text.contains("outside-only") {
                            leaks.push(format!("{tool}: {text}"));
                        }
                    }
                }
                leaks
            })
        })
        .collect();
    let leaks: Vec<String> = walkers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    drop(swapper);
    assert!(leaks.is_empty(), "{} walks leaked outside names, first: {}", leaks.len(), leaks[0]);
}

/// Found by an adversarial review: a name swapped back and forth between an inside file and a
/// hard link to an outside file was counted twice while the roots were walked, so the outside
/// file passed as "every name in the workspace" (14 to 25 reads in 200 leaked it).
#[test]
fn a_hard_link_swapped_in_never_leaks_outside_bytes() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("secret.txt", "OUTSIDE-SECRET\n");
    t.file("h.txt", "inside\n");
    let (h, hl) = (t.root().join("h.txt"), t.root().join("hl"));
    std::fs::hard_link(outside.root().join("secret.txt"), &hl).unwrap();
    let swapper = Exchange::start(&h, &hl);
    // A session per round: each finds the file's names anew, as each `toolbelt call` does.
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let envs: Vec<_> = (0..75).map(|_| crate::harness::env_for(&t, &[])).collect();
            std::thread::spawn(move || {
                let mut leaks = Vec::new();
                for env in envs {
                    for (tool, args) in [
                        ("read_file", json!({"file_path": "h.txt"})),
                        ("grep_search", json!({"pattern": "SECRET|inside"})),
                        ("read_many_files", json!({"include": ["h.txt", "hl"]})),
                    ] {
                        let text = crate::harness::run_in(&env, tool, args).model.to_string();
                        if text.contains("OUTSIDE-SECRET") {
                            leaks.push(format!("{tool}: {text}"));
                        }
                    }
                }
                leaks
            })
        })
        .collect();
    let leaks: Vec<String> = readers.into_iter().flat_map(|r| r.join().unwrap()).collect();
    drop(swapper);
    assert!(leaks.is_empty(), "{} reads leaked, first: {}", leaks.len(), leaks[0]);
}

/// Found while the hard-link check was rewritten after CI caught one leak in 900 reads of the
/// swap above: the names found when the session first met the file were checked by name again,
/// through any symlink on the way. A folder that held a second name when the roots were walked,
/// then swapped for a link to the outside folder, made the outside name count as an inside one
/// (on the old code this read showed OUTSIDE-SECRET every time).
#[test]
fn a_folder_swapped_for_a_link_out_does_not_count_the_outside_name() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("notes.txt", "OUTSIDE-SECRET\n");
    for d in ["d", "e"] {
        std::fs::create_dir(t.root().join(d)).unwrap();
        std::fs::hard_link(outside.root().join("notes.txt"), t.root().join(d).join("notes.txt"))
            .unwrap();
    }
    let env = crate::harness::env_for(&t, &[]);
    let first = crate::harness::run_in(&env, "read_file", json!({"file_path": "d/notes.txt"}));
    assert!(!first.model.to_string().contains("OUTSIDE-SECRET"), "{}", first.model);
    std::fs::remove_file(t.root().join("e/notes.txt")).unwrap();
    std::fs::remove_dir(t.root().join("e")).unwrap();
    t.symlink(outside.root(), "e");
    let second = crate::harness::run_in(&env, "read_file", json!({"file_path": "d/notes.txt"}));
    let text = second.model.to_string();
    assert!(!text.contains("OUTSIDE-SECRET"), "leaked: {text}");
    assert!(text.contains("hard link"), "{text}");
}

/// Found by an attack on the rewritten count: a file bind-mounted into the workspace showed the
/// same inode under a second name, so the one inside name of a file linked from outside was
/// counted twice (its link count) and every tool printed OUTSIDE-SECRET. A mount's root is no
/// name of the file. Needs mount rights (root here; where `mount` is refused there is nothing
/// to attack, and the test says so).
#[cfg(target_os = "linux")]
#[test]
fn a_file_bind_mounted_into_the_workspace_is_not_a_second_name() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("notes.txt", "OUTSIDE-SECRET\n");
    t.file("b.txt", "");
    std::fs::create_dir(t.root().join("sub")).unwrap();
    std::fs::hard_link(outside.root().join("notes.txt"), t.root().join("sub/link.txt")).unwrap();
    let mounted = std::process::Command::new("mount")
        .arg("--bind")
        .args([t.root().join("sub/link.txt"), t.root().join("b.txt")])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("no mount rights here: nothing to attack");
        return;
    }
    let env = crate::harness::env_for(&t, &[]);
    let mut leaks = Vec::new();
    for (tool, args) in [
        ("read_file", json!({"file_path": "b.txt"})),
        ("read_file", json!({"file_path": "sub/link.txt"})),
        ("read_many_files", json!({"include": ["**/*.txt"]})),
        ("grep_search", json!({"pattern": "SECRET"})),
    ] {
        let text = crate::harness::run_in(&env, tool, args).model.to_string();
        if text.contains("OUTSIDE-SECRET") {
            leaks.push(format!("{tool}: {text}"));
        }
    }
    let _ = std::process::Command::new("umount").arg(t.root().join("b.txt")).status();
    assert!(leaks.is_empty(), "{leaks:?}");
}

/// Found by an adversarial review: read_many_files sniffed a file's type by name after the
/// walk, so a FIFO swapped in for a listed file blocked the call until its deadline.
#[test]
fn a_fifo_swapped_in_does_not_block_read_many_files() {
    let t = TempTree::new();
    t.file("p.txt", "plain\n");
    let (p, fifo) = (t.root().join("p.txt"), t.root().join("f.fifo"));
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let swapper = Exchange::start(&p, &fifo);
    let env = crate::harness::env_for(&t, &[]);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..200 {
            let _ = crate::harness::run_in(&env, "read_many_files", json!({"include": ["p.txt"]}));
        }
        let _ = tx.send(());
    });
    let done = rx.recv_timeout(std::time::Duration::from_secs(60));
    drop(swapper);
    assert!(done.is_ok(), "read_many_files blocked on a FIFO");
}

/// Found by an adversarial review: a refusal named where an outside link leads (a name the
/// caller never gave), and the sensitive rules did not apply in the project temp folder.
#[test]
fn refusals_name_what_was_asked_and_the_temp_folder_keeps_the_rules() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("hidden/OUTSIDE-ONLY-NAME.txt", "x");
    t.symlink(outside.root().join("hidden/OUTSIDE-ONLY-NAME.txt"), "innocent");
    let r = run(&t, "read_file", json!({"file_path": "innocent"}));
    assert!(r.error().contains("Path not in workspace"), "{}", r.error());
    assert!(!r.model.to_string().contains("OUTSIDE-ONLY-NAME"), "{}", r.model);
    assert!(r.error().contains("innocent"), "{}", r.error());

    let env = crate::harness::env_for(&t, &[]);
    let temp = env.workspace.temp_dir().to_path_buf();
    std::fs::create_dir_all(&temp).unwrap();
    std::fs::write(temp.join(".env"), "TEMP-SECRET=1\n").unwrap();
    let r = crate::harness::run_in(&env, "read_file", json!({"file_path": temp.join(".env")}));
    assert!(!r.model.to_string().contains("TEMP-SECRET"), "{}", r.model);
    let r = crate::harness::run_in(
        &env,
        "write_file",
        json!({"file_path": temp.join(".env.local"), "content": "x"}),
    );
    assert!(r.model.get("error").is_some(), "{}", r.model);
}

/// Found by a third adversarial review: a refusal named the sensitive file an innocent link
/// points to (`a.txt -> gha-creds-TOPSECRET.json`), and a root whose parent was swapped for a
/// link while the session started got a handle on one folder and the path of another (glob
/// listed the other folder's names under the root's path).
#[test]
fn refusals_do_not_name_secrets_and_roots_are_what_their_handle_is() {
    let t = TempTree::new();
    t.file("gha-creds-TOPSECRET-NAME.json", "{}");
    t.symlink("gha-creds-TOPSECRET-NAME.json", "a.txt");
    for (tool, args) in [
        ("read_file", json!({"file_path": "a.txt"})),
        ("write_file", json!({"file_path": "a.txt", "content": "x"})),
        ("replace", json!({"file_path": "a.txt", "old_string": "{}", "new_string": "[]"})),
    ] {
        let r = run(&t, tool, args);
        assert!(r.model.get("error").is_some(), "{tool}: {}", r.model);
        assert!(!r.model.to_string().contains("TOPSECRET"), "{tool}: {}", r.model);
    }

    let base = TempTree::new();
    base.file("P/ws/sub/inside.txt", "x").file("EVIL/ws/sub/EVIL-NAME.txt", "x");
    let (p, swap) = (base.root().join("P"), base.root().join("swap"));
    std::os::unix::fs::symlink(base.root().join("EVIL"), &swap).unwrap();
    let swapper = Exchange::start(&p, &swap);
    let root = p.join("ws");
    let mut leaks = Vec::new();
    for _ in 0..300 {
        let config = toolbelt_core::config::Config::default();
        let Ok(ws) = toolbelt_core::Workspace::new(std::slice::from_ref(&root), &config) else {
            continue;
        };
        let real = ws.primary().to_path_buf();
        let env = toolbelt_core::ToolEnv::new(ws, config);
        let text =
            crate::harness::run_in(&env, "glob", json!({"pattern": "**/*.txt"})).model.to_string();
        // The root is whichever folder the handle holds; its path must say which.
        let evil_root = real.to_string_lossy().contains("EVIL");
        if text.contains("EVIL-NAME") != evil_root {
            leaks.push(text);
        }
    }
    drop(swapper);
    assert!(
        leaks.is_empty(),
        "{} sessions listed another folder's names, first: {}",
        leaks.len(),
        leaks[0]
    );
}

/// Issue 15: grep_search returned the lines of `id_rsa`, `*.pem`, `*.key`, `.env`, `.netrc`,
/// `.ssh/id_ed25519` and (with `no_ignore`) `.git/config`; glob listed their names; a hard link
/// to a secret was read under another name.
#[test]
fn searches_never_return_what_the_sensitive_rules_refuse() {
    let t = TempTree::new();
    t.file(".git/config", "[remote] url = SECRET-git\n");
    for f in [
        "id_rsa",
        "server.pem",
        "tls.key",
        "cert.p12",
        ".env",
        ".env.local",
        ".netrc",
        ".ssh/id_ed25519",
    ] {
        t.file(f, format!("SECRET-{f}\n"));
    }
    t.file("notes.txt", "SECRET-free line\n");
    for args in [
        json!({"pattern": "SECRET"}),
        json!({"pattern": "SECRET", "include_pattern": "**/*"}),
        json!({"pattern": "SECRET", "include_pattern": "**/*", "no_ignore": true}),
    ] {
        let r = run(&t, "grep_search", args.clone());
        let text = r.model.to_string();
        assert!(text.contains("SECRET-free"), "{args}: the plain file is found: {text}");
        assert!(
            !text.contains("SECRET-") || text.matches("SECRET-").count() == 1,
            "{args}: {text}"
        );
    }
    let r = run(&t, "glob", json!({"pattern": "**/*"}));
    let text = r.model.to_string();
    for name in ["id_rsa", "server.pem", "tls.key", ".env", ".netrc", "id_ed25519"] {
        assert!(!text.contains(name), "glob lists {name}: {text}");
    }
    assert!(text.contains("notes.txt") && text.contains("hidden"), "{text}");
    let r = run(&t, "read_many_files", json!({"include": ["**/*"]}));
    assert!(!r.model.to_string().contains("SECRET-id_rsa"), "{}", r.model);
}

/// Issue 15: a hard link to a sensitive file was read under another name.
#[test]
fn a_hard_link_to_a_secret_is_refused_under_any_name() {
    let t = TempTree::new();
    t.file("keys/id_rsa", "SECRET-KEY\n");
    t.file("plain.txt", "plain\n");
    std::fs::hard_link(t.root().join("keys/id_rsa"), t.root().join("notes.txt")).unwrap();
    let r = run(&t, "read_file", json!({"file_path": "notes.txt"}));
    assert!(r.error().contains("a hard link") && r.error().contains("\"id_rsa\""), "{}", r.model);
    let r = run(&t, "grep_search", json!({"pattern": "SECRET|plain"}));
    assert!(!r.model.to_string().contains("SECRET-KEY"), "{}", r.model);
    assert!(r.model.to_string().contains("plain"), "{}", r.model);
    let r = run(&t, "read_many_files", json!({"include": ["*.txt"]}));
    assert!(!r.model.to_string().contains("SECRET-KEY"), "{}", r.model);
    let r = run(
        &t,
        "replace",
        json!({"file_path": "notes.txt", "instruction": "i", "old_string": "SECRET", "new_string": "x"}),
    );
    assert!(!r.model.to_string().contains("SECRET-KEY"), "{}", r.model);
    assert!(r.model.get("error").is_some(), "{}", r.model);
    // A file with several names none of which is sensitive reads as usual.
    std::fs::hard_link(t.root().join("plain.txt"), t.root().join("plain2.txt")).unwrap();
    assert_eq!(run(&t, "read_file", json!({"file_path": "plain2.txt"})).output(), "plain\n");
}

/// Found by an adversarial review of issue 22: refusing a hard link to a secret named the
/// secret's path (`hard link of deep/.aws/mycreds_prod`), in read_file's error and in
/// read_many_files' skipped reasons. The refusal names the rule, never the other name.
#[test]
fn refusing_a_hard_link_never_names_the_secret_it_links_to() {
    let t = TempTree::new();
    t.file("deep/.aws/mycreds_prod", "SECRET\n");
    std::fs::hard_link(t.root().join("deep/.aws/mycreds_prod"), t.root().join("notes.txt"))
        .unwrap();
    let leaks = |text: &str| text.contains("mycreds") || text.contains("deep/");
    let r = run(&t, "read_file", json!({"file_path": "notes.txt"}));
    assert!(r.error().contains("a hard link") && r.error().contains("\".aws\""), "{}", r.model);
    assert!(!leaks(&r.model.to_string()), "{}", r.model);
    for (tool, args) in [
        ("read_many_files", json!({"include": ["*.txt"]})),
        ("grep_search", json!({"pattern": "SECRET"})),
        ("glob", json!({"pattern": "*.txt"})),
        ("list_directory", json!({"dir_path": "."})),
        ("replace", json!({"file_path": "notes.txt", "old_string": "S", "new_string": "x"})),
        ("write_file", json!({"file_path": "notes.txt", "content": "x"})),
    ] {
        let r = run(&t, tool, args);
        assert!(!leaks(&r.model.to_string()), "{tool}: {}", r.model);
    }
    assert_eq!(
        std::fs::read_to_string(t.root().join("deep/.aws/mycreds_prod")).unwrap(),
        "SECRET\n"
    );
}

/// Found by an adversarial review: a hard link to a file outside the roots (or into
/// node_modules) was read freely; case variants and trailing dots of the configurable rules
/// (`ID_RSA`, `server.KEY`, `id_rsa.`) were read, searched and listed.
#[test]
fn links_to_outside_and_spelling_variants_of_secrets_are_refused() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("sshdir/id_rsa", "OUTSIDE-SECRET-KEY\n").file("plain.txt", "OUTSIDE-PLAIN\n");
    std::fs::hard_link(outside.root().join("sshdir/id_rsa"), t.root().join("innocent.txt"))
        .unwrap();
    std::fs::hard_link(outside.root().join("plain.txt"), t.root().join("plain-link.txt")).unwrap();
    t.file("node_modules/pkg/index.js", "NODEMOD-SECRET\n");
    std::fs::hard_link(t.root().join("node_modules/pkg/index.js"), t.root().join("hl-nm.txt"))
        .unwrap();
    for f in ["innocent.txt", "plain-link.txt", "hl-nm.txt"] {
        let r = run(&t, "read_file", json!({"file_path": f}));
        assert!(r.error().contains("hard link"), "{f}: {}", r.model);
    }
    let r = run(&t, "grep_search", json!({"pattern": "SECRET|PLAIN"}));
    assert!(
        !r.model.to_string().contains("OUTSIDE-") && !r.model.to_string().contains("NODEMOD"),
        "{}",
        r.model
    );
    for f in ["ID_RSA", "server.KEY", "cert.Pem", "id_rsa.", ".NETRC"] {
        t.file(f, "CASE-SECRET\n");
        let r = run(&t, "read_file", json!({"file_path": f}));
        assert!(r.error().contains("sensitive-path rule"), "{f}: {}", r.model);
    }
    let r = run(&t, "grep_search", json!({"pattern": "CASE-SECRET", "include_pattern": "**/*"}));
    assert!(r.model.to_string().contains("No matches found"), "{}", r.model);
    let r = run(&t, "glob", json!({"pattern": "*"}));
    assert!(!r.model.to_string().contains("ID_RSA"), "{}", r.model);
}
