//! The OpenAPI description (`GET /v1/openapi.json`).
//!
//! Handlers carry `#[utoipa::path]` annotations and are registered through
//! utoipa-axum's `routes!`, so the router and this description are built
//! from the same list. The parameter types below describe the paths,
//! queries and headers the handlers read; each answer's type lives beside
//! its handler, the error answers with `ApiError` (`error.rs`).

use std::sync::OnceLock;

use axum::Json;
use axum::response::IntoResponse;
use serde_json::Value;
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{OpenApi, RefOr, Schema};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::error::ErrorBody;
use crate::model::request::BODY_SCHEMAS;

pub use super::error::Errors;

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

/// This OpenAPI description
///
/// The OpenAPI 3.1 description of every route.
// Contract §4.6.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "service",
    responses((status = 200, description = "The OpenAPI description", body = Object), Errors))]
pub async fn openapi_json(_: super::extract::NoQuery) -> impl IntoResponse {
    Json(description())
}
