//! Workbooks and sheets as plain data, and the row operations on them.
//!
//! Row indexes here are 0-based and absolute (index 0 is the sheet's row 1);
//! the number a user sees is `index + 1`. Every operation checks the whole
//! request first and changes nothing when it finds a problem, so a failed
//! request never leaves a half-applied edit behind.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::filter::{BoundFilter, FilterExpr, number_key, to_seconds};
use super::format::{CellFormat, misfit_code};
use super::formula::{
    RowMove, SheetRows, Unadjustable, cell_name, name_rows_moved, names_rows, quoted_sheet,
    ranges_grown, rows_moved, same_sheet, shifted,
};
use super::header::{Column, Header, ROW_KEY, Region};
use super::index;
use super::layout::{Layout, LinkTarget, Range, Table};
use super::problems::Problems;
use super::request::{
    DeleteRows, InsertRows, NewRow, NewSheet, ReadQuery, RowValues, Selector, UpdateRows,
};
use super::source::{Source, unique};
use super::value::{Cell, DateKind, Formula, date_kind};
use super::workbook::{Edited, MAX_COLUMNS, MAX_ROWS, MAX_SHEETS, Sheet, Visibility, Workbook};

/// What went wrong in a model operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request breaks rules that only the sheet can judge.
    #[error("{0}")]
    Invalid(#[from] Problems),
    /// The sheet or row does not exist; the text says which.
    #[error("{0}")]
    NotFound(String),
    /// The edit would leave workbook content pointing at the wrong cells,
    /// or cannot be made to this workbook (a sheet name it has).
    #[error("{0}")]
    Conflict(String),
    /// The caller may not make the change: it would take rows the caller
    /// does not reach (a scoped token's delete of rows a table beside
    /// holds, §11.7); the text says which.
    #[error("{0}")]
    Forbidden(String),
}

/// One page of a read: which rows, which columns, and how many rows
/// matched. The rows become JSON one at a time ([`Sheet::row_json`]), as
/// the answer is sent, so a page of 100,000 rows is never held as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct RowsPage {
    /// 0-based indexes of the page's rows, in sheet order.
    pub rows: Vec<usize>,
    /// The columns each row shows, in header order.
    pub columns: Vec<Column>,
    pub total: usize,
}

impl Workbook {
    /// The sheet named `name`: exact match first, else a unique match
    /// ignoring case (spreadsheet apps treat sheet names that way).
    pub fn sheet_index(&self, name: &str) -> Result<usize, Error> {
        if let Some(i) = self.sheets.iter().position(|s| s.name == name) {
            return Ok(i);
        }
        let matching = self.sheets.iter().enumerate();
        unique(
            matching
                .filter(|(_, s)| same_sheet(&s.name, name))
                .map(|(i, _)| i),
        )
        .ok_or_else(|| Error::NotFound(format!("the workbook has no sheet named {name:?}")))
    }

    /// The memory the workbook is estimated to hold, for the cache's bound
    /// (`--cache-bytes`): its `cells` slots (its [`Workbook::cell_slots`],
    /// which the caller counted: a pass over every row), the parts it
    /// carries, and the most its sheets' indexes can take.
    pub fn estimated_bytes(&self, cells: usize) -> usize {
        let indexes: usize = (self.sheets.iter())
            .map(|sheet| sheet.indexes.bytes(sheet.rows.len()))
            .sum();
        let marks: usize = (self.sheets.iter())
            .map(|sheet| sheet.layout.cell_marks())
            .sum();
        cells * BYTES_PER_CELL + marks * BYTES_PER_MARK + self.carried.part_bytes() + indexes
    }

    /// The cell slots the workbook takes in memory: each row up to its last
    /// used column.
    pub fn cell_slots(&self) -> usize {
        self.sheets
            .iter()
            .flat_map(|sheet| sheet.rows.iter().map(|row| row.len().max(1)))
            .sum()
    }

    /// Whether this workbook is `base` with rows added below each sheet's
    /// [extent](Sheet::extent), and no other change but autofilters grown
    /// down to take them in: what a batch of inserts does. The writer that saved
    /// `base` can then save this workbook by writing only the new rows.
    /// [`Workbook::appended`] tells the same from an [`Outline`] and the
    /// log of changes, without a copy of every cell.
    pub fn appends_to(&self, base: &Workbook) -> bool {
        let unchanged: Vec<RowsChanged> = (base.sheets.iter())
            .map(|sheet| RowsChanged {
                extent: sheet.extent(),
                ..RowsChanged::default()
            })
            .collect();
        self.changed_only_in(base, &unchanged)
            && (self.sheets.iter().zip(&base.sheets)).all(|(s, b)| s.extent() >= b.extent())
    }

    /// This workbook without its cells and their formats.
    pub fn outline(&self) -> Outline {
        Outline {
            bare: Workbook {
                sheets: self.sheets.iter().map(Sheet::bare).collect(),
                ..self.without_sheets()
            },
            extents: self.sheets.iter().map(Sheet::extent).collect(),
        }
    }

    /// What [`Workbook::appends_to`] tells, for the workbook `base`
    /// outlines, given `logs`: every log of what changed since the outline
    /// was taken (the edits', then the recalculation's), each with one
    /// entry per sheet. A cell changed above a sheet's old extent, or rows
    /// moved, is more than an append.
    pub fn appended(&self, base: &Outline, logs: &[&[Edited]]) -> bool {
        self.changed_in_place(base, logs).is_some_and(|sheets| {
            sheets
                .iter()
                .zip(&self.sheets)
                .all(|(changed, sheet)| changed.rows.is_empty() && sheet.extent() >= changed.extent)
        })
    }

    /// Which rows of each sheet changed since `base` was outlined, when
    /// nothing but cells changed (and autofilters and tables grew down):
    /// what an update or an append does. When rows moved (a delete, an
    /// insert between rows), every row from the first that moved down may
    /// be another ([`RowsChanged::moved_from`]), and what is written apart
    /// from the rows may differ too; the rows above it and the columns
    /// must be as they were. `None` when more changed. `logs` as for
    /// [`Workbook::appended`].
    pub fn changed_in_place(&self, base: &Outline, logs: &[&[Edited]]) -> Option<Vec<RowsChanged>> {
        let bare = &base.bare;
        if self.sheets.len() != bare.sheets.len() {
            return None;
        }
        let mut changed = Vec::with_capacity(self.sheets.len());
        for (index, sheet) in self.sheets.iter().enumerate() {
            let extent = base.extents[index];
            let mut rows = Vec::new();
            let mut moves = Vec::new();
            for edited in logs.iter().filter_map(|log| log.get(index)) {
                if edited.moved && edited.moves.is_empty() {
                    return None;
                }
                moves.extend(edited.moves.iter().cloned());
                rows.extend(edited.cells.iter().map(|&(row, _)| row));
            }
            let mut changes = RowsChanged {
                extent,
                moves,
                ..RowsChanged::default()
            };
            let was = &bare.sheets[index];
            let same = match changes.moved_from() {
                None => {
                    rows.retain(|&row| (row as usize) < extent);
                    sheet.same_apart_from_cells(was)
                }
                Some(from) => {
                    let moved_or_new = |row: u32| row >= from || row as usize >= extent;
                    changes.logged = rows.iter().copied().filter(|&r| moved_or_new(r)).collect();
                    changes.logged.sort_unstable();
                    changes.logged.dedup();
                    rows.retain(|&row| row < from && (row as usize) < extent);
                    sheet.name == was.name
                        && sheet.visibility == was.visibility
                        && sheet.layout.same_rows_above(&was.layout, from)
                }
            };
            if !same {
                return None;
            }
            rows.sort_unstable();
            rows.dedup();
            changes.rows = rows;
            changed.push(changes);
        }
        self.same_book(bare, &changed).then_some(changed)
    }

    /// Whether what is not in a sheet is as in `base`, for a batch that
    /// `changed` these rows: when rows moved, only what decides how cells
    /// are written ([`Workbook::writes_cells_as`]), for the rest is
    /// written again anyway.
    fn same_book(&self, base: &Workbook, changed: &[RowsChanged]) -> bool {
        match changed.iter().any(|c| c.moved_from().is_some()) {
            false => self.same_apart_from_sheets(base),
            true => self.writes_cells_as(base),
        }
    }

    /// Whether this workbook's cells are written as `base`'s would be, cell
    /// for cell: the same cell formats, default font, styles part and date
    /// system (names and what the package carries may differ).
    fn writes_cells_as(&self, base: &Workbook) -> bool {
        self.unkept == base.unkept
            && self.formats == base.formats
            && self.default_font == base.default_font
            && self.carried.styles == base.carried.styles
            && self.carried.date1904 == base.carried.date1904
    }

    /// Whether this workbook is `base` but for the rows `changed` names
    /// and those below each sheet's old extent: the whole comparison that
    /// [`Workbook::changed_in_place`] stands for, for debug builds' checks.
    pub fn changed_only_in(&self, base: &Workbook, changed: &[RowsChanged]) -> bool {
        self.sheets.len() == base.sheets.len()
            && self.same_book(base, changed)
            && self
                .sheets
                .iter()
                .zip(&base.sheets)
                .zip(changed)
                .all(|((sheet, was), changed)| {
                    let layout_same = match changed.moved_from() {
                        None => sheet.same_apart_from_cells(was),
                        Some(from) => sheet.layout.same_rows_above(&was.layout, from),
                    };
                    let end = changed
                        .moved_from()
                        .map_or(changed.extent, |from| from as usize);
                    layout_same
                        && was.extent() == changed.extent
                        && (0..end.min(changed.extent))
                            .filter(|row| changed.rows.binary_search(&(*row as u32)).is_err())
                            .all(|row| {
                                sheet.row(row) == was.row(row)
                                    && sheet.layout.formats.get(row) == was.layout.formats.get(row)
                            })
                })
    }

    /// Whether everything but the sheets is as in `base`.
    fn same_apart_from_sheets(&self, base: &Workbook) -> bool {
        // Every field named, so that a new one is not forgotten here.
        let Workbook {
            sheets: _,
            unkept,
            formats,
            default_font,
            names,
            active_sheet,
            properties,
            carried,
            // A hint to the edits of a batch, not what the workbook holds.
            row_formulas_absent: _,
        } = self;
        *unkept == base.unkept
            && *formats == base.formats
            && *default_font == base.default_font
            && *names == base.names
            && *active_sheet == base.active_sheet
            && *properties == base.properties
            && same(carried, &base.carried)
    }

