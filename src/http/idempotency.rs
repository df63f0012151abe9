//! `Idempotency-Key` on writes: a client that sends a write again with the
//! same key (after a timeout, a 500, a lost connection) gets the first
//! answer, with `Idempotent-Replayed: true`, and the write is not applied a
//! second time. The store remembers the answers (see `store::keys`).

use std::future::Future;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::conditional::{Stamp, stamped};
use super::error::{ApiError, Result};
use crate::model::{SpreadsheetId, Workbook};
use crate::store::{
    Claim, Claimed, Edit, Key, Precondition, Store, StoreError, Versioned, fingerprint,
};

pub(super) const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
pub(super) const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The longest key taken.
const MAX_KEY_BYTES: usize = 255;

/// The request's `Idempotency-Key`, if it has one, with its method, path
/// and query.
pub struct IdempotencyKey {
    key: Option<String>,
    request: String,
}

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self> {
        // The query too: `on_conflict` makes another request of a POST.
        let target = parts.uri.path_and_query().map_or("", |p| p.as_str());
        let request = format!("{} {target}", parts.method);
        let Some(value) = parts.headers.get(IDEMPOTENCY_KEY) else {
            return Ok(IdempotencyKey { key: None, request });
        };
        let bytes = value.as_bytes();
        if bytes.is_empty()
            || bytes.len() > MAX_KEY_BYTES
            || !bytes.iter().all(|b| b.is_ascii_graphic())
        {
            return Err(ApiError::invalid(
                "Idempotency-Key",
                "must be 1 to 255 printable ASCII characters, without spaces (a UUID will do)",
            ));
        }
        let key = String::from_utf8_lossy(bytes).into_owned();
        Ok(IdempotencyKey {
            key: Some(key),
            request,
        })
    }
}

impl IdempotencyKey {
    /// The key, told apart from another request's by `body`.
    pub fn with_body(&self, body: &[u8]) -> Option<Key> {
        let key = self.key.clone()?;
        Some(Key {
            fingerprint: fingerprint(&[self.request.as_bytes(), body]),
            key,
        })
    }
}

/// A write's answer: its value, the workbook version it left (§11.5),
/// and whether it is a replay of the first answer to its key.
pub struct Written<T> {
    pub value: T,
    pub stamp: Option<Stamp>,
    pub replayed: bool,
}

impl<T> Written<T> {
    fn fresh(versioned: Versioned<T>) -> Written<T> {
        Written {
            stamp: Some(Stamp::from(&versioned.version)),
            value: versioned.value,
            replayed: false,
        }
    }

    /// The answer `render` makes of the value, with the version's `ETag`
    /// and `Last-Modified`, marked as a replay when it is one.
    pub fn respond<R: IntoResponse>(self, render: impl FnOnce(T) -> R) -> Response {
        stamped(
            marked(render(self.value), self.replayed),
            self.stamp.as_ref(),
        )
    }
}

/// Runs `write` once per key: a request whose key was answered gets that
/// answer's value (with the `ETag` it had) without running it. `write`
/// gets the claim of the key, and holds it until its edit is answered.
pub async fn once<T, F, Fut>(store: &Store, key: Option<Key>, write: F) -> Result<Written<T>>
where
    T: DeserializeOwned,
    F: FnOnce(Option<Claimed>) -> Fut,
    Fut: Future<Output = Result<Versioned<T>>>,
{
    let Some(key) = key else {
        return Ok(Written::fresh(write(None).await?));
    };
    match store.claim(key) {
        Claim::First(claimed) => Ok(Written::fresh(write(Some(claimed)).await?)),
        Claim::Answered(answer) => {
            let value = serde_json::from_value(answer.value)
                .map_err(|e| ApiError::internal(format!("a remembered answer: {e}")))?;
            Ok(Written {
                value,
                stamp: answer.etag.map(Stamp::tag),
                replayed: true,
            })
        }
        Claim::InProgress => Err(StoreError::KeyInUse.into()),
    }
}

/// A workbook edit ([`Store::edit_if`]) run once per key, as [`once`]
/// runs any write, if `precondition` holds at its turn.
pub async fn edit_once<T, F>(
    store: &Store,
    id: SpreadsheetId,
    key: Option<Key>,
    precondition: Option<Precondition>,
    edit: F,
) -> Result<Written<T>>
where
    F: FnMut(&mut Workbook) -> Result<Edit<T>> + Send + 'static,
    T: Serialize + DeserializeOwned + Send + 'static,
{
    once(store, key, |key| store.edit_if(id, key, precondition, edit)).await
}

/// `answer`, marked as a replay when it is one.
pub fn marked(answer: impl IntoResponse, replayed: bool) -> Response {
    let mut response = answer.into_response();
    if replayed {
        response
            .headers_mut()
            .insert(REPLAYED, HeaderValue::from_static("true"));
    }
    response
}
