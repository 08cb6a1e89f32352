//! The house rules a machine can check: no import cycle between core's modules, no built-in
//! tool name in the scheduler, no source file over 600 lines. See CONTRIBUTING.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn core_src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A source file's module path (`policy::evaluate`), or `None` for test files.
fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    if parts.last().is_some_and(|p| p == "tests") {
        return None;
    }
    Some(parts)
}

/// The code outside `#[cfg(test)] mod tests`.
fn non_test_code(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests").map_or(text, |i| &text[..i])
}

/// The module paths a file names through `crate::` and `super::` (the first segment of each
/// item of a `{a, b}` group), resolved against the file's module.
fn referenced(code: &str, module: &[String]) -> Vec<Vec<String>> {
    // `super::` is the parent module both for `a/b.rs` and for `a/b/mod.rs`.
    let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
    let mut out = Vec::new();
    for (anchor, base) in [("crate::", Vec::new()), ("super::", parent)] {
        let mut rest = code;
        while let Some(i) = rest.find(anchor) {
            let before = rest[..i].chars().last();
            rest = &rest[i + anchor.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            match rest.strip_prefix('{') {
                // `use crate::{a, b::c}`: each item's first segment.
                Some(group) => {
                    for item in group[..group.find('}').unwrap_or(group.len())].split(',') {
                        let first = item.trim().split("::").next().unwrap_or("").trim();
                        if !first.is_empty() && first != "self" {
                            let mut p = base.clone();
                            p.push(first.to_string());
                            out.push(p);
                        }
                    }
                }
                // `crate::a::b::C`: the first two segments are enough for both graphs.
                None => {
                    let end = rest
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .unwrap_or(rest.len());
                    let mut p = base.clone();
                    p.extend(
                        rest[..end].split("::").filter(|s| !s.is_empty()).take(2).map(String::from),
                    );
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The first cycle in `edges`, as a list of nodes.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for t in edges.get(m).into_iter().flatten() {
            match state.get(t) {
                Some(1) => {
                    let start = stack.iter().position(|s| s == t).unwrap_or(0);
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(t.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(t, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in edges.keys() {
        if !state.contains_key(m)
            && let Some(c) = visit(m, edges, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// Two graphs: core's top-level modules (any file under `a/` naming `crate::b` is an edge
/// a -> b), and within each folder the sibling files (`a/b.rs` naming `super::c` or
/// `crate::a::c` is an edge a::b -> a::c). A cycle in either is an import cycle.
fn module_graphs() -> (BTreeMap<String, BTreeSet<String>>, BTreeMap<String, BTreeSet<String>>) {
    let src = core_src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> =
        files.iter().filter_map(|f| Some((module_of(&src, f)?, f.clone()))).collect();
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut siblings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &modules {
        let Some(first) = module.first() else { continue };
        let text = std::fs::read_to_string(file).unwrap();
        for r in referenced(non_test_code(&text), module) {
            let Some(target) = r.first() else { continue };
            if target != first && modules.contains_key(&vec![target.clone()]) {
                top.entry(first.clone()).or_default().insert(target.clone());
            }
            // Siblings: same parent, both files of that folder.
            if module.len() >= 2 && r.len() >= module.len() {
                let parent = &module[..module.len() - 1];
                let sibling = r[..module.len()].to_vec();
                if r.starts_with(parent) && &sibling != module && modules.contains_key(&sibling) {
                    siblings.entry(module.join("::")).or_default().insert(sibling.join("::"));
                }
            }
        }
    }
    (top, siblings)
}

#[test]
fn core_has_no_import_cycle_between_its_modules() {
    let (top, siblings) = module_graphs();
    for graph in [&top, &siblings] {
        if let Some(cycle) = find_cycle(graph) {
            panic!("import cycle in core: {}", cycle.join(" -> "));
        }
    }
    // The check sees the edges it must see, and would see a cycle.
    assert!(top["scheduler"].contains("policy") && top["tool"].contains("names"), "{top:?}");
    assert!(siblings["policy::shell"].contains("policy::call"), "{siblings:?}");
    let mut cyclic = top.clone();
    cyclic.entry("policy".into()).or_default().insert("scheduler".into());
    assert!(find_cycle(&cyclic).is_some());
}

/// Whether `word` stands in `text` on its own (not inside a longer identifier).
fn contains_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

#[test]
fn the_scheduler_names_no_built_in_tool() {
    assert!(contains_word("x = \"glob\";", "glob") && !contains_word("global", "glob"));
    const BUILT_IN: &[&str] = &[
        "read_file",
        "write_file",
        "list_directory",
        "glob",
        "grep_search",
        "search_file_content",
        "read_many_files",
        "run_shell_command",
        "list_background_processes",
        "read_background_output",
        "web_fetch",
        "google_web_search",
        "write_todos",
        "save_memory",
        "ask_user",
        "enter_plan_mode",
        "exit_plan_mode",
        "update_topic",
        "activate_skill",
    ];
    let mut files = Vec::new();
    rust_files(&core_src().join("scheduler"), &mut files);
    assert!(files.len() > 3);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for name in BUILT_IN.iter().chain(&["\"replace\""]) {
            assert!(!contains_word(&text, name), "{} names the built-in tool {name}", f.display());
        }
    }
}

#[test]
fn no_source_file_is_over_600_lines() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&crates, &mut files);
    assert!(files.len() > 100, "the walk found the workspace's sources");
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).ok()?.lines().count();
            (n > 600).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these by noun: {long:?}");
}

/// The non-test code of every source file that calls one of `calls` (as a whole name:
/// `RunShellCommand::new(` is not `Command::new(`), by path relative to `crates/`.
fn sources_calling(calls: &[&str]) -> Vec<(String, String)> {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&crates, &mut files);
    files
        .iter()
        .filter(|f| f.components().any(|c| c.as_os_str() == "src"))
        .filter_map(|f| {
            let code = non_test_code(&std::fs::read_to_string(f).unwrap()).to_string();
            let calls_one = calls.iter().any(|p| {
                code.match_indices(p)
                    .any(|(i, _)| !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            let rel = f.strip_prefix(&crates).unwrap().to_string_lossy().replace('\\', "/");
            calls_one.then_some((rel, code))
        })
        .collect()
}

/// Issue 17: every program toolbelt starts gets its environment from
/// `toolbelt_core::process::child_env`, never the inherited one. Every place that builds a
/// command clears the environment in the rest of the block that builds it, or its file is
/// listed here with the reason it may not. Issue 35: it passed when `env_clear()` appeared
/// anywhere in the file, so a second command in a file that cleared one went unseen.
#[test]
fn every_child_gets_the_cleaned_environment() {
    const INHERITS: &[(&str, &str)] = &[
        ("cli/src/approver.rs", "the user's own editor, opened at the user's request"),
        ("cli/src/commands/mcp.rs", "the user's browser, for an OAuth sign-in"),
        ("cli/src/bin/agent-toolbelt.rs", "toolbelt itself under its package name (exec in place)"),
    ];
    const BUILDERS: &[&str] = &["Command::new(", "CommandBuilder::new("];
    let mut sites = 0;
    let mut bad = Vec::new();
    for (rel, code) in sources_calling(BUILDERS) {
        if INHERITS.iter().any(|(p, _)| rel.ends_with(p)) {
            continue;
        }
        for b in BUILDERS {
            for (i, _) in code.match_indices(b) {
                if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                sites += 1;
                if !rest_of_block(&code[i..]).contains(".env_clear()") {
                    let line = code[..i].lines().count();
                    bad.push(format!("{rel}:{line}"));
                }
            }
        }
    }
    assert!(sites >= 1, "the process layer's own command was found");
    assert!(bad.is_empty(), "these start programs with toolbelt's whole environment: {bad:?}");
}

/// `code` up to the brace that closes the block it starts in.
fn rest_of_block(code: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in code.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return &code[..i],
            '}' => depth -= 1,
            _ => {}
        }
    }
    code
}

/// Issue 18: every program a tool, a hook or a discovered tool runs starts through
/// `toolbelt_core::process::Launch` (reaper, sandbox, environment in one place). Only the
/// process layer itself builds a command, and the few programs that are not run for a tool.
#[test]
fn programs_start_only_through_the_process_layer() {
    const OTHERS: &[(&str, &str)] = &[
        ("core/src/process/spawn.rs", "the one spawn function"),
        ("core/src/process/reaper.rs", "the fork between the spawn and the command"),
        (
            "core/src/process/sandbox/mounts.rs",
            "a fork that only tries to make a mount namespace and exits (it runs no program)",
        ),
        ("cli/src/approver.rs", "the user's own editor, opened at the user's request"),
        ("cli/src/commands/mcp.rs", "the user's browser, for an OAuth sign-in"),
        ("cli/src/bin/agent-toolbelt.rs", "toolbelt itself under its package name (exec in place)"),
    ];
    let bad: Vec<String> =
        sources_calling(&["Command::new(", "CommandBuilder::new(", "pre_exec(", "fork("])
            .into_iter()
            .filter(|(rel, _)| !OTHERS.iter().any(|(p, _)| rel.ends_with(p)))
            .map(|(rel, _)| rel)
            .collect();
    assert!(bad.is_empty(), "these start programs outside toolbelt_core::process: {bad:?}");
}
