//! replace: the cases of cases-public.md section I, encodings and line endings, and a
//! randomized round-trip property.

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::run;

fn edit(t: &TempTree, old: &str, new: &str, multiple: Option<bool>) -> crate::harness::Outcome {
    let mut args = json!({"file_path": "execute_me.txt", "instruction": "change it", "old_string": old, "new_string": new});
    if let Some(m) = multiple {
        args["allow_multiple"] = json!(m);
    }
    run(t, "replace", args)
}

fn content(t: &TempTree) -> Vec<u8> {
    std::fs::read(t.root().join("execute_me.txt")).unwrap()
}

#[test]
fn ed01_basic_edit() {
    let t = TempTree::new();
    t.file("execute_me.txt", "This is some old text.");
    let o = edit(&t, "old", "new", None);
    assert_eq!(
        o.output(),
        format!(
            "Successfully modified file: {} (1 replacements). Here is the updated code:\nThis is some new text.",
            t.abs("execute_me.txt")
        )
    );
    assert_eq!(content(&t), b"This is some new text.");
    assert_eq!(o.display()["fileName"], "execute_me.txt");
    assert_eq!(o.result().summary.as_deref(), Some("1 added, 1 removed"));
}

#[test]
fn ed05_ed07_create_with_empty_old_string() {
    let t = TempTree::new();
    let o = edit(&t, "", "new line one\r\nnew line two\r\n", None);
    assert_eq!(content(&t), b"new line one\r\nnew line two\r\n");
    assert!(o.output().starts_with(&format!(
        "Created new file: {} with provided content. Here is the updated code:\n",
        t.abs("execute_me.txt")
    )));
    assert_eq!(o.display(), json!("Created execute_me.txt"));
    let o = edit(&t, "", "again", None);
    assert_eq!(
        o.error(),
        format!("File already exists, cannot create: {}", t.abs("execute_me.txt"))
    );
    assert_eq!(o.error_type.as_deref(), Some("attempt_to_create_existing_file"));
    assert_eq!(
        o.display(),
        json!("Error: Failed to edit. Attempted to create a file that already exists.")
    );
}

#[test]
fn ed09_to_ed16_occurrence_rules() {
    let t = TempTree::new();
    t.file("execute_me.txt", "one one two");
    let o = edit(&t, "one", "new", None);
    assert_eq!(
        o.error(),
        "Failed to edit, Expected 1 occurrence but found 2 for old_string in file: execute_me.txt. If you intended to replace multiple occurrences, set 'allow_multiple' to true."
    );
    assert_eq!(o.display(), json!("Error: Failed to edit, expected 1 occurrence but found 2."));
    for (file, multiple, result) in [
        ("foo foo foo", Some(true), Ok("bar bar bar")),
        ("foo", Some(true), Ok("bar")),
        ("foo foo foo", Some(false), Err("edit_expected_occurrence_mismatch")),
        ("foo foo", None, Err("edit_expected_occurrence_mismatch")),
        ("foo", Some(false), Ok("bar")),
        ("baz", Some(true), Err("edit_no_occurrence_found")),
        ("baz", Some(false), Err("edit_no_occurrence_found")),
    ] {
        t.file("execute_me.txt", file);
        let o = edit(&t, "foo", "bar", multiple);
        match result {
            Ok(expected) => assert_eq!(content(&t), expected.as_bytes(), "{file} {multiple:?}"),
            Err(kind) => {
                assert_eq!(o.error_type.as_deref(), Some(kind), "{file} {multiple:?}");
                assert_eq!(content(&t), file.as_bytes(), "unchanged on error");
            }
        }
    }
}

#[test]
fn ed17_identical_strings_and_missing_file() {
    let t = TempTree::new();
    let o = edit(&t, "a", "b", None);
    assert_eq!(o.error(), format!("File not found: {}", t.abs("execute_me.txt")));
    assert_eq!(
        o.display(),
        json!(
            "Error: File not found. Cannot apply edit. Use an empty old_string to create a new file."
        )
    );
    t.file("execute_me.txt", "abc");
    let o = edit(&t, "abc", "abc", None);
    assert_eq!(
        o.error(),
        "No changes to apply. The old_string and new_string are identical in file: execute_me.txt"
    );
    assert_eq!(o.error_type.as_deref(), Some("edit_no_change"));
}

