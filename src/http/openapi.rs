//! The OpenAPI description (`GET /v1/openapi.json`).
//!
//! Handlers carry `#[utoipa::path]` annotations and are registered through
//! utoipa-axum's `routes!`, so the router and this description are built
//! from the same list. The body types below describe what the handlers read
//! and write; the response types are the ones the handlers serialize.

use std::sync::OnceLock;

use axum::Json;
use axum::response::IntoResponse;
use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{IntoResponses, ToSchema};

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
    Invalid(#[to_schema] ErrorBody),
    /// Tokens are configured and the request carries no valid one.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// A read-only token was used for a write.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// Unknown spreadsheet, sheet, row or route.
    #[response(status = 404)]
    NotFound(ErrorBody),
    /// The write would lose or corrupt workbook content; `detail` says why.
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body is over the configured limit.
    #[response(status = 413)]
    PayloadTooLarge(ErrorBody),
    /// The body has another content type than the route takes.
    #[response(status = 415)]
    UnsupportedMediaType(ErrorBody),
    /// Too many requests queued for the spreadsheet; retry after `Retry-After`.
    #[response(status = 503)]
    Unavailable(ErrorBody),
    /// A failure inside the service, or a stored file that is no workbook.
    #[response(status = 500)]
    Internal(ErrorBody),
}

/// `POST` rows body.
#[derive(ToSchema)]
#[allow(dead_code)] // describes the body; `model::request` parses it
pub struct InsertBody {
    /// Rows to append: each an object of column name → value (string,
    /// number, boolean or null), setting at least one non-null value.
    #[schema(value_type = Vec<Object>)]
    data: Vec<Value>,
}

/// `PATCH` rows body.
#[derive(ToSchema)]
#[allow(dead_code)] // describes the body; `model::request` parses it
pub struct UpdateBody {
    /// `filter` or `row`.
    #[schema(value_type = String, pattern = "^(filter|row)$")]
    r#type: String,
    /// With `type: filter`: `column:operator:value`, or an array of them (all must hold).
    #[schema(value_type = Option<Object>)]
    filter: Option<Value>,
    /// With `type: row`: the row number as the spreadsheet app shows it.
    #[schema(minimum = 1)]
    row: Option<u64>,
    /// Column name → new value; only these cells change, `null` clears.
    #[schema(value_type = Object)]
    data: Value,
}

/// `DELETE` rows body.
#[derive(ToSchema)]
#[allow(dead_code)] // describes the body; `model::request` parses it
pub struct DeleteBody {
    /// `filter` or `row`.
    #[schema(value_type = String, pattern = "^(filter|row)$")]
    r#type: String,
    /// With `type: filter`: `column:operator:value`, or an array of them.
    #[schema(value_type = Option<Object>)]
    filter: Option<Value>,
    /// With `type: row`: the row number as the spreadsheet app shows it.
    #[schema(minimum = 1)]
    row: Option<u64>,
}

#[derive(Serialize, ToSchema)]
pub struct Inserted {
    pub inserted: usize,
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
#[derive(Serialize, ToSchema)]
pub struct SheetSummary {
    pub name: String,
    /// The header's column names, left to right.
    pub columns: Vec<String>,
    /// The number of data rows.
    pub rows: usize,
}

#[derive(Serialize, ToSchema)]
pub struct SheetList {
    pub sheets: Vec<SheetSummary>,
}

#[derive(Serialize, ToSchema)]
pub struct SpreadsheetCreated {
    pub spreadsheet_id: String,
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
    api
}

/// The description of every route [`super::routes`] registers, built once.
pub fn description() -> &'static Value {
    static DESCRIPTION: OnceLock<Value> = OnceLock::new();
    DESCRIPTION.get_or_init(|| {
        let (_, api) = super::routes().split_for_parts();
        serde_json::to_value(api).expect("an OpenAPI description serializes")
    })
}

/// §4.6 `GET /v1/openapi.json`: the OpenAPI 3 description of every route.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "service",
    responses((status = 200, description = "The OpenAPI description", body = Object), Errors))]
pub async fn openapi_json() -> impl IntoResponse {
    Json(description())
}