    /// A copy of everything but the sheets. (The literal names every
    /// field, so that a new one is not forgotten here.)
    fn without_sheets(&self) -> Workbook {
        Workbook {
            sheets: Vec::new(),
            unkept: self.unkept.clone(),
            formats: self.formats.clone(),
            default_font: self.default_font.clone(),
            names: self.names.clone(),
            active_sheet: self.active_sheet,
            properties: self.properties.clone(),
            carried: Arc::clone(&self.carried),
            row_formulas_absent: self.row_formulas_absent,
        }
    }

    /// How many sheets the workbook has, chart sheets included.
    pub fn sheet_count(&self) -> usize {
        self.sheets.len() + self.carried.other_sheets.len()
    }

    pub fn sheet(&self, name: &str) -> Result<&Sheet, Error> {
        Ok(&self.sheets[self.sheet_index(name)?])
    }

    /// Adds `new` as the last sheet, holding its header row (§10.3).
    /// A conflict when a sheet of the workbook, chart sheets included,
    /// has its name ignoring case, as spreadsheet apps compare names.
    pub fn add_sheet(&mut self, new: &NewSheet) -> Result<(), Error> {
        let lower = new.name.to_lowercase();
        let names = self.sheets.iter().map(|s| &s.name);
        let other_names = self.carried.other_sheets.iter().map(|s| &s.name);
        if let Some(taken) = names.chain(other_names).find(|n| n.to_lowercase() == lower) {
            return Err(Error::Conflict(format!(
                "the workbook already has a sheet named {taken:?} (names are compared ignoring case)"
            )));
        }
        if self.sheet_count() >= MAX_SHEETS {
            return Err(Error::Conflict(format!(
                "the workbook has {MAX_SHEETS} sheets or more, the most sheetd adds a sheet to"
            )));
        }
        let mut sheet = new.sheet();
        sheet.edited.cells = (0..new.columns.len() as u32).map(|c| (0, c)).collect();
        self.sheets.push(sheet);
        Ok(())
    }

    /// Deletes rows, moving the rows below up, as a spreadsheet app does
    /// (§11.2): see [`Workbook::move_rows`].
    pub fn delete_rows(&mut self, source: &Source, request: &DeleteRows) -> Result<usize, Error> {
        self.delete_rows_if(source, request, |_, _| Ok(()))
    }

    /// [`Workbook::delete_rows`], once `may` (given the workbook and the
    /// sheet rows selected, 0-based) lets the delete take those rows: a
    /// caller's reach is judged on the rows the request selects, selected
    /// once.
    pub fn delete_rows_if(
        &mut self,
        source: &Source,
        request: &DeleteRows,
        may: impl FnOnce(&Workbook, &[usize]) -> Result<(), Error>,
    ) -> Result<usize, Error> {
        let rows = self.rows_to_delete(source, request)?;
        may(self, &rows)?;
        self.delete_selected(source.sheet, &rows)
    }

    /// The sheet rows (0-based, in order) `request` deletes through
    /// `source`.
    fn rows_to_delete(&self, source: &Source, request: &DeleteRows) -> Result<Vec<usize>, Error> {
        let sheet = &self.sheets[source.sheet];
        let header = Header::of(sheet, &source.region);
        sheet.select(header.as_ref(), &request.selector, Problems::new())
    }

    /// Deletes the sheet rows `rows` (0-based, in order) of sheet `sheet`,
    /// as [`Workbook::rows_to_delete`] found them; returns how many.
    fn delete_selected(&mut self, sheet: usize, rows: &[usize]) -> Result<usize, Error> {
        if rows.is_empty() {
            return Ok(0);
        }
        let deleted = rows.iter().map(|&row| row as u32 + 1).collect();
        self.move_rows(sheet, RowMove::Deleted(deleted))?;
        Ok(rows.len())
    }

    /// The tables of `source`'s sheet, but the one it names, that hold one
    /// of the sheet rows `rows` (0-based): a delete takes whole sheet rows
    /// (§11.2), and those tables' rows with them.
    pub fn tables_holding(&self, source: &Source, rows: &[usize]) -> Vec<usize> {
        let tables = &self.sheets[source.sheet].layout.tables;
        let holds = |table: &Table| {
            let span = table.range.first_row as usize..=table.range.last_row as usize;
            rows.iter().any(|row| span.contains(row))
        };
        (0..tables.len())
            .filter(|&index| Some(index) != source.region.table && holds(&tables[index]))
            .collect()
    }

    /// Upsert (§10.2 `on_conflict`): each row whose value in `column`
    /// equals a data row's value sets the keys it gives in that row; the
    /// others are inserted, as [`Workbook::insert`] inserts them (into a
    /// table, growing it). Rows of the request count in order: a later row
    /// with an earlier one's value adds to it. A value that more than one
    /// data row holds is a conflict; all or nothing. Returns how many rows
    /// were inserted and updated.
    pub fn upsert(
        &mut self,
        source: &Source,
        request: InsertRows,
        column: &str,
    ) -> Result<(usize, usize), Error> {
        let sheet = &self.sheets[source.sheet];
        let (new, updates) = sheet.upsert_plan(&source.region, request, column)?;
        // Inserted first: it is the step that can still fail, before any
        // row is set. Rows inserted go below the rows updated.
        let inserted = if new.is_empty() {
            0
        } else {
            self.insert(source, InsertRows { rows: new }, None)?
        };
        let sheet = &mut self.sheets[source.sheet];
        let Some(header) = Header::of(sheet, &source.region) else {
            return Ok((inserted, 0));
        };
        let mut updated = std::collections::BTreeSet::new();
        for (index, cells) in updates {
            updated.insert(index);
            for (name, cell) in cells {
                if let Ok(column) = header.resolve(&name) {
                    sheet.set(index, column, cell);
                }
            }
        }
        Ok((inserted, updated.len()))
    }

    /// Inserts rows (§4.1, §11.1, §11.2): before row `before` when given;
    /// else into the table the rows are, growing it; else below the
    /// sheet's last row that holds anything.
    pub fn insert(
        &mut self,
        source: &Source,
        request: InsertRows,
        before: Option<u64>,
    ) -> Result<usize, Error> {
        match (before, source.region.table) {
            (Some(before), _) => self.insert_before(source, request, before),
            (None, Some(table)) => self.insert_into_table(source, table, request),
            (None, None) => self.sheets[source.sheet].insert(&source.region, request),
        }
    }

    /// Puts rows into a table directly below its last data row that holds
    /// anything, growing the table over them (its autofilter, calculated
    /// columns and totals row with it). When its totals row or other cells
    /// lie below, sheet rows are inserted there first and everything below
    /// moves down (§11.2); refused (409) when those rows would cut through
    /// another table or a merged range beside it.
    fn insert_into_table(
        &mut self,
        source: &Source,
        table: usize,
        request: InsertRows,
    ) -> Result<usize, Error> {
        let sheet = &self.sheets[source.sheet];
        let Some(header) = Header::of(sheet, &source.region) else {
            return Err(Error::NotFound("the table has no columns".into()));
        };
        let problems = insert_problems(&header, &request);
        if !problems.is_empty() {
            return Err(problems.into());
        }
        let count = request.rows.len();
        if count == 0 {
            return Ok(0);
        }
        let range = sheet.layout.tables[table].range;
        let columns = usize::from(range.first_column)..=usize::from(range.last_column);
        let holds = |row: usize| {
            let cells = sheet.row(row);
            columns
                .clone()
                .any(|c| cells.get(c).is_some_and(|cell| !cell.is_empty_value()))
        };
        let last_data = header.last_row.unwrap_or(header.row);
        let first_data = header.first_data_row();
        let start = (first_data..=last_data)
            .rev()
            .find(|&row| holds(row))
            .map_or(first_data, |row| row + 1);
        // Rows past the table's data range that the new rows take.
        let extra = (start + count).saturating_sub(last_data + 1);
        if extra > 0 {
            let below = last_data + 1;
            let free = !sheet.layout.tables[table].totals_row
                && (below..below + extra).all(|row| !holds(row))
                && !sheet.layout.tables.iter().enumerate().any(|(i, t)| {
                    i != table
                        && (t.range.first_row as usize) < below + extra
                        && t.range.last_row as usize >= below
                        && t.range.first_column <= range.last_column
                        && t.range.last_column >= range.first_column
                });
            if start + count > MAX_ROWS {
                return Err(Problems::one(
                    "data",
                    format!("{count} rows would pass the sheet's last row ({MAX_ROWS})"),
                )
                .into());
            }
            if free {
                let layout = &mut self.sheets[source.sheet].layout;
                layout.tables[table].range.last_row += extra as u32;
                layout.formats_copied_down(below, extra);
            } else {
                let before = below as u32 + 1;
                if let Some(reason) = sheet.cut_beside(table, before) {
                    return Err(Error::Conflict(reason));
                }
                self.move_rows(
                    source.sheet,
                    RowMove::Inserted {
                        before,
                        count: extra as u32,
                    },
                )?;
                let sheet = &mut self.sheets[source.sheet];
                match sheet.layout.tables[table].totals_row {
                    true => sheet.totals_grown(table, last_data, extra),
                    false => sheet.layout.tables[table].range.last_row += extra as u32,
                }
            }
        }
        let sheet = &mut self.sheets[source.sheet];
        let header = Header::of(sheet, &source.region).unwrap_or(header);
        let below = (start + count <= header.last_row.unwrap_or(0)).then_some(start + count);
        sheet.put_rows(&header, start, below, request);
        // Structured references now cover more rows (when rows moved to
        // make room, the move said so).
        sheet.edited.grown = true;
        Ok(count)
    }

