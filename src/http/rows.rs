//! Rows of one sheet: `/v1/data/{spreadsheet_id}/{sheet_name}` (contract §4.1–4.4).
//!
//! Each handler checks the request, asks the store for a (locked) edit or a
//! read, runs one model function inside it and maps the answer.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, Result};
use super::extract::{JsonBody, QueryPairs, SheetPath};
use super::idempotency::{IdempotencyKey, edit_once, marked};
use super::openapi::{
    Deleted, Errors, InsertParams, Inserted, KeyParams, ReadParams, RowsPage, RowsParams,
    SheetParams, Updated, Upserted,
};
use super::stream;
use crate::model::header::Region;
use crate::model::request::{
    DeleteBody, DeleteRows, InsertBody, InsertRows, ReadQuery, Rejected, UpdateBody, UpdateRows,
    header_row_from_pairs, insert_query_from_pairs,
};
use crate::model::{Problems, Sheet, SpreadsheetId};
use crate::store::Edit;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(rows_read, rows_insert, rows_update, rows_delete))
}

const PATH: &str = "/v1/data/{spreadsheet_id}/{sheet_name}";

/// §4.1 Insert rows: 201 `{"inserted": N}`, appended, or with `before`
/// (§11.2) as new sheet rows before that row; with `on_conflict` (§10.2),
/// upsert: 200 `{"inserted": a, "updated": b}`.
#[utoipa::path(post, path = PATH, tag = "rows", params(SheetParams, InsertParams, KeyParams),
    request_body = InsertBody,
    responses((status = 201, description = "Rows appended, or inserted before the row `before` names", body = Inserted),
        (status = 200, description = "With on_conflict: rows inserted and updated", body = Upserted), Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_insert(
    State(state): State<AppState>,
    path: SheetPath,
    QueryPairs(pairs): QueryPairs,
    key: IdempotencyKey,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let request = InsertRows::from_json(&body, state.config.max_rows_per_request);
    let (query, request) = with_query(insert_query_from_pairs(&pairs), request);
    let header_row = query.header_row;
    let (id, request) =
        valid_request(&state, &path, header_row, request, Sheet::insert_problems).await?;
    let sheet = path.sheet;
    let key = key.with_body(&body);
    if let Some(column) = query.on_conflict {
        let (upserted, replayed) = edit_once(&state.store, id, key, move |workbook| {
            let source = workbook.source(&sheet, header_row)?;
            let (inserted, updated) = workbook.upsert(&source, request.clone(), &column)?;
            Ok(Edit {
                value: Upserted { inserted, updated },
                changed: inserted + updated > 0,
            })
        })
        .await?;
        return Ok(marked(Json(upserted), replayed));
    }
    let (inserted, replayed) = edit_once(&state.store, id, key, move |workbook| {
        let source = workbook.source(&sheet, header_row)?;
        // Cloned: an edit may be applied again (see `store::commit`).
        let inserted = workbook.insert(&source, request.clone(), query.before)?;
        Ok(Edit::rows(inserted))
    })
    .await?;
    Ok(marked(
        (StatusCode::CREATED, Json(Inserted { inserted })),
        replayed,
    ))
}

/// §4.2 Update rows by filter or row number: 200 `{"updated": N}`.
#[utoipa::path(patch, path = PATH, tag = "rows", params(SheetParams, RowsParams, KeyParams),
    request_body = UpdateBody,
    responses((status = 200, description = "Matched rows updated", body = Updated), Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_update(
    State(state): State<AppState>,
    path: SheetPath,
    QueryPairs(pairs): QueryPairs,
    key: IdempotencyKey,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let request = UpdateRows::from_json(&body);
    let (header_row, request) = with_query(header_row_from_pairs(&pairs), request);
    let (id, request) =
        valid_request(&state, &path, header_row, request, Sheet::update_problems).await?;
    let sheet = path.sheet;
    let key = key.with_body(&body);
    let (updated, replayed) = edit_once(&state.store, id, key, move |workbook| {
        let source = workbook.source(&sheet, header_row)?;
        let sheet = &mut workbook.sheets[source.sheet];
        Ok(Edit::rows(sheet.update(&source.region, request.clone())?))
    })
    .await?;
    Ok(marked(Json(Updated { updated }), replayed))
}

/// §4.3 Read rows: 200 `{"data": [...], "total": T}`. Never rewrites the file.
#[utoipa::path(get, path = PATH, tag = "rows",
    params(SheetParams, ReadParams),
    responses((status = 200, description = "Matching rows, as JSON or (format=csv, or Accept: text/csv) as CSV: a line of column names, then a line per row",
        content((RowsPage = "application/json"), (String = "text/csv")),
        headers(("X-Total-Count" = u64, description = "Rows matching, before limit and offset"),
            ("Link" = String, description = "<…>; rel=\"next\": the same query at the next offset, when rows remain"))),
        Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_read(
    State(state): State<AppState>,
    path: SheetPath,
    uri: Uri,
    headers: HeaderMap,
    QueryPairs(pairs): QueryPairs,
) -> Result<Response> {
    let query = ReadQuery::from_pairs(&pairs);
    let header_row = match &query {
        Ok(query) => query.header_row,
        Err(rejected) => rejected.partial.header_row,
    }
    .map(|row| u64::from(row.get()));
    let (id, query) = valid_request(&state, &path, header_row, query, Sheet::read_problems).await?;
    let format = query
        .format
        .unwrap_or_else(|| stream::accepted_format(&headers));
    let next = stream::NextPage {
        path: uri.path().to_owned(),
        query: pairs,
        offset: query.offset,
        limit: query.limit,
    };
    let rendering = query.rendering;
    let sheet = path.sheet;
    let (workbook, index, page) = state
        .store
        .read(id, move |workbook| {
            let source = workbook.source(&sheet, header_row)?;
            let page = workbook.sheets[source.sheet].read(&source.region, &query)?;
            Ok::<_, ApiError>((workbook.clone(), source.sheet, page))
        })
        .await??;
    Ok(stream::answer(
        workbook,
        index,
        page,
        (format, rendering),
        &next,
    ))
}

/// §4.4 Delete rows by filter, row number or numbers (§11.2); rows below
/// move up, and everything that points at cells moves with them: 200
/// `{"deleted": N}`.
#[utoipa::path(delete, path = PATH, tag = "rows", params(SheetParams, RowsParams, KeyParams),
    request_body = DeleteBody,
    responses((status = 200, description = "Matched rows deleted", body = Deleted), Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_delete(
    State(state): State<AppState>,
    path: SheetPath,
    QueryPairs(pairs): QueryPairs,
    key: IdempotencyKey,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let request = DeleteRows::from_json(&body);
    let (header_row, request) = with_query(header_row_from_pairs(&pairs), request);
    let (id, request) =
        valid_request(&state, &path, header_row, request, Sheet::delete_problems).await?;
    let sheet = path.sheet;
    let key = key.with_body(&body);
    let (deleted, replayed) = edit_once(&state.store, id, key, move |workbook| {
        let source = workbook.source(&sheet, header_row)?;
        Ok(Edit::rows(workbook.delete_rows(&source, &request)?))
    })
    .await?;
    Ok(marked(Json(Deleted { deleted }), replayed))
}

/// The query's value and the request, a bad query's problems joined to the
/// request's, so that the id's and the sheet's are named with them.
fn with_query<Q: Default, T>(
    query: std::result::Result<Q, Problems>,
    request: std::result::Result<T, Rejected<T>>,
) -> (Q, std::result::Result<T, Rejected<T>>) {
    match query {
        Ok(query) => (query, request),
        Err(mut problems) => {
            let partial = match request {
                Ok(request) => request,
                Err(rejected) => {
                    problems.extend(rejected.problems);
                    rejected.partial
                }
            };
            (Q::default(), Err(Rejected { partial, problems }))
        }
    }
}

/// The checked id and request. A request with problems is answered 400
/// naming every one: the id's, its own, and those only the sheet can see
/// (columns it lacks, under the header `header_row` names or the rule
/// finds), looked up without taking the write turn.
async fn valid_request<T: Send + 'static>(
    state: &AppState,
    path: &SheetPath,
    header_row: Option<u64>,
    request: std::result::Result<T, Rejected<T>>,
    sheet_problems: fn(&Sheet, &Region, &T) -> Problems,
) -> Result<(SpreadsheetId, T)> {
    let (
        id,
        Rejected {
            partial,
            mut problems,
        },
    ) = match (path.id(), request) {
        (Ok(id), Ok(request)) => return Ok((id, request)),
        (Err(problems), Ok(_)) => return Err(problems.into()),
        (Err(mut problems), Err(rejected)) => {
            problems.extend(rejected.problems);
            return Err(problems.into());
        }
        (Ok(id), Err(rejected)) => (id, rejected),
    };
    let sheet = path.sheet.clone();
    let found = state
        .store
        .read(id, move |workbook| {
            workbook.source(&sheet, header_row).map(|source| {
                sheet_problems(&workbook.sheets[source.sheet], &source.region, &partial)
            })
        })
        .await;
    // A missing workbook or sheet adds nothing: the request's own problems
    // are answered first, as for any other request.
    if let Ok(Ok(more)) = found {
        problems.extend(more);
    }
    Err(ApiError::Invalid(problems))
}
