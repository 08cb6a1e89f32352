//! Issue 48, S5: upstream's `replace` corrects a relative path that names no file when exactly
//! one file deeper in the workspace ends with it (`deep/util.py` for `src/deep/util.py`);
//! toolbelt answered `File not found`. The expectations are the oracle's answers (0.61).

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::run;

fn edit(t: &TempTree, file_path: &str) -> crate::harness::Outcome {
    let args = json!({"file_path": file_path, "old_string": "x = 1", "new_string": "x = 2", "instruction": "i"});
    run(t, "replace", args)
}

fn modified(t: &TempTree, rel: &str) -> String {
    format!(
        "Successfully modified file: {} (1 replacements). Here is the updated code:\nx = 2\n",
        t.abs(rel)
    )
}

#[test]
fn s5_one_file_ending_with_the_path_is_edited() {
    for given in ["deep/util.py", "util.py", "eep/util.py", "@deep/util.py"] {
        let t = TempTree::new();
        t.file("src/deep/util.py", "x = 1\n").file("src/other.py", "x = 1\n");
        let o = edit(&t, given);
        assert_eq!(o.output(), modified(&t, "src/deep/util.py"), "{given}");
        assert_eq!(std::fs::read_to_string(t.root().join("src/deep/util.py")).unwrap(), "x = 2\n");
    }
    // A hidden folder is searched too.
    let t = TempTree::new();
    t.file(".hidden/deep/util.py", "x = 1\n");
    assert_eq!(edit(&t, "deep/util.py").output(), modified(&t, ".hidden/deep/util.py"));
}

#[test]
fn s5_several_or_no_files_leave_the_path_as_it_was() {
    let t = TempTree::new();
    t.file("src/deep/util.py", "x = 1\n").file("lib/deep/util.py", "x = 1\n");
    for given in ["deep/util.py", "Deep/util.py", "./deep/util.py"] {
        let o = edit(&t, given);
        let shown = t.abs(given.trim_start_matches("./"));
        assert_eq!(o.model["error"], format!("File not found: {shown}"), "{given}");
        assert_eq!(o.error_type.as_deref(), Some("file_not_found"));
    }
    // An absolute path is never corrected.
    let abs = t.abs("deep/util.py");
    assert_eq!(edit(&t, &abs).model["error"], format!("File not found: {abs}"));
    // Nor are reads and writes (upstream corrects only `replace`).
    let r = run(&t, "read_file", json!({"file_path": "deep/util.py"}));
    assert_eq!(r.error_type.as_deref(), Some("file_not_found"));
}

/// What the ignore files hide is not a candidate (a second, ignored copy makes no ambiguity);
/// a sensitive file found by its name is refused as any path to it is; a copy in a folder the
/// tools refuse (node_modules) is not found (upstream counts it and answers `File not found`:
/// docs/compat.md).
#[test]
fn s5_ignored_sensitive_and_refused_candidates() {
    let t = TempTree::new();
    t.file(".git/HEAD", "ref: x").file(".gitignore", "gen/\n");
    t.file("src/deep/util.py", "x = 1\n").file("gen/deep/util.py", "x = 1\n");
    assert_eq!(edit(&t, "deep/util.py").output(), modified(&t, "src/deep/util.py"));

    let t = TempTree::new();
    t.file("cfg/.env", "x = 1\n");
    let o = edit(&t, ".env");
    assert!(o.model["error"].as_str().unwrap_or_default().contains("sensitive"), "{}", o.model);
    assert_eq!(std::fs::read_to_string(t.root().join("cfg/.env")).unwrap(), "x = 1\n");

    let t = TempTree::new();
    t.file("src/deep/util.py", "x = 1\n").file("node_modules/deep/util.py", "x = 1\n");
    assert_eq!(edit(&t, "deep/util.py").output(), modified(&t, "src/deep/util.py"));
    assert_eq!(
        std::fs::read_to_string(t.root().join("node_modules/deep/util.py")).unwrap(),
        "x = 1\n"
    );
}

/// At most 50 folders of a root are read, breadth first: a file in the 51st is not found.
#[test]
fn s5_the_search_reads_fifty_folders() {
    let t = TempTree::new();
    for i in 0..48 {
        t.dir(&format!("d{i:02}"));
    }
    // The root and d00..d47 are 49 folders; `z` (read 50th) holds the file, `z/deeper` (51st) the other.
    t.file("z/deeper/far.py", "x = 1\n").file("z/near.py", "x = 1\n");
    assert_eq!(edit(&t, "near.py").output(), modified(&t, "z/near.py"));
    let o = edit(&t, "far.py");
    assert_eq!(o.error_type.as_deref(), Some("file_not_found"), "{}", o.model);
}

/// The correction never follows a link out: a folder linked to an outside tree holding the
/// only file of that name is not searched, and the outside file is left alone.
#[test]
fn s5_a_link_out_is_not_searched() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("deep/util.py", "x = 1\n");
    t.symlink(outside.root(), "out");
    let o = edit(&t, "deep/util.py");
    assert_eq!(o.error_type.as_deref(), Some("file_not_found"), "{}", o.model);
    assert_eq!(std::fs::read_to_string(outside.root().join("deep/util.py")).unwrap(), "x = 1\n");
}
