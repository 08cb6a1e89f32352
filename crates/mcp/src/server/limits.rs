//! Connections to the HTTP server, bounded: at most so many at once from one address (a client
//! cannot hold them all), a connection with no traffic either way for a while is closed, and a
//! request's header lines must all arrive within a deadline from its first byte (issue 35: an
//! idle timer alone restarted at every byte, so a header line every 10 s held a connection for
//! ever and 32 of them locked every other local client out). The body's deadline is the HTTP
//! layer's (`judge_body`).

use std::collections::HashMap;
use std::future::Future as _;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use toolbelt_core::sync::LockExt;

/// Connections open at once from one address.
pub const DEFAULT_PER_CLIENT: usize = 32;
/// A connection with no bytes read or written for this long is closed (SSE streams send a
/// keep-alive every 15 s, so a live one never gets there).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);
/// A request's header lines must all arrive within this long of its first byte.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's body must all arrive within this long (plus a second per MiB it declares).
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Slow clients cut so far (their headers or body over the deadline).
static SLOW_CLIENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts (and logs) a client cut for being slow with `what`.
pub fn count_slow_client(what: &str) {
    let n = SLOW_CLIENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    tracing::warn!("a client was too slow sending {what}; its connection was closed ({n} so far)");
}

/// Slow clients cut since the server started.
pub fn slow_clients() -> u64 {
    SLOW_CLIENTS.load(std::sync::atomic::Ordering::Relaxed)
}

type Counts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// A TCP listener that enforces the limits above.
pub struct BoundedListener {
    inner: TcpListener,
    counts: Counts,
    per_client: usize,
    idle: Duration,
    header: Duration,
}

impl BoundedListener {
    /// Wraps `inner`.
    pub fn new(inner: TcpListener, per_client: usize, idle: Duration) -> Self {
        Self {
            inner,
            counts: Counts::default(),
            per_client: per_client.max(1),
            idle,
            header: DEFAULT_HEADER_TIMEOUT,
        }
    }

    /// Each request's header lines within `deadline` of its first byte.
    pub fn with_header_timeout(mut self, deadline: Duration) -> Self {
        self.header = deadline;
        self
    }
}

impl axum::serve::Listener for BoundedListener {
    type Io = BoundedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::debug!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            };
            {
                let mut counts = self.counts.locked();
                let n = counts.entry(addr.ip()).or_default();
                if *n >= self.per_client {
                    tracing::warn!("{} has {n} connections open; refusing another", addr.ip());
                    continue;
                }
                *n += 1;
            }
            // An answer goes out in pieces (headers, then event-stream chunks): without
            // TCP_NODELAY each later piece waits for the client's delayed ACK (40 ms), which
            // capped a client at 25 calls/s.
            let _ = stream.set_nodelay(true);
            let idle = self.idle;
            let stream = BoundedStream {
                stream,
                ip: addr.ip(),
                counts: self.counts.clone(),
                idle,
                timer: Box::pin(tokio::time::sleep(idle)),
                header: self.header,
                header_timer: None,
                in_request: false,
                tail: [0; 3],
            };
            return (stream, addr);
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection that counts against its address's limit while it is open and closes itself
/// when idle.
pub struct BoundedStream {
    stream: TcpStream,
    ip: IpAddr,
    counts: Counts,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
    header: Duration,
    /// Running while a request's header lines are arriving.
    header_timer: Option<Pin<Box<Sleep>>>,
    /// Past the header lines of a request, before its answer.
    in_request: bool,
    /// The last bytes read, for an end of headers split across reads.
    tail: [u8; 3],
}

impl BoundedStream {
    fn touched(&mut self) {
        self.timer.as_mut().reset(Instant::now() + self.idle);
    }

    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        if self.timer.as_mut().poll(cx).is_ready() {
            return true;
        }
        if let Some(t) = self.header_timer.as_mut()
            && t.as_mut().poll(cx).is_ready()
        {
            count_slow_client("its request's header lines");
            return true;
        }
        false
    }

    /// `bytes` were read: a request's headers start (its deadline runs) or end.
    fn saw(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if !self.in_request {
            if self.header_timer.is_none() {
                self.header_timer = Some(Box::pin(tokio::time::sleep(self.header)));
            }
            let mut window = self.tail.to_vec();
            window.extend_from_slice(bytes);
            if window.windows(4).any(|w| w == b"\r\n\r\n") {
                self.header_timer = None;
                self.in_request = true;
            }
        }
        let mut tail: Vec<u8> = self.tail.to_vec();
        tail.extend_from_slice(&bytes[bytes.len().saturating_sub(3)..]);
        self.tail.copy_from_slice(&tail[tail.len() - 3..]);
    }
}

impl Drop for BoundedStream {
    fn drop(&mut self) {
        let mut counts = self.counts.locked();
        if let Some(n) = counts.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(&self.ip);
            }
        }
    }
}

impl AsyncRead for BoundedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    self.touched();
                    let read = buf.filled()[before..].to_vec();
                    self.saw(&read);
                    if self.timed_out(cx) {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "a request's header lines came too slowly",
                        )));
                    }
                }
                Poll::Ready(r)
            }
            Poll::Pending if self.timed_out(cx) => {
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "idle connection")))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncWrite for BoundedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.stream).poll_write(cx, data);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touched();
            // An answer: the next bytes read begin another request.
            self.in_request = false;
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
