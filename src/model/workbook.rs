//! The workbook's types: workbooks, sheets, names, properties. The rules
//! about them live with the operations (`sheet`) and the other model files.

use std::sync::Arc;

use super::carried::{Carried, CarriedSheet};
use super::format::{CellFormat, Font};
use super::formula::{RowMove, moved_from_any_stage, names_rows};
use super::layout::Layout;
use super::value::Cell;

/// The last row number of the xlsx format.
pub const MAX_ROWS: usize = 1_048_576;
/// The number of columns of the xlsx format.
pub const MAX_COLUMNS: usize = 16_384;
/// The most sheets a workbook made or grown through the API may have: a
/// rewrite holds a temporary file open for each sheet.
pub const MAX_SHEETS: usize = 1024;

/// A whole workbook.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workbook {
    pub sheets: Vec<Sheet>,
    /// Parts of the file a rewrite would not keep, described for a user
    /// (a chart sheet whose part is missing). Writes are refused while any
    /// exist.
    pub unkept: Vec<String>,
    /// The cell formats that `Layout::formats` ids point into; id 0 is the
    /// default format (present whether or not this holds it).
    pub formats: Vec<CellFormat>,
    /// The font of cells with no font of their own; `Font::default()` is
    /// the writer's own default (Calibri 11).
    pub default_font: Font,
    /// Defined names ("named ranges"), in the workbook's order.
    pub names: Vec<DefinedName>,
    /// The index of the sheet shown when the workbook opens.
    pub active_sheet: usize,
    pub properties: DocumentProperties,
    /// What the file holds beyond the model, written back as it was.
    pub carried: Arc<Carried>,
    /// Set by the store for a batch's edits while it knows that no cell
    /// holds a formula that names rows (it keeps that with the workbook),
    /// until an edit changes the workbook: moving rows then does not look
    /// through every cell for formulas to adjust. False, look, otherwise.
    pub row_formulas_absent: bool,
}

/// What a workbook's formulas are, as a look through every cell finds
/// (the store keeps it with a cached workbook).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Formulas {
    /// A cell holds a formula.
    pub any: bool,
    /// A cell holds a formula that names rows ([`names_rows`]): one that
    /// rows moving may change. LibreOffice saves booleans as `TRUE()` and
    /// `FALSE()`, which name none.
    pub naming_rows: bool,
}

impl Formulas {
    /// Whether `cell` is a formula that names rows.
    pub fn names_rows(cell: &Cell) -> bool {
        matches!(cell, Cell::Formula(formula) if names_rows(&formula.expr))
    }
}

/// What File → Properties shows. Empty fields are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentProperties {
    pub title: Option<String>,
    pub subject: Option<String>,
    pub author: Option<String>,
    pub keywords: Option<String>,
    pub comment: Option<String>,
    pub category: Option<String>,
    pub status: Option<String>,
    pub company: Option<String>,
    pub manager: Option<String>,
}

/// A defined name: a name for a range, a constant or a formula.
#[derive(Debug, Clone, PartialEq)]
pub struct DefinedName {
    pub name: String,
    /// The sheet (by index) the name belongs to; `None` is the whole workbook.
    pub scope: Option<usize>,
    /// What it stands for, as a formula without `=`: `Data!$B$2:$B$5`, `0.2`.
    pub refers_to: String,
    pub hidden: bool,
}

/// Whether a sheet shows in the spreadsheet app's tab bar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Visibility {
    #[default]
    Visible,
    Hidden,
    /// Hidden, and not listed in the app's "unhide" dialog.
    VeryHidden,
}

/// One worksheet: its name and its cells, `rows[row][column]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sheet {
    pub name: String,
    pub visibility: Visibility,
    pub rows: Vec<Vec<Cell>>,
    pub layout: Layout,
    /// What the sheet's part holds beyond the model, written back as it was.
    pub carried: Arc<CarriedSheet>,
    /// What the edits of the batch being committed changed, for the
    /// formula engine; empty between commits.
    pub edited: Edited,
    /// An index of a column, for filters that look for a number in it.
    pub indexes: super::index::Indexes,
}

/// The cells a batch of edits changed on a sheet; once the edits' log is
/// taken, the recalculation logs here the cells it changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edited {
    /// Cells set (0-based row and column): values written, formulas filled
    /// down or adjusted, results recomputed or made stale.
    pub cells: Vec<(u32, u32)>,
    /// Rows were removed or inserted: cells may be anywhere else now.
    pub moved: bool,
    /// A table grew down over appended rows: its structured references
    /// cover more rows (the formula engine reads them again), and no cell
    /// moved.
    pub grown: bool,
    /// The row moves made, in order, which what the sheet carries beyond
    /// the model (notes, drawings, conditional formats…) has yet to follow:
    /// the xlsx layer moves it when the workbook is written.
    pub moves: Vec<RowMove>,
}

