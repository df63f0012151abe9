//! Extractors that answer in the contract's error shape: JSON and xlsx
//! bodies (415 for another content type, 413 over the limit, 400 for bad
//! JSON) and the `{spreadsheet_id}/{sheet_name}` path.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{StatusCode, header, request::Parts};
use serde_json::Value;

use super::error::ApiError;
use crate::model::{Problems, SpreadsheetId};

/// The content type of uploaded and downloaded workbooks.
pub const XLSX_MIME: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// A JSON request body, parsed but not yet checked.
pub struct JsonBody(pub Value);

/// An xlsx request body.
pub struct XlsxBody(pub Bytes);

/// Whether the request's content type is `expected` (parameters allowed).
fn has_content_type(req: &Request, expected: &str) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case(expected))
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
        if !has_content_type(&req, "application/json") {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = body_bytes(req, state).await?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| ApiError::invalid("body", format!("is not valid JSON ({e})")))
    }
}

impl<S: Send + Sync> FromRequest<S> for XlsxBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !has_content_type(&req, XLSX_MIME) {
            return Err(ApiError::UnsupportedMediaType);
        }
        body_bytes(req, state).await.map(XlsxBody)
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

/// The id and the checked request, with the problems of both reported together.
fn validate<T>(id: &str, request: Result<T, Problems>) -> Result<(SpreadsheetId, T), ApiError> {
    match (parse_id(id), request) {
        (Ok(id), Ok(request)) => Ok((id, request)),
        (Err(mut problems), Err(more)) => {
            problems.extend(more);
            Err(problems.into())
        }
        (Err(problems), _) | (_, Err(problems)) => Err(problems.into()),
    }
}

impl SpreadsheetPath {
    pub fn id(&self) -> Result<SpreadsheetId, ApiError> {
        Ok(parse_id(&self.id)?)
    }
}

impl SheetPath {
    /// The spreadsheet id and the request, both checked.
    pub fn validate<T>(
        &self,
        request: Result<T, Problems>,
    ) -> Result<(SpreadsheetId, T), ApiError> {
        validate(&self.id, request)
    }
}
