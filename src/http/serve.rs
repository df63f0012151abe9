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
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Most header fields one request may carry (hyper's own default); more is
/// answered 431.
pub const MAX_HEADERS: usize = 100;

/// Serves `app` on `listener` until `shutdown` resolves, then lets the
/// connections finish the requests they are serving.
pub async fn serve_router(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_headers(MAX_HEADERS);
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
        let app = app.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            app.clone().oneshot(request)
        });
        let connection = http.serve_connection(TokioIo::new(JsonErrors::new(stream)), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A socket whose writes pass through unchanged, except hyper's automatic
/// answer to a request it could not parse: a bodiless 400, 414 or 431.
/// The router never sends those (its errors always have a JSON body), so
/// such a head is hyper's, and it is the last thing on the connection.
pub struct JsonErrors<S> {
    inner: S,
    /// The rewritten answer, still to be written.
    pending: Vec<u8>,
    written: usize,
}

impl<S> JsonErrors<S> {
    pub fn new(inner: S) -> Self {
        JsonErrors {
            inner,
            pending: Vec::new(),
            written: 0,
        }
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
    let body = serde_json::json!({"success": false, "error": error, "detail": hint}).to_string();
    let status_line = text.split("\r\n").next()?;
    // No router span saw this request: its one log line is this.
    tracing::info!(status = %status_line, "answered a request the HTTP library could not parse");
    Some(
        format!(
            "{status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl<S: AsyncWrite + Unpin> JsonErrors<S> {
    /// Writes what is pending; ready once nothing is.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
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
        Pin::new(&mut self.inner).poll_write(cx, buf)
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
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        // Keeps hyper's vectored writes: without it, hyper copies every
        // body into one buffer first.
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite_parse_error;

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