    /// Inserts the rows of `request` as new sheet rows before row `before`
    /// (1-based: a data row, or the row after the last one), moving that
    /// row and the rows below down (§11.2). The new rows take the formats
    /// of the row above, and a formula column's formulas, as appended rows
    /// do.
    pub fn insert_before(
        &mut self,
        source: &Source,
        request: InsertRows,
        before: u64,
    ) -> Result<usize, Error> {
        let index = source.sheet;
        let sheet = &self.sheets[index];
        let Some(header) = Header::of(sheet, &source.region) else {
            return Err(Problems::one(
                "before",
                "the sheet has no header row yet: insert without before",
            )
            .into());
        };
        let first = header.first_data_row() as u64 + 1;
        let after_last = sheet.data_rows(&header).end as u64 + 1;
        let mut problems = insert_problems(&header, &request);
        if !(first..=after_last).contains(&before) {
            problems.push(
                "before",
                format!(
                    "must be a data row ({first}–{}) or the row after the last one ({after_last})",
                    after_last - 1
                ),
            );
        }
        let count = request.rows.len();
        if after_last as usize - 1 + count > MAX_ROWS {
            problems.push(
                "data",
                format!("{count} rows would push the sheet past its last row ({MAX_ROWS})"),
            );
        }
        if !problems.is_empty() {
            return Err(problems.into());
        }
        if count == 0 {
            return Ok(0);
        }
        let moved = RowMove::Inserted {
            before: before as u32,
            count: count as u32,
        };
        self.move_rows(index, moved)?;
        let sheet = &mut self.sheets[index];
        // Rows put right below a table's last data row join the table, as
        // an insert into the table does (with a totals row they are inside
        // it already).
        if let Some(table) = source.region.table.map(|t| &mut sheet.layout.tables[t])
            && !table.totals_row
            && before == after_last
        {
            table.range.last_row += count as u32;
        }
        let start = (before - 1) as usize;
        let below = (before < after_last).then_some(start + count);
        sheet.put_rows(&header, start, below, request);
        Ok(count)
    }

    /// Moves rows of sheet `index` as a spreadsheet app does: every
    /// formula, defined name and hyperlink that refers to the sheet's rows
    /// is adjusted (references move with their rows, ranges shrink or grow,
    /// a reference to a deleted cell becomes `#REF!`), and merged ranges,
    /// tables and the rest of the layout move with the rows; what the file
    /// carries beyond the model moves when it is written.
    ///
    /// Refused, naming the cause, where a spreadsheet app refuses too
    /// (§11.2): the move would cut through an array formula or a pivot
    /// table, or a 3D reference spans the sheet; and where it would delete
    /// a table or a pivot table whole, which sheetd does not remove.
    fn move_rows(&mut self, index: usize, rows: RowMove) -> Result<(), Error> {
        let sheet = &self.sheets[index];
        if let Some(reason) = sheet.cut_by(&rows).or_else(|| sheet.removed_by(&rows)) {
            return Err(Error::Conflict(reason));
        }
        if let RowMove::Inserted { count, .. } = rows
            && self.sheets[index].extent() + count as usize > MAX_ROWS
        {
            return Err(Error::Conflict(format!(
                "inserting {count} rows would push cells of sheet {:?} past its last row ({MAX_ROWS}), which a spreadsheet app refuses too",
                self.sheets[index].name
            )));
        }
        let adjusted = self.references_adjusted(index, &rows)?;
        adjusted.apply(self);
        self.sheets[index].move_rows(rows);
        Ok(())
    }

    /// Every sheet's name in the workbook's order, chart sheets included.
    pub fn sheet_order(&self) -> Vec<&str> {
        let mut worksheets = self.sheets.iter().map(|s| s.name.as_str());
        let mut others = self.carried.other_sheets.iter().peekable();
        (0..self.sheet_count())
            .filter_map(
                |position| match others.next_if(|other| other.position == position) {
                    Some(other) => Some(other.name.as_str()),
                    None => worksheets.next(),
                },
            )
            .collect()
    }

    /// The new text of every formula, defined name and hyperlink place
    /// that moving `rows` of sheet `index` changes; a conflict names the
    /// first that cannot be adjusted.
    fn references_adjusted(&self, index: usize, rows: &RowMove) -> Result<Adjusted, Error> {
        let target = &self.sheets[index].name;
        let order = self.sheet_order();
        let moved = SheetRows {
            sheet: target,
            order: &order,
            rows,
        };
        let unadjustable = |what: String, why: Unadjustable| {
            Error::Conflict(format!(
                "{what} cannot be adjusted for rows moved on sheet {target:?}: {why}"
            ))
        };
        let deleted = |s: usize, r: usize| match rows {
            RowMove::Deleted(deleted) => {
                s == index && deleted.binary_search(&(r as u32 + 1)).is_ok()
            }
            RowMove::Inserted { .. } => false,
        };
        let mut adjusted = Adjusted::default();
        debug_assert!(
            !self.row_formulas_absent || !self.formulas().naming_rows,
            "formulas naming rows not absent"
        );
        for (s, sheet) in self.sheets.iter().enumerate() {
            let rows = match self.row_formulas_absent {
                true => &[][..],
                false => &sheet.rows[..],
            };
            for (r, row) in rows.iter().enumerate() {
                if deleted(s, r) {
                    continue;
                }
                for (c, cell) in row.iter().enumerate() {
                    let Cell::Formula(formula) = cell else {
                        continue;
                    };
                    if !names_rows(&formula.expr) {
                        continue;
                    }
                    let text = rows_moved(&formula.expr, &sheet.name, &moved).map_err(|why| {
                        let place = format!("{}!{}", sheet.name, cell_name(r as u32, c as u32));
                        unadjustable(format!("the formula in {place}"), why)
                    })?;
                    if text != formula.expr {
                        adjusted.formulas.push(((s, r, c), text));
                    }
                }
            }
            for (l, link) in sheet.layout.links.iter().enumerate() {
                if let LinkTarget::Location(place) = &link.target {
                    let text = rows_moved(place, &sheet.name, &moved).map_err(|why| {
                        unadjustable(format!("a hyperlink on sheet {:?}", sheet.name), why)
                    })?;
                    if text != *place {
                        adjusted.links.push(((s, l), text));
                    }
                }
            }
        }
        for (n, name) in self.names.iter().enumerate() {
            let text = name_rows_moved(&name.refers_to, &moved)
                .map_err(|why| unadjustable(format!("the defined name {:?}", name.name), why))?;
            if text != name.refers_to {
                adjusted.names.push((n, text));
            }
        }
        Ok(adjusted)
    }
}

/// The new texts a row move gives formulas, hyperlink places and names.
#[derive(Default)]
struct Adjusted {
    /// By sheet, 0-based row and column.
    formulas: Vec<((usize, usize, usize), String)>,
    /// By sheet and the link's index in its layout.
    links: Vec<((usize, usize), String)>,
    /// By index in the workbook's names.
    names: Vec<(usize, String)>,
}

impl Adjusted {
    fn apply(self, workbook: &mut Workbook) {
        for ((s, r, c), text) in self.formulas {
            let sheet = &mut workbook.sheets[s];
            if let Cell::Formula(formula) = &mut sheet.rows[r][c] {
                formula.expr = text;
                sheet.edited.cells.push((r as u32, c as u32));
            }
        }
        for ((s, l), text) in self.links {
            workbook.sheets[s].layout.links[l].target = LinkTarget::Location(text);
        }
        for (n, text) in self.names {
            workbook.names[n].refers_to = text;
        }
    }
}

/// Whether two shared values are equal, without comparing the contents of
/// one shared twice (carried parts may be megabytes).
fn same<T: PartialEq>(a: &Arc<T>, b: &Arc<T>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// The fewest rows a thread of a filter's scan takes: below this, a
/// thread costs more than it saves.
const MIN_SCAN_ROWS: usize = 50_000;

/// The estimated memory of one cell slot: the cell itself (32 bytes), its
/// format id, an average share of text on the heap and of each row's
/// vectors. Measured with `cargo bench --bench memory`: loading a 100k-row
/// workbook grows the process by 74–94 bytes per cell slot (by its
/// producer), a 1M-row one by 74 (docs/PERFORMANCE.md).
pub const BYTES_PER_CELL: usize = 80;

/// The estimated memory of what the layout notes of one cell
/// ([`Layout::cell_marks`]): an entry of a B-tree map by cell (a key of 8
/// bytes and a value of 32, in nodes about two thirds full) and the text
/// some hold. A file can have one for each of its cells (a boolean in
/// every cell, all formatted as dates), so they count against the cache.
const BYTES_PER_MARK: usize = 96;

/// The rows of one sheet a batch changed in place (see
/// [`Workbook::changed_in_place`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowsChanged {
    /// The sheet's [extent](Sheet::extent) before: rows from here on are
    /// new, or were.
    pub extent: usize,
    /// The rows above `extent` with a changed cell, 0-based, in order
    /// (above [`RowsChanged::moved_from`] when rows moved).
    pub rows: Vec<u32>,
    /// The moves, in the order they were made.
    pub moves: Vec<RowMove>,
    /// When rows moved, the rows at or below `moved_from` or `extent` with
    /// a changed cell, 0-based, in order, each numbered as the sheet was
    /// when it changed: before the moves, between two of them, or after
    /// them all.
    pub logged: Vec<u32>,
}

impl RowsChanged {
    /// The first row (0-based) rows moved from, when rows moved: from it
    /// down, every row may be another.
    pub fn moved_from(&self) -> Option<u32> {
        (self.moves.iter())
            .filter_map(|moved| match moved {
                RowMove::Deleted(rows) => rows.first().copied(),
                RowMove::Inserted { before, .. } => Some(*before),
            })
            .map(|first| first.saturating_sub(1))
            .min()
    }
}

/// A workbook without its cells and their formats (see
/// [`Workbook::outline`]): with the log of what changed since, it tells
/// whether a batch only appended rows at the cost of the layout, not of
/// every cell.
#[derive(Debug, Clone)]
pub struct Outline {
    /// The workbook, each sheet's rows and cell formats left out.
    bare: Workbook,
    /// Each sheet's [extent](Sheet::extent).
    extents: Vec<usize>,
}

impl Sheet {
    pub fn new(name: impl Into<String>, rows: Vec<Vec<Cell>>) -> Sheet {
        Sheet {
            name: name.into(),
            visibility: Visibility::Visible,
            rows,
            layout: Layout::default(),
            carried: Default::default(),
            edited: Edited::default(),
            indexes: Default::default(),
        }
    }

    /// The cells of a row; none past the last.
    pub fn row(&self, row: usize) -> &[Cell] {
        self.rows.get(row).map_or(&[], Vec::as_slice)
    }

