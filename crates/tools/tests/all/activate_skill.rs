//! activate_skill through the scheduler, as a session runs it: the skill's instructions and
//! folder tree (upstream's texts, case AS-01), and its folder joining the workspace for reading
//! only, however a write tries to reach it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use toolbelt_core::tool::ConfirmationDetails;
use toolbelt_tools::Services;
use toolbelt_tools::session::skills::{self, Skill};

use crate::shell::{Session, error, output, session_of};

/// A skill folder `<base>/<name>` with a SKILL.md, a reference file and a script.
fn skill_folder(base: &Path, name: &str) -> Skill {
    let dir = base.join(name);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Fills PDF forms.\n---\n\nRead reference.md first.\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("reference.md"), "FIELD NAMES\n").unwrap();
    std::fs::write(dir.join("scripts/fill.py"), "print(1)\n").unwrap();
    skills::load_file(&dir.join("SKILL.md"), &mut Vec::new()).unwrap()
}

fn with_skills(skills: Vec<Skill>) -> Session {
    session_of(|_| {}, None, Services { skills: Arc::new(skills), ..Services::default() })
}

fn tree_of(dir: &Path) -> String {
    format!(
        "Showing up to 200 items (files + folders).\n\n{}/\n├───reference.md\n├───SKILL.md\n└───scripts/\n    └───fill.py",
        dir.display()
    )
}

#[test]
fn activation_returns_the_instructions_and_opens_the_folder_for_reading() {
    let outside = tempfile::tempdir().unwrap();
    let skill = skill_folder(outside.path(), "pdf");
    let dir = skill.dir().to_path_buf();
    let s = with_skills(vec![skill]);
    let reference = json!({"file_path": dir.join("reference.md")});
    assert!(error(&s.call("read_file", reference.clone())).starts_with("Path not in workspace"));

    let c = s.call("activate_skill", json!({"name": "pdf"}));
    assert_eq!(
        output(&c),
        format!(
            "<activated_skill name=\"pdf\">\n  <instructions>\n    Read reference.md first.\n  </instructions>\n\n  <available_resources>\n    {}\n  </available_resources>\n</activated_skill>",
            tree_of(&dir)
        )
    );
    assert_eq!(
        crate::shell::display(&c),
        json!(format!(
            "Skill **pdf** activated. Resources loaded from `{}`:\n\n{}",
            dir.display(),
            tree_of(&dir)
        ))
    );
    assert_eq!(output(&s.call("read_file", reference)), "FIELD NAMES\n");
    let found = output(&s.call("grep_search", json!({"pattern": "FIELD", "dir_path": dir})));
    assert!(found.contains("reference.md"), "{found}");
}

/// An activated skill's folder is for reading: the model must not rewrite the instructions a
/// later session follows. Tried directly, by editing, through a link from the project, and
/// with `..` from the project.
#[test]
fn an_activated_skill_folder_cannot_be_written_by_any_path() {
    let outside = tempfile::tempdir().unwrap();
    let skill = skill_folder(outside.path(), "pdf");
    let dir = skill.dir().to_path_buf();
    let s = with_skills(vec![skill]);
    s.tree.symlink(&dir, "link");
    output(&s.call("activate_skill", json!({"name": "pdf"})));

    let attempts: Vec<(&str, serde_json::Value)> = vec![
        ("write_file", json!({"file_path": dir.join("SKILL.md"), "content": "EVIL"})),
        ("write_file", json!({"file_path": dir.join("new.md"), "content": "EVIL"})),
        ("write_file", json!({"file_path": dir.join("scripts/deeper/x.py"), "content": "EVIL"})),
        (
            "replace",
            json!({"file_path": dir.join("reference.md"), "old_string": "FIELD", "new_string": "EVIL", "instruction": "x"}),
        ),
        ("write_file", json!({"file_path": "link/SKILL.md", "content": "EVIL"})),
        ("write_file", json!({"file_path": "link/new.md", "content": "EVIL"})),
        (
            "write_file",
            json!({"file_path": format!("../{}/SKILL.md", rel_up(s.tree.root(), &dir)), "content": "EVIL"}),
        ),
    ];
    for (tool, args) in attempts {
        let e = error(&s.call(tool, args.clone()));
        assert!(e.contains("for reading only"), "{tool} {args}: {e}");
    }
    let skill_md = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    assert!(skill_md.starts_with("---\nname: pdf"), "{skill_md}");
    assert!(!dir.join("new.md").exists() && !dir.join("scripts/deeper").exists());
    assert_eq!(std::fs::read_to_string(dir.join("reference.md")).unwrap(), "FIELD NAMES\n");
    // The project itself stays writable.
    output(&s.call("write_file", json!({"file_path": "ok.txt", "content": "fine"})));
}

