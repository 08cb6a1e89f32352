//! What a walk could not read for want of resources or through an I/O error (the open-file
//! limit, memory, a failing disk): a search that met one gives an answer that says it is
//! partial and what to do, never a shorter list that looks whole. A folder or file the user may
//! not read, or one that went away during the walk, is still skipped without a word, as
//! upstream's tools skip them; a file the workspace's rules refuse is counted by each tool.
//!
//! A path the file layer refuses as malformed (a newline or a tab in a folder's name) is left
//! out too, since the model could not hand it to another tool, but never silently: the note
//! says how many and why.
//!
//! So is a path an ignore file applies to that may not be read (a named pipe, a link out of the
//! workspace; see `workspace::check_ignore_file`): whether it hides the path cannot be told, so
//! the path is not shown, and the note names the file. Passing the file over instead would
//! show what a user keeps it for hiding.

use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use toolbelt_core::sync::LockExt as _;
use toolbelt_core::workspace::{OpenError, PathError, Unreadable};

/// What the ignore files say about one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Kept,
    Ignored,
    /// An ignore file that applies may not be read (counted for the note).
    LeftOut,
}

/// Shared by the threads of one search.
#[derive(Debug, Default)]
pub(crate) struct Unread {
    count: AtomicUsize,
    /// The first such error, as the system put it.
    first: Mutex<Option<io::Error>>,
    /// Paths refused as malformed: how many, and the first reason.
    malformed: Mutex<(usize, String)>,
    /// Folders a walk listed that were something else when their turn came.
    changed: AtomicUsize,
    /// Each ignore file that may not be read, and how many paths it kept out.
    ignore_files: Mutex<BTreeMap<Unreadable, usize>>,
}

impl Unread {
    /// The walk's entry, or `None` after counting the error when it leaves the answer partial.
    pub(crate) fn entry(
        &self,
        entry: Result<ignore::DirEntry, ignore::Error>,
    ) -> Option<ignore::DirEntry> {
        match entry {
            Ok(e) => Some(e),
            Err(e) => {
                if let Some(io) = e.io_error() {
                    self.io(io);
                }
                None
            }
        }
    }

    /// Counts a failed open or confirmation of a file the walk found, when it leaves the answer
    /// partial (a refusal by the workspace's rules does not).
    pub(crate) fn open(&self, e: &OpenError) {
        match e {
            OpenError::Io(io) => self.io(io),
            OpenError::Path(p) => self.path(p),
        }
    }

    /// Counts a folder that was replaced (by a file or a symlink) while the walk ran.
    pub(crate) fn changed(&self) {
        self.changed.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a path the file layer refused as malformed (other refusals are the tools' to
    /// count).
    pub(crate) fn path(&self, e: &PathError) {
        if let PathError::Invalid(why) = e {
            let mut m = self.malformed.locked();
            if m.0 == 0 {
                m.1.clone_from(why);
            }
            m.0 += 1;
        }
    }

    /// Counts `e` when it leaves the answer partial.
    pub(crate) fn io(&self, e: &io::Error) {
        if !leaves_out(e) {
            return;
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first.locked();
        if first.is_none() {
            *first = Some(match os_code(e) {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(e.kind(), e.to_string()),
            });
        }
    }

    /// The verdict on a path from the ignore service's answer.
    pub(crate) fn verdict(&self, checked: Result<bool, Unreadable>) -> Verdict {
        match checked {
            Ok(false) => Verdict::Kept,
            Ok(true) => Verdict::Ignored,
            Err(u) => {
                *self.ignore_files.locked().entry(u).or_default() += 1;
                Verdict::LeftOut
            }
        }
    }

    /// How many paths were left out for an ignore file that may not be read.
    pub(crate) fn left_out(&self) -> usize {
        self.ignore_files.locked().values().sum()
    }

    /// How many folders or files could not be read.
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// The note on paths left out for an ignore file that may not be read (starting with a
    /// blank line), or `""`. `what` names the paths (`file(s)`, `entries`). It does not suggest
    /// turning the ignore files off: that would show what the user keeps them for hiding.
    pub(crate) fn ignore_note(&self, what: &str) -> String {
        let n = self.left_out();
        let files = self.ignore_files.locked();
        if files.is_empty() {
            return String::new();
        }
        let mut s = format!(
            "\n\n({n} {what} left out: an ignore file that applies to them may not be read, so whether it hides them cannot be told."
        );
        for u in files.keys() {
            s.push_str(&format!("\n- {u}"));
        }
        s.push_str("\nAsk the user to fix it (a regular file inside the workspace) or remove it.)");
        s
    }

    /// The note on what could not be read or shown (each part starting with a blank line), or
    /// `""`. `what` names the paths (`file(s)`, `entries`).
    pub(crate) fn read_note(&self, what: &str) -> String {
        let mut note = String::new();
        let (n, why) = &*self.malformed.locked();
        if *n > 0 {
            note = format!(
                "\n\n({n} {what} left out: the file tools refuse their paths ({why}); rename them, or reach them with run_shell_command.)"
            );
        }
        let n = self.changed.load(Ordering::Relaxed);
        if n > 0 {
            note.push_str(&format!(
                "\n\n({n} folder(s) changed while they were walked (replaced by a file or a link), and what they held is not listed: these results may be partial; search again.)"
            ));
        }
        let n = self.count();
        if let Some((what, e)) = self.first.locked().as_ref().map(|e| (advice(e), e.to_string())) {
            note.push_str(&format!(
                "\n\n({n} folder(s) or file(s) could not be read: {e}. These results are partial; {what}.)"
            ));
        }
        note
    }

    /// Both notes on files, for the answer.
    pub(crate) fn note(&self) -> String {
        self.ignore_note("file(s)") + &self.read_note("file(s)")
    }
}

/// What to do about `e`.
fn advice(e: &io::Error) -> &'static str {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        match e.raw_os_error().map(Errno::from_raw) {
            Some(Errno::EMFILE | Errno::ENFILE) => {
                return "raise the open-file limit (ulimit -n) and search again";
            }
            Some(Errno::ENOMEM) => return "free some memory and search again",
            _ => {}
        }
    }
    if e.kind() == io::ErrorKind::OutOfMemory {
        return "free some memory and search again";
    }
    "search again, or search the folders concerned with run_shell_command"
}

