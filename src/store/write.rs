//! Writing: [`Workbook`] → xlsx bytes, with rust_xlsxwriter.
//!
//! rust_xlsxwriter cannot edit a file, so every write rebuilds the whole
//! workbook from the model: every sheet with its name, order, visibility,
//! values, types and formulas (with their cached results).

use std::io::{Seek, Write};

use rust_xlsxwriter::{Format, Formula as XlsxFormula, Worksheet, XlsxError};

use super::StoreError;
use crate::model::value::{DateKind, date_kind, format_number};
use crate::model::{Cell, Visibility, Workbook};

/// Number formats of the date-like cells (contract §2).
struct Formats {
    date: Format,
    date_time: Format,
    time_of_day: Format,
    duration: Format,
}

impl Formats {
    fn new() -> Formats {
        Formats {
            date: Format::new().set_num_format("yyyy/mm/dd"),
            date_time: Format::new().set_num_format("yyyy/mm/dd hh:mm:ss"),
            time_of_day: Format::new().set_num_format("hh:mm:ss"),
            duration: Format::new().set_num_format("[h]:mm:ss"),
        }
    }

    /// The format a cell needs to show as what it is, if any.
    fn of(&self, cell: &Cell) -> Option<&Format> {
        match cell {
            Cell::DateTime(serial) => Some(match date_kind(*serial) {
                DateKind::Date => &self.date,
                DateKind::DateTime => &self.date_time,
                DateKind::TimeOfDay => &self.time_of_day,
            }),
            Cell::Duration(_) => Some(&self.duration),
            _ => None,
        }
    }
}

/// Writes the whole workbook to `out`.
pub fn write_workbook<W: Write + Seek + Send>(
    workbook: &Workbook,
    out: W,
) -> Result<(), StoreError> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let formats = Formats::new();
    let first_visible = workbook
        .sheets
        .iter()
        .position(|s| s.visibility == Visibility::Visible);
    for (index, sheet) in workbook.sheets.iter().enumerate() {
        let worksheet = book.add_worksheet();
        worksheet.set_name(&sheet.name).map_err(unwritable)?;
        match sheet.visibility {
            Visibility::Visible => {}
            Visibility::Hidden => {
                worksheet.set_hidden(true);
            }
            Visibility::VeryHidden => {
                worksheet.set_very_hidden(true);
            }
        }
        if Some(index) == first_visible {
            worksheet.set_active(true);
        }
        for (row, cells) in sheet.rows.iter().enumerate() {
            for (column, cell) in cells.iter().enumerate() {
                write_cell(worksheet, row as u32, column as u16, cell, &formats)
                    .map_err(unwritable)?;
            }
        }
    }
    book.save_to_writer(out).map_err(|e| match e {
        XlsxError::IoError(io) => StoreError::Io(io),
        other => unwritable(other),
    })
}

fn unwritable(error: XlsxError) -> StoreError {
    StoreError::Conflict(format!("the workbook cannot be rewritten: {error}"))
}

fn write_cell(
    worksheet: &mut Worksheet,
    row: u32,
    column: u16,
    cell: &Cell,
    formats: &Formats,
) -> Result<(), XlsxError> {
    match cell {
        Cell::Empty => {}
        Cell::Text(text) if text.is_empty() => {}
        Cell::Number(n) => {
            worksheet.write_number(row, column, *n)?;
        }
        Cell::Text(text) => {
            worksheet.write_string(row, column, text)?;
        }
        Cell::Bool(b) => {
            worksheet.write_boolean(row, column, *b)?;
        }
        Cell::DateTime(serial) | Cell::Duration(serial) => {
            let format = formats.of(cell).expect("date-like cells have a format");
            worksheet.write_number_with_format(row, column, *serial, format)?;
        }
        // An error constant has no cell type of its own in the writer; the
        // formula made of the error literal evaluates to the same error.
        Cell::Error(text) => {
            let formula = XlsxFormula::new(text).set_result(text);
            worksheet.write_formula(row, column, formula)?;
        }
        Cell::Formula(f) => {
            let formula = XlsxFormula::new(&f.expr).set_result(cached_result(&f.cached));
            match formats.of(&f.cached) {
                Some(format) => {
                    worksheet.write_formula_with_format(row, column, formula, format)?
                }
                None => worksheet.write_formula(row, column, formula)?,
            };
        }
    }
    Ok(())
}

/// The cached result as the writer wants it: text it types by its shape
/// (a number, `TRUE`/`FALSE`, an error literal, else a string).
fn cached_result(cell: &Cell) -> String {
    match cell {
        Cell::Number(n) => format_number(*n),
        Cell::DateTime(serial) | Cell::Duration(serial) => serial.to_string(),
        Cell::Bool(true) => "TRUE".into(),
        Cell::Bool(false) => "FALSE".into(),
        Cell::Text(text) | Cell::Error(text) => text.clone(),
        Cell::Empty | Cell::Formula(_) => String::new(),
    }
}
