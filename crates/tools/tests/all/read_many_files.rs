//! read_many_files: the cases of cases-public.md section C.

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::{joined, run};

fn tree() -> TempTree {
    let t = TempTree::new();
    t.file(".geminiignore", "foo.*");
    t
}

#[test]
fn rm01_single_file() {
    let t = tree();
    t.file("file1.txt", "Content of file1");
    let o = run(&t, "read_many_files", json!({"include": ["file1.txt"]}));
    assert_eq!(
        serde_json::to_value(&o.result().llm_content).unwrap(),
        json!([{"text": format!("--- {} ---\n\nContent of file1\n\n", t.abs("file1.txt"))}, {"text": "\n--- End of content ---"}])
    );
    assert_eq!(
        joined(&o),
        format!("--- {} ---\n\nContent of file1\n\n\n\n--- End of content ---", t.abs("file1.txt"))
    );
    assert!(
        o.display()["summary"]
            .as_str()
            .unwrap()
            .contains("Successfully read and concatenated content from **1 file(s)**")
    );
}

#[test]
fn rm03_non_recursive_glob_in_path_order() {
    let t = tree();
    t.file("file.txt", "f").file("another.txt", "a").file("sub/data.json", "{}");
    let o = run(&t, "read_many_files", json!({"include": ["*.txt"]}));
    let text = joined(&o);
    let a = text.find("another.txt").unwrap();
    let f = text.find("file.txt").unwrap();
    assert!(a < f && !text.contains("data.json"));
}

#[test]
fn rm05_nothing_matched() {
    let t = tree();
    let o = run(&t, "read_many_files", json!({"include": ["nonexistent-file.txt"]}));
    assert_eq!(
        serde_json::to_value(&o.result().llm_content).unwrap(),
        json!([{"text": "No files matching the criteria were found or all were skipped."}])
    );
    assert!(
        o.display()["summary"]
            .as_str()
            .unwrap()
            .contains("No files were read and concatenated based on the criteria.")
    );
}

#[test]
fn rm07_default_excludes_can_be_turned_off() {
    let t = tree();
    t.file("dist/some-lib/index.js", "lib code").file("src/app.js", "app");
    let o = run(&t, "read_many_files", json!({"include": ["**/*.js"]}));
    assert!(!joined(&o).contains("lib code"));
    let o =
        run(&t, "read_many_files", json!({"include": ["**/*.js"], "useDefaultExcludes": false}));
    assert!(joined(&o).contains("lib code") && joined(&o).contains("app"));
    assert!(o.display()["summary"].as_str().unwrap().contains("**2 file(s)**"));
}

#[test]
fn rm09_rm11_media_only_when_asked_for() {
    let t = tree();
    t.file("myExactImage.png", b"\x89PNG\r\n")
        .file("important.pdf", "%PDF-1.4...")
        .file("a.txt", "t");
    let o = run(&t, "read_many_files", json!({"include": ["*.pdf"]}));
    assert_eq!(
        serde_json::to_value(&o.result().llm_content).unwrap(),
        json!([{"inlineData": {"data": "JVBERi0xLjQuLi4=", "mimeType": "application/pdf"}}, {"text": "\n--- End of content ---"}])
    );
    let o = run(&t, "read_many_files", json!({"include": ["*"]}));
    let skipped = o.display()["skipped"].clone();
    assert!(skipped.as_array().unwrap().iter().any(|s| s["path"] == "important.pdf"
        && s["reason"]
            == "asset file (image/pdf/audio) was not explicitly requested by name or extension"));
    let o = run(&t, "read_many_files", json!({"include": ["myExactImage.png"]}));
    assert_eq!(o.result().llm_content.parts().len(), 2);
}

#[test]
fn rm13_truncated_files_carry_a_warning() {
    let t = tree();
    t.file("file1.txt", "Content1")
        .file("large-file.txt", (0..2500).map(|i| format!("L{i}")).collect::<Vec<_>>().join("\n"));
    let o = run(&t, "read_many_files", json!({"include": ["*.txt"]}));
    let parts = serde_json::to_value(&o.result().llm_content).unwrap();
    let large = parts[1]["text"].as_str().unwrap();
    assert!(large.contains("[WARNING: This file was truncated. To view the full content, use the 'read_file' tool on this specific file.]"));
    assert!(large.contains("L200\n") && !large.contains("L2400"));
    assert!(!parts[0]["text"].as_str().unwrap().contains("WARNING"));
}

