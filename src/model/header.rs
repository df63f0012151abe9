//! Where a request's rows are (§11.1): the header row of a sheet or table,
//! its columns, and column lookup.
//!
//! A [`Region`] says what the request asked for (a table, a header row);
//! [`Header::of`] finds the header it means: its row (by the header rule,
//! [`header_rule`], unless named), its columns and how far its data goes. Column names are the header cells' text exactly as
//! stored, matched exactly and case-sensitively. Every column is also
//! addressed by its letter as `_A`, `_B`, … (any case); a column whose
//! header cell is empty, or repeats a name to its left, or is `_row` or
//! another reserved name, is named by that letter form.

use std::collections::HashMap;

use super::formula::{column_letters, column_number};
use super::workbook::Sheet;

/// The key under which every row read carries its number (contract §1);
/// no column is addressed by this name.
pub const ROW_KEY: &str = "_row";

/// What a request asks of a sheet: which table, which header row. The
/// default is the sheet itself under the header rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Region {
    /// The table whose rows are meant, by its index among the sheet's
    /// tables (`Layout::tables`).
    pub table: Option<usize>,
    /// The header row named by `header_row` (0-based).
    pub header_row: Option<usize>,
}

impl Region {
    /// The rows of the sheet's table at `index` (among `Layout::tables`).
    pub fn table(index: usize) -> Region {
        Region {
            table: Some(index),
            header_row: None,
        }
    }
}

/// One addressable column: its name and its 0-based column index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub index: usize,
}

/// The header a request's rows hang from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// 0-based index of the header row (for a table without one, the row
    /// above it).
    pub row: usize,
    /// 0-based index of the first data row: below the header, or a
    /// headerless table's first row.
    first_data: usize,
    /// The columns, left to right, each under its name or letter form.
    columns: Vec<Column>,
    /// Name → column index.
    index: HashMap<String, usize>,
    /// The last data row (0-based) when it is fixed: a table's data range.
    /// `None`: data goes down to the sheet's last row that holds anything.
    pub last_row: Option<usize>,
    /// The table, when the rows are a table's.
    pub table: Option<usize>,
}

impl Header {
    /// The header `region` means on `sheet`, or `None` when the sheet (or
    /// the named header row) holds nothing to take names from.
    pub fn of(sheet: &Sheet, region: &Region) -> Option<Header> {
        if let Some(table) = region.table {
            return Header::of_table(sheet, table, region.header_row);
        }
        let row = match region.header_row {
            Some(row) => row,
            None => header_rule(sheet)?,
        };
        let cells = sheet.row(row);
        if cells.iter().all(|cell| cell.is_empty_value()) {
            return None;
        }
        let names = used_columns(sheet, row)
            .into_iter()
            .map(|c| (c, cells.get(c).map(column_name)));
        Some(Header::new(row, names, None, None))
    }

    /// A table's header: its columns' names, its data range.
    fn of_table(sheet: &Sheet, index: usize, header_row: Option<usize>) -> Option<Header> {
        let table = sheet.layout.tables.get(index)?;
        let range = table.range;
        let first = usize::from(range.first_column);
        let row = match (header_row, table.header_row) {
            (Some(row), _) => row,
            (None, true) => range.first_row as usize,
            // A table without a header row: its names are in the part.
            (None, false) => (range.first_row as usize).saturating_sub(1),
        };
        let width = usize::from(range.last_column) - first + 1;
        let names = (0..width).map(|i| {
            let from_sheet = || sheet.row(row).get(first + i).map(column_name);
            let name = match header_row {
                Some(_) => from_sheet(),
                None => table
                    .columns
                    .get(i)
                    .map(|c| c.name.clone())
                    .or_else(from_sheet),
            };
            (first + i, name)
        });
        // A table too short for its header and totals rows has no data.
        let first_data = match (header_row, table.header_row) {
            (None, false) => range.first_row as usize,
            _ => row + 1,
        };
        let last = (range.last_row as usize)
            .saturating_sub(usize::from(table.totals_row))
            .max(first_data.saturating_sub(1));
        let mut header = Header::new(row, names, Some(last), Some(index));
        header.first_data = first_data;
        Some(header)
    }

