//! Connections to the HTTP server, bounded: at most so many at once from one address, and a
//! client cannot hold them all (past the limit the connection idle longest that is not
//! answering a request is closed for the new one: every local client shares 127.0.0.1, and 40
//! unread event streams held all 32 places), a connection with no traffic either way for a
//! while is closed, and a request's header lines must all arrive within a deadline from its first byte (issue 35: an
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

/// One open connection, as its address's list knows it.
struct Slot {
    id: u64,
    /// The same socket (a duplicate descriptor): shut down to close the connection from here.
    socket: std::net::TcpStream,
    /// Requests of it being answered, event streams (`GET`) aside: from the end of their header
    /// lines to the end of their answer's body. While any is, it is not closed for room.
    answering: std::sync::atomic::AtomicUsize,
    /// When it last read or wrote, in milliseconds since the server started.
    last: std::sync::atomic::AtomicU64,
}

/// The open connections of each address.
type Counts = Arc<Mutex<HashMap<IpAddr, Vec<Arc<Slot>>>>>;

/// Milliseconds since the first call (a clock for [`Slot::last`]).
fn now_ms() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    u64::try_from(START.get_or_init(std::time::Instant::now).elapsed().as_millis())
        .unwrap_or(u64::MAX)
}

/// The connection a request came on (axum's connect info), to count it as answering.
#[derive(Clone)]
pub struct Conn(Arc<Slot>);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, BoundedListener>>
    for Conn
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, BoundedListener>) -> Self {
        Conn(stream.io().slot.clone())
    }
}

/// Counts its connection as answering a request until it is dropped.
pub struct Answering(Arc<Slot>);

impl Conn {
    /// The connection answers a request (other than an event stream) until the guard goes.
    pub fn answering(&self) -> Answering {
        self.0.answering.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Answering(self.0.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A body that holds its request's [`Answering`] guard until it is done (or dropped).
pub struct Guarded<B> {
    inner: B,
    _guard: Answering,
}

impl<B> Guarded<B> {
    pub fn new(inner: B, guard: Answering) -> Self {
        Self { inner, _guard: guard }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for Guarded<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Makes room for one more connection of an address that has `per_client` open: the one
/// that read or wrote longest ago, of those not answering a request, is shut down (an idle
/// keep-alive connection, a silent one, an event stream: its client connects again if it
/// still wants it). `false`: every one is answering a request.
fn make_room(open: &mut Vec<Arc<Slot>>) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    let victim = open
        .iter()
        .enumerate()
        .filter(|(_, s)| s.answering.load(Relaxed) == 0)
        .min_by_key(|(_, s)| s.last.load(Relaxed))
        .map(|(i, _)| i);
    let Some(i) = victim else { return false };
    let slot = open.swap_remove(i);
    let _ = slot.socket.shutdown(std::net::Shutdown::Both);
    tracing::warn!("an address reached its limit of connections; the one idle longest was closed");
    true
}

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
            let Ok(socket) = std::os::fd::AsFd::as_fd(&stream).try_clone_to_owned() else {
                continue;
            };
            static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let slot = Arc::new(Slot {
                id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                socket: std::net::TcpStream::from(socket),
                answering: 0.into(),
                last: now_ms().into(),
            });
            {
                let mut counts = self.counts.locked();
                let open = counts.entry(addr.ip()).or_default();
                if open.len() >= self.per_client && !make_room(open) {
                    tracing::warn!(
                        "{} has {} connections answering requests; refusing another",
                        addr.ip(),
                        open.len()
                    );
                    continue;
                }
                open.push(slot.clone());
            }
            // An answer goes out in pieces (headers, then event-stream chunks): without
            // TCP_NODELAY each later piece waits for the client's delayed ACK (40 ms), which
            // capped a client at 25 calls/s.
            let _ = stream.set_nodelay(true);
            let idle = self.idle;
            let stream = BoundedStream {
                stream,
                ip: addr.ip(),
                slot,
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
    slot: Arc<Slot>,
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
        self.slot.last.store(now_ms(), std::sync::atomic::Ordering::Relaxed);
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
        if let Some(open) = counts.get_mut(&self.ip) {
            open.retain(|s| s.id != self.slot.id);
            if open.is_empty() {
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
