//! Paths left out because an ignore file that applies to them may not be read (a named pipe, a
//! link out of the workspace; see `workspace::check_ignore_file`): whether it hides them cannot
//! be told, so they are not shown, and the answer names the file and what to do. Passing the
//! file over instead would show what a user keeps it for hiding.

use std::collections::BTreeMap;
use std::sync::Mutex;

use toolbelt_core::sync::LockExt as _;
use toolbelt_core::workspace::Unreadable;

/// What the ignore files say about one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Kept,
    Ignored,
    /// An ignore file that applies may not be read (recorded for the note).
    LeftOut,
}

/// Shared by the threads of one call.
#[derive(Debug, Default)]
pub(crate) struct LeftOut {
    /// Each unreadable ignore file, and how many paths it kept out.
    files: Mutex<BTreeMap<Unreadable, usize>>,
}

impl LeftOut {
    /// The verdict on a path from the ignore service's answer.
    pub(crate) fn verdict(&self, checked: Result<bool, Unreadable>) -> Verdict {
        match checked {
            Ok(false) => Verdict::Kept,
            Ok(true) => Verdict::Ignored,
            Err(u) => {
                *self.files.locked().entry(u).or_default() += 1;
                Verdict::LeftOut
            }
        }
    }

    /// The note for the answer (starting with a blank line), or `""` when nothing was left out.
    /// `what` names the paths (`file(s)`, `entries`). It does not suggest turning the ignore
    /// files off: that would show what the user keeps them for hiding.
    pub(crate) fn note(&self, what: &str) -> String {
        let files = self.files.locked();
        if files.is_empty() {
            return String::new();
        }
        let n: usize = files.values().sum();
        let mut s = format!(
            "\n\n({n} {what} left out: an ignore file that applies to them may not be read, so whether it hides them cannot be told."
        );
        for u in files.keys() {
            s.push_str(&format!("\n- {u}"));
        }
        s.push_str("\nAsk the user to fix it (a regular file inside the workspace) or remove it.)");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn names_each_file_once_and_counts_what_it_kept_out() {
        let l = LeftOut::default();
        assert_eq!(l.note("file(s)"), "");
        assert_eq!(l.verdict(Ok(false)), Verdict::Kept);
        assert_eq!(l.verdict(Ok(true)), Verdict::Ignored);
        let u = Unreadable {
            file: PathBuf::from("/w/.geminiignore"),
            why: "is a link that leads outside the workspace".into(),
            option: "respect_gemini_ignore",
        };
        assert_eq!(l.verdict(Err(u.clone())), Verdict::LeftOut);
        assert_eq!(l.verdict(Err(u)), Verdict::LeftOut);
        assert_eq!(
            l.note("file(s)"),
            "\n\n(2 file(s) left out: an ignore file that applies to them may not be read, so whether it hides them cannot be told.\n- /w/.geminiignore is a link that leads outside the workspace\nAsk the user to fix it (a regular file inside the workspace) or remove it.)"
        );
    }
}
