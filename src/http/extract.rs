//! Extractors that answer in the contract's error shape: JSON and xlsx
//! bodies (415 for another content type, 413 over the limit, 400 for bad
//! JSON or a key given twice), query strings, and the
//! `{spreadsheet_id}/{sheet_name}` path.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{StatusCode, header, request::Parts};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::error::ApiError;
use crate::model::request::no_query_parameters;
use crate::model::{Problems, SpreadsheetId};

/// The content type of uploaded and downloaded workbooks.
pub const XLSX_MIME: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
/// The generic binary type, also taken for uploads: what HTTP clients and
/// generated API clients send for a file when told nothing else.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// What to send instead, for a JSON body of another content type.
const SEND_JSON: &str = "send the body as JSON with the header Content-Type: application/json";
/// What to send instead, for an upload of another content type.
const SEND_XLSX: &str = "send the .xlsx file's bytes as the whole body with the header \
     Content-Type: application/vnd.openxmlformats-officedocument.spreadsheetml.sheet \
     (or application/octet-stream); a form upload (curl -F) is not taken, use \
     curl --data-binary @book.xlsx";

/// A JSON request body: valid JSON text with no key repeated in an object,
/// not yet read into a type.
pub struct JsonBody(pub Bytes);

/// An xlsx request body, not empty.
pub struct XlsxBody(pub Bytes);

/// The request's media type (before any `;` parameter), in lower case.
fn media_type(req: &Request) -> Option<String> {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|mime| mime.trim().to_ascii_lowercase())
}

async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state)
        .await
        .map_err(|rejection: BytesRejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge
            } else {
                ApiError::invalid("body", "could not be read")
            }
        })
}

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if media_type(&req).as_deref() != Some("application/json") {
            return Err(ApiError::UnsupportedMediaType(SEND_JSON));
        }
        let bytes = body_bytes(req, state).await?;
        check_json(&bytes)?;
        Ok(JsonBody(bytes))
    }
}

/// Checks that `json` is JSON text with no object key given twice, in one
/// pass: serde_json would keep the last of two keys silently, so
/// `{"type": "row", "type": "filter"}` would be read as a filter.
fn check_json(json: &[u8]) -> Result<(), ApiError> {
    let found = RefCell::new(None);
    let seed = NoDuplicateKeys {
        path: String::new(),
        found: &found,
    };
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let walked = seed
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (found.into_inner(), walked) {
        (Some(duplicate), _) => Err(duplicate.into()),
        (None, Err(e)) => Err(ApiError::invalid(
            "body",
            format!("is not valid JSON ({e})"),
        )),
        (None, Ok(())) => Ok(()),
    }
}

/// Walks a JSON value, failing at the first object key seen twice.
struct NoDuplicateKeys<'a> {
    path: String,
    found: &'a RefCell<Option<Problems>>,
}

impl NoDuplicateKeys<'_> {
    fn child(&self, step: fmt::Arguments<'_>) -> NoDuplicateKeys<'_> {
        NoDuplicateKeys {
            path: format!("{}{step}", self.path),
            found: self.found,
        }
    }
}

impl<'de> DeserializeSeed<'de> for NoDuplicateKeys<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicateKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let child = if self.path.is_empty() {
                self.child(format_args!("{key}"))
            } else {
                self.child(format_args!(".{key}"))
            };
            if !seen.insert(key) {
                let rule = "is given more than once (a JSON object may not repeat a key)";
                *self.found.borrow_mut() = Some(Problems::one(child.path, rule));
                return Err(de::Error::custom("duplicate key"));
            }
            map.next_value_seed(child)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(self.child(format_args!("[{index}]")))?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

impl<S: Send + Sync> FromRequest<S> for XlsxBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let mime = media_type(&req);
        if !matches!(mime.as_deref(), Some(XLSX_MIME | OCTET_STREAM)) {
            return Err(ApiError::UnsupportedMediaType(SEND_XLSX));
        }
        let bytes = body_bytes(req, state).await?;
        if bytes.is_empty() {
            return Err(ApiError::invalid(
                "body",
                "is empty; send the bytes of an .xlsx file (curl --data-binary @book.xlsx)",
            ));
        }
        Ok(XlsxBody(bytes))
    }
}

/// The body of `POST /v1/spreadsheets` and `PUT /v1/spreadsheets/{id}`: an
/// .xlsx file, or (§10.3) JSON describing a new workbook.
pub enum UploadBody {
    Xlsx(Bytes),
    Json(Bytes),
}

impl<S: Send + Sync> FromRequest<S> for UploadBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if media_type(&req).as_deref() == Some("application/json") {
            let JsonBody(bytes) = JsonBody::from_request(req, state).await?;
            return Ok(UploadBody::Json(bytes));
        }
        let XlsxBody(bytes) = XlsxBody::from_request(req, state).await?;
        Ok(UploadBody::Xlsx(bytes))
    }
}

/// The query string's pairs, decoded, in the order given.
pub struct QueryPairs(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        // The decoder puts U+FFFD for an escape that is no UTF-8 (`%FF`):
        // refused, as in the path, rather than read as another value.
        let undecodable = query.split(['&', '=']).any(|piece| {
            percent_encoding::percent_decode_str(piece)
                .decode_utf8()
                .is_err()
        });
        if undecodable {
            return Err(ApiError::invalid(
                "query",
                "could not be decoded (a %-escape that is no UTF-8)",
            ));
        }
        serde_urlencoded::from_str(query)
            .map(QueryPairs)
            .map_err(|_| ApiError::invalid("query", "is not a valid query string"))
    }
}

/// For the routes that take no query parameter: refuses any (§9), so that
/// `DELETE …?dry_run=true` cannot pass for a dry run.
pub struct NoQuery;

impl<S: Send + Sync> FromRequestParts<S> for NoQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let QueryPairs(pairs) = QueryPairs::from_request_parts(parts, state).await?;
        no_query_parameters(&pairs)?;
        Ok(NoQuery)
    }
}

/// `{spreadsheet_id}` alone, unchecked.
pub struct SpreadsheetPath {
    id: String,
}

/// `{spreadsheet_id}/{sheet_name}`, the sheet name percent-decoded.
pub struct SheetPath {
    id: String,
    pub sheet: String,
}

fn path_rejection(rejection: axum::extract::rejection::PathRejection) -> ApiError {
    ApiError::invalid("path", format!("could not be decoded ({rejection})"))
}

impl<S: Send + Sync> FromRequestParts<S> for SpreadsheetPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(path_rejection)?;
        Ok(SpreadsheetPath { id })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for SheetPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path((id, sheet)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(path_rejection)?;
        Ok(SheetPath { id, sheet })
    }
}

fn parse_id(id: &str) -> Result<SpreadsheetId, Problems> {
    SpreadsheetId::parse(id).map_err(|rule| Problems::one("spreadsheet_id", rule))
}

impl SpreadsheetPath {
    pub fn id(&self) -> Result<SpreadsheetId, ApiError> {
        Ok(self.checked_id()?)
    }

    /// The spreadsheet id, or the problem with it.
    pub fn checked_id(&self) -> Result<SpreadsheetId, Problems> {
        parse_id(&self.id)
    }
}

impl SheetPath {
    /// The spreadsheet id, checked.
    pub fn id(&self) -> Result<SpreadsheetId, Problems> {
        parse_id(&self.id)
    }
}
