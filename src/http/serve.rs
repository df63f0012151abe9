//! The connection loop: accept, serve each connection over HTTP/1.1, drain
//! on shutdown.
//!
//! sheetd runs its own loop rather than `axum::serve` for one reason: a
//! request hyper cannot parse (a URI over 64 KiB, more than
//! [`MAX_HEADERS`] headers, bytes that are not HTTP) never reaches the
//! router. hyper answers it itself, with an empty body, and closes the
//! connection. [`JsonErrors`] sits between hyper and the socket and gives
//! those answers the contract's `{"success": false, "error": …}` body (§5).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Sleep;
use tower::ServiceExt;

use crate::config::Config;

/// Most header fields one request may carry (hyper's own default); more is
/// answered 431.
pub const MAX_HEADERS: usize = 100;

/// Open files kept free of connections, for workbooks, temp files, locks
/// and the writer's sheet files: this many, and two for each request
/// handled at once.
const RESERVED_FILES: u64 = 1024;

/// Connections refused at once with a 503 while others are being refused;
/// past it a connection over the cap is closed without an answer, so a
/// flood of connections cannot hold more files than the cap and this.
const MAX_REFUSING: usize = 64;

/// How the connection loop bounds what clients can hold.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    /// Open files kept free of connections.
    pub reserved_files: u64,
    pub header_timeout: Duration,
    pub send_timeout: Duration,
    pub shutdown_timeout: Duration,
}

impl ConnectionLimits {
    pub fn of(config: &Config) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: config.max_connections.max(1),
            reserved_files: RESERVED_FILES + 2 * config.max_requests as u64,
            header_timeout: Duration::from_secs(config.header_timeout_secs.max(1)),
            send_timeout: Duration::from_secs(config.send_timeout_secs.max(1)),
            shutdown_timeout: Duration::from_secs(config.shutdown_timeout_secs),
        }
    }

    /// The same limits with the connection cap lowered below the process's
    /// open-file limit, after raising that limit as far as it may go.
    pub fn within_open_file_limit(mut self) -> ConnectionLimits {
        if let Err(e) = rlimit::increase_nofile_limit(u64::MAX) {
            tracing::warn!(error = %e, "cannot raise the open-file limit");
        }
        if let Ok((soft, _)) = rlimit::getrlimit(rlimit::Resource::NOFILE) {
            let capped = self.capped_by(soft);
            if capped.max_connections < self.max_connections {
                tracing::info!(
                    open_files = soft,
                    max_connections = capped.max_connections,
                    "connection cap lowered below the open-file limit"
                );
            }
            self = capped;
        }
        self
    }

    /// The same limits with the connection cap leaving the reserved files
    /// free under an open-file limit of `open_files` (16 connections at
    /// least).
    fn capped_by(mut self, open_files: u64) -> ConnectionLimits {
        let room = open_files.saturating_sub(self.reserved_files).max(16);
        self.max_connections = self
            .max_connections
            .min(usize::try_from(room).unwrap_or(usize::MAX));
        self
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets the
/// connections finish the requests they are serving, for at most the
/// limits' shutdown timeout.
pub async fn serve_router(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_headers(MAX_HEADERS)
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let mut refused = Refused::default();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before
                    // it was accepted: wait a moment rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            refused.log();
            refuse(stream, &refusing);
            continue;
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            app.clone().oneshot(request)
        });
        let io = JsonErrors::new(stream, limits.send_timeout);
        let connection = graceful.watch(http.serve_connection(TokioIo::new(io), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.shutdown_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            seconds = limits.shutdown_timeout.as_secs(),
            "connections still open at the end of the shutdown timeout are dropped"
        );
    }
    Ok(())
}

/// Connections refused since the last log line: a flood of them logs one
/// line a second, not one each.
#[derive(Default)]
struct Refused {
    count: u64,
    logged: Option<std::time::Instant>,
}

impl Refused {
    fn log(&mut self) {
        self.count += 1;
        if self
            .logged
            .is_none_or(|at| at.elapsed() >= Duration::from_secs(1))
        {
            tracing::warn!(
                connections = self.count,
                "connections refused: the connection cap is reached"
            );
            self.count = 0;
            self.logged = Some(std::time::Instant::now());
        }
    }
}

/// Answers a connection over the cap with 503 and closes it, or closes it
/// at once when many are being refused already.
fn refuse(mut stream: TcpStream, refusing: &Arc<Semaphore>) {
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let answer = async {
            let answer = raw_answer(
                "HTTP/1.1 503 Service Unavailable",
                "Service Unavailable",
                "too many connections are open; retry shortly",
                "retry-after: 1\r\n",
            );
            stream.write_all(&answer).await?;
            stream.shutdown().await
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), answer).await;
        drop(permit);
    });
}

/// A socket whose writes pass through unchanged, except hyper's automatic
/// answer to a request it could not parse: a bodiless 400, 414 or 431.
/// The router never sends those (its errors always have a JSON body), so
/// such a head is hyper's, and it is the last thing on the connection.
///
/// It also ends a connection whose client reads nothing of its answer for
/// `send_timeout`: a write that makes no progress for that long fails.
pub struct JsonErrors<S> {
    inner: S,
    /// The rewritten answer, still to be written.
    pending: Vec<u8>,
    written: usize,
    send_timeout: Duration,
    /// Running while a write waits for the client to read.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> JsonErrors<S> {
    pub fn new(inner: S, send_timeout: Duration) -> Self {
        JsonErrors {
            inner,
            pending: Vec::new(),
            written: 0,
            send_timeout,
            stalled: None,
        }
    }

