//! `read_file`: one file's content — text by line range, media as inline data.

use std::io::Read;
use std::path::Path;

use async_trait::async_trait;
use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::ledger::FileLedger;
use toolbelt_core::result::{Content, ErrorType, Part, ToolResult};
use toolbelt_core::schema::rename_params;
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};
use toolbelt_core::tool::{
    Declaration, ExecContext, Invocation, Location, ModelFamily, Tool, ToolEnv,
};
use toolbelt_core::workspace::{Access, ResolvedPath, Workspace};

use super::file_type::{self, FileType};
use super::text::{decode, utf16_len, utf16_prefix};
use super::{display_path, shorten_path};

pub const NAME: &str = "read_file";
/// Lines returned when no range is given.
pub const MAX_LINES: usize = 2000;
/// Longer lines are cut (UTF-16 code units, as upstream counts).
pub const MAX_LINE_LENGTH: usize = 2000;
/// Larger files are refused (exactly 20 MiB is allowed).
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
const MAX_SVG_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Deserialize)]
struct Params {
    file_path: String,
    start_line: Option<u64>,
    end_line: Option<u64>,
    /// Older versions: each line prefixed with its number (`     1|`; compat T5).
    #[serde(default)]
    enable_line_numbers: bool,
}

pub struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "ReadFile"
    }
    fn kind(&self) -> Kind {
        Kind::Read
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::Argument("file_path"), enables_auto_edit: false }
    }

    fn declaration(&self, family: ModelFamily) -> Declaration {
        let description = match family {
            ModelFamily::Legacy => include_str!("descriptions/read_file.legacy.md"),
            ModelFamily::Gemini3 => include_str!("descriptions/read_file.gemini3.md"),
        };
        Declaration {
            name: NAME.into(),
            description: description.into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "Path of the file to read, absolute or relative to the workspace root."},
                    "start_line": {"type": "integer", "minimum": 1, "description": "Optional: first line to return (1-based)."},
                    "end_line": {"type": "integer", "minimum": 1, "description": "Optional: last line to return (1-based, inclusive)."}
                },
                "required": ["file_path"]
            }),
        }
    }

    /// `absolute_path` / `path` were the file parameter's older names; `offset` (0-based) and
    /// `limit` (a line count) were the older range parameters.
    fn normalize_args(&self, args: &mut Value) {
        rename_params(args, &[("absolute_path", "file_path"), ("path", "file_path")]);
        let Value::Object(map) = args else { return };
        if map.contains_key("start_line") || map.contains_key("end_line") {
            return;
        }
        let offset = map.get("offset").and_then(Value::as_u64);
        let limit = map.get("limit").and_then(Value::as_u64).filter(|l| *l > 0);
        if offset.is_none() && limit.is_none() {
            return;
        }
        let start = offset.unwrap_or(0) + 1;
        map.remove("offset");
        map.remove("limit");
        map.insert("start_line".into(), json!(start));
        if let Some(l) = limit {
            map.insert("end_line".into(), json!(start + l - 1));
        }
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        if p.file_path.trim().is_empty() {
            return Err("The 'file_path' parameter must be non-empty.".into());
        }
        let ws = &env.workspace;
        let path = ws.resolve_checked(&p.file_path, Access::Read).map_err(|e| e.to_string())?;
        if let (Some(s), Some(e)) = (p.start_line, p.end_line)
            && s > e
        {
            return Err("start_line cannot be greater than end_line".into());
        }
        let opts = ws.ignore_options(None, None);
        match ws.is_ignored(&path, false, opts) {
            Ok(false) => {}
            Ok(true) => {
                return Err(format!(
                    "File path '{}' is ignored by configured ignore patterns.",
                    path.real.display()
                ));
            }
            Err(u) => {
                return Err(format!(
                    "File path '{}' is not read: whether the ignore files hide it cannot be told, because {u}. Ask the user to fix that file (a regular file inside the workspace) or remove it.",
                    path.real.display()
                ));
            }
        }
        Ok(Box::new(ReadFileCall {
            editor: env.editor.clone(),
            seen: env.files.clone(),
            shown: display_path(&path.real, ws.primary()),
            description: shorten_path(&ws.relative(&path.real)),
            ws: ws.clone(),
            path,
            start_line: p.start_line,
            end_line: p.end_line,
            numbered: p.enable_line_numbers,
        }))
    }

    /// The declared schema plus `enable_line_numbers` (older versions).
    fn accepted_parameters(&self) -> Option<Value> {
        Some(toolbelt_core::schema::with_properties(
            self.declaration(ModelFamily::Legacy).parameters,
            &[("enable_line_numbers", json!({"type": "boolean"}))],
        ))
    }
}

