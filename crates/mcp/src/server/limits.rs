//! Connections to the HTTP server, bounded: at most so many at once from one address (a client
//! cannot hold them all), and a connection with no traffic either way for a while is closed (a
//! client that opens connections and sends nothing, or a byte a minute, cannot keep them).

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

type Counts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// A TCP listener that enforces the limits above.
pub struct BoundedListener {
    inner: TcpListener,
    counts: Counts,
    per_client: usize,
    idle: Duration,
}

impl BoundedListener {
    /// Wraps `inner`.
    pub fn new(inner: TcpListener, per_client: usize, idle: Duration) -> Self {
        Self { inner, counts: Counts::default(), per_client: per_client.max(1), idle }
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
}

impl BoundedStream {
    fn touched(&mut self) {
        self.timer.as_mut().reset(Instant::now() + self.idle);
    }

    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        self.timer.as_mut().poll(cx).is_ready()
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