/// The system's error code behind `e`, looking through the errors that wrap one (the
/// sequential walk hands a folder it could not open as an `io::Error` holding a `walkdir`
/// error, whose own code is gone).
fn os_code(e: &io::Error) -> Option<i32> {
    if let Some(code) = e.raw_os_error() {
        return Some(code);
    }
    let mut inner: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|r| r as _);
    while let Some(err) = inner {
        if let Some(code) = err.downcast_ref::<io::Error>().and_then(io::Error::raw_os_error) {
            return Some(code);
        }
        inner = err.source();
    }
    None
}

/// Whether `e` means the system failed to read something that is there: resources ran out or
/// the disk failed (not a refusal of access, not a file gone meanwhile).
fn leaves_out(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        let code = os_code(e);
        [Errno::EMFILE, Errno::ENFILE, Errno::ENOMEM, Errno::EIO]
            .iter()
            .any(|c| code == Some(*c as i32))
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::OutOfMemory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_that_leave_something_out_are_counted_and_named() {
        let u = Unread::default();
        u.io(&io::Error::from(io::ErrorKind::NotFound));
        u.io(&io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!((u.count(), u.note()), (0, String::new()));
        #[cfg(unix)]
        {
            u.io(&io::Error::from_raw_os_error(nix::errno::Errno::EMFILE as i32));
            u.open(&OpenError::Io(io::Error::from_raw_os_error(nix::errno::Errno::ENOMEM as i32)));
            assert_eq!(u.count(), 2);
            let note = u.note();
            assert!(note.contains("2 folder(s) or file(s) could not be read"), "{note}");
            assert!(note.contains("os error 24") && note.contains("ulimit -n"), "{note}");
        }
        // The sequential walk wraps the system's error (a `walkdir` error inside an
        // `io::Error`, no code of its own): a folder it could not open for want of file
        // handles was passed over without a word.
        #[cfg(unix)]
        {
            #[derive(Debug)]
            struct Wrapped(io::Error);
            impl std::fmt::Display for Wrapped {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    write!(f, "walking: {}", self.0)
                }
            }
            impl std::error::Error for Wrapped {
                fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                    Some(&self.0)
                }
            }
            let emfile = || io::Error::from_raw_os_error(nix::errno::Errno::EMFILE as i32);
            let u = Unread::default();
            u.io(&io::Error::other(Wrapped(emfile())));
            u.io(&io::Error::other(emfile()));
            assert_eq!(u.count(), 2);
            assert!(u.note().contains("os error 24") && u.note().contains("ulimit -n"));
        }
        let u = Unread::default();
        u.open(&OpenError::Path(PathError::Outside {
            path: "p".into(),
            dirs: "d".into(),
            temp: "t".into(),
        }));
        assert_eq!(u.note(), "");
        u.path(&PathError::Invalid("a newline".into()));
        u.path(&PathError::Invalid("too long".into()));
        assert_eq!(
            u.read_note("entries"),
            "\n\n(2 entries left out: the file tools refuse their paths (a newline); rename them, or reach them with run_shell_command.)"
        );
    }

    #[test]
    fn names_each_unreadable_ignore_file_once_and_counts_what_it_kept_out() {
        let l = Unread::default();
        assert_eq!(l.ignore_note("file(s)"), "");
        assert_eq!(l.verdict(Ok(false)), Verdict::Kept);
        assert_eq!(l.verdict(Ok(true)), Verdict::Ignored);
        let u = Unreadable {
            file: std::path::PathBuf::from("/w/.geminiignore"),
            why: "is a link that leads outside the workspace".into(),
        };
        assert_eq!(l.verdict(Err(u.clone())), Verdict::LeftOut);
        assert_eq!(l.verdict(Err(u)), Verdict::LeftOut);
        assert_eq!(
            l.ignore_note("file(s)"),
            "\n\n(2 file(s) left out: an ignore file that applies to them may not be read, so whether it hides them cannot be told.\n- /w/.geminiignore is a link that leads outside the workspace\nAsk the user to fix it (a regular file inside the workspace) or remove it.)"
        );
    }
}