struct ReadFileCall {
    seen: std::sync::Arc<FileLedger>,
    ws: std::sync::Arc<Workspace>,
    /// An editor holding text files (an ACP client): UTF-8 text is read through it.
    editor: Option<std::sync::Arc<dyn toolbelt_core::editor::EditorFiles>>,
    path: ResolvedPath,
    shown: String,
    description: String,
    start_line: Option<u64>,
    end_line: Option<u64>,
    numbered: bool,
}

#[async_trait]
impl Invocation for ReadFileCall {
    fn description(&self) -> String {
        self.description.clone()
    }

    fn locations(&self) -> Vec<Location> {
        vec![Location { path: self.path.real.display().to_string(), line: self.start_line }]
    }

    /// A large file takes a turn among the costly calls (64 reads of a 19 MiB file at once
    /// took 1.35 GB, issue 35). A read holds its file some three times over: one over 8 MiB
    /// weighs two turns (four 20 MB reads at once beside other heavy calls took the process
    /// past 256 MiB).
    fn costly_turns(&self) -> u32 {
        let size = std::fs::metadata(&self.path.real).map_or(0, |m| m.len());
        if size > 8 << 20 { 2 } else { u32::from(size > LARGE_FILE_BYTES) }
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        if ctx.cancel.is_cancelled() {
            return ToolResult::simple_error(ErrorType::Cancelled, "Operation cancelled.");
        }
        let file = match Opened::open(&self.ws, &self.path, &self.shown) {
            Ok(f) => f,
            Err(refused) => return *refused,
        };
        let small = file.len <= INLINE_READ_BYTES;
        let (path, shown) = (self.path.real.clone(), self.shown.clone());
        let (start, end, numbered) = (self.start_line, self.end_line, self.numbered);
        let seen = self.seen.clone();
        let editor = self.editor.clone();
        let work = move || {
            read_opened(file, &path, &shown, &seen, editor.as_deref(), |text| {
                text_result(text, &shown, start, end, numbered)
            })
        };
        // A small regular file is read where the call runs: handing it to a worker thread and
        // back costs more than the read. Anything larger goes to the blocking pool (and so does
        // any read that asks the editor, which waits for its answer).
        if small && self.editor.is_none() {
            return work();
        }
        match ctx.spawn_blocking(work).await {
            Ok(r) => r,
            Err(e) => ToolResult::simple_error(
                ErrorType::UnhandledException,
                format!("read_file worker failed: {e}"),
            ),
        }
    }
}

/// Why the layer gave no handle: a path the rules refuse, or the file system's error.
enum OpenFailure {
    Refused(toolbelt_core::workspace::PathError),
    Io(std::io::Error),
}

impl From<std::io::Error> for OpenFailure {
    fn from(e: std::io::Error) -> Self {
        OpenFailure::Io(e)
    }
}

/// Opens through the workspace's file layer (beneath a root, without blocking on a FIFO).
fn open_read(ws: &Workspace, resolved: &ResolvedPath) -> Result<std::fs::File, OpenFailure> {
    #[cfg(unix)]
    {
        ws.open_read(resolved).map_err(|e| match e {
            toolbelt_core::workspace::OpenError::Path(p) => OpenFailure::Refused(p),
            toolbelt_core::workspace::OpenError::Io(e) => OpenFailure::Io(e),
        })
    }
    #[cfg(not(unix))]
    {
        ws.check_access(resolved, Access::Read).map_err(OpenFailure::Refused)?;
        Ok(std::fs::File::open(&resolved.real)?)
    }
}

/// Files up to this size are read on the task that runs the call rather than on the blocking
/// pool (a page-cache read of this size takes microseconds; the hand-over to a worker and back
/// takes longer than that).
const INLINE_READ_BYTES: u64 = 256 * 1024;

/// A file opened for reading, checked on the handle to be a regular file within the size limit.
struct Opened {
    file: std::fs::File,
    len: u64,
}

impl Opened {
    /// Opens without blocking (a FIFO put in the file's place cannot hang the open) and checks
    /// what was opened; what can't be read is answered as upstream answers it.
    fn open(ws: &Workspace, resolved: &ResolvedPath, shown: &str) -> Result<Self, Box<ToolResult>> {
        let path = resolved.real.as_path();
        let opened = open_read(ws, resolved).and_then(|file| Ok((file.metadata()?, file)));
        let (meta, file) = match opened {
            Ok(m) => m,
            Err(OpenFailure::Refused(e)) => {
                return Err(Box::new(ToolResult::simple_error(
                    ErrorType::PathNotInWorkspace,
                    e.to_string(),
                )));
            }
            Err(OpenFailure::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Box::new(ToolResult::error(
                    ErrorType::FileNotFound,
                    format!("File not found: {}", path.display()),
                    "Could not read file because no file was found at the specified path.",
                    "File not found.",
                )));
            }
            // Sockets (and, elsewhere, folders) can't be opened: say what the path is.
            Err(OpenFailure::Io(e)) => {
                return Err(Box::new(match std::fs::metadata(path) {
                    Ok(meta) => {
                        unreadable(path, &meta).unwrap_or_else(|| read_error(path, shown, &e))
                    }
                    Err(_) => read_error(path, shown, &e),
                }));
            }
        };
        if let Some(refused) = unreadable(path, &meta) {
            return Err(Box::new(refused));
        }
        Ok(Self { file, len: meta.len() })
    }
}

