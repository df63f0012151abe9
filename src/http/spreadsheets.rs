//! Whole spreadsheets: list and add sheets, list, upload, create, store,
//! download and remove workbooks (contract §4.5 and §10.3).

use axum::Json;
use axum::body::{Body, Bytes};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Extension;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::conditional::{
    Conditions, ReadConditionParams, Stamp, WriteConditionParams, not_modified, stamped,
};
use super::error::{ApiError, Result};
use super::extract::{JsonBody, NoQuery, QueryPairs, UploadBody};
use super::extract::{SpreadsheetPath, XLSX_MIME};
use super::idempotency::{IdempotencyKey, edit_once, once};
use super::openapi::{Errors, KeyParams, ListParams, SpreadsheetParams};
use crate::access::Grant;
use crate::model::request::{CreateBody, ListQuery, NewSheet, NewWorkbook, SheetBody};
use crate::model::source::{RowsSummary, TableSummary};
use crate::model::value::civil_from_days;
use crate::model::{Problems, Workbook};
use crate::store::{Edit, StoreError, Versioned};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sheets_list, sheets_add))
        .routes(routes!(spreadsheets_list, spreadsheets_upload))
        .routes(routes!(
            spreadsheets_download,
            spreadsheets_put,
            spreadsheets_remove
        ))
}

/// An .xlsx file, as the raw bytes of a body.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)] // describes a body; the handlers move bytes
pub(super) struct XlsxFile(Vec<u8>);

/// One sheet of a workbook.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct SheetSummary {
    pub name: String,
    /// The header row's number (v1.2): the row the header rule finds, or a
    /// sheet's one table's header row; `null` for an empty sheet.
    pub header_row: Option<usize>,
    /// The header's column names, left to right; a column whose header is
    /// empty or repeated under its letter form (`_C`).
    pub columns: Vec<String>,
    /// The number of data rows.
    pub rows: usize,
}

impl From<RowsSummary> for SheetSummary {
    fn from(rows: RowsSummary) -> SheetSummary {
        SheetSummary {
            name: rows.name,
            header_row: rows.header_row,
            columns: rows.columns,
            rows: rows.rows,
        }
    }
}

/// An Excel table (v1.2), addressed by its name where a sheet name goes.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TableListed {
    pub name: String,
    /// The sheet it is on.
    pub sheet: String,
    /// Its cells, header and totals row included: `B4:F20`.
    pub range: String,
    pub columns: Vec<String>,
    /// The number of data rows.
    pub rows: usize,
    /// Whether it has a totals row.
    pub totals: bool,
}

