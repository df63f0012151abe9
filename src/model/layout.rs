//! How a sheet is laid out around its values: cell formats, row and column
//! sizes, merged ranges, hyperlinks, tables, panes. Plain data that follows
//! the rows when rows are added or removed, so a rewrite puts it back where
//! the user left it.
//!
//! Rows and columns are 0-based, as everywhere in the model.

use std::collections::{BTreeMap, BTreeSet};

use super::format::{Color, Font};
use super::formula::RowMove;
use super::value::Cell;

/// A rectangle of cells, both corners included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub first_row: u32,
    pub first_column: u16,
    pub last_row: u32,
    pub last_column: u16,
}

/// An array formula: the formula sits in the range's first cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayFormula {
    pub range: Range,
    /// Whether it is a dynamic array (Excel 365: the cell points at the
    /// workbook's cell metadata with `cm`), which an app recalculates as
    /// one spilling formula; otherwise it is a legacy array formula,
    /// entered as `{=…}` over its whole range.
    pub dynamic: bool,
}

/// A formula cell whose file has it otherwise than the writer would
/// write it.
#[derive(Debug, Clone, PartialEq)]
pub enum FileFormula {
    /// The formula's text as the file has it, where the writer would add
    /// `_xlfn.` prefixes to its functions or make it a dynamic array (it
    /// does both for any function Excel added after 2007): written as it
    /// stands while the cell's formula is this text. A formula changed
    /// since takes the writer's form.
    Text(String),
    /// The first cell of a What-If data table (`<f t="dataTable">`), which
    /// an app fills with the results of a formula for each input; readers
    /// see the cell's cached value. Written again while the cell holds the
    /// value read from it.
    DataTable(DataTable),
}

/// A What-If data table as its first cell's `<f t="dataTable">` has it.
#[derive(Debug, Clone, PartialEq)]
pub struct DataTable {
    /// The cells the app fills (`ref`).
    pub range: Range,
    /// The input cells the app puts each row's or column's value into
    /// (`r1`, and `r2` for a table of two variables).
    pub inputs: [Option<(u32, u16)>; 2],
    /// The element's other attributes as the file has them, escaped as
    /// XML (` dt2D="1" dtr="0"`), each after a space.
    pub attributes: String,
    /// The value read from the cell (its cached result).
    pub value: Cell,
}

/// A row's own settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowProps {
    /// In points, when set by hand or fitted to the row's content.
    pub height: Option<f64>,
    /// Whether `height` is one a spreadsheet app fitted to the row's content
    /// (a larger font, wrapped text; the file has no `customHeight`), which
    /// it fits again when the content changes: written so.
    pub height_fitted: bool,
    pub hidden: bool,
    /// The format of the row's empty cells (an id into `Workbook::formats`),
    /// when the row has one of its own (which may be the default format).
    pub format: Option<u32>,
    /// How deep the row sits in grouped (outlined) rows; 0 is not grouped.
    pub outline_level: u8,
    /// Whether the group of rows next to this one is collapsed (shown as
    /// the `+` of an outline).
    pub collapsed: bool,
}

/// Settings of a run of columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnProps {
    pub first: u16,
    pub last: u16,
    /// In character widths, as the xlsx format stores it.
    pub width: Option<f64>,
    pub hidden: bool,
    pub format: u32,
    /// How deep the columns sit in grouped columns; 0 is not grouped.
    pub outline_level: u8,
}

/// Where a hyperlink leads.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkTarget {
    /// An address outside the workbook: `https://…`, `mailto:…`, a file.
    Url(String),
    /// A place inside the workbook: `Report!A1`, a defined name.
    Location(String),
}

/// A hyperlink on a cell or a range of cells. What it shows is the cells'
/// values.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub range: Range,
    pub target: LinkTarget,
    pub tooltip: Option<String>,
    /// The file's other attributes of the link (`display`, the text a
    /// spreadsheet app keeps for it; `location`, also the place in a
    /// document a URL leads to), written back as they were.
    pub attributes: Vec<(String, String)>,
}