#[test]
fn zero_matches_name_the_nearest_region() {
    let t = TempTree::new();
    t.file("execute_me.txt", "fn a() {\n    let x = 1;\n    let y = 2;\n}\n");
    let o = edit(&t, "    let x = 1;\n    let total = compute(x, 42);", "z", None);
    assert!(
        o.error()
            .starts_with("Could not find an exact match for 'old_string' in 'execute_me.txt'."),
        "{}",
        o.error()
    );
    assert!(o.error().contains("The closest region is lines 2-3 (1 of 2 lines match); differences: line 3: file has `let y = 2;` but old_string has `let total = compute(x, 42);`"), "{}", o.error());
    assert_eq!(o.error_type.as_deref(), Some("edit_no_occurrence_found"));
}

#[test]
fn ed21_dollar_sequences_are_literal() {
    let t = TempTree::new();
    for (file, old, new, want) in [
        (
            "price is $100 and pattern end is ' '",
            "price is $100",
            "price is $200",
            "price is $200 and pattern end is ' '",
        ),
        ("hello world", "hello", "$&-replacement", "$&-replacement world"),
        ("prefix-middle-suffix", "middle", "new$`content", "prefix-new$`content-suffix"),
        ("test string", "test", "$1$2replacement", "$1$2replacement string"),
        ("price value", "value", "$$100", "price $$100"),
    ] {
        t.file("execute_me.txt", file);
        edit(&t, old, new, None);
        assert_eq!(content(&t), want.as_bytes());
    }
}

#[test]
fn ed23_ed27_ed29_ed33_forgiving_strategies() {
    let t = TempTree::new();
    t.file("execute_me.txt", "  function  myFunc( a, b ) {\n    return a + b;\n  }");
    edit(&t, "function myFunc(a, b) {", "const yourFunc = (a, b) => {", None);
    assert_eq!(content(&t), b"  const yourFunc = (a, b) => {\n    return a + b;\n  }");
    t.file("execute_me.txt", "  match1\n  match2\n  match1\n  match2\n");
    let o = edit(&t, "match1\nmatch2", "replaced1\nreplaced2\nreplaced3", Some(true));
    assert_eq!(
        content(&t),
        b"  replaced1\n  replaced2\n  replaced3\n  replaced1\n  replaced2\n  replaced3\n"
    );
    assert!(o.output().contains("(2 replacements)"));
    t.file("execute_me.txt", "  // some comment\n\n  function oldFunc() {}");
    edit(&t, "\nfunction oldFunc() {}", "\n  function newFunc() {}", None);
    assert_eq!(content(&t), b"  // some comment\n\n  function newFunc() {}");
    t.file("execute_me.txt", "\nfunction doIt() {\n  console.log(\"hello\");\n}\n\nfunction doIt() {\n  console.log(\"hello\");\n}\n");
    let o = edit(
        &t,
        "function doIt() {\n  console.log('hello');\n}",
        "function doIt() {\n  console.log(\"bye\");\n}",
        Some(true),
    );
    assert!(o.output().ends_with("Applied fuzzy match at lines 2-4, 6-8."), "{}", o.output());
    assert_eq!(String::from_utf8(content(&t)).unwrap().matches("bye").count(), 2);
}

#[test]
fn ed37_removal_and_ed41_trailing_newline() {
    let t = TempTree::new();
    t.file("execute_me.txt", (1..=10).map(|i| format!("File 0, Line {i}\n")).collect::<String>());
    let o = edit(&t, "File 0, Line 2\nFile 0, Line 3\n", "", None);
    assert_eq!(o.display()["diffStat"]["model_removed_lines"], 2);
    assert!(o.output().ends_with("Here is the updated code:\nFile 0, Line 1\nFile 0, Line 4\nFile 0, Line 5\nFile 0, Line 6\nFile 0, Line 7\nFile 0, Line 8\n..."), "{}", o.output());
    t.file("execute_me.txt", "x\n");
    edit(&t, "x\n", "y", None);
    assert_eq!(content(&t), b"y\n");
    t.file("execute_me.txt", "x");
    edit(&t, "x", "y\n", None);
    assert_eq!(content(&t), b"y");
}

