//! Issue 33: the sandbox where two pieces meet. Each test reproduces one finding of the attack
//! on the sandbox as it was (rules built once from the start folder and opened by name,
//! toolbelt's own state writable from inside, secrets in /proc, /dev/pts writable, a
//! position-dependent binary) and fails on that code.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolbelt_test_support::TempTree;

use super::mcp_session::Mcp;
use super::sandbox::{base, usable};

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
}

/// Finding 1: `toolbelt mcp --sandbox` without `--root`, started in one folder, with a client
/// whose roots are elsewhere: the write rules stayed those of the start folder, so the start
/// folder was writable and the client's root was not.
#[test]
fn the_sandbox_follows_the_clients_roots_not_the_folder_the_server_started_in() {
    if !usable() {
        return;
    }
    let start = TempTree::new_in(&base());
    let client = TempTree::new_in(&base());
    let (s, c) = (canonical(start.root()), canonical(client.root()));
    let mut m = Mcp::start(
        &start,
        &s,
        &["--sandbox", "--approval-mode", "yolo"],
        &[],
        Some(&[c.as_path()]),
    );
    let text = m.shell(&format!(
        "echo x > {s}/start.txt; echo y > {c}/client.txt; echo done",
        s = s.display(),
        c = c.display()
    ));
    assert!(text.contains("done"), "{text}");
    assert!(!s.join("start.txt").exists(), "the start folder was writable: {text}");
    assert_eq!(
        std::fs::read_to_string(c.join("client.txt")).unwrap_or_default(),
        "y\n",
        "the client's root was not writable: {text}"
    );
}

/// Finding 2: a writable root nested in another writable root was replaced, from inside the
/// sandbox, by a symlink to a folder outside; the next command's rules were opened by name and
/// granted that folder.
#[test]
fn a_root_swapped_for_a_symlink_grants_nothing_outside() {
    if !usable() {
        return;
    }
    let outer = TempTree::new_in(&base());
    let outside = tempfile::tempdir_in(base()).unwrap();
    let o = canonical(outer.root());
    let inner = o.join("inner");
    std::fs::create_dir(&inner).unwrap();
    let out = canonical(outside.path());
    let (o_s, i_s) = (o.display().to_string(), inner.display().to_string());
    let mut m = Mcp::start(
        &outer,
        &o,
        &["--sandbox", "--approval-mode", "yolo", "--root", &o_s, "--root", &i_s],
        &[],
        None,
    );
    let text = m.shell(&format!(
        "mv {i_s} {o_s}/was-inner && ln -s {} {i_s} && echo swapped",
        out.display()
    ));
    // Where commands get a mount namespace the nested root is a mount point: it cannot be
    // moved at all. Elsewhere the move succeeds, and the next command is refused.
    if super::sandbox::support_mount_ns() {
        assert!(text.contains("Device or resource busy") && !text.contains("swapped"), "{text}");
        return;
    }
    assert!(text.contains("swapped"), "{text}");
    let text = m.shell(&format!("echo pwn > {i_s}/escaped.txt; echo done"));
    assert!(!out.join("escaped.txt").exists(), "the swapped root granted the outside: {text}");
    // The root toolbelt holds is no longer where it was: the command is refused, and says why.
    assert!(text.contains("is no longer the folder toolbelt holds"), "{text}");
}

/// Finding 2, the temp folder: `TMPDIR` in a folder every command may write was replaced by a
/// symlink to a folder outside, and the next command could write there.
#[test]
fn a_temp_folder_swapped_for_a_symlink_grants_nothing_outside() {
    if !usable() {
        return;
    }
    let tree = TempTree::new_in(&base());
    let outside = tempfile::tempdir_in(base()).unwrap();
    let out = canonical(outside.path());
    let tmp = tempfile::tempdir().unwrap();
    let t = canonical(tmp.path()).join("tmpdir");
    std::fs::create_dir(&t).unwrap();
    let t_s = t.display().to_string();
    let root = canonical(tree.root());
    let mut m = Mcp::start(
        &tree,
        &root,
        &["--sandbox", "--approval-mode", "yolo", "--root", root.to_str().unwrap()],
        &[("TMPDIR", &t_s)],
        None,
    );
    let text = m.shell(&format!("rm -rf {t_s} && ln -s {} {t_s} && echo swapped", out.display()));
    assert!(text.contains("swapped"), "{text}");
    let text = m.shell(&format!("echo pwn > {t_s}/escaped.txt; echo done"));
    assert!(
        !out.join("escaped.txt").exists(),
        "the swapped temp folder granted the outside: {text}"
    );
    // Nor did toolbelt make the command's scratch folder where the link leads.
    assert!(walk(&out).is_empty(), "toolbelt wrote through the link: {:?}", walk(&out));
}