    /// The rows a rewrite writes: those with cells, and those below them
    /// with cell formats or cells of the default format under a formatted
    /// row or column.
    pub fn extent(&self) -> usize {
        let unformatted =
            (self.layout.unformatted_cells.last()).map_or(0, |&(row, _)| row as usize + 1);
        self.rows
            .len()
            .max(self.layout.formats.len())
            .max(unformatted)
    }

    /// Whether all but the cells and their formats is as in `base`, apart
    /// from an autofilter grown down.
    fn same_apart_from_cells(&self, base: &Sheet) -> bool {
        // Every field named, so that a new one is not forgotten here.
        let Sheet {
            name,
            visibility,
            rows: _,
            layout,
            carried,
            edited: _,
            indexes: _,
        } = self;
        *name == base.name
            && *visibility == base.visibility
            && same(carried, &base.carried)
            && layout.same_apart_from_rows(&base.layout)
    }

    /// This sheet without its cells and their formats.
    fn bare(&self) -> Sheet {
        Sheet {
            name: self.name.clone(),
            visibility: self.visibility,
            rows: Vec::new(),
            layout: self.layout.without_formats(),
            carried: Arc::clone(&self.carried),
            edited: Edited::default(),
            indexes: Default::default(),
        }
    }

    fn row_is_blank(row: &[Cell]) -> bool {
        row.iter().all(Cell::is_blank)
    }

    /// 0-based index of the first row that holds anything.
    pub fn first_non_blank_row(&self) -> Option<usize> {
        self.rows.iter().position(|row| !Self::row_is_blank(row))
    }

    /// 0-based index of the last row that holds anything.
    pub fn last_non_blank_row(&self) -> Option<usize> {
        self.rows.iter().rposition(|row| !Self::row_is_blank(row))
    }

