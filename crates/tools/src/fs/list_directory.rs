//! `list_directory`: the entries directly inside one folder.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::path::PathBuf;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::schema::rename_params;
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};
use toolbelt_core::tool::{
    Declaration, ExecContext, Invocation, Location, ModelFamily, Tool, ToolEnv,
};
use toolbelt_core::workspace::{Access, IgnoreOptions, PathError, ResolvedPath, Workspace, paths};

use super::{node_error, shorten_path};
use crate::search::unread::{Unread, Verdict};

pub const NAME: &str = "list_directory";

#[derive(Debug, Default, Deserialize)]
struct Filtering {
    respect_git_ignore: Option<bool>,
    respect_gemini_ignore: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct Params {
    dir_path: String,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    file_filtering_options: Option<Filtering>,
}

pub struct ListDirectory;

impl Tool for ListDirectory {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "ReadFolder"
    }
    fn kind(&self) -> Kind {
        Kind::Search
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::Argument("dir_path"), enables_auto_edit: false }
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/list_directory.md").into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "dir_path": {"type": "string", "description": "The folder to list, absolute or relative to the workspace root."},
                    "ignore": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns matched against entry names; matching entries are left out."},
                    "file_filtering_options": {
                        "type": "object",
                        "description": "Optional: whether .gitignore and .geminiignore hide entries.",
                        "properties": {
                            "respect_git_ignore": {"type": "boolean", "description": "Optional: honour .gitignore (git repositories only). Default true."},
                            "respect_gemini_ignore": {"type": "boolean", "description": "Optional: honour .geminiignore. Default true."}
                        }
                    }
                },
                "required": ["dir_path"]
            }),
        }
    }

    /// `path` and `absolute_path` were older names of `dir_path`.
    fn normalize_args(&self, args: &mut Value) {
        rename_params(args, &[("path", "dir_path"), ("absolute_path", "dir_path")]);
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        let ws = &env.workspace;
        let path = ws.resolve_checked(&p.dir_path, Access::Read).map_err(|e| e.to_string())?;
        let f = p.file_filtering_options.unwrap_or_default();
        Ok(Box::new(ListCall {
            description: shorten_path(&ws.relative(&path.lexical)),
            dir: path.lexical,
            ignore: ignore_regex(&p.ignore)?,
            opts: ws.ignore_options(f.respect_git_ignore, f.respect_gemini_ignore),
            workspace: env.workspace.clone(),
        }))
    }
}

/// Upstream turns each `ignore` glob into an anchored, case-sensitive regex on the entry name:
/// `*` (and `**`) is any run, `?` one character, everything else literal. Here they are one
/// regex together (`None`: no pattern), within the glob limits: 16,334 patterns compiled one
/// by one took a call to 234 MB (issue 35).
fn ignore_regex(globs: &[String]) -> Result<Option<regex::Regex>, String> {
    toolbelt_core::limits::check_globs(globs.iter().map(String::as_str))?;
    if globs.is_empty() {
        return Ok(None);
    }
    let mut re = String::from("^(?:");
    for (i, glob) in globs.iter().enumerate() {
        if i > 0 {
            re.push('|');
        }
        for c in glob.chars() {
            match c {
                '*' => re.push_str(".*"),
                '?' => re.push('.'),
                c => re.push_str(&regex::escape(&c.to_string())),
            }
        }
    }
    re.push_str(")$");
    toolbelt_core::limits::check_pattern(&re, false)?;
    regex::RegexBuilder::new(&re)
        .size_limit(toolbelt_core::limits::PATTERN_PROGRAM_BYTES)
        .build()
        .map(Some)
        .map_err(|e| format!("Invalid ignore pattern: {e}"))
}

struct ListCall {
    dir: PathBuf,
    description: String,
    ignore: Option<regex::Regex>,
    opts: IgnoreOptions,
    workspace: std::sync::Arc<Workspace>,
}

#[async_trait]
impl Invocation for ListCall {
    fn description(&self) -> String {
        self.description.clone()
    }

    fn locations(&self) -> Vec<Location> {
        vec![Location { path: self.dir.display().to_string(), line: None }]
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let dir = self.dir.clone();
        let ignore = self.ignore.clone();
        let opts = self.opts;
        let ws = self.workspace.clone();
        let cancel = ctx.cancel.clone();
        match tokio::task::spawn_blocking(move || list(&ws, &dir, ignore.as_ref(), opts, &cancel))
            .await
        {
            Ok(r) => r,
            Err(e) => ToolResult::simple_error(
                ErrorType::UnhandledException,
                format!("list_directory worker failed: {e}"),
            ),
        }
    }
}

struct Entry {
    name: String,
    is_dir: bool,
    size: u64,
}

/// `display` with how many entries it leaves out, when it leaves some out.
pub(crate) fn not_listed(mut display: Value, key: &str, n: usize) -> Value {
    if n > 0 {
        display[key] = json!(n);
    }
    display
}

