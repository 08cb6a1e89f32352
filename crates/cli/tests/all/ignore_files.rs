//! Ignore files a hostile repository can hold: named pipes (a read blocks until something
//! writes), links to files outside the workspace, in the search path, below it and above it.
//! No search hangs on one, and none lets a file outside the workspace decide what is listed.

use serde_json::json;
use toolbelt_test_support::TempTree;

/// `toolbelt call TOOL ARGS` in `t`, stopped by the tool-call timeout after 10 s if it hangs.
fn call_within_10s(t: &TempTree, tool: &str, args: &str) -> std::process::Output {
    crate::command(t, &["call", tool, args])
        .env("TOOLBELT_TOOL_CALL_TIMEOUT_MS", "10000")
        .output()
        .unwrap()
}

/// Found by the second review of issue 22: a `.gitignore` that is a named pipe hung every
/// grep_search until its timeout (the walker opened the pipe and waited for a writer), and a
/// `.gitignore` linked to a file outside the workspace decided what every search tool listed.
/// Neither is read now: a folder whose ignore file grep_search cannot read is named as not
/// searched, and glob and read_many_files leave its files out and name the file (what it would
/// hide cannot be told).
#[cfg(unix)]
#[test]
fn hostile_ignore_files_neither_hang_a_search_nor_are_read_from_outside() {
    let t = TempTree::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("rules"), "leak_*\n").unwrap();
    t.dir(".git")
        .file("ok/b.txt", "hello\n")
        .file("pipe/a.txt", "hello\n")
        .file("link/leak_1.txt", "hello\n")
        .symlink(outside.path().join("rules"), "link/.gitignore");
    let made = std::process::Command::new("mkfifo").arg(t.root().join("pipe/.gitignore")).status();
    assert!(made.unwrap().success());
    let calls = [
        ("grep_search", json!({"pattern": "hello"})),
        ("glob", json!({"pattern": "**/*.txt"})),
        ("read_many_files", json!({"include": ["**/*.txt"]})),
    ];
    for (tool, args) in calls {
        let out = call_within_10s(&t, tool, &args.to_string());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!text.contains("ran out of time"), "{tool} hung: {text}");
        assert!(text.contains("ok/b.txt"), "{tool}: {text}");
        for folder in ["pipe", "link"] {
            let named = text.contains(&format!("- {folder}: not searched"))
                || text.contains(&format!("{folder}/.gitignore is "));
            assert!(named, "{tool}: {folder} is not named: {text}");
            assert!(!text.contains(&format!("{folder}/a.txt")), "{tool}: {text}");
            assert!(!text.contains(&format!("{folder}/leak_1.txt")), "{tool}: {text}");
        }
    }
}

