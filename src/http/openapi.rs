//! The OpenAPI description (`GET /v1/openapi.json`).
//!
//! Handlers carry `#[utoipa::path]` annotations and are registered through
//! utoipa-axum's `routes!`, so the router and this description are built
//! from the same list. The body types below describe what the handlers read
//! and write; the response types are the ones the handlers serialize.

use std::sync::OnceLock;

use axum::Json;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{OpenApi, RefOr, Schema};
use utoipa::{IntoParams, IntoResponses, PartialSchema, ToSchema};

use crate::model::request::BODY_SCHEMAS;
use crate::model::source::{RowsSummary, TableSummary};

/// Every error: `{"success": false, "error": "…", "detail"?: "…"}`.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// Always `false`.
    pub success: bool,
    /// `Not Found`, `Conflict`, … or, for a 400, the problems as
    /// `field: rule` joined by `", "`.
    pub error: String,
    /// More about the failure, when there is something safe to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The error statuses any route may answer.
#[derive(IntoResponses)]
#[allow(dead_code)] // describes responses; `ApiError` builds the real ones
pub enum Errors {
    /// Validation: the body, query or id breaks the rules listed in `error`.
    #[response(status = 400)]
    Invalid(ErrorBody),
    /// Tokens are configured and the request carries no valid one.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// A read-only token was used for a write.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// Unknown spreadsheet, sheet, row or route.
    #[response(status = 404)]
    NotFound(ErrorBody),
    /// The write would lose or corrupt workbook content, or rows would
    /// move through something a spreadsheet app changes only whole (an
    /// array formula, a pivot table, a 3D reference's span); `detail` says
    /// why.
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body is over the configured limit.
    #[response(status = 413)]
    PayloadTooLarge(ErrorBody),
    /// The body has another content type than the route takes.
    #[response(status = 415)]
    UnsupportedMediaType(ErrorBody),
    /// The body was not sent in time (`--body-timeout-secs`); nothing was written.
    #[response(status = 408)]
    RequestTimeout(ErrorBody),
    /// Too many requests queued for the spreadsheet, in flight, or holding
    /// body memory; retry after `Retry-After`.
    #[response(status = 503)]
    Unavailable(ErrorBody),
    /// A failure inside the service, or a stored file that is no workbook.
    #[response(status = 500)]
    Internal(ErrorBody),
}

/// The `Idempotency-Key` header of a write.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)] // describes the header; `idempotency` reads it
pub struct KeyParams {
    /// Sent again with the same key (1 to 255 printable ASCII characters,
    /// a UUID will do), the write gets its first answer with
    /// `Idempotent-Replayed: true` and is not applied again; remembered for
    /// `--idempotency-window-secs` (a day by default), also across restarts.
    #[param(
        rename = "Idempotency-Key",
        min_length = 1,
        max_length = 255,
        pattern = "^[!-~]+$"
    )]
    idempotency_key: Option<String>,
}

/// `{spreadsheet_id}` in a path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // describes the path; `extract` reads it
pub struct SpreadsheetParams {
    /// The spreadsheet's id: a UUID, hyphenated, any letter case.
    spreadsheet_id: uuid::Uuid,
}

/// `{spreadsheet_id}/{sheet_name}` in a path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // describes the path; `extract` reads it
pub struct SheetParams {
    /// The spreadsheet's id: a UUID, hyphenated, any letter case.
    spreadsheet_id: uuid::Uuid,
    /// The sheet's or table's name, percent-encoded (v1.2): the sheet of
    /// that exact name, else the table of that exact name, else the one
    /// sheet, then the one table, whose name matches ignoring case. A sheet
    /// holding exactly one table is read and written through it.
    sheet_name: String,
}

/// The query of `GET` rows; any other parameter is a 400.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // describes the query; `model::request::ReadQuery` reads it
pub struct ReadParams {
    /// `column:operator:value`; repeat for more (all must hold).
    filter: Option<Vec<String>>,
    /// At most this many rows.
    #[param(minimum = 0, maximum = 100_000, default = 1000)]
    limit: Option<u32>,
    /// Skip this many matching rows.
    #[param(minimum = 0, maximum = 9_223_372_036_854_775_807_i64, default = 0)]
    offset: Option<u64>,
    /// Sort keys, most significant first: `column.asc` or `column.desc`,
    /// separated by commas (`age.desc,name.asc`); typed like filters, empty
    /// cells last, ties in sheet order.
    #[param(pattern = "^[^,]+\\.(asc|desc)(,[^,]+\\.(asc|desc))*$")]
    order: Option<String>,
    /// Only these columns in each row, separated by commas (`_row` always).
    #[param(pattern = "^[^,]+(,[^,]+)*$")]
    columns: Option<String>,
    /// `json` (the default) or `csv`; `Accept: text/csv` asks for CSV too.
    #[param(inline)]
    format: Option<ReadFormat>,
    /// The header row (v1.2), by its number: rows above it are neither
    /// data nor touched. 400 when that row is empty, or names a table.
    #[param(minimum = 1, maximum = 1_048_576)]
    header_row: Option<u32>,
    /// How cells are shown (v1.2): `raw` (the default) as typed JSON
    /// values; `formatted` every non-empty cell as the text its number
    /// format displays in a spreadsheet app (`62.96%`, `$1,234.50`,
    /// `23-Jun-24`, `(1,200)`, `TRUE`), as LibreOffice shows it;
    /// `formula` a formula cell as its formula with `=` (`=B2*C2`), other
    /// cells as `raw`.
    #[param(inline)]
    values: Option<ReadValues>,
    /// `iso` (v1.2): dates as `2024-06-23` and date-times as
    /// `2024-06-23T10:00:00` instead of `YYYY/MM/DD` (with `values=raw`,
    /// and the cells `values=formula` shows as raw).
    #[param(inline)]
    dates: Option<ReadDates>,
}