/// Entries one answer lists at most (what a million characters of answer can hold).
const LISTED_ENTRIES: usize = 20_000;
/// Entries the display lists.
const DISPLAY_ENTRIES: usize = 1_000;

fn list(
    ws: &Workspace,
    dir: &std::path::Path,
    ignore: Option<&regex::Regex>,
    opts: IgnoreOptions,
    cancel: &tokio_util::sync::CancellationToken,
) -> ToolResult {
    let abs = dir.display().to_string();
    let failed = |msg: String| {
        ToolResult::error(
            ErrorType::LsExecutionError,
            msg.clone(),
            msg,
            "Error: Failed to list directory.",
        )
    };
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) => {
            return failed(format!("Error listing directory: {}", node_error(&e, "stat", dir)));
        }
    };
    if !meta.is_dir() {
        let msg = format!("Error: Path is not a directory: {abs}");
        return ToolResult::error(
            ErrorType::PathIsNotADirectory,
            msg.clone(),
            msg,
            "Error: Path is not a directory.",
        );
    }
    // (name, is a symlink): only links need resolving to know where they lead. The entries
    // are read from the folder the file layer reached beneath a root, not from the name.
    let names: Vec<Named> = match read_names(ws, dir) {
        Ok(names) => names,
        Err(Listing::Refused(e)) => return failed(format!("Error listing directory: {e}")),
        Err(Listing::Io(e)) => {
            return failed(format!("Error listing directory: {}", node_error(&e, "scandir", dir)));
        }
    };
    if names.is_empty() {
        return ToolResult::text(format!("Directory {abs} is empty."), "Directory is empty.");
    }
    let mut ignored = 0usize;
    let mut hidden = 0usize;
    let unread = Unread::default();
    let mut entries = Vec::with_capacity(names.len());
    let dir_real = paths::robust_realpath(dir).unwrap_or_else(|_| dir.to_path_buf());
    for Named { name, utf8, link, stat, .. } in names {
        if !utf8 {
            unread.path(&PathError::not_utf8());
            continue;
        }
        if cancel.is_cancelled() {
            return ToolResult::simple_error(ErrorType::Cancelled, "Operation cancelled.");
        }
        let full = dir.join(&name);
        // Upstream tests entries without a trailing slash, so dir-only patterns keep folders.
        match unread.verdict(ws.ignore().check(&full, false, opts)) {
            Verdict::Kept => {}
            Verdict::Ignored => {
                ignored += 1;
                continue;
            }
            Verdict::LeftOut => continue,
        }
        if ignore.is_some_and(|re| re.is_match(&name)) {
            continue;
        }
        // As upstream: entries that lead outside the workspace (symlinks, dangling ones
        // included) count as ignored; sensitive entries (.git, .env, keys) are left out.
        let real = if link {
            ws.resolve_path(&full).map_or_else(|_| full.clone(), |r| r.real)
        } else {
            dir_real.join(&name)
        };
        let resolved = ResolvedPath { lexical: full.clone(), real };
        match ws.check_access(&resolved, Access::Read) {
            Err(PathError::Outside { .. }) => {
                ignored += 1;
                continue;
            }
            Err(PathError::Sensitive { origin: "sensitive_paths", .. }) => {
                hidden += 1;
                continue;
            }
            Err(e) => {
                unread.path(&e);
                continue;
            }
            Ok(()) => {}
        }
        // Plain entries as the folder handle saw them; links followed beneath the root by the
        // file layer (never by name again); entries that cannot be reached (dangling links, or
        // a link swapped to lead outside since) are dropped.
        match stat {
            Some((is_dir, size)) => entries.push(Entry { name, is_dir, size }),
            None => {
                if let Ok(m) = ws.metadata(&resolved) {
                    entries.push(Entry { name, is_dir: m.is_dir(), size: m.len() });
                }
            }
        }
    }
    let mut collator = crate::collate::collator();
    let mut order = |a: &Entry, b: &Entry| match (a.is_dir, b.is_dir) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => crate::collate::compare(&mut collator, &a.name, &b.name),
    };
    // The first LISTED_ENTRIES in order, found without sorting them all: a folder of a
    // million entries took 505 MB and 17 s for an answer that shows some 25,000 (issue 35).
    let total = entries.len();
    if total > LISTED_ENTRIES {
        entries.select_nth_unstable_by(LISTED_ENTRIES - 1, &mut order);
        entries.truncate(LISTED_ENTRIES);
    }
    entries.sort_by(&mut order);
    let mut llm = format!("Directory listing for {abs}:");
    for e in &entries {
        if e.is_dir {
            let _ = write!(llm, "\n[DIR] {}", e.name);
        } else {
            let _ = write!(llm, "\n{} ({} bytes)", e.name, e.size);
        }
    }
    if total > entries.len() {
        let _ = write!(
            llm,
            "\n\n({} more entries are not listed: the folder holds {total}; list a folder below it, or find files with glob)",
            total - entries.len()
        );
    }
    let mut summary = format!("Found {total} item(s).");
    if ignored > 0 {
        llm.push_str(&format!("\n\n({ignored} ignored)"));
        summary.push_str(&format!(" ({ignored} ignored)"));
    }
    if hidden > 0 {
        llm.push_str(&format!(
            "\n\n({hidden} hidden by sensitive-path rules; see allow_sensitive_paths)"
        ));
        summary.push_str(&format!(" ({hidden} hidden as sensitive)"));
    }
    let ignore_note = unread.ignore_note("entries");
    if !ignore_note.is_empty() {
        llm.push_str(&ignore_note);
        summary.push_str(" (some left out: an ignore file cannot be read)");
    }
    let read_note = unread.read_note("entries");
    if !read_note.is_empty() {
        llm.push_str(&read_note);
        summary.push_str(" (some left out: the file tools refuse their paths)");
    }
    let files: Vec<String> = entries
        .iter()
        .take(DISPLAY_ENTRIES)
        .map(|e| if e.is_dir { format!("[DIR] {}", e.name) } else { e.name.clone() })
        .collect();
    ToolResult {
        llm_content: toolbelt_core::Content::Text(llm),
        return_display: not_listed(
            json!({"summary": summary, "files": files}),
            "filesNotListed",
            total - entries.len().min(DISPLAY_ENTRIES),
        ),
        ..ToolResult::default()
    }
}