    /// Every cell, row by row.
    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.rows.iter().flatten()
    }

    fn set(&mut self, row: usize, column: usize, cell: Cell) {
        if !matches!(cell, Cell::Formula(_)) {
            self.array_replaced(row, column);
        }
        self.edited.cells.push((row as u32, column as u32));
        if self.rows.len() <= row {
            self.rows.resize_with(row + 1, Vec::new);
        }
        let cells = &mut self.rows[row];
        if cells.len() <= column {
            if cell.is_blank() {
                return;
            }
            cells.resize_with(column + 1, Cell::default);
        }
        cells[column] = cell;
    }

    /// Takes away the array formula whose first cell is at `row`, `column`,
    /// which a value is replacing, with the results it filled in the rest
    /// of its range: as in a spreadsheet app, where a value typed over a
    /// spilling formula empties its spill, no result stays behind as a
    /// value nobody typed.
    fn array_replaced(&mut self, row: usize, column: usize) {
        let first = |range: &Range| (range.first_row as usize, range.first_column as usize);
        let arrays = &mut self.layout.array_formulas;
        let Some(index) = arrays.iter().position(|a| first(&a.range) == (row, column)) else {
            return;
        };
        let range = arrays.remove(index).range;
        let last_column = usize::from(range.last_column);
        for result_row in row..=range.last_row as usize {
            let Some(cells) = self.rows.get(result_row) else {
                break;
            };
            let filled: Vec<usize> = (column..=last_column.min(cells.len().saturating_sub(1)))
                .filter(|&c| (result_row, c) != (row, column))
                .filter(|&c| cells.get(c).is_some_and(|cell| *cell != Cell::Empty))
                .collect();
            for result_column in filled {
                self.set(result_row, result_column, Cell::Empty);
            }
        }
    }

    /// Appends rows below the last row that holds anything (contract §4.1).
    /// On a sheet with no cells, the keys become the header row first.
    pub fn insert(&mut self, region: &Region, request: InsertRows) -> Result<usize, Error> {
        let existing = Header::of(self, region);
        let header = existing
            .clone()
            .unwrap_or_else(|| Header::from_names(first_seen_keys(&request)));
        let mut problems = existing
            .as_ref()
            .map(|header| insert_problems(header, &request))
            .unwrap_or_default();
        let count = request.rows.len();
        if existing.is_none() && header.all().len() > MAX_COLUMNS {
            problems.push(
                "data",
                format!(
                    "names {} columns; a sheet has at most {MAX_COLUMNS}",
                    header.all().len()
                ),
            );
        }
        let start = match self.last_non_blank_row() {
            Some(last) => last + 1,
            None => 1,
        };
        if start + count > MAX_ROWS {
            problems.push(
                "data",
                format!("{count} rows would pass the sheet's last row ({MAX_ROWS})"),
            );
        }
        if !problems.is_empty() {
            return Err(problems.into());
        }
        if existing.is_none() && count > 0 {
            for column in header.all() {
                self.set(0, column.index, Cell::Text(column.name.clone()));
            }
        }
        self.put_rows(&header, start, None, request);
        if self.layout.rows_appended(start, count) {
            // Structured references now cover more rows.
            self.edited.grown = true;
        }
        Ok(count)
    }

    /// Sets the rows of a checked insert from row `start` (0-based) on,
    /// with the formulas of the row above filled down into the columns a
    /// row does not give. `below`: the row after the new ones, when they
    /// went in between rows.
    fn put_rows(
        &mut self,
        header: &Header,
        start: usize,
        below: Option<usize>,
        request: InsertRows,
    ) {
        let mut fill = match start.checked_sub(1) {
            Some(above) => self.formulas_filled_down(header, above, below),
            None => Vec::new(),
        };
        // A table's calculated columns take its formula in every new row,
        // whatever the row above holds.
        let calculated = self.calculated_columns(header, start);
        fill.retain(|(column, _)| calculated.iter().all(|(c, _)| c != column));
        fill.extend(calculated);
        for (offset, row) in request.rows.into_iter().enumerate() {
            let row_index = start + offset;
            let cells: Vec<(usize, Cell)> = row
                .cells
                .into_iter()
                .filter_map(|(name, cell)| Some((header.resolve(&name).ok()?, cell)))
                .collect();
            for &(column, ref expr) in &fill {
                if cells.iter().all(|(given, _)| *given != column) {
                    let expr = shifted(expr, offset as i64 + 1, 0);
                    self.set(
                        row_index,
                        column,
                        Cell::Formula(Box::new(Formula::new(expr, Cell::Empty))),
                    );
                }
            }
            for (column, cell) in cells {
                self.set(row_index, column, cell);
            }
        }
    }

    /// The calculated columns of the table `header` addresses, each with
    /// its formula as the row above row `start` (0-based) would hold it:
    /// the table keeps it as for its first data row.
    fn calculated_columns(&self, header: &Header, start: usize) -> Vec<(usize, String)> {
        let Some(table) = header.table.and_then(|t| self.layout.tables.get(t)) else {
            return Vec::new();
        };
        let first_column = usize::from(table.range.first_column);
        let down = start as i64 - 1 - header.first_data_row() as i64;
        (table.columns.iter().enumerate())
            .filter_map(|(i, column)| {
                let formula = column.calculated.as_deref()?;
                Some((first_column + i, shifted(formula, down, 0)))
            })
            .collect()
    }

    /// The formulas that rows inserted below row `last` (a data row) take,
    /// by column: a formula of `last` that the data row above it holds too,
    /// moved down one row (the same relative formula), or the row `below`
    /// the new ones, moved down as far; or that is in a table's column (a
    /// calculated column). The engine computes their results when the
    /// batch is written.
    fn formulas_filled_down(
        &self,
        header: &Header,
        last: usize,
        below: Option<usize>,
    ) -> Vec<(usize, String)> {
        if last < header.first_data_row() {
            return Vec::new();
        }
        let formula = |row: usize, column: usize| match self.row(row).get(column) {
            Some(Cell::Formula(f)) => Some(f.expr.as_str()),
            _ => None,
        };
        let in_table = |column: usize| {
            self.layout.tables.iter().any(|table| {
                let range = &table.range;
                (range.first_row as usize) < last
                    && last + usize::from(table.totals_row) <= range.last_row as usize
                    && (usize::from(range.first_column)..=usize::from(range.last_column))
                        .contains(&column)
            })
        };
        self.row(last)
            .iter()
            .enumerate()
            .filter_map(|(column, _)| {
                let expr = formula(last, column)?;
                let repeated = last > header.first_data_row()
                    && formula(last - 1, column).is_some_and(|above| shifted(above, 1, 0) == expr);
                let continued = below.is_some_and(|below| {
                    let by = (below - last) as i64;
                    formula(below, column).is_some_and(|f| shifted(expr, by, 0) == f)
                });
                (repeated || continued || in_table(column)).then(|| (column, expr.to_owned()))
            })
            .collect()
    }

    /// Sets the given cells of every selected row (contract §4.2).
    pub fn update(&mut self, region: &Region, request: UpdateRows) -> Result<usize, Error> {
        if request.selector == Selector::Rows {
            return self.update_rows(region, request.rows);
        }
        let header = Header::of(self, region);
        let problems = data_problems(header.as_ref(), &request.data, || "data".to_owned());
        let cells: Vec<_> = request
            .data
            .into_iter()
            .filter_map(|(name, cell)| Some((header.as_ref()?.resolve(&name).ok()?, cell)))
            .collect();
        let rows = self.select(header.as_ref(), &request.selector, problems)?;
        for &row in &rows {
            for (column, cell) in &cells {
                self.set(row, *column, cell.clone());
            }
        }
        Ok(rows.len())
    }

    /// An upsert's rows to insert and rows to set (index and cells), as
    /// [`Workbook::upsert`] makes them; nothing changes here.
    #[allow(clippy::type_complexity)]
    fn upsert_plan(
        &self,
        region: &Region,
        request: InsertRows,
        column: &str,
    ) -> Result<(Vec<NewRow>, Vec<(usize, Vec<(String, Cell)>)>), Error> {
        let Some(header) = Header::of(self, region) else {
            // A blank sheet: nothing to update, the rows make the header.
            let new = merged_by_key(request.rows, column, &HashMap::new(), &mut Vec::new())?;
            return Ok((new, Vec::new()));
        };
        let mut problems = insert_problems(&header, &request);
        let key_column = header
            .resolve_explained(column)
            .map_err(|rule| problems.push("on_conflict", rule))
            .ok();
        let Some(key_column) = key_column.filter(|_| problems.is_empty()) else {
            return Err(problems.into());
        };
        let mut existing: HashMap<String, Vec<usize>> = HashMap::new();
        for index in self.data_rows(&header) {
            if let Some(key) = match_key(self.cell_value(index, key_column)) {
                existing.entry(key).or_default().push(index);
            }
        }
        let mut updates = Vec::new();
        let new = merged_by_key(request.rows, column, &existing, &mut updates)?;
        Ok((new, updates))
    }

    /// Sets each row's own values (§10.2 `type: rows`), all or nothing: a
    /// column the sheet lacks or a row at or above the header is a 400, a
    /// row below the last data row a 404, and then nothing changes.
    fn update_rows(&mut self, region: &Region, rows: Vec<RowValues>) -> Result<usize, Error> {
        let header = Header::of(self, region);
        let problems = rows_problems(header.as_ref(), &rows);
        if !problems.is_empty() {
            return Err(problems.into());
        }
        let end = header
            .as_ref()
            .map_or(0, |header| self.data_rows(header).end);
        let missing = rows
            .iter()
            .find(|row| row_index(row) >= end)
            .map(|row| row.row);
        if let Some(number) = missing {
            return Err(Error::NotFound(format!(
                "row {number} is below the last data row of sheet {:?}",
                self.name
            )));
        }
        let Some(header) = header else {
            return Ok(0);
        };
        let count = rows.len();
        for row in rows {
            let index = row_index(&row);
            for (name, cell) in row.cells {
                if let Ok(column) = header.resolve(&name) {
                    self.set(index, column, cell);
                }
            }
        }
        Ok(count)
    }

    /// Makes timestamps of the dates whose cell format is the contract's
    /// date-time format, the one a date-time sent through the API is stored
    /// with, so that it reads back with its time also at midnight (§9).
    /// Other formats follow §2: a date at midnight reads as a date. For the
    /// reader, once the sheet's layout is known.
    pub fn show_times(&mut self, formats: &[CellFormat]) {
        let exact: Vec<bool> = formats.iter().map(CellFormat::is_date_time_code).collect();
        let is_date_time = |id: u32| exact.get(id as usize).copied().unwrap_or(false);
        for (r, row) in self.rows.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                let value = match cell {
                    Cell::Formula(formula) => &mut formula.cached,
                    other => other,
                };
                // Every date that is not a time of day alone: the writer
                // takes any other date in this format for one the API wrote.
                if let Cell::DateTime(serial) = *value
                    && date_kind(serial) != DateKind::TimeOfDay
                    && is_date_time(self.layout.format(r, c))
                {
                    *value = Cell::Timestamp(serial);
                }
            }
        }
    }

    /// Notes the cells whose value their number format does not fit
    /// ([`Layout::misfits`]), so that the writer keeps their format. For
    /// the reader, once the sheet's layout is known and after
    /// [`Sheet::show_times`].
    pub fn keep_misfits(&mut self, formats: &[CellFormat]) {
        let shows: Vec<_> = formats.iter().map(CellFormat::date_parts).collect();
        if !shows.iter().any(|shows| shows.date || shows.time) {
            return;
        }
        for (r, row) in self.rows.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                let id = self.layout.format(r, c);
                let Some(&shows) = shows.get(id as usize) else {
                    continue;
                };
                if misfit_code(cell, shows).is_some() {
                    self.layout
                        .misfits
                        .insert((r as u32, c as u16), cell.clone());
                }
            }
        }
    }

    /// The columns of an insert that the sheet does not have. A blank sheet
    /// has every column: the insert's keys become its header.
    pub fn insert_problems(&self, region: &Region, request: &InsertRows) -> Problems {
        Header::of(self, region)
            .map(|header| insert_problems(&header, request))
            .unwrap_or_default()
    }

    /// The columns of an update, and of its filters, that the sheet lacks,
    /// and the rows of a `type: rows` update at or above its header.
    pub fn update_problems(&self, region: &Region, request: &UpdateRows) -> Problems {
        let header = Header::of(self, region);
        let mut problems = data_problems(header.as_ref(), &request.data, || "data".to_owned());
        problems.extend(rows_problems(header.as_ref(), &request.rows));
        problems.extend(filter_problems(header.as_ref(), &request.selector));
        problems
    }

    /// The columns of a delete's filters that the sheet lacks.
    pub fn delete_problems(&self, region: &Region, request: &DeleteRows) -> Problems {
        filter_problems(Header::of(self, region).as_ref(), &request.selector)
    }

    /// The columns of a read's filters, order and columns that the sheet
    /// lacks.
    pub fn read_problems(&self, region: &Region, query: &ReadQuery) -> Problems {
        let header = Header::of(self, region);
        let mut problems = bind_problems(header.as_ref(), &query.filters);
        problems.extend(read_column_problems(header.as_ref(), query));
        problems
    }

    /// The rows matching the query, in its order, and the columns to show
    /// (contract §4.3, §10.1).
    pub fn read(&self, region: &Region, query: &ReadQuery) -> Result<RowsPage, Error> {
        let header = Header::of(self, region);
        let mut problems = Problems::new();
        let filters: Vec<_> = query
            .filters
            .iter()
            .filter_map(|f| {
                f.bind(header.as_ref())
                    .map_err(|rule| problems.push(f.field.clone(), rule))
                    .ok()
            })
            .collect();
        problems.extend(read_column_problems(header.as_ref(), query));
        if !problems.is_empty() {
            return Err(problems.into());
        }
        let Some(header) = header else {
            return Ok(RowsPage {
                rows: Vec::new(),
                columns: Vec::new(),
                total: 0,
            });
        };
        // Every name resolves: `read_column_problems` found no problem.
        let by_name = |name: &str| {
            let index = header.resolve(name).ok()?;
            Some(Column {
                name: name.to_owned(),
                index,
            })
        };
        let mut rows = self.matching(self.data_rows(&header), &filters);
        let total = rows.len();
        let keys: Vec<(usize, bool)> = query
            .order
            .iter()
            .filter_map(|o| Some((header.resolve(&o.column).ok()?, o.descending)))
            .collect();
        if !keys.is_empty() {
            // A stable sort: ties keep sheet order.
            rows.sort_by(|&a, &b| {
                keys.iter()
                    .map(|&(column, descending)| {
                        sort_order(
                            self.cell_value(a, column),
                            self.cell_value(b, column),
                            descending,
                        )
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            });
        }
        let rows = rows
            .into_iter()
            .skip(query.offset)
            .take(query.limit)
            .collect();
        let columns = match &query.columns {
            Some(names) => names.iter().filter_map(|n| by_name(n)).collect(),
            None => header.readable().cloned().collect(),
        };
        Ok(RowsPage {
            rows,
            columns,
            total,
        })
    }

    /// The value of a cell (a formula's cached one), empty past the row's end.
    pub fn cell_value(&self, row: usize, column: usize) -> &Cell {
        self.row(row).get(column).map_or(&Cell::Empty, Cell::value)
    }

    /// The row at 0-based `index` as a JSON object: `_row` (its number),
    /// then each of `columns` (contract §4.3).
    pub fn row_json(&self, index: usize, columns: &[Column]) -> Value {
        let mut object = Map::with_capacity(columns.len() + 1);
        object.insert(ROW_KEY.into(), Value::from(index + 1));
        for column in columns {
            let value = self.cell_value(index, column.index).to_json();
            object.insert(column.name.clone(), value);
        }
        Value::Object(object)
    }

    /// The rows of `range` whose cells satisfy every filter. A long range
    /// is shared out in parts, one a core: the scan waits on memory, one
    /// row's cells at a time, and each thread waits for its own.
    fn matching(&self, range: std::ops::Range<usize>, filters: &[BoundFilter<'_>]) -> Vec<usize> {
        if let Some(rows) = self.indexed(range.clone(), filters) {
            return rows;
        }
        let scan = |part: std::ops::Range<usize>| -> Vec<usize> {
            part.filter(|&index| filters.iter().all(|f| f.matches(self.row(index))))
                .collect()
        };
        let threads = crate::cores();
        let parts = threads.min(range.len() / MIN_SCAN_ROWS).max(1);
        if parts == 1 {
            return scan(range);
        }
        let bound = |part: usize| range.start + part * range.len() / parts;
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..parts)
                .map(|part| scope.spawn(move || scan(bound(part)..bound(part + 1))))
                .collect();
            let mut rows = scan(bound(0)..bound(1));
            for other in others {
                // A panic in a scan is one in this thread.
                rows.extend(
                    other
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                );
            }
            rows
        })
    }

    /// The rows of `range` that match every filter, found through the
    /// index of a column that a filter looks for a number in, when the
    /// sheet is long and nothing changed it since the last commit (the
    /// index is kept up to that point).
    fn indexed(
        &self,
        range: std::ops::Range<usize>,
        filters: &[BoundFilter<'_>],
    ) -> Option<Vec<usize>> {
        if range.len() < index::MIN_INDEXED_ROWS || !self.edited.is_empty() {
            return None;
        }
        let (column, number) = filters
            .iter()
            .find_map(|f| Some((f.column(), f.equal_number()?)))?;
        let index = self.indexes.of_column(&self.rows, column)?;
        let rows = index.candidates(number).into_iter();
        Some(
            rows.filter(|row| range.contains(row))
                .filter(|&row| filters.iter().all(|f| f.matches(self.row(row))))
                .collect(),
        )
    }

    /// 0-based indexes of the data rows.
    pub(super) fn data_rows(&self, header: &Header) -> std::ops::Range<usize> {
        let end = match header.last_row {
            Some(last) => last + 1,
            None => self.last_non_blank_row().map_or(0, |last| last + 1),
        };
        header.first_data_row()..end.max(header.first_data_row())
    }

    /// The 0-based indexes of the rows a selector addresses, in sheet order.
    /// `problems` already found in the request are reported together with
    /// the selector's own.
    fn select(
        &self,
        header: Option<&Header>,
        selector: &Selector,
        mut problems: Problems,
    ) -> Result<Vec<usize>, Error> {
        match selector {
            Selector::Filter(filters) => {
                let bound: Vec<_> = filters
                    .iter()
                    .filter_map(|f| {
                        f.bind(header)
                            .map_err(|rule| problems.push(f.field.clone(), rule))
                            .ok()
                    })
                    .collect();
                if !problems.is_empty() {
                    return Err(problems.into());
                }
                let Some(header) = header else {
                    return Ok(Vec::new());
                };
                Ok(self.matching(self.data_rows(header), &bound))
            }
            Selector::Row(number) => self.numbered(&[*number], header, "row", problems),
            Selector::Numbers(numbers) => self.numbered(numbers, header, "rows", problems),
            // Only updates take rows with values, and they set them
            // themselves (`update_rows`); nothing else selects by them.
            Selector::Rows => problems.into_result(Vec::new()).map_err(Error::from),
        }
    }

    /// The 0-based indexes of data rows given by number (sorted), all or
    /// nothing: a number at or above the header is a problem of `field`
    /// (400), one below the last data row a 404.
    fn numbered(
        &self,
        numbers: &[u64],
        header: Option<&Header>,
        field: &str,
        mut problems: Problems,
    ) -> Result<Vec<usize>, Error> {
        let index = |number: u64| usize::try_from(number - 1).unwrap_or(usize::MAX);
        if let Some(header) = header {
            for (i, &number) in numbers.iter().enumerate() {
                if index(number) < header.first_data_row() {
                    let field = match numbers.len() {
                        1 if field == "row" => field.to_owned(),
                        _ => format!("{field}[{i}]"),
                    };
                    problems.push(
                        field,
                        format!(
                            "row {number} is the header row or above it; data starts at row {}",
                            header.first_data_row() + 1
                        ),
                    );
                }
            }
        }
        if !problems.is_empty() {
            return Err(problems.into());
        }
        let end = header.map_or(0, |header| self.data_rows(header).end);
        let below = numbers.iter().find(|&&number| index(number) >= end);
        if let Some(number) = below {
            return Err(Error::NotFound(format!(
                "row {number} is below the last data row of sheet {:?}",
                self.name
            )));
        }
        let mut rows: Vec<usize> = numbers.iter().map(|&n| index(n)).collect();
        rows.sort_unstable();
        rows.dedup();
        Ok(rows)
    }

    /// Moves the sheet's cells and layout with `rows`, and records the move
    /// for what the file carries beyond the model (the xlsx layer moves
    /// that when the workbook is written).
    /// Makes the totals formulas of table `table`, grown by `count` rows
    /// below its last data row `last_data` (0-based), cover those rows
    /// where they name the data with cell ranges (§11.1; a structured
    /// reference covers them already).
    fn totals_grown(&mut self, table: usize, last_data: usize, count: usize) {
        let range = self.layout.tables[table].range;
        let totals = range.last_row as usize;
        let columns = (
            u32::from(range.first_column) + 1,
            u32::from(range.last_column) + 1,
        );
        let last = last_data as u32 + 1;
        for column in usize::from(range.first_column)..=usize::from(range.last_column) {
            let cell = self
                .rows
                .get_mut(totals)
                .and_then(|cells| cells.get_mut(column));
            let Some(Cell::Formula(formula)) = cell else {
                continue;
            };
            let grown = ranges_grown(&formula.expr, &self.name, columns, last, count as u32);
            if grown != formula.expr {
                formula.expr = grown;
                self.edited.cells.push((totals as u32, column as u32));
            }
        }
    }

    fn move_rows(&mut self, rows: RowMove) {
        rows.apply(&mut self.rows, |_| Vec::new());
        self.layout.rows_moved(&rows);
        if !self.carried.pivots.is_empty() {
            let carried = std::sync::Arc::make_mut(&mut self.carried);
            carried
                .pivots
                .retain_mut(|pivot| match pivot.range.moved(&rows) {
                    Some(range) => {
                        pivot.range = range;
                        true
                    }
                    None => false,
                });
        }
        self.edited.moved = true;
        self.edited.moves.push(rows);
    }

    /// Why inserting sheet rows before row `before` (1-based) to grow
    /// table `table` would cut through another table or a merged range
    /// beside it, if it would.
    fn cut_beside(&self, table: usize, before: u32) -> Option<String> {
        let row = before - 1;
        let spans = |first: u32, last: u32| first < row && row <= last;
        let other = self
            .layout
            .tables
            .iter()
            .enumerate()
            .find(|(i, t)| *i != table && spans(t.range.first_row, t.range.last_row));
        if let Some((_, other)) = other {
            return Some(format!(
                "growing the table {:?} inserts sheet rows before row {before}, which would cut through the table {:?} beside it",
                self.layout.tables[table].name, other.name
            ));
        }
        self.layout
            .merges
            .iter()
            .find(|m| spans(m.first_row, m.last_row))
            .map(|merge| {
                format!(
                    "growing the table {:?} inserts sheet rows before row {before}, which would cut through the merged range {}:{}",
                    self.layout.tables[table].name,
                    cell_name(merge.first_row, u32::from(merge.first_column)),
                    cell_name(merge.last_row, u32::from(merge.last_column))
                )
            })
    }

    /// Why moving `rows` would cut through something a spreadsheet app
    /// changes only as a whole, if it would: an array formula's range, a
    /// pivot table's body (§11.2).
    fn cut_by(&self, rows: &RowMove) -> Option<String> {
        // 0-based rows, as the layout's ranges have them.
        let cuts = |range: &Range| match rows {
            RowMove::Deleted(deleted) => {
                let (count, rows) = deleted_within(deleted, range);
                count > 0 && count < rows
            }
            RowMove::Inserted { before, .. } => {
                range.first_row + 1 < *before && *before <= range.last_row + 1
            }
        };
        let mut arrays = self.layout.array_formulas.iter().map(|array| &array.range);
        if let Some(array) = arrays.find(|r| cuts(r)) {
            return Some(format!(
                "the rows would cut through the array formula in {}; a spreadsheet app changes an array formula only as a whole",
                self.place(array)
            ));
        }
        self.carried.pivots.iter().find(|p| cuts(&p.range)).map(|pivot| {
            format!(
                "the rows would cut through the pivot table {:?} at {}; a spreadsheet app changes a pivot table only as a whole",
                pivot.name,
                self.place(&pivot.range)
            )
        })
    }

    /// Why deleting `rows` would take a table (its header too) or a pivot
    /// table away whole, if it would. A spreadsheet app removes it; sheetd
    /// refuses, as the table's or the pivot table's parts in the file, and
    /// the formulas that name a table, would be left describing cells that
    /// are gone.
    fn removed_by(&self, rows: &RowMove) -> Option<String> {
        let RowMove::Deleted(deleted) = rows else {
            return None;
        };
        let gone = |range: &Range| {
            let (count, rows) = deleted_within(deleted, range);
            count == rows
        };
        let because =
            "sheetd does not remove tables: delete fewer rows, or remove it in a spreadsheet app";
        if let Some(table) = self.layout.tables.iter().find(|t| gone(&t.range)) {
            return Some(format!(
                "the rows would delete the whole table {:?} at {}, its header too; {because}",
                table.name,
                self.place(&table.range)
            ));
        }
        self.carried
            .pivots
            .iter()
            .find(|p| gone(&p.range))
            .map(|pivot| {
                format!(
                    "the rows would delete the whole pivot table {:?} at {}; {because}",
                    pivot.name,
                    self.place(&pivot.range)
                )
            })
    }

    /// `Data!B2:C4`: where `range` is, as a person names it.
    fn place(&self, range: &Range) -> String {
        let first = cell_name(range.first_row, u32::from(range.first_column));
        let last = cell_name(range.last_row, u32::from(range.last_column));
        format!("{}!{first}:{last}", quoted_sheet(&self.name))
    }
}

