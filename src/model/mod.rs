//! The workbook as plain data and every rule about it: values, header,
//! filters, requests and row operations. No I/O, no HTTP.

/// Several row operations applied as one edit, all or nothing.
pub mod batch;
/// What a file holds beyond the model, carried through writes.
pub mod carried;
/// A number as its number format displays it (§11.3).
pub mod display;
/// The `column:operator:value` filter language.
pub mod filter;
/// How a cell looks: number format, font, fill, borders, alignment.
pub mod format;
/// Formula texts: copied, adjusted when rows move, and what they read.
pub mod formula;
/// Finding and naming columns in the header row.
pub mod header;
/// Spreadsheet identifiers.
pub mod id;

mod index;
/// A sheet's layout around its values: formats, sizes, merges, links, tables.
pub mod layout;
/// Validation problems with field paths.
pub mod problems;
/// How a read shows its cells: raw, formatted, formulas, ISO dates (§11.3).
pub mod render;
/// Request bodies and queries, checked and typed.
pub mod request;
/// Workbooks, sheets and the row operations on them.
pub mod sheet;
/// Where a request's rows are: a sheet or a table, and its header row.
pub mod source;
/// Cells and the JSON ⇄ cell rules, dates included.
pub mod value;
/// The types of a workbook and its sheets.
pub mod workbook;
/// Values as people write them: ISO dates, times of day, formulas (§11.4).
pub mod written;

pub use id::SpreadsheetId;
pub use problems::Problems;
pub use sheet::{Error, Outline, RowsChanged};
pub use value::Cell;
pub use workbook::{Edited, Formulas, Sheet, Visibility, Workbook};