/// Why a folder's entries could not be read.
pub(crate) enum Listing {
    Refused(toolbelt_core::workspace::PathError),
    Io(std::io::Error),
}

/// One entry of a folder: its name, whether it is a symlink, and (for others) whether it is a
/// folder and its size, as the folder's handle saw them.
pub(crate) struct Named {
    pub(crate) name: String,
    /// The name is UTF-8 (otherwise `name` shows it with U+FFFD, a name no tool can open).
    pub(crate) utf8: bool,
    pub(crate) link: bool,
    /// A regular file (not a folder, link, FIFO, socket or device).
    pub(crate) regular: bool,
    pub(crate) stat: Option<(bool, u64)>,
}

/// The entries of `dir`, read from the handle the workspace's file layer opened beneath a root.
pub(crate) fn read_names(ws: &Workspace, dir: &std::path::Path) -> Result<Vec<Named>, Listing> {
    let resolved = ResolvedPath { lexical: dir.to_path_buf(), real: dir.to_path_buf() };
    #[cfg(unix)]
    {
        use toolbelt_core::workspace::OpenError;
        let fd = ws.open_dir(&resolved).map_err(|e| match e {
            OpenError::Path(p) => Listing::Refused(p),
            OpenError::Io(e) => Listing::Io(e),
        })?;
        let entries = rustix::fs::Dir::read_from(&fd).map_err(|e| Listing::Io(e.into()))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Listing::Io(e.into()))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let st = rustix::fs::statat(&fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok();
            let utf8 = std::str::from_utf8(name).is_ok();
            let name = String::from_utf8_lossy(name).into_owned();
            let kind = st.as_ref().map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode));
            let link = kind == Some(rustix::fs::FileType::Symlink);
            let stat = st.filter(|_| !link).map(|st| {
                (
                    kind == Some(rustix::fs::FileType::Directory),
                    u64::try_from(st.st_size).unwrap_or(0),
                )
            });
            let regular = kind == Some(rustix::fs::FileType::RegularFile);
            names.push(Named { name, utf8, link, regular, stat });
        }
        Ok(names)
    }
    #[cfg(not(unix))]
    {
        ws.check_access(&resolved, Access::Read).map_err(Listing::Refused)?;
        Ok(std::fs::read_dir(dir)
            .map_err(Listing::Io)?
            .filter_map(Result::ok)
            .map(|e| {
                let link = e.file_type().is_ok_and(|t| t.is_symlink());
                let utf8 = e.file_name().to_str().is_some();
                let regular = e.file_type().is_ok_and(|t| t.is_file());
                let name = e.file_name().to_string_lossy().into_owned();
                Named { name, utf8, link, regular, stat: None }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(glob: &str) -> regex::Regex {
        ignore_regex(&[glob.to_string()]).unwrap().unwrap()
    }

    #[test]
    fn ignore_globs_match_whole_names_literally() {
        let g = one("*.log");
        assert!(g.is_match("a.log") && !g.is_match("a.logx") && !g.is_match("alog"));
        let g = one("file?.(txt)");
        assert!(g.is_match("file1.(txt)") && !g.is_match("file12.(txt)"));
        assert!(one("**").is_match("anything"));
        // Together, each still matches the whole name.
        let g = ignore_regex(&["a*".into(), "*b".into()]).unwrap().unwrap();
        assert!(g.is_match("ax") && g.is_match("xb") && !g.is_match("xbx"));
        assert!(ignore_regex(&[]).unwrap().is_none());
    }
}