    /// From each column's index and header text, left to right.
    fn new(
        row: usize,
        names: impl Iterator<Item = (usize, Option<String>)>,
        last_row: Option<usize>,
        table: Option<usize>,
    ) -> Header {
        let mut columns: Vec<Column> = Vec::new();
        let mut index = HashMap::new();
        for (column, name) in names {
            let name = match name {
                Some(name) if !name.trim().is_empty() && !is_reserved(&name) => name,
                _ => letter_form(column),
            };
            // A name that repeats one to its left is read by its letter.
            let name = match index.contains_key(&name) {
                true => letter_form(column),
                false => name,
            };
            index.insert(name.clone(), column);
            columns.push(Column {
                name,
                index: column,
            });
        }
        Header {
            row,
            first_data: row + 1,
            columns,
            index,
            last_row,
            table,
        }
    }

    /// Builds the header a blank sheet gets from the keys of its first insert.
    pub fn from_names(names: impl IntoIterator<Item = String>) -> Header {
        Header::new(0, names.into_iter().map(Some).enumerate(), None, None)
    }

    /// The column a name addresses: a column's name, or any column's letter
    /// form (`_C`, `_c`); `Err` holds the rule a bad name breaks.
    pub fn resolve(&self, name: &str) -> Result<usize, &'static str> {
        if let Some(&column) = self.index.get(name) {
            return Ok(column);
        }
        match letter_column(name) {
            Some(column) if self.columns.iter().any(|c| c.index == column) => Ok(column),
            Some(_) => Err("is a column letter outside the sheet's columns"),
            None if is_reserved(name) => {
                Err("is reserved: a name starting with _ is _row or a column letter such as _A")
            }
            None => Err("is not a column of the sheet"),
        }
    }

    /// As [`Header::resolve`], with the rule a name that is no column
    /// breaks followed by the columns it may have meant (§11.4): those
    /// whose name is the same ignoring case and surrounding spaces, as
    /// `is not a column of the sheet; did you mean "Field 4 "?`.
    pub fn resolve_explained(&self, name: &str) -> Result<usize, String> {
        self.resolve(name).map_err(|rule| match self.meant(name) {
            Some(meant) => format!("{rule}; did you mean {meant}?"),
            None => rule.to_owned(),
        })
    }

    /// The columns `name` may mean, quoted and joined by `or`.
    fn meant(&self, name: &str) -> Option<String> {
        let loose = |text: &str| text.trim().to_lowercase();
        let wanted = loose(name);
        let meant: Vec<String> = self
            .columns
            .iter()
            .filter(|column| column.name != name && loose(&column.name) == wanted)
            .map(|column| format!("{:?}", column.name))
            .collect();
        (!meant.is_empty()).then(|| meant.join(" or "))
    }

    /// Every column in header order.
    pub fn all(&self) -> &[Column] {
        &self.columns
    }

    /// The columns a read returns.
    pub fn readable(&self) -> impl Iterator<Item = &Column> {
        self.columns.iter()
    }

    /// 0-based index of the first data row.
    pub fn first_data_row(&self) -> usize {
        self.first_data
    }
}

/// The name a header cell gives its column: its text as a spreadsheet app
/// shows it (a boolean is `TRUE` or `FALSE`), a number or date as the API
/// writes it.
fn column_name(cell: &super::Cell) -> String {
    match cell.value() {
        super::Cell::Bool(true) => "TRUE".to_owned(),
        super::Cell::Bool(false) => "FALSE".to_owned(),
        other => other.text_form().into_owned(),
    }
}

/// `_C` for the 0-based column 2.
pub fn letter_form(column: usize) -> String {
    format!("_{}", column_letters(column as u32 + 1))
}

/// The 0-based column a letter form names (`_AB`, `_ab`), on the grid.
fn letter_column(name: &str) -> Option<usize> {
    if name == ROW_KEY {
        return None;
    }
    let letters = name.strip_prefix('_')?;
    if !(1..=3).contains(&letters.len()) || !letters.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let number = column_number(letters) as usize;
    (number <= super::workbook::MAX_COLUMNS).then(|| number - 1)
}

/// Whether a name is kept for the service's own keys: `_row` and anything
/// else starting with `_`.
fn is_reserved(name: &str) -> bool {
    name.starts_with('_')
}

/// The columns of the header row `row` and the data below it that hold
/// anything, left to right: a column with data but no name is read under
/// its letter, one with neither is left out.
fn used_columns(sheet: &Sheet, row: usize) -> Vec<usize> {
    let rows = sheet.rows.get(row..).unwrap_or_default();
    // Rows are looked at until every column is found used, which in a
    // table is within its first rows: not at every row of a long sheet.
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut used = vec![false; width];
    let mut unused = width;
    for cells in rows {
        for (c, cell) in cells.iter().enumerate() {
            if !used[c] && !cell.is_empty_value() {
                used[c] = true;
                unused -= 1;
            }
        }
        if unused == 0 {
            break;
        }
    }
    used.iter()
        .enumerate()
        .filter_map(|(c, &used)| used.then_some(c))
        .collect()
}

