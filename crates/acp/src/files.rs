//! The editor's `fs/read_text_file` and `fs/write_text_file` as the tools' view of text files
//! (used when the editor offers both): read_file, write_file and replace see an open buffer's
//! unsaved text and land their edits in it, after the workspace's file layer has checked the
//! path (beneath a root, not sensitive, a regular UTF-8 text file within the size cap).

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use toolbelt_core::editor::EditorFiles;

use crate::updates::Peer;

/// How long the editor has to answer one read or write.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// Files through the editor of one session.
pub struct ClientFiles {
    peer: Peer,
    sid: SessionId,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for ClientFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFiles").field("session", &self.sid.0).finish()
    }
}

impl ClientFiles {
    /// Files of session `sid`, asked on `runtime` (a multi-threaded one: callers block on it).
    pub fn new(peer: Peer, sid: SessionId, runtime: tokio::runtime::Handle) -> Self {
        Self { peer, sid, runtime }
    }

    /// Waits for `f` where blocking is allowed: a worker thread of the runtime hands its other
    /// tasks on first; a blocking-pool thread just waits.
    fn wait<T>(
        &self,
        f: impl Future<Output = Result<T, agent_client_protocol::Error>>,
    ) -> Result<T, String> {
        let run = || {
            self.runtime.block_on(async {
                match tokio::time::timeout(ANSWER_WITHIN, f).await {
                    Ok(r) => r.map_err(|e| e.to_string()),
                    Err(_) => Err(format!(
                        "the editor did not answer within {} s",
                        ANSWER_WITHIN.as_secs()
                    )),
                }
            })
        };
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(run)
            }
            Ok(_) => Err("the editor's files cannot be asked from this thread".into()),
            Err(_) => run(),
        }
    }
}

impl EditorFiles for ClientFiles {
    fn read_text(&self, path: &Path) -> Result<String, String> {
        let req = ReadTextFileRequest::new(self.sid.clone(), path.to_path_buf());
        self.wait(self.peer.send_request(req).block_task()).map(|r| r.content)
    }

    fn write_text(&self, path: &Path, text: &str) -> Result<(), String> {
        let req = WriteTextFileRequest::new(self.sid.clone(), path.to_path_buf(), text.to_string());
        self.wait(self.peer.send_request(req).block_task()).map(|_| ())
    }
}
