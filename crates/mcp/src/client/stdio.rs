//! A stdio server, started through the process layer: a reaper keeps the server's whole tree
//! together, so stopping the server (or toolbelt dying) leaves nothing of it running.

use std::collections::HashMap;
use std::path::Path;

use rmcp::RoleClient;
use rmcp::service::{RunningService, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use super::Handler;

/// Starts `command` in `dir` with the cleaned environment plus the server's own variables
/// (`vars`), and initializes it. The reaper's pid goes into `reaper` as soon as it runs.
pub(super) async fn connect(
    handler: Handler,
    command: &str,
    args: &[String],
    vars: (&HashMap<String, String>, &HashMap<String, String>),
    dir: &Path,
    reaper: &std::sync::atomic::AtomicI32,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let (inherit, env) = vars;
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        inherit.iter().map(|(k, v)| (k.into(), v.into())).collect();
    vars.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    let spawned = toolbelt_core::process::Launch::new(command, dir, &vars)
        .args(args)
        .envs([("GEMINI_CLI", "1"), ("TOOLBELT", "1")])
        .for_foreign_spawner()
        .and_then(|f| f.spawn_with(|mut cmd| cmd.spawn()));
    let (mut child, exit) = spawned.map_err(|e| format!("cannot start `{command}`: {e}"))?;
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        reaper.store(pid, std::sync::atomic::Ordering::SeqCst);
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(format!("cannot start `{command}`: its pipes were not made"));
    };
    // The reaper is stopped through its pid (see `stop`), not through this handle.
    drop(child);
    let (screened, pumped) = tokio::io::duplex(64 << 10);
    tokio::spawn(pump(stdout, pumped));
    let transport =
        rmcp::transport::async_rw::AsyncRwTransport::<RoleClient, _, _>::new(screened, stdin)
            .with_max_line_length(usize::MAX);
    // A server that exits while something it started holds its stdout open would
    // otherwise be waited for until the connect deadline.
    let exited = exit.wait();
    tokio::pin!(exited);
    let gone = |status: Option<std::process::ExitStatus>| match status {
        Some(s) => format!("the server exited ({s}) before it finished initializing"),
        None => "the server exited before it finished initializing".to_string(),
    };
    tokio::select! {
        served = handler.serve(Bounded::new(transport)) => match served {
            Ok(s) => Ok(s),
            // A broken pipe most often means the server is gone: its exit says more.
            Err(e) => match tokio::time::timeout(std::time::Duration::from_millis(300), &mut exited).await {
                Ok(status) => Err(gone(status)),
                Err(_) => Err(format!("initialization failed: {}", super::cause(&e))),
            },
        },
        status = &mut exited => Err(gone(status)),
    }
}

/// Passes the server's messages on to rmcp, each judged first by [`screen`](super::screen):
/// lines are read within a bound, and one too large to parse is cut, answered or dropped.
async fn pump(from: tokio::process::ChildStdout, mut to: tokio::io::DuplexStream) {
    use super::screen::{Judged, KEPT_OF_LONG_LINE, LINE_BYTES, judge, judge_long};
    let mut from = tokio::io::BufReader::with_capacity(64 << 10, from);
    let mut line = Vec::new();
    let mut long = false;
    loop {
        let (used, ended) = {
            let Ok(available) = from.fill_buf().await else { return };
            if available.is_empty() {
                return;
            }
            let end = memchr::memchr(b'\n', available);
            let take = end.map_or(available.len(), |i| i + 1);
            if !long && line.len() + take > LINE_BYTES + 1 {
                // Too long to parse: only its start is kept, to find its id.
                long = true;
                line.truncate(KEPT_OF_LONG_LINE);
            }
            let room = if long { KEPT_OF_LONG_LINE.saturating_sub(line.len()) } else { take };
            line.extend_from_slice(&available[..take.min(room)]);
            (take, end.is_some())
        };
        from.consume(used);
        if !ended {
            continue;
        }
        let judged =
            if long { judge_long(&line) } else { judge(line.strip_suffix(b"\n").unwrap_or(&line)) };
        let sent = match judged {
            Judged::Pass => to.write_all(&line).await,
            Judged::Replace(mut other) => {
                other.push(b'\n');
                to.write_all(&other).await
            }
            Judged::Drop => Ok(()),
        };
        if sent.is_err() {
            return;
        }
        line.clear();
        long = false;
    }
}

/// Messages toolbelt may have on their way to a server at once; past this the server is not
/// reading, and more are refused instead of queued.
const UNSENT: usize = 64;

/// A transport whose writes are bounded. rmcp answers each of a server's requests on a task of
/// its own and writes each answer on another: a server that sends requests without end and
/// never reads grew toolbelt to 1 GB of answers waiting for a full pipe (issue 35).
pub(super) struct Bounded<T> {
    inner: T,
    unsent: std::sync::Arc<tokio::sync::Semaphore>,
}

impl<T> Bounded<T> {
    pub(super) fn new(inner: T) -> Self {
        Self { inner, unsent: std::sync::Arc::new(tokio::sync::Semaphore::new(UNSENT)) }
    }
}

/// A write refused, or the transport's own error.
#[derive(Debug)]
pub(super) enum BoundedError<E> {
    Full,
    Inner(E),
}

impl<E: std::fmt::Display> std::fmt::Display for BoundedError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoundedError::Full => write!(
                f,
                "the server has not read the last {UNSENT} messages sent to it; it is not reading"
            ),
            BoundedError::Inner(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for BoundedError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BoundedError::Full => None,
            BoundedError::Inner(e) => Some(e),
        }
    }
}

impl<R, T> rmcp::transport::Transport<R> for Bounded<T>
where
    R: rmcp::service::ServiceRole,
    T: rmcp::transport::Transport<R>,
{
    type Error = BoundedError<T::Error>;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<R>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let permit = self.unsent.clone().try_acquire_owned();
        let send = self.inner.send(item);
        async move {
            let _held = permit.map_err(|_| BoundedError::Full)?;
            send.await.map_err(BoundedError::Inner)
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<rmcp::service::RxJsonRpcMessage<R>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        let close = self.inner.close();
        async move { close.await.map_err(BoundedError::Inner) }
    }
}
