//! glob: the cases of cases-public.md section E.

use std::time::{Duration, SystemTime};

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::{env_for, run, run_in};

fn set_mtime(path: &std::path::Path, ago: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - ago).unwrap();
}

fn fixture() -> TempTree {
    let t = TempTree::new();
    t.file(".git", "")
        .file("fileA.txt", "")
        .file("FileB.TXT", "")
        .file("sub/fileC.md", "")
        .file("sub/FileD.MD", "");
    t.file("sub/deep/fileE.log", "");
    t
}

#[test]
fn gl01_simple_pattern_and_gl03_case() {
    let t = fixture();
    set_mtime(&t.root().join("fileA.txt"), Duration::from_secs(60));
    set_mtime(&t.root().join("FileB.TXT"), Duration::from_secs(30));
    let o = run(&t, "glob", json!({"pattern": "*.txt"}));
    assert_eq!(
        o.output(),
        format!(
            "Found 2 file(s) matching \"*.txt\" within {}, sorted by modification time (newest first):\n{}\n{}",
            t.root().display(),
            t.abs("FileB.TXT"),
            t.abs("fileA.txt")
        )
    );
    assert_eq!(o.display(), json!("Found 2 matching file(s)"));
    assert!(run(&t, "glob", json!({"pattern": "*.TXT"})).output().starts_with("Found 2 file(s)"));
    assert!(
        run(&t, "glob", json!({"pattern": "*.TXT", "case_sensitive": true}))
            .output()
            .starts_with("Found 1 file(s)")
    );
}

#[test]
fn old_files_sort_by_path_after_recent_ones() {
    let t = TempTree::new();
    for n in ["b.rs", "A.rs", "c.rs", "new.rs"] {
        t.file(n, "");
    }
    for n in ["b.rs", "A.rs", "c.rs"] {
        set_mtime(&t.root().join(n), Duration::from_secs(3 * 24 * 3600));
    }
    let o = run(&t, "glob", json!({"pattern": "*.rs"}));
    let lines: Vec<&str> = o.output().lines().skip(1).collect();
    assert_eq!(lines, [t.abs("new.rs"), t.abs("A.rs"), t.abs("b.rs"), t.abs("c.rs")]);
}

#[test]
fn gl05_dir_path_and_gl07_no_match() {
    let t = fixture();
    let o = run(&t, "glob", json!({"pattern": "*.md", "dir_path": "sub"}));
    assert!(
        o.output()
            .starts_with(&format!("Found 2 file(s) matching \"*.md\" within {}", t.abs("sub")))
    );
    let o = run(&t, "glob", json!({"pattern": "*.nonexistent"}));
    assert_eq!(
        o.output(),
        format!("No files found matching pattern \"*.nonexistent\" within {}", t.root().display())
    );
    assert_eq!(o.display(), json!("No files found"));
}

#[test]
fn gl09_literal_brackets_and_parentheses() {
    let t = TempTree::new();
    let p = "src/app/[test]/(dashboard)/testing/components/code.tsx";
    t.file(p, "");
    let o = run(&t, "glob", json!({ "pattern": p }));
    assert!(o.output().starts_with("Found 1 file(s)"), "{}", o.output());
}

#[test]
fn gl11_to_gl15_errors() {
    let t = fixture();
    assert!(
        run(&t, "glob", json!({"pattern": "*", "dir_path": "/etc"}))
            .error()
            .starts_with("Path not in workspace")
    );
    assert_eq!(
        run(&t, "glob", json!({"pattern": "*", "dir_path": 123})).error(),
        "params/dir_path must be string"
    );
    assert_eq!(
        run(&t, "glob", json!({"pattern": "*", "case_sensitive": "true"})).error(),
        "params/case_sensitive must be boolean"
    );
    assert_eq!(
        run(&t, "glob", json!({"pattern": "*", "dir_path": "non-existent"})).error(),
        format!("Search path does not exist {}", t.abs("non-existent"))
    );
    assert_eq!(
        run(&t, "glob", json!({"pattern": "*", "dir_path": "fileA.txt"})).error(),
        format!("Search path is not a directory: {}", t.abs("fileA.txt"))
    );
    assert_eq!(
        run(&t, "glob", json!({"pattern": "  "})).error(),
        "The 'pattern' parameter cannot be empty."
    );
    assert_eq!(run(&t, "glob", json!({})).error(), "params must have required property 'pattern'");
}

