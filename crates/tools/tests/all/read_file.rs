//! read_file: the cases of cases-public.md section B, plus bad input.

use serde_json::json;
use toolbelt_core::Content;
use toolbelt_test_support::TempTree;

use crate::harness::{env_for, run, run_in};

fn header(a: usize, b: usize, n: usize) -> String {
    format!(
        "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines {a}-{b} of {n} total lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: {}.\n\n--- FILE CONTENT (truncated) ---\n",
        b + 1
    )
}

#[test]
fn rf01_relative_path() {
    let t = TempTree::new();
    t.file("textfile.txt", "This is a test file.");
    let o = run(&t, "read_file", json!({"file_path": "textfile.txt"}));
    assert_eq!(o.model, json!({"output": "This is a test file."}));
    assert_eq!(o.display(), json!(""));
    assert_eq!(o.result().summary.as_deref(), Some("1 lines"));
}

#[test]
fn rf03_missing_file() {
    let t = TempTree::new();
    let o = run(&t, "read_file", json!({"file_path": t.abs("nonexistent.txt")}));
    assert_eq!(o.error(), format!("File not found: {}", t.abs("nonexistent.txt")));
    assert_eq!(o.error_type.as_deref(), Some("file_not_found"));
    assert_eq!(
        o.result().llm_content,
        Content::Text(
            "Could not read file because no file was found at the specified path.".into()
        )
    );
    assert_eq!(o.display(), json!("File not found."));
}

#[test]
fn rf05_project_temp_dir_is_readable() {
    let t = TempTree::new();
    let env = env_for(&t, &[]);
    let saved = env.workspace.temp_dir().join("tool-outputs/temp-output.txt");
    std::fs::create_dir_all(saved.parent().unwrap()).unwrap();
    std::fs::write(&saved, "This is temporary output content").unwrap();
    let o = run_in(&env, "read_file", json!({"file_path": saved.display().to_string()}));
    assert_eq!(o.model, json!({"output": "This is temporary output content"}));
}

#[test]
fn rf07_rf09_range_validation() {
    let t = TempTree::new();
    let o = run(&t, "read_file", json!({"file_path": "test.txt", "start_line": 0}));
    assert_eq!(o.error(), "params/start_line must be >= 1");
    assert_eq!(o.error_type.as_deref(), Some("invalid_tool_params"));
    let o = run(
        &t,
        "read_file",
        json!({"file_path": t.abs("test.txt"), "start_line": 10, "end_line": 5}),
    );
    assert_eq!(o.error(), "start_line cannot be greater than end_line");
}

#[test]
fn rf11_directory() {
    let t = TempTree::new();
    t.dir("directory");
    let o = run(&t, "read_file", json!({"file_path": t.abs("directory")}));
    assert_eq!(o.error(), format!("Path is a directory, not a file: {}", t.abs("directory")));
    assert_eq!(o.error_type.as_deref(), Some("target_is_directory"));
    assert_eq!(o.display(), json!("Path is a directory."));
}

#[test]
fn rf13_long_lines_are_cut() {
    let t = TempTree::new();
    t.file("longlines.txt", format!("Short line\n{}\nAnother short line", "a".repeat(2500)));
    let o = run(&t, "read_file", json!({"file_path": t.abs("longlines.txt")}));
    let expected = format!(
        "{}Short line\n{}... [truncated]\nAnother short line",
        header(1, 3, 3),
        "a".repeat(2000)
    );
    assert_eq!(o.output(), expected);
    assert_eq!(
        o.display(),
        json!("Read all 3 lines from longlines.txt (some lines were shortened)")
    );
}

#[test]
fn rf15_pdf_is_inline_data() {
    let t = TempTree::new();
    t.file("document.pdf", "%PDF-1.4");
    let o = run(&t, "read_file", json!({"file_path": "document.pdf"}));
    assert_eq!(
        serde_json::to_value(&o.result().llm_content).unwrap(),
        json!({"inlineData": {"data": "JVBERi0xLjQ=", "mimeType": "application/pdf"}})
    );
    assert_eq!(o.display(), json!("Read pdf file: document.pdf"));
    assert_eq!(o.model, json!({"output": "Binary content provided (1 item(s))."}));
}