/// How many of the rows `deleted` (1-based, distinct) lie in `range`'s
/// rows (0-based), and how many rows it spans.
fn deleted_within(deleted: &[u32], range: &Range) -> (u32, u32) {
    let (first, last) = (range.first_row + 1, range.last_row + 1);
    let inside = deleted.iter().filter(|&&d| (first..=last).contains(&d));
    (inside.count() as u32, last - first + 1)
}

/// The columns of an insert that `header` does not name, or names twice.
fn insert_problems(header: &Header, request: &InsertRows) -> Problems {
    let mut problems = Problems::new();
    for row in &request.rows {
        problems.extend(data_problems(Some(header), &row.cells, || {
            format!("data[{}]", row.index)
        }));
    }
    problems
}

/// The columns of `data` that `header` does not name, or that name a
/// column an earlier key named (by its name and by its letter, `qty` and
/// `_B`: one cell given two values), under the field `field` makes (only
/// when there is a problem: this is on every insert's path, row by row).
fn data_problems(
    header: Option<&Header>,
    data: &[(String, Cell)],
    field: impl Fn() -> String,
) -> Problems {
    let mut problems = Problems::new();
    // A JSON object's keys are distinct (§9), so two name one column only
    // through a letter form.
    let letters = data.iter().any(|(name, _)| name.starts_with('_'));
    let mut named: HashMap<usize, &str> = HashMap::new();
    for (name, _) in data {
        let column = match header {
            Some(header) => header.resolve_explained(name),
            None => Err("is not a column of the sheet".to_owned()),
        };
        match column {
            Err(rule) => problems.push(format!("{}.{name}", field()), rule),
            Ok(_) if !letters => {}
            Ok(column) => match named.get(&column) {
                Some(earlier) => problems.push(
                    format!("{}.{name}", field()),
                    format!("names the same column as {earlier:?}"),
                ),
                None => {
                    named.insert(column, name);
                }
            },
        }
    }
    problems
}

/// The rows of an upsert to insert, each row whose `column` value is a key
/// of `existing` added to `updates` (row index and cells) instead, and the
/// rows that repeat an earlier new row's value merged into it. A value in
/// more than one existing row is a conflict.
fn merged_by_key(
    rows: Vec<NewRow>,
    column: &str,
    existing: &HashMap<String, Vec<usize>>,
    updates: &mut Vec<(usize, Vec<(String, Cell)>)>,
) -> Result<Vec<NewRow>, Error> {
    let mut new: Vec<NewRow> = Vec::new();
    let mut planned: HashMap<String, usize> = HashMap::new();
    for row in rows {
        let key = row
            .cells
            .iter()
            .find(|(name, _)| name == column)
            .and_then(|(_, cell)| match_key(cell));
        let Some(key) = key else {
            new.push(row);
            continue;
        };
        match (existing.get(&key).map(Vec::as_slice), planned.get(&key)) {
            (Some([index]), _) => updates.push((*index, row.cells)),
            (Some(indexes), _) => {
                let numbers: Vec<String> = indexes.iter().map(|i| (i + 1).to_string()).collect();
                return Err(Error::Conflict(format!(
                    "the value of data[{}].{column} is in rows {} of the sheet; on_conflict needs each value in one row at most",
                    row.index,
                    numbers.join(" and ")
                )));
            }
            (None, Some(&at)) => {
                let earlier = &mut new[at].cells;
                for (name, cell) in row.cells {
                    match earlier.iter_mut().find(|(n, _)| *n == name) {
                        Some(slot) => slot.1 = cell,
                        None => earlier.push((name, cell)),
                    }
                }
            }
            (None, None) => {
                planned.insert(key, new.len());
                new.push(row);
            }
        }
    }
    Ok(new)
}

