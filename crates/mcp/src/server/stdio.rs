//! The stdio transport without a thread hop per message.
//!
//! Tokio's `stdin()`/`stdout()` do every read and write on the blocking pool, which costs two
//! thread hand-overs per message and was most of a small call's time. When stdin or stdout is a
//! pipe or a socket (what an MCP client gives its server), it is put in non-blocking mode and
//! driven by the reactor instead; anything else (a terminal, a file) keeps tokio's own stdio.
//! stdout is left alone when stderr is the same file, so that a non-blocking description cannot
//! make log lines fail.

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The reading half of the server's stdio.
pub type StdioReader = Pin<Box<dyn AsyncRead + Send + Sync>>;
/// The writing half of the server's stdio.
pub type StdioWriter = Pin<Box<dyn AsyncWrite + Send + Sync>>;

/// stdin and stdout as rmcp's async-read/async-write transport.
#[must_use]
pub fn stdio() -> (StdioReader, StdioWriter) {
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

    use super::{StdioReader, StdioWriter};

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
            Kind::Fifo => Some(Box::pin(pipe::Sender::from_file(File::from(fd)).ok()?)),
            Kind::Socket => Some(Box::pin(socket(fd)?)),
        }
    }
}
