//! Batches (contract §11.6): several row operations on one workbook,
//! across its sheets and tables, applied in order as one edit — all of
//! them or none.
//!
//! Each operation is the body a single row route takes, with `op`, `sheet`
//! and that route's query parameters (`header_row`, `before`,
//! `on_conflict`) beside its fields; it is checked by the same rules, and
//! every problem is named under the operation's index
//! (`operations[1].data.qty`).

use serde_json::{Map, Value};

use super::Error;
use super::problems::Problems;
use super::request::{DeleteRows, InsertRows, UpdateRows};
use super::source::Source;
use super::workbook::Workbook;

/// What the caller checks of each operation beyond its rules, when its
/// turn comes, with the workbook as the operations before left it.
pub trait Checks {
    /// The problems of `operation` on the sheet of index `sheet` (the
    /// formulas it writes).
    fn problems(&self, workbook: &Workbook, sheet: usize, operation: &Operation) -> Problems;

    /// Whether a delete through `source` may take the sheet rows `rows`
    /// (0-based) it selected.
    fn may_delete(&self, workbook: &Workbook, source: &Source, rows: &[usize])
    -> Result<(), Error>;
}

/// The most operations one batch may hold.
pub const MAX_OPERATIONS: usize = 1000;

/// A checked batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub operations: Vec<Operation>,
}

/// One operation: where its rows are and what it does to them.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// A sheet or table name, as in a row route's path.
    pub sheet: String,
    pub header_row: Option<u64>,
    pub change: Change,
}

/// What an operation does.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Rows appended, or inserted before row `before` (§4.1, §11.2).
    Insert {
        rows: InsertRows,
        before: Option<u64>,
    },
    /// Rows inserted or updated by their value in `column` (§10.2).
    Upsert {
        rows: InsertRows,
        column: String,
    },
    Update(UpdateRows),
    Delete(DeleteRows),
}

/// What one operation did, as its route would answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Inserted(usize),
    Upserted { inserted: usize, updated: usize },
    Updated(usize),
    Deleted(usize),
}

impl Outcome {
    /// Whether the operation changed the workbook.
    fn changed(self) -> bool {
        match self {
            Outcome::Inserted(n) | Outcome::Updated(n) | Outcome::Deleted(n) => n > 0,
            Outcome::Upserted { inserted, updated } => inserted + updated > 0,
        }
    }
}

impl Batch {
    /// Checks a batch body `{"operations": [...]}` whose inserts add at
    /// most `max_rows` rows in all.
    pub fn from_json(json: &[u8], max_rows: usize) -> Result<Batch, Problems> {
        let (operations, mut problems) = operations_of(json)?;
        let mut checked = Vec::with_capacity(operations.len());
        for (index, operation) in operations.into_iter().enumerate() {
            let field = format!("operations[{index}]");
            match Operation::from_json(operation, max_rows) {
                Ok(operation) => checked.push(operation),
                Err(found) => problems.extend(found.within(&field)),
            }
        }
        let rows: usize = checked.iter().map(Operation::new_rows).sum();
        if rows > max_rows {
            problems.push(
                "operations",
                format!("insert {rows} rows in all; one request may insert at most {max_rows}"),
            );
        }
        problems.into_result(Batch {
            operations: checked,
        })
    }
}

/// The operations of a batch body, and the problems of the body around
/// them. Numbers keep their literal text (serde_json's
/// `arbitrary_precision`), so an operation's fields are checked by its
/// route's rules as the route reads them from its body: an integer beyond
/// 2^53 is still told by its literal.
fn operations_of(json: &[u8]) -> Result<(Vec<Value>, Problems), Problems> {
    if json.trim_ascii_start().first() != Some(&b'{') {
        return Err(Problems::one("body", "must be a JSON object"));
    }
    let mut body: Map<String, Value> = serde_json::from_slice(json)
        .map_err(|e| Problems::one("body", format!("could not be read ({e})")))?;
    let mut problems = Problems::new();
    for key in body.keys().filter(|key| *key != "operations") {
        problems.push(key.as_str(), "is not a known field");
    }
    let operations = match body.remove("operations") {
        None | Some(Value::Null) => {
            problems.push("operations", "is required");
            Vec::new()
        }
        Some(Value::Array(items)) if items.len() > MAX_OPERATIONS => {
            let rule = format!(
                "holds {} operations; one batch may hold at most {MAX_OPERATIONS}",
                items.len()
            );
            problems.push("operations", rule);
            Vec::new()
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.push("operations", "must be an array of operations");
            Vec::new()
        }
    };
    Ok((operations, problems))
}