/// What an upsert matches a cell by: numbers by value (-0 is 0), dates to
/// the second, booleans, text exactly; an empty cell matches nothing.
fn match_key(cell: &Cell) -> Option<String> {
    match cell.value() {
        cell if cell.is_blank() => None,
        Cell::Number(n) => Some(format!("n{}", number_key(*n))),
        Cell::DateTime(d) | Cell::Timestamp(d) => Some(format!("d{}", to_seconds(*d))),
        Cell::Bool(b) => Some(format!("b{b}")),
        Cell::Error(e) => Some(format!("e{e}")),
        other => Some(format!("t{}", other.text_form())),
    }
}

/// What the sheet finds wrong with a `type: rows` update: rows at or above
/// the header, and columns it lacks.
fn rows_problems(header: Option<&Header>, rows: &[RowValues]) -> Problems {
    let mut problems = Problems::new();
    // In the request's order: each row's number, then its columns.
    for row in rows {
        if let Some(header) = header
            && row_index(row) < header.first_data_row()
        {
            problems.push(
                format!("{}._row", row.field),
                format!(
                    "row {} is the header row or above it; data starts at row {}",
                    row.row,
                    header.first_data_row() + 1
                ),
            );
        }
        problems.extend(data_problems(header, &row.cells, || row.field.clone()));
    }
    problems
}

/// The 0-based index of the row a `type: rows` entry sets.
fn row_index(row: &RowValues) -> usize {
    usize::try_from(row.row - 1).unwrap_or(usize::MAX)
}

/// The problems of binding a selector's filters to `header`.
fn filter_problems(header: Option<&Header>, selector: &Selector) -> Problems {
    match selector {
        Selector::Filter(filters) => bind_problems(header, filters),
        Selector::Row(_) | Selector::Rows | Selector::Numbers(_) => Problems::new(),
    }
}

/// The problems of binding `filters` to `header`.
fn bind_problems(header: Option<&Header>, filters: &[FilterExpr]) -> Problems {
    let mut problems = Problems::new();
    for filter in filters {
        if let Err(rule) = filter.bind(header) {
            problems.push(filter.field.clone(), rule);
        }
    }
    problems
}

/// The names a read's `order` and `columns` give that the header lacks.
/// A sheet without a header has no rows to order or show: nothing to say.
fn read_column_problems(header: Option<&Header>, query: &ReadQuery) -> Problems {
    let mut problems = Problems::new();
    let Some(header) = header else {
        return problems;
    };
    let ordered = query.order.iter().map(|o| ("order", o.column.as_str()));
    let shown = query
        .columns
        .iter()
        .flatten()
        .map(|n| ("columns", n.as_str()));
    for (field, name) in ordered.chain(shown) {
        if let Err(rule) = header.resolve_explained(name) {
            problems.push(field, format!("{name:?} {rule}"));
        }
    }
    problems
}

/// How two cells sort: typed as filters compare (numbers numerically,
/// dates chronologically, durations by length, booleans, text by code
/// point), kinds in that order, and empty cells last in both directions.
fn sort_order(a: &Cell, b: &Cell, descending: bool) -> Ordering {
    match (a.is_blank(), b.is_blank()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) if descending => typed_order(b, a),
        (false, false) => typed_order(a, b),
    }
}