/// Finding 3: the folder for saved long outputs (under `~/.toolbelt/tmp`) was writable from
/// inside; a command re-pointed the project's folder there with a symlink, and toolbelt itself
/// wrote the next command's output wherever it led.
#[test]
fn the_saved_output_folder_cannot_be_redirected_from_inside() {
    if !usable() {
        return;
    }
    let tree = TempTree::new_in(&base());
    let outside = tempfile::tempdir_in(base()).unwrap();
    let out = canonical(outside.path());
    let state = tree.home().join(".toolbelt");
    std::fs::create_dir_all(state.join("tmp")).unwrap();
    let root = canonical(tree.root());
    let id = format!("{:016x}", toolbelt_core::files::fnv1a(root.to_string_lossy().bytes()));
    let project = state.join("tmp").join(&id);
    let state_s = state.display().to_string();
    let mut m = Mcp::start(
        &tree,
        &root,
        &["--sandbox", "--approval-mode", "yolo", "--root", root.to_str().unwrap()],
        &[("TOOLBELT_HOME", &state_s)],
        None,
    );
    let text = m.shell(&format!(
        "rm -rf {p}; ln -s {o} {p}; echo tried",
        p = project.display(),
        o = out.display()
    ));
    assert!(text.contains("tried"), "{text}");
    // More than the 1 MiB kept in memory: the rest is saved to a file.
    let text = m.shell("head -c 3000000 /dev/zero | tr '\\0' a; echo");
    assert!(text.contains("Output"), "{text}");
    let written: Vec<_> = walk(&out);
    assert!(written.is_empty(), "toolbelt wrote through the planted link: {written:?}");
    assert!(
        !std::fs::symlink_metadata(&project).is_ok_and(|m| m.file_type().is_symlink()),
        "the command could plant a link in toolbelt's state folder"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

/// A script that walks the command's ancestors and prints every environment entry it can read
/// that holds `needle`.
const WALK_ANCESTORS: &str = r#"p=$$
while [ "$p" -gt 1 ]; do
  if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -q "$1"; then echo "LEAK in $p: $(tr '\0' ' ' < /proc/$p/comm)"; fi
  p=$(awk '{print $4}' /proc/$p/stat)
done
echo walked
"#;

/// Finding 4: the reaper is a fork of toolbelt that never execs, so its `/proc/PID/environ`
/// held toolbelt's start-up environment, and a command walking its ancestors read the API key
/// its own environment was cleaned of (toolbelt's own environ too).
#[test]
fn no_ancestor_of_a_command_shows_the_api_key_in_proc() {
    let tree = TempTree::new_in(&base());
    tree.file("walk.sh", WALK_ANCESTORS);
    let canary = "canary-k3y-0123456789";
    let mut runs = vec![false];
    if super::sandbox::support_usable() {
        runs.push(true);
    }
    for sandboxed in runs {
        let args = json!({ "command": "sh walk.sh canary-k3y" }).to_string();
        let mut argv = vec!["call", "run_shell_command", &args, "--approval-mode", "yolo"];
        if sandboxed {
            argv.push("--sandbox");
        }
        let out = super::command(&tree, &argv)
            .env("GEMINI_API_KEY", canary)
            .env("OPENAI_API_KEY", canary)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("walked"), "{text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(!text.contains("LEAK"), "sandboxed: {sandboxed}: {text}");
    }
}

/// Finding 6: `/dev/pts` was writable inside every profile, so a command could draw a fake
/// approval prompt on the user's other terminals.
#[test]
fn no_other_terminal_is_writable_from_inside() {
    if !usable() {
        return;
    }
    let tree = TempTree::new_in(&base());
    let pty = nix::pty::openpty(None, None).unwrap();
    let name = nix::unistd::ttyname(&pty.slave).unwrap();
    let args = json!({ "command": format!("echo FAKE-PROMPT > {} && echo wrote || echo refused", name.display()) })
        .to_string();
    let out = super::command(
        &tree,
        &["call", "-s", "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("refused") && !text.contains("wrote"), "{text}");
    // Nothing reached the other terminal.
    nix::fcntl::fcntl(&pty.master, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK))
        .unwrap();
    let mut buf = [0u8; 256];
    let got = nix::unistd::read(&pty.master, &mut buf).unwrap_or(0);
    assert!(!String::from_utf8_lossy(&buf[..got]).contains("FAKE"), "the prompt was drawn");
    // Its own terminal (--pty) still works.
    let args = json!({ "command": "echo mine > /dev/tty && echo ok" }).to_string();
    let out = super::command(
        &tree,
        &["call", "-s", "--pty", "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mine") && text.contains("ok"), "{text}");
}

/// Finding 7: the binary was linked `-no-pie` to save a millisecond of start-up. It is a
/// position-independent executable with full RELRO (read-only relocations, bound now).
#[test]
fn the_binary_is_position_independent_with_full_relro() {
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_toolbelt")).unwrap();
    let elf = Elf(&bytes);
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(elf.u16(16), 3, "e_type is not ET_DYN: the binary is not a PIE");
    let (phoff, phentsize, phnum) = (elf.u64(32), elf.u16(54), elf.u16(56));
    let mut relro = false;
    let mut now = false;
    for i in 0..phnum as usize {
        let ph = phoff as usize + i * phentsize as usize;
        let kind = elf.u32(ph);
        if kind == 0x6474_e552 {
            relro = true; // PT_GNU_RELRO
        }
        if kind == 2 {
            // PT_DYNAMIC: look for DT_FLAGS (30) with BIND_NOW (8) or DT_FLAGS_1 with NOW (1).
            let (off, size) = (elf.u64(ph + 8) as usize, elf.u64(ph + 32) as usize);
            for d in (off..off + size).step_by(16) {
                let (tag, val) = (elf.u64(d), elf.u64(d + 8));
                now |= (tag == 30 && val & 8 != 0) || (tag == 0x6fff_fffb && val & 1 != 0);
            }
        }
    }
    assert!(relro, "no PT_GNU_RELRO");
    assert!(now, "relocations are not bound at start-up (partial RELRO)");
}

struct Elf<'a>(&'a [u8]);

impl Elf<'_> {
    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes(self.0[at..at + 2].try_into().unwrap())
    }
    fn u32(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.0[at..at + 4].try_into().unwrap())
    }
    fn u64(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.0[at..at + 8].try_into().unwrap())
    }
}