#[test]
fn rm15_rm17_validation() {
    let t = tree();
    assert_eq!(
        run(&t, "read_many_files", json!({"include": []})).error(),
        "params/include must NOT have fewer than 1 items"
    );
    assert_eq!(
        run(&t, "read_many_files", json!({"include": ["*.ts", 123]})).error(),
        "params/include/1 must be string"
    );
    assert_eq!(
        run(&t, "read_many_files", json!({"include": ["file1.txt"], "exclude": ["*.log", {}]}))
            .error(),
        "params/exclude/1 must be string"
    );
    assert_eq!(
        run(&t, "read_many_files", json!({"include": [""]})).error(),
        "params/include/0 must NOT have fewer than 1 characters"
    );
}

#[test]
fn rm21_directories_match_nothing_but_their_globs_do() {
    let t = tree();
    t.file("docs/a.md", "doc");
    let o = run(&t, "read_many_files", json!({"include": ["docs/"]}));
    assert_eq!(joined(&o), "No files matching the criteria were found or all were skipped.");
    assert!(joined(&run(&t, "read_many_files", json!({"include": ["docs/**"]}))).contains("doc"));
}

#[test]
fn ignored_binary_and_sensitive_files_are_reported_as_skipped() {
    let t = tree();
    t.file(".git", "")
        .file(".gitignore", "b.txt")
        .file("a.txt", "a")
        .file("b.txt", "b")
        .file("c.dat", (1u8..20).collect::<Vec<u8>>());
    t.file("foo.txt", "gemini-ignored").file("server.pem", "key");
    let o = run(&t, "read_many_files", json!({"include": ["*"]}));
    let text = joined(&o);
    assert!(text.contains("Cannot display content of binary file: c.dat"));
    assert!(!text.contains("gemini-ignored") && !text.contains("key"));
    let skipped = o.display()["skipped"].as_array().unwrap().clone();
    assert!(
        skipped
            .iter()
            .any(|s| s["path"] == "3 file(s)" && s["reason"] == "ignored by project ignore files"),
        "{skipped:?}"
    );
    assert!(
        skipped.iter().any(|s| s["reason"].as_str().unwrap().starts_with("Security: ")),
        "{skipped:?}"
    );
}

#[test]
fn patterns_are_case_insensitive_and_excludes_apply() {
    let t = tree();
    t.file("README.MD", "r").file("a.log", "log").file("b.txt", "b");
    assert!(
        joined(&run(&t, "read_many_files", json!({"include": ["readme.md"]})))
            .contains("README.MD ---")
    );
    let text = joined(&run(&t, "read_many_files", json!({"include": ["*"], "exclude": ["*.log"]})));
    assert!(text.contains("b.txt") && !text.contains("a.log"));
}

#[test]
fn rm19_missing_entries_do_not_spoil_the_rest() {
    let t = tree();
    t.file("valid1.txt", "1").file("valid2.txt", "2").file("valid3.txt", "3");
    let o = run(
        &t,
        "read_many_files",
        json!({"include": ["valid1.txt", "valid2.txt", "nonexistent-file.txt", "valid3.txt"]}),
    );
    let text = joined(&o);
    assert!(text.contains(&t.abs("valid1.txt")) && text.contains(&t.abs("valid3.txt")));
    assert_eq!(o.result().llm_content.parts().len(), 4);
    assert!(o.display()["summary"].as_str().unwrap().contains("Successfully read"));
}

#[test]
fn huge_files_are_skipped_without_reading_them() {
    let t = tree();
    let f = std::fs::File::create(t.root().join("huge.txt")).unwrap();
    f.set_len(21 * 1024 * 1024).unwrap();
    t.file("small.txt", "s");
    let o = run(&t, "read_many_files", json!({"include": ["*.txt"]}));
    let skipped = o.display()["skipped"].as_array().unwrap().clone();
    assert!(
        skipped.iter().any(|s| s["path"] == "huge.txt"
            && s["reason"]
                .as_str()
                .unwrap()
                .starts_with("Read error: File size exceeds the 20MB limit")),
        "{skipped:?}"
    );
    assert!(joined(&o).contains("small.txt"));
}

