//! The session's approval mode, and who may change it. A person chooses the mode a session
//! starts in; a model's actions (entering or leaving plan mode) may lower it, or return it to
//! where the person started, never raise it above that (issue 34: a model left plan mode into
//! `yolo`, headless, even with `security.disableYoloMode`). A person may choose any mode,
//! `yolo` aside when it is disabled. This is the one place a mode is set, for every front end.

use std::sync::Mutex;

use crate::policy::ApprovalMode;
use crate::sync::LockExt;

/// Why a mode could not be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// `security.disableYoloMode` (or an administrator) forbids `yolo`.
    #[error("YOLO mode is disabled by the security.disableYoloMode setting")]
    YoloDisabled,
}

#[derive(Debug)]
struct State {
    now: ApprovalMode,
    start: ApprovalMode,
    yolo_disabled: bool,
}

/// A session's approval mode.
#[derive(Debug)]
pub struct SessionMode(Mutex<State>);

impl SessionMode {
    /// A session a person started in `start` (`yolo` refused by the caller when disabled).
    pub fn new(start: ApprovalMode, yolo_disabled: bool) -> Self {
        let start = if yolo_disabled && start == ApprovalMode::Yolo {
            ApprovalMode::Default
        } else {
            start
        };
        SessionMode(Mutex::new(State { now: start, start, yolo_disabled }))
    }

    /// The mode now.
    pub fn get(&self) -> ApprovalMode {
        self.0.locked().now
    }

    /// The mode the person started the session in.
    pub fn start(&self) -> ApprovalMode {
        self.0.locked().start
    }

    /// The most a model may raise the mode to: where the person started, and at least
    /// `default` (leaving plan mode is always allowed; `default` asks before anything changes).
    pub fn model_ceiling(&self) -> ApprovalMode {
        self.0.locked().start.max(ApprovalMode::Default)
    }

    /// A model's action (entering or leaving plan mode): `wanted`, but never above
    /// [`Self::model_ceiling`]. Returns the mode now in effect.
    pub fn set_by_model(&self, wanted: ApprovalMode) -> ApprovalMode {
        let mut s = self.0.locked();
        let ceiling = s.start.max(ApprovalMode::Default);
        s.now = wanted.min(ceiling);
        s.now
    }

    /// A person's choice: any mode, `yolo` aside when it is disabled.
    pub fn set_by_person(&self, wanted: ApprovalMode) -> Result<ApprovalMode, ModeError> {
        let mut s = self.0.locked();
        if wanted == ApprovalMode::Yolo && s.yolo_disabled {
            return Err(ModeError::YoloDisabled);
        }
        s.now = wanted;
        Ok(s.now)
    }

    /// Whether `yolo` is disabled for this session.
    pub fn yolo_disabled(&self) -> bool {
        self.0.locked().yolo_disabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ApprovalMode::*;

    /// Issue 34, finding 1: a model could switch a headless session to yolo through
    /// enter_plan_mode / exit_plan_mode, even with `disableYoloMode`.
    #[test]
    fn a_model_never_raises_the_mode_above_where_the_person_started() {
        let m = SessionMode::new(Default, false);
        assert_eq!(m.set_by_model(Plan), Plan);
        assert_eq!(m.set_by_model(Yolo), Default);
        assert_eq!(m.set_by_model(AutoEdit), Default);
        let m = SessionMode::new(AutoEdit, false);
        assert_eq!(m.set_by_model(Plan), Plan);
        assert_eq!(m.set_by_model(Yolo), AutoEdit);
        let m = SessionMode::new(Plan, false);
        assert_eq!(m.set_by_model(Yolo), Default);
        // A person may raise it, but not to yolo when it is disabled.
        let m = SessionMode::new(Default, true);
        assert_eq!(m.set_by_person(AutoEdit), Ok(AutoEdit));
        assert_eq!(m.set_by_person(Yolo), Err(ModeError::YoloDisabled));
        assert_eq!(m.get(), AutoEdit);
        assert_eq!(SessionMode::new(Yolo, true).get(), Default);
    }
}
