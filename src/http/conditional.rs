//! Conditional requests (contract §11.5, RFC 9110 §13): the `If-*`
//! headers read into the store's [`Precondition`], `304 Not Modified` for
//! reads, and `ETag` / `Last-Modified` on every answer about one workbook.
//!
//! The store decides whether a write's precondition holds, at the write's
//! turn; this module only reads the headers and writes the answers.

use std::time::SystemTime;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa::IntoParams;

use super::error::{ApiError, Result};
use crate::model::Problems;
use crate::store::{Named, Precondition, Tags, Version};

/// What a malformed `If-Match` or `If-None-Match` breaks.
const TAG_LIST_RULE: &str =
    "must be * or a comma-separated list of quoted entity tags (\"…\" or W/\"…\")";

/// The request's `If-*` headers. A malformed tag list is a 400; a date
/// that is no HTTP date is ignored, as RFC 9110 §13.1.3 asks.
#[derive(Debug, Clone, Default)]
pub struct Conditions {
    if_match: Option<Tags>,
    if_none_match: Option<Tags>,
    if_modified_since: Option<SystemTime>,
    if_unmodified_since: Option<SystemTime>,
}

impl<S: Send + Sync> FromRequestParts<S> for Conditions {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self> {
        let headers = &parts.headers;
        let mut problems = Problems::new();
        let mut tags = |name: HeaderName, field: &str| match tag_list(headers, &name) {
            Ok(tags) => tags,
            Err(()) => {
                problems.push(field, TAG_LIST_RULE);
                None
            }
        };
        let if_match = tags(header::IF_MATCH, "If-Match");
        let if_none_match = tags(header::IF_NONE_MATCH, "If-None-Match");
        problems.into_result(())?;
        Ok(Conditions {
            if_match,
            if_none_match,
            if_modified_since: http_date(headers, &header::IF_MODIFIED_SINCE),
            if_unmodified_since: http_date(headers, &header::IF_UNMODIFIED_SINCE),
        })
    }
}

impl Conditions {
    /// What a write requires of the workbook, if anything: `If-Match`,
    /// else `If-Unmodified-Since`, and `If-None-Match` (`*`: only if there
    /// is no workbook). `If-Modified-Since` is for reads only.
    pub fn precondition(&self) -> Option<Precondition> {
        let precondition = Precondition {
            if_match: self.if_match.clone(),
            if_unmodified_since: self.if_unmodified_since,
            if_none_match: self.if_none_match.clone(),
        };
        (!precondition.is_empty()).then_some(precondition)
    }

    /// For a read of the workbook at `version`, in RFC 9110 §13.2.2's
    /// order: 412 when `If-Match` (or, without it, `If-Unmodified-Since`)
    /// fails; `true` (answer 304) when the client's copy is current by
    /// `If-None-Match` (weak comparison) or, without it, `If-Modified-Since`.
    pub fn unchanged(&self, version: &Version) -> Result<bool> {
        let precondition = Precondition {
            if_none_match: None,
            ..self.precondition().unwrap_or_default()
        };
        if !precondition.holds(crate::store::Current::File(*version)) {
            return Err(ApiError::PreconditionFailed);
        }
        Ok(match (&self.if_none_match, self.if_modified_since) {
            (Some(tags), _) => tags.match_weak(&version.tag),
            (None, Some(since)) => !version.modified_since(since),
            (None, None) => false,
        })
    }
}

/// The tags of every `name` header of the request, joined as one list
/// (RFC 9110 §5.3); none when there is no such header; `Err` when one is
/// not `*` or a list of entity tags.
fn tag_list(headers: &HeaderMap, name: &HeaderName) -> std::result::Result<Option<Tags>, ()> {
    let values: Vec<&[u8]> = headers
        .get_all(name)
        .iter()
        .map(HeaderValue::as_bytes)
        .collect();
    if values.is_empty() {
        return Ok(None);
    }
    let joined = values.join(&b","[..]);
    if joined.trim_ascii() == b"*" {
        return Ok(Some(Tags::Any));
    }
    parse_tags(&joined).map(|named| Some(Tags::List(named)))
}

/// `#entity-tag` (RFC 9110 §8.8.3): `"x"`, `W/"x"`, separated by commas
/// and optional white space; empty elements are allowed, an empty list is not.
fn parse_tags(mut rest: &[u8]) -> std::result::Result<Vec<Named>, ()> {
    let mut named = Vec::new();
    loop {
        rest = rest.trim_ascii_start();
        match rest.first() {
            None => break,
            Some(b',') => {
                rest = &rest[1..];
                continue;
            }
            Some(_) => {}
        }
        let weak = rest.starts_with(b"W/");
        if weak {
            rest = &rest[2..];
        }
        let Some(inner) = rest.strip_prefix(b"\"") else {
            return Err(());
        };
        let end = inner.iter().position(|&b| b == b'"').ok_or(())?;
        // etagc: `!`, `#` to `~`, and obs-text; no space or control.
        if !inner[..end]
            .iter()
            .all(|&b| b == 0x21 || b >= 0x23 && b != 0x7f)
        {
            return Err(());
        }
        let opaque = format!("\"{}\"", String::from_utf8_lossy(&inner[..end]));
        named.push(Named { weak, opaque });
        rest = inner[end + 1..].trim_ascii_start();
        match rest.first() {
            None => break,
            Some(b',') => rest = &rest[1..],
            Some(_) => return Err(()),
        }
    }
    if named.is_empty() { Err(()) } else { Ok(named) }
}

