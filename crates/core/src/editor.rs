//! The editor's view of files: an editor driving toolbelt (an ACP client) may offer to read and
//! write text files itself, so that unsaved buffers are seen and edits land in its undo
//! history. Tools ask it only after the workspace's file layer has checked the path (beneath a
//! root, not sensitive, a regular text file within the size cap), and only for UTF-8 text:
//! what the editor cannot hold as text (other encodings, binary files) stays with the file
//! layer.

use std::path::Path;

/// Files as an editor holds them. Both calls block until the editor answers (callers run them
/// on the blocking pool or where blocking is allowed).
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    /// The text of `path` as the editor has it (an open buffer's unsaved text included);
    /// `Err` with the editor's reason when it cannot say.
    fn read_text(&self, path: &Path) -> Result<String, String>;

    /// Replaces `path`'s text through the editor (which creates the file when it is new).
    fn write_text(&self, path: &Path, text: &str) -> Result<(), String>;
}
