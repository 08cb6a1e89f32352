//! grep_search: the cases of cases-public.md sections F and G (ripgrep semantics), plus the
//! robustness list of the search issue.

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_test_support::TempTree;

use crate::harness::{env_for, run, run_with_token};

fn fixture() -> TempTree {
    let t = TempTree::new();
    t.file("fileA.txt", "hello world\nsecond line with world")
        .file("fileB.js", "const foo = \"bar\";\nfunction baz() { return \"hello\"; }")
        .file("sub/fileC.txt", "another world in sub dir")
        .file("sub/fileD.md", "# Markdown file\nThis is a test.");
    t
}

#[test]
fn rg01_basic() {
    let t = fixture();
    let o = run(&t, "grep_search", json!({"pattern": "world"}));
    assert_eq!(
        o.output(),
        "Found 3 matches for pattern \"world\" in path \".\":\n---\nFile: fileA.txt\nL1: hello world\nL2: second line with world\n---\nFile: sub/fileC.txt\nL1: another world in sub dir\n---"
    );
    assert_eq!(o.display()["summary"], "Found 3 matches");
    assert_eq!(
        o.display()["matches"][0],
        json!({"filePath": "fileA.txt", "absolutePath": t.abs("fileA.txt"), "lineNumber": 1, "line": "hello world"})
    );
}

#[test]
fn gr03_include_with_auto_context() {
    let t = fixture();
    let o = run(&t, "grep_search", json!({"pattern": "hello", "include_pattern": "*.js"}));
    assert_eq!(
        o.output(),
        "Found 1 match for pattern \"hello\" in path \".\" (filter: \"*.js\"):\n---\nFile: fileB.js\nL1- const foo = \"bar\";\nL2: function baz() { return \"hello\"; }\n---"
    );
}

#[test]
fn gr05_no_match_and_gr07_case_insensitive_by_default() {
    let t = fixture();
    let o = run(&t, "grep_search", json!({"pattern": "nonexistentpattern"}));
    assert_eq!(o.output(), "No matches found for pattern \"nonexistentpattern\" in path \".\".");
    assert_eq!(o.display(), json!({"summary": "No matches found", "matches": []}));
    let o = run(&t, "grep_search", json!({"pattern": "HELLO"}));
    assert!(o.output().starts_with("Found 2 matches for pattern \"HELLO\" in path \".\":"));
    let o = run(&t, "grep_search", json!({"pattern": "HELLO", "case_sensitive": true}));
    assert!(o.output().starts_with("No matches found"));
}

#[test]
fn rg03_invalid_regex_unless_fixed_strings() {
    let t = fixture();
    t.file("brackets.txt", "a [[ b");
    let o = run(&t, "grep_search", json!({"pattern": "[["}));
    assert!(
        o.error().starts_with("Invalid regular expression pattern provided: [[. Error: "),
        "{}",
        o.error()
    );
    let o = run(&t, "grep_search", json!({"pattern": "[[", "fixed_strings": true}));
    assert!(o.output().contains("File: brackets.txt\nL1: a [[ b"));
    let o = run(&t, "grep_search", json!({"pattern": "x", "exclude_pattern": "(("}));
    assert!(o.error().starts_with("Invalid exclude regular expression pattern provided: ((."));
}

#[test]
fn regex_special_characters_work_as_regex() {
    let t = TempTree::new();
    t.file("a.rs", "fn get_mut(&mut self)\nfn get(&self)\nlet x = a.b;\n");
    let o = run(&t, "grep_search", json!({"pattern": r"fn \w+_mut\(", "context": 0}));
    assert!(o.output().contains("L1: fn get_mut(&mut self)") && !o.output().contains("L2:"));
    let o = run(&t, "grep_search", json!({"pattern": "a.b", "fixed_strings": true, "context": 0}));
    assert!(o.output().contains("L3: let x = a.b;"));
}

#[test]
fn a_file_can_be_the_search_path() {
    let t = fixture();
    let o = run(&t, "grep_search", json!({"pattern": "world", "dir_path": "fileA.txt"}));
    assert_eq!(
        o.output(),
        "Found 2 matches for pattern \"world\" in path \"fileA.txt\":\n---\nFile: fileA.txt\nL1: hello world\nL2: second line with world\n---"
    );
    let o = run(&t, "grep_search", json!({"pattern": "x", "dir_path": "nope"}));
    assert_eq!(o.error(), format!("Path does not exist: {}", t.abs("nope")));
}