/// A table ("format as table", a ListObject).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    /// The whole table: header row, data and totals row.
    pub range: Range,
    pub header_row: bool,
    pub totals_row: bool,
    /// `"TableStyleMedium9"`; `None` is no style.
    pub style: Option<String>,
    pub banded_rows: bool,
    pub banded_columns: bool,
    pub first_column: bool,
    pub last_column: bool,
    pub autofilter: bool,
    pub columns: Vec<TableColumn>,
    /// The table's part in the file (`xl/tables/table1.xml`), which a
    /// rewrite carries with the range the table has then.
    pub part: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableColumn {
    pub name: String,
    /// The totals row's function: `"sum"`, `"average"`, `"count"`…
    pub total_function: Option<String>,
    /// The totals row's text in this column.
    pub total_label: Option<String>,
    /// The formula of a calculated column (`<calculatedColumnFormula>`,
    /// without `=`), as for the table's first data row: what every row
    /// added to the table takes in this column.
    pub calculated: Option<String>,
}

/// How a sheet prints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrintSetup {
    pub landscape: bool,
    /// The xlsx paper size code (1 Letter, 9 A4…).
    pub paper_size: Option<u8>,
    /// Percent, 10–400.
    pub scale: Option<u16>,
    /// Pages wide and tall to fit the sheet on (0 is "as many as needed").
    pub fit_to_pages: Option<(u16, u16)>,
    /// Inches: left, right, top, bottom, header, footer.
    pub margins: Option<[f64; 6]>,
    /// Header and footer text with the xlsx `&` codes (`&CPage &P`).
    pub header: Option<String>,
    pub footer: Option<String>,
    pub center_horizontally: bool,
    pub center_vertically: bool,
    pub gridlines: bool,
}

/// Everything about a sheet's layout that a rewrite keeps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    /// The format id of each cell, `formats[row][column]`; 0 (and any cell
    /// past a row's end) is the default format.
    pub formats: Vec<Vec<u32>>,
    pub rows: BTreeMap<u32, RowProps>,
    pub columns: Vec<ColumnProps>,
    pub merges: Vec<Range>,
    pub array_formulas: Vec<ArrayFormula>,
    pub links: Vec<Link>,
    pub tables: Vec<Table>,
    pub autofilter: Option<Range>,
    /// The first row and column that do not scroll.
    pub freeze: Option<(u32, u16)>,
    pub tab_color: Option<Color>,
    pub print: PrintSetup,
    /// Text formatted in parts ("rich text"), by cell: the runs, whose
    /// texts make the cell's text. A cell whose text has changed since is
    /// plain text again (see [`Layout::runs`]).
    pub rich_text: BTreeMap<(u32, u16), RichText>,
    /// The text of cells the file held as ISO 8601 dates (`t="d"`), by
    /// cell: written so again while the cell holds what the text reads as.
    pub iso_dates: BTreeMap<(u32, u16), String>,
    /// Text cells the file spells otherwise than the writer would (see
    /// [`Spelling`]), by cell: written as spelled while the cell holds the
    /// text read from it.
    pub spelled: BTreeMap<(u32, u16), Spelling>,
    /// Formula cells the file has otherwise than the writer would write
    /// them (see [`FileFormula`]), by cell.
    pub formulas: BTreeMap<(u32, u16), FileFormula>,
    /// Cells of the default format that the file has as elements of their
    /// own (`<c r="B3"/>`, or with a value) under a formatted row or
    /// column: such a cell shows the default format, where no cell would
    /// show the row's or the column's, so it is written even when empty.
    pub unformatted_cells: BTreeSet<(u32, u16)>,
    /// Cells the file has with a value their number format does not fit
    /// (see [`super::format::misfit_code`]: a date alone under a time
    /// format, a boolean under a date format…), by cell, with that value:
    /// written in their format while they hold it, where a value written
    /// through the API gets a number format that fits (§9).
    pub misfits: BTreeMap<(u32, u16), Cell>,
}

