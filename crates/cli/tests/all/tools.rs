use toolbelt_test_support::TempTree;

use crate::toolbelt;

#[test]
fn tools_list_names_every_builtin_tool() {
    let t = TempTree::new();
    let r = toolbelt(&t, &["tools", "list", "--json"], None);
    assert_eq!(r.code, 0);
    let names: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "update_topic",
            "list_directory",
            "read_file",
            "grep_search",
            "glob",
            "replace",
            "write_file",
            "write_todos",
            "save_memory",
            "ask_user",
            "enter_plan_mode",
            "exit_plan_mode",
            "web_fetch",
            "run_shell_command",
            "list_background_processes",
            "read_background_output",
            "read_many_files"
        ]
    );
    let r = toolbelt(&t, &["tools", "list"], None);
    assert!(r.stdout.contains("read_file") && r.stdout.contains("ReadFile"));
    // Issue 21: the mode is named ("in this mode" said nothing).
    assert!(
        r.stdout.contains(
            "(hidden: denied by policy in default mode, headless; see toolbelt policy check)"
        ),
        "{}",
        r.stdout
    );
    let r = toolbelt(&t, &["tools", "list", "--approval-mode", "plan"], None);
    assert!(r.stdout.contains("denied by policy in plan mode, headless"), "{}", r.stdout);
}

#[test]
fn tools_schema_prints_declarations_per_family() {
    let t = TempTree::new();
    let r = toolbelt(&t, &["tools", "schema"], None);
    assert_eq!(r.code, 0);
    let shown = r.json();
    let names: Vec<&str> =
        shown.as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    // Headless default mode: tools that policy denies outright are not shown to the model.
    assert_eq!(
        names,
        [
            "update_topic",
            "list_directory",
            "read_file",
            "grep_search",
            "glob",
            "enter_plan_mode",
            "read_many_files"
        ]
    );
    let everything = toolbelt(&t, &["tools", "schema", "--all"], None).json();
    assert_eq!(everything.as_array().unwrap().len(), 17);
    // Interactive default mode: everything but exit_plan_mode (not in Plan Mode).
    let interactive = toolbelt(&t, &["tools", "schema", "--interactive"], None).json();
    assert_eq!(interactive.as_array().unwrap().len(), 16);
    // Headless yolo allows everything but ask_user, which nobody could answer.
    let yolo = toolbelt(&t, &["tools", "schema", "--approval-mode", "yolo"], None).json();
    let names: Vec<&str> =
        yolo.as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 16);
    assert!(!names.contains(&"ask_user"));
    let all = everything;
    assert!(all[0]["parametersJsonSchema"]["properties"].is_object());
    let legacy = toolbelt(&t, &["tools", "schema", "read_file"], None).json();
    let g3 =
        toolbelt(&t, &["tools", "schema", "read_file", "--model-family", "gemini-3"], None).json();
    assert_eq!(legacy["name"], "read_file");
    assert_ne!(legacy["description"], g3["description"]);
    assert_eq!(legacy["parametersJsonSchema"], g3["parametersJsonSchema"]);
    let r = toolbelt(&t, &["tools", "schema", "nope"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("Tool \"nope\" not found."));
}