#[test]
fn line_endings_bom_tabs_and_encodings_are_kept() {
    let t = TempTree::new();
    t.file("execute_me.txt", "\u{feff}one\r\ntwo\r\nthree\r\n");
    edit(&t, "two\nthree", "2\n3", None);
    assert_eq!(content(&t), "\u{feff}one\r\n2\r\n3\r\n".as_bytes());
    t.file("execute_me.txt", "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n");
    edit(&t, "    if x {\n        y();\n    }", "if x {\n    z();\n}", None);
    assert_eq!(content(&t), b"fn f() {\n\tif x {\n\t    z();\n\t}\n}\n");
    t.file("execute_me.txt", b"caf\xe9 au lait\nna\xefve\n");
    edit(&t, "lait", "sucre", None);
    assert_eq!(content(&t), b"caf\xe9 au sucre\nna\xefve\n", "Latin-1 bytes survive");
    let o = edit(&t, "sucre", "\u{1F600}", None);
    assert!(o.error().contains("cannot be written in that encoding"), "{}", o.error());
    assert_eq!(content(&t), b"caf\xe9 au sucre\nna\xefve\n");
    t.file("execute_me.txt", "a\u{a0}=\u{a0}1;\n");
    edit(&t, "a = 1;", "a = 2;", None);
    assert_eq!(content(&t), b"a = 2;\n", "non-breaking spaces match plain ones");
}