/// The request's `name` header as an HTTP date, if it is one (one header
/// of that name; otherwise ignored).
fn http_date(headers: &HeaderMap, name: &HeaderName) -> Option<SystemTime> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    httpdate::parse_http_date(value.to_str().ok()?).ok()
}

/// What an answer tells about the workbook version: its `ETag`, and its
/// `Last-Modified` when known (a replayed answer has only the tag).
#[derive(Debug, Clone)]
pub struct Stamp {
    etag: String,
    modified: Option<SystemTime>,
}

impl From<&Version> for Stamp {
    fn from(version: &Version) -> Stamp {
        Stamp {
            etag: version.tag.to_string(),
            modified: Some(version.modified),
        }
    }
}

impl Stamp {
    /// A stamp of only a tag, as an idempotency record keeps it.
    pub fn tag(etag: String) -> Stamp {
        Stamp {
            etag,
            modified: None,
        }
    }

    /// Sets `ETag` and `Last-Modified` on `response`.
    fn apply(&self, response: &mut Response) {
        let headers = response.headers_mut();
        if let Ok(etag) = HeaderValue::from_str(&self.etag) {
            headers.insert(header::ETAG, etag);
        }
        if let Some(modified) = self.modified
            && let Ok(date) = HeaderValue::from_str(&httpdate::fmt_http_date(modified))
        {
            headers.insert(header::LAST_MODIFIED, date);
        }
    }
}

/// `answer` with the workbook's `ETag` and `Last-Modified`.
pub fn stamped(answer: impl IntoResponse, stamp: Option<&Stamp>) -> Response {
    let mut response = answer.into_response();
    if let Some(stamp) = stamp {
        stamp.apply(&mut response);
    }
    response
}

/// `304 Not Modified`: no body, the version's `ETag` and `Last-Modified`.
pub fn not_modified(version: &Version) -> Response {
    stamped(StatusCode::NOT_MODIFIED, Some(&Stamp::from(version)))
}

/// The conditional headers of a read, for the OpenAPI description.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)] // describes the headers; `Conditions` reads them
pub struct ReadConditionParams {
    /// `ETag`s of copies the client has (or `*`): when the workbook is one
    /// of them (weak comparison) the answer is 304 with no body.
    #[param(rename = "If-None-Match", value_type = String, required = false, pattern = "^\\s*(\\*|(,\\s*)*(W/)?\"[!#-~]*\"(\\s*,(\\s*(W/)?\"[!#-~]*\")?)*)\\s*$")]
    if_none_match: Option<String>,
    /// An HTTP date; without If-None-Match, 304 when the workbook's file
    /// has not changed since (to the second).
    #[param(rename = "If-Modified-Since", value_type = String, required = false)]
    if_modified_since: Option<String>,
}

/// The conditional headers of a write, for the OpenAPI description.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)] // describes the headers; `Conditions` reads them
pub struct WriteConditionParams {
    /// `ETag`s (strong comparison) or `*`: the write is made only if the
    /// workbook is still one of these versions when the write takes its
    /// turn, after every write queued before it; otherwise 412 and nothing
    /// is written. Not a list of quoted tags or `*`: 400.
    #[param(rename = "If-Match", value_type = String, required = false, pattern = "^\\s*(\\*|(,\\s*)*(W/)?\"[!#-~]*\"(\\s*,(\\s*(W/)?\"[!#-~]*\")?)*)\\s*$")]
    if_match: Option<String>,
    /// An HTTP date; without If-Match, 412 when the workbook's file
    /// changed after it (to the second).
    #[param(rename = "If-Unmodified-Since", value_type = String, required = false)]
    if_unmodified_since: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strong(opaque: &str) -> Named {
        Named {
            weak: false,
            opaque: format!("\"{opaque}\""),
        }
    }

    #[test]
    fn entity_tag_lists_parse_with_weak_tags_and_empty_elements() {
        assert_eq!(parse_tags(br#""a""#), Ok(vec![strong("a")]));
        let weak = Named {
            weak: true,
            ..strong("b")
        };
        assert_eq!(
            parse_tags(br#" "a" ,W/"b",, "" "#),
            Ok(vec![strong("a"), weak, strong("")])
        );
    }

    #[test]
    fn malformed_entity_tag_lists_are_refused() {
        for bad in [
            &b"abc"[..],
            b"\"a",
            b"\"a\" \"b\"",
            b"w/\"a\"",
            b"\"a b\"",
            b",",
            b"",
        ] {
            assert_eq!(parse_tags(bad), Err(()), "{}", String::from_utf8_lossy(bad));
        }
    }
}