#[test]
fn gl17_to_gl21_gitignore_counts() {
    let t = TempTree::new();
    t.file(".git", "")
        .file(".gitignore", "ignored_test.txt")
        .file("ignored_test.txt", "")
        .file("visible_test.txt", "");
    let o = run(&t, "glob", json!({"pattern": "*_test.txt"}));
    assert_eq!(
        o.output(),
        format!(
            "Found 1 file(s) matching \"*_test.txt\" within {} (1 additional files were ignored), sorted by modification time (newest first):\n{}",
            t.root().display(),
            t.abs("visible_test.txt")
        )
    );
    let o = run(&t, "glob", json!({"pattern": "ignored_test.txt", "respect_git_ignore": false}));
    assert!(o.output().starts_with("Found 1 file(s)"));
    let o = run(&t, "glob", json!({"pattern": "ignored_test.txt"}));
    assert_eq!(
        o.output(),
        format!(
            "No files found matching pattern \"ignored_test.txt\" within {} (1 files were ignored)",
            t.root().display()
        )
    );
}

#[cfg(unix)]
#[test]
fn gl23_symlinks_are_dropped_and_loops_are_harmless() {
    let t = TempTree::new();
    t.file("real.txt", "").symlink(t.root().join("real.txt"), "link.txt");
    t.dir("loop").symlink(t.root().join("loop"), "loop/again");
    let o = run(&t, "glob", json!({"pattern": "**/*.txt"}));
    assert_eq!(o.output().lines().skip(1).collect::<Vec<_>>(), [t.abs("real.txt")]);
    assert!(run(&t, "glob", json!({"pattern": "link.txt"})).output().starts_with("No files found"));
}

#[test]
fn hidden_files_match_but_node_modules_and_git_do_not() {
    let t = TempTree::new();
    t.file(".hidden/h.rs", "")
        .file("node_modules/m.rs", "")
        .file(".git/x.rs", "")
        .file("a/b/c.rs", "");
    let o = run(&t, "glob", json!({"pattern": "**/*.rs"}));
    let mut lines: Vec<&str> = o.output().lines().skip(1).collect();
    lines.sort();
    assert_eq!(lines, [t.abs(".hidden/h.rs"), t.abs("a/b/c.rs")]);
}

#[test]
fn several_workspace_roots() {
    let t = TempTree::new();
    let second = TempTree::new();
    t.file("a.md", "");
    second.file("b.md", "");
    let o = run_in(&env_for(&t, &[second.root()]), "glob", json!({"pattern": "*.md"}));
    assert!(
        o.output().starts_with(
            "Found 2 file(s) matching \"*.md\" across 2 workspace directories, sorted"
        ),
        "{}",
        o.output()
    );
}

/// Issue 15: a 300 KB pattern panicked inside globset ("regex compilation shouldn't fail").
#[test]
fn a_300_kb_pattern_is_a_tool_error_not_a_panic() {
    let t = fixture();
    let r = run(&t, "glob", json!({"pattern": "a".repeat(300_000)}));
    let err = r.error();
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("invalid glob pattern"), "{}", &err[..err.len().min(300)]);
    let r = run(
        &t,
        "glob",
        json!({"pattern": format!("{{{}}}", (0..60_000).map(|i| format!("a{i}")).collect::<Vec<_>>().join(","))}),
    );
    // Sixty thousand alternatives compile (or are refused), but never panic.
    assert!(!r.model.to_string().contains("panicked"), "{}", &r.model.to_string()[..200]);
}