/// `dir` spelled from the parent of `root` (`..` then down).
fn rel_up(root: &Path, dir: &Path) -> String {
    let parent = root.parent().unwrap();
    let mut up = PathBuf::new();
    let mut base = parent.to_path_buf();
    while !dir.starts_with(&base) {
        up.push("..");
        base = base.parent().unwrap().to_path_buf();
    }
    up.join(dir.strip_prefix(&base).unwrap()).display().to_string()
}

/// A skill whose folder lies under a sensitive folder (`~/.ssh`) must not open it.
#[test]
fn a_skill_folder_under_a_sensitive_folder_is_not_opened() {
    let outside = tempfile::tempdir().unwrap();
    let skill = skill_folder(&outside.path().join(".ssh"), "keys");
    std::fs::write(outside.path().join(".ssh/id_rsa"), "PRIVATE").unwrap();
    let s = with_skills(vec![skill]);
    let e = error(&s.call("activate_skill", json!({"name": "keys"})));
    assert!(e.contains("sensitive-path rule"), "{e}");
    let read =
        s.call("read_file", json!({"file_path": outside.path().join(".ssh/keys/reference.md")}));
    assert!(error(&read).starts_with("Path not in workspace"));
}

#[test]
fn the_declaration_lists_the_skills_and_the_schema_holds_to_them() {
    let outside = tempfile::tempdir().unwrap();
    let a = skill_folder(outside.path(), "alpha");
    let b = skill_folder(outside.path(), "beta");
    let tool = toolbelt_tools::session::activate_skill::ActivateSkill::new(Arc::new(vec![a, b]));
    let d = toolbelt_core::Tool::declaration(&tool, toolbelt_core::ModelFamily::Legacy);
    assert!(d.description.contains(" (Available: 'alpha', 'beta')"), "{}", d.description);
    assert_eq!(d.parameters["properties"]["name"]["enum"], json!(["alpha", "beta"]));
    assert_eq!(d.parameters["additionalProperties"], json!(false));

    let s = with_skills(
        toolbelt_tools::session::skills::discover(&[outside.path().to_path_buf()], &[]).0,
    );
    // AS-01: an unknown name fails validation.
    let e = error(&s.call("activate_skill", json!({"name": "zzz"})));
    assert!(e.contains("params/name must be equal to one of the allowed values"), "{e}");
}

#[test]
fn without_skills_the_tool_is_not_offered() {
    let names: Vec<String> =
        toolbelt_tools::builtin_tools().iter().map(|t| t.name().to_string()).collect();
    assert!(!names.contains(&"activate_skill".to_string()), "{names:?}");
}

#[test]
fn the_confirmation_shows_the_description_and_the_files() {
    let outside = tempfile::tempdir().unwrap();
    let skill = skill_folder(outside.path(), "pdf");
    let dir = skill.dir().to_path_buf();
    let tool = toolbelt_tools::session::activate_skill::ActivateSkill::new(Arc::new(vec![skill]));
    let tree = toolbelt_test_support::TempTree::new();
    let call = toolbelt_core::Tool::build(&tool, json!({"name": "pdf"}), &tree.env(&[])).unwrap();
    assert_eq!(call.description(), "\"pdf\": Fills PDF forms.");
    match call.confirmation() {
        Some(ConfirmationDetails::Info { title, prompt, .. }) => {
            assert_eq!(title, "Activate Skill: pdf");
            assert_eq!(
                prompt,
                format!(
                    "You are about to enable the specialized agent skill **pdf**.\n\n**Description:**\nFills PDF forms.\n\n**Resources to be shared with the model:**\n{}",
                    tree_of(&dir)
                )
            );
        }
        other => panic!("{other:?}"),
    }
}