/// Found by the review of the ignore-file checks: ripgrep's walker also reads the ignore files
/// of the folders above the search path, up to `/`; a named pipe `.ignore` in a folder above
/// the workspace hung grep_search for good. It fails now, saying which file.
#[cfg(unix)]
#[test]
fn a_named_pipe_ignore_file_above_the_workspace_does_not_hang_grep() {
    let base = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("mkfifo").arg(base.path().join(".ignore")).status();
    assert!(made.unwrap().success());
    let t = TempTree::new_in(base.path());
    t.file("a.txt", "hello\n");
    let out = call_within_10s(&t, "grep_search", r#"{"pattern":"hello"}"#);
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("timed out"), "{said}");
    assert!(said.contains(".ignore is not a regular file"), "{said}");
    // Found by the review of session 4: the error suggested no_ignore, which turns off every
    // ignore file, .geminiignore included: the fix is the file's.
    assert!(said.contains("remove or replace that file") && !said.contains("no_ignore"), "{said}");
    let out =
        crate::command(&t, &["call", "grep_search", r#"{"pattern":"hello","no_ignore":true}"#])
            .output()
            .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("a.txt"));
}

/// The other places an ignore file can sit, each tried the way a hostile repository would:
/// git's `info/exclude` as a named pipe, a `.ignore` as one, a `.gitignore` linked to a named
/// pipe inside the workspace, and a `.geminiignore` linked to a file outside it whose patterns
/// would hide a file. No search hangs, and the refused files decide nothing.
#[cfg(unix)]
#[test]
fn every_kind_of_hostile_ignore_file_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("rules"), "leak_*\n").unwrap();
    let mkfifo = |p: std::path::PathBuf| {
        assert!(std::process::Command::new("mkfifo").arg(p).status().unwrap().success());
    };
    type Plant<'a> = &'a dyn Fn(&TempTree);
    let cases: [(&str, Plant<'_>); 4] = [
        (".git/info/exclude", &|t| mkfifo(t.root().join(".git/info/exclude"))),
        ("sub/.ignore", &|t| mkfifo(t.root().join("sub/.ignore"))),
        ("sub/.gitignore -> pipe", &|t| {
            mkfifo(t.root().join("pipe"));
            t.symlink(t.root().join("pipe"), "sub/.gitignore");
        }),
        (".geminiignore -> outside", &|t| {
            t.symlink(outside.path().join("rules"), ".geminiignore");
        }),
    ];
    for (case, make) in cases {
        let t = TempTree::new();
        t.dir(".git/info").file("keep.txt", "hello\n").file("leak_1.txt", "hello\n");
        t.file("sub/a.txt", "hello\n");
        make(&t);
        for (tool, args) in [
            ("grep_search", json!({"pattern": "hello"})),
            ("glob", json!({"pattern": "**/*.txt"})),
            ("read_many_files", json!({"include": ["**/*.txt"]})),
        ] {
            let out = call_within_10s(&t, tool, &args.to_string());
            let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
            assert!(!said.contains("timed out"), "{case}, {tool} hung: {said}");
            // The refused file decides nothing: a file its patterns match is listed (the tool
            // does not read that kind of file) or left out with the refused file named.
            let listed = said.contains("leak_1.txt");
            let named = said.contains("not a regular file") || said.contains("leads outside");
            assert!(listed || named, "{case}, {tool}: {said}");
        }
    }
}

/// Found by the review of issue 22 (B2, B5): an ignore file the file layer will not read (a
/// link out of the workspace, a named pipe) was passed over with a line in the log, so what it
/// hides was listed and read as if it were not there: a `.geminiignore` linked to rules kept
/// outside the workspace stopped hiding `draft.txt` from glob, read_many_files,
/// list_directory, read_file and grep_search. And git's folder linked out of the workspace had
/// its `info/exclude` read from out there. Now nothing such a file may hide is shown, and the
/// answer names the file.
#[cfg(unix)]
#[test]
fn what_an_unreadable_ignore_file_may_hide_is_never_shown() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("rules"), "draft*\n").unwrap();
    std::fs::create_dir_all(outside.path().join("git/info")).unwrap();
    std::fs::write(outside.path().join("git/info/exclude"), "draft*\n").unwrap();
    let mkfifo = |p: std::path::PathBuf| {
        assert!(std::process::Command::new("mkfifo").arg(p).status().unwrap().success());
    };
    type Plant<'a> = &'a dyn Fn(&TempTree);
    // What is planted, the file it may hide, and how the answer names the planted file.
    let cases: [(&str, Plant<'_>, &str, &str); 4] = [
        (
            ".geminiignore -> outside",
            &|t| {
                t.symlink(outside.path().join("rules"), ".geminiignore");
            },
            "draft.txt",
            ".geminiignore",
        ),
        (
            ".geminiignore as a pipe",
            &|t| mkfifo(t.root().join(".geminiignore")),
            "draft.txt",
            ".geminiignore",
        ),
        (
            ".git -> outside",
            &|t| {
                t.symlink(outside.path().join("git"), ".git");
            },
            "draft.txt",
            ".git/info/exclude",
        ),
        (
            "sub/.gitignore -> outside",
            &|t| {
                t.symlink(outside.path().join("rules"), "sub/.gitignore");
            },
            "sub/draft.txt",
            ".gitignore",
        ),
    ];
    for (case, plant, hidden, named) in cases {
        let t = TempTree::new();
        t.file("ok.txt", "plain\n").file("sub/ok.txt", "plain\n").file(hidden, "classified\n");
        if !case.starts_with(".git ") {
            t.dir(".git/info");
        }
        plant(&t);
        let listing = hidden.rsplit('/').next().unwrap();
        let folder = if hidden.contains('/') { "sub" } else { "." };
        for (tool, args) in [
            ("glob", json!({"pattern": "**/*.txt"})),
            ("read_many_files", json!({"include": ["**/*.txt"]})),
            ("list_directory", json!({"dir_path": folder})),
            ("read_file", json!({"file_path": hidden})),
            ("grep_search", json!({"pattern": "class.fied"})),
        ] {
            let out = call_within_10s(&t, tool, &args.to_string());
            let shown = String::from_utf8_lossy(&out.stdout);
            // What the caller is told: the answer, or the error (not the log's warnings).
            let err = String::from_utf8_lossy(&out.stderr);
            let err: Vec<&str> = err.lines().filter(|l| !l.contains(" WARN ")).collect();
            let said = format!("{shown}{}", err.join("\n"));
            assert!(!said.contains("timed out"), "{case}, {tool} hung: {said}");
            assert!(!shown.contains("classified"), "{case}, {tool} read it: {said}");
            if tool != "read_file" {
                let shown_name = if tool == "list_directory" { listing } else { hidden };
                assert!(!shown.contains(shown_name), "{case}, {tool} listed it: {said}");
            }
            assert!(said.contains(named), "{case}, {tool} does not name {named}: {said}");
        }
    }
}

