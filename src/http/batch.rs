//! `POST /v1/batch/{spreadsheet_id}` (contract §11.6): several row
//! operations, across the workbook's sheets and tables, in one write.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::auth;
use super::conditional::{Conditions, WriteConditionParams};
use super::error::{ApiError, Result};
use super::extract::{JsonBody, NoQuery, SpreadsheetPath};
use super::idempotency::{IdempotencyKey, edit_once};
use super::openapi::{Errors, KeyParams, SpreadsheetParams};
use crate::access::{Grant, Permission};
use crate::model::Problems;
use crate::model::Workbook;
use crate::model::batch::{Batch, Change, Checks, Operation, Outcome};
use crate::model::source::Source;
use crate::store::Edit;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(batch))
}

/// The body of a batch.
#[derive(ToSchema)]
#[allow(dead_code)] // describes the body; `Batch::from_json` reads it
struct BatchBody {
    /// Applied in order; at most 1,000.
    operations: Vec<BatchOperation>,
}

/// One operation: `op`, the `sheet` (or table) it addresses, and the fields
/// of that row route's body (`data`, `type`, `filter`, `row`, `rows`) and
/// query (`header_row`, and for inserts `before` or `on_conflict`).
#[derive(ToSchema)]
#[allow(dead_code)]
struct BatchOperation {
    op: BatchOp,
    /// A sheet or table name, as in `/v1/data/{spreadsheet_id}/{sheet_name}`.
    #[schema(min_length = 1)]
    sheet: String,
    /// The header row, as the `header_row` query parameter names it.
    #[schema(minimum = 1, maximum = 1048576)]
    header_row: Option<u64>,
    /// insert: add the rows as new sheet rows before this row.
    #[schema(minimum = 1, maximum = 1048576)]
    before: Option<u64>,
    /// insert: update the rows whose value in this column exists already.
    #[schema(min_length = 1)]
    on_conflict: Option<String>,
    /// update, delete: `filter`, `row` or `rows`, as in their routes.
    r#type: Option<String>,
    filter: Option<Value>,
    #[schema(minimum = 1, maximum = 1048576)]
    row: Option<u64>,
    rows: Option<Vec<u64>>,
    /// insert: an array of rows; update: the values to set.
    data: Option<Value>,
}

#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum BatchOp {
    Insert,
    Update,
    Delete,
}

/// What each operation did, in order.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct BatchResults {
    results: Vec<OperationResult>,
}

/// What one operation did, as its own route answers: `{"inserted": n}`,
/// `{"updated": n}`, `{"deleted": n}`, or for an upsert
/// `{"inserted": a, "updated": b}`.
#[derive(Serialize, Deserialize, ToSchema)]
struct OperationResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    inserted: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deleted: Option<usize>,
}

impl From<Outcome> for OperationResult {
    fn from(outcome: Outcome) -> Self {
        let (inserted, updated, deleted) = match outcome {
            Outcome::Inserted(n) => (Some(n), None, None),
            Outcome::Upserted { inserted, updated } => (Some(inserted), Some(updated), None),
            Outcome::Updated(n) => (None, Some(n), None),
            Outcome::Deleted(n) => (None, None, Some(n)),
        };
        OperationResult {
            inserted,
            updated,
            deleted,
        }
    }
}

/// Apply several row operations as one write
///
/// Insert, update and delete operations on any of the workbook's sheets and
/// tables are applied in order, each seeing what the ones before it did,
/// and written once with one recalculation: all of them or none. A failing
/// operation is named by its index (`operations[1].data.qty`).
// Contract §11.6.
#[utoipa::path(post, path = "/v1/batch/{spreadsheet_id}", tag = "rows",
    params(SpreadsheetParams, KeyParams, WriteConditionParams), request_body = BatchBody,
    responses((status = 200, description = "Every operation was applied; what each did, in order", body = BatchResults,
        headers(("ETag" = String, description = "The workbook's version after the batch: the quoted BLAKE3 hash of its file"),
            ("Last-Modified" = String, description = "When the workbook's file last changed"))), Errors))]
