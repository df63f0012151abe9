//! Rows of one sheet: `/v1/data/{spreadsheet_id}/{sheet_name}` (contract §4.1–4.4).
//!
//! Each handler checks the request, asks the store for a (locked) edit or a
//! read, runs one model function inside it and maps the answer.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, Result};
use super::extract::{JsonBody, SheetPath};
use super::openapi::{
    DeleteBody, Deleted, Errors, InsertBody, Inserted, RowsPage, UpdateBody, Updated,
};
use crate::model::request::{DeleteRows, InsertRows, ReadQuery, UpdateRows};
use crate::store::Edit;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(rows_read, rows_insert, rows_update, rows_delete))
}

const PATH: &str = "/v1/data/{spreadsheet_id}/{sheet_name}";

/// §4.1 Insert rows: 201 `{"inserted": N}`.
#[utoipa::path(post, path = PATH, tag = "rows", params(
        ("spreadsheet_id" = String, Path, description = "UUID, hyphenated"),
        ("sheet_name" = String, Path, description = "sheet name, percent-encoded"),
    ),
    request_body = InsertBody,
    responses((status = 201, description = "Rows appended", body = Inserted), Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_insert(
    State(state): State<AppState>,
    path: SheetPath,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Inserted>)> {
    let max_rows = state.config.max_rows_per_request;
    let request = InsertRows::from_json(body).and_then(|r| r.at_most(max_rows));
    let (id, request) = path.validate(request)?;
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
    Ok((StatusCode::CREATED, Json(Inserted { inserted })))
}

/// §4.2 Update rows by filter or row number: 200 `{"updated": N}`.
#[utoipa::path(patch, path = PATH, tag = "rows", params(
        ("spreadsheet_id" = String, Path, description = "UUID, hyphenated"),
        ("sheet_name" = String, Path, description = "sheet name, percent-encoded"),
    ),
    request_body = UpdateBody,
    responses((status = 200, description = "Matched rows updated", body = Updated), Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_update(
    State(state): State<AppState>,
    path: SheetPath,
    JsonBody(body): JsonBody,
) -> Result<Json<Updated>> {
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
    Ok(Json(Updated { updated }))
}

/// §4.3 Read rows: 200 `{"data": [...], "total": T}`. Never rewrites the file.
#[utoipa::path(get, path = PATH, tag = "rows",
    params(
        ("spreadsheet_id" = String, Path, description = "UUID, hyphenated"),
        ("sheet_name" = String, Path, description = "sheet name, percent-encoded"),
        ("filter" = Option<Vec<String>>, Query, description = "column:operator:value; repeat for more (all must hold)"),
        ("limit" = Option<u32>, Query, description = "at most this many rows (0 to 100000, default 1000)"),
        ("offset" = Option<u32>, Query, description = "skip this many matching rows (default 0)"),
    ),
    responses((status = 200, description = "Matching rows", body = RowsPage), Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_read(
    State(state): State<AppState>,
    path: SheetPath,
    RawQuery(query): RawQuery,
) -> Result<Json<RowsPage>> {
    let pairs = serde_urlencoded::from_str::<Vec<(String, String)>>(query.as_deref().unwrap_or(""))
        .map_err(|_| ApiError::invalid("query", "is not a valid query string"))?;
    let (id, query) = path.validate(ReadQuery::from_pairs(&pairs))?;
    let sheet = path.sheet;
    let page = state
        .store
        .read(id, move |workbook| workbook.sheet(&sheet)?.read(&query))
        .await??;
    Ok(Json(RowsPage {
        data: page.rows,
        total: page.total,
    }))
}

/// §4.4 Delete rows by filter or row number; rows below move up: 200 `{"deleted": N}`.
#[utoipa::path(delete, path = PATH, tag = "rows", params(
        ("spreadsheet_id" = String, Path, description = "UUID, hyphenated"),
        ("sheet_name" = String, Path, description = "sheet name, percent-encoded"),
    ),
    request_body = DeleteBody,
    responses((status = 200, description = "Matched rows deleted", body = Deleted), Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_delete(
    State(state): State<AppState>,
    path: SheetPath,
    JsonBody(body): JsonBody,
) -> Result<Json<Deleted>> {
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
    Ok(Json(Deleted { deleted }))
}
