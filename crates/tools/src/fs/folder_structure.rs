//! A folder's tree as upstream's `getFolderStructure` draws it (used by `activate_skill` to
//! show a skill's resources): breadth first, entries in collation order, files before
//! folders, at most 200 items; `node_modules`, `.git`, `dist` and `__pycache__` shown as
//! `name/...` without their contents; symbolic links are neither files nor folders and are
//! left out, as upstream's directory entries leave them out.

use std::path::{Path, PathBuf};

/// Upstream's item limit.
pub const MAX_ITEMS: usize = 200;
const MORE: &str = "...";
const IGNORED: [&str; 4] = ["node_modules", ".git", "dist", "__pycache__"];

#[derive(Default)]
struct Node {
    name: String,
    files: Vec<String>,
    folders: Vec<usize>,
    more_files: bool,
    more_folders: bool,
    ignored: bool,
}

/// The tree of `dir` with upstream's header, or upstream's error text when it cannot be read.
pub fn folder_structure(dir: &Path) -> String {
    let Some(nodes) = read(dir, MAX_ITEMS) else {
        return format!(
            "Error: Could not read directory \"{}\". Check path and permissions.",
            dir.display()
        );
    };
    let mut lines = Vec::new();
    format(&nodes, 0, "", true, true, &mut lines);
    let mut summary = format!("Showing up to {MAX_ITEMS} items (files + folders).");
    if nodes.iter().any(|n| n.more_files || n.more_folders || n.ignored) {
        summary.push_str(&format!(
            " Folders or files indicated with {MORE} contain more items not shown, were ignored, or the display limit ({MAX_ITEMS} items) was reached."
        ));
    }
    format!("{summary}\n\n{}/\n{}", dir.display(), lines.join("\n"))
}

/// Reads the tree breadth first; `None` when `dir` does not exist.
fn read(dir: &Path, max_items: usize) -> Option<Vec<Node>> {
    let root_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut nodes = vec![Node { name: root_name, ..Node::default() }];
    let mut queue: std::collections::VecDeque<(usize, PathBuf)> = [(0, dir.to_path_buf())].into();
    let mut count = 0;
    while let Some((id, path)) = queue.pop_front() {
        if count >= max_items {
            continue;
        }
        let entries = match std::fs::read_dir(&path) {
            Ok(rd) => rd,
            Err(e) if id == 0 && e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(_) => continue,
        };
        let mut entries: Vec<(String, Option<std::fs::FileType>)> = entries
            .filter_map(Result::ok)
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.file_type().ok()))
            .collect();
        crate::collate::sort_by_text(&mut entries, |e| e.0.as_str());
        for (name, kind) in &entries {
            if !kind.is_some_and(|k| k.is_file()) {
                continue;
            }
            if count >= max_items {
                nodes[id].more_files = true;
                break;
            }
            nodes[id].files.push(name.clone());
            count += 1;
        }
        for (name, kind) in &entries {
            if !kind.is_some_and(|k| k.is_dir()) {
                continue;
            }
            if count >= max_items {
                nodes[id].more_folders = true;
                break;
            }
            let ignored = IGNORED.contains(&name.as_str());
            let child = nodes.len();
            nodes.push(Node { name: name.clone(), ignored, ..Node::default() });
            nodes[id].folders.push(child);
            count += 1;
            if !ignored {
                queue.push_back((child, path.join(name)));
            }
        }
    }
    Some(nodes)
}

/// Upstream's `formatStructure`: the root prints no line of its own.
fn format(
    nodes: &[Node],
    id: usize,
    indent: &str,
    last: bool,
    is_root: bool,
    out: &mut Vec<String>,
) {
    let node = &nodes[id];
    let connector = if last { "└───" } else { "├───" };
    if !is_root || node.ignored {
        let more = if node.ignored { MORE } else { "" };
        out.push(format!("{indent}{connector}{}/{more}", node.name));
    }
    let child_indent = if is_root {
        String::new()
    } else {
        format!("{indent}{}", if last { "    " } else { "│   " })
    };
    let no_folders_after = node.folders.is_empty() && !node.more_folders;
    for (i, f) in node.files.iter().enumerate() {
        let c = if i + 1 == node.files.len() && no_folders_after {
            "└───"
        } else {
            "├───"
        };
        out.push(format!("{child_indent}{c}{f}"));
    }
    if node.more_files {
        let c = if no_folders_after { "└───" } else { "├───" };
        out.push(format!("{child_indent}{c}{MORE}"));
    }
    for (i, child) in node.folders.iter().enumerate() {
        let last_child = i + 1 == node.folders.len() && !node.more_folders;
        format(nodes, *child, &child_indent, last_child, false, out);
    }
    if node.more_folders {
        out.push(format!("{child_indent}└───{MORE}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_first_ignored_folders_folded_links_left_out() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("skill");
        std::fs::create_dir_all(root.join("scripts/lib")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join("SKILL.md"), "x").unwrap();
        std::fs::write(root.join("b.txt"), "x").unwrap();
        std::fs::write(root.join("scripts/run.sh"), "x").unwrap();
        std::fs::write(root.join("scripts/lib/util.py"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc", root.join("link")).unwrap();
        let text = folder_structure(&root);
        let expected = format!(
            "Showing up to 200 items (files + folders). Folders or files indicated with ... contain more items not shown, were ignored, or the display limit (200 items) was reached.\n\n{}/\n├───b.txt\n├───SKILL.md\n├───node_modules/...\n└───scripts/\n    ├───run.sh\n    └───lib/\n        └───util.py",
            root.display()
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn the_limit_marks_what_was_left_out() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..205 {
            std::fs::write(d.path().join(format!("f{i:03}")), "").unwrap();
        }
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let text = folder_structure(d.path());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("the display limit (200 items) was reached."));
        assert_eq!(lines[3], "├───f000");
        assert_eq!(lines[202], "├───f199");
        assert_eq!(&lines[203..], ["├───...", "└───..."]);
    }

    #[test]
    fn a_missing_folder_is_named() {
        let text = folder_structure(Path::new("/nonexistent/skill"));
        assert_eq!(
            text,
            "Error: Could not read directory \"/nonexistent/skill\". Check path and permissions."
        );
    }
}
