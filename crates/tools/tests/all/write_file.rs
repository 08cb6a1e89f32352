//! write_file: the cases of cases-public.md section H, plus line endings, BOMs and atomicity.

use serde_json::json;
use toolbelt_test_support::TempTree;

use crate::harness::run;

fn read(t: &TempTree, rel: &str) -> Vec<u8> {
    std::fs::read(t.root().join(rel)).unwrap()
}

#[test]
fn wf01_new_file_with_relative_path() {
    let t = TempTree::new();
    let o = run(
        &t,
        "write_file",
        json!({"file_path": "execute_relative_new_file.txt", "content": "Content for relative path file."}),
    );
    assert_eq!(
        o.output(),
        format!(
            "Successfully created and wrote to new file: {}. Here is the updated code:\nContent for relative path file.",
            t.abs("execute_relative_new_file.txt")
        )
    );
    assert_eq!(o.result().summary.as_deref(), Some("1 added, 0 removed"));
    assert_eq!(read(&t, "execute_relative_new_file.txt"), b"Content for relative path file.");
    assert_eq!(o.display()["isNewFile"], true);
    assert!(o.display()["fileDiff"].as_str().unwrap().contains(
        "@@ -0,0 +1,1 @@\n+Content for relative path file.\n\\ No newline at end of file\n"
    ));
}

#[test]
fn wf03_wf05_wf07_wf23_refusals_write_nothing() {
    let t = TempTree::new();
    assert!(
        run(&t, "write_file", json!({"file_path": "/etc/passwd", "content": "x"}))
            .error()
            .starts_with("Path not in workspace")
    );
    assert_eq!(
        run(&t, "write_file", json!({"file_path": "x.txt", "content": null})).error(),
        "params/content must be string"
    );
    let placeholder = "`content` contains an omission placeholder (for example 'rest of methods ...'). Provide complete file content.";
    assert_eq!(
        run(&t, "write_file", json!({"file_path": "p.txt", "content": "(rest of methods ...)"}))
            .error(),
        placeholder
    );
    assert_eq!(
        run(
            &t,
            "write_file",
            json!({"file_path": "p.txt", "content": "class A {\n  // rest of methods ...\n}"})
        )
        .error(),
        placeholder
    );
    assert!(
        run(&t, "write_file", json!({"file_path": ".git/config", "content": "x"}))
            .error()
            .contains("sensitive-path rule \".git\"")
    );
    assert_eq!(
        run(&t, "write_file", json!({"file_path": "", "content": "x"})).error(),
        "Missing or empty \"file_path\""
    );
    t.dir("d");
    assert_eq!(
        run(&t, "write_file", json!({"file_path": "d", "content": "x"})).error(),
        format!("Path is a directory, not a file: {}", t.abs("d"))
    );
    assert!(!t.root().join("p.txt").exists() && !t.root().join("x.txt").exists());
}

#[test]
fn wf09_parent_directories_are_created() {
    let t = TempTree::new();
    run(
        &t,
        "write_file",
        json!({"file_path": "new_dir_for_write/file_in_new_dir.txt", "content": "hi"}),
    );
    assert_eq!(read(&t, "new_dir_for_write/file_in_new_dir.txt"), b"hi");
}

#[test]
fn wf11_snippet_shows_only_the_change_with_context() {
    let t = TempTree::new();
    let old: Vec<String> = (1..=100).map(|i| format!("Line {i}")).collect();
    t.file("large_update.txt", old.join("\n"));
    let mut new = old.clone();
    new[50] = "Line 51 Modified".into();
    let o =
        run(&t, "write_file", json!({"file_path": "large_update.txt", "content": new.join("\n")}));
    assert!(
        o.output()
            .starts_with(&format!("Successfully overwrote file: {}.", t.abs("large_update.txt")))
    );
    assert!(o.output().ends_with("Here is the updated code:\n...\nLine 46\nLine 47\nLine 48\nLine 49\nLine 50\nLine 51 Modified\nLine 52\nLine 53\nLine 54\nLine 55\nLine 56\n..."));
}

#[test]
fn wf13_new_files_are_written_as_given() {
    let t = TempTree::new();
    run(&t, "write_file", json!({"file_path": "n.txt", "content": "line1\nline2\n"}));
    assert_eq!(read(&t, "n.txt"), b"line1\nline2\n");
    run(&t, "write_file", json!({"file_path": "w.txt", "content": "a\r\nb"}));
    assert_eq!(read(&t, "w.txt"), b"a\r\nb");
}

#[test]
fn crlf_files_stay_crlf_and_the_model_sees_its_own_text() {
    let t = TempTree::new();
    t.file("c.txt", "one\r\ntwo\r\n");
    let o = run(&t, "write_file", json!({"file_path": "c.txt", "content": "one\nthree\n"}));
    assert_eq!(read(&t, "c.txt"), b"one\r\nthree\r\n");
    assert!(o.output().ends_with("Here is the updated code:\none\nthree\n"), "{}", o.output());
}

#[test]
fn wf21_bom_is_kept_unlike_upstream() {
    let t = TempTree::new();
    t.file("b.txt", b"\xef\xbb\xbfold");
    run(&t, "write_file", json!({"file_path": "b.txt", "content": "new"}));
    assert_eq!(read(&t, "b.txt"), b"\xef\xbb\xbfnew");
}