impl Edited {
    /// Whether nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty() && !self.moved && !self.grown && self.moves.is_empty()
    }
}

impl Workbook {
    /// What the workbook's formulas are: a look at every cell.
    pub fn formulas(&self) -> Formulas {
        let mut found = Formulas::default();
        for cell in self.sheets.iter().flat_map(|sheet| sheet.cells()) {
            if let Cell::Formula(formula) = cell {
                found.any = true;
                if names_rows(&formula.expr) {
                    found.naming_rows = true;
                    break;
                }
            }
        }
        found
    }

    /// What the formulas of the workbook are after the edits since the
    /// last [`Workbook::take_edits`], given what they were before them: a
    /// look at the cells the edits wrote (or filled a formula down into;
    /// see [`Workbook::logged_any`]). Moving rows makes no formula name
    /// rows that named none.
    pub fn formulas_after_edits(&self, before: Formulas) -> Formulas {
        let edits = || self.sheets.iter().map(|sheet| &sheet.edited);
        Formulas {
            any: before.any || self.logged_any(edits(), |cell| matches!(cell, Cell::Formula(_))),
            naming_rows: before.naming_rows || self.logged_any(edits(), Formulas::names_rows),
        }
    }

    /// Whether a cell that `edits` (one per sheet) logged is now one that
    /// `is` picks: a look at the cells they logged. On a sheet whose rows
    /// moved since, a logged cell may be elsewhere now: it is looked for
    /// wherever the moves after each point may have put it, or, when that
    /// would take longer than a look at every row, the whole sheet is
    /// looked through.
    pub fn logged_any<'a>(
        &self,
        edits: impl IntoIterator<Item = &'a Edited>,
        is: impl Fn(&Cell) -> bool,
    ) -> bool {
        self.sheets.iter().zip(edits).any(|(sheet, edited)| {
            let (cells, moves) = (&edited.cells, &edited.moves);
            let looks = cells.len().saturating_mul(moves.len() * (moves.len() + 1));
            if looks > sheet.rows.len() {
                return sheet.cells().any(&is);
            }
            cells.iter().any(|&(row, column)| {
                moved_from_any_stage(moves, row)
                    .any(|row| (sheet.row(row as usize).get(column as usize)).is_some_and(&is))
            })
        })
    }

    /// Each sheet's edits since the last call, in sheet order.
    pub fn take_edits(&mut self) -> Vec<Edited> {
        self.sheets
            .iter_mut()
            .map(|sheet| {
                let edited = std::mem::take(&mut sheet.edited);
                sheet.indexes.follow(&edited);
                edited
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sheet;
    use crate::model::value::Formula;

    /// A workbook of one sheet of `rows` rows, a formula at 0-based row
    /// `formula_at`, whose edits logged the cell at row 6 and then made
    /// `moves`.
    fn logged(rows: usize, formula_at: usize, moves: Vec<RowMove>) -> Workbook {
        let mut cells: Vec<Vec<Cell>> = (0..rows).map(|_| vec![Cell::Number(1.0)]).collect();
        cells[formula_at][0] = Cell::Formula(Box::new(Formula::new("1+1", Cell::Number(2.0))));
        let mut sheet = Sheet::new("S", cells);
        sheet.edited.cells.push((6, 0));
        sheet.edited.moves = moves;
        Workbook {
            sheets: vec![sheet],
            ..Workbook::default()
        }
    }

    #[test]
    fn a_formula_written_is_found_where_the_rows_moved_since_put_it() {
        // Row 7 (0-based 6) logged, then row 2 deleted: it is row 6 now.
        let one_delete = || vec![RowMove::Deleted(vec![2])];
        assert!(
            logged(100, 5, one_delete())
                .formulas_after_edits(Formulas::default())
                .any
        );
        assert!(
            !logged(100, 40, one_delete())
                .formulas_after_edits(Formulas::default())
                .any
        );
        // Many moves over few rows: the whole sheet is looked through.
        let moves = (0..4)
            .map(|_| RowMove::Deleted(vec![1]))
            .collect::<Vec<_>>();
        assert!(
            logged(10, 9, moves)
                .formulas_after_edits(Formulas::default())
                .any
        );
    }
}