/// How many rows from the top the header rule looks at.
const RULE_ROWS: usize = 50;

/// The header row the rule of §11.1 picks, measured against hand-labelled
/// real sheets (`tools/corpus/header_labels.tsv`; docs/API.md has the
/// agreement). Over 50 rows from the first non-empty one, with `W` the
/// most non-empty cells any of them holds and `need` two or more cells and
/// at least two thirds of `W`:
/// 1. a preamble is skipped (see [`preamble_end`]): label and value lines,
///    an invoice's customer and date, above a table;
/// 2. from there, the header is the first row whose cells are all text
///    and that holds `need` cells (title rows above a table hold fewer,
///    data rows hold numbers or dates),
/// 3. unless no row is such, or a row above it that holds a non-text value
///    is as full as it (the sheet starts with data): then the first row of
///    `need` cells when it is a text label followed by numbers or dates
///    only (`Region, 2022, 2023`: years as a header), else the first row of
///    two or more cells, else the first non-empty one (§11.1's minimum:
///    title rows of one cell are skipped).
fn header_rule(sheet: &Sheet) -> Option<usize> {
    let top = sheet.first_non_blank_row()?;
    let rows: Vec<RowKind> = (top..sheet.rows.len().min(top + RULE_ROWS))
        .map(|row| RowKind::of(sheet.row(row)))
        .collect();
    let widest = rows.iter().map(|r| r.cells).max()?;
    let need = 2.max((2 * widest).div_ceil(3));
    let start = preamble_end(&rows);
    let rows = &rows[start..];
    let first = top + start;
    if let Some(header) = rows.iter().position(|r| r.all_text && r.cells >= need) {
        let data_above = rows[..header]
            .iter()
            .any(|r| !r.all_text && r.cells >= rows[header].cells);
        if !data_above {
            return Some(first + header);
        }
    }
    if let Some(full) = rows.iter().position(|r| r.cells >= need)
        && rows[full].label_then_numbers
    {
        return Some(first + full);
    }
    let minimum = (rows.iter().position(|r| r.cells >= 2))
        .or_else(|| rows.iter().position(|r| r.cells > 0))?;
    Some(first + minimum)
}

/// Where the rows the header rule reads begin, past a preamble: the last
/// row (an index of `rows`, whose first is non-empty) that has a non-empty
/// row directly below it, is wider than every row from the last such
/// start to it, which hold one or two cells each (titles, `Customer:
/// ACME` lines), and either follows a blank row or is a row of text over
/// a row of data at least as wide (no blank row between).
fn preamble_end(rows: &[RowKind]) -> usize {
    let mut start = 0;
    let mut widest = rows.first().map_or(0, |r| r.cells);
    for (at, row) in rows.iter().enumerate().skip(1) {
        let below = rows.get(at + 1).filter(|b| b.cells > 0);
        let starts = below.is_some_and(|below| {
            let after_blank = rows[at - 1].cells == 0;
            let on_data = row.all_text && !below.all_text && below.cells >= row.cells;
            row.cells > widest && widest <= 2 && (after_blank || on_data)
        });
        if starts {
            start = at;
            widest = row.cells;
        } else {
            widest = widest.max(row.cells);
        }
    }
    start
}

/// What the header rule sees of a row.
struct RowKind {
    /// Its non-empty cells (blank text is empty).
    cells: usize,
    /// Whether every non-empty cell holds text.
    all_text: bool,
    /// Whether its first non-empty cell holds text and every other a
    /// number, a date or a time.
    label_then_numbers: bool,
}

