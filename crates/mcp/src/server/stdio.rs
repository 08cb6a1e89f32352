//! The stdio transport without a thread hop per message.
//!
//! Tokio's `stdin()`/`stdout()` do every read and write on the blocking pool, which costs two
//! thread hand-overs per message and was most of a small call's time. When stdin or stdout is a
//! pipe or a socket (what an MCP client gives its server), it is put in non-blocking mode and
//! driven by the reactor instead; anything else (a terminal, a file) keeps tokio's own stdio.
//! stdout is left alone when stderr is the same file, so that a non-blocking description cannot
//! make log lines fail.
//!
//! A client that calls tools one after another sends its next request a few tens of
//! microseconds after reading an answer. Sleeping in the meantime costs the most on virtual
//! machines, where an idle CPU is halted and waking it again takes about as long as the whole
//! call. So after writing an answer, when no call is running any more, [`before_park`] polls
//! stdin for up to [`ANSWER_POLL`] before the runtime goes to sleep, yielding the CPU between
//! polls (to the client itself when both share a CPU): at most that much CPU time per answer,
//! none for progress notifications of a running call, none while idle.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

/// How long stdin is polled after an answer was written.
pub const ANSWER_POLL: Duration = Duration::from_micros(50);

/// Set by the writer when it has written an answer; the next [`before_park`] takes it.
static ANSWERED: AtomicBool = AtomicBool::new(false);

/// Tool calls being run (by any transport; the poll only matters for stdio).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Marks a tool call as running until dropped.
pub(crate) struct RunningCall;

impl RunningCall {
    pub(crate) fn start() -> Self {
        RUNNING.fetch_add(1, Ordering::Relaxed);
        Self
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The runtime's park hook (`on_thread_park`): after an answer on the non-blocking stdio, with
/// no call running, waits up to [`ANSWER_POLL`] for the next request before the thread sleeps.
/// Returns at once otherwise, and as soon as stdin is readable.
pub fn before_park() {
    if !ANSWERED.swap(false, Ordering::Relaxed) || RUNNING.load(Ordering::Relaxed) > 0 {
        return;
    }
    #[cfg(unix)]
    {
        let start = std::time::Instant::now();
        while !unix::stdin_readable() && start.elapsed() < ANSWER_POLL {
            std::thread::yield_now();
        }
    }
}

/// A writer that marks each write as a possible answer for [`before_park`].
struct Answering<W>(W);

impl<W: AsyncWrite + Unpin> AsyncWrite for Answering<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.0).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            ANSWERED.store(true, Ordering::Relaxed);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// The reading half of the server's stdio.
pub type StdioReader = Pin<Box<dyn AsyncRead + Send + Sync>>;
/// The writing half of the server's stdio.
pub type StdioWriter = Pin<Box<dyn AsyncWrite + Send + Sync>>;

/// stdin and stdout as the server's transport, every line answered (see
/// [`super::lines`]), messages up to `max_bytes` long.
#[must_use]
pub fn stdio(max_bytes: usize) -> super::lines::LineTransport<StdioReader, StdioWriter> {
    let (read, write) = stdio_halves();
    super::lines::LineTransport::new(read, write, max_bytes)
}

/// stdin and stdout as async reader and writer.
fn stdio_halves() -> (StdioReader, StdioWriter) {
    #[cfg(unix)]
    {
        let reader = unix::reader().unwrap_or_else(|| Box::pin(tokio::io::stdin()));
        let writer = unix::writer().unwrap_or_else(|| Box::pin(tokio::io::stdout()));
        (reader, writer)
    }
    #[cfg(not(unix))]
    {
        (Box::pin(tokio::io::stdin()), Box::pin(tokio::io::stdout()))
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    use tokio::net::unix::pipe;

    use super::{Answering, StdioReader, StdioWriter};

    enum Kind {
        Fifo,
        Socket,
    }

    fn duplicate(fd: std::os::fd::BorrowedFd<'_>) -> Option<(OwnedFd, Kind)> {
        let owned = fd.try_clone_to_owned().ok()?;
        let meta = File::from(owned.try_clone().ok()?).metadata().ok()?;
        let kind = if meta.file_type().is_fifo() {
            Kind::Fifo
        } else if meta.file_type().is_socket() {
            Kind::Socket
        } else {
            return None;
        };
        Some((owned, kind))
    }

    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let std = std::os::unix::net::UnixStream::from(fd);
        std.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(std).ok()
    }

    pub(super) fn reader() -> Option<StdioReader> {
        let (fd, kind) = duplicate(std::io::stdin().as_fd())?;
        match kind {
            Kind::Fifo => Some(Box::pin(pipe::Receiver::from_file(File::from(fd)).ok()?)),
            Kind::Socket => Some(Box::pin(socket(fd)?)),
        }
    }

    /// Whether a read of stdin would return at once (data, end of file or an error).
    pub(super) fn stdin_readable() -> bool {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let stdin = std::io::stdin();
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        poll(&mut fds, PollTimeout::ZERO).map_or(true, |n| n > 0)
    }

    pub(super) fn writer() -> Option<StdioWriter> {
        let out = std::io::stdout();
        let err = std::io::stderr();
        let same_file = |a: std::os::fd::BorrowedFd<'_>, b: std::os::fd::BorrowedFd<'_>| {
            let meta = |fd: std::os::fd::BorrowedFd<'_>| {
                fd.try_clone_to_owned().ok().and_then(|o| File::from(o).metadata().ok())
            };
            match (meta(a), meta(b)) {
                (Some(x), Some(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
                _ => true,
            }
        };
        if same_file(out.as_fd(), err.as_fd()) {
            return None;
        }
        let (fd, kind) = duplicate(out.as_fd())?;
        match kind {
            Kind::Fifo => Some(Box::pin(Answering(pipe::Sender::from_file(File::from(fd)).ok()?))),
            Kind::Socket => Some(Box::pin(Answering(socket(fd)?))),
        }
    }
}