#[test]
fn paths_directories_and_placeholders() {
    let t = TempTree::new();
    let o = run(
        &t,
        "replace",
        json!({"file_path": "/etc/hosts", "instruction": "i", "old_string": "a", "new_string": "b"}),
    );
    assert!(o.error().starts_with("Path not in workspace"));
    t.dir("d");
    let o = run(
        &t,
        "replace",
        json!({"file_path": "d", "instruction": "i", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(o.error(), "EISDIR: illegal operation on a directory, read");
    assert_eq!(o.error_type.as_deref(), Some("edit_preparation_failure"));
    t.file("execute_me.txt", "a\n// rest of methods ...\n");
    let o = edit(&t, "a", "// rest of methods ...", None);
    assert_eq!(
        o.error(),
        "`new_string` contains an omission placeholder (for example 'rest of methods ...'). Provide exact literal replacement text."
    );
    let o = edit(&t, "a\n// rest of methods ...", "b\n// rest of methods ...", None);
    assert!(
        o.output().starts_with("Successfully modified file"),
        "placeholders already in old_string are fine"
    );
    // Issue 19: a call without `instruction` (the design documents' form) is accepted; here
    // the file is missing, so that is what it says.
    assert!(
        run(&t, "replace", json!({"file_path": "x", "old_string": "a", "new_string": "b"}))
            .error()
            .starts_with("File not found:")
    );
    assert_eq!(
        run(&t, "replace", json!({"file_path": "x", "old_string": "a"})).error(),
        "params must have required property 'new_string'"
    );
}

#[test]
fn descriptions() {
    use toolbelt_core::Registry;
    let t = TempTree::new();
    let env = crate::harness::env_for(&t, &[]);
    let registry = Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
    let d = |old: &str, new: &str| {
        let args = json!({"file_path": "execute_me.txt", "instruction": "i", "old_string": old, "new_string": new});
        registry.build_call("replace", args, &env).ok().unwrap().invocation.description()
    };
    assert_eq!(d("", "x"), "Create execute_me.txt");
    assert_eq!(d("a", "a"), "No file changes to execute_me.txt");
    assert_eq!(
        d("This is a long line of text that goes on", "short"),
        "execute_me.txt: This is a long line of text th... => short"
    );
}

/// Exact replace followed by its inverse gives back the original bytes (CRLF, BOM and trailing
/// newline included), for many random files and edits.
#[test]
fn replace_then_inverse_restores_the_original_bytes() {
    let t = TempTree::new();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let words = ["alpha", "beta", "gamma", "  indented", "\ttab", "x = 1;", "", "ünïcødé"];
    for round in 0..60 {
        let crlf = next() % 2 == 0;
        let bom = next() % 5 == 0;
        let n = 3 + (next() % 8) as usize;
        let lines: Vec<String> = (0..n)
            .map(|i| format!("{} {round}-{i}", words[(next() % words.len() as u64) as usize]))
            .collect();
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.join(eol);
        if next() % 2 == 0 {
            text.push_str(eol);
        }
        if bom {
            text.insert(0, '\u{feff}');
        }
        t.file("execute_me.txt", &text);
        let target = &lines[(next() % n as u64) as usize];
        let replacement = format!("CHANGED {round}");
        let o = edit(&t, target, &replacement, None);
        assert!(o.error_type.is_none(), "round {round}: {:?}", o.model);
        edit(&t, &replacement, target, None);
        assert_eq!(content(&t), text.as_bytes(), "round {round}");
    }
}

#[test]
fn edits_refuse_files_changed_since_the_model_read_them() {
    let t = TempTree::new();
    t.file("execute_me.txt", "alpha\nbeta\n");
    let env = crate::harness::env_for(&t, &[]);
    let call = |tool: &str, args: serde_json::Value| crate::harness::run_in(&env, tool, args);
    call("read_file", json!({"file_path": "execute_me.txt"}));
    let ok = call(
        "replace",
        json!({"file_path": "execute_me.txt", "instruction": "i", "old_string": "alpha", "new_string": "ALPHA"}),
    );
    assert!(
        ok.output().starts_with("Successfully modified"),
        "the model's own edit keeps the file current"
    );
    std::fs::write(t.root().join("execute_me.txt"), "ALPHA\nbeta\nadded by someone else\n")
        .unwrap();
    let o = call(
        "replace",
        json!({"file_path": "execute_me.txt", "instruction": "i", "old_string": "beta", "new_string": "BETA"}),
    );
    assert!(o.error().contains("changed on disk since it was last read"), "{}", o.error());
    let o = call("write_file", json!({"file_path": "execute_me.txt", "content": "clobber"}));
    assert!(o.error().contains("changed on disk since it was last read"), "{}", o.error());
    assert_eq!(content(&t), b"ALPHA\nbeta\nadded by someone else\n");
    call("read_file", json!({"file_path": "execute_me.txt"}));
    let o = call(
        "replace",
        json!({"file_path": "execute_me.txt", "instruction": "i", "old_string": "beta", "new_string": "BETA"}),
    );
    assert!(
        o.output().starts_with("Successfully modified"),
        "after reading again the edit goes through"
    );
}

#[test]
fn mixed_endings_empty_files_and_read_only_files() {
    let t = TempTree::new();
    t.file("execute_me.txt", "a\r\nb\nc\r\n");
    edit(&t, "b", "B", None);
    assert_eq!(
        content(&t),
        b"a\r\nB\r\nc\r\n",
        "a file with any CRLF is written all-CRLF, as upstream"
    );
    t.file("execute_me.txt", "");
    assert_eq!(edit(&t, "x", "y", None).error_type.as_deref(), Some("edit_no_occurrence_found"));
    t.file("execute_me.txt", "locked\n");
    let mut perms = std::fs::metadata(t.root().join("execute_me.txt")).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(t.root().join("execute_me.txt"), perms).unwrap();
    let o = edit(&t, "locked", "open", None);
    assert!(o.error().starts_with("Error executing edit: "), "{}", o.error());
    assert_eq!(content(&t), b"locked\n");
    let o = run(&t, "write_file", json!({"file_path": "execute_me.txt", "content": "x"}));
    assert_eq!(
        o.error(),
        format!("Permission denied writing to file: {} (EACCES)", t.abs("execute_me.txt"))
    );
    assert_eq!(o.error_type.as_deref(), Some("permission_denied"));
}

#[test]
fn a_50_mb_file_is_edited_in_place_of_one_line() {
    let t = TempTree::new();
    let body: String =
        (0..700_000).map(|i| format!("row {i:07} of a large generated file\n")).collect();
    assert!(body.len() > 25 * 1024 * 1024);
    let big = body.repeat(2);
    t.file("execute_me.txt", &big);
    let (old, new) =
        ("row 0350000 of a large generated file\nrow 0350001", "row 0350000 CHANGED\nrow 0350001");
    // Issue 15: over the default cap (20 MiB) an edit is refused before anything is read...
    let o = edit(&t, old, new, Some(true));
    assert!(o.error().starts_with("File size exceeds the 20MB limit"), "{}", o.error());
    assert_eq!(o.error_type.as_deref(), Some("file_too_large"));
    // ...and with the cap raised in settings it is edited in place of one line, as before.
    let mut env = crate::harness::env_for(&t, &[]);
    env.config = std::sync::Arc::new(toolbelt_core::config::Config {
        edit_max_file_bytes: 64 * 1024 * 1024,
        ..(*env.config).clone()
    });
    let args = json!({"file_path": "execute_me.txt", "instruction": "i", "old_string": old, "new_string": new, "allow_multiple": true});
    let o = crate::harness::run_in(&env, "replace", args);
    assert!(o.output().contains("(2 replacements)"));
    assert!(content(&t) == big.replace(old, new).into_bytes(), "exactly the two lines changed");
}

/// Issue 35 (second attack): replacing every `a` of a 20 MB file of short lines with 103
/// characters took over 1.5 GB and wrote a 1 GB file. What an edit would make is bounded like
/// what it reads: the edit is refused before it is computed, saying why, and the file is left
/// alone.
#[test]
fn an_edit_that_would_grow_past_the_limit_is_refused_before_it_is_made() {
    let t = TempTree::new();
    let small = "a\n".repeat(300_000);
    t.file("execute_me.txt", &small);
    let o = edit(&t, "a", &"b".repeat(103), Some(true));
    assert_eq!(o.error_type.as_deref(), Some("file_too_large"), "{}", o.output());
    assert!(
        o.error().contains("replacing 300000 occurrence(s) would make")
            && o.error().contains("over the 20MB limit"),
        "{}",
        o.error()
    );
    assert!(content(&t) == small.into_bytes(), "the file is left alone");
    // Under the limit it is made.
    let o = edit(&t, "a", "bb", Some(true));
    assert!(o.output().contains("(300000 replacements)"), "{}", o.output());
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_workspace_are_refused() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("x.txt", "keep");
    t.symlink(outside.root().join("x.txt"), "execute_me.txt");
    assert!(edit(&t, "keep", "lost", None).error().starts_with("Path not in workspace"));
    assert_eq!(std::fs::read(outside.root().join("x.txt")).unwrap(), b"keep");
}

/// Issue 35 (third attack): a replace whose old_string is not in a 20 MB file of ten million
/// short lines took 790 MB (every line held, squashed, by the lenient matches and the
/// nearest-region hint), and a 60 KB old_string kept it busy until the call's deadline. Both
/// answer "not found". That no line is held is counted in the matcher's own test
/// (`a_missing_old_string_in_ten_million_lines_holds_no_line`); the time is a benchmark's
/// (`scripts/bench-engine.sh`), not this test's: a 30 s bound failed on a busy machine (issue
/// 49 F11).
#[test]
fn a_missing_old_string_in_ten_million_lines_is_not_found() {
    let t = TempTree::new();
    t.file("execute_me.txt", "a\n".repeat(10_400_000));
    for old in ["zzz".to_string(), "line of old text\n".repeat(3_000)] {
        let o = edit(&t, &old, "x", None);
        assert_eq!(o.error_type.as_deref(), Some("edit_no_occurrence_found"), "{}", o.output());
    }
}

/// Issue 35 (fifth attack): 30 HTTP sessions each turning a 300-byte file into 18 MB (a
/// one-byte old_string, a 60 KB new_string) took 2.6 GB at once. An edit that may make or
/// hold over 1 MiB takes three costly turns; a small one none.
#[test]
fn an_edit_that_may_grow_large_takes_three_costly_turns() {
    use toolbelt_core::Registry;
    let t = TempTree::new();
    t.file("g.txt", "a".repeat(300));
    let env = crate::harness::env_for(&t, &[]);
    let registry = Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
    let turns = |new: String| {
        let args = json!({"file_path": "g.txt", "instruction": "grow", "old_string": "a",
                          "new_string": new, "allow_multiple": true});
        registry.build_call("replace", args, &env).ok().unwrap().invocation.costly_turns()
    };
    assert_eq!(turns("b".repeat(60_000)), 3);
    assert_eq!(turns("bb".into()), 0);
    let args = json!({"file_path": "big.txt", "content": "x".repeat(2 << 20)});
    let write = registry.build_call("write_file", args, &env).ok().unwrap();
    assert_eq!(write.invocation.costly_turns(), 3);
}