/// Folders, special files and files over the limit.
fn unreadable(path: &Path, meta: &std::fs::Metadata) -> Option<ToolResult> {
    let abs = path.display();
    if meta.is_dir() {
        return Some(ToolResult::error(
            ErrorType::TargetIsDirectory,
            format!("Path is a directory, not a file: {abs}"),
            "Could not read file because the provided path is a directory, not a file.",
            "Path is a directory.",
        ));
    }
    if !meta.is_file() {
        // FIFOs, sockets and devices would block or never end.
        return Some(ToolResult::error(
            ErrorType::ReadContentFailure,
            format!("Path is not a regular file: {abs}"),
            "Could not read file because the path is not a regular file (a pipe, socket or device).",
            "Not a regular file.",
        ));
    }
    (meta.len() > MAX_FILE_BYTES).then(|| too_large(path, meta.len()))
}

fn too_large(path: &Path, len: u64) -> ToolResult {
    let mb = len as f64 / 1_048_576.0;
    ToolResult::error(
        ErrorType::FileTooLarge,
        format!("File size exceeds the 20MB limit: {} ({mb:.2}MB)", path.display()),
        "File size exceeds the 20MB limit.",
        "File size exceeds the 20MB limit.",
    )
}

/// Reads one file as upstream's `processSingleFileContent` does; decoded text is handed to
/// `on_text`, which formats it for the calling tool.
/// Bytes actually read are recorded in `seen`, so later edits can tell if the file changed.
pub(crate) fn read(
    ws: &Workspace,
    resolved: &ResolvedPath,
    shown: &str,
    seen: &FileLedger,
    on_text: impl FnOnce(&str) -> ToolResult,
) -> ToolResult {
    match Opened::open(ws, resolved, shown) {
        Ok(file) => read_opened(file, &resolved.real, shown, seen, None, on_text),
        Err(refused) => *refused,
    }
}

/// A file larger than this is read in a costly call's turn.
const LARGE_FILE_BYTES: u64 = 1 << 20;

/// How a file's content is shown.
enum Show {
    Text,
    Svg,
    Inline { mime: &'static str, label: &'static str },
}

/// [`read`] on a file already opened: the first bytes decide what the file is, and the rest is
/// read only when the content is shown (never more than the size limit, whatever the size said).
fn read_opened(
    opened: Opened,
    path: &Path,
    shown: &str,
    seen: &FileLedger,
    editor: Option<&dyn toolbelt_core::editor::EditorFiles>,
    on_text: impl FnOnce(&str) -> ToolResult,
) -> ToolResult {
    let Opened { mut file, len } = opened;
    let (mut bytes, at_end) = match read_head(&mut file, len) {
        Ok(r) => r,
        Err(e) => return read_error(path, shown, &e),
    };
    let show = match file_type::detect_with(path, || file_type::is_binary(&bytes)) {
        FileType::Binary => {
            return ToolResult::text(
                format!("Cannot display content of binary file: {shown}"),
                format!("Skipped binary file: {shown}"),
            );
        }
        FileType::Svg if len > MAX_SVG_BYTES => {
            return ToolResult::text(
                format!("Cannot display content of SVG file larger than 1MB: {shown}"),
                format!("Skipped large SVG file (>1MB): {shown}"),
            );
        }
        FileType::Svg => Show::Svg,
        FileType::Text => Show::Text,
        FileType::Audio => match file_type::supported_audio_mime(path) {
            None => {
                return ToolResult::error(
                    ErrorType::ReadContentFailure,
                    format!(
                        "Unsupported audio file format for {}. Supported audio formats are MP3, WAV, AIFF, AAC, OGG, and FLAC.",
                        path.display()
                    ),
                    "Could not read audio file because its format is not supported. Supported audio formats are MP3, WAV, AIFF, AAC, OGG, and FLAC.",
                    format!("Unsupported audio file format: {shown}"),
                );
            }
            Some(mime) => Show::Inline { mime, label: "audio" },
        },
        kind @ (FileType::Image | FileType::Pdf | FileType::Video) => Show::Inline {
            mime: file_type::mime_for(path).unwrap_or("application/octet-stream"),
            label: match kind {
                FileType::Image => "image",
                FileType::Pdf => "pdf",
                _ => "video",
            },
        },
    };
    if !at_end {
        // Read the rest, one byte past the limit to notice a file that grew.
        let room = (MAX_FILE_BYTES + 1).saturating_sub(bytes.len() as u64);
        if let Err(e) = (&mut file).take(room).read_to_end(&mut bytes) {
            return read_error(path, shown, &e);
        }
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return too_large(path, bytes.len() as u64);
        }
    }
    match show {
        Show::Svg => {
            seen.record(path, &bytes);
            ToolResult::text(decode(&bytes).0, format!("Read SVG as text: {shown}"))
        }
        // UTF-8 text an editor holds is read from it: an unsaved buffer is what the person
        // sees (the layer above has checked the path; other encodings stay with the disk).
        Show::Text => match editor.and_then(|e| editor_text(e, path, &bytes)) {
            Some(text) => {
                seen.record(path, text.as_bytes());
                on_text(&text)
            }
            None => {
                seen.record(path, &bytes);
                on_text(&decode(&bytes).0)
            }
        },
        Show::Inline { mime, label } => ToolResult {
            llm_content: Content::Part(Part::inline(
                mime,
                base64::engine::general_purpose::STANDARD.encode(bytes),
            )),
            return_display: Value::String(format!("Read {label} file: {shown}")),
            ..ToolResult::default()
        },
    }
}