#[test]
fn gr13_per_file_limit_keeps_later_lines_as_context() {
    let t = fixture();
    let o = run(&t, "grep_search", json!({"pattern": "world", "max_matches_per_file": 1}));
    assert_eq!(
        o.output(),
        "Found 2 matches for pattern \"world\" in path \".\":\n---\nFile: fileA.txt\nL1: hello world\nL2- second line with world\n---\nFile: sub/fileC.txt\nL1: another world in sub dir\n---"
    );
}

#[test]
fn gr15_exclude_pattern_drops_lines() {
    let t = TempTree::new();
    t.file("copyright.txt", "Copyright 2025 Google LLC\nCopyright 2026 Google LLC");
    let o = run(
        &t,
        "grep_search",
        json!({"pattern": "Copyright .* Google LLC", "exclude_pattern": "2026", "dir_path": "."}),
    );
    assert_eq!(
        o.output(),
        "Found 1 match for pattern \"Copyright .* Google LLC\" in path \".\":\n---\nFile: copyright.txt\nL1: Copyright 2025 Google LLC\n---"
    );
}

#[test]
fn gr17_long_lines_are_cut() {
    let t = TempTree::new();
    t.file("longline.txt", format!("Target match {}", "a".repeat(3000)));
    let o = run(&t, "grep_search", json!({"pattern": "Target"}));
    assert!(
        o.output().contains(&format!("L1: Target match {}... [truncated]\n---", "a".repeat(1987)))
    );
}

#[test]
fn gr21_dir_path_restricts_the_search() {
    let t = fixture();
    let o = run(&t, "grep_search", json!({"pattern": "world", "dir_path": "sub"}));
    assert!(
        o.output().starts_with(
            "Found 1 match for pattern \"world\" in path \"sub\":\n---\nFile: fileC.txt\n"
        ),
        "{}",
        o.output()
    );
}

#[test]
fn names_only_and_total_limit() {
    let t = fixture();
    let o = run(&t, "grep_search", json!({"pattern": "world", "names_only": true}));
    assert_eq!(
        o.output(),
        "Found 2 files with matches for pattern \"world\" in path \".\":\nfileA.txt\nsub/fileC.txt"
    );
    let o = run(&t, "grep_search", json!({"pattern": "o", "total_max_matches": 2}));
    assert!(o.output().starts_with("Found 2 matches for pattern \"o\" in path \".\" (results limited to 2 matches for performance):"), "{}", o.output());
    assert_eq!(o.display()["summary"], "Found 2 matches (limited)");
}

#[test]
fn rg11_explicit_context() {
    let t = TempTree::new();
    t.file("ctx.txt", "a\nb\nworld\nc\nd\ne");
    let o =
        run(&t, "grep_search", json!({"pattern": "world", "context": 1, "after": 2, "before": 1}));
    assert_eq!(
        o.output(),
        "Found 1 match for pattern \"world\" in path \".\":\n---\nFile: ctx.txt\nL2- b\nL3: world\nL4- c\nL5- d\n---"
    );
}

#[test]
fn hidden_ignored_excluded_and_binary_files_are_skipped() {
    let t = TempTree::new();
    t.file(".hidden.txt", "world")
        .file("build/out.txt", "world")
        .file("app.log", "world")
        .file("data.bin2", b"world\0\0\x01binary")
        .file(".geminiignore", "private.txt\n")
        .file("private.txt", "world")
        .file("v.txt", "world");
    let o = run(&t, "grep_search", json!({"pattern": "world", "context": 0}));
    assert_eq!(
        o.output(),
        "Found 1 match for pattern \"world\" in path \".\":\n---\nFile: v.txt\nL1: world\n---"
    );
    let o = run(&t, "grep_search", json!({"pattern": "world", "no_ignore": true, "context": 0}));
    let out = o.output();
    assert!(
        out.contains("File: build/out.txt")
            && out.contains("File: private.txt")
            && out.contains("File: app.log"),
        "{out}"
    );
    assert!(!out.contains(".hidden.txt"), "no_ignore does not mean hidden");
}