/// A text cell as its file spells it, where rewriting the text would
/// spell it otherwise: `_xHHHH_` escapes in another case (`_x000d_`), a
/// literal `_x…_` escaped as `_x005F_x…_`, outer spaces without
/// `xml:space="preserve"` (which readers such as Excel and calamine trim,
/// others keep). Readers that do not decode the escapes, or do not trim,
/// see the same text only if it is written as spelled.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spelling {
    /// The text as read (escapes decoded, outer spaces trimmed unless
    /// preserved): the spelling is the cell's while the cell holds it.
    pub text: String,
    /// The text of the `<t>` element, XML entities resolved, escapes and
    /// spaces as they stand.
    pub xml: String,
    /// Whether the `<t>` has `xml:space="preserve"`.
    pub preserve: bool,
    /// Whether the file holds the text in the `<v>` of a `t="str"` cell
    /// without a formula, not in a `<t>`: written back so, as readers
    /// read a `<v>` otherwise than a `<t>` (calamine keeps its outer
    /// spaces, LibreOffice trims them).
    pub in_value: bool,
}

/// Text formatted in parts: its runs, and its XML as the file has it (the
/// content of its `<si>` or `<is>`), written back while the cell holds
/// the runs' text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RichText {
    pub runs: Vec<TextRun>,
    pub xml: String,
}

/// A run of rich text: its font (none: the cell's) and its text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextRun {
    pub font: Option<Font>,
    pub text: String,
}

/// `cells`, kept by cell, once rows have moved: those on deleted rows go,
/// the others go where their rows go.
fn cells_moved<T>(cells: &mut BTreeMap<(u32, u16), T>, rows: &RowMove) {
    *cells = std::mem::take(cells)
        .into_iter()
        .filter_map(|((row, column), value)| Some(((moved_index(row, rows)?, column), value)))
        .collect();
}

/// Where the row at 0-based `index` goes; `None` when it is deleted.
fn moved_index(index: u32, rows: &RowMove) -> Option<u32> {
    rows.row(index + 1).map(|row| row - 1)
}

impl Range {
    pub fn cell(row: u32, column: u16) -> Range {
        Range {
            first_row: row,
            first_column: column,
            last_row: row,
            last_column: column,
        }
    }

    /// The range once rows have moved ([`RowMove::span`]): it shrinks by
    /// deleted rows inside it, grows by rows inserted inside it, and moves
    /// with those above it. `None` when all its rows are deleted.
    pub fn moved(self, rows: &RowMove) -> Option<Range> {
        let (first, last) = rows.span(self.first_row + 1, self.last_row + 1)?;
        Some(Range {
            first_row: first - 1,
            last_row: last - 1,
            ..self
        })
    }
}

impl DataTable {
    /// The data table once rows have moved: its range as any range, its
    /// inputs with their rows. `None` when its range or an input is
    /// deleted.
    pub fn moved(self, rows: &RowMove) -> Option<DataTable> {
        let mut inputs = self.inputs;
        for (row, _) in inputs.iter_mut().flatten() {
            *row = moved_index(*row, rows)?;
        }
        Some(DataTable {
            range: self.range.moved(rows)?,
            inputs,
            ..self
        })
    }
}

impl Table {
    /// A table over `range` with a header row and no totals row, no style
    /// and no columns named yet.
    pub fn new(name: impl Into<String>, range: Range) -> Table {
        Table {
            name: name.into(),
            range,
            header_row: true,
            totals_row: false,
            style: None,
            banded_rows: false,
            banded_columns: false,
            first_column: false,
            last_column: false,
            autofilter: false,
            columns: Vec::new(),
            part: None,
        }
    }
}

impl Layout {
    /// Whether the sheet has any layout at all (a bare grid has none).
    pub fn is_empty(&self) -> bool {
        *self == Layout::default()
    }