impl RowKind {
    fn of(cells: &[super::Cell]) -> RowKind {
        use super::Cell;
        let mut kind = RowKind {
            cells: 0,
            all_text: true,
            label_then_numbers: true,
        };
        for cell in cells {
            let value = cell.value();
            let number = match value {
                Cell::Text(text) if text.trim().is_empty() => continue,
                Cell::Empty => continue,
                Cell::Text(_) => false,
                Cell::Number(_) | Cell::DateTime(_) | Cell::Timestamp(_) | Cell::Duration(_) => {
                    true
                }
                _ => false,
            };
            let text = matches!(value, Cell::Text(_));
            kind.all_text &= text;
            kind.label_then_numbers &= if kind.cells == 0 { text } else { number };
            kind.cells += 1;
        }
        kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::Cell;

    fn sheet(rows: Vec<Vec<Cell>>) -> Sheet {
        Sheet::new("S", rows)
    }

    fn text(s: &str) -> Cell {
        Cell::Text(s.into())
    }

    #[test]
    fn an_unknown_name_names_the_columns_it_may_mean() {
        let header = Header::from_names(["Field 4 ", "name", "Name ", "age"].map(str::to_owned));
        assert_eq!(
            header.resolve_explained("Field 4"),
            Err("is not a column of the sheet; did you mean \"Field 4 \"?".into())
        );
        assert_eq!(
            header.resolve_explained(" NAME"),
            Err("is not a column of the sheet; did you mean \"name\" or \"Name \"?".into())
        );
        assert_eq!(
            header.resolve_explained("ages"),
            Err("is not a column of the sheet".into())
        );
        assert_eq!(header.resolve_explained("age"), Ok(3));
    }

    #[test]
    fn header_is_first_non_empty_row() {
        let s = sheet(vec![
            vec![],
            vec![Cell::Empty, Cell::Text(String::new())],
            vec![Cell::Empty, text("id"), Cell::Number(2024.0)],
        ]);
        let header = Header::of(&s, &Region::default()).expect("has a header");
        assert_eq!(header.row, 2);
        assert_eq!(header.resolve("id"), Ok(1));
        assert_eq!(header.resolve("2024"), Ok(2));
        assert_eq!(header.resolve("ID"), Err("is not a column of the sheet"));
    }

    #[test]
    fn a_boolean_header_cell_names_its_column_as_spreadsheet_apps_show_it() {
        let s = sheet(vec![
            vec![text("name"), Cell::Bool(true), Cell::Bool(false)],
            vec![text("a"), Cell::Number(1.0), Cell::Number(2.0)],
        ]);
        let region = Region {
            header_row: Some(0),
            ..Region::default()
        };
        let header = Header::of(&s, &region).expect("has a header");
        let names: Vec<_> = header.readable().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["name", "TRUE", "FALSE"]);
    }