/// Issue 22: a walker thread asks the cancellation token only every 64 entries; a cancelled
/// glob still stops walking at once (a thread asks at its first entry) and lists nothing.
#[test]
fn a_cancelled_glob_stops_walking_at_once() {
    let t = TempTree::new();
    for i in 0..600 {
        t.file(&format!("d{}/f{i}.txt", i % 7), "x");
    }
    let token = tokio_util::sync::CancellationToken::new();
    token.cancel();
    let env = env_for(&t, &[]);
    let o = crate::harness::run_with_token(&env, "glob", json!({"pattern": "**/*.txt"}), token);
    assert!(o.output().starts_with("No files found"), "{}", o.output());
    assert!(run_in(&env, "glob", json!({"pattern": "**/*.txt"})).output().contains("f599.txt"));
}

/// Found by the adversarial review of session 5 (issue 22): folders deeper than PATH_MAX
/// (4,096 bytes from the root) were dropped without a word: 20 of 30 files listed and no note,
/// since the walker's `openat2` of such a folder fails (ENAMETOOLONG). The walk now goes on
/// with the layer's walk a step at a time, and the files whose paths no tool takes are
/// counted in the note.
#[test]
fn a_tree_deeper_than_path_max_is_listed_or_said_partial() {
    use rustix::fs::{Mode, OFlags, mkdirat, openat};
    let t = TempTree::new();
    let mut dir = openat(rustix::fs::CWD, t.root(), OFlags::RDONLY, Mode::empty()).unwrap();
    let name = "d".repeat(200);
    for i in 0..30 {
        mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        dir =
            openat(&dir, name.as_str(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let flags = OFlags::CREATE | OFlags::WRONLY;
        openat(&dir, format!("f{i}.txt").as_str(), flags, Mode::from_raw_mode(0o644)).unwrap();
    }
    let out = run(&t, "glob", json!({"pattern": "**/*.txt"})).output().to_string();
    // Every file whose path fits is listed (the root's path is short, so 20 levels fit), and
    // the others are counted: the walk goes on below 4,096 bytes a step at a time.
    let listed = out.lines().filter(|l| l.starts_with('/')).count();
    let fit = (0..30).filter(|i| t.root().as_os_str().len() + (i + 1) * 201 + 8 <= 4096).count();
    assert_eq!(listed, fit, "{}", note_of(&out));
    let said = format!(
        "({} file(s) left out: the file tools refuse their paths (Path is too long",
        30 - fit
    );
    assert!(note_of(&out).contains(&said), "{}", note_of(&out));
}

/// The answer without its list of paths.
fn note_of(out: &str) -> String {
    out.lines().filter(|l| !l.starts_with('/')).collect::<Vec<_>>().join("\n")
}

/// Found by the adversarial review of session 5 (issue 22): glob listed a hard link to a
/// sensitive file (`notes.txt`, another name of `.env`), which read_file refuses; its name is
/// now hidden and counted like the sensitive file's own.
#[test]
fn a_hard_link_to_a_sensitive_file_is_not_listed() {
    let t = TempTree::new();
    t.file(".env", "KEY=1\n").file("plain.txt", "x\n");
    std::fs::hard_link(t.root().join(".env"), t.root().join("notes.txt")).unwrap();
    let outside = TempTree::new();
    outside.file("o.txt", "outside\n");
    std::fs::hard_link(outside.root().join("o.txt"), t.root().join("o-link.txt")).unwrap();
    let out = run(&t, "glob", json!({"pattern": "*.txt"})).output().to_string();
    assert!(!out.contains("notes.txt"), "{out}");
    assert!(out.contains("plain.txt") && out.contains("1 hidden by sensitive-path rules"), "{out}");
    // A hard link whose other name is outside is the workspace's own name: listed, as before
    // (read_file refuses to read it and says why), never dropped without a word.
    assert!(out.contains("o-link.txt"), "{out}");
}

/// Found by the adversarial review of session 5 (issue 22): whether a pattern is taken
/// literally was decided by asking whether the path it names exists, following `..` and links
/// out of the workspace: a pattern that is not valid glob syntax then told whether a file
/// outside existed ("No files found" against "invalid glob pattern"). The answer must not
/// depend on what lies outside.
#[test]
fn a_pattern_naming_an_outside_path_reveals_nothing_about_it() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("weird[", "secret\n");
    std::os::unix::fs::symlink(outside.root(), t.root().join("out")).unwrap();
    let up = format!("../{}", outside.root().file_name().unwrap().to_str().unwrap());
    for (there, absent) in [
        (format!("{up}/weird["), format!("{up}/absent[")),
        ("out/weird[".to_string(), "out/absent[".to_string()),
        (
            format!("{}/weird[", outside.root().display()),
            format!("{}/absent[", outside.root().display()),
        ),
    ] {
        let a = run(&t, "glob", json!({"pattern": there})).model.to_string();
        let b = run(&t, "glob", json!({"pattern": absent})).model.to_string();
        assert_eq!(a.replace("weird", "X"), b.replace("absent", "X"), "{there}");
    }
}

/// Issue 35 (third attack): a million hits took glob to 431 MB for an answer that shows some
/// 15,000. The first 20,000 in the answer's order are listed and the rest counted.
#[test]
fn more_than_twenty_thousand_hits_list_the_first_and_count_the_rest() {
    let t = TempTree::new();
    let dir = t.root().join("many");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..20_010 {
        std::fs::write(dir.join(format!("f{i:05}.txt")), "").unwrap();
    }
    let r = run(&t, "glob", json!({"pattern": "many/*.txt"}));
    let out = r.output();
    assert!(out.starts_with("Found 20010 file(s) matching"), "{}", &out[..200]);
    assert!(out.contains("(10 more files are not listed; narrow the pattern or the folder)"));
    assert_eq!(out.lines().filter(|l| l.ends_with(".txt")).count(), 20_000);
}

/// Issue 35 (fourth attack, F3): an MCP client offering `file://` as its root made glob
/// `**/*` keep five million paths (596 MB) to list 20,000. Each walker thread keeps only the
/// first hits in the answer's order and counts the rest: the answer is the same as ordering
/// them all.
#[test]
fn hits_past_what_is_listed_are_counted_not_kept_and_the_list_is_unchanged() {
    let t = TempTree::new();
    let dir = t.root().join("many");
    std::fs::create_dir(&dir).unwrap();
    let n = 45_000;
    for i in 0..n {
        std::fs::write(dir.join(format!("f{i:05}.txt")), "").unwrap();
    }
    let r = run(&t, "glob", json!({"pattern": "many/*.txt"}));
    let out = r.output();
    assert!(out.starts_with(&format!("Found {n} file(s) matching")), "{}", &out[..200]);
    assert!(out.contains("(25000 more files are not listed; narrow the pattern or the folder)"));
    // Newest first (all are recent), ties by name: as a full sort orders them.
    let mut all: Vec<(std::time::SystemTime, String)> = (0..n)
        .map(|i| {
            let name = format!("f{i:05}.txt");
            (std::fs::metadata(dir.join(&name)).unwrap().modified().unwrap(), name)
        })
        .collect();
    all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let listed: Vec<&str> = out
        .lines()
        .filter(|l| l.ends_with(".txt"))
        .map(|l| l.rsplit('/').next().unwrap())
        .collect();
    let expected: Vec<&str> = all.iter().take(20_000).map(|(_, name)| name.as_str()).collect();
    assert_eq!(listed, expected);
}

/// Issue 35 (fifth attack): a glob of 63,000 `*` compiled to 84 MB (grep_search's
/// include_pattern the same); a pattern's wildcards are bounded, with a clear error.
#[test]
fn a_pattern_of_very_many_wildcards_is_refused_saying_why() {
    let t = fixture();
    let stars = "*".repeat(63_000);
    let o = run(&t, "glob", json!({"pattern": stars}));
    assert!(o.error().contains("63000 wildcards") && o.error().contains("1024"), "{}", o.error());
    let o = run(&t, "grep_search", json!({"pattern": "x", "include_pattern": "a?".repeat(3_000)}));
    assert!(o.error().contains("3000 wildcards"), "{}", o.error());
    let o = run(&t, "glob", json!({"pattern": "**/*.{txt,md}"}));
    assert!(o.output().starts_with("Found"), "{}", o.output());
}