impl Operation {
    /// One operation from its JSON object.
    fn from_json(operation: Value, max_rows: usize) -> Result<Operation, Problems> {
        let Value::Object(mut fields) = operation else {
            return Err(Problems::one("", "must be an object with op and sheet"));
        };
        let mut problems = Problems::new();
        let op = fields.remove("op");
        let sheet = match fields.remove("sheet") {
            Some(Value::String(name)) if !name.is_empty() => Some(name),
            None | Some(Value::Null) => {
                problems.push("sheet", "is required");
                None
            }
            Some(_) => {
                problems.push("sheet", "must name a sheet or table");
                None
            }
        };
        let header_row = row_number(fields.remove("header_row"), "header_row", &mut problems);
        let before = row_number(fields.remove("before"), "before", &mut problems);
        let on_conflict = match fields.remove("on_conflict") {
            None | Some(Value::Null) => None,
            Some(Value::String(column)) if !column.is_empty() => Some(column),
            Some(_) => {
                problems.push("on_conflict", "must name a column");
                None
            }
        };
        // The route's own fields, checked by the route's rules.
        let change = match op.as_ref().and_then(Value::as_str) {
            Some("insert") => {
                let rows = InsertRows::from_object(fields, max_rows).map_err(Problems::from);
                if on_conflict.is_some() && before.is_some() {
                    let rule =
                        "cannot be combined with on_conflict: an upsert appends its new rows";
                    problems.push("before", rule);
                }
                rows.map_err(|found| problems.extend(found))
                    .ok()
                    .map(|rows| match on_conflict {
                        Some(column) => Change::Upsert { rows, column },
                        None => Change::Insert { rows, before },
                    })
            }
            Some(kind @ ("update" | "delete")) => {
                for (field, given) in [
                    ("before", before.is_some()),
                    ("on_conflict", on_conflict.is_some()),
                ] {
                    if given {
                        problems.push(field, format!("is not allowed with op {kind}"));
                    }
                }
                let change = if kind == "update" {
                    UpdateRows::from_object(fields)
                        .map(Change::Update)
                        .map_err(Problems::from)
                } else {
                    DeleteRows::from_object(fields)
                        .map(Change::Delete)
                        .map_err(Problems::from)
                };
                change.map_err(|found| problems.extend(found)).ok()
            }
            None if op.is_none() => {
                problems.push("op", "is required");
                None
            }
            _ => {
                problems.push("op", "must be one of insert or update or delete");
                None
            }
        };
        match (sheet, change) {
            (Some(sheet), Some(change)) if problems.is_empty() => Ok(Operation {
                sheet,
                header_row,
                change,
            }),
            _ => Err(problems),
        }
    }

    /// The rows the operation may add.
    fn new_rows(&self) -> usize {
        match &self.change {
            Change::Insert { rows, .. } | Change::Upsert { rows, .. } => rows.rows.len(),
            Change::Update(_) | Change::Delete(_) => 0,
        }
    }

    /// The formulas the operation writes: their field and text.
    pub fn formulas(&self) -> Vec<(String, &str)> {
        match &self.change {
            Change::Insert { rows, .. } | Change::Upsert { rows, .. } => rows.formulas(),
            Change::Update(request) => request.formulas(),
            Change::Delete(_) => Vec::new(),
        }
    }

    /// Applies the operation to `workbook`, once `checks` find no problem
    /// with it; on failure nothing of it is applied (each row operation
    /// checks its whole request first).
    fn apply(&self, workbook: &mut Workbook, checks: &dyn Checks) -> Result<Outcome, Error> {
        let source = workbook.source(&self.sheet, self.header_row)?;
        let problems = checks.problems(workbook, source.sheet, self);
        if !problems.is_empty() {
            return Err(problems.into());
        }
        Ok(match &self.change {
            Change::Insert { rows, before } => {
                Outcome::Inserted(workbook.insert(&source, rows.clone(), *before)?)
            }
            Change::Upsert { rows, column } => {
                let (inserted, updated) = workbook.upsert(&source, rows.clone(), column)?;
                Outcome::Upserted { inserted, updated }
            }
            Change::Update(request) => {
                let sheet = &mut workbook.sheets[source.sheet];
                Outcome::Updated(sheet.update(&source.region, request.clone())?)
            }
            Change::Delete(request) => {
                Outcome::Deleted(workbook.delete_rows_if(&source, request, |workbook, rows| {
                    checks.may_delete(workbook, &source, rows)
                })?)
            }
        })
    }
}

/// A row number field: an integer from 1 to 1048576, or absent.
fn row_number(value: Option<Value>, field: &str, problems: &mut Problems) -> Option<u64> {
    let value = value.filter(|value| !value.is_null())?;
    let number = value.as_u64().filter(|&row| (1..=1_048_576).contains(&row));
    if number.is_none() {
        problems.push(field, "must be a row number (an integer from 1 to 1048576)");
    }
    number
}

impl Workbook {
    /// Applies every operation of `batch` in order (§11.6), each once
    /// `checks` find no problem with it. All or nothing: when one fails, the workbook is put back as it was and the
    /// error names the operation by its index. Returns what each did and
    /// whether any changed the workbook.
    pub fn apply_batch(
        &mut self,
        batch: &Batch,
        checks: &dyn Checks,
    ) -> Result<(Vec<Outcome>, bool), Error> {
        // One operation leaves nothing behind when it fails; a later one's
        // failure must undo the earlier ones, from a copy taken first.
        let before = (batch.operations.len() > 1).then(|| self.clone());
        let mut outcomes = Vec::with_capacity(batch.operations.len());
        for (index, operation) in batch.operations.iter().enumerate() {
            let applied = operation.apply(self, checks);
            // What the store knew of the workbook before the batch holds no
            // more once an operation may have written formulas.
            self.row_formulas_absent = false;
            match applied {
                Ok(outcome) => outcomes.push(outcome),
                Err(error) => {
                    if let Some(before) = before {
                        *self = before;
                    }
                    return Err(error.within(&format!("operations[{index}]")));
                }
            }
        }
        let changed = outcomes.iter().any(|outcome| outcome.changed());
        Ok((outcomes, changed))
    }
}

impl Error {
    /// The error of a part of a request, named under `field`.
    fn within(self, field: &str) -> Error {
        match self {
            Error::Invalid(problems) => Error::Invalid(problems.within(field)),
            Error::NotFound(detail) => Error::NotFound(format!("{field}: {detail}")),
            Error::Conflict(detail) => Error::Conflict(format!("{field}: {detail}")),
            Error::Forbidden(detail) => Error::Forbidden(format!("{field}: {detail}")),
        }
    }
}