async fn batch(
    State(state): State<AppState>,
    path: SpreadsheetPath,
    _: NoQuery,
    key: IdempotencyKey,
    conditions: Conditions,
    grant: Option<Extension<Arc<Grant>>>,
    JsonBody(body): JsonBody,
) -> Result<Response> {
    let (id, batch) = Problems::both(
        path.checked_id(),
        Batch::from_json(&body, state.config.max_rows_per_request),
    )?;
    let grant = grant.map(|Extension(grant)| grant);
    if let Some(grant) = &grant {
        allowed(grant, &batch)?;
    }
    let key = key.with_body(&body);
    let precondition = conditions.precondition();
    let written = edit_once(&state.store, id, key, precondition, move |workbook| {
        if let Some(grant) = &grant {
            reached(grant, workbook, &batch)?;
        }
        let checks = Turn {
            grant: grant.as_deref(),
        };
        let (outcomes, changed) = workbook.apply_batch(&batch, &checks)?;
        let results = outcomes.into_iter().map(Into::into).collect();
        Ok(Edit {
            value: BatchResults { results },
            changed,
        })
    })
    .await?;
    Ok(written.respond(Json))
}

/// What a batch checks of each operation in its turn: the formulas it
/// writes, and that a scoped token's delete takes no rows of a table
/// beside that the token does not reach.
struct Turn<'a> {
    grant: Option<&'a Grant>,
}

impl Checks for Turn<'_> {
    fn problems(&self, workbook: &Workbook, sheet: usize, operation: &Operation) -> Problems {
        crate::calc::formula_problems(workbook, sheet, operation.formulas())
    }

    fn may_delete(
        &self,
        workbook: &Workbook,
        source: &Source,
        rows: &[usize],
    ) -> std::result::Result<(), crate::model::Error> {
        super::rows::deletes_only_reached(self.grant, workbook, source, rows)
    }
}

/// A 403 of operation `index`, named by it.
fn indexed(index: usize, error: ApiError) -> ApiError {
    match error {
        ApiError::Forbidden(Some(detail)) => {
            ApiError::Forbidden(Some(format!("operations[{index}]: {detail}")))
        }
        other => other,
    }
}

/// Whether the token reaches the rows each operation's name leads to in
/// `workbook` (§11.7, as for a request on rows); else the 403 of the
/// first it does not, named by index. (An operation whose name leads
/// nowhere fails in its turn.)
fn reached(grant: &Grant, workbook: &Workbook, batch: &Batch) -> Result<()> {
    for (index, operation) in batch.operations.iter().enumerate() {
        let (sheet, header_row) = (&operation.sheet, operation.header_row);
        if let Err(refused @ ApiError::Forbidden(_)) =
            super::rows::reached_source(workbook, sheet, header_row, Some(grant))
        {
            return Err(indexed(index, refused));
        }
    }
    Ok(())
}

/// Whether the token may make every operation: reach its sheet or table
/// and have the permissions it needs (an upsert needs `insert` and
/// `update`); else the 403 of the first that it may not, named by index.
fn allowed(grant: &Grant, batch: &Batch) -> Result<()> {
    for (index, operation) in batch.operations.iter().enumerate() {
        let named = |error: ApiError| indexed(index, error);
        if !grant.reaches_sheet(&operation.sheet) {
            return Err(named(auth::not_reached(grant, &operation.sheet)));
        }
        let needs: &[Permission] = match operation.change {
            Change::Insert { .. } => &[Permission::Insert],
            Change::Upsert { .. } => &[Permission::Insert, Permission::Update],
            Change::Update(_) => &[Permission::Update],
            Change::Delete(_) => &[Permission::Delete],
        };
        if let Some(lacking) = needs.iter().find(|p| !grant.may(**p)) {
            return Err(named(auth::lacks(grant, *lacking)));
        }
        auth::may_write_formulas(Some(grant), !operation.formulas().is_empty()).map_err(named)?;
    }
    Ok(())
}