/// Issue 20: read_many_files over 50,000 files gave the model 19 MB with no cap or notice.
/// The files that do not fit in the output limit are named, with how to read them.
#[test]
fn files_past_the_output_limit_are_named_not_silently_dropped() {
    let t = TempTree::new();
    let line = "x".repeat(99) + "\n";
    for i in 0..300 {
        t.file(&format!("f{i:03}.txt"), line.repeat(50));
    }
    let o = run(&t, "read_many_files", json!({"include": ["*.txt"]}));
    let text = joined(&o);
    assert!(text.len() <= 1_010_000, "{}", text.len());
    let notice = text.split("[").find(|p| p.contains("not included")).expect("a notice");
    let n: usize = notice.split(' ').next().unwrap().parse().unwrap();
    assert!((90..=120).contains(&n), "{notice}");
    assert!(notice.contains("file(s) not included: the output limit of 1000000 characters was reached. Read them with read_file"), "{notice}");
    assert!(notice.contains("- f299.txt") || notice.contains("more"), "{notice}");
    let skipped = o.display()["skipped"].as_array().unwrap().len();
    assert_eq!(skipped, n);
    let included = text.matches("\n--- /").count() + usize::from(text.starts_with("--- /"));
    assert_eq!(included + n, 300);
}

/// Review of issue 20: with `start_line` and no `end_line`, 2,000 lines were kept without the
/// truncation warning; and a first file over the output limit was cut with no word.
#[test]
fn cut_files_always_say_so() {
    let t = TempTree::new();
    let lines: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    t.file("long.txt", &lines);
    let o = run(&t, "read_many_files", json!({"include": ["long.txt"], "start_line": 10}));
    assert!(joined(&o).contains("[WARNING: This file was truncated."), "{}", &joined(&o)[..300]);
    let wide: String = (0..2000).map(|_| format!("{}\n", "w".repeat(600))).collect();
    t.file("wide.txt", &wide);
    let o = run(&t, "read_many_files", json!({"include": ["wide.txt"]}));
    let text = joined(&o);
    assert!(
        text.contains(
            "[WARNING: the output limit of 1000000 characters was reached inside this file"
        ),
        "{}",
        text.len()
    );
}

/// Issue 22 (files are read in parallel, a chunk past the output budget at most): a file read
/// but left out of the answer was never seen by the model, so it is not recorded as seen. A
/// later write to it, after it changed on disk, goes ahead; a write to a file the model did get
/// is refused as stale, as for any read.
#[test]
fn files_left_out_of_the_answer_are_not_recorded_as_seen() {
    let t = TempTree::new();
    let line = "x".repeat(99) + "\n";
    for i in 0..40 {
        t.file(&format!("f{i:02}.txt"), line.repeat(1_000)); // 100 KB each
    }
    let session = crate::harness::Session::new(crate::harness::env_for(&t, &[]));
    let r = session.run("read_many_files", json!({"include": ["*.txt"]}));
    let text = joined(&r);
    let got: Vec<bool> = (0..40).map(|i| text.contains(&format!("f{i:02}.txt ---"))).collect();
    let taken = got.iter().filter(|g| **g).count();
    assert!((5..35).contains(&taken), "{taken} files in the answer");
    for i in 0..40 {
        std::fs::write(t.root().join(format!("f{i:02}.txt")), "changed behind the model's back\n")
            .unwrap();
    }
    // Every file, the ones read in the last chunk but left out included (the first left out
    // was read in full and did not fit).
    for (i, got) in got.iter().enumerate() {
        let name = format!("f{i:02}.txt");
        let w = session.run("write_file", json!({"file_path": name, "content": "new\n"}));
        if *got {
            assert!(w.error().contains("changed on disk"), "{name}: {}", w.model);
        } else {
            assert!(w.result.is_some(), "{name}: {}", w.model);
            assert_eq!(std::fs::read_to_string(t.root().join(&name)).unwrap(), "new\n");
        }
    }
}

