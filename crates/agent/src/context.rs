//! Context files (`GEMINI.md`, or the configured names): the global one in `~/.gemini`, then
//! those from the project's top (the git root, else the root itself) down to each root, joined
//! with upstream's markers for the system instruction.

use std::path::{Path, PathBuf};

/// Files larger than this are cut, with a note.
const MAX_FILE_BYTES: usize = 256 * 1024;

/// The context files that exist, in order (global first, then outermost to innermost).
pub fn find(names: &[String], home: Option<&Path>, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if p.is_file() && !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(h) = home {
        for n in names {
            push(h.join(".gemini").join(n));
        }
    }
    for root in roots {
        let top = root.ancestors().find(|a| a.join(".git").exists()).unwrap_or(root);
        let mut chain: Vec<&Path> = root.ancestors().take_while(|a| a.starts_with(top)).collect();
        chain.reverse();
        for dir in chain {
            for n in names {
                push(dir.join(n));
            }
        }
    }
    out
}

/// The files' text with `--- Context from: ... ---` markers; `None` if there are none.
/// Each file is read by name: for files that are not the user's own, see [`load_contained`].
pub fn load(files: &[PathBuf]) -> Option<String> {
    load_with(files, |f| std::fs::read(f).ok())
}

/// Where context files may come from, and how they are read.
pub struct ContextSources<'a> {
    /// The user's home: its `.gemini` files are the user's own.
    pub home: Option<&'a Path>,
    /// The session's workspace: project files are read through its file layer.
    pub workspace: &'a toolbelt_core::Workspace,
    /// Whether the project folder is trusted (else only the user's own files are read).
    pub trusted: bool,
    /// The session's configuration (for a workspace over the repository's top folder).
    pub config: &'a toolbelt_core::config::Config,
}

/// [`load`] for an agent session: the user's global file is read as it is; project files only
/// in a trusted folder, and only through the workspace file layer (beneath a root: the
/// workspace's, or the repository's top folder for files above it; the sensitive-path rules
/// applied; regular files only). A `GEMINI.md` linked to `/proc/self/environ` or a key file is
/// not read. Returns the text and what was left out, for a notice.
pub fn load_contained(
    files: &[PathBuf],
    src: &ContextSources<'_>,
) -> (Option<String>, Vec<String>) {
    use std::io::Read;
    let mut left_out = Vec::new();
    let user_dir = src.home.map(|h| h.join(".gemini"));
    let text = load_with(files, |f| {
        if user_dir.as_ref().is_some_and(|d| f.starts_with(d)) {
            return std::fs::read(f).ok();
        }
        if !src.trusted {
            left_out.push(format!("{} (the folder is not trusted)", f.display()));
            return None;
        }
        let in_roots = src.workspace.roots().iter().any(|r| f.starts_with(&r.real));
        let above;
        let ws = if in_roots {
            src.workspace
        } else {
            let top = f.ancestors().find(|a| a.join(".git").exists())?;
            above = toolbelt_core::Workspace::new(&[top.to_path_buf()], src.config).ok()?;
            &above
        };
        let opened = ws
            .resolve_path(f)
            .map_err(|e| e.to_string())
            .and_then(|r| ws.open_read(&r).map_err(|e| e.to_string()));
        match opened {
            Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => {
                let mut bytes = Vec::new();
                file.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut bytes).ok()?;
                Some(bytes)
            }
            Ok(_) => {
                left_out.push(format!("{} (not a regular file)", f.display()));
                None
            }
            Err(e) => {
                left_out.push(format!("{} ({e})", f.display()));
                None
            }
        }
    });
    (text, left_out)
}

fn load_with(files: &[PathBuf], mut read: impl FnMut(&Path) -> Option<Vec<u8>>) -> Option<String> {
    let mut blocks = Vec::new();
    for f in files {
        let Some(bytes) = read(f) else { continue };
        let mut text =
            String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_FILE_BYTES)]).into_owned();
        if bytes.len() > MAX_FILE_BYTES {
            text.push_str(&format!(
                "\n[... cut: the file has {} bytes, the first {MAX_FILE_BYTES} are shown]",
                bytes.len()
            ));
        }
        let shown = f.display();
        blocks.push(format!(
            "--- Context from: {shown} ---\n{}\n--- End of Context from: {shown} ---",
            text.trim_end()
        ));
    }
    (!blocks.is_empty()).then(|| blocks.join("\n\n"))
}

