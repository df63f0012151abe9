//! Rows of one sheet: `/v1/data/{spreadsheet_id}/{sheet_name}` (contract §4.1–4.4).
//!
//! Each handler checks the request, asks the store for a (locked) edit or a
//! read, runs one model function inside it and maps the answer.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::conditional::{
    Conditions, ReadConditionParams, WriteConditionParams, not_modified, stamped,
};
use super::error::{ApiError, Result};
use super::extract::{JsonBody, QueryPairs, SheetPath};
use super::idempotency::{IdempotencyKey, edit_once};
use super::openapi::{Errors, InsertParams, KeyParams, ReadParams, RowsParams, SheetParams};
use super::stream;
use super::{AppState, auth};
use crate::access::Grant;
use crate::model::header::Region;
use crate::model::request::{
    DeleteBody, DeleteRows, InsertBody, InsertRows, ReadQuery, Rejected, UpdateBody, UpdateRows,
    header_row_from_pairs, insert_query_from_pairs,
};
use crate::model::source::Source;
use crate::model::{Problems, Sheet, SpreadsheetId, Workbook};
use crate::store::Edit;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(rows_read, rows_insert, rows_update, rows_delete))
}

const PATH: &str = "/v1/data/{spreadsheet_id}/{sheet_name}";

#[derive(Serialize, ToSchema)]
pub struct Inserted {
    pub inserted: usize,
}

/// The answer of an upsert (`on_conflict`, v1.1).
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Upserted {
    pub inserted: usize,
    pub updated: usize,
}

#[derive(Serialize, ToSchema)]
pub struct Updated {
    /// Rows matched (also when a new value equals the old one).
    pub updated: usize,
}

#[derive(Serialize, ToSchema)]
pub struct Deleted {
    pub deleted: usize,
}

/// A page of rows.
#[derive(Serialize, ToSchema)]
pub struct RowsPage {
    /// Rows in sheet order: `_row` and every addressable column (`null` when empty).
    #[schema(value_type = Vec<Object>)]
    pub data: Vec<Value>,
    /// Rows matching the filters, before `limit` and `offset`.
    pub total: usize,
}

