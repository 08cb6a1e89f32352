//! The file layer where `openat2` is refused: kernels before 5.6, older container seccomp
//! profiles, gVisor. Every tool must answer exactly as where the kernel has it.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt as _;
use std::process::Stdio;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter};
use toolbelt_test_support::TempTree;

/// `toolbelt call TOOL ARGS` with `openat2` failing with ENOSYS (a seccomp filter installed
/// in the child before exec): its standard output.
fn without_openat2(t: &TempTree, tool: &str, args: &str) -> String {
    let arch = std::env::consts::ARCH.try_into().unwrap();
    let rules = BTreeMap::from([(libc::SYS_openat2, Vec::new())]);
    let enosys = SeccompAction::Errno(u32::try_from(libc::ENOSYS).unwrap());
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, enosys, arch).unwrap();
    let bpf: BpfProgram = filter.try_into().unwrap();
    let mut cmd = crate::command(t, &["call", tool, args]);
    cmd.stdin(Stdio::null());
    // SAFETY: the closure runs in the forked child before exec and makes only system calls
    // (prctl and seccomp), on a filter built before the fork.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            seccompiler::apply_filter(&bpf).map_err(std::io::Error::other)
        });
    }
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Found by the adversarial reviews of session 5 (issue 22): without `openat2`, glob's walker
/// said "No files found" for every pattern; then, on its first fallback, the files of a
/// sensitive folder went uncounted (`1 hidden` instead of `4`). Under a filter that refuses
/// `openat2`, glob, grep_search, read_many_files and read_file answer byte for byte as they
/// do without it, secrets hidden and counted the same.
#[test]
fn without_openat2_every_tool_answers_as_with_it() {
    let t = TempTree::new();
    t.file(".ssh/id_rsa", "hello key\n")
        .file(".ssh/notes.txt", "hello notes\n")
        .file(".aws/credentials", "hello creds\n")
        .file(".env", "hello env\n")
        .file("sub/a.txt", "hello\n")
        .file("sub/deep/b.txt", "hello again\n");
    let outside = TempTree::new();
    outside.file("secret.txt", "hello outside\n");
    std::os::unix::fs::symlink(outside.root(), t.root().join("out")).unwrap();
    std::os::unix::fs::symlink(outside.root().join("secret.txt"), t.root().join("sub/s.txt"))
        .unwrap();
    let calls = [
        ("glob", r#"{"pattern":"**/*"}"#),
        ("grep_search", r#"{"pattern":"hello"}"#),
        ("read_many_files", r#"{"include":["**/*"]}"#),
        ("read_file", r#"{"file_path":"sub/deep/b.txt"}"#),
        ("read_file", r#"{"file_path":"out/secret.txt"}"#),
        ("list_directory", r#"{"dir_path":"sub"}"#),
    ];
    for (tool, args) in calls {
        let with = crate::toolbelt(&t, &["call", tool, args], None).stdout;
        let without = without_openat2(&t, tool, args);
        assert_eq!(with, without, "{tool} {args}");
    }
    // The comparison saw what it guards: the files listed and the secrets counted.
    let with = crate::toolbelt(&t, &["call", "glob", r#"{"pattern":"**/*"}"#], None).stdout;
    assert!(with.contains("sub/deep/b.txt") && with.contains("(4 hidden"), "{with}");
    assert!(!with.contains("outside") && !with.contains("id_rsa"), "{with}");
}
