//! Whole spreadsheets: list sheets, upload, download, remove (contract §4.5).

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, Result};
use super::extract::{SpreadsheetPath, XLSX_MIME, XlsxBody};
use crate::model::header::Header;
use crate::store::StoreError;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/data/{spreadsheet_id}", get(sheets_list))
        .route("/v1/spreadsheets", post(spreadsheets_upload))
        .route(
            "/v1/spreadsheets/{spreadsheet_id}",
            get(spreadsheets_download).delete(spreadsheets_remove),
        )
}

/// `GET /v1/data/{id}`: each sheet with its columns and data-row count.
async fn sheets_list(State(state): State<AppState>, path: SpreadsheetPath) -> Result<Json<Value>> {
    let sheets = state
        .store
        .read(path.id()?, |workbook| {
            workbook
                .sheets
                .iter()
                .map(|sheet| {
                    let columns: Vec<_> = Header::of(sheet)
                        .map(|h| h.all().iter().map(|c| c.name.clone()).collect())
                        .unwrap_or_default();
                    json!({ "name": sheet.name, "columns": columns, "rows": sheet.data_row_count() })
                })
                .collect::<Vec<_>>()
        })
        .await?;
    Ok(Json(json!({ "sheets": sheets })))
}

/// `POST /v1/spreadsheets`: stores an uploaded workbook under a new id.
async fn spreadsheets_upload(
    State(state): State<AppState>,
    XlsxBody(bytes): XlsxBody,
) -> Result<(StatusCode, Json<Value>)> {
    let id = state
        .store
        .create(bytes.to_vec())
        .await
        .map_err(|e| match e {
            StoreError::Unreadable(why) => {
                ApiError::invalid("body", format!("is not a readable xlsx workbook ({why})"))
            }
            other => other.into(),
        })?;
    Ok((
        StatusCode::CREATED,
        Json(json!({ "spreadsheet_id": id.to_string() })),
    ))
}

/// `GET /v1/spreadsheets/{id}`: the workbook as it is on disk.
async fn spreadsheets_download(
    State(state): State<AppState>,
    path: SpreadsheetPath,
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
async fn spreadsheets_remove(
    State(state): State<AppState>,
    path: SpreadsheetPath,
) -> Result<StatusCode> {
    state.store.remove(path.id()?).await?;
    Ok(StatusCode::NO_CONTENT)
}