/// The editor's text of a file whose bytes on disk are plain UTF-8; `None` otherwise, or when
/// the editor cannot say (the disk's bytes are used then).
fn editor_text(
    editor: &dyn toolbelt_core::editor::EditorFiles,
    path: &Path,
    bytes: &[u8],
) -> Option<String> {
    if bytes.starts_with(b"\xef\xbb\xbf")
        || bytes.contains(&0)
        || std::str::from_utf8(bytes).is_err()
    {
        return None;
    }
    editor
        .read_text(path)
        .map_err(|e| tracing::warn!("the editor could not read {}: {e}", path.display()))
        .ok()
}

/// The first [`file_type::HEAD_BYTES`] of a regular file of `len` bytes (as it was when
/// opened), and whether that was all of it. A file that fits is asked for one byte more than its
/// size: a short read of a regular file means its end, which saves the read that would only
/// return nothing.
fn read_head(file: &mut std::fs::File, len: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let capacity = usize::try_from(len.min(MAX_FILE_BYTES)).unwrap_or(0).saturating_add(1);
    let fits = capacity <= file_type::HEAD_BYTES;
    let mut bytes = vec![0u8; capacity.min(file_type::HEAD_BYTES)];
    let ask = bytes.len();
    let mut got = 0;
    let at_end = loop {
        match file.read(&mut bytes[got..]) {
            Ok(0) => break true,
            Ok(n) => {
                got += n;
                if got == ask {
                    break false;
                }
                if fits {
                    break true;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    bytes.truncate(got);
    bytes.reserve(capacity.saturating_sub(got));
    Ok((bytes, at_end))
}

fn read_error(path: &Path, shown: &str, e: &std::io::Error) -> ToolResult {
    ToolResult::error(
        ErrorType::ReadContentFailure,
        format!("Error reading file {}: {e}", path.display()),
        format!("Error reading file {shown}: {e}"),
        format!("Error reading file {shown}: {e}"),
    )
}

/// read_file's wording of a selection: a header when anything was left out.
fn text_result(
    content: &str,
    shown: &str,
    start_line: Option<u64>,
    end_line: Option<u64>,
    numbered: bool,
) -> ToolResult {
    let Selection { mut body, first: a, last: b, total: n, shortened, ranged } =
        select_lines(content, start_line, end_line, numbered);
    let suffix = if shortened { " (some lines were shortened)" } else { "" };
    let display = if ranged {
        format!("Read lines {a}-{b} of {n} from {shown}{suffix}")
    } else if shortened {
        format!("Read all {n} lines from {shown}{suffix}")
    } else {
        String::new()
    };
    if ranged || shortened {
        // The header put before the text in its own buffer (not a second copy of the text).
        let header = format!(
            "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines {a}-{b} of {n} total lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: {}.\n\n--- FILE CONTENT (truncated) ---\n",
            b + 1
        );
        body.insert_str(0, &header);
        ToolResult::text(body, display).with_summary(format!("{a}-{b} of {n}"))
    } else {
        let count = body.split('\n').count();
        ToolResult::text(body, display).with_summary(format!("{count} lines"))
    }
}

mod lines;
pub(crate) use lines::{Selection, select_lines};

#[cfg(test)]
mod tests;