#[test]
fn wf19_escape_sequences_are_never_rewritten() {
    let t = TempTree::new();
    run(&t, "write_file", json!({"file_path": "e.txt", "content": "a\\nb C:\\\\Users\\\\name"}));
    assert_eq!(read(&t, "e.txt"), b"a\\nb C:\\\\Users\\\\name");
}

#[test]
fn wf17_at_prefix_updates_the_existing_file() {
    let t = TempTree::new();
    t.file("policies/new-policies.txt", "old");
    run(
        &t,
        "write_file",
        json!({"file_path": "@policies/new-policies.txt", "content": "updated_content = true"}),
    );
    assert_eq!(read(&t, "policies/new-policies.txt"), b"updated_content = true");
    assert!(!t.root().join("@policies").exists());
}

#[cfg(unix)]
#[test]
fn permissions_survive_and_no_temporary_files_remain() {
    use std::os::unix::fs::PermissionsExt;
    let t = TempTree::new();
    t.file("run.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(t.root().join("run.sh"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    run(&t, "write_file", json!({"file_path": "run.sh", "content": "#!/bin/sh\necho new\n"}));
    assert_eq!(
        std::fs::metadata(t.root().join("run.sh")).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let names: Vec<String> = std::fs::read_dir(t.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["run.sh"]);
}

#[cfg(unix)]
#[test]
fn symlinks_pointing_outside_cannot_be_written_through() {
    let t = TempTree::new();
    let outside = TempTree::new();
    outside.file("target.txt", "keep");
    t.symlink(outside.root().join("target.txt"), "link.txt");
    assert!(
        run(&t, "write_file", json!({"file_path": "link.txt", "content": "x"}))
            .error()
            .starts_with("Path not in workspace")
    );
    assert_eq!(std::fs::read(outside.root().join("target.txt")).unwrap(), b"keep");
}

/// A person edits the proposal in their editor: the edited content is written and the model
/// is told.
#[test]
fn modify_with_editor_writes_what_the_person_saved() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio_util::sync::CancellationToken;
    use toolbelt_core::approver::{Approver, ConfirmationRequest, Outcome};
    use toolbelt_core::policy::{PolicyEngine, default_rules};
    use toolbelt_core::{CallRequest, Registry, Scheduler, SchedulerOptions};

    struct Scripted(AtomicUsize);
    #[async_trait::async_trait]
    impl Approver for Scripted {
        async fn confirm(&self, req: &ConfirmationRequest, _: &CancellationToken) -> Outcome {
            match self.0.fetch_add(1, Ordering::SeqCst) {
                0 => {
                    assert!(req.details.title().starts_with("Confirm Write: "));
                    Outcome::ModifyWithEditor
                }
                _ => {
                    assert_eq!(
                        req.args["content"], "edited by a person\n",
                        "asked again with the edit"
                    );
                    Outcome::ProceedOnce
                }
            }
        }
        async fn edit(
            &self,
            _: &ConfirmationRequest,
            proposed: &str,
            _: &CancellationToken,
        ) -> Option<String> {
            assert_eq!(proposed, "model proposal\n");
            Some("edited by a person\n".into())
        }
    }

    let t = TempTree::new();
    t.file("notes.txt", "old\n");
    let env = crate::harness::env_for(&t, &[]);
    let registry =
        Arc::new(Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap());
    let policy = Arc::new(PolicyEngine::new(default_rules().rules, true));
    let scheduler = Scheduler::new(
        registry,
        policy,
        Arc::new(Scripted(AtomicUsize::new(0))),
        env,
        SchedulerOptions::default(),
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let args = json!({"file_path": "notes.txt", "content": "model proposal\n"});
    let done = rt.block_on(
        scheduler
            .schedule(vec![CallRequest::new("c1", "write_file", args)], CancellationToken::new()),
    );
    let out = done[0].response.response_value()["output"].as_str().unwrap().to_string();
    assert_eq!(read(&t, "notes.txt"), b"edited by a person\n");
    assert!(out.contains("User modified the `content` to be: edited by a person"), "{out}");
}

/// Issue 35, finding 2: a write the scheduler gave up (its gate closed at the commit point)
/// changes nothing and leaves no temporary file, for write_file and replace alike.
#[test]
fn a_given_up_edit_changes_nothing() {
    let t = TempTree::new();
    t.file("f.txt", "old\n");
    let env = t.env(&[]);
    let registry =
        toolbelt_core::Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for (tool, args) in [
        ("write_file", serde_json::json!({"file_path": "f.txt", "content": "new\n"})),
        (
            "replace",
            serde_json::json!({"file_path": "f.txt", "old_string": "old", "new_string": "new", "instruction": "x"}),
        ),
    ] {
        let built = registry.build_call(tool, args, &env).unwrap();
        let ctx =
            toolbelt_core::tool::ExecContext::new("c", tokio_util::sync::CancellationToken::new());
        assert!(!ctx.commit.revoke());
        let r = rt.block_on(built.invocation.execute(ctx));
        assert!(r.error.is_some(), "{tool}: {:?}", r.llm_content);
        assert_eq!(std::fs::read_to_string(t.root().join("f.txt")).unwrap(), "old\n", "{tool}");
        let names: Vec<String> = std::fs::read_dir(t.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["f.txt"], "{tool} left a temporary file");
    }
}