/// Insert rows
///
/// Appends the rows below the last data row (into a table: below its last
/// data row, growing the table); with `before`, inserts them as new sheet
/// rows before that row, moving the rows below down. With `on_conflict`,
/// rows whose value in that column exists update that row instead
/// (200 with both counts).
// Contract §4.1, §10.2 (upsert), §11.2 (before).
#[utoipa::path(post, path = PATH, tag = "rows", params(SheetParams, InsertParams, KeyParams, WriteConditionParams),
    request_body = InsertBody,
    responses((status = 201, description = "Rows appended, or inserted before the row `before` names", body = Inserted, headers(
            ("ETag" = String, description = "The workbook's version after the write"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        (status = 200, description = "With on_conflict: rows inserted and updated", body = Upserted, headers(
            ("ETag" = String, description = "The workbook's version after the write"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_insert(
    State(state): State<AppState>,
    path: SheetPath,
    QueryPairs(pairs): QueryPairs,
    key: IdempotencyKey,
    conditions: Conditions,
    grant: Option<Extension<Arc<Grant>>>,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let request = InsertRows::from_json(&body, state.config.max_rows_per_request);
    let (query, request) = with_query(insert_query_from_pairs(&pairs), request);
    let header_row = query.header_row;
    let grant = grant.map(|Extension(grant)| grant);
    let (id, request) = valid_request(
        &state,
        (&path, grant.clone()),
        header_row,
        request,
        Sheet::insert_problems,
    )
    .await?;
    auth::may_write_formulas(grant.as_deref(), !request.formulas().is_empty())?;
    let sheet = path.sheet;
    let key = key.with_body(&body);
    let precondition = conditions.precondition();
    if let Some(column) = query.on_conflict {
        let reach = grant.clone();
        let upserted = edit_once(&state.store, id, key, precondition, move |workbook| {
            let source = reached_source(workbook, &sheet, header_row, reach.as_deref())?;
            formulas_checked(workbook, source.sheet, request.formulas(), |s| {
                s.insert_problems(&source.region, &request)
            })?;
            let (inserted, updated) = workbook.upsert(&source, request.clone(), &column)?;
            Ok(Edit {
                value: Upserted { inserted, updated },
                changed: inserted + updated > 0,
            })
        })
        .await?;
        return Ok(upserted.respond(Json));
    }
    let inserted = edit_once(&state.store, id, key, precondition, move |workbook| {
        let source = reached_source(workbook, &sheet, header_row, grant.as_deref())?;
        formulas_checked(workbook, source.sheet, request.formulas(), |s| {
            s.insert_problems(&source.region, &request)
        })?;
        // Cloned: an edit may be applied again (see `store::commit`).
        let inserted = workbook.insert(&source, request.clone(), query.before)?;
        Ok(Edit::rows(inserted))
    })
    .await?;
    Ok(inserted.respond(|inserted| (StatusCode::CREATED, Json(Inserted { inserted }))))
}

/// Update rows
///
/// Sets the given cells of the rows a filter, a row number or a list of
/// row numbers selects, or of each row `type: rows` names with its own
/// values; answers how many rows matched.
// Contract §4.2, §10.2 (type: rows), §11.2 (rows by number).
#[utoipa::path(patch, path = PATH, tag = "rows", params(SheetParams, RowsParams, KeyParams, WriteConditionParams),
    request_body = UpdateBody,
    responses((status = 200, description = "Matched rows updated", body = Updated, headers(
            ("ETag" = String, description = "The workbook's version after the write (unchanged when no row matched)"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_update(
    State(state): State<AppState>,
    path: SheetPath,
    QueryPairs(pairs): QueryPairs,
    key: IdempotencyKey,
    conditions: Conditions,
    grant: Option<Extension<Arc<Grant>>>,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let request = UpdateRows::from_json(&body);
    let (header_row, request) = with_query(header_row_from_pairs(&pairs), request);
    let grant = grant.map(|Extension(grant)| grant);
    let (id, request) = valid_request(
        &state,
        (&path, grant.clone()),
        header_row,
        request,
        Sheet::update_problems,
    )
    .await?;
    auth::may_write_formulas(grant.as_deref(), !request.formulas().is_empty())?;
    let sheet = path.sheet;
    let key = key.with_body(&body);
    let precondition = conditions.precondition();
    let updated = edit_once(&state.store, id, key, precondition, move |workbook| {
        let source = reached_source(workbook, &sheet, header_row, grant.as_deref())?;
        formulas_checked(workbook, source.sheet, request.formulas(), |s| {
            s.update_problems(&source.region, &request)
        })?;
        let sheet = &mut workbook.sheets[source.sheet];
        Ok(Edit::rows(sheet.update(&source.region, request.clone())?))
    })
    .await?;
    Ok(updated.respond(|updated| Json(Updated { updated })))
}

/// Read rows
///
/// The data rows matching every filter, in sheet order or the order asked
/// for, a page at a time, as JSON or CSV. Never rewrites the file.
// Contract §4.3, §10.1.
#[utoipa::path(get, path = PATH, tag = "rows",
    params(SheetParams, ReadParams, ReadConditionParams),
    responses((status = 200, description = "Matching rows, as JSON or (format=csv, or Accept: text/csv) as CSV: a line of column names, then a line per row",
        content((RowsPage = "application/json"), (String = "text/csv")),
        headers(("X-Total-Count" = u64, description = "Rows matching, before limit and offset"),
            ("Link" = String, description = "<…>; rel=\"next\": the same query at the next offset, when rows remain"),
            ("ETag" = String, description = "The workbook's version: the quoted BLAKE3 hash of its file"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        (status = 304, description = "Not Modified: the workbook is the version If-None-Match names (or unchanged since If-Modified-Since); no body",
            headers(("ETag" = String, description = "The workbook's version"))),
        Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_read(
    State(state): State<AppState>,
    path: SheetPath,
    uri: Uri,
    headers: HeaderMap,
    conditions: Conditions,
    QueryPairs(pairs): QueryPairs,
    grant: Option<Extension<Arc<Grant>>>,
) -> Result<Response> {
    let grant = grant.map(|Extension(grant)| grant);
    let query = ReadQuery::from_pairs(&pairs);
    let header_row = match &query {
        Ok(query) => query.header_row,
        Err(rejected) => rejected.partial.header_row,
    }
    .map(|row| u64::from(row.get()));
    let (id, query) = valid_request(
        &state,
        (&path, grant.clone()),
        header_row,
        query,
        Sheet::read_problems,
    )
    .await?;
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
    let (version, read) = state
        .store
        .read_versioned(id, move |workbook, version| {
            let source = reached_source(workbook, &sheet, header_row, grant.as_deref())?;
            let page = workbook.sheets[source.sheet].read(&source.region, &query)?;
            // After the read: a request that fails (an unknown sheet or
            // column) fails whatever its conditions (RFC 9110 §13.2.1).
            if conditions.unchanged(version)? {
                return Ok((*version, None));
            }
            Ok::<_, ApiError>((*version, Some((workbook.clone(), source.sheet, page))))
        })
        .await??;
    let Some((workbook, index, page)) = read else {
        return Ok(not_modified(&version));
    };
    let answer = stream::answer(workbook, index, page, (format, rendering), &next);
    Ok(stamped(answer, Some(&(&version).into())))
}

/// Delete rows
///
/// Deletes the rows a filter, a row number or a list of row numbers
/// selects. The rows below move up, as in a spreadsheet app, and
/// everything that points at cells (formulas, merged ranges, tables,
/// conditional formats, notes, charts…) moves with them.
// Contract §4.4, §11.2.
#[utoipa::path(delete, path = PATH, tag = "rows", params(SheetParams, RowsParams, KeyParams, WriteConditionParams),
    request_body = DeleteBody,
    responses((status = 200, description = "Matched rows deleted", body = Deleted, headers(
            ("ETag" = String, description = "The workbook's version after the write (unchanged when no row matched)"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        Errors))]
#[tracing::instrument(skip_all, fields(sheet = %path.sheet))]
async fn rows_delete(
    State(state): State<AppState>,
    path: SheetPath,
    QueryPairs(pairs): QueryPairs,
    key: IdempotencyKey,
    conditions: Conditions,
    grant: Option<Extension<Arc<Grant>>>,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let grant = grant.map(|Extension(grant)| grant);
    let request = DeleteRows::from_json(&body);
    let (header_row, request) = with_query(header_row_from_pairs(&pairs), request);
    let (id, request) = valid_request(
        &state,
        (&path, grant.clone()),
        header_row,
        request,
        Sheet::delete_problems,
    )
    .await?;
    let sheet = path.sheet;
    let key = key.with_body(&body);
    let precondition = conditions.precondition();
    let deleted = edit_once(&state.store, id, key, precondition, move |workbook| {
        let source = reached_source(workbook, &sheet, header_row, grant.as_deref())?;
        let deleted = workbook.delete_rows_if(&source, &request, |workbook, rows| {
            deletes_only_reached(grant.as_deref(), workbook, &source, rows)
        })?;
        Ok(Edit::rows(deleted))
    })
    .await?;
    Ok(deleted.respond(|deleted| Json(Deleted { deleted })))
}

/// `Ok` when the engine parses every formula a write gives (§11.4), else
/// the 400 naming each one that fails, and the problems `others` finds
/// with the rest of the request (its columns), so that one answer names
/// them all. Checked in the write's turn, with the workbook the formulas
/// will be part of.
fn formulas_checked<'a>(
    workbook: &crate::model::Workbook,
    sheet: usize,
    formulas: impl IntoIterator<Item = (String, &'a str)>,
    others: impl FnOnce(&Sheet) -> Problems,
) -> Result<()> {
    let mut problems = crate::calc::formula_problems(workbook, sheet, formulas);
    if problems.is_empty() {
        return Ok(());
    }
    problems.extend(others(&workbook.sheets[sheet]));
    Err(problems.into())
}

/// The rows `sheet` names in `workbook` (§11.1), if `grant` reaches them
/// (§11.7: 403 otherwise, whatever letter case named them).
pub(super) fn reached_source(
    workbook: &Workbook,
    sheet: &str,
    header_row: Option<u64>,
    grant: Option<&Grant>,
) -> Result<Source> {
    let source = workbook.source(sheet, header_row)?;
    match grant {
        Some(grant) if !grant.reaches_source(workbook, &source) => {
            Err(auth::not_reached(grant, sheet))
        }
        _ => Ok(source),
    }
}

/// A delete takes whole sheet rows (§11.2): refused (403, nothing
/// deleted) when the sheet rows `rows` hold rows of a table beside the one
/// `source` names that `grant` (if any: without, every row is reached)
/// does not reach. Used by a batch's deletes too.
pub(super) fn deletes_only_reached(
    grant: Option<&Grant>,
    workbook: &Workbook,
    source: &Source,
    rows: &[usize],
) -> std::result::Result<(), crate::model::Error> {
    let Some(grant) = grant else { return Ok(()) };
    let beside = (workbook.tables_holding(source, rows))
        .into_iter()
        .find(|&table| !grant.reaches_rows(workbook, source.sheet, Some(table)));
    match beside {
        Some(table) => {
            let name = &workbook.sheets[source.sheet].layout.tables[table].name;
            Err(crate::model::Error::Forbidden(auth::deletes_beside(
                grant, name,
            )))
        }
        None => Ok(()),
    }
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
    (path, grant): (&SheetPath, Option<Arc<Grant>>),
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
            reached_source(workbook, &sheet, header_row, grant.as_deref()).map(|source| {
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
