//! Whole spreadsheets: list sheets, upload, download, remove (contract §4.5).

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, Result};
use super::extract::NoQuery;
use super::extract::{SpreadsheetPath, XLSX_MIME, XlsxBody};
use super::idempotency::{IdempotencyKey, marked, once};
use super::openapi::{
    Errors, KeyParams, SheetList, SheetSummary, SpreadsheetCreated, SpreadsheetParams, XlsxFile,
};
use crate::model::SpreadsheetId;
use crate::model::header::Header;
use crate::store::{Claimed, StoreError};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sheets_list))
        .routes(routes!(spreadsheets_upload))
        .routes(routes!(spreadsheets_download, spreadsheets_remove))
}

/// `GET /v1/data/{id}`: each sheet with its columns and data-row count.
#[utoipa::path(get, path = "/v1/data/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams),
    responses((status = 200, description = "The workbook's sheets", body = SheetList), Errors))]
async fn sheets_list(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
) -> Result<Json<SheetList>> {
    let sheets = state
        .store
        .read(path.id()?, |workbook| {
            workbook
                .sheets
                .iter()
                .map(|sheet| SheetSummary {
                    name: sheet.name.clone(),
                    columns: Header::of(sheet)
                        .map(|h| h.all().iter().map(|c| c.name.clone()).collect())
                        .unwrap_or_default(),
                    rows: sheet.data_row_count(),
                })
                .collect()
        })
        .await?;
    Ok(Json(SheetList { sheets }))
}

/// `POST /v1/spreadsheets`: stores an uploaded workbook under a new id.
#[utoipa::path(post, path = "/v1/spreadsheets", tag = "spreadsheets", params(KeyParams),
    request_body(description = "The .xlsx file's bytes", content(
        (XlsxFile = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        (XlsxFile = "application/octet-stream"))),
    responses((status = 201, description = "Stored under a new id", body = SpreadsheetCreated), Errors))]
async fn spreadsheets_upload(
    State(state): State<AppState>,
    _: NoQuery,
    key: IdempotencyKey,
    XlsxBody(bytes): XlsxBody,
) -> Result<Response> {
    let key = key.with_body(&bytes);
    let upload = |claimed| store_upload(&state, bytes.to_vec(), claimed);
    let (mut spreadsheet_id, mut replayed) = once(&state.store, key.clone(), upload).await?;
    // A workbook removed since its upload is not answered for: a retry
    // then stores it again, under a new id.
    if let Some(key) = key.as_ref().filter(|_| replayed)
        && !SpreadsheetId::parse(&spreadsheet_id).is_ok_and(|id| state.store.exists(id))
    {
        state.store.forget_key(key);
        let upload = |claimed| store_upload(&state, bytes.to_vec(), claimed);
        (spreadsheet_id, replayed) = once(&state.store, Some(key.clone()), upload).await?;
    }
    let created = (
        StatusCode::CREATED,
        Json(SpreadsheetCreated { spreadsheet_id }),
    );
    Ok(marked(created, replayed))
}

/// Stores an uploaded workbook; an unreadable one is the request's fault.
async fn store_upload(state: &AppState, bytes: Vec<u8>, key: Option<Claimed>) -> Result<String> {
    let id = state.store.create(bytes, key).await.map_err(|e| match e {
        StoreError::Unreadable(why) => {
            ApiError::invalid("body", format!("is not a readable xlsx workbook ({why})"))
        }
        other => other.into(),
    })?;
    Ok(id.to_string())
}

/// `GET /v1/spreadsheets/{id}`: the workbook as it is on disk.
#[utoipa::path(get, path = "/v1/spreadsheets/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams),
    responses((status = 200, description = "The xlsx file, as an attachment (sent with the xlsx content type)",
        content(
            (XlsxFile = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            (XlsxFile = "application/octet-stream")),
        headers(("Content-Disposition" = String, description = "attachment; filename=\"<id>.xlsx\""))), Errors))]
async fn spreadsheets_download(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
) -> Result<Response> {
    let id = path.id()?;
    let bytes = state.store.download(id).await?;
    Response::builder()
        .header(header::CONTENT_TYPE, XLSX_MIME)
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", id.file_name()),
        )
        .body(Body::from(bytes))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// `DELETE /v1/spreadsheets/{id}`: removes the workbook (204).
#[utoipa::path(delete, path = "/v1/spreadsheets/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams),
    responses((status = 204, description = "Removed"), Errors))]
async fn spreadsheets_remove(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
) -> Result<StatusCode> {
    state.store.remove(path.id()?).await?;
    Ok(StatusCode::NO_CONTENT)
}
