//! Agent skills: folders holding a `SKILL.md` (YAML front matter with `name` and
//! `description`, then the instructions), found where upstream looks for them. Read once when
//! the session starts; `activate_skill` hands one to the model.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// A `SKILL.md` larger than this is not loaded (its body would go to the model whole).
pub const MAX_SKILL_BYTES: u64 = 1024 * 1024;

/// One skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Its name, with the characters a file name cannot hold replaced by `-`.
    pub name: String,
    /// What it is for (shown to the model and in the confirmation).
    pub description: String,
    /// Its `SKILL.md`.
    pub location: PathBuf,
    /// The instructions after the front matter, trimmed.
    pub body: String,
}

impl Skill {
    /// The skill's folder: what activation adds to the workspace.
    pub fn dir(&self) -> &Path {
        self.location.parent().unwrap_or(&self.location)
    }
}

/// The system instruction's list of skills (`None` when there is none): each skill's name,
/// description and `SKILL.md` inside `<available_skills>`, the tag the tool's description
/// points to.
pub fn prompt_section(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let entries: Vec<String> = skills
        .iter()
        .map(|s| {
            format!(
                "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n    <location>{}</location>\n  </skill>",
                s.name,
                s.description,
                s.location.display()
            )
        })
        .collect();
    Some(format!(
        "# Agent skills\n\nThese skills hold instructions for particular kinds of work. When a task matches one, call the `activate_skill` tool with its name to load them.\n\n<available_skills>\n{}\n</available_skills>",
        entries.join("\n")
    ))
}

/// Where skills are looked for, lowest precedence first: `~/.gemini/skills`,
/// `~/.agents/skills`, then, in a trusted folder only, `<project>/.gemini/skills` and
/// `<project>/.agents/skills`.
pub fn skill_dirs(user_home: Option<&Path>, project: &Path, trusted: bool) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(home) = user_home {
        dirs.push(home.join(".gemini").join("skills"));
        dirs.push(home.join(".agents").join("skills"));
    }
    if trusted {
        dirs.push(project.join(".gemini").join("skills"));
        dirs.push(project.join(".agents").join("skills"));
    }
    dirs
}

/// The skills in `dirs` (later folders win on a name), without those named in `disabled`
/// (any case), and a notice for each skill overridden or skipped.
pub fn discover(dirs: &[PathBuf], disabled: &[String]) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut notices = Vec::new();
    for dir in dirs {
        for skill in load_dir(dir, &mut notices) {
            match skills.iter_mut().find(|s| s.name == skill.name) {
                // The first position is kept, as upstream's map keeps it.
                Some(existing) => {
                    if existing.location != skill.location {
                        notices.push(format!(
                            "Skill conflict detected: \"{}\" from \"{}\" is overriding the same skill from \"{}\".",
                            skill.name,
                            skill.location.display(),
                            existing.location.display()
                        ));
                    }
                    *existing = skill;
                }
                None => skills.push(skill),
            }
        }
    }
    let off: Vec<String> = disabled.iter().map(|d| d.to_lowercase()).collect();
    skills.retain(|s| !off.contains(&s.name.to_lowercase()));
    (skills, notices)
}

/// The skills of one folder: its own `SKILL.md` and `*/SKILL.md` (not in `node_modules` or
/// `.git`), in name order.
fn load_dir(dir: &Path, notices: &mut Vec<String>) -> Vec<Skill> {
    if !dir.is_dir() {
        return Vec::new();
    }
    let mut files = vec![dir.join("SKILL.md")];
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut subs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| !matches!(e.file_name().to_str(), Some("node_modules" | ".git")))
            .map(|e| e.path().join("SKILL.md"))
            .collect();
        subs.sort();
        files.extend(subs);
    }
    files.iter().filter_map(|f| load_file(f, notices)).collect()
}

/// One `SKILL.md`, if it is a regular file with front matter naming and describing a skill.
pub fn load_file(path: &Path, notices: &mut Vec<String>) -> Option<Skill> {
    // Through links, as upstream's glob follows them; from one handle, so a FIFO put in place
    // can never block the session's start.
    let (bytes, size) = toolbelt_core::files::read_regular(path, MAX_SKILL_BYTES, true).ok()?;
    if size > MAX_SKILL_BYTES {
        notices.push(format!(
            "Skill file {} is not loaded: it has {size} bytes, over the limit of {MAX_SKILL_BYTES}.",
            path.display()
        ));
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    let (name, description, body) = parse(&text)?;
    Some(Skill { name: sanitize(&name), description, location: path.to_path_buf(), body })
}

/// Upstream's front matter: `---` line, YAML, `---`; then the body.
static FRONT_MATTER: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(r"^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n([\s\S]*))?").ok());

/// `(name, description, body)` of a skill file's text. A byte-order mark in front is skipped
/// (upstream then finds no front matter and drops the skill).
pub fn parse(text: &str) -> Option<(String, String, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let caps = FRONT_MATTER.as_ref()?.captures(text)?;
    let front = caps.get(1)?.as_str();
    let (name, description) = from_yaml(front).or_else(|| from_lines(front))?;
    let body = caps.get(2).map(|b| b.as_str().trim().to_string()).unwrap_or_default();
    Some((name, description, body))
}

