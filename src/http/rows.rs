//! Rows of one sheet: `/v1/data/{spreadsheet_id}/{sheet_name}` (contract §4.1–4.4).
//!
//! Each handler checks the request, asks the store for a (locked) edit or a
//! read, runs one model function inside it and maps the answer.

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, Result};
use super::extract::{JsonBody, SheetPath};
use crate::model::request::{DeleteRows, InsertRows, ReadQuery, UpdateRows};
use crate::store::Edit;

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/data/{spreadsheet_id}/{sheet_name}",
        get(rows_read)
            .post(rows_insert)
            .patch(rows_update)
            .delete(rows_delete),
    )
}

/// §4.1 Insert rows: 201 `{"inserted": N}`.
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_insert(
    State(state): State<AppState>,
    path: SheetPath,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>)> {
    let (id, request) = path.validate(InsertRows::from_json(body))?;
    let sheet = path.sheet;
    let inserted = state
        .store
        .edit(id, move |workbook| {
            let n = workbook.sheet_mut(&sheet)?.insert(request)?;
            Ok::<_, ApiError>(Edit {
                value: n,
                changed: n > 0,
            })
        })
        .await?;
    Ok((StatusCode::CREATED, Json(json!({ "inserted": inserted }))))
}

/// §4.2 Update rows by filter or row number: 200 `{"updated": N}`.
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_update(
    State(state): State<AppState>,
    path: SheetPath,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>> {
    let (id, request) = path.validate(UpdateRows::from_json(body))?;
    let sheet = path.sheet;
    let updated = state
        .store
        .edit(id, move |workbook| {
            let n = workbook.sheet_mut(&sheet)?.update(request)?;
            Ok::<_, ApiError>(Edit {
                value: n,
                changed: n > 0,
            })
        })
        .await?;
    Ok(Json(json!({ "updated": updated })))
}

/// §4.3 Read rows: 200 `{"data": [...], "total": T}`. Never rewrites the file.
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_read(
    State(state): State<AppState>,
    path: SheetPath,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>> {
    let pairs = serde_urlencoded::from_str::<Vec<(String, String)>>(query.as_deref().unwrap_or(""))
        .map_err(|_| ApiError::invalid("query", "is not a valid query string"))?;
    let (id, query) = path.validate(ReadQuery::from_pairs(&pairs))?;
    let sheet = path.sheet;
    let page = state
        .store
        .read(id, move |workbook| workbook.sheet(&sheet)?.read(&query))
        .await??;
    Ok(Json(json!({ "data": page.rows, "total": page.total })))
}

/// §4.4 Delete rows by filter or row number; rows below move up: 200 `{"deleted": N}`.
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_delete(
    State(state): State<AppState>,
    path: SheetPath,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>> {
    let (id, request) = path.validate(DeleteRows::from_json(body))?;
    let sheet = path.sheet;
    let deleted = state
        .store
        .edit(id, move |workbook| {
            let n = workbook.delete_rows(&sheet, &request)?;
            Ok::<_, ApiError>(Edit {
                value: n,
                changed: n > 0,
            })
        })
        .await?;
    Ok(Json(json!({ "deleted": deleted })))
}