/// The default excludes are folders by name and `*.log`/`*.tmp` names (issue 22 prunes them
/// in the walk instead of matching override globs against every path): what they leave out
/// and what they do not, as ripgrep's overrides decide it.
#[test]
fn default_excludes_match_folders_by_name_below_the_search_path() {
    let t = TempTree::new();
    t.file("dist", "world")
        .file("build.txt", "world")
        .file("x.TMP", "world")
        .file("logs.log/inner.txt", "world")
        .file("a/node_modules/x.txt", "world")
        .file("a/b/coverage/c.txt", "world")
        .file("a/__pycache__/m.txt", "world")
        .file("src/run.tmp", "world")
        .file("d2/dist/sub/in.txt", "world")
        .file("keep/build/deep/no.txt", "world");
    let o = run(&t, "grep_search", json!({"pattern": "world", "names_only": true}));
    assert_eq!(
        o.output(),
        "Found 3 files with matches for pattern \"world\" in path \".\":\nbuild.txt\ndist\nx.TMP"
    );
    // Inside an excluded folder, the search path itself is not excluded.
    let o = run(
        &t,
        "grep_search",
        json!({"pattern": "world", "dir_path": "d2/dist/sub", "names_only": true}),
    );
    assert_eq!(
        o.output(),
        "Found 1 files with matches for pattern \"world\" in path \"d2/dist/sub\":\nin.txt"
    );
    let o = run(
        &t,
        "grep_search",
        json!({"pattern": "world", "include_pattern": "*.txt", "names_only": true}),
    );
    assert_eq!(
        o.output(),
        "Found 1 files with matches for pattern \"world\" in path \".\" (filter: \"*.txt\"):\nbuild.txt"
    );
}

#[test]
fn nested_gitignores_apply_inside_git_repos() {
    let t = TempTree::new();
    t.file(".git/HEAD", "ref: x").file(".gitignore", "*.gen\n").file("a/.gitignore", "local.txt\n");
    t.file("a/local.txt", "world").file("local.txt", "world").file("a/x.gen", "world");
    let o = run(&t, "grep_search", json!({"pattern": "world", "context": 0}));
    assert_eq!(
        o.output(),
        "Found 1 match for pattern \"world\" in path \".\":\n---\nFile: local.txt\nL1: world\n---"
    );
}

/// A line that is not UTF-8 is shown as ripgrep prints it, U+FFFD for each bad byte (issue 48,
/// S1: upstream drops it, and this test held that; compat W9).
#[test]
fn crlf_and_invalid_utf8_lines() {
    let t = TempTree::new();
    t.file("c.txt", "one\r\ntwo world\r\n")
        .file("bad.txt", [b"world ok\n".as_slice(), b"world \xff\xfe bad\n"].concat());
    let o = run(&t, "grep_search", json!({"pattern": "world", "context": 0}));
    assert_eq!(
        o.output(),
        "Found 3 matches for pattern \"world\" in path \".\":\n---\nFile: bad.txt\nL1: world ok\nL2: world \u{fffd}\u{fffd} bad\n---\nFile: c.txt\nL2: two world\n---"
    );
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_odd_names_do_not_break_the_search() {
    let t = TempTree::new();
    t.dir("loop").symlink(t.root().join("loop"), "loop/self").file("v.txt", "world");
    let odd = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"na\xffme.txt");
    std::fs::write(t.root().join(odd), "world").unwrap();
    let o = run(&t, "grep_search", json!({"pattern": "world", "context": 0}));
    assert!(o.output().contains("File: v.txt"), "{}", o.output());
    // A name that is not UTF-8 could only be shown as another: counted, not shown.
    assert!(o.output().starts_with("Found 1 match"), "{}", o.output());
    assert!(
        o.output().contains(
            "(1 file(s) left out: the file tools refuse their paths (Path is not valid UTF-8.)"
        ),
        "{}",
        o.output()
    );
}

#[test]
fn cancellation_returns_what_was_found_with_a_note() {
    let t = fixture();
    let token = CancellationToken::new();
    token.cancel();
    let o = run_with_token(&env_for(&t, &[]), "grep_search", json!({"pattern": "world"}), token);
    assert!(o.output().ends_with("(The search was cut short: it was cancelled or ran out of time. These results are partial.)"), "{}", o.output());
}

#[test]
fn legacy_name_and_parameters() {
    let t = fixture();
    let o = run(
        &t,
        "search_file_content",
        json!({"pattern": "world", "path": "sub", "include": "*.txt"}),
    );
    assert!(
        o.output().starts_with(
            "Found 1 match for pattern \"world\" in path \"sub\" (filter: \"*.txt\"):"
        ),
        "{}",
        o.output()
    );
}