    /// Passes a write's poll through, failing it once it has waited for
    /// the client longer than the send timeout.
    fn watch_write<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.send_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if stalled.as_mut().poll(cx).is_ready() {
            self.stalled = None;
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing of the answer within the send timeout",
            )));
        }
        Poll::Pending
    }
}

/// The answer to send instead of `head`, when `head` is hyper's automatic
/// answer to a malformed request.
pub fn rewrite_parse_error(head: &[u8]) -> Option<Vec<u8>> {
    // Cheap first: most writes are answers of the router, often large.
    if head.len() > 512 || !head.starts_with(b"HTTP/1.1 4") {
        return None;
    }
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.strip_prefix("HTTP/1.1 ")?;
    let (error, hint) = match rest.get(..4)? {
        "400 " => (
            "Bad Request",
            "the request is not valid HTTP/1.1: check the request line and headers",
        ),
        "414 " => (
            "URI Too Long",
            "the request line is over 64 KiB; send filters in a JSON body (PATCH or DELETE) or fewer at a time",
        ),
        "431 " => (
            "Request Header Fields Too Large",
            "send at most 100 header fields, and a request head under 400 KiB",
        ),
        _ => return None,
    };
    let ends_head = text.ends_with("\r\n\r\n");
    let bodiless = text
        .split("\r\n")
        .any(|line| line.eq_ignore_ascii_case("content-length: 0"));
    if !(ends_head && bodiless) {
        return None;
    }
    let status_line = text.split("\r\n").next()?;
    // No router span saw this request: its one log line is this.
    tracing::info!(status = %status_line, "answered a request the HTTP library could not parse");
    Some(raw_answer(status_line, error, hint, ""))
}

/// A whole answer in the contract's error shape, for the connection loop's
/// own answers; `headers` are extra header lines, each ending in CRLF.
fn raw_answer(status_line: &str, error: &str, detail: &str, headers: &str) -> Vec<u8> {
    let body = serde_json::json!({"success": false, "error": error, "detail": detail}).to_string();
    format!(
        "{status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{headers}connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl<S: AsyncWrite + Unpin> JsonErrors<S> {
    /// Writes what is pending; ready once nothing is.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let poll = Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]);
            let n = ready!(self.watch_write(cx, poll))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonErrors<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonErrors<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some(answer) = rewrite_parse_error(buf) {
            self.pending = answer;
            self.written = 0;
            // The caller's bytes count as written: they were replaced.
            return Poll::Ready(Ok(buf.len()));
        }
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch_write(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        // hyper's automatic answer is a head alone, in one slice.
        if let [head] = bufs
            && let Some(answer) = rewrite_parse_error(head)
        {
            self.pending = answer;
            self.written = 0;
            return Poll::Ready(Ok(head.len()));
        }
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch_write(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        // Keeps hyper's vectored writes: without it, hyper copies every
        // body into one buffer first.
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch_write(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{ConnectionLimits, JsonErrors, rewrite_parse_error};

    #[test]
    fn the_connection_cap_leaves_files_for_each_request_handled_at_once() {
        let mut config = crate::Config::with_data_dir("data");
        config.max_connections = 10_000;
        config.max_requests = 512;
        let limits = ConnectionLimits::of(&config);
        // 1,024 files, and two for each of 512 requests.
        assert_eq!(limits.capped_by(10_000).max_connections, 10_000 - 2048);
        assert_eq!(limits.capped_by(100_000).max_connections, 10_000);
        assert_eq!(limits.capped_by(1_000).max_connections, 16);
    }
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::time::Instant;

    const SEND_TIMEOUT: Duration = Duration::from_secs(5);

    #[tokio::test(start_paused = true)]
    async fn a_client_that_reads_nothing_is_cut_off_after_the_send_timeout() {
        let (near, _far) = tokio::io::duplex(64);
        let mut io = JsonErrors::new(near, SEND_TIMEOUT);
        let start = Instant::now();
        let error = io.write_all(&[b'x'; 1024]).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(start.elapsed(), SEND_TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_that_keeps_reading_is_not_cut_off() {
        let (near, mut far) = tokio::io::duplex(64);
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            let mut buf = [0; 64];
            while got.len() < 1024 {
                tokio::time::sleep(SEND_TIMEOUT - Duration::from_secs(1)).await;
                let n = far.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            got.len()
        });
        let mut io = JsonErrors::new(near, SEND_TIMEOUT);
        io.write_all(&[b'x'; 1024]).await.unwrap();
        assert_eq!(reader.await.unwrap(), 1024);
    }

    #[test]
    fn hyper_parse_errors_get_a_json_body() {
        let head = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 10:00:00 GMT\r\n\r\n";
        let answer = String::from_utf8(rewrite_parse_error(head).unwrap()).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(head.contains("content-type: application/json"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["success"], false);
        assert_eq!(body["error"], "Request Header Fields Too Large");
    }

    #[test]
    fn answers_with_a_body_pass_unchanged() {
        let head = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n";
        assert_eq!(rewrite_parse_error(head), None);
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(rewrite_parse_error(ok), None);
    }
}