/// A session's system prompt: toolbelt's text (or the file `GEMINI_SYSTEM_MD` names) with
/// the skills section and the context files (`names`, found from the home folder and every
/// root, project files read through the workspace's file layer); with notices of what was
/// found but not loaded, and why.
pub fn session_instruction(
    names: &[String],
    src: &ContextSources<'_>,
    skills: Option<&str>,
    facts: crate::prompt::PromptFacts,
) -> (crate::prompt::SystemPrompt, Vec<String>) {
    let roots: Vec<PathBuf> = src.workspace.roots().iter().map(|r| r.real.clone()).collect();
    let files = find(names, src.home, &roots);
    let (context, mut left_out) = load_contained(&files, src);
    let mut prompt = crate::prompt::SystemPrompt::new(facts, skills.map(String::from), context);
    let own = std::env::var("GEMINI_SYSTEM_MD").ok();
    match own_prompt(own.as_deref(), src) {
        Ok(Some(text)) => prompt = prompt.with_template(text),
        Ok(None) => {}
        Err(why) => left_out.push(why),
    }
    (prompt, left_out)
}

/// The person's own prompt file that `GEMINI_SYSTEM_MD` (`value`) names, read; `Err` says why
/// it was not (toolbelt's prompt is used then). A file inside the project is the project's:
/// read only in a trusted folder and through the workspace's file layer (a `system.md` linked
/// to a key file or `/proc/self/environ` is not read); a file elsewhere is the person's own.
fn own_prompt(value: Option<&str>, src: &ContextSources<'_>) -> Result<Option<String>, String> {
    use std::io::Read;
    let project = src.workspace.roots().first().map(|r| r.real.clone()).unwrap_or_default();
    let Some(file) = crate::prompt::override_file(value, &project, src.home) else {
        return Ok(None);
    };
    // A relative path is the project's (an editor starts toolbelt in the project).
    let file = if file.is_relative() { project.join(file) } else { file };
    let not_used = |why: String| {
        format!("{} (GEMINI_SYSTEM_MD: {why}; toolbelt's own prompt is used)", file.display())
    };
    let in_project = src
        .workspace
        .roots()
        .iter()
        .any(|r| file.starts_with(&r.real) || file.starts_with(&r.given));
    let bytes = if in_project {
        if !src.trusted {
            return Err(not_used("the folder is not trusted".into()));
        }
        let opened = src
            .workspace
            .resolve_path(&file)
            .map_err(|e| e.to_string())
            .and_then(|r| src.workspace.open_read(&r).map_err(|e| e.to_string()))
            .map_err(&not_used)?;
        if !opened.metadata().is_ok_and(|m| m.is_file()) {
            return Err(not_used("not a regular file".into()));
        }
        let mut bytes = Vec::new();
        opened
            .take(MAX_FILE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| not_used(e.to_string()))?;
        bytes
    } else {
        // The person's own file: never one of the system's (/proc files look regular:
        // /proc/self/environ would send every key to the model) ...
        let real = std::fs::canonicalize(&file).map_err(|e| not_used(e.to_string()))?;
        if ["/proc", "/sys", "/dev"].iter().any(|p| real.starts_with(p)) {
            return Err(not_used(format!("{} is a system file", real.display())));
        }
        // ... read from one handle without blocking, a regular file only.
        let (bytes, _) = toolbelt_core::files::read_regular(&file, MAX_FILE_BYTES as u64 + 1, true)
            .map_err(|e| not_used(e.to_string()))?;
        bytes
    };
    if bytes.len() > MAX_FILE_BYTES {
        return Err(not_used(format!("more than {MAX_FILE_BYTES} bytes")));
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_then_outermost_to_innermost() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let proj = d.path().join("proj");
        let sub = proj.join("sub");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(home.join(".gemini/GEMINI.md"), "global").unwrap();
        std::fs::write(proj.join("GEMINI.md"), "project").unwrap();
        std::fs::write(sub.join("GEMINI.md"), "sub").unwrap();
        std::fs::write(d.path().join("GEMINI.md"), "outside the repo").unwrap();
        let files = find(&["GEMINI.md".into()], Some(&home), std::slice::from_ref(&sub));
        assert_eq!(
            files,
            vec![home.join(".gemini/GEMINI.md"), proj.join("GEMINI.md"), sub.join("GEMINI.md")]
        );
        let text = load(&files).unwrap();
        assert!(text.starts_with(&format!(
            "--- Context from: {} ---\nglobal\n--- End of Context from:",
            home.join(".gemini/GEMINI.md").display()
        )));
        assert!(text.find("project").unwrap() < text.find("\nsub\n").unwrap());
        assert!(!text.contains("outside the repo"));
    }

    /// Issue 50 (E5): `GEMINI_SYSTEM_MD=true` reads the project's `.gemini/system.md` only in
    /// a trusted folder and through the file layer; a path of the person's own is read as it is.
    #[cfg(unix)]
    #[test]
    fn a_project_s_own_prompt_file_is_read_only_when_trusted_and_contained() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proj/.gemini")).unwrap();
        let proj = d.path().join("proj").canonicalize().unwrap();
        std::fs::write(proj.join(".gemini/system.md"), "Be a pirate.").unwrap();
        let config = toolbelt_core::config::Config::default();
        let ws = toolbelt_core::Workspace::new(std::slice::from_ref(&proj), &config).unwrap();
        let src = |trusted| ContextSources { home: None, workspace: &ws, trusted, config: &config };
        assert_eq!(own_prompt(Some("true"), &src(true)).unwrap().as_deref(), Some("Be a pirate."));
        let e = own_prompt(Some("1"), &src(false)).unwrap_err();
        assert!(e.contains("not trusted") && e.contains("toolbelt's own prompt is used"), "{e}");
        assert_eq!(own_prompt(None, &src(true)).unwrap(), None);
        assert_eq!(own_prompt(Some("false"), &src(true)).unwrap(), None);
        // A link out of the project is not followed.
        let secret = d.path().join("secret.txt");
        std::fs::write(&secret, "API_KEY=123").unwrap();
        std::fs::remove_file(proj.join(".gemini/system.md")).unwrap();
        std::os::unix::fs::symlink(&secret, proj.join(".gemini/system.md")).unwrap();
        let e = own_prompt(Some("true"), &src(true)).unwrap_err();
        assert!(!e.contains("API_KEY"), "{e}");
        // A file of the person's own, outside the project.
        let mine = d.path().join("mine.md");
        std::fs::write(&mine, "My rules.").unwrap();
        assert_eq!(own_prompt(mine.to_str(), &src(false)).unwrap().as_deref(), Some("My rules."));
        let e = own_prompt(Some("/nonexistent/p.md"), &src(true)).unwrap_err();
        assert!(e.starts_with("/nonexistent/p.md (GEMINI_SYSTEM_MD: "), "{e}");
        // Issue 50 review: /dev/zero took 5.6 GB in 5 s; a relative path named a project file
        // without the project's checks.
        let e = own_prompt(Some("/dev/zero"), &src(true)).unwrap_err();
        assert!(e.contains("not a regular file") || e.contains("a system file"), "{e}");
        // Second review: /proc files look regular; the environment went to the model.
        let e = own_prompt(Some("/proc/self/environ"), &src(true)).unwrap_err();
        assert!(e.contains("a system file"), "{e}");
        let link = d.path().join("env-link.md");
        std::os::unix::fs::symlink("/proc/self/environ", &link).unwrap();
        let e = own_prompt(link.to_str(), &src(true)).unwrap_err();
        assert!(e.contains("a system file"), "{e}");
        std::fs::write(proj.join("own.md"), "Project words.").unwrap();
        let e = own_prompt(Some("own.md"), &src(false)).unwrap_err();
        assert!(e.contains("not trusted"), "{e}");
        assert_eq!(
            own_prompt(Some("own.md"), &src(true)).unwrap().as_deref(),
            Some("Project words.")
        );
    }
}
