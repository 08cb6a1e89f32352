//! read_many_files, one file at a time (run on any thread): the checks on what the walk
//! yielded, then the read and the text the model gets.

use crate::search::unread::{Unread, Verdict};
use std::path::Path;

use toolbelt_core::ToolResult;
use toolbelt_core::ledger::FileLedger;
use toolbelt_core::result::Content;
use toolbelt_core::workspace::{OpenError, PathError, ResolvedPath, paths};

use super::super::file_type::{self, FileType};
use super::super::read_file::{read, select_lines};
use super::{Job, TRUNCATION_WARNING};

/// A file the walk yielded, after the checks.
pub(super) enum Checked {
    /// Its real path, and its size when it was confirmed.
    Kept(ResolvedPath, u64),
    Ignored,
    /// An ignore file that applies may not be read.
    LeftOut,
    Hidden,
    Outside,
    Gone,
}

/// A kept file, read.
pub(super) enum Read {
    Cancelled,
    /// An image, PDF or audio file no pattern asked for.
    Asset,
    Done {
        result: Box<ToolResult>,
        seen: FileLedger,
    },
}

impl Job {
    /// What the walk yielded, checked: ignored, refused, gone, or kept with its real path.
    pub(super) fn check(&self, f: &Path, ino: Option<u64>, unread: &Unread) -> Checked {
        let ws = &self.workspace;
        if let Some(out) = self.ignored(f, unread) {
            return out;
        }
        // The walk went by name: what it yielded must be reached beneath a root, allowed, and
        // (for a plain file) be the very file it listed. Refused files are counted, not named:
        // a name from a folder swapped for a link to outside is an outside name.
        let size = match ws.confirm_walked(f, ino) {
            Ok(meta) => meta.len(),
            Err(OpenError::Path(PathError::Sensitive { .. })) => return Checked::Hidden,
            Err(OpenError::Path(PathError::Outside { .. })) => return Checked::Outside,
            // Gone or changed while the folder was walked; or not read at all (counted).
            Err(e) => {
                unread.open(&e);
                return Checked::Gone;
            }
        };
        // The walk starts at resolved roots and does not follow links: only a link (no inode
        // recorded) can lead elsewhere.
        let real = match ino {
            Some(_) => f.to_path_buf(),
            None => paths::robust_realpath(f).unwrap_or_else(|_| f.to_path_buf()),
        };
        // What a link leads to is read, and shown by that name: the ignore rules must pass it
        // too (found by the review of session 4: a link to an ignored file printed it).
        if real != f
            && let Some(out) = self.ignored(&real, unread)
        {
            return out;
        }
        Checked::Kept(ResolvedPath { lexical: f.to_path_buf(), real }, size)
    }

    /// What the ignore rules make of `path`, when they keep it out.
    fn ignored(&self, path: &Path, unread: &Unread) -> Option<Checked> {
        match unread.verdict(self.workspace.ignore().check(path, false, self.opts)) {
            Verdict::Kept => None,
            Verdict::Ignored => Some(Checked::Ignored),
            Verdict::LeftOut => Some(Checked::LeftOut),
        }
    }

    /// One kept file read and formatted as the model gets it (on any thread). What it read is
    /// recorded in a ledger of its own, which joins the session's only if the file is taken.
    pub(super) fn read_one(&self, f: &ResolvedPath) -> Read {
        if self.cancel.is_cancelled() {
            return Read::Cancelled;
        }
        let ws = &self.workspace;
        let shown = ws.relative(&f.real);
        // By the name alone: the content is only ever read through the file layer's handle
        // (a FIFO swapped in here would block a read by name).
        let kind = file_type::detect_with(&f.real, || true);
        if matches!(kind, FileType::Image | FileType::Pdf | FileType::Audio)
            && !self.requested(&f.real)
        {
            return Read::Asset;
        }
        let seen = FileLedger::default();
        let (start, end, numbered) = self.lines;
        let header = format!("--- {} ---\n\n", f.real.display());
        let mut formatted = false;
        let result = read(ws, f, &shown, &seen, |text| {
            formatted = true;
            let sel = select_lines(text, start, end, numbered);
            // A range asked for is not a truncation; the 2,000-line cut of an open range is.
            let warned = sel.shortened || (end.is_none() && sel.last < sel.total);
            let body = sel.body;
            let warning = if warned { TRUNCATION_WARNING } else { "" };
            // One buffer, sized once: the header, the warning, the text and the blank lines.
            let mut text = String::with_capacity(header.len() + warning.len() + body.len() + 2);
            text.push_str(&header);
            text.push_str(warning);
            text.push_str(&body);
            text.push_str("\n\n");
            ToolResult::text(text, "")
        });
        let result = match result.llm_content {
            // Text the file's content did not make (a binary file's notice): framed the same.
            Content::Text(t) if !formatted && result.error.is_none() => {
                ToolResult { llm_content: Content::Text(format!("{header}{t}\n\n")), ..result }
            }
            _ => result,
        };
        Read::Done { result: Box::new(result), seen }
    }
}