#[test]
fn rf17_binary_by_content() {
    let t = TempTree::new();
    t.file("data.xyz", [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    let o = run(&t, "read_file", json!({"file_path": "data.xyz"}));
    assert_eq!(o.model, json!({"output": "Cannot display content of binary file: data.xyz"}));
    assert_eq!(o.display(), json!("Skipped binary file: data.xyz"));
}

#[test]
fn rf19_large_svg_is_skipped() {
    let t = TempTree::new();
    t.file("large.svg", format!("<svg>{}</svg>", "x".repeat(1024 * 1024 + 1)));
    let o = run(&t, "read_file", json!({"file_path": "large.svg"}));
    assert_eq!(
        o.model,
        json!({"output": "Cannot display content of SVG file larger than 1MB: large.svg"})
    );
    assert_eq!(o.display(), json!("Skipped large SVG file (>1MB): large.svg"));
    t.file("small.svg", "<svg/>");
    let o = run(&t, "read_file", json!({"file_path": "small.svg"}));
    assert_eq!(o.model, json!({"output": "<svg/>"}));
    assert_eq!(o.display(), json!("Read SVG as text: small.svg"));
}

#[test]
fn rf21_line_range() {
    let t = TempTree::new();
    t.file("paginated.txt", (1..=20).map(|i| format!("Line {i}")).collect::<Vec<_>>().join("\n"));
    let o = run(
        &t,
        "read_file",
        json!({"file_path": t.abs("paginated.txt"), "start_line": 6, "end_line": 8}),
    );
    assert_eq!(o.output(), format!("{}Line 6\nLine 7\nLine 8", header(6, 8, 20)));
    assert_eq!(o.display(), json!("Read lines 6-8 of 20 from paginated.txt"));
}

#[test]
fn rf23_end_beyond_eof_is_not_truncation() {
    let t = TempTree::new();
    t.file("test.txt", "Line 1\nLine 2");
    let o = run(&t, "read_file", json!({"file_path": "test.txt", "start_line": 1, "end_line": 10}));
    assert_eq!(o.model, json!({"output": "Line 1\nLine 2"}));
    assert_eq!(o.display(), json!(""));
}

#[test]
fn rf25_line_and_count_truncation() {
    let t = TempTree::new();
    let lines: Vec<String> =
        (1..=20).map(|i| if i == 5 { "c".repeat(2500) } else { format!("line {i}") }).collect();
    t.file("test.txt", lines.join("\n"));
    let o = run(&t, "read_file", json!({"file_path": "test.txt", "start_line": 1, "end_line": 10}));
    assert_eq!(
        o.display(),
        json!("Read lines 1-10 of 20 from test.txt (some lines were shortened)")
    );
}

#[test]
fn rf27_start_past_eof() {
    let t = TempTree::new();
    t.file("f.txt", "a\nb\nc");
    let o = run(&t, "read_file", json!({"file_path": "f.txt", "start_line": 10}));
    assert_eq!(o.output(), header(4, 3, 3));
    assert_eq!(o.display(), json!("Read lines 4-3 of 3 from f.txt"));
}

#[test]
fn rf29_boms_are_stripped_and_utf16_decoded() {
    let t = TempTree::new();
    t.file("bom.txt", b"\xef\xbb\xbfHello");
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "bom.txt"})).model,
        json!({"output": "Hello"})
    );
    t.file("u16.txt", b"\xff\xfeH\x00i\x00\r\x00\n\x00");
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "u16.txt"})).model,
        json!({"output": "Hi\n"})
    );
}

#[test]
fn crlf_becomes_lf_and_trailing_newline_is_an_empty_last_line() {
    let t = TempTree::new();
    t.file("c.txt", "a\r\nb\r\n");
    let o = run(&t, "read_file", json!({"file_path": "c.txt"}));
    assert_eq!(o.model, json!({"output": "a\nb\n"}));
    assert_eq!(o.result().summary.as_deref(), Some("3 lines"));
}

#[test]
fn default_cap_is_2000_lines_and_says_where_to_continue() {
    let t = TempTree::new();
    t.file("m.txt", (0..2500).map(|i| i.to_string()).collect::<Vec<_>>().join("\n"));
    let o = run(&t, "read_file", json!({"file_path": "m.txt"}));
    assert!(o.output().starts_with(&header(1, 2000, 2500)));
    assert!(o.output().ends_with("\n1999"));
    let o = run(&t, "read_file", json!({"file_path": "m.txt", "start_line": 2400}));
    assert!(o.output().starts_with(&header(2400, 2500, 2500)));
}