#[test]
fn outside_paths_are_refused() {
    let t = fixture();
    assert!(
        run(&t, "grep_search", json!({"pattern": "x", "dir_path": "/etc"}))
            .error()
            .starts_with("Path not in workspace")
    );
}

#[test]
fn gr23_descriptions() {
    use toolbelt_core::Registry;
    let t = fixture();
    t.dir("src/app");
    let env = env_for(&t, &[]);
    let registry = Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
    let describe = |args: serde_json::Value| {
        registry.build_call("grep_search", args, &env).ok().unwrap().invocation.description()
    };
    assert_eq!(describe(json!({"pattern": "testPattern"})), "'testPattern' within ./");
    assert_eq!(
        describe(json!({"pattern": "testPattern", "include_pattern": "*.ts"})),
        "'testPattern' in *.ts within ./"
    );
    assert_eq!(
        describe(json!({"pattern": "testPattern", "dir_path": "."})),
        "'testPattern' within ./"
    );
    assert_eq!(
        describe(json!({"pattern": "testPattern", "dir_path": "src/app"})),
        "'testPattern' within src/app"
    );
}

/// Issue 19: without `dir_path` only the first root was searched. Every root is searched, each
/// file named under its root's folder, as upstream's search does.
#[test]
fn without_dir_path_every_root_is_searched() {
    let t = TempTree::new();
    t.file("a.txt", "needle one\n");
    let other = tempfile::tempdir().unwrap();
    let other_root = std::fs::canonicalize(other.path()).unwrap();
    std::fs::write(other_root.join("b.txt"), "needle two\n").unwrap();
    let env = env_for(&t, &[other_root.as_path()]);
    let o = crate::harness::run_in(&env, "grep_search", json!({"pattern": "needle"}));
    let out = o.output();
    assert!(
        out.starts_with("Found 2 matches for pattern \"needle\" across 2 workspace directories"),
        "{out}"
    );
    let first = t.root().file_name().unwrap().to_string_lossy().into_owned();
    let second = other_root.file_name().unwrap().to_string_lossy().into_owned();
    assert!(out.contains(&format!("File: {first}/a.txt")), "{out}");
    assert!(out.contains(&format!("File: {second}/b.txt")), "{out}");
    // With a dir_path, only there.
    let o =
        crate::harness::run_in(&env, "grep_search", json!({"pattern": "needle", "dir_path": "."}));
    assert!(
        o.output().starts_with("Found 1 match for pattern \"needle\" in path \".\""),
        "{}",
        o.output()
    );
}

/// A file of one line: `len` bytes of `a`, then `NEEDLE`.
fn one_long_line(len: usize) -> Vec<u8> {
    let mut line = vec![b'a'; len];
    line.extend_from_slice(b"NEEDLE\n");
    line
}

/// Issue 20: a file whose one line is over 32 MiB was skipped without a word ("No matches
/// found" although the needle was there). It is named as not searched.
#[test]
fn a_file_too_long_to_search_is_named_not_silently_skipped() {
    let t = TempTree::new();
    t.file("huge.min.js", one_long_line(33 << 20));
    t.file("small.txt", "nothing to see\n");
    let o = run(&t, "grep_search", json!({"pattern": "NEEDLE"}));
    let text = o.model["output"].as_str().unwrap();
    assert!(text.starts_with("No matches found"), "{text}");
    assert!(
        text.ends_with("(1 file(s) could not be searched and may hold matches; search them with run_shell_command, e.g. grep -c:\n- huge.min.js: a line is longer than the 8 MiB each search thread holds in memory (search the file alone, with its path as dir_path, for lines up to 32 MiB))"),
        "{text}"
    );
    let o = run(&t, "grep_search", json!({"pattern": "NEEDLE", "dir_path": "huge.min.js"}));
    assert!(o.output().ends_with("a line is longer than the 32 MiB a search holds in memory)"));
}

/// Issue 35 (fifth attack): each search thread of a tree held a line of up to 32 MiB (four
/// greps over long-line files took 278 MB on two cores, some 1 GB expected on eight). A tree
/// search holds a quarter of that per thread; the file alone is still searched whole.
#[test]
fn a_tree_search_holds_a_quarter_of_a_files_line_per_thread() {
    let t = TempTree::new();
    t.file("bundle.js", one_long_line(9 << 20));
    let o = run(&t, "grep_search", json!({"pattern": "NEEDLE"}));
    let text = o.model["output"].as_str().unwrap();
    assert!(
        text.contains("- bundle.js: a line is longer than the 8 MiB each search thread"),
        "{text}"
    );
    let o = run(&t, "grep_search", json!({"pattern": "NEEDLE", "dir_path": "bundle.js"}));
    assert!(o.output().starts_with("Found 1 match"), "{}", o.output());
}

