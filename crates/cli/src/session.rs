//! From the shared session flags to a [`toolbelt_session::SessionBuilder`], and a built session
//! with its notices shown on stderr. The assembly itself lives in `toolbelt-session`.

use std::io::IsTerminal;
use std::sync::Arc;

use toolbelt_session::{Session, SessionBuilder};

use crate::cli::SessionArgs;
use crate::error::CliError;
use crate::output::warn;

/// Interactive when a person is at the terminal, unless a flag says otherwise.
pub fn interactive(args: &SessionArgs) -> bool {
    if args.non_interactive {
        return false;
    }
    args.interactive || std::io::stdin().is_terminal()
}

/// A builder with the flags every session command shares, the terminal's questioner and
/// approver.
pub fn builder(args: &SessionArgs) -> SessionBuilder {
    SessionBuilder::new()
        .roots(args.roots.iter().cloned())
        .policy_paths(args.policies.iter().cloned())
        .approval_mode(args.approval_mode)
        .interactive(interactive(args))
        .sandbox(args.sandbox)
        .questioner(Arc::new(crate::questions::TerminalQuestioner))
        .approver(Arc::new(crate::approver::TerminalApprover))
}

/// Builds the session and shows what it could not use.
pub async fn build(builder: SessionBuilder) -> Result<Session, CliError> {
    // Each notice once per process, however many sessions it builds (an MCP client's roots
    // changing rebuilds it).
    static SHOWN: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut session = builder.build().await?;
    for notice in std::mem::take(&mut session.notices) {
        let first = SHOWN.lock().map(|mut s| s.insert(notice.clone())).unwrap_or(true);
        if first {
            warn(notice.as_str());
        }
    }
    Ok(session)
}