#[test]
fn rf31_rf33_geminiignore() {
    let t = TempTree::new();
    t.file(".geminiignore", "foo.*\nignored/").file("foo.bar", "content").file("allowed.txt", "ok");
    let o = run(&t, "read_file", json!({"file_path": "foo.bar"}));
    assert_eq!(
        o.error(),
        format!("File path '{}' is ignored by configured ignore patterns.", t.abs("foo.bar"))
    );
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "allowed.txt"})).model,
        json!({"output": "ok"})
    );
}

#[test]
fn rf35_at_prefixed_paths() {
    let t = TempTree::new();
    t.file("policies/new-policies.txt", "toolName = \"run_shell_command\"");
    for p in ["@policies/new-policies.txt", "@/policies/new-policies.txt"] {
        let o = run(&t, "read_file", json!({ "file_path": p }));
        assert!(o.output().contains("toolName = \"run_shell_command\""), "{p}");
    }
}

#[test]
fn rf37_gitignore_only_inside_git_repos() {
    let t = TempTree::new();
    t.file(".gitignore", "private.txt").file("private.txt", "s");
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "private.txt"})).model,
        json!({"output": "s"})
    );
    t.file(".git", "");
    let o = run(&t, "read_file", json!({"file_path": "private.txt"}));
    assert_eq!(
        o.error(),
        format!("File path '{}' is ignored by configured ignore patterns.", t.abs("private.txt"))
    );
}

#[test]
fn rf39_typescript_is_text() {
    let t = TempTree::new();
    t.file("a.ts", "const x = 1;");
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "a.ts"})).model,
        json!({"output": "const x = 1;"})
    );
}

#[test]
fn rf41_unsupported_binary_audio() {
    let t = TempTree::new();
    t.file("legacy.adp", [0u8, 1, 2, 3]);
    let o = run(&t, "read_file", json!({"file_path": "legacy.adp"}));
    assert_eq!(
        o.error(),
        format!(
            "Unsupported audio file format for {}. Supported audio formats are MP3, WAV, AIFF, AAC, OGG, and FLAC.",
            t.abs("legacy.adp")
        )
    );
    assert_eq!(o.error_type.as_deref(), Some("read_content_failure"));
    assert_eq!(o.display(), json!("Unsupported audio file format: legacy.adp"));
}

#[test]
fn supported_audio_goes_to_the_agent_loop_not_the_text() {
    let t = TempTree::new();
    t.file("s.mp3", [0u8, 1, 2, 3]);
    let o = run(&t, "read_file", json!({"file_path": "s.mp3"}));
    assert_eq!(
        o.model["output"],
        "Binary content (audio/mpeg) read successfully. Content will be injected for analysis in the next sequence."
    );
    assert_eq!(o.display(), json!("Read audio file: s.mp3"));
}

#[test]
fn rf43_percent_escapes_decode_only_when_the_literal_name_is_missing() {
    let t = TempTree::new();
    t.file("a b.txt", "spaced");
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "a%20b.txt"})).model,
        json!({"output": "spaced"})
    );
    t.file("lit%20eral.txt", "literal");
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "lit%20eral.txt"})).model,
        json!({"output": "literal"})
    );
}

#[test]
fn files_over_20_mib_are_refused_before_reading() {
    let t = TempTree::new();
    let f = std::fs::File::create(t.root().join("huge.log")).unwrap();
    f.set_len(20 * 1024 * 1024 + 1).unwrap();
    let o = run(&t, "read_file", json!({"file_path": "huge.log"}));
    assert_eq!(
        o.error(),
        format!("File size exceeds the 20MB limit: {} (20.00MB)", t.abs("huge.log"))
    );
    assert_eq!(o.error_type.as_deref(), Some("file_too_large"));
}

#[test]
/// A byte that is not UTF-8 in ASCII text is not fatal; with no UTF-8 letters around it the
/// file reads as Latin-1 (upstream: U+FFFD), as `replace` matches it.
fn invalid_utf8_is_read_as_latin1_not_fatal() {
    let t = TempTree::new();
    let text = format!("{} \u{ff} fine", "ok ".repeat(20));
    t.file("bad.txt", [format!("{} ", "ok ".repeat(20)).as_bytes(), b"\xff fine"].concat());
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "bad.txt"})).model,
        json!({ "output": text })
    );
}

