//! Progress from a server to the call waiting on it. Each call's notifications go down a small
//! channel; what a call does not keep up with is dropped, never queued. (rmcp's dispatcher
//! waits on a full channel inside a task of its own for each notification, so a server sending
//! progress without end grew toolbelt past 23 GB, issue 35.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc;
use toolbelt_core::sync::LockExt as _;

/// Notifications held for one call before more are dropped.
const HELD: usize = 32;

type Senders = Arc<Mutex<HashMap<ProgressToken, mpsc::Sender<ProgressNotificationParam>>>>;

/// The calls waiting for progress, by token.
#[derive(Clone, Default)]
pub struct Progress(Senders);

/// One call's progress; dropping it stops the notifications for its token.
pub struct Subscription {
    token: ProgressToken,
    rx: mpsc::Receiver<ProgressNotificationParam>,
    senders: Senders,
}

impl Progress {
    /// Starts taking progress for `token`.
    pub fn subscribe(&self, token: ProgressToken) -> Subscription {
        let (tx, rx) = mpsc::channel(HELD);
        self.0.locked().insert(token.clone(), tx);
        Subscription { token, rx, senders: self.0.clone() }
    }

    /// Hands a notification to its call, or drops it (no call waits, or it has more than it
    /// reads). Never waits.
    pub fn dispatch(&self, p: ProgressNotificationParam) {
        let tx = self.0.locked().get(&p.progress_token).cloned();
        if let Some(tx) = tx {
            let _ = tx.try_send(p);
        }
    }
}

impl Subscription {
    /// The next notification (`None` once unsubscribed).
    pub async fn next(&mut self) -> Option<ProgressNotificationParam> {
        self.rx.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.senders.locked().remove(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_flood_is_dropped_past_what_the_call_holds() {
        let p = Progress::default();
        let token = ProgressToken(rmcp::model::NumberOrString::Number(7));
        let mut s = p.subscribe(token.clone());
        for i in 0..10_000 {
            p.dispatch(ProgressNotificationParam::new(token.clone(), f64::from(i)));
        }
        let mut got = 0;
        while let Ok(Some(_)) =
            tokio::time::timeout(std::time::Duration::from_millis(10), s.next()).await
        {
            got += 1;
        }
        assert_eq!(got, HELD);
        drop(s);
        assert!(p.0.locked().is_empty(), "unsubscribed when dropped");
        p.dispatch(ProgressNotificationParam::new(token, 1.0));
    }
}
