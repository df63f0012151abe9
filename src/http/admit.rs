//! Admission: the bounds every request passes before a handler runs.
//!
//! - At most `--max-requests` requests are handled at once (`/healthz`
//!   aside, so that a load balancer still sees the service up); more get 503.
//! - A request body is read here, whole, within `--body-timeout-secs` (408
//!   past it) and only if its bytes fit in `--max-body-memory`, shared by
//!   every request holding a body (503 when they do not). The room is held
//!   until the answer is ready, so slow or half-sent bodies cannot add up to
//!   more memory than that.
//! - A body over `--max-body-bytes` is answered 413 as soon as that is
//!   known, and the rest of it is then read and dropped, up to
//!   [`LINGER_BYTES`] within [`LINGER_TIME`] (nginx's "lingering close"):
//!   a client that sends its whole body before reading gets the 413
//!   instead of a reset connection.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Body as _;
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::ApiError;
use crate::config::Config;

/// After an early 413, at most this much more of the body is read (and
/// dropped) so that the client can finish sending and read the answer.
pub const LINGER_BYTES: usize = 64 * 1024 * 1024;
/// … and for at most this long.
pub const LINGER_TIME: Duration = Duration::from_secs(5);

/// Body memory is counted in units of this many bytes: a semaphore takes at
/// most `u32::MAX` permits at once.
const UNIT: usize = 1024;

/// The shared bounds; cheap to clone.
#[derive(Clone)]
pub struct Admission {
    requests: Arc<Semaphore>,
    body_units: Arc<Semaphore>,
    max_body_units: usize,
    max_body_bytes: usize,
    body_timeout: Duration,
}

impl Admission {
    pub fn of(config: &Config) -> Admission {
        let max_body_units = config.max_body_memory.div_ceil(UNIT).max(1);
        Admission {
            requests: Arc::new(Semaphore::new(config.max_requests.max(1))),
            body_units: Arc::new(Semaphore::new(max_body_units)),
            max_body_units,
            max_body_bytes: config.max_body_bytes,
            body_timeout: Duration::from_secs(config.body_timeout_secs.max(1)),
        }
    }

    /// Room for a body of `bytes` (at most the body limit), if it is free now.
    fn body_room(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let units = bytes
            .min(self.max_body_bytes)
            .div_ceil(UNIT)
            .clamp(1, self.max_body_units);
        let units = u32::try_from(units).unwrap_or(u32::MAX);
        self.body_units.clone().try_acquire_many_owned(units).ok()
    }
}

pub async fn admit(State(admission): State<Admission>, req: Request, next: Next) -> Response {
    if req.uri().path() == "/healthz" {
        return next.run(req).await;
    }
    let Ok(_handling) = admission.requests.clone().try_acquire_owned() else {
        return ApiError::Unavailable("too many requests are being handled; retry shortly")
            .into_response();
    };
    // No body at all (no length, not chunked: hyper knows it is empty).
    if !may_have_body(&req) || req.body().size_hint().exact() == Some(0) {
        return next.run(req).await;
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // A declared length over the limit is answered before anything is read.
    let expected = match declared {
        Some(n) if n > admission.max_body_bytes as u64 => {
            return too_large(req.into_body());
        }
        Some(n) => n as usize,
        // Chunked: it may be as long as the limit.
        None => admission.max_body_bytes,
    };
    let Some(_room) = admission.body_room(expected) else {
        return ApiError::Unavailable("too many request bodies are being received; retry shortly")
            .into_response();
    };
    let (parts, mut body) = req.into_parts();
    let read = read_body(&mut body, admission.max_body_bytes);
    let bytes = match tokio::time::timeout(admission.body_timeout, read).await {
        Err(_) => return ApiError::RequestTimeout.into_response(),
        Ok(Read::TooLarge) => return too_large(body),
        Ok(Read::Failed) => return ApiError::invalid("body", "could not be read").into_response(),
        Ok(Read::Whole(bytes)) => bytes,
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// How reading a body ended.
enum Read {
    Whole(Bytes),
    /// It passed the limit; the rest is still unread.
    TooLarge,
    Failed,
}

/// Reads `body` whole if it is at most `limit` bytes; stops as soon as it
/// is longer, leaving the rest unread.
async fn read_body(body: &mut Body, limit: usize) -> Read {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Read::Failed;
        };
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Read::TooLarge;
            }
            bytes.extend_from_slice(&data);
        }
    }
    Read::Whole(Bytes::from(bytes))
}

/// The 413 for a body over the limit, sent at once; meanwhile the rest of
/// the body is read and dropped (up to [`LINGER_BYTES`], within
/// [`LINGER_TIME`]), so that the connection is not closed under a client
/// still sending, which would lose it the answer. The connection closes
/// after the answer.
fn too_large(mut body: Body) -> Response {
    tokio::spawn(async move {
        let mut dropped = 0;
        let drain = async {
            while let Some(Ok(frame)) = body.frame().await {
                dropped += frame.data_ref().map_or(0, Bytes::len);
                if dropped > LINGER_BYTES {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(LINGER_TIME, drain).await;
    });
    let mut response = ApiError::PayloadTooLarge.into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Whether the method takes a body on some route (GET and HEAD never do).
fn may_have_body(req: &Request) -> bool {
    !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS)
}