/// Trust per root: a server started in a trusted folder applied that trust to a client's root
/// that is not trusted, where `git` (which runs what a repository configures) is asked, not
/// run.
#[test]
fn a_clients_root_is_judged_for_its_own_trust() {
    let start = TempTree::new();
    let client = TempTree::new();
    let (s, c) = (canonical(start.root()), canonical(client.root()));
    let trust = json!({ s.to_string_lossy(): "TRUST_FOLDER" });
    std::fs::write(start.home().join("trusted-folders.json"), trust.to_string()).unwrap();
    let mut m = Mcp::start(&start, &s, &[], &[], None);
    let (text, _) = m.call("run_shell_command", json!({"command": "git status"}));
    assert!(
        text.contains("Output:") && m.asked == 0,
        "git runs unasked in the trusted start folder: {text}"
    );
    drop(m);
    let mut m = Mcp::start(&start, &s, &[], &[], Some(&[c.as_path()]));
    let (text, _) = m.call("run_shell_command", json!({"command": "git status"}));
    assert!(
        m.asked == 1 && !text.contains("Output:"),
        "the start folder's trust applied to the client's root: {text}"
    );
}

/// Issues 33 and 34: the files that decide what runs stay read-only inside the sandbox even
/// where their folder is writable: a root's `.git` (whole: its config, hooks, `commondir`),
/// `.gemini/` and `.toolbelt/` (created empty when missing, so nothing can create them from
/// inside), and toolbelt's own state when the home folder is a root. The rest of the root
/// stays writable; git commands that write need a run outside the sandbox (as upstream's
/// bubblewrap profile and codex keep `.git` read-only).
#[test]
fn control_files_inside_a_writable_root_stay_read_only() {
    if !usable() {
        return;
    }
    let tree = TempTree::new_in(&base());
    let root = canonical(tree.root());
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(&root).status();
    assert!(git.is_ok_and(|s| s.success()));
    tree.file(".gemini/settings.json", "{}");
    let config_before = std::fs::read_to_string(root.join(".git/config")).unwrap();
    let script = "echo '[core] fsmonitor = touch PWNED' >> .git/config; \
                  echo 'touch PWNED' > .git/hooks/pre-commit; \
                  echo '{\"hooks\":{}}' > .gemini/settings.json; \
                  mkdir -p .gemini/policies && echo x > .gemini/policies/p.toml; \
                  mkdir -p .toolbelt && echo '{}' > .toolbelt/settings.json; \
                  echo /tmp/evil > .git/commondir; \
                  echo fine > normal.txt && git add normal.txt && echo added; echo done";
    let args = json!({ "command": script }).to_string();
    let out = super::command(
        &tree,
        &["call", "-s", "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .env("TOOLBELT_TRUST_WORKSPACE", "1")
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(root.join("normal.txt")).unwrap(), "fine\n", "{text}");
    if !super::sandbox::support_mount_ns() {
        // Without a mount namespace the gap is said, not hidden.
        let check = super::command(&tree, &["sandbox", "--check"]).output().unwrap();
        let report = String::from_utf8_lossy(&check.stdout);
        assert!(report.contains("mount namespace: no"), "{report}");
        return;
    }
    assert!(!text.contains("added"), "git writes inside the sandbox: {text}");
    assert!(!root.join(".git/commondir").exists(), "{text}");
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), config_before, "{text}");
    assert!(!root.join(".git/hooks/pre-commit").exists(), "{text}");
    assert_eq!(
        std::fs::read_to_string(root.join(".gemini/settings.json")).unwrap(),
        "{}",
        "{text}"
    );
    assert!(!root.join(".gemini/policies").exists(), "{text}");
    assert!(!root.join(".toolbelt/settings.json").exists(), "{text}");

    // The home folder as a root: toolbelt's state and ~/.gemini inside it stay read-only.
    let home = canonical(tree.home());
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let script = "echo '{}' > .gemini/settings.json; echo x > trusted-folders.json; echo done";
    let args = json!({ "command": script }).to_string();
    let h = home.to_str().unwrap();
    let out = super::command(
        &tree,
        &["call", "-s", "--root", h, "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .env("TOOLBELT_HOME", home.join(".toolbelt"))
    .env("TOOLBELT_ALLOW_HOME_WORKSPACE", "1")
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!home.join(".gemini/settings.json").exists(), "{text}");
    let script = "echo x > .toolbelt/trusted-folders.json; echo done";
    let args = json!({ "command": script }).to_string();
    let out = super::command(
        &tree,
        &["call", "-s", "--root", h, "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .env("TOOLBELT_HOME", home.join(".toolbelt"))
    .env("TOOLBELT_ALLOW_HOME_WORKSPACE", "1")
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done"), "{text}");
    assert!(!home.join(".toolbelt/trusted-folders.json").exists(), "{text}");
}

/// A control folder that is a symlink cannot be kept read-only: the command is refused with a
/// clear error instead of running with it writable.
#[test]
fn a_control_folder_that_is_a_symlink_refuses_the_command() {
    if !usable() || !super::sandbox::support_mount_ns() {
        return;
    }
    let tree = TempTree::new_in(&base());
    let elsewhere = tempfile::tempdir_in(base()).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), tree.root().join(".gemini")).unwrap();
    let args = json!({ "command": "echo ran > ran.txt" }).to_string();
    let out = super::command(
        &tree,
        &["call", "-s", "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .output()
    .unwrap();
    let all =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(all.contains("leads through a symbolic link"), "{all}");
    assert!(!tree.root().join("ran.txt").exists());
}

/// Second review of issue 33, as root: a sandboxed command kept every capability, so it cleared
/// the read-only flag of a bind with mount_setattr, and made device nodes (the console, the
/// disk) with mknod. Without a mount namespace there is nothing to clear.
#[test]
fn root_commands_cannot_lift_the_binds_or_make_devices() {
    if !usable()
        || !super::sandbox::support_mount_ns()
        || !std::fs::metadata("/proc/self")
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
    {
        return;
    }
    let tree = TempTree::new_in(&base());
    tree.file(".gemini/settings.json", "{}");
    tree.file(
        "lift.py",
        "import ctypes, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         class A(ctypes.Structure):\n    _fields_ = [('s', ctypes.c_uint64), ('c', ctypes.c_uint64), ('p', ctypes.c_uint64), ('u', ctypes.c_uint64)]\n\
         a = A(0, 1, 0, 0)\n\
         rc = libc.syscall(442, -100, sys.argv[1].encode(), 0x8000, ctypes.byref(a), 32)\n\
         print('setattr', rc, ctypes.get_errno())\n",
    );
    let root = canonical(tree.root());
    let script = format!(
        "python3 lift.py {r}/.gemini; echo pwned > .gemini/settings.json; \
         mknod console c 5 1 && echo MADE; umount {r}/.gemini && echo UNMOUNTED; \
         unshare -m sh -c 'umount {r}/.gemini && echo > .gemini/settings.json && echo INNER'; echo done",
        r = root.display()
    );
    let args = json!({ "command": script }).to_string();
    let out = super::command(
        &tree,
        &["call", "-s", "run_shell_command", &args, "--approval-mode", "yolo"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(root.join(".gemini/settings.json")).unwrap(),
        "{}",
        "{text}"
    );
    assert!(!text.contains("MADE") && !root.join("console").exists(), "{text}");
    assert!(!text.contains("UNMOUNTED") && !text.contains("INNER"), "{text}");
}

/// Second review of issue 33: a root (or the folder above toolbelt's state) beneath another
/// writable folder was renamed away from inside and a lookalike made in its place, which a later
/// session took by its name. They are mount points inside now: they cannot be renamed.
#[test]
fn a_root_or_the_state_folder_cannot_be_renamed_from_inside() {
    if !usable() || !super::sandbox::support_mount_ns() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let base_tmp = canonical(tmp.path());
    let ws = base_tmp.join("c/ws");
    let state = base_tmp.join("g/tbh");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let tree = TempTree::new();
    let c = base_tmp.join("c");
    let g = base_tmp.join("g");
    std::fs::create_dir_all(ws.join(".gemini")).unwrap();
    std::fs::write(ws.join(".gemini/settings.json"), "{}").unwrap();
    // The command runs in the root, a folder bound onto itself: a name relative to it still
    // reaches the read-only `.gemini` (it did not, through the working folder of before).
    let script = format!(
        "echo pwned > .gemini/settings.json; \
         mv {ws} {ws}.old && echo MOVED-ROOT; mv {c} {c}.old && echo MOVED-PARENT; mv {g} {g}.old && echo MOVED-STATE; echo done",
        ws = ws.display(),
        c = c.display(),
        g = g.display()
    );
    let args = json!({ "command": script }).to_string();
    let out = super::command(
        &tree,
        &[
            "call",
            "-s",
            "--root",
            ws.to_str().unwrap(),
            "run_shell_command",
            &args,
            "--approval-mode",
            "yolo",
        ],
    )
    .env("TOOLBELT_HOME", &state)
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("MOVED"), "{text}");
    assert!(ws.is_dir() && state.is_dir());
    assert_eq!(std::fs::read_to_string(ws.join(".gemini/settings.json")).unwrap(), "{}", "{text}");
}

/// Second review of issue 33: over MCP, a root replaced by a symlink (to the home folder) was
/// followed when the client listed the same root again; and when every root of the client was
/// gone, the folder the server started in became the writable root.
#[test]
fn a_clients_root_that_changed_or_vanished_serves_nothing() {
    if !usable() {
        return;
    }
    let start = TempTree::new_in(&base());
    let holder = tempfile::tempdir_in(base()).unwrap();
    let victim = tempfile::tempdir_in(base()).unwrap();
    let w = canonical(holder.path()).join("W");
    std::fs::create_dir(&w).unwrap();
    let s = canonical(start.root());
    let v = canonical(victim.path());
    let mut m = Mcp::start(
        &start,
        &s,
        &["--sandbox", "--approval-mode", "yolo"],
        &[],
        Some(&[w.as_path()]),
    );
    let text = m.shell("echo ok > inside.txt; echo done");
    assert!(text.contains("done") && w.join("inside.txt").exists(), "{text}");
    // Swapped for a link between two listings of the same root.
    std::fs::rename(&w, w.with_extension("old")).unwrap();
    std::os::unix::fs::symlink(&v, &w).unwrap();
    m.list_changed(&[w.as_path()]);
    let text = m.shell(&format!(
        "echo pwn > {}/x.txt; echo pwn > {}/y.txt; echo done",
        v.display(),
        s.display()
    ));
    assert!(!v.join("x.txt").exists() && !s.join("y.txt").exists(), "{text}");
    assert!(text.contains("Nothing is served"), "{text}");
    // Every root gone: still nothing, and never the start folder.
    m.list_changed(&[]);
    let text = m.shell(&format!("echo pwn > {}/y.txt; echo done", s.display()));
    assert!(!s.join("y.txt").exists(), "{text}");
    assert!(text.contains("Nothing is served"), "{text}");
}
