//! Request bodies and queries, checked and turned into types: the bodies
//! of the row routes (`bodies`) read into the row requests (`rows`), the
//! queries (`queries`), and new workbooks and sheets (`new_sheets`).
//!
//! Each body is described once: the `*Body` types (in `bodies` and
//! `new_sheets`) are what serde reads a request into *and* what the
//! OpenAPI document shows (utoipa's `ToSchema`). They take any JSON value in
//! each field, so that the checks after them can name every problem at
//! once instead of serde's first; the schema annotations say what the
//! checks accept.
//!
//! Everything that can be judged without the sheet is judged here: the shape
//! of the body, unknown fields, value rules, filter syntax and the filter
//! budgets (`filter::MAX_FILTERS` and the others). Column names are
//! resolved later, against the sheet's header (see `sheet`); a request with
//! problems here still carries what could be read of it ([`Rejected`]), so
//! that the sheet can add the problems only it can see.

mod bodies;
mod new_sheets;
mod queries;
mod rows;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::problems::Problems;

pub use bodies::{DeleteBody, InsertBody, SelectorType, UpdateBody, UpdateType};
pub use new_sheets::{
    CreateBody, MAX_SHEET_NAME, NewSheet, NewWorkbook, SheetBody, sheet_name_problem,
};
pub use queries::{
    DEFAULT_LIMIT, Format, InsertQuery, ListQuery, MAX_LIMIT, MAX_OFFSET, Order, ReadQuery,
    header_row_from_pairs, insert_query_from_pairs, no_query_parameters,
};
pub use rows::{DeleteRows, InsertRows, NewRow, RowValues, Selector, UpdateRows};

/// The names of the body schemas, whose objects allow no other fields.
pub const BODY_SCHEMAS: [&str; 5] = [
    "InsertBody",
    "UpdateBody",
    "DeleteBody",
    "CreateBody",
    "SheetBody",
];

/// A request that broke rules checkable without the sheet: its problems,
/// and what could be read of it (the well-formed cells and filters).
#[derive(Debug)]
pub struct Rejected<T> {
    pub partial: T,
    pub problems: Problems,
}

impl<T> From<Rejected<T>> for Problems {
    fn from(rejected: Rejected<T>) -> Problems {
        rejected.problems
    }
}

/// `Ok(value)` when nothing was found, else `value` rejected with the problems.
pub(super) fn checked<T>(value: T, problems: Problems) -> Result<T, Rejected<T>> {
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(Rejected {
            partial: value,
            problems,
        })
    }
}

/// Reads a body (JSON text) into its `*Body` type; only a body that is no
/// JSON object fails. Read from the text, not from a parsed `Value`: a
/// `Value` read again turns `1000000000000000000000000000000000000000`
/// into `1e39`, and the rule for integers beyond 2^53 needs the literal.
pub(super) fn body_of<B: for<'de> Deserialize<'de>>(json: &[u8]) -> Result<B, Problems> {
    if json.trim_ascii_start().first() != Some(&b'{') {
        return Err(Problems::one("body", "must be a JSON object"));
    }
    serde_json::from_slice(json)
        .map_err(|e| Problems::one("body", format!("could not be read ({e})")))
}

/// [`body_of`] for a JSON object already parsed.
pub(super) fn body_of_object<B: for<'de> Deserialize<'de>>(
    fields: Map<String, Value>,
) -> Result<B, Problems> {
    serde_json::from_value(Value::Object(fields))
        .map_err(|e| Problems::one("body", format!("could not be read ({e})")))
}

/// Reports every field of `unknown` as not known.
pub(super) fn report_unknown(unknown: &Map<String, Value>, problems: &mut Problems) {
    for key in unknown.keys() {
        problems.push(key.as_str(), "is not a known field");
    }
}

#[cfg(test)]
mod tests;