/// Issue 22 (peak memory was twice the output: every file's text, and the response joining
/// them): the answer is built in one buffer, and the response the model receives shares it.
#[test]
fn the_answer_is_one_buffer_that_the_response_shares() {
    use toolbelt_core::result::Content;
    let t = tree();
    t.file("a.txt", "A").file("b.txt", "B");
    let o = run(&t, "read_many_files", json!({"include": ["*.txt"]}));
    let content = &o.result().llm_content;
    let Content::Shared(text) = content else { panic!("{content:?}") };
    assert_eq!(text.texts().len(), 3, "{text:?}");
    let r = toolbelt_core::response::success(
        "c",
        "read_many_files",
        content,
        toolbelt_core::ModelFamily::Legacy,
    );
    let output = r.function_response.response.output().unwrap();
    assert_eq!(output, joined(&o));
    assert_eq!(output.as_ptr(), text.as_str().as_ptr());
}

/// Issue 35, finding 7: files read_many_files passed over (a FIFO, a file over the size limit)
/// were named only in the display; the model read an answer that looked complete.
#[cfg(unix)]
#[test]
fn files_passed_over_are_named_to_the_model() {
    let t = TempTree::new();
    t.file("a.txt", "alpha\n");
    nix::unistd::mkfifo(
        &t.root().join("pipe.txt"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    let big = std::fs::File::create(t.root().join("huge.txt")).unwrap();
    big.set_len(30 << 20).unwrap();
    let o = run(&t, "read_many_files", json!({"include": ["*.txt"]}));
    let text = joined(&o);
    assert!(text.contains("alpha"), "{text}");
    assert!(text.contains("file(s) not read:"), "{text}");
    assert!(text.contains("pipe.txt") && text.contains("huge.txt"), "{text}");
}

/// Issue 35, second attack: 500 exclude globs (37 KB), 300 calls at once, took 385 MB.
#[test]
fn too_many_patterns_are_refused_with_the_limit() {
    let t = TempTree::new();
    t.file("a.txt", "a\n");
    let exclude: Vec<String> = (0..200).map(|i| format!("**/x{i}*y*z")).collect();
    let r = run(&t, "read_many_files", json!({"include": ["*.txt"], "exclude": exclude}));
    assert!(r.error().contains("at most 128 in all"), "{}", r.error());
    let r = run(&t, "read_many_files", json!({"include": ["*.txt"], "exclude": &exclude[..100]}));
    assert!(r.output().contains("a.txt"), "{}", r.output());
}

/// Issue 37: an absolute path (or pattern) inside the workspace matched nothing; upstream
/// reads it.
#[test]
fn absolute_paths_and_patterns_inside_the_workspace_are_read() {
    let t = TempTree::new();
    t.file("a.txt", "alpha\n").file("sub/b.txt", "beta\n");
    let root = t.root().canonicalize().unwrap();
    let r = run(
        &t,
        "read_many_files",
        json!({"include": [root.join("a.txt"), format!("{}/sub/*.txt", root.display())]}),
    );
    let out = r.output();
    assert!(out.contains("alpha") && out.contains("beta"), "{out}");
    let r = run(&t, "read_many_files", json!({"include": ["/etc/hostname"]}));
    assert!(r.output().contains("No files matching"), "{}", r.model);
}

/// Issue 35 (third attack): a folder of 1,000,000 empty files took read_many_files to 1.8 GB
/// and 16 s. One call considers 10,000 files at most, and the answer says the search stopped.
#[test]
fn more_than_ten_thousand_matching_files_stop_the_search_and_say_so() {
    let t = TempTree::new();
    let dir = t.root().join("many");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..10_050 {
        std::fs::write(dir.join(format!("f{i}.txt")), "").unwrap();
    }
    let r = run(&t, "read_many_files", json!({"include": ["many/*.txt"]}));
    let out = r.output();
    assert!(
        out.contains("more files matched than one call considers (10,000)"),
        "{}",
        &out[out.len().saturating_sub(600)..]
    );
}