fn typed_order(a: &Cell, b: &Cell) -> Ordering {
    fn rank(cell: &Cell) -> u8 {
        match cell {
            Cell::Number(_) => 0,
            Cell::DateTime(_) | Cell::Timestamp(_) => 1,
            Cell::Duration(_) => 2,
            Cell::Bool(_) => 3,
            Cell::Error(_) => 5,
            _ => 4,
        }
    }
    match (a, b) {
        // Cells hold no NaN; -0 and 0 are equal, as for filters.
        (Cell::Number(x), Cell::Number(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Cell::DateTime(x) | Cell::Timestamp(x), Cell::DateTime(y) | Cell::Timestamp(y)) => {
            x.partial_cmp(y).unwrap_or(Ordering::Equal)
        }
        (Cell::Duration(x), Cell::Duration(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Cell::Bool(x), Cell::Bool(y)) => x.cmp(y),
        _ if rank(a) != rank(b) => rank(a).cmp(&rank(b)),
        _ => a.text_form().cmp(&b.text_form()),
    }
}

/// The keys of all rows in first-seen order: the header a blank sheet gets.
fn first_seen_keys(request: &InsertRows) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut names = Vec::new();
    for row in &request.rows {
        for (name, _) in &row.cells {
            if seen.insert(name.as_str()) {
                names.push(name.clone());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::layout::Range;
    use crate::model::workbook::DefinedName;
    use serde_json::json;

    fn text(s: &str) -> Cell {
        Cell::Text(s.into())
    }

    #[test]
    fn what_the_layout_notes_by_cell_counts_in_the_estimate() {
        let mut workbook = Workbook::default();
        workbook
            .sheets
            .push(Sheet::new("Data", vec![vec![Cell::Bool(true)]; 1000]));
        let plain = workbook.estimated_bytes(1000);
        let misfits = (0..1000u32).map(|row| ((row, 0u16), Cell::Bool(true)));
        workbook.sheets[0].layout.misfits = misfits.collect();
        assert_eq!(
            workbook.estimated_bytes(1000),
            plain + 1000 * BYTES_PER_MARK
        );
    }

    #[test]
    fn a_value_over_an_array_formulas_first_cell_takes_its_results_away() {
        use crate::model::layout::ArrayFormula;
        let formula = |text: &str| Cell::Formula(Box::new(Formula::new(text, Cell::Number(2.0))));
        let text = |s: &str| Cell::Text(s.into());
        let mut sheet = Sheet::new(
            "Data",
            vec![
                vec![text("a"), text("b"), text("c")],
                vec![formula("A3:B3*2"), Cell::Number(4.0), text("")],
                vec![Cell::Number(1.0), Cell::Number(2.0), text("x")],
            ],
        );
        let array = |first_column, last_column| ArrayFormula {
            range: Range {
                first_row: 1,
                first_column,
                last_row: 1,
                last_column,
            },
            dynamic: true,
        };
        sheet.layout.array_formulas = vec![array(0, 2), array(5, 6)];
        sheet.set(1, 0, text("typed"));
        assert_eq!(sheet.rows[1], [text("typed"), Cell::Empty, Cell::Empty]);
        assert_eq!(sheet.rows[2][2], text("x"), "outside the range");
        assert_eq!(sheet.layout.array_formulas, [array(5, 6)]);
        // A formula over it is the array's new formula.
        sheet.layout.array_formulas = vec![array(0, 2)];
        sheet.rows[1][1] = Cell::Number(4.0);
        sheet.set(1, 0, formula("A3:B3*3"));
        assert_eq!(sheet.rows[1][1], Cell::Number(4.0));
        assert_eq!(sheet.layout.array_formulas.len(), 1);
    }

    #[test]
    fn durations_sort_by_length_after_dates() {
        // 30:15:00 is longer than 4:00:00, though its text sorts first.
        let mut cells = vec![
            Cell::Duration(0.5),
            text("a"),
            Cell::Duration(30.25 / 24.0),
            Cell::DateTime(45000.0),
            Cell::Duration(4.0 / 24.0),
            Cell::Number(3.0),
        ];
        cells.sort_by(|a, b| sort_order(a, b, false));
        assert_eq!(
            cells,
            [
                Cell::Number(3.0),
                Cell::DateTime(45000.0),
                Cell::Duration(4.0 / 24.0),
                Cell::Duration(0.5),
                Cell::Duration(30.25 / 24.0),
                text("a"),
            ]
        );
    }

    fn people() -> Sheet {
        Sheet::new(
            "People",
            vec![
                vec![text("name"), text("age")],
                vec![text("Alice"), Cell::Number(30.0)],
                vec![text("Bob"), Cell::Number(25.0)],
            ],
        )
    }

    fn insert(sheet: &mut Sheet, body: Value) -> Result<usize, Error> {
        sheet.insert(
            &Region::default(),
            InsertRows::from_json(body.to_string().as_bytes(), usize::MAX).expect("valid body"),
        )
    }

    fn update(sheet: &mut Sheet, body: Value) -> Result<usize, Error> {
        sheet.update(
            &Region::default(),
            UpdateRows::from_json(body.to_string().as_bytes()).expect("valid body"),
        )
    }

    #[test]
    fn insert_appends_below_last_row() {
        let mut sheet = people();
        assert_eq!(
            insert(&mut sheet, json!({"data": [{"name": "Carol"}]})).unwrap(),
            1
        );
        assert_eq!(sheet.rows[3], vec![text("Carol")]);
        assert_eq!(sheet.data_row_count(&Region::default()), 3);
    }

    #[test]
    fn insert_rejects_unknown_column_and_changes_nothing() {
        let mut sheet = people();
        let err = insert(
            &mut sheet,
            json!({"data": [{"name": "C"}, {"nme": "D", "agee": 1}]}),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "data[1].nme: is not a column of the sheet, data[1].agee: is not a column of the sheet"
        );
        assert_eq!(sheet, people());
    }

    #[test]
    fn insert_into_blank_sheet_creates_header_from_keys() {
        let mut sheet = Sheet::new("Blank", vec![]);
        insert(&mut sheet, json!({"data": [{"b": 1}, {"a": 2, "b": 3}]})).unwrap();
        assert_eq!(sheet.rows[0], vec![text("b"), text("a")]);
        assert_eq!(sheet.rows[1], vec![Cell::Number(1.0)]);
        assert_eq!(sheet.rows[2], vec![Cell::Number(3.0), Cell::Number(2.0)]);
    }

    #[test]
    fn insert_past_last_row_is_rejected() {
        let mut sheet = people();
        sheet.rows.resize_with(MAX_ROWS, Vec::new);
        sheet.rows[MAX_ROWS - 1] = vec![text("last")];
        let err = insert(&mut sheet, json!({"data": [{"name": "x"}]})).unwrap_err();
        assert!(
            err.to_string().starts_with("data: 1 rows would pass"),
            "{err}"
        );
    }

    #[test]
    fn a_table_grown_over_appended_rows_changes_rows_in_place() {
        let mut base = Workbook {
            sheets: vec![people()],
            ..Workbook::default()
        };
        let last_row = base.sheets[0].rows.len() as u32 - 1;
        let range = Range {
            first_row: 0,
            first_column: 0,
            last_row,
            last_column: 1,
        };
        base.sheets[0]
            .layout
            .tables
            .push(crate::model::layout::Table::new("People", range));
        let outline = base.outline();

        let mut inserted = base.clone();
        insert(&mut inserted.sheets[0], json!({"data": [{"name": "Eve"}]})).unwrap();
        let table = &inserted.sheets[0].layout.tables[0];
        assert_eq!(table.range.last_row, last_row + 1, "the table grew");
        let logs = inserted.take_edits();
        assert!(logs[0].grown && !logs[0].moved, "{:?}", logs[0]);
        assert!(inserted.appended(&outline, &[&logs]));
        assert!(inserted.appends_to(&base));

        let mut renamed = base.clone();
        renamed.sheets[0].layout.tables[0].name = "Staff".into();
        assert_eq!(renamed.changed_in_place(&outline, &[]), None);
    }

    #[test]
    fn inserts_append_to_the_workbook_and_other_edits_do_not() {
        let mut base = Workbook {
            sheets: vec![people(), Sheet::new("Other", vec![vec![text("x")]])],
            ..Workbook::default()
        };
        base.sheets[0].layout.formats = vec![vec![0, 0], vec![0, 1], vec![0, 1]];
        base.sheets[0].layout.autofilter = Some(Range {
            first_row: 0,
            first_column: 0,
            last_row: 2,
            last_column: 1,
        });
        assert!(base.appends_to(&base));
        let outline = base.outline();
        assert!(base.appended(&outline, &[]));

        let mut inserted = base.clone();
        insert(
            &mut inserted.sheets[0],
            json!({"data": [{"name": "Carol", "age": 4}]}),
        )
        .unwrap();
        insert(&mut inserted.sheets[1], json!({"data": [{"x": 1}]})).unwrap();
        assert_eq!(
            inserted.sheets[0].layout.format(3, 1),
            1,
            "formats copied down"
        );
        assert_eq!(inserted.sheets[0].layout.autofilter.unwrap().last_row, 3);
        assert!(inserted.appends_to(&base));
        assert!(inserted.appended(&outline, &[&inserted.clone().take_edits()]));
        assert!(!base.appends_to(&inserted), "rows removed at the end");
        assert!(!base.appended(&inserted.outline(), &[]), "rows removed");
        let mut recalculated = inserted.clone().take_edits();
        recalculated[1].cells.push((0, 0));
        assert!(
            !inserted.appended(&outline, &[&recalculated]),
            "a cell above the new rows logged as changed"
        );

        type Change = fn(&mut Workbook);
        let edits: [(&str, Change); 7] = [
            ("a cell updated", |w| {
                let body = json!({"type": "row", "row": 3, "data": {"age": 26}});
                update(&mut w.sheets[0], body).unwrap();
            }),
            ("a row deleted", |w| {
                let request = DeleteRows::from_json(br#"{"type": "row", "row": 2}"#).unwrap();
                let source = w.source("People", None).unwrap();
                w.delete_rows(&source, &request).unwrap();
            }),
            ("a format changed", |w| w.sheets[0].layout.formats[1][1] = 0),
            ("the panes frozen", |w| {
                w.sheets[0].layout.freeze = Some((1, 0))
            }),
            ("the autofilter removed", |w| {
                w.sheets[0].layout.autofilter = None
            }),
            ("a sheet renamed", |w| w.sheets[1].name = "Renamed".into()),
            ("a name defined", |w| {
                w.names.push(DefinedName {
                    name: "Everyone".into(),
                    scope: None,
                    refers_to: "People!$A:$A".into(),
                    hidden: false,
                })
            }),
        ];
        for (what, edit) in edits {
            let mut edited = base.clone();
            edit(&mut edited);
            assert!(!edited.appends_to(&base), "{what}");
            // A format is changed by an edit, which logs its cell; set
            // directly, only the whole comparison sees it.
            if what != "a format changed" {
                let logs = edited.take_edits();
                assert!(!edited.appended(&outline, &[&logs]), "{what}");
            }
        }
    }

    #[test]
    fn update_by_row_and_filter() {
        let mut sheet = people();
        assert_eq!(
            update(
                &mut sheet,
                json!({"type": "row", "row": 3, "data": {"age": 26}})
            )
            .unwrap(),
            1
        );
        assert_eq!(sheet.rows[2][1], Cell::Number(26.0));
        let n = update(
            &mut sheet,
            json!({"type": "filter", "filter": "age:gte:26", "data": {"name": null}}),
        );
        assert_eq!(n.unwrap(), 2);
        assert_eq!(sheet.rows[1][0], Cell::Empty);
    }

    #[test]
    fn update_row_outside_data_rows() {
        let mut sheet = people();
        let header = update(
            &mut sheet,
            json!({"type": "row", "row": 1, "data": {"age": 1}}),
        );
        assert!(matches!(header, Err(Error::Invalid(_))));
        let below = update(
            &mut sheet,
            json!({"type": "row", "row": 4, "data": {"age": 1}}),
        );
        assert!(matches!(below, Err(Error::NotFound(_))));
    }

    #[test]
    fn read_pages_and_counts() {
        let sheet = people();
        let query =
            ReadQuery::from_pairs(&[("limit".into(), "1".into()), ("offset".into(), "1".into())])
                .unwrap();
        let page = sheet.read(&Region::default(), &query).unwrap();
        assert_eq!(page.total, 2);
        let rows: Vec<_> = page
            .rows
            .iter()
            .map(|&i| sheet.row_json(i, &page.columns))
            .collect();
        assert_eq!(rows, vec![json!({"_row": 3, "name": "Bob", "age": 25})]);
    }

    #[test]
    fn an_insert_that_would_push_cells_off_the_sheet_is_refused() {
        // A cell format on the sheet's last row, far below the data.
        let mut sheet = people();
        sheet.layout.formats.resize_with(MAX_ROWS, Vec::new);
        sheet.layout.formats[MAX_ROWS - 1] = vec![1];
        let mut workbook = Workbook {
            sheets: vec![sheet],
            ..Workbook::default()
        };
        let source = workbook.source("People", None).unwrap();
        let request = InsertRows::from_json(br#"{"data": [{"name": "x"}]}"#, 10).unwrap();
        let refused = workbook.insert(&source, request, Some(3));
        assert!(matches!(refused, Err(Error::Conflict(_))), "{refused:?}");
        assert_eq!(workbook.sheets[0].layout.formats[MAX_ROWS - 1], vec![1]);
    }

    #[test]
    fn a_filter_over_more_rows_than_one_thread_scans_finds_each_match_in_order() {
        let rows = (0..3 * MIN_SCAN_ROWS as u32).map(|n| vec![Cell::Number(f64::from(n))]);
        let sheet = Sheet::new("S", std::iter::once(vec![text("n")]).chain(rows).collect());
        let mut workbook = Workbook {
            sheets: vec![sheet],
            ..Workbook::default()
        };
        let request =
            DeleteRows::from_json(br#"{"type": "filter", "filter": "n:like:*7"}"#).unwrap();
        let source = workbook.source("S", None).unwrap();
        assert_eq!(
            workbook.delete_rows(&source, &request).unwrap(),
            3 * MIN_SCAN_ROWS / 10
        );
        let left: Vec<u32> = (workbook.sheets[0].rows[1..].iter())
            .map(|row| match row[0] {
                Cell::Number(n) => n as u32,
                ref other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(left.len(), 3 * MIN_SCAN_ROWS * 9 / 10);
        assert!(left.windows(2).all(|pair| pair[0] < pair[1]), "in order");
        assert!(left.iter().all(|n| n % 10 != 7));
    }

    #[test]
    fn delete_moves_rows_up_and_adjusts_formulas() {
        let mut workbook = Workbook {
            sheets: vec![people()],
            ..Workbook::default()
        };
        let request = DeleteRows::from_json(br#"{"type": "row", "row": 2}"#).unwrap();
        let source = workbook.source("people", None).unwrap();
        assert_eq!(workbook.delete_rows(&source, &request).unwrap(), 1);
        assert_eq!(
            workbook.sheets[0].rows[1],
            vec![text("Bob"), Cell::Number(25.0)]
        );
        workbook.sheets.push(Sheet::new(
            "Sum",
            vec![vec![Cell::Formula(Box::new(
                super::super::value::Formula::new("SUM(People!B2:B3)", Cell::Number(25.0)),
            ))]],
        ));
        assert_eq!(workbook.delete_rows(&source, &request).unwrap(), 1);
        let Cell::Formula(sum) = &workbook.sheets[1].rows[0][0] else {
            panic!("a formula");
        };
        assert_eq!(sum.expr, "SUM(People!B2:B2)");
    }

    #[test]
    fn inserted_rows_take_a_repeated_formula_shifted_to_their_row() {
        let formula = |expr: &str| Cell::Formula(Box::new(Formula::new(expr, Cell::Empty)));
        let mut sheet = Sheet::new(
            "S",
            vec![
                vec![text("a"), text("b")],
                vec![Cell::Number(1.0), formula("A2*2")],
                vec![Cell::Number(2.0), formula("A3*2")],
            ],
        );
        let request =
            InsertRows::from_json(br#"{"data": [{"a": 5}, {"a": 6, "b": 0}]}"#, 10).unwrap();
        sheet.insert(&Region::default(), request).unwrap();
        assert_eq!(sheet.rows[3][1], formula("A4*2"));
        assert_eq!(sheet.rows[4][1], Cell::Number(0.0), "the value sent wins");
    }
}