#[test]
fn bad_arguments_get_clear_errors() {
    let t = TempTree::new();
    assert_eq!(
        run(&t, "read_file", json!({})).error(),
        "params must have required property 'file_path'"
    );
    assert_eq!(
        run(&t, "read_file", json!({"file_path": 5})).error(),
        "params/file_path must be string"
    );
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "  "})).error(),
        "The 'file_path' parameter must be non-empty."
    );
    assert_eq!(run(&t, "read_file", json!("x")).error(), "Value of params must be an object");
    assert_eq!(
        run(&t, "read_file", json!({"file_path": "a", "start_line": "1"})).error(),
        "params/start_line must be integer"
    );
}

#[test]
fn paths_outside_the_workspace_are_refused_including_through_symlinks() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("secret.txt", "s");
    t.symlink(outside.root(), "link");
    for p in ["/etc/hostname", "../../../../etc/passwd", "link/secret.txt"] {
        let o = run(&t, "read_file", json!({ "file_path": p }));
        assert!(
            o.error().starts_with("Path not in workspace: Attempted path"),
            "{p}: {}",
            o.error()
        );
    }
}

#[test]
fn secondary_roots_are_readable() {
    let t = TempTree::new();
    let second = TempTree::new();
    second.file("lib.txt", "from second");
    let env = env_for(&t, &[second.root()]);
    let o = run_in(&env, "read_file", json!({"file_path": second.abs("lib.txt")}));
    assert_eq!(o.model, json!({"output": "from second"}));
}

#[test]
fn sensitive_files_are_refused_with_the_rule_and_the_way_out() {
    let t = TempTree::new();
    t.file(".env", "KEY=1").file("certs/server.pem", "k").file(".git/config", "c");
    let o = run(&t, "read_file", json!({"file_path": ".env"}));
    assert!(o.error().contains("sensitive-path rule \".env\""), "{}", o.error());
    let o = run(&t, "read_file", json!({"file_path": "certs/server.pem"}));
    assert!(
        o.error().contains("\"*.pem\"") && o.error().contains("--allow-sensitive"),
        "{}",
        o.error()
    );
    let mut config = (*env_for(&t, &[]).config).clone();
    config.allow_sensitive_paths.push("*.pem".into());
    let ws = toolbelt_core::Workspace::new(&[t.root().to_path_buf()], &config).unwrap();
    let env = toolbelt_core::ToolEnv::new(ws, config);
    assert_eq!(
        run_in(&env, "read_file", json!({"file_path": "certs/server.pem"})).model,
        json!({"output": "k"})
    );
}

