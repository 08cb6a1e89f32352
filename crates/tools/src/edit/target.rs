//! The file an edit tool reads and replaces, reached only through the workspace's file layer:
//! beneath a root, sensitive files refused, regular files only, at most the size cap, and
//! written atomically with no leftovers.

use std::sync::Arc;

use toolbelt_core::editor::EditorFiles;
use toolbelt_core::result::ErrorType;
use toolbelt_core::workspace::{ResolvedPath, Workspace};

/// Why the current file cannot be edited.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The rules or the file's kind refuse it: the error type and message for the model.
    Refused(ErrorType, String),
    /// The file system's error.
    Io(std::io::Error),
}

/// One file an edit works on.
#[derive(Clone)]
pub(crate) struct EditTarget {
    ws: Arc<Workspace>,
    /// The largest file read (settings: `edit_max_file_bytes`).
    limit: u64,
    /// The path as resolved when the call was built.
    pub path: ResolvedPath,
    /// The editor that holds the file's text, when one offered to (an ACP client).
    editor: Option<Arc<dyn EditorFiles>>,
}

impl EditTarget {
    pub(crate) fn new(ws: Arc<Workspace>, path: ResolvedPath, limit: u64) -> Self {
        Self { ws, limit, path, editor: None }
    }

    /// Reads and writes UTF-8 text through `editor` (after the file layer's checks).
    pub(crate) fn with_editor(mut self, editor: Option<Arc<dyn EditorFiles>>) -> Self {
        self.editor = editor;
        self
    }

    /// The file's bytes now (`None`: it does not exist): the editor's text of it when an editor
    /// holds it and the file is UTF-8 (an unsaved buffer is what the person sees).
    /// The largest file an edit reads, and the largest it may make.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    pub(crate) fn read(&self) -> Result<Option<Vec<u8>>, ReadError> {
        let on_disk = self.read_disk()?;
        match (&self.editor, on_disk) {
            (Some(editor), Some(bytes)) if is_plain_utf8(&bytes) => {
                match editor.read_text(&self.path.real) {
                    Ok(text) => Ok(Some(text.into_bytes())),
                    Err(e) => {
                        tracing::warn!(
                            "the editor could not read {}: {e}",
                            self.path.real.display()
                        );
                        Ok(Some(bytes))
                    }
                }
            }
            (_, on_disk) => Ok(on_disk),
        }
    }

    /// The file's bytes on disk (`None`: it does not exist). Nothing is read from a FIFO,
    /// socket or device, and nothing from a file over the size cap.
    fn read_disk(&self) -> Result<Option<Vec<u8>>, ReadError> {
        #[cfg(unix)]
        {
            use toolbelt_core::workspace::{FileKindError, OpenError};
            let target = match self.ws.write_target(&self.path, false) {
                Ok(t) => t,
                Err(OpenError::Path(p)) => {
                    return Err(ReadError::Refused(ErrorType::PathNotInWorkspace, p.to_string()));
                }
                Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(None);
                }
                Err(OpenError::Io(e)) => return Err(ReadError::Io(e)),
            };
            let abs = self.path.real.display();
            let existing = match target.read_existing(&self.ws, self.limit) {
                Ok(r) => r,
                Err(OpenError::Path(p)) => {
                    return Err(ReadError::Refused(ErrorType::PathNotInWorkspace, p.to_string()));
                }
                Err(OpenError::Io(e)) => return Err(ReadError::Io(e)),
            };
            match existing {
                Ok(bytes) => Ok(bytes),
                // As reading a folder by name fails (EISDIR): each tool words it its own way.
                Err(FileKindError::Directory) => {
                    Err(ReadError::Io(std::io::Error::from_raw_os_error(21)))
                }
                Err(FileKindError::Special) => Err(ReadError::Refused(
                    ErrorType::ReadContentFailure,
                    format!("Path is not a regular file: {abs}"),
                )),
                Err(FileKindError::TooLarge { size, limit }) => Err(ReadError::Refused(
                    ErrorType::FileTooLarge,
                    format!(
                        "File size exceeds the {}MB limit: {abs} ({:.2}MB). Edit it in parts with a shell command, or raise edit_max_file_bytes.",
                        limit / 1_048_576,
                        size as f64 / 1_048_576.0
                    ),
                )),
            }
        }
        #[cfg(not(unix))]
        {
            self.ws
                .check_access(&self.path, toolbelt_core::workspace::Access::Write)
                .map_err(|p| ReadError::Refused(ErrorType::PathNotInWorkspace, p.to_string()))?;
            match std::fs::read(&self.path.real) {
                Ok(b) => Ok(Some(b)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(ReadError::Io(e)),
            }
        }
    }

    /// Replaces the file with `bytes` (missing folders created), atomically; the rename goes
    /// through `gate` (nothing is renamed once the scheduler gave the call up).
    pub(crate) fn write(
        &self,
        bytes: &[u8],
        gate: &toolbelt_core::commit::CommitGate,
    ) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            use toolbelt_core::workspace::OpenError;
            let target = self.ws.write_target(&self.path, true).map_err(|e| match e {
                OpenError::Path(p) => {
                    std::io::Error::new(std::io::ErrorKind::PermissionDenied, p.to_string())
                }
                OpenError::Io(e) => e,
            })?;
            // Through the editor for UTF-8 text, once the layer has checked the path and made
            // its folders: the edit lands in the editor's buffer and undo history.
            if let Some(editor) = &self.editor
                && is_plain_utf8(bytes)
                && let Ok(text) = std::str::from_utf8(bytes)
            {
                return gate.commit(|| {
                    editor.write_text(target.real(), text).map_err(std::io::Error::other)
                });
            }
            target.write(bytes, gate)
        }
        #[cfg(not(unix))]
        {
            if let Some(parent) = self.path.real.parent() {
                std::fs::create_dir_all(parent)?;
            }
            gate.commit(|| toolbelt_core::files::atomic_write(&self.path.real, bytes))
        }
    }
}

/// UTF-8 text an editor holds as it is: no byte-order mark (an editor keeps that outside the
/// text), no NUL.
fn is_plain_utf8(bytes: &[u8]) -> bool {
    !bytes.starts_with(b"\xef\xbb\xbf") && !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}
