//! Whole spreadsheets: list and add sheets, list, upload, create, store,
//! download and remove workbooks (contract §4.5 and §10.3).

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;
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
use super::openapi::{
    ErrorBody, Errors, KeyParams, ListParams, SheetList, SheetSummary, SpreadsheetCreated,
    SpreadsheetList, SpreadsheetParams, SpreadsheetSummary, XlsxFile,
};
use crate::model::request::{CreateBody, ListQuery, NewSheet, NewWorkbook, SheetBody};
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

/// `GET /v1/data/{id}`: each sheet with its columns and data-row count.
#[utoipa::path(get, path = "/v1/data/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, ReadConditionParams),
    responses((status = 200, description = "The workbook's sheets", body = SheetList, headers(
            ("ETag" = String, description = "The workbook's version: the quoted SHA-256 of its file"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        (status = 304, description = "Not Modified: the workbook is the version If-None-Match names (or unchanged since If-Modified-Since); no body",
            headers(("ETag" = String, description = "The workbook's version"))),
        Errors))]
async fn sheets_list(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
    conditions: Conditions,
) -> Result<Response> {
    let (version, sheets) = state
        .store
        .read_versioned(path.id()?, move |workbook, version| {
            if conditions.unchanged(version)? {
                return Ok((*version, None));
            }
            let list = SheetList {
                sheets: workbook
                    .sheet_summaries()
                    .into_iter()
                    .map(Into::into)
                    .collect(),
                tables: workbook
                    .table_summaries()
                    .into_iter()
                    .map(Into::into)
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

/// `POST /v1/data/{id}` (§10.3): adds a sheet, last, with its header row;
/// 201 with the new sheet as `GET /v1/data/{id}` lists it.
#[utoipa::path(post, path = "/v1/data/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, KeyParams, WriteConditionParams),
    request_body = SheetBody,
    responses((status = 201, description = "The sheet was added, last", body = SheetSummary, headers(
            ("ETag" = String, description = "The workbook's version after the write"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))),
        (status = 412, description = "Precondition Failed: the workbook is no longer the version If-Match or If-Unmodified-Since names; nothing was written", body = ErrorBody),
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

/// `GET /v1/spreadsheets` (§10.3): the workbooks, newest first.
#[utoipa::path(get, path = "/v1/spreadsheets", tag = "spreadsheets", params(ListParams),
    responses((status = 200, description = "A page of the workbooks, newest first", body = SpreadsheetList), Errors))]
async fn spreadsheets_list(
    State(state): State<AppState>,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<SpreadsheetList>> {
    let query = ListQuery::from_pairs(&pairs)?;
    let (page, total) = state.store.list(query.offset, query.limit).await?;
    let spreadsheets = page
        .into_iter()
        .map(|listed| SpreadsheetSummary {
            spreadsheet_id: listed.id.to_string(),
            sheets: listed.sheets,
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
fn rfc3339(time: std::time::SystemTime) -> String {
    let seconds = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// `POST /v1/spreadsheets`: stores an uploaded workbook, or (§10.3) a new
/// one a JSON body describes, under a new id.
#[utoipa::path(post, path = "/v1/spreadsheets", tag = "spreadsheets", params(KeyParams),
    request_body(description = "The .xlsx file's bytes, or (v1.1) JSON naming the sheets and columns of a new workbook", content(
        (XlsxFile = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        (XlsxFile = "application/octet-stream"),
        (CreateBody = "application/json"))),
    responses((status = 201, description = "Stored under a new id", body = SpreadsheetCreated, headers(
            ("ETag" = String, description = "The new workbook's version: the quoted SHA-256 of its file"),
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

/// `GET /v1/spreadsheets/{id}`: the workbook as it is on disk.
#[utoipa::path(get, path = "/v1/spreadsheets/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, ReadConditionParams),
    responses((status = 200, description = "The xlsx file, as an attachment (sent with the xlsx content type)",
        content(
            (XlsxFile = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            (XlsxFile = "application/octet-stream")),
        headers(("Content-Disposition" = String, description = "attachment; filename=\"<id>.xlsx\""),
            ("ETag" = String, description = "The workbook's version: the quoted SHA-256 of these bytes"),
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

/// `PUT /v1/spreadsheets/{id}` (§10.3): stores the uploaded workbook, or
/// the new one a JSON body describes, under this id: 201 when new, 200
/// when it replaced one.
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
        (status = 412, description = "Precondition Failed: the workbook is no longer the version If-Match or If-Unmodified-Since names (If-Match on an id with no workbook, or If-None-Match: * on one with a workbook, too); nothing was written", body = ErrorBody),
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

/// `DELETE /v1/spreadsheets/{id}`: removes the workbook (204).
#[utoipa::path(delete, path = "/v1/spreadsheets/{spreadsheet_id}", tag = "spreadsheets", params(SpreadsheetParams, WriteConditionParams),
    responses((status = 204, description = "Removed (no ETag: no version remains)"),
        (status = 412, description = "Precondition Failed: the workbook is no longer the version If-Match or If-Unmodified-Since names; nothing was removed", body = ErrorBody),
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