#[test]
fn older_parameter_names_still_work() {
    let t = TempTree::new();
    t.file("f.txt", "1\n2\n3\n4\n5");
    let o = run(&t, "read_file", json!({"absolute_path": t.abs("f.txt")}));
    assert_eq!(o.model, json!({"output": "1\n2\n3\n4\n5"}));
    let o = run(&t, "read_file", json!({"path": "f.txt", "offset": 1, "limit": 2}));
    assert_eq!(o.output(), format!("{}2\n3", header(2, 3, 5)));
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_instead_of_hanging() {
    let t = TempTree::new();
    let fifo = t.root().join("pipe");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let o = run(&t, "read_file", json!({"file_path": "pipe"}));
    assert_eq!(o.error(), format!("Path is not a regular file: {}", t.abs("pipe")));
    assert_eq!(o.error_type.as_deref(), Some("read_content_failure"));
}

/// Sizes around the first bytes looked at for binary content (515) and around the size read
/// without the blocking pool (256 KiB) are read whole.
#[test]
fn every_size_is_read_whole() {
    let t = TempTree::new();
    let text: String = "abcdefghi\n".repeat(50_000);
    for n in [1, 9, 10, 514, 515, 516, 4096, 19_990] {
        t.file("f.txt", &text[..n]);
        let o = run(&t, "read_file", json!({"file_path": "f.txt"}));
        assert_eq!(o.model, json!({ "output": &text[..n] }), "{n} bytes");
    }
    for n in [256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 400_005] {
        t.file("f.txt", &text[..n]);
        let lines = n.div_ceil(10);
        let o = run(&t, "read_file", json!({"file_path": "f.txt", "start_line": lines}));
        let last = &text[(lines - 1) * 10..n];
        let out = o.model["output"].as_str().unwrap();
        assert!(out.ends_with(last), "{n} bytes: {out:?}");
        assert!(out.contains(&format!("of {lines} total lines")), "{n} bytes: {out:?}");
    }
}

/// Issue 19: a Latin-1 text file was read with U+FFFD for every accented letter (as Gemini CLI
/// 0.61 reads it), while `replace` matches such a file as Latin-1: the model could neither see
/// the text nor write an `old_string` that matches it. Now both read it the same way.
#[test]
fn latin1_text_reads_as_its_letters_and_an_edit_of_what_was_read_round_trips() {
    let t = TempTree::new();
    let latin1 =
        b"Le caf\xe9 est tr\xe8s bon.\nUne deuxi\xe8me ligne avec des accents: \xe0 \xe7 \xea.\n";
    t.file("fr.txt", latin1);
    let o = run(&t, "read_file", json!({"file_path": "fr.txt"}));
    let text = o.model["output"].as_str().unwrap().to_string();
    assert_eq!(text, "Le café est très bon.\nUne deuxième ligne avec des accents: à ç ê.\n");
    let many = run(&t, "read_many_files", json!({"include": ["fr.txt"]}));
    assert!(crate::harness::joined(&many).contains("Le café est très bon."), "{}", many.model);
    // What was read is what replace matches; the file stays Latin-1, byte for byte elsewhere.
    let o = run(
        &t,
        "replace",
        json!({"file_path": "fr.txt", "old_string": "très bon", "new_string": "très chaud", "instruction": "x"}),
    );
    assert!(o.result().error.is_none(), "{}", o.model);
    let bytes = std::fs::read(t.root().join("fr.txt")).unwrap();
    assert!(bytes.starts_with(b"Le caf\xe9 est tr\xe8s chaud.\nUne deuxi\xe8me"), "{bytes:?}");
}

/// A UTF-8 file with one stray byte keeps its UTF-8 letters (only the stray byte is replaced).
#[test]
fn utf8_with_a_stray_byte_is_still_utf8() {
    let t = TempTree::new();
    let mut bytes = "Grüße, ça va ? Ünïcödé ".repeat(8).into_bytes();
    bytes.extend_from_slice(b"\xff end\n");
    t.file("mixed.txt", &bytes);
    let o = run(&t, "read_file", json!({"file_path": "mixed.txt"}));
    let text = o.model["output"].as_str().unwrap();
    assert!(text.starts_with("Grüße, ça va ?") && text.ends_with("\u{fffd} end\n"), "{text}");
    // An edit would lose the stray byte: refused, the file left alone (user-needs 9).
    let o = run(
        &t,
        "replace",
        json!({"file_path": "mixed.txt", "old_string": "end", "new_string": "fin", "instruction": "x"}),
    );
    assert!(o.error().contains("1 byte(s) that are not UTF-8"), "{}", o.model);
    assert_eq!(std::fs::read(t.root().join("mixed.txt")).unwrap(), bytes);
}

/// Issue 37: a path with a component longer than 255 bytes got the system's "File name too
/// long (os error 36)" behind "Failed to resolve path"; upstream's words now.
#[test]
fn a_component_too_long_is_named_as_upstream_does() {
    let t = TempTree::new();
    let r = run(&t, "read_file", json!({"file_path": format!("{}/x.txt", "a".repeat(300))}));
    assert_eq!(
        r.error(),
        "Invalid path: Path component \"aaaaaaaaaaaaaaaaaaaa...\" is too long (maximum 255 characters)."
    );
    assert_eq!(r.error_type.as_deref(), Some("invalid_tool_params"));
}

/// Issue 35 (seventh attack): reads of 20 MB files beside other heavy calls over HTTP took
/// the process past 256 MiB, each read taking one costly turn. A read of a file over 8 MiB
/// weighs two; over 1 MiB one; a small file none.
#[test]
fn reads_of_large_files_weigh_their_costly_turns_by_size() {
    use toolbelt_core::Registry;
    let t = TempTree::new();
    t.file("small.txt", "x\n");
    t.file("mid.txt", vec![b'x'; 2 << 20]);
    t.file("big.txt", vec![b'x'; 9 << 20]);
    let env = crate::harness::env_for(&t, &[]);
    let registry = Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
    let turns = |f: &str| {
        let call = registry.build_call("read_file", json!({"file_path": f}), &env).ok().unwrap();
        call.invocation.costly_turns()
    };
    assert_eq!((turns("small.txt"), turns("mid.txt"), turns("big.txt")), (0, 1, 2));
}
