//! How a read shows its cells (contract §11.3): `values=raw` (§2's
//! values, the default), `values=formatted` (the text the cell's number
//! format displays), `values=formula` (a formula's text with its `=`), and
//! `dates=iso` (dates in ISO 8601 instead of `YYYY/MM/DD`).

use serde_json::{Map, Value};

use super::display::NumberFormat;
use super::format::{DateParts, date_parts, written_code};
use super::header::{Column, ROW_KEY};
use super::value::{Cell, DATE_TIME_CODE, FIRST_SERIAL_AFTER_LEAP_DAY};
use super::{Sheet, Workbook};

/// What a read's `values` parameter asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Values {
    #[default]
    Raw,
    Formatted,
    Formula,
}

/// How a read shows dates (its `dates` parameter).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dates {
    /// `YYYY/MM/DD`, `YYYY/MM/DD HH:MM:SS` (§2).
    #[default]
    Slashes,
    /// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS`.
    Iso,
}

/// How a read shows its cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rendering {
    pub values: Values,
    pub dates: Dates,
}

impl Values {
    pub const RULE: &str = "must be one of raw|formatted|formula";

    pub fn parse(value: &str) -> Option<Values> {
        match value {
            "raw" => Some(Values::Raw),
            "formatted" => Some(Values::Formatted),
            "formula" => Some(Values::Formula),
            _ => None,
        }
    }
}

impl Dates {
    pub const RULE: &str = "must be iso";

    pub fn parse(value: &str) -> Option<Dates> {
        (value == "iso").then_some(Dates::Iso)
    }
}

/// Shows the cells of one read. Each cell format's number format is parsed
/// the first time a cell of that format is shown, and kept for the others.
#[derive(Debug, Default)]
pub struct Renderer {
    rendering: Rendering,
    /// By cell format id: its parsed number format, once one cell used it.
    formats: Vec<Option<CachedFormat>>,
    /// The codes cells are written with instead of their format's, parsed.
    written: Vec<(&'static str, NumberFormat)>,
}

impl Renderer {
    pub fn new(rendering: Rendering) -> Renderer {
        Renderer {
            rendering,
            formats: Vec::new(),
            written: Vec::new(),
        }
    }

    /// The row at 0-based `index` as a JSON object: `_row`, then each of
    /// `columns`, shown as the rendering asks.
    pub fn row_json(
        &mut self,
        workbook: &Workbook,
        sheet: &Sheet,
        index: usize,
        columns: &[Column],
    ) -> Value {
        if self.rendering == Rendering::default() {
            return sheet.row_json(index, columns);
        }
        let mut object = Map::with_capacity(columns.len() + 1);
        object.insert(ROW_KEY.into(), Value::from(index + 1));
        for column in columns {
            let value = self.cell_json(workbook, sheet, index, column.index);
            object.insert(column.name.clone(), value);
        }
        Value::Object(object)
    }

    /// The cell at 0-based `row` and `column`, shown as the rendering asks.
    pub fn cell_json(
        &mut self,
        workbook: &Workbook,
        sheet: &Sheet,
        row: usize,
        column: usize,
    ) -> Value {
        let cell = sheet
            .rows
            .get(row)
            .and_then(|cells| cells.get(column))
            .unwrap_or(&Cell::Empty);
        match self.rendering.values {
            Values::Formula => match cell {
                Cell::Formula(formula) => Value::String(format!("={}", formula.expr)),
                other => self.raw(other),
            },
            Values::Raw => self.raw(cell),
            Values::Formatted => {
                let id = sheet
                    .layout
                    .formats
                    .get(row)
                    .and_then(|ids| ids.get(column))
                    .copied()
                    .unwrap_or(0);
                let kept = sheet.layout.misfits.get(&(row as u32, column as u16)) == Some(cell);
                self.formatted(workbook, cell, id, kept)
            }
        }
    }

    /// §2's value, with dates in ISO 8601 when asked.
    fn raw(&self, cell: &Cell) -> Value {
        let value = cell.to_json();
        match (self.rendering.dates, cell.value()) {
            (Dates::Iso, Cell::DateTime(_) | Cell::Timestamp(_)) => match value {
                // `YYYY/MM/DD[ HH:MM:SS]`, or `HH:MM:SS` for a time of day.
                Value::String(text) => Value::String(text.replace('/', "-").replace(' ', "T")),
                other => other,
            },
            _ => value,
        }
    }

    /// The text the number format of cell format `id` shows for `cell`
    /// (a formula's cached result); `null` when empty. The number format
    /// is the one the cell is written with (see [`written_code`]; `kept`:
    /// the file has the cell so).
    fn formatted(&mut self, workbook: &Workbook, cell: &Cell, id: u32, kept: bool) -> Value {
        let number = match cell.value() {
            Cell::Empty | Cell::Formula(_) => return Value::Null,
            Cell::Text(text) if text.is_empty() => return Value::Null,
            Cell::Text(text) => {
                return Value::String(self.format(workbook, id).format.show_text(text));
            }
            Cell::Error(text) => return Value::String(text.clone()),
            Cell::Bool(true) => return Value::String("TRUE".into()),
            Cell::Bool(false) => return Value::String("FALSE".into()),
            // A 1904 workbook's date before 1900/03/01 is shown as the day
            // it is (LibreOffice counts no 29 February 1900, which the
            // model's serials do).
            Cell::DateTime(n) | Cell::Timestamp(n)
                if workbook.carried.date1904 && *n < FIRST_SERIAL_AFTER_LEAP_DAY =>
            {
                *n + 1.0
            }
            Cell::Number(n) | Cell::DateTime(n) | Cell::Timestamp(n) | Cell::Duration(n) => *n,
        };
        let cached = self.format(workbook, id);
        let Some(code) = written_code(cell, cached.shows, cached.exact, kept) else {
            return Value::String(cached.format.show(number));
        };
        let index = match self.written.iter().position(|(known, _)| *known == code) {
            Some(index) => index,
            None => {
                self.written.push((code, NumberFormat::parse(Some(code))));
                self.written.len() - 1
            }
        };
        Value::String(self.written[index].1.show(number))
    }

    /// Cell format `id`'s number format, parsed on first use.
    fn format(&mut self, workbook: &Workbook, id: u32) -> &CachedFormat {
        // Ids past the workbook's formats are the default format, id 0.
        let index = Some(id as usize)
            .filter(|&index| index < workbook.formats.len())
            .unwrap_or(0);
        if index >= self.formats.len() {
            self.formats
                .resize_with(workbook.formats.len().max(1), || None);
        }
        self.formats[index].get_or_insert_with(|| {
            let code = workbook
                .formats
                .get(index)
                .and_then(|format| format.num_format.as_deref());
            CachedFormat {
                format: NumberFormat::parse(code),
                shows: code.map(date_parts).unwrap_or_default(),
                exact: code == Some(DATE_TIME_CODE),
            }
        })
    }
}

/// A cell format's number format, parsed, and what it shows of a date.
#[derive(Debug)]
struct CachedFormat {
    format: NumberFormat,
    shows: DateParts,
    /// Whether its code is the contract's date-time code.
    exact: bool,
}