/// Issue 35 (fifth attack): `\w{150}\d\d\d` over a file of one 32 MiB line ran for minutes
/// in one step no token stops, holding a costly turn long past the call's deadline. A costly
/// pattern searches lines of about 2 MiB; a longer one is named as not searched, and a simple
/// pattern still searches it.
#[test]
fn a_costly_pattern_names_lines_too_long_for_it_instead_of_grinding() {
    let t = TempTree::new();
    let mut line = vec![b'a'; 3 << 20];
    line.extend_from_slice(b"NEEDLE\n");
    t.file("min.js", &line);
    let o = run(&t, "grep_search", json!({"pattern": r"\w{150}\d\d\d"}));
    let text = o.model["output"].as_str().unwrap();
    assert!(text.starts_with("No matches found"), "{text}");
    assert!(text.contains("- min.js: a line is longer than the 2."), "{text}");
    assert!(text.contains("MiB this pattern may search in one piece"), "{text}");
    let o = run(&t, "grep_search", json!({"pattern": "NEEDLE"}));
    assert!(o.output().starts_with("Found 1 match"), "{}", o.output());
}

/// Review of session 9: the line cap priced a pattern by its class ranges, so `a{50000}b`
/// (50,000 positions, one range each) could search 5.5 MB lines in one piece: a 100 KB line of
/// `a` took 24 s, a 1 MB line over 120 s, none of it stoppable. The cap is priced by the
/// positions a search may track at once, so such a pattern searches short lines only; a file
/// with a longer one is named.
#[test]
fn a_pattern_of_many_positions_searches_only_short_lines() {
    let t = TempTree::new();
    t.file("a.txt", "a".repeat(200_000));
    let o = run(&t, "grep_search", json!({"pattern": "a{50000}b", "case_sensitive": true}));
    let text = o.model["output"].as_str().unwrap();
    assert!(text.starts_with("No matches found"), "{text}");
    assert!(text.contains("- a.txt: a line is longer than the"), "{text}");
    assert!(text.contains("this pattern may search in one piece"), "{text}");
}

/// Review of issue 20: with several roots, an unsearchable file in another root was named
/// relative to the last root walked (`../x`), not under its root's folder name.
#[test]
fn an_unsearchable_file_in_another_root_is_named_under_its_root() {
    let t = TempTree::new();
    let other = TempTree::new();
    t.file("a.txt", "nothing\n");
    other.file("huge.min.js", one_long_line(33 << 20));
    let env = env_for(&t, &[other.root()]);
    let o = crate::harness::run_in(&env, "grep_search", json!({"pattern": "NEEDLE"}));
    let text = o.model["output"].as_str().unwrap();
    let name = other.root().file_name().unwrap().to_string_lossy();
    assert!(text.contains(&format!("\n- {name}/huge.min.js: a line is longer than")), "{text}");
}

/// Adversarial review of issue 22: a hard link to a file outside the workspace must be refused
/// before a byte of it is read. A build that searched it first and checked the link only on a
/// match printed the same answer, but took longer when the secret matched the pattern (with a
/// deadline, a different answer): a pattern could be refined against the secret. Reading is
/// seen here by the file's access time (the file system is checked first to update it).
#[cfg(unix)]
#[test]
fn a_hard_link_to_outside_is_never_read_by_a_search() {
    use std::time::{Duration, SystemTime};
    let t = TempTree::new();
    let outside = tempfile::tempdir().unwrap();
    let long_ago = SystemTime::now() - Duration::from_secs(3 * 24 * 3600);
    let accessed = |p: &std::path::Path| std::fs::metadata(p).unwrap().accessed().unwrap();
    let age = |p: &std::path::Path| {
        let f = std::fs::File::options().write(true).open(p).unwrap();
        f.set_times(std::fs::FileTimes::new().set_accessed(long_ago)).unwrap();
    };
    // Does a read show in the access time here (not with noatime)?
    let control = outside.path().join("control.txt");
    std::fs::write(&control, "x").unwrap();
    age(&control);
    let _ = std::fs::read(&control).unwrap();
    if accessed(&control) <= long_ago + Duration::from_secs(1) {
        eprintln!("skipped: this file system does not record reads in the access time");
        return;
    }
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "TOKEN=abc123\n").unwrap();
    std::fs::hard_link(&secret, t.root().join("notes.txt")).unwrap();
    t.file("plain.txt", "nothing here");
    age(&secret);
    let o = run(&t, "grep_search", json!({"pattern": "TOKEN=a", "names_only": true}));
    assert!(o.output().starts_with("No matches found"), "{}", o.output());
    assert!(accessed(&secret) <= long_ago + Duration::from_secs(1), "the refused file was read");
}