    #[test]
    fn empty_and_repeated_names_are_read_by_their_letters() {
        let s = sheet(vec![
            vec![text("a"), text("b"), text("a"), Cell::Empty, text("_row")],
            vec![Cell::Number(1.0); 6],
        ]);
        let header = Header::of(&s, &Region::default()).expect("has a header");
        let names: Vec<_> = header.readable().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "_C", "_D", "_E", "_F"]);
        assert_eq!(header.resolve("a"), Ok(0));
        assert_eq!(header.resolve("_a"), Ok(0));
        assert_eq!(header.resolve("_F"), Ok(5));
        assert!(header.resolve("_G").is_err());
        assert!(header.resolve("_other").unwrap_err().contains("reserved"));
    }

    #[test]
    fn letter_forms_run_to_the_last_column() {
        assert_eq!(letter_column("_A"), Some(0));
        assert_eq!(letter_column("_xfd"), Some(16_383));
        assert_eq!(letter_column("_XFE"), None);
        assert_eq!(letter_column("_row"), None);
        assert_eq!(letter_form(27), "_AB");
    }

    #[test]
    fn title_rows_above_the_header_are_skipped() {
        let n = Cell::Number;
        let s = sheet(vec![
            vec![text("SIMPLE MONTHLY BUDGET")],
            vec![],
            vec![text("Prepared by"), text("Ann")],
            vec![text("Item"), text("Cost"), text("Paid"), text("Due")],
            vec![text("Gym"), n(30.0), Cell::Bool(true), n(45000.0)],
        ]);
        assert_eq!(header_rule(&s), Some(3));
    }

    #[test]
    fn a_preamble_of_labels_and_values_above_a_table_is_skipped() {
        let n = Cell::Number;
        let invoice = |blank: bool| {
            let mut rows = vec![
                vec![text("INVOICE")],
                vec![text("Customer:"), text("ACME Ltd")],
                vec![text("Date:"), Cell::DateTime(45296.0)],
            ];
            if blank {
                rows.push(vec![]);
            }
            rows.push(vec![text("Item"), text("Qty"), text("Price")]);
            rows.push(vec![text("Bolt"), n(10.0), n(0.5)]);
            rows.push(vec![text("Nut"), n(20.0), n(0.25)]);
            sheet(rows)
        };
        assert_eq!(header_rule(&invoice(true)), Some(4));
        assert_eq!(header_rule(&invoice(false)), Some(3), "no blank row");
        let parameters = sheet(vec![
            vec![text("Region:"), text("North")],
            vec![text("Unit:"), text("EUR")],
            vec![],
            vec![text("Product"), n(2022.0), n(2023.0)],
            vec![text("Widget"), n(1.0), n(2.0)],
        ]);
        assert_eq!(header_rule(&parameters), Some(3));
        // A blank header cell over a full row of text is no preamble.
        let caption = sheet(vec![
            vec![text("Item"), text("Colour"), Cell::Empty, text("Qty")],
            vec![text("Bolt"), text("grey"), text("M6"), text("n/a")],
            vec![text("Nut"), text("black"), text("M6"), n(20.0)],
        ]);
        assert_eq!(header_rule(&caption), Some(0));
        // Notes below a table, however wide, do not move its header.
        let notes = sheet(vec![
            vec![text("Item"), text("Qty"), text("Price")],
            vec![text("Bolt"), n(10.0), n(0.5)],
            vec![],
            vec![text("Total"), n(10.0)],
            vec![],
            vec![text("Note:"), text("prices"), text("exclude"), text("VAT")],
            vec![text("Source:"), text("internal")],
        ]);
        assert_eq!(header_rule(&notes), Some(0));
    }

    #[test]
    fn a_header_of_a_label_and_years_is_taken_below_a_title() {
        let n = Cell::Number;
        let s = sheet(vec![
            vec![
                text("Sales by year"),
                Cell::Empty,
                Cell::Empty,
                text("Confidential"),
            ],
            vec![text("Region"), n(2022.0), n(2023.0), n(2024.0)],
            vec![text("North"), n(1.0), n(2.0), n(3.0)],
            vec![text("South"), n(4.0), n(5.0), n(6.0)],
        ]);
        assert_eq!(header_rule(&s), Some(1));
    }

    #[test]
    fn a_sheet_that_starts_with_data_takes_its_first_full_row() {
        let n = Cell::Number;
        let data = sheet(vec![
            vec![n(1.0), n(2.0), n(3.0)],
            vec![text("a"), text("b"), text("c")],
        ]);
        assert_eq!(header_rule(&data), Some(0));
        let no_text = sheet(vec![vec![text("x")], vec![n(1.0), n(2.0)]]);
        assert_eq!(
            header_rule(&no_text),
            Some(1),
            "a one-cell title is skipped"
        );
        let one_column = sheet(vec![vec![], vec![text("names")], vec![text("Ann")]]);
        assert_eq!(header_rule(&one_column), Some(1));
        assert_eq!(header_rule(&sheet(vec![vec![], vec![]])), None);
    }

    #[test]
    fn the_rule_looks_from_the_first_non_empty_row_however_far_down() {
        let mut rows = vec![Vec::new(); 60];
        rows.push(vec![text("k"), text("v")]);
        rows.push(vec![text("a"), Cell::Number(1.0)]);
        assert_eq!(header_rule(&sheet(rows)), Some(60));
    }

    #[test]
    fn a_table_without_a_header_row_has_data_from_its_first_row() {
        use crate::model::layout::{Range, Table, TableColumn};
        let mut s = sheet(vec![
            vec![text("a"), Cell::Number(1.0)],
            vec![text("b"), Cell::Number(2.0)],
        ]);
        let range = Range {
            first_row: 0,
            first_column: 0,
            last_row: 1,
            last_column: 1,
        };
        s.layout.tables.push(Table {
            header_row: false,
            columns: ["k", "v"]
                .map(|name| TableColumn {
                    name: name.into(),
                    ..TableColumn::default()
                })
                .into(),
            ..Table::new("T", range)
        });
        let region = Region::table(0);
        let header = Header::of(&s, &region).unwrap();
        assert_eq!((header.first_data_row(), header.last_row), (0, Some(1)));
        assert_eq!(header.resolve("v"), Ok(1));
    }

    #[test]
    fn a_named_header_row_is_taken_as_it_is() {
        let s = sheet(vec![
            vec![text("Budget")],
            vec![text("item"), text("cost")],
            vec![text("gym"), Cell::Number(30.0)],
        ]);
        let region = Region {
            header_row: Some(1),
            ..Region::default()
        };
        let header = Header::of(&s, &region).unwrap();
        assert_eq!((header.row, header.resolve("cost")), (1, Ok(1)));
        let empty = Region {
            header_row: Some(7),
            ..Region::default()
        };
        assert_eq!(Header::of(&s, &empty), None);
    }
}
