//! Issue 36: with an editor's files (ACP `fs/*`), the file tools read and write through the
//! editor only after the workspace's file layer has checked the path. A hostile model naming
//! a sensitive file, a path outside, or a link inside the workspace that leads outside gets
//! the same refusal as without an editor, and the editor is never asked.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::{env_for, run_in};

/// An editor that answers every read with its own text and records what it was asked.
#[derive(Debug, Default)]
struct Recording {
    asked: Mutex<Vec<PathBuf>>,
}

impl toolbelt_core::editor::EditorFiles for Recording {
    fn read_text(&self, path: &Path) -> Result<String, String> {
        self.asked.lock().unwrap().push(path.to_path_buf());
        Ok("FROM THE EDITOR\n".into())
    }

    fn write_text(&self, path: &Path, _text: &str) -> Result<(), String> {
        self.asked.lock().unwrap().push(path.to_path_buf());
        Ok(())
    }
}

#[cfg(unix)]
#[test]
fn refused_paths_never_reach_the_editor() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("secret.txt", "outside\n");
    t.file("inside.txt", "on disk\n").file(".env", "KEY=1\n");
    std::os::unix::fs::symlink(outside.root().join("secret.txt"), t.root().join("link.txt"))
        .unwrap();
    let editor = Arc::new(Recording::default());
    let mut env = env_for(&t, &[]);
    env.editor = Some(editor.clone());

    // The control: a plain file inside is read through the editor.
    let o = run_in(&env, "read_file", json!({"file_path": "inside.txt"}));
    assert!(o.output().contains("FROM THE EDITOR"), "{}", o.output());
    editor.asked.lock().unwrap().clear();

    let outside_path = outside.root().join("secret.txt").display().to_string();
    for (tool, args) in [
        ("read_file", json!({"file_path": ".env"})),
        ("read_file", json!({"file_path": "link.txt"})),
        ("read_file", json!({"file_path": outside_path})),
        ("write_file", json!({"file_path": "link.txt", "content": "x"})),
        ("write_file", json!({"file_path": outside_path, "content": "x"})),
        ("write_file", json!({"file_path": ".env", "content": "x"})),
        (
            "replace",
            json!({"file_path": "link.txt", "instruction": "i", "old_string": "outside", "new_string": "x"}),
        ),
    ] {
        let o = run_in(&env, tool, args.clone());
        assert!(o.error_type.is_some(), "{tool} {args}: {:?}", o.result());
        assert!(!o.error().contains("FROM THE EDITOR"), "{tool} {args}: {}", o.error());
    }
    assert!(editor.asked.lock().unwrap().is_empty(), "asked: {:?}", editor.asked);
    assert_eq!(std::fs::read_to_string(outside.root().join("secret.txt")).unwrap(), "outside\n");
}