/// The skill names `activate_skill` offers (empty: the tool is not registered).
fn skill_names(t: &TempTree, trusted: bool) -> Vec<String> {
    let mut c = crate::command(t, &["tools", "schema", "--all", "activate_skill"]);
    if trusted {
        c.env("TOOLBELT_TRUST_WORKSPACE", "1");
    }
    let out = c.output().unwrap();
    if !out.status.success() {
        return Vec::new();
    }
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    d["parametersJsonSchema"]["properties"]["name"]["enum"]
        .as_array()
        .map(|a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn write_skill(dir: &std::path::Path, name: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {name} skill\n---\nbody\n"),
    )
    .unwrap();
}

/// Issue 19: skills from the four folders upstream reads, a cloned repository's own skills
/// only once its folder is trusted, `skills.disabled` and `skills.enabled` as upstream.
#[test]
fn skills_come_from_the_user_folders_and_from_a_trusted_project() {
    let t = TempTree::new();
    write_skill(&t.home().join(".gemini/skills"), "user-gemini");
    write_skill(&t.home().join(".agents/skills"), "user-agents");
    write_skill(&t.root().join(".gemini/skills"), "project-gemini");
    write_skill(&t.root().join(".agents/skills"), "project-agents");
    assert_eq!(skill_names(&t, false), ["user-gemini", "user-agents"]);
    assert_eq!(
        skill_names(&t, true),
        ["user-gemini", "user-agents", "project-gemini", "project-agents"]
    );
    let settings = t.home().join(".gemini/settings.json");
    std::fs::write(&settings, r#"{"skills": {"disabled": ["USER-AGENTS"]}}"#).unwrap();
    assert_eq!(skill_names(&t, false), ["user-gemini"]);
    std::fs::write(&settings, r#"{"skills": {"enabled": false}}"#).unwrap();
    assert_eq!(skill_names(&t, true), Vec::<String>::new());
    let r = toolbelt(&t, &["tools", "list", "--json"], None);
    assert!(!r.stdout.contains("activate_skill"), "{}", r.stdout);
}

/// Issue 21: completions and a manual page, generated from the command line itself.
#[test]
fn completions_and_the_manual_page_cover_every_command() {
    let t = TempTree::new();
    // Every command and subcommand the binary has, read from its own help (issue 35: the
    // test checked five names it listed itself).
    fn commands(t: &TempTree, path: &[&str]) -> Vec<Vec<String>> {
        let mut argv: Vec<&str> = path.to_vec();
        argv.push("--help");
        let help = toolbelt(t, &argv, None).stdout;
        let mut out = Vec::new();
        let Some(section) = help.split("Commands:\n").nth(1) else { return out };
        for line in section.lines().take_while(|l| l.starts_with("  ")) {
            let name = line.split_whitespace().next().unwrap_or("");
            if name.is_empty() || name == "help" {
                continue;
            }
            let mut full: Vec<String> = path.iter().map(|s| s.to_string()).collect();
            full.push(name.to_string());
            let below: Vec<&str> = full.iter().map(String::as_str).collect();
            out.extend(commands(t, &below));
            out.push(full);
        }
        out
    }
    let all = commands(&t, &[]);
    assert!(all.len() >= 20, "{all:?}");
    for needed in [
        vec!["policy", "lint"],
        vec!["mcp", "auth"],
        vec!["tools", "schema"],
        vec!["config", "show"],
    ] {
        assert!(all.iter().any(|c| *c == needed), "{needed:?} missing from {all:?}");
    }
    let man = toolbelt(&t, &["man"], None).stdout;
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = toolbelt(&t, &["completions", shell], None);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        for c in &all {
            let leaf = c.last().unwrap();
            assert!(r.stdout.contains(leaf.as_str()), "{shell} completion lacks {c:?}");
        }
    }
    for c in &all {
        let leaf = c.last().unwrap();
        assert!(man.contains(leaf.as_str()), "the manual page lacks {c:?}");
    }
    let bash = toolbelt(&t, &["completions", "bash"], None).stdout;
    let check = std::process::Command::new("bash").args(["-n", "-c", &bash]).output().unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let man = toolbelt(&t, &["man"], None);
    assert!(man.stdout.contains(".TH toolbelt 1"), "{}", &man.stdout[..200.min(man.stdout.len())]);
    assert!(man.stdout.contains("sandbox") && man.stdout.contains("completions"));
    // Issue 49 F9: the page listed commands without their options and pointed at
    // `toolbelt-call(1)`, a page that does not exist.
    assert!(!man.stdout.contains("toolbelt-call(1)") && !man.stdout.contains("-call(1)"));
    for option in ["\\fB--approval-mode", "--timeout-ms", "--max-turns", "--token-file", "--root"] {
        assert!(man.stdout.contains(option), "the manual page lacks {option}");
    }
    assert!(man.stdout.contains(".SS \"toolbelt call\""), "no section for `toolbelt call`");
    assert!(man.stdout.contains(".SS \"toolbelt mcp auth\""), "no section for `toolbelt mcp auth`");
    let r = toolbelt(&t, &["completions", "tcsh"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
}
