//! Issue 15: edit tools on what is not a plain file. `replace` and `write_file` on a FIFO blocked
//! forever past the deadline; on a 2 GB sparse file they aborted the process trying to allocate
//! 4 GB. New files were created 0600 whatever the umask.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::run;

fn edit_args(file: &str) -> [(&'static str, serde_json::Value); 2] {
    [
        (
            "replace",
            json!({"file_path": file, "instruction": "i", "old_string": "a", "new_string": "b"}),
        ),
        ("write_file", json!({"file_path": file, "content": "new"})),
    ]
}

#[test]
fn a_fifo_is_refused_at_once_not_waited_on() {
    let t = TempTree::new();
    nix::unistd::mkfifo(&t.root().join("pipe"), nix::sys::stat::Mode::from_bits_truncate(0o644))
        .unwrap();
    for (tool, args) in edit_args("pipe") {
        let start = Instant::now();
        let r = run(&t, tool, args);
        assert!(start.elapsed() < Duration::from_secs(2), "{tool} waited on the FIFO");
        assert!(r.error().contains("not a regular file"), "{tool}: {}", r.error());
    }
}

/// `/dev/zero` (read until memory ran out) is outside the workspace; a link to it inside is
/// followed by the file layer and refused as outside, at once.
#[test]
fn a_link_to_dev_zero_is_refused_at_once() {
    let t = TempTree::new();
    t.symlink("/dev/zero", "zero");
    for (tool, args) in edit_args("zero") {
        let start = Instant::now();
        let r = run(&t, tool, args);
        assert!(start.elapsed() < Duration::from_secs(2), "{tool} read /dev/zero");
        assert!(r.error().starts_with("Path not in workspace"), "{tool}: {}", r.error());
    }
    let r = run(&t, "read_file", json!({"file_path": "zero"}));
    assert!(r.error().starts_with("Path not in workspace"), "{}", r.error());
}

#[test]
fn a_2_gb_sparse_file_is_refused_before_it_is_read() {
    let t = TempTree::new();
    let f = std::fs::File::create(t.root().join("huge.bin")).unwrap();
    f.set_len(2 * 1024 * 1024 * 1024).unwrap();
    for (tool, args) in edit_args("huge.bin") {
        let start = Instant::now();
        let r = run(&t, tool, args);
        assert!(start.elapsed() < Duration::from_secs(2), "{tool} read the file");
        assert!(r.error().starts_with("File size exceeds the 20MB limit"), "{tool}: {}", r.error());
        assert_eq!(r.error_type.as_deref(), Some("file_too_large"));
    }
    assert_eq!(std::fs::metadata(t.root().join("huge.bin")).unwrap().len(), 2 << 30);
}

#[test]
fn new_files_follow_the_umask_and_existing_ones_keep_their_mode() {
    let t = TempTree::new();
    let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));
    let r = run(&t, "write_file", json!({"file_path": "sub/new.txt", "content": "x"}));
    nix::sys::stat::umask(old);
    assert!(r.model.get("output").is_some(), "{}", r.model);
    let mode = std::fs::metadata(t.root().join("sub/new.txt")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644, "a new file is 0666 less the umask");
    t.file("script.sh", "echo a\n");
    let script = t.root().join("script.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    let r = run(
        &t,
        "replace",
        json!({"file_path": "script.sh", "instruction": "i", "old_string": "a", "new_string": "b"}),
    );
    assert!(r.model.get("output").is_some(), "{}", r.model);
    assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o750);
    let leftovers: Vec<_> = std::fs::read_dir(t.root())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".toolbelt-write-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_socket_is_refused_as_not_a_regular_file() {
    let t = TempTree::new();
    let _listener = std::os::unix::net::UnixListener::bind(t.root().join("sock")).unwrap();
    for (tool, args) in edit_args("sock") {
        let r = run(&t, tool, args);
        assert!(r.error().contains("not a regular file"), "{tool}: {}", r.error());
    }
}
