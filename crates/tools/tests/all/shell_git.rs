//! git inside run_shell_command (issue 18): `git diff`, `git log -p` and `git show` failed with
//! "cannot run : No such file or directory / external diff died", because the environment set
//! `diff.external` to an empty string.

use super::shell::{output, session};

#[test]
fn git_diff_log_and_show_work_in_a_real_repository() {
    let s = session();
    let setup = "git init -q && git config user.email a@b && git config user.name n \
                 && echo one > f.txt && git add f.txt && git commit -qm first && echo two > f.txt";
    let out = output(&s.shell(setup));
    assert!(!out.contains("Exit Code"), "{out}");
    for (command, want) in
        [("git diff", "+two"), ("git log -p -1", "+one"), ("git show HEAD", "+one")]
    {
        let out = output(&s.shell(command));
        assert!(out.contains(want), "{command}: {out}");
        assert!(!out.contains("external diff died"), "{command}: {out}");
    }
}

/// Issue 19: a command ending with a background job of a nested shell lost the
/// `Background PIDs:` line upstream shows (it lists the command's process group).
#[test]
fn a_nested_shells_background_job_is_listed() {
    let s = session();
    let out = output(&s.shell("sh -c 'sleep 2 & exit 1'"));
    assert!(out.contains("Exit Code: 1\nBackground PIDs: "), "{out}");
    s.shutdown();
}