impl From<TableSummary> for TableListed {
    fn from(table: TableSummary) -> TableListed {
        TableListed {
            name: table.rows.name,
            sheet: table.sheet,
            range: table.range,
            columns: table.rows.columns,
            rows: table.rows.rows,
            totals: table.totals,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct SheetList {
    pub sheets: Vec<SheetSummary>,
    /// Every table of the workbook (v1.2).
    pub tables: Vec<TableListed>,
}

#[derive(Serialize, ToSchema)]
pub struct SpreadsheetCreated {
    pub spreadsheet_id: String,
}

/// `GET /v1/spreadsheets`: a page of the workbooks, newest first.
#[derive(Serialize, ToSchema)]
pub struct SpreadsheetList {
    pub spreadsheets: Vec<SpreadsheetSummary>,
    /// How many workbooks there are, before `limit` and `offset`.
    pub total: usize,
}

#[derive(Serialize, ToSchema)]
pub struct SpreadsheetSummary {
    #[schema(format = Uuid)]
    pub spreadsheet_id: String,
    /// The workbook's sheet names (its tabs), in order; none if unreadable.
    pub sheets: Vec<String>,
    /// The file's size.
    pub bytes: u64,
    /// When the file last changed, RFC 3339 in UTC (`2026-11-24T06:50:00Z`).
    #[schema(format = DateTime)]
    pub modified: String,
    /// The file's version (v1.2), as the `ETag` its download carries: the
    /// quoted BLAKE3 hash of its bytes; absent if the file could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
}

/// List a workbook's sheets and tables
///
/// Each sheet with its header row, columns and number of data rows, and
/// every Excel table with its sheet and range.
// Contract §4.5, §11.1.
#[utoipa::path(get, path = "/v1/data/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, ReadConditionParams),
    responses((status = 200, description = "The workbook's sheets", body = SheetList, headers(
            ("ETag" = String, description = "The workbook's version: the quoted BLAKE3 hash of its file"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        (status = 304, description = "Not Modified: the workbook is the version If-None-Match names (or unchanged since If-Modified-Since); no body",
            headers(("ETag" = String, description = "The workbook's version"))),
        Errors))]
async fn sheets_list(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
    conditions: Conditions,
    grant: Option<Extension<Arc<Grant>>>,
) -> Result<Response> {
    let reach = grant.map(|Extension(grant)| grant);
    let (version, sheets) = state
        .store
        .read_versioned(path.id()?, move |workbook, version| {
            if conditions.unchanged(version)? {
                return Ok((*version, None));
            }
            // Listed when a request naming it is answered: the token
            // reaches the name and the rows it leads to.
            let reaches = |name: &str, sheet: usize, table: Option<usize>| {
                reach.as_ref().is_none_or(|grant| {
                    grant.reaches_sheet(name) && grant.reaches_rows(workbook, sheet, table)
                })
            };
            // Each table by its sheet's index and its own, in the order
            // `table_summaries` lists them.
            let tables = (workbook.sheets.iter().enumerate())
                .flat_map(|(s, sheet)| (0..sheet.layout.tables.len()).map(move |t| (s, t)));
            let list = SheetList {
                sheets: (workbook.sheet_summaries().into_iter().enumerate())
                    .filter(|(sheet, summary)| reaches(&summary.name, *sheet, None))
                    .map(|(_, sheet)| sheet.into())
                    .collect(),
                tables: (workbook.table_summaries().into_iter().zip(tables))
                    .filter(|(summary, (sheet, table))| {
                        reaches(&summary.rows.name, *sheet, Some(*table))
                    })
                    .map(|(table, _)| table.into())
                    .collect(),
            };
            Ok::<_, ApiError>((*version, Some(list)))
        })
        .await??;
    match sheets {
        Some(sheets) => Ok(stamped(Json(sheets), Some(&Stamp::from(&version)))),
        None => Ok(not_modified(&version)),
    }
}

/// The sheet names a token reaches, of those given; all without a token.
fn reached(grant: Option<&Grant>, names: Vec<String>) -> Vec<String> {
    match grant {
        Some(grant) => names
            .into_iter()
            .filter(|name| grant.lists_sheet(name))
            .collect(),
        None => names,
    }
}

/// Add a sheet
///
/// Adds a sheet, last, with its header row, and answers it as the sheet
/// list shows it. A name the workbook has (in any letter case) is a 409.
// Contract §10.3.
#[utoipa::path(post, path = "/v1/data/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, KeyParams, WriteConditionParams),
    request_body = SheetBody,
    responses((status = 201, description = "The sheet was added, last", body = SheetSummary, headers(
            ("ETag" = String, description = "The workbook's version after the write"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        Errors))]
async fn sheets_add(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
    key: IdempotencyKey,
    conditions: Conditions,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let (id, new) = Problems::both(path.checked_id(), NewSheet::from_json(&body))?;
    let key = key.with_body(&body);
    let precondition = conditions.precondition();
    let added = edit_once(&state.store, id, key, precondition, move |workbook| {
        workbook.add_sheet(&new)?;
        let value = SheetSummary {
            name: new.name.clone(),
            header_row: Some(1),
            columns: new.columns.clone(),
            rows: 0,
        };
        Ok(Edit {
            value,
            changed: true,
        })
    })
    .await?;
    Ok(added.respond(|added| (StatusCode::CREATED, Json(added))))
}

/// List workbooks
///
/// The workbooks of the data directory, newest first, a page at a time.
// Contract §10.3.
#[utoipa::path(get, path = "/v1/spreadsheets", tag = "spreadsheets", params(ListParams),
    responses((status = 200, description = "A page of the workbooks, newest first", body = SpreadsheetList), Errors))]
async fn spreadsheets_list(
    State(state): State<AppState>,
    QueryPairs(pairs): QueryPairs,
    grant: Option<Extension<Arc<Grant>>>,
) -> Result<Json<SpreadsheetList>> {
    let query = ListQuery::from_pairs(&pairs)?;
    let reach = grant.map(|Extension(grant)| grant);
    let visible = reach.clone();
    let (page, total) = state
        .store
        .list(query.offset, query.limit, move |id| {
            visible.as_ref().is_none_or(|grant| grant.reaches(id))
        })
        .await?;
    let spreadsheets = page
        .into_iter()
        .map(|listed| SpreadsheetSummary {
            spreadsheet_id: listed.id.to_string(),
            sheets: reached(reach.as_deref(), listed.sheets),
            bytes: listed.bytes,
            modified: rfc3339(listed.modified),
            etag: listed.tag.map(|tag| tag.to_string()),
        })
        .collect();
    Ok(Json(SpreadsheetList {
        spreadsheets,
        total,
    }))
}

/// A time as RFC 3339 in UTC, to the second: `2026-11-24T06:50:00Z`.
pub(super) fn rfc3339(time: SystemTime) -> String {
    let (date, seconds, _) = utc(time);
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A time as RFC 3339 in UTC, to the millisecond: `2026-11-24T06:50:00.125Z`.
pub(super) fn rfc3339_millis(time: SystemTime) -> String {
    let (date, seconds, millis) = utc(time);
    format!(
        "{date}T{:02}:{:02}:{:02}.{millis:03}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A time's UTC date (`2026-11-24`), second of the day and millisecond.
fn utc(time: SystemTime) -> (String, i64, u32) {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(0);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let date = format!("{year:04}-{month:02}-{day:02}");
    (date, seconds.rem_euclid(86_400), since.subsec_millis())
}

/// Upload or create a workbook
///
/// Stores an uploaded .xlsx file, or a new workbook a JSON body describes
/// (its sheets and their header rows), under a new id.
// Contract §4.5, §10.3.
#[utoipa::path(post, path = "/v1/spreadsheets", tag = "spreadsheets", params(KeyParams),
    request_body(description = "The .xlsx file's bytes, or (v1.1) JSON naming the sheets and columns of a new workbook", content(
        (XlsxFile = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        (XlsxFile = "application/octet-stream"),
        (CreateBody = "application/json"))),
    responses((status = 201, description = "Stored under a new id", body = SpreadsheetCreated, headers(
            ("ETag" = String, description = "The new workbook's version: the quoted BLAKE3 hash of its file"),
            ("Last-Modified" = String, description = "When the workbook's file was written"))),
        Errors))]
async fn spreadsheets_upload(
    State(state): State<AppState>,
    _: NoQuery,
    key: IdempotencyKey,
    body: UploadBody,
) -> Result<Response> {
    let (bytes, upload) = described(body, state.config.max_cells)?;
    let key = key.with_body(&bytes);
    let store_it = |claimed| async {
        let stored = match upload {
            Upload::File(bytes) => state
                .store
                .create(bytes, claimed)
                .await
                .map_err(upload_error)?,
            Upload::New(workbook) => state.store.create_workbook(*workbook, claimed).await?,
        };
        // The id as the answer gives it (and an idempotency record keeps it).
        Ok(Versioned {
            value: stored.value.to_string(),
            version: stored.version,
        })
    };
    let created = once(&state.store, key, store_it).await?;
    Ok(created.respond(|spreadsheet_id| {
        let created = SpreadsheetCreated { spreadsheet_id };
        (StatusCode::CREATED, Json(created))
    }))
}

/// What an upload stores: a file's bytes, or (§10.3) the workbook a JSON
/// body describes.
enum Upload {
    File(Bytes),
    New(Box<Workbook>),
}

/// The body of an upload (for its idempotency key) and what it stores: a
/// described workbook of at most `max_cells` cells, as a file must be.
fn described(body: UploadBody, max_cells: usize) -> std::result::Result<(Bytes, Upload), Problems> {
    match body {
        UploadBody::Xlsx(bytes) => Ok((bytes.clone(), Upload::File(bytes))),
        UploadBody::Json(bytes) => {
            let workbook = NewWorkbook::from_json(&bytes)?.workbook();
            if workbook.cell_slots() > max_cells {
                let rule =
                    format!("must span at most {max_cells} cells in all (the server's limit)");
                return Err(Problems::one("sheets", rule));
            }
            Ok((bytes, Upload::New(Box::new(workbook))))
        }
    }
}

/// An upload that is no readable workbook is the request's fault (400).
fn upload_error(error: StoreError) -> ApiError {
    match error {
        StoreError::Unreadable(why) => {
            ApiError::invalid("body", format!("is not a readable xlsx workbook ({why})"))
        }
        other => other.into(),
    }
}

/// Download a workbook
///
/// The workbook's file, as it is on disk.
// Contract §4.5.
#[utoipa::path(get, path = "/v1/spreadsheets/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, ReadConditionParams),
    responses((status = 200, description = "The xlsx file, as an attachment (sent with the xlsx content type)",
        content(
            (XlsxFile = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            (XlsxFile = "application/octet-stream")),
        headers(("Content-Disposition" = String, description = "attachment; filename=\"<id>.xlsx\""),
            ("ETag" = String, description = "The workbook's version: the quoted BLAKE3 hash of these bytes"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        (status = 304, description = "Not Modified: the workbook is the version If-None-Match names (or unchanged since If-Modified-Since); no body",
            headers(("ETag" = String, description = "The workbook's version"))),
        Errors))]
async fn spreadsheets_download(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
    conditions: Conditions,
) -> Result<Response> {
    let id = path.id()?;
    // Decided before the file is read: a client with this version gets a
    // 304 without the bytes being read.
    let check = conditions.clone();
    let download = state
        .store
        .download(id, move |version| {
            matches!(check.unchanged(version), Ok(false))
        })
        .await?;
    let Some(bytes) = download.value else {
        conditions.unchanged(&download.version)?;
        return Ok(not_modified(&download.version));
    };
    let stamp = Stamp::from(&download.version);
    let response = Response::builder()
        .header(header::CONTENT_TYPE, XLSX_MIME)
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", id.file_name()),
        )
        .body(Body::from(bytes))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(stamped(response, Some(&stamp)))
}

/// Store a workbook under an id
///
/// Stores the uploaded workbook, or the new one a JSON body describes,
/// under this id: 201 when it is new, 200 when it replaced one.
// Contract §10.3.
#[utoipa::path(put, path = "/v1/spreadsheets/{spreadsheet_id}", tag = "spreadsheets",
    params(SpreadsheetParams, KeyParams, WriteConditionParams),
    request_body(description = "The .xlsx file's bytes, or JSON naming the sheets and columns of a new workbook", content(
        (XlsxFile = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        (XlsxFile = "application/octet-stream"),
        (CreateBody = "application/json"))),
    responses((status = 201, description = "Stored under this new id", body = SpreadsheetCreated, headers(
            ("ETag" = String, description = "The stored workbook's version"),
            ("Last-Modified" = String, description = "When the workbook's file was written"))),
        (status = 200, description = "Replaced the workbook of this id", body = SpreadsheetCreated, headers(
            ("ETag" = String, description = "The stored workbook's version"),
            ("Last-Modified" = String, description = "When the workbook's file was written"))),
        Errors))]
async fn spreadsheets_put(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
    key: IdempotencyKey,
    conditions: Conditions,
    body: UploadBody,
) -> Result<Response> {
    let described = described(body, state.config.max_cells);
    let (id, (bytes, upload)) = Problems::both(path.checked_id(), described)?;
    let precondition = conditions.precondition();
    let store_it = |claimed| async {
        match upload {
            Upload::File(bytes) => state
                .store
                .put(id, bytes, claimed, precondition)
                .await
                .map_err(upload_error),
            Upload::New(workbook) => Ok(state
                .store
                .put_workbook(id, *workbook, claimed, precondition)
                .await?),
        }
    };
    let stored = once(&state.store, key.with_body(&bytes), store_it).await?;
    Ok(stored.respond(|replaced| {
        let status = if replaced {
            StatusCode::OK
        } else {
            StatusCode::CREATED
        };
        let stored = SpreadsheetCreated {
            spreadsheet_id: id.to_string(),
        };
        (status, Json(stored))
    }))
}

/// Remove a workbook
///
/// Removes the workbook's file, once the writes in flight to it are done.
// Contract §4.5.
#[utoipa::path(delete, path = "/v1/spreadsheets/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, WriteConditionParams),
    responses((status = 204, description = "Removed (no ETag: no version remains)"),
        Errors))]
async fn spreadsheets_remove(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
    conditions: Conditions,
) -> Result<StatusCode> {
    let id = path.id()?;
    state.store.remove(id, conditions.precondition()).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::rfc3339;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn times_are_rfc_3339_in_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day of a century leap year), 12:34:56.
        let leap = UNIX_EPOCH + Duration::from_secs(951_827_696);
        assert_eq!(rfc3339(leap), "2000-02-29T12:34:56Z");
        let later = UNIX_EPOCH + Duration::from_secs(1_795_502_130);
        assert_eq!(rfc3339(later), "2026-11-24T06:35:30Z");
    }
}