/// How a read shows its cells.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // describes the query
pub enum ReadValues {
    Raw,
    Formatted,
    Formula,
}

/// How a read shows dates.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // describes the query
pub enum ReadDates {
    Iso,
}

/// The query of `PATCH` and `DELETE` rows.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // describes the query; `model::request` reads it
pub struct RowsParams {
    /// The header row (v1.2), by its number: rows above it are neither
    /// data nor touched. 400 when that row is empty, or names a table.
    #[param(minimum = 1, maximum = 1_048_576)]
    header_row: Option<u32>,
}

/// The format of a read's answer.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // describes the query
pub enum ReadFormat {
    Json,
    Csv,
}

/// An .xlsx file, as the raw bytes of a body.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)] // describes a body; the handlers move bytes
pub struct XlsxFile(Vec<u8>);

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

/// The query of `POST` rows.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // describes the query; `model::request` reads it
pub struct InsertParams {
    /// Upsert (v1.1): a row whose value in this column equals a data row's
    /// value sets the keys it gives in that row (200 with `inserted` and
    /// `updated`); the others are inserted. A value in more than one data
    /// row is a 409.
    #[param(min_length = 1)]
    on_conflict: Option<String>,
    /// Insert (v1.2) the rows as new sheet rows before this row — a data
    /// row, or the row after the last one — moving it and the rows below
    /// down with everything that points at them; the new rows take the
    /// formats of the row above. Not with `on_conflict`.
    #[param(minimum = 1)]
    before: Option<u64>,
    /// The header row (v1.2), by its number: rows above it are neither
    /// data nor touched. 400 when that row is empty, or names a table.
    #[param(minimum = 1, maximum = 1_048_576)]
    header_row: Option<u32>,
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
}

/// The query of `GET /v1/spreadsheets`; any other parameter is a 400.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // describes the query; `model::request::ListQuery` reads it
pub struct ListParams {
    /// At most this many workbooks.
    #[param(minimum = 0, maximum = 100_000, default = 1000)]
    limit: Option<u32>,
    /// Skip this many workbooks.
    #[param(minimum = 0, maximum = 9_223_372_036_854_775_807_i64, default = 0)]
    offset: Option<u64>,
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// Always `ok`.
    pub status: String,
}

/// Title, version and the bearer scheme, around the paths the routers add.
pub fn base() -> OpenApi {
    let mut api = OpenApi::builder()
        .info(
            utoipa::openapi::InfoBuilder::new()
                .title("sheetd")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "The sheets of .xlsx workbooks as a JSON data API. Every route but \
                     /healthz needs `Authorization: Bearer <token>` when tokens are configured.",
                ))
                .build(),
        )
        .build();
    let components = api.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
    );
    components
        .schemas
        .insert("ErrorBody".into(), ErrorBody::schema());
    api
}

/// Names the bearer scheme on every operation but `/healthz`, which says it
/// needs none (`security: []`). Said per operation, not once at the top:
/// generated clients (openapi-python-client) read only the operation's.
fn secure_operations(api: &mut OpenApi) {
    for (path, item) in api.paths.paths.iter_mut() {
        let security = if path == "/healthz" {
            Vec::new()
        } else {
            vec![SecurityRequirement::new("bearer", Vec::<String>::new())]
        };
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            operation.security = Some(security.clone());
        }
    }
}

/// What the derives cannot say: request bodies allow no other fields.
fn close_bodies(api: &mut OpenApi) {
    let Some(components) = api.components.as_mut() else {
        return;
    };
    for name in BODY_SCHEMAS {
        if let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(name) {
            object.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
        }
    }
}

/// The description of every route [`super::routes`] registers, built once.
pub fn description() -> &'static Value {
    static DESCRIPTION: OnceLock<Value> = OnceLock::new();
    DESCRIPTION.get_or_init(|| {
        let (_, mut api) = super::routes().split_for_parts();
        close_bodies(&mut api);
        secure_operations(&mut api);
        serde_json::to_value(api).expect("an OpenAPI description serializes")
    })
}

/// §4.6 `GET /v1/openapi.json`: the OpenAPI 3 description of every route.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "service",
    responses((status = 200, description = "The OpenAPI description", body = Object), Errors))]
pub async fn openapi_json(_: super::extract::NoQuery) -> impl IntoResponse {
    Json(description())
}