    /// A copy without the cells' formats. (The literal names every field,
    /// so that a new one is not forgotten here.)
    pub fn without_formats(&self) -> Layout {
        Layout {
            formats: Vec::new(),
            rows: self.rows.clone(),
            columns: self.columns.clone(),
            merges: self.merges.clone(),
            array_formulas: self.array_formulas.clone(),
            links: self.links.clone(),
            tables: self.tables.clone(),
            autofilter: self.autofilter,
            freeze: self.freeze,
            tab_color: self.tab_color,
            print: self.print.clone(),
            rich_text: self.rich_text.clone(),
            iso_dates: self.iso_dates.clone(),
            spelled: self.spelled.clone(),
            formulas: self.formulas.clone(),
            unformatted_cells: self.unformatted_cells.clone(),
            misfits: self.misfits.clone(),
        }
    }

    /// Whether the rows above `row` (0-based) are written as in `base`:
    /// the same row settings and what the writer puts right in their cells
    /// (rich text, ISO dates, spellings, formula texts, cells of the
    /// default format), and the same columns. What lies below, and what is
    /// written apart from the rows (merged ranges, tables, links, the
    /// autofilter, panes, print settings), may differ: rows that moved.
    pub fn same_rows_above(&self, base: &Layout, row: u32) -> bool {
        fn above<V: PartialEq>(
            now: &BTreeMap<(u32, u16), V>,
            before: &BTreeMap<(u32, u16), V>,
            row: u32,
        ) -> bool {
            now.range(..(row, 0)).eq(before.range(..(row, 0)))
        }
        self.rows.range(..row).eq(base.rows.range(..row))
            && self.columns == base.columns
            && above(&self.rich_text, &base.rich_text, row)
            && above(&self.iso_dates, &base.iso_dates, row)
            && above(&self.spelled, &base.spelled, row)
            && above(&self.formulas, &base.formulas, row)
            && above(&self.misfits, &base.misfits, row)
            && self
                .unformatted_cells
                .range(..(row, 0))
                .eq(base.unformatted_cells.range(..(row, 0)))
    }

    /// Whether this layout is `base`'s but for the cell formats of rows and
    /// the last rows of the autofilter and the tables, which grow when rows
    /// are appended.
    pub fn same_apart_from_rows(&self, base: &Layout) -> bool {
        // Every field named, so that a new one is not forgotten here.
        let Layout {
            formats: _,
            rows,
            columns,
            merges,
            array_formulas,
            links,
            tables,
            autofilter,
            freeze,
            tab_color,
            print,
            rich_text,
            iso_dates,
            spelled,
            formulas,
            unformatted_cells,
            misfits,
        } = self;
        let grown = |now: &Range, before: &Range| {
            Range {
                last_row: before.last_row,
                ..*now
            } == *before
                && now.last_row >= before.last_row
        };
        let autofilter_grown = match (autofilter, &base.autofilter) {
            (Some(now), Some(before)) => grown(now, before),
            (now, before) => now == before,
        };
        let tables_grown = tables.len() == base.tables.len()
            && tables.iter().zip(&base.tables).all(|(now, before)| {
                grown(&now.range, &before.range)
                    && Table {
                        range: before.range,
                        ..now.clone()
                    } == *before
            });
        autofilter_grown
            && *rows == base.rows
            && *columns == base.columns
            && *merges == base.merges
            && *array_formulas == base.array_formulas
            && *links == base.links
            && tables_grown
            && *freeze == base.freeze
            && *tab_color == base.tab_color
            && *print == base.print
            && *rich_text == base.rich_text
            && *iso_dates == base.iso_dates
            && *spelled == base.spelled
            && *formulas == base.formulas
            && *unformatted_cells == base.unformatted_cells
            && *misfits == base.misfits
    }

