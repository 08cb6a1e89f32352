//! The moment a call's effect becomes visible (an edit's atomic rename), held against the
//! scheduler giving the call up. A call reported as timed out or cancelled has changed nothing
//! (issue 35: an edit computed on the blocking pool could still be written after the
//! scheduler had reported "timed out ... and was stopped", overlapping the next batch's edits).
//!
//! The tool commits through [`CommitGate::commit`]; the scheduler, before it reports a timeout
//! or a cancellation, calls [`CommitGate::revoke`] under the same lock: either the commit already
//! happened (the call's result is then reported as it is), or it never will.

use std::sync::{Arc, Mutex};

use crate::sync::LockExt;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Live,
    Committed,
    Revoked,
}

/// One call's commit point (clones share it).
#[derive(Debug, Default, Clone)]
pub struct CommitGate(Arc<Mutex<State>>);

/// The call was given up before it changed anything.
pub const REVOKED: &str = "the call was stopped before it changed anything";

impl CommitGate {
    /// A live gate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `commit`, the step that makes the call's effect visible, unless the call was given
    /// up; the scheduler cannot give it up while `commit` runs. A given-up call gets an
    /// `Interrupted` error and nothing runs.
    pub fn commit<T>(&self, commit: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        let mut state = self.0.locked();
        if *state == State::Revoked {
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, REVOKED));
        }
        let out = commit()?;
        *state = State::Committed;
        Ok(out)
    }

    /// Gives the call up: from now on nothing commits. Returns whether it had already committed
    /// (its effect is then visible, and its result is what to report).
    pub fn revoke(&self) -> bool {
        let mut state = self.0.locked();
        if *state == State::Committed {
            return true;
        }
        *state = State::Revoked;
        false
    }

    /// Whether the call committed.
    pub fn committed(&self) -> bool {
        *self.0.locked() == State::Committed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revoked_gate_commits_nothing_and_a_committed_one_says_so() {
        let g = CommitGate::new();
        assert!(!g.revoke());
        let mut ran = false;
        let err = g.commit(|| {
            ran = true;
            Ok(())
        });
        assert!(err.is_err() && !ran);
        let g = CommitGate::new();
        g.commit(|| Ok(())).unwrap();
        assert!(g.revoke() && g.committed());
    }

    /// The scheduler's revoke and the tool's commit race: whatever the order, "revoked" means
    /// the commit never ran, and a commit that ran is reported as done.
    #[test]
    fn revoke_and_commit_never_both_win() {
        for _ in 0..200 {
            let g = CommitGate::new();
            let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (g2, d2) = (g.clone(), done.clone());
            let t = std::thread::spawn(move || {
                let _ = g2.commit(|| {
                    std::thread::yield_now();
                    d2.store(true, std::sync::atomic::Ordering::SeqCst);
                    Ok(())
                });
            });
            let committed = g.revoke();
            t.join().unwrap();
            assert_eq!(committed, done.load(std::sync::atomic::Ordering::SeqCst));
        }
    }
}
