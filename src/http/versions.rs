//! Earlier versions of a workbook (contract §11.7, `--keep-versions`):
//! list them, download one, make one current again.

use axum::Json;
use axum::body::Body;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::conditional::{
    Conditions, ReadConditionParams, Stamp, WriteConditionParams, not_modified, stamped,
};
use super::error::{ApiError, Result};
use super::extract::{NoQuery, XLSX_MIME};
use super::idempotency::{IdempotencyKey, once};
use super::openapi::{Errors, KeyParams};
use super::spreadsheets::{SpreadsheetCreated, rfc3339};
use crate::model::{Problems, SpreadsheetId};
use crate::store::Tag;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(versions_list))
        .routes(routes!(version_download))
        .routes(routes!(version_restore))
}

/// The versions kept of a workbook, newest first.
#[derive(Serialize, ToSchema)]
pub struct VersionList {
    versions: Vec<VersionListed>,
}

#[derive(Serialize, ToSchema)]
struct VersionListed {
    /// The `ETag` the workbook had as this version: the quoted BLAKE3 hash of
    /// its file.
    etag: String,
    /// When this version's file was written, RFC 3339 in UTC.
    #[schema(format = DateTime)]
    modified: String,
    bytes: u64,
}

/// `{spreadsheet_id}/versions/{etag}` in a path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // describes the path; `VersionPath` reads it
struct VersionParams {
    /// The spreadsheet's id: a UUID, hyphenated, any letter case.
    spreadsheet_id: uuid::Uuid,
    /// The version's ETag: its 64 hex digits, with or without the quotes.
    #[param(pattern = "^\"?[0-9a-fA-F]{64}\"?$")]
    etag: String,
}

/// `{spreadsheet_id}/versions/{etag}`, checked.
struct VersionPath {
    id: SpreadsheetId,
    tag: Tag,
}

impl<S: Send + Sync> FromRequestParts<S> for VersionPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path((id, etag)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::invalid("path", format!("could not be decoded ({e})")))?;
        let id = SpreadsheetId::parse(&id).map_err(|rule| Problems::one("spreadsheet_id", rule));
        let unquoted = etag.trim_start_matches('"').trim_end_matches('"');
        let tag = Tag::from_hex(unquoted)
            .ok_or_else(|| Problems::one("etag", "must be a version's ETag: 64 hex digits"));
        let (id, tag) = Problems::both(id, tag)?;
        Ok(VersionPath { id, tag })
    }
}

/// List a workbook's earlier versions
///
/// The versions kept of the workbook, newest first: the files that writes
/// replaced, up to `--keep-versions` of them.
// Contract §11.7.
#[utoipa::path(get, path = "/v1/spreadsheets/{spreadsheet_id}/versions", tag = "spreadsheets",
    params(super::openapi::SpreadsheetParams),
    responses((status = 200, description = "The versions kept, newest first", body = VersionList), Errors))]
async fn versions_list(
    State(state): State<AppState>,
    path: super::extract::SpreadsheetPath,
    _: NoQuery,
) -> Result<Json<VersionList>> {
    let kept = state.store.versions(path.id()?).await?;
    let versions = kept
        .into_iter()
        .map(|kept| VersionListed {
            etag: kept.tag.to_string(),
            modified: rfc3339(kept.modified),
            bytes: kept.bytes,
        })
        .collect();
    Ok(Json(VersionList { versions }))
}

/// Download an earlier version
///
/// The file of the version, byte for byte as it was.
// Contract §11.7.
#[utoipa::path(get, path = "/v1/spreadsheets/{spreadsheet_id}/versions/{etag}", tag = "spreadsheets",
    params(VersionParams, ReadConditionParams),
    responses((status = 200, description = "The version's .xlsx bytes", body = super::spreadsheets::XlsxFile,
        content_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", headers(
            ("ETag" = String, description = "The version: the quoted BLAKE3 hash of its file"),
            ("Last-Modified" = String, description = "When the version's file was written"))),
        (status = 304, description = "Not Modified: If-None-Match names this version (or If-Modified-Since is not before it); no body",
            headers(("ETag" = String, description = "The version"))),
        Errors))]
async fn version_download(
    State(state): State<AppState>,
    path: VersionPath,
    _: NoQuery,
    conditions: Conditions,
) -> Result<Response> {
    let (bytes, version) = state.store.version_bytes(path.id, path.tag).await?;
    if conditions.unchanged(&version)? {
        return Ok(not_modified(&version));
    }
    let response = Response::builder()
        .header(header::CONTENT_TYPE, XLSX_MIME)
        .header(
            header::CONTENT_DISPOSITION,
            format!(
                "attachment; filename=\"{}-{}.xlsx\"",
                path.id,
                path.tag.hex()
            ),
        )
        .body(Body::from(bytes))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(stamped(response, Some(&Stamp::from(&version))))
}

/// Restore an earlier version
///
/// Makes the version the workbook's current file again: a write like any
/// other (the file it replaces is kept as a version, and If-Match applies).
// Contract §11.7.
#[utoipa::path(post, path = "/v1/spreadsheets/{spreadsheet_id}/versions/{etag}/restore", tag = "spreadsheets",
    params(VersionParams, KeyParams, WriteConditionParams),
    responses((status = 200, description = "The version is the workbook's file again", body = SpreadsheetCreated, headers(
            ("ETag" = String, description = "The workbook's version now: the restored version's"),
            ("Last-Modified" = String, description = "When the workbook's file was written"))), Errors))]
async fn version_restore(
    State(state): State<AppState>,
    path: VersionPath,
    _: NoQuery,
    key: IdempotencyKey,
    conditions: Conditions,
) -> Result<Response> {
    let (bytes, _) = state.store.version_bytes(path.id, path.tag).await?;
    let precondition = conditions.precondition();
    let id = path.id;
    let restore = |claimed| async { Ok(state.store.put(id, bytes, claimed, precondition).await?) };
    let restored = once(&state.store, key.with_body(&[]), restore).await?;
    Ok(restored.respond(|_| {
        let restored = SpreadsheetCreated {
            spreadsheet_id: id.to_string(),
        };
        (StatusCode::OK, Json(restored))
    }))
}
