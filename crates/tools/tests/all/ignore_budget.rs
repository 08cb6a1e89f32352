//! Issue 35, second attack: a repository of 1000 nested folders, each with a `.gitignore` of
//! 200 rules, made grep_search take 1.3 GB and glob and read_many_files 464 and 747 MB, all
//! three until the 180 s deadline. The rules on the way to a folder have a ceiling: the search
//! stops going deeper there, and says so.

use serde_json::json;
use toolbelt_test_support::TempTree;

use super::harness::run;

/// A git repository of `depth` nested folders, each with a `.gitignore` of `rules` rules and a
/// file holding `hello`.
fn deep(depth: usize, rules: usize) -> TempTree {
    let t = TempTree::new();
    t.file(".git/HEAD", "ref: refs/heads/main\n");
    let mut dir = String::new();
    for level in 0..depth {
        let ignore: String = (0..rules).map(|i| format!("**/x{level}_{i}*y*z*w\n")).collect();
        t.file(&format!("{dir}.gitignore"), &ignore);
        t.file(&format!("{dir}f{level}.txt"), "hello\n");
        dir.push_str("d/");
    }
    t
}

#[test]
fn the_rules_on_the_way_to_a_folder_have_a_ceiling() {
    let limit = toolbelt_core::limits::IGNORE_RULES_ON_PATH;
    // 40 levels of 200 rules: the limit is passed at level 20.
    let t = deep(40, 200);
    let depth_ok = limit / 200;
    let grep = run(&t, "grep_search", json!({"pattern": "hello"}));
    let out = grep.output();
    assert!(out.contains(&format!("f{}.txt", depth_ok - 1)), "{out}");
    assert!(!out.contains(&format!("f{}.txt", depth_ok + 1)), "{out}");
    assert!(out.contains("more than the limit of 4000"), "{out}");

    let glob = run(&t, "glob", json!({"pattern": "**/*.txt"}));
    let out = glob.output();
    assert!(out.contains(&format!("f{}.txt", depth_ok - 2)), "{out}");
    assert!(!out.contains(&format!("f{}.txt", depth_ok + 1)), "{out}");
    assert!(out.contains("the limit"), "{out}");

    let many = run(&t, "read_many_files", json!({"include": ["**/*.txt"]}));
    let out = many.output();
    assert!(out.contains(&format!("f{}.txt", depth_ok - 2)), "{out}");
    assert!(!out.contains(&format!("f{}.txt ---", depth_ok + 1)), "{out}");
    assert!(out.contains("the limit"), "{out}");
}