/// Found by the review of the fail-closed change (issue 22): the `ignore` crate also reads git's
/// `info/exclude` of every repository nested in the search path (through a `.git` link or a
/// `.git` file's `gitdir:`), and nothing checked it first: a named pipe there hung grep_search
/// until the timeout, and a nested `.git` linked out of the workspace let a file out there
/// decide what grep_search showed. grep_search leaves git's exclude files to the workspace's
/// ignore service now, as the other tools do.
#[cfg(unix)]
#[test]
fn a_nested_repositorys_exclude_file_neither_hangs_grep_nor_decides_from_outside() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outside.path().join("info")).unwrap();
    std::fs::write(outside.path().join("info/exclude"), "draft.txt\n").unwrap();
    let t = TempTree::new();
    t.dir(".git").file("sub/draft.txt", "needle\n").file("pipe/draft.txt", "needle\n");
    t.symlink(outside.path(), "sub/.git");
    t.dir("pipe/.git/info");
    let fifo = t.root().join("pipe/.git/info/exclude");
    assert!(std::process::Command::new("mkfifo").arg(fifo).status().unwrap().success());
    let out = call_within_10s(&t, "grep_search", &json!({"pattern": "needle"}).to_string());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!said.contains("timed out"), "grep hung: {said}");
    assert!(said.contains("sub/draft.txt"), "rules from outside applied: {said}");
    assert!(said.contains("pipe/draft.txt"), "{said}");
}

/// Found by the review of the final binary (issue 22): grep_search's check passed any regular
/// ignore file, and its walker then read the whole of it: a 300 MB `.gitignore` (sparse, so
/// nearly free to plant) took 34 s and 12 GB, and its rules still applied (`hideme.txt` hidden
/// without a word) while the ignore service refused the file as over 4 MiB.
#[test]
fn grep_never_reads_an_ignore_file_too_large_to_read_whole() {
    let t = TempTree::new();
    t.dir(".git").file("c/keep.txt", "needle\n").file("c/hideme.txt", "needle\n");
    let big = std::fs::File::create(t.root().join("c/.gitignore")).unwrap();
    std::io::Write::write_all(&mut &big, b"hideme.txt\n").unwrap();
    big.set_len(5 << 20).unwrap();
    let out = call_within_10s(&t, "grep_search", &json!({"pattern": "needle"}).to_string());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("- c: not searched: its .gitignore is larger than 4 MiB"), "{said}");
}