    /// How many cells the layout notes something of, one by one (rich
    /// text, ISO dates, spellings, formula texts, cells of the default
    /// format, misfits): what it holds by cell beyond the formats.
    pub fn cell_marks(&self) -> usize {
        self.rich_text.len()
            + self.iso_dates.len()
            + self.spelled.len()
            + self.formulas.len()
            + self.unformatted_cells.len()
            + self.misfits.len()
    }

    /// The columns of row `row`'s [`Layout::unformatted_cells`], in order.
    pub fn unformatted_columns(&self, row: u32) -> impl DoubleEndedIterator<Item = u16> + '_ {
        self.unformatted_cells
            .range((row, 0)..=(row, u16::MAX))
            .map(|&(_, column)| column)
    }

    /// The runs of the rich text at a cell, when `text` is still theirs.
    pub fn runs(&self, row: u32, column: u16, text: &str) -> Option<&RichText> {
        let rich = self.rich_text.get(&(row, column))?;
        let runs = &rich.runs;
        let same = runs.iter().map(|r| r.text.len()).sum::<usize>() == text.len()
            && runs
                .iter()
                .scan(0, |at, run| {
                    let start = *at;
                    *at += run.text.len();
                    Some(text.get(start..*at) == Some(run.text.as_str()))
                })
                .all(|same| same);
        same.then_some(rich)
    }

    /// How the file spells the text at a cell, when `text` is still what
    /// was read from it.
    pub fn spelling(&self, row: u32, column: u16, text: &str) -> Option<&Spelling> {
        self.spelled
            .get(&(row, column))
            .filter(|spelling| spelling.text == text)
    }

    /// How the file has the formula `expr` at a cell, when it has it
    /// otherwise than the writer would write it and `expr` is still the
    /// text read from the cell.
    pub fn file_formula(&self, row: u32, column: u16, expr: &str) -> Option<&str> {
        match self.formulas.get(&(row, column)) {
            Some(FileFormula::Text(text)) if text == expr => Some(text),
            _ => None,
        }
    }

    /// The data table whose first cell is at `row`, `column`, when the
    /// cell still holds `value`, the value read from it.
    pub fn data_table(&self, row: u32, column: u16, value: &Cell) -> Option<&DataTable> {
        match self.formulas.get(&(row, column)) {
            Some(FileFormula::DataTable(table)) if table.value == *value => Some(table),
            _ => None,
        }
    }

    /// The format id of a cell.
    pub fn format(&self, row: usize, column: usize) -> u32 {
        self.formats
            .get(row)
            .and_then(|cells| cells.get(column))
            .copied()
            .unwrap_or(0)
    }

    /// Gives the rows `first..first + count`, new below the sheet's last
    /// row, the cell formats of the row above them, as a spreadsheet app
    /// does when someone types under a table; and grows the tables and the
    /// autofilter that end on that row so they take the new rows in.
    /// Whether a table grew.
    pub fn rows_appended(&mut self, first: usize, count: usize) -> bool {
        if first == 0 || count == 0 {
            return false;
        }
        self.formats_copied_down(first, count);
        let last = (first - 1) as u32;
        let grow = |range: &mut Range| {
            let ends_above = range.last_row == last;
            if ends_above {
                range.last_row += count as u32;
            }
            ends_above
        };
        let mut grew = false;
        for table in self.tables.iter_mut().filter(|t| !t.totals_row) {
            grew |= grow(&mut table.range);
        }
        if let Some(range) = &mut self.autofilter {
            grow(range);
        }
        grew
    }

    /// Gives the cells of rows `first..first + count` (0-based, `first` > 0)
    /// that have no format of their own the cell formats of the row above
    /// them. A cell formatted before anything was typed into it keeps its
    /// format, and so do the cells of a row with a format of its own (the
    /// writer gives them the row's), as in a spreadsheet app.
    pub fn formats_copied_down(&mut self, first: usize, count: usize) {
        let above = self.formats.get(first - 1).cloned().unwrap_or_default();
        if above.iter().all(|&f| f == 0) {
            return;
        }
        if self.formats.len() < first + count {
            self.formats.resize_with(first + count, Vec::new);
        }
        for (index, row) in self.formats[first..first + count].iter_mut().enumerate() {
            let row_number = (first + index) as u32;
            if self
                .rows
                .get(&row_number)
                .is_some_and(|props| props.format.is_some())
            {
                continue;
            }
            if row.len() < above.len() {
                row.resize(above.len(), 0);
            }
            for (own, &from_above) in row.iter_mut().zip(&above) {
                if *own == 0 {
                    *own = from_above;
                }
            }
        }
    }

    /// Moves everything anchored to rows with them ([`RowMove`]): rows
    /// below a delete move up and those below an insert down, ranges shrink
    /// or grow, and what lay only on deleted rows goes with them. Inserted
    /// rows take the cell formats of the row above them, as in a
    /// spreadsheet app.
    pub fn rows_moved(&mut self, rows: &RowMove) {
        if self.is_empty() {
            return;
        }
        rows.apply(&mut self.formats, |above| {
            above.last().cloned().unwrap_or_default()
        });
        self.rows = std::mem::take(&mut self.rows)
            .into_iter()
            .filter_map(|(row, props)| Some((moved_index(row, rows)?, props)))
            .collect();
        // Rows inserted take the height and format of the row above, as in
        // LibreOffice; not its being hidden or grouped.
        if let &RowMove::Inserted { before, count } = rows
            && let Some(above) = before.checked_sub(2).and_then(|row| self.rows.get(&row))
            && (above.height.is_some() || above.format.is_some())
        {
            let taken = RowProps {
                height: above.height,
                height_fitted: above.height_fitted,
                format: above.format,
                ..RowProps::default()
            };
            for row in (before - 1..).take(count as usize) {
                self.rows.insert(row, taken.clone());
            }
        }
        // A merged range that shrinks to one cell goes; one the file has
        // as one cell stays as it is.
        let one_cell = |range: &Range| {
            range.first_row == range.last_row && range.first_column == range.last_column
        };
        self.merges = std::mem::take(&mut self.merges)
            .into_iter()
            .filter_map(|range| {
                let moved = range.moved(rows)?;
                (one_cell(&range) || !one_cell(&moved)).then_some(moved)
            })
            .collect();
        self.array_formulas = std::mem::take(&mut self.array_formulas)
            .into_iter()
            .filter_map(|array| {
                let range = array.range.moved(rows)?;
                Some(ArrayFormula { range, ..array })
            })
            .collect();
        cells_moved(&mut self.rich_text, rows);
        cells_moved(&mut self.iso_dates, rows);
        cells_moved(&mut self.spelled, rows);
        cells_moved(&mut self.misfits, rows);
        self.unformatted_cells = std::mem::take(&mut self.unformatted_cells)
            .into_iter()
            .filter_map(|(row, column)| Some((moved_index(row, rows)?, column)))
            .collect();
        // A data table goes when its range or an input cell goes.
        self.formulas = std::mem::take(&mut self.formulas)
            .into_iter()
            .filter_map(|((row, column), formula)| {
                let formula = match formula {
                    FileFormula::DataTable(table) => FileFormula::DataTable(table.moved(rows)?),
                    text @ FileFormula::Text(_) => text,
                };
                Some(((moved_index(row, rows)?, column), formula))
            })
            .collect();
        self.links = std::mem::take(&mut self.links)
            .into_iter()
            .filter_map(|link| {
                let range = link.range.moved(rows)?;
                Some(Link { range, ..link })
            })
            .collect();
        self.tables
            .retain_mut(|table| match table.range.moved(rows) {
                Some(mut range) => {
                    // Deleting a totals row takes the totals row away, as
                    // in a spreadsheet app.
                    let last = table.range.last_row;
                    if table.totals_row && moved_index(last, rows).is_none() {
                        table.totals_row = false;
                    }
                    // A table keeps at least one row below its header, as
                    // in a spreadsheet app when all its data is deleted.
                    if table.header_row && range.last_row == range.first_row {
                        range.last_row += 1;
                    }
                    table.range = range;
                    true
                }
                // Every row of it, its header's too, is gone.
                None => false,
            });
        self.autofilter = self.autofilter.and_then(|range| range.moved(rows));
        if let Some((row, column)) = self.freeze {
            // The frozen rows lose those deleted among them and take in
            // rows inserted among them.
            let kept = rows.span(1, row.max(1)).map_or(0, |(_, last)| last);
            self.freeze = Some((if row == 0 { 0 } else { kept }, column));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(first_row: u32, last_row: u32) -> Range {
        Range {
            first_row,
            first_column: 0,
            last_row,
            last_column: 3,
        }
    }

    /// A table named `T` with a header row.
    fn table(range: Range, totals_row: bool) -> Table {
        Table {
            totals_row,
            ..Table::new("T", range)
        }
    }

    #[test]
    fn ranges_shrink_and_move_with_removed_rows() {
        // 0-based ranges, 1-based rows deleted.
        let deleted = |rows: &[u32]| RowMove::Deleted(rows.to_vec());
        assert_eq!(rows(4, 6).moved(&deleted(&[2, 3])), Some(rows(2, 4)));
        assert_eq!(rows(4, 6).moved(&deleted(&[6])), Some(rows(4, 5)));
        assert_eq!(rows(4, 6).moved(&deleted(&[5, 6, 7])), None);
        assert_eq!(rows(4, 6).moved(&deleted(&[1, 5, 10])), Some(rows(3, 4)));
        assert_eq!(rows(4, 6).moved(&deleted(&[8, 9])), Some(rows(4, 6)));
        let inserted = |before, count| RowMove::Inserted { before, count };
        assert_eq!(rows(4, 6).moved(&inserted(6, 2)), Some(rows(4, 8)));
        assert_eq!(rows(4, 6).moved(&inserted(5, 1)), Some(rows(5, 7)));
        assert_eq!(rows(4, 6).moved(&inserted(8, 1)), Some(rows(4, 6)));
    }

    #[test]
    fn appended_rows_take_formats_and_grow_tables() {
        let mut layout = Layout {
            formats: vec![vec![1, 1], vec![0, 2]],
            autofilter: Some(rows(0, 1)),
            ..Layout::default()
        };
        layout.rows_appended(2, 2);
        assert_eq!(
            layout.formats,
            vec![vec![1, 1], vec![0, 2], vec![0, 2], vec![0, 2]]
        );
        assert_eq!(layout.autofilter, Some(rows(0, 3)));
    }

    #[test]
    fn an_appended_row_formatted_beforehand_keeps_its_own_formats() {
        let mut layout = Layout {
            // Row 2 has borders of its own in its second and third cells;
            // row 3 has a row format.
            formats: vec![vec![1, 1, 1], vec![0, 2, 0], vec![], vec![0, 5]],
            rows: [(
                3,
                RowProps {
                    format: Some(4),
                    ..RowProps::default()
                },
            )]
            .into(),
            ..Layout::default()
        };
        layout.rows_appended(1, 3);
        assert_eq!(
            layout.formats,
            vec![vec![1, 1, 1], vec![1, 2, 1], vec![1, 1, 1], vec![0, 5]]
        );
    }

    #[test]
    fn a_table_whose_data_rows_are_all_removed_keeps_an_empty_row() {
        let mut layout = Layout {
            tables: vec![table(rows(0, 2), false)],
            ..Layout::default()
        };
        layout.rows_moved(&RowMove::Deleted(vec![2, 3]));
        assert_eq!(layout.tables[0].range, rows(0, 1));
        layout.rows_moved(&RowMove::Deleted(vec![1, 2]));
        assert!(layout.tables.is_empty());
    }

    #[test]
    fn a_deleted_totals_row_takes_the_totals_row_away() {
        let table = table(rows(0, 4), true);
        let mut layout = Layout {
            tables: vec![table],
            links: vec![Link {
                range: rows(2, 3),
                target: LinkTarget::Url("https://example.com".into()),
                tooltip: None,
                attributes: Vec::new(),
            }],
            merges: vec![Range::cell(7, 0)],
            ..Layout::default()
        };
        layout.rows_moved(&RowMove::Deleted(vec![3, 5]));
        assert_eq!(layout.tables[0].range, rows(0, 2));
        assert!(!layout.tables[0].totals_row);
        assert_eq!(
            layout.links[0].range,
            rows(2, 2),
            "a link losing its top row shrinks"
        );
        assert_eq!(
            layout.merges,
            vec![Range::cell(5, 0)],
            "a one-cell merge stays"
        );
    }

    #[test]
    fn array_formulas_and_data_tables_keep_their_kind_when_rows_move() {
        let table = |first_row, input_row| {
            FileFormula::DataTable(DataTable {
                range: Range {
                    last_column: 2,
                    ..rows(first_row, first_row + 2)
                },
                inputs: [Some((input_row, 0)), None],
                attributes: r#" dt2D="0""#.into(),
                value: Cell::Number(1.0),
            })
        };
        let dynamic = |range| ArrayFormula {
            range,
            dynamic: true,
        };
        let mut layout = Layout {
            array_formulas: vec![dynamic(rows(3, 4))],
            formulas: [
                ((4, 2), table(4, 0)),
                ((8, 1), FileFormula::Text("_xlfn.CONCAT(A1)".into())),
            ]
            .into(),
            ..Layout::default()
        };
        // Two rows inserted before row 2 (1-based).
        layout.rows_moved(&RowMove::Inserted {
            before: 2,
            count: 2,
        });
        assert_eq!(layout.array_formulas, vec![dynamic(rows(5, 6))]);
        let moved: BTreeMap<_, _> = [
            ((6, 2), table(6, 0)),
            ((10, 1), FileFormula::Text("_xlfn.CONCAT(A1)".into())),
        ]
        .into();
        assert_eq!(layout.formulas, moved);
        // The table's input row deleted: the table goes, as a constant.
        layout.rows_moved(&RowMove::Deleted(vec![1]));
        assert_eq!(layout.formulas.len(), 1);
        assert_eq!(
            layout.file_formula(9, 1, "_xlfn.CONCAT(A1)"),
            Some("_xlfn.CONCAT(A1)")
        );
        assert_eq!(layout.file_formula(9, 1, "_xlfn.CONCAT(A2)"), None);
    }

    #[test]
    fn removed_rows_take_their_layout_along() {
        let mut layout = Layout {
            formats: vec![vec![1], vec![2], vec![3]],
            rows: BTreeMap::from([
                (1, RowProps::default()),
                (
                    2,
                    RowProps {
                        hidden: true,
                        ..RowProps::default()
                    },
                ),
            ]),
            merges: vec![
                rows(1, 2),
                Range {
                    last_column: 0,
                    ..rows(1, 2)
                },
            ],
            links: vec![Link {
                range: Range::cell(2, 0),
                target: LinkTarget::Url("https://example.com".into()),
                tooltip: None,
                attributes: Vec::new(),
            }],
            unformatted_cells: BTreeSet::from([(0, 1), (1, 1), (2, 1)]),
            ..Layout::default()
        };
        layout.rows_moved(&RowMove::Deleted(vec![2]));
        assert_eq!(layout.formats, vec![vec![1], vec![3]]);
        assert_eq!(layout.rows.keys().copied().collect::<Vec<_>>(), vec![1]);
        assert!(layout.rows[&1].hidden);
        assert_eq!(
            layout.merges,
            vec![rows(1, 1)],
            "A2:D3 is A2:D2, A2:A3 is gone"
        );
        assert_eq!(layout.links[0].range, Range::cell(1, 0));
        assert_eq!(
            layout.unformatted_cells,
            BTreeSet::from([(0, 1), (1, 1)]),
            "B3 is B2, B2 is gone"
        );
    }
}