/// `name` and `description` when the front matter is YAML with both as strings.
fn from_yaml(front: &str) -> Option<(String, String)> {
    use yaml_rust2::{Yaml, YamlLoader};
    let docs = YamlLoader::load_from_str(front).ok()?;
    let doc = docs.first()?;
    match (&doc["name"], &doc["description"]) {
        (Yaml::String(n), Yaml::String(d)) => Some((n.clone(), d.clone())),
        _ => None,
    }
}

/// Upstream's fallback for front matter that is not valid YAML (a description with a colon):
/// `name:` and `description:` lines, the description continued on indented lines.
fn from_lines(front: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = front.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let (mut name, mut description) = (None, None);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if let Some(v) = line.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("description:") {
            let mut parts = vec![v.trim().to_string()];
            while let Some(next) = lines.get(i + 1) {
                let indented = next.starts_with([' ', '\t']) && !next.trim().is_empty();
                if !indented {
                    break;
                }
                parts.push(next.trim().to_string());
                i += 1;
            }
            parts.retain(|p| !p.is_empty());
            description = Some(parts.join(" "));
        }
        i += 1;
    }
    Some((name?, description?))
}

/// Characters a file or folder name cannot hold become `-`, as upstream.
fn sanitize(name: &str) -> String {
    name.chars().map(|c| if ":\\/<>*?\"|".contains(c) { '-' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_front_matter_and_body() {
        let (n, d, b) =
            parse("---\nname: pdf\ndescription: \"Fill forms: PDFs\"\n---\n\n# Steps\n1. x\n")
                .unwrap();
        assert_eq!(
            (n.as_str(), d.as_str(), b.as_str()),
            ("pdf", "Fill forms: PDFs", "# Steps\n1. x")
        );
    }

    #[test]
    fn a_colon_in_an_unquoted_description_falls_back_to_lines() {
        // Not valid YAML ("mapping values are not allowed here"): upstream's simple parser.
        let (n, d, _) =
            parse("---\nname: a:b\ndescription: Use when: the user asks\n  for PDFs\n---\nbody")
                .unwrap();
        assert_eq!(n, "a:b");
        assert_eq!(d, "Use when: the user asks for PDFs");
        assert_eq!(sanitize(&n), "a-b");
    }

    #[test]
    fn no_front_matter_or_a_missing_key_is_no_skill() {
        assert_eq!(parse("# just markdown"), None);
        assert_eq!(parse("---\nname: x\n---\nbody"), None);
        assert_eq!(parse("---\nname: x\ndescription: y\n---").map(|p| p.2), Some(String::new()));
        assert_eq!(
            parse("\u{feff}---\nname: x\ndescription: y\n---\nz").map(|p| p.2),
            Some("z".into())
        );
    }

    /// A hostile skill folder: a FIFO named SKILL.md would block the session's start when
    /// read, and a huge one would go to the model whole. Neither is loaded; the huge one is
    /// named in a notice.
    #[cfg(unix)]
    #[test]
    fn a_fifo_or_an_oversized_skill_file_is_not_loaded() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("pipe")).unwrap();
        nix::unistd::mkfifo(&d.path().join("pipe/SKILL.md"), nix::sys::stat::Mode::S_IRWXU)
            .unwrap();
        std::fs::create_dir_all(d.path().join("big")).unwrap();
        let mut big = b"---\nname: big\ndescription: d\n---\n".to_vec();
        big.resize(usize::try_from(MAX_SKILL_BYTES).unwrap() + 1, b'x');
        std::fs::write(d.path().join("big/SKILL.md"), big).unwrap();
        let (skills, notices) = discover(&[d.path().to_path_buf()], &[]);
        assert!(skills.is_empty(), "{skills:?}");
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].contains("big/SKILL.md is not loaded"), "{notices:?}");
    }

    #[test]
    fn later_folders_win_and_keep_the_first_position() {
        let d = tempfile::tempdir().unwrap();
        let write = |dir: &str, name: &str, desc: &str| {
            let p = d.path().join(dir).join(name);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(
                p.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: {desc}\n---\nbody of {dir}"),
            )
            .unwrap();
        };
        write("user", "alpha", "user alpha");
        write("user", "beta", "user beta");
        write("project", "alpha", "project alpha");
        write("project", "gamma", "off");
        let dirs = [d.path().join("user"), d.path().join("project"), d.path().join("missing")];
        let (skills, notices) = discover(&dirs, &["GAMMA".into()]);
        let names: Vec<(&str, &str)> =
            skills.iter().map(|s| (s.name.as_str(), s.description.as_str())).collect();
        assert_eq!(names, [("alpha", "project alpha"), ("beta", "user beta")]);
        assert_eq!(notices.len(), 1);
        assert!(notices[0].starts_with("Skill conflict detected: \"alpha\" from "), "{notices:?}");
    }
}