/// Found in session 4 of issue 22: a line that is not UTF-8 (a Latin-1 comment, say) made the
/// ignore files stop being read there, so every rule after it was dropped and what it named was
/// listed, read and searched by every tool. Git and upstream apply the rest of the file. Now
/// the rest applies (such a line itself hides at least what git's byte-wise match of it does;
/// a comment nothing); a `.ignore`, which only grep_search's walker reads and which that walker
/// would stop reading, keeps grep_search out of its folder, saying why.
#[test]
fn a_line_that_is_not_utf8_drops_no_rule_after_it() {
    let rules: &[u8] = b"# caf\xe9 (Latin-1)\ndraft*\n";
    for file in [".geminiignore", ".gitignore", "sub/.gitignore", "sub/.ignore"] {
        let t = TempTree::new();
        t.dir(".git").file("ok.txt", "plain\n").file("sub/ok.txt", "plain\n");
        let hidden = if file.starts_with("sub/") { "sub/draft.txt" } else { "draft.txt" };
        t.file(hidden, "classified\n");
        std::fs::write(t.root().join(file), rules).unwrap();
        let grep_only = file.ends_with(".ignore");
        let mut calls = vec![("grep_search", json!({"pattern": "class.fied|plain"}))];
        if !grep_only {
            calls.extend([
                ("glob", json!({"pattern": "**/*.txt"})),
                ("read_many_files", json!({"include": ["**/*.txt"]})),
                ("list_directory", json!({"dir_path": "sub"})),
                ("read_file", json!({"file_path": hidden})),
            ]);
        }
        for (tool, args) in calls {
            let out = call_within_10s(&t, tool, &args.to_string());
            let shown = String::from_utf8_lossy(&out.stdout);
            assert!(!shown.contains("classified"), "{file}, {tool} read it: {shown}");
            if tool != "read_file" && tool != "list_directory" {
                assert!(!shown.contains(hidden), "{file}, {tool} listed it: {shown}");
            }
            if tool == "list_directory" {
                assert!(!shown.contains("draft.txt"), "{file}, {tool} listed it: {shown}");
            }
            if tool == "read_file" {
                assert!(!out.status.success() || shown.contains("ignored"), "{file}: {shown}");
            } else if grep_only {
                assert!(shown.contains("sub: not searched") && shown.contains("UTF-8"), "{shown}");
            } else {
                // The rest of the file applies, and nothing else is hidden.
                let ok = if tool == "list_directory" { "ok.txt" } else { "sub/ok.txt" };
                assert!(shown.contains(ok), "{file}, {tool}: {shown}");
            }
        }
    }
}

/// Found by the review of session 4 (issue 22): a `!` rule showed a file inside a folder that
/// is itself ignored (`logs` then `!logs/k.txt`): glob listed it, read_file, read_many_files
/// and grep_search (in that folder) printed it, though git never looks inside an ignored
/// folder and upstream hides it. And read_many_files followed a link to an ignored file and
/// printed that file.
#[cfg(unix)]
#[test]
fn neither_a_negation_nor_a_link_shows_what_the_rules_hide() {
    let t = TempTree::new();
    // In git's exclude file, so that no listing shows the rules themselves.
    t.file(".git/info/exclude", "logs\n!logs/k.txt\nhf.txt\n").file("ok.txt", "plain\n");
    t.file("logs/k.txt", "classified\n").file("hf.txt", "classified\n");
    t.symlink(t.root().join("hf.txt"), "lf.txt");
    for (tool, args) in [
        ("glob", json!({"pattern": "**/*"})),
        ("read_many_files", json!({"include": ["**/*"]})),
        ("read_many_files", json!({"include": ["lf.txt", "logs/k.txt"]})),
        ("list_directory", json!({"dir_path": "logs"})),
        ("read_file", json!({"file_path": "logs/k.txt"})),
        ("grep_search", json!({"pattern": "class.fied"})),
        ("grep_search", json!({"pattern": "class.fied", "dir_path": "logs"})),
    ] {
        let out = call_within_10s(&t, tool, &args.to_string());
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(!shown.contains("classified"), "{tool} {args} read it: {shown}");
        let listed = shown.contains("logs/k.txt")
            || shown.contains("hf.txt")
            || (tool == "list_directory" && shown.contains("k.txt"));
        assert!(!listed, "{tool} {args} listed it: {shown}");
    }
}

