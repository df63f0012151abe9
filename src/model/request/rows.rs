//! The row requests a body is checked into: rows to insert, which rows an
//! update or delete addresses, and the values to set.

use crate::model::filter::FilterExpr;
use crate::model::value::Cell;

/// One row of an insert: its place in `data` and its cells by column name.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRow {
    pub index: usize,
    pub cells: Vec<(String, Cell)>,
}

/// `POST` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertRows {
    pub rows: Vec<NewRow>,
}

/// Which rows an update or delete addresses.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    /// Rows satisfying every expression.
    Filter(Vec<FilterExpr>),
    /// One row, by the number the sheet shows for it.
    Row(u64),
    /// Rows by the numbers the sheet shows for them (`type: rows` with
    /// `rows`, §11.2), each once.
    Numbers(Vec<u64>),
    /// Rows by number, each with its own values (`PATCH` with `type:
    /// rows`, §10.2); the values are in [`UpdateRows::rows`].
    Rows,
}

/// `PATCH` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateRows {
    pub selector: Selector,
    pub data: Vec<(String, Cell)>,
    /// With [`Selector::Rows`]: each row's number and values.
    pub rows: Vec<RowValues>,
}

/// One row of a `type: rows` update: its number and what to set.
#[derive(Debug, Clone, PartialEq)]
pub struct RowValues {
    /// Where it came from in the request (`data[2]`).
    pub field: String,
    pub row: u64,
    pub cells: Vec<(String, Cell)>,
}

/// `DELETE` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteRows {
    pub selector: Selector,
}