/// Issue 22: a walker thread asks the cancellation token only every 64 entries (the token's
/// check takes a shared lock). A cancelled search still reports none of 600 matching files
/// (the walk asks at a thread's first entry, and a file's search asks at each match; that the
/// walk itself stops at once is seen in glob's `a_cancelled_glob_stops_walking_at_once`).
#[test]
fn a_cancelled_search_stops_walking_at_once() {
    let t = TempTree::new();
    for i in 0..600 {
        t.file(&format!("d{}/f{i}.txt", i % 7), "a needle\n");
    }
    let token = CancellationToken::new();
    token.cancel();
    let args = json!({"pattern": "needle", "names_only": true, "total_max_matches": 1000});
    let o = run_with_token(&env_for(&t, &[]), "grep_search", args.clone(), token);
    assert!(!o.output().contains(".txt"), "{}", o.output());
    // The same search, not cancelled, finds them all.
    let o = run(&t, "grep_search", args);
    assert_eq!(o.output().lines().filter(|l| l.ends_with(".txt")).count(), 600);
}

/// Issue 35 (third attack): `total_max_matches: 1000000000` on a file of 400,000 matching
/// lines kept every line (889 MB) for an answer cut at a million characters. The lines kept
/// are bounded (8 MiB of text) and the answer says the search was cut short and why.
#[test]
fn a_huge_match_limit_keeps_a_bounded_amount_of_text_and_says_so() {
    let t = TempTree::new();
    t.file("many.txt", "a\n".repeat(600_000));
    let r = run(&t, "grep_search", json!({"pattern": "a", "total_max_matches": 1_000_000_000}));
    let out = r.output();
    assert!(
        out.contains("The search was cut short: the lines found passed 8 MiB"),
        "{}",
        &out[out.len().saturating_sub(400)..]
    );
    let shown = out.matches("\nL").count();
    assert!(shown > 100_000 && shown < 600_000, "{shown} matches shown");
}

/// Issue 35 (fourth attack, N5): a small file's match and three minified files of one 4.8 MB
/// line each: the long lines filled the 8 MiB of kept text and the answer was "No matches
/// found" (the small file's match lost). A line is kept only as far as an answer shows it.
#[test]
fn long_matching_lines_do_not_crowd_out_other_matches() {
    let t = TempTree::new();
    t.file("s.txt", "xxA\n");
    for i in 0..3 {
        t.file(&format!("m{i}.js"), format!("{}\n", "var a=1;".repeat(600_000)));
    }
    let r = run(&t, "grep_search", json!({"pattern": "a"}));
    let out = r.output();
    assert!(out.contains("File: s.txt\nL1: xxA"), "{}", &out[..out.len().min(600)]);
    assert_eq!(out.matches("... [truncated]").count(), 3, "{}", &out[..out.len().min(600)]);
    assert!(!out.contains("cut short"), "{}", &out[out.len().saturating_sub(400)..]);
}

/// Issue 35 (fourth attack): grep_search on a folder of a million files took 282 MB, the
/// walker queuing every entry before searching any. Past the first 10,000 files of a folder,
/// files are set aside by name and searched after the walk: none is lost.
#[test]
fn the_files_of_a_crowded_folder_are_all_searched() {
    let t = TempTree::new();
    let dir = t.root().join("crowd");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..10_050 {
        std::fs::write(
            dir.join(format!("f{i:05}.txt")),
            if i % 2 == 0 { "needle\n" } else { "hay\n" },
        )
        .unwrap();
    }
    t.file("crowd.log", "needle\n");
    let r = run(
        &t,
        "grep_search",
        json!({"pattern": "needle", "names_only": true, "total_max_matches": 100_000}),
    );
    let out = r.output();
    let listed = out.lines().filter(|l| l.ends_with(".txt")).count();
    assert_eq!(listed, 5_025, "{}", &out[..out.len().min(300)]);
    assert!(!out.contains("crowd.log"), "default excludes still apply");
}