/// Found by the review of session 4 (issue 22): `toolbelt mcp` read the workspace's
/// `.gitignore`, `.geminiignore` and git's exclude file once, at start, and each folder's
/// `.gitignore` when first needed, and never again: a rule the user added during a session (to
/// hide a file from the model) was never applied, and an ignore file replaced by a named pipe
/// kept its old rules instead of failing closed. Each batch of calls now sees the files as
/// they are.
#[cfg(unix)]
#[test]
fn a_long_running_server_sees_the_ignore_files_as_they_are_now() {
    use std::io::{BufRead, Write};
    let t = TempTree::new();
    t.dir(".git").file("h1.txt", "one\n").file("h2.txt", "two\n").file("sub/h3.txt", "three\n");
    t.file("sub/.gitignore", "nothing\n");
    let (mut child, mut stdin, mut stdout) = crate::mcp_stdio(&t, &[]);
    let mut id = 0;
    let mut call = |tool: &str, args: serde_json::Value| -> String {
        id += 1;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        writeln!(stdin, "{call}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        line
    };
    let read = |call: &mut dyn FnMut(&str, serde_json::Value) -> String, file: &str| {
        call("read_file", json!({"file_path": file}))
    };
    let listed = |call: &mut dyn FnMut(&str, serde_json::Value) -> String| {
        call("glob", json!({"pattern": "**/*.txt"}))
    };
    // Every rule loaded once, then changed.
    assert!(read(&mut call, "h1.txt").contains("one"));
    assert!(listed(&mut call).contains("sub/h3.txt"));
    std::fs::write(t.root().join(".gitignore"), "h1.txt\n").unwrap();
    std::fs::write(t.root().join(".geminiignore"), "h2.txt\n").unwrap();
    std::fs::write(t.root().join("sub/.gitignore"), "nothing\nh3.txt\n").unwrap();
    for file in ["h1.txt", "h2.txt", "sub/h3.txt"] {
        let said = read(&mut call, file);
        assert!(said.contains("ignored") && !said.contains("\"text\":\"one"), "{file}: {said}");
    }
    let said = listed(&mut call);
    assert!(!said.contains("h1.txt") && !said.contains("h2.txt"), "{said}");
    assert!(!said.contains("h3.txt"), "{said}");
    // A rule taken away applies no more; a file replaced by a pipe fails closed.
    std::fs::remove_file(t.root().join(".gitignore")).unwrap();
    assert!(read(&mut call, "h1.txt").contains("one"));
    std::fs::remove_file(t.root().join(".geminiignore")).unwrap();
    let fifo = t.root().join(".geminiignore");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let said = read(&mut call, "h2.txt");
    assert!(said.contains("not a regular file") && !said.contains("two"), "{said}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Found by the review of session 4 (issue 22): upstream's grep (ripgrep) honours `.rgignore`,
/// grep_search did not: what it names was searched. It is read as `.ignore` is (checked first:
/// a named pipe there hangs nothing).
#[cfg(unix)]
#[test]
fn grep_honours_rgignore_and_checks_it_first() {
    let t = TempTree::new();
    t.file(".rgignore", "hidden.txt\n").file("hidden.txt", "needle\n").file("a.txt", "needle\n");
    t.file("pipe/b.txt", "needle\n");
    let fifo = t.root().join("pipe/.rgignore");
    assert!(std::process::Command::new("mkfifo").arg(fifo).status().unwrap().success());
    let out = call_within_10s(&t, "grep_search", &json!({"pattern": "needle"}).to_string());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("a.txt") && !said.contains("hidden.txt"), "{said}");
    assert!(said.contains("- pipe: not searched: its .rgignore is not a regular file"), "{said}");
}
