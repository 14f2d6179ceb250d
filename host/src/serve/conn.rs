//! Limits on connections, so clients that connect and dawdle cannot hold
//! the port: at most [`MAX_CONNECTIONS`] at once (more wait unaccepted in the
//! kernel's backlog until one closes), a request's headers must arrive
//! within [`HEADER_READ_TIMEOUT`] of its first byte (of the connection's
//! start, for the first request), and a connection that neither reads nor
//! writes for [`IDLE_TIMEOUT`] between requests is closed.
//!
//! axum's server exposes no hyper timeouts, so they are kept here, on the
//! connection's bytes: the server speaks HTTP/1.1 only (no ALPN), where a
//! request's headers end at the first empty line.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 256;
/// From a request's first byte (or the connection's start) to the end of its headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Quiet time allowed between requests (the API server's 90 s).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

const END_OF_HEADERS: &[u8; 4] = b"\r\n\r\n";

/// The permits of [`MAX_CONNECTIONS`].
pub(super) fn permits() -> Arc<Semaphore> {
    Arc::new(Semaphore::new(MAX_CONNECTIONS))
}

/// Waits for a free connection slot; the semaphore is never closed.
pub(super) async fn slot(permits: &Arc<Semaphore>) -> OwnedSemaphorePermit {
    match permits.clone().acquire_owned().await {
        Ok(permit) => permit,
        Err(_) => std::future::pending().await,
    }
}

/// A connection under the limits; its slot is freed when it is dropped.
pub(super) struct Guarded<T> {
    inner: T,
    /// `Some(n)`: inside a request's headers, `n` bytes of the empty line seen.
    headers: Option<usize>,
    deadline: Pin<Box<Sleep>>,
    _slot: OwnedSemaphorePermit,
}

impl<T> Guarded<T> {
    pub(super) fn new(inner: T, slot: OwnedSemaphorePermit) -> Self {
        Self {
            inner,
            headers: Some(0),
            deadline: Box::pin(tokio::time::sleep(HEADER_READ_TIMEOUT)),
            _slot: slot,
        }
    }

    fn extend(&mut self, by: Duration) {
        self.deadline.as_mut().reset(Instant::now() + by);
    }

    /// Follows the request boundaries through the bytes read.
    fn saw(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            let matched = match self.headers {
                None => {
                    // A new request begins.
                    self.extend(HEADER_READ_TIMEOUT);
                    0
                }
                Some(matched) => matched,
            };
            let matched = if byte == END_OF_HEADERS[matched] {
                matched + 1
            } else {
                usize::from(byte == b'\r')
            };
            if matched == END_OF_HEADERS.len() {
                self.headers = None;
                self.extend(IDLE_TIMEOUT);
            } else {
                self.headers = Some(matched);
            }
        }
    }
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "connection timed out")
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.deadline.is_elapsed() {
            return Poll::Ready(Err(timed_out()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = buf.filled()[before..].to_vec();
                this.saw(&read);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(timed_out())),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.inner).poll_write(cx, data);
        // An answer going out is activity: the idle time starts after it.
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) && this.headers.is_none() {
            this.extend(IDLE_TIMEOUT);
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Plain HTTP's listener: a connection is accepted only once it has a slot.
pub(super) struct PlainListener {
    tcp: TcpListener,
    permits: Arc<Semaphore>,
}

impl PlainListener {
    pub(super) fn new(tcp: TcpListener) -> Self {
        Self {
            tcp,
            permits: permits(),
        }
    }
}

impl axum::serve::Listener for PlainListener {
    type Io = Guarded<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let slot = slot(&self.permits).await;
        loop {
            match self.tcp.accept().await {
                Ok((stream, peer)) => return (Guarded::new(stream, slot), peer),
                Err(error) => {
                    tracing::warn!(%error, "serving: accept failed");
                    // Out of file descriptors and the like: back off briefly.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};

    use super::*;

    fn guarded(client_side: tokio::io::DuplexStream) -> Guarded<tokio::io::DuplexStream> {
        let slot = Arc::new(Semaphore::new(1)).try_acquire_owned().unwrap();
        Guarded::new(client_side, slot)
    }

    #[tokio::test(start_paused = true)]
    async fn headers_dribbled_past_the_timeout_close_the_connection() {
        let (mut client, server) = duplex(1024);
        let mut server = guarded(server);
        let mut buf = [0; 64];
        client
            .write_all(b"GET /healthz HTTP/1.1\r\n")
            .await
            .unwrap();
        assert!(server.read(&mut buf).await.is_ok());
        for _ in 0..4 {
            tokio::time::advance(Duration::from_secs(1)).await;
            client.write_all(b"X: y\r\n").await.unwrap();
            assert!(server.read(&mut buf).await.is_ok());
        }
        let started = Instant::now();
        let error = server.read(&mut buf).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(
            started.elapsed() <= Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_kept_alive_connection_waits_the_idle_timeout_then_closes() {
        let (mut client, server) = duplex(1024);
        let mut server = guarded(server);
        let mut buf = [0; 64];
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        assert!(server.read(&mut buf).await.is_ok());
        server.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await.unwrap();
        let started = Instant::now();
        let error = server.read(&mut buf).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), IDLE_TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_new_connection_gets_the_header_timeout() {
        let (_client, server) = duplex(1024);
        let mut server = guarded(server);
        let started = Instant::now();
        let error = server.read(&mut [0; 8]).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), HEADER_READ_TIMEOUT);
    }
}
