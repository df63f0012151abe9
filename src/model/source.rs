//! Where a request's rows are (§11.1): a sheet or a table, found by its
//! name, with the header row a request names; and what the listing says of
//! each. Every row route goes through a [`Source`], so that no handler,
//! filter, read or write needs to know which kind it has.

use super::Cell;
use super::Error;
use super::Problems;
use super::formula::{cell_name, same_sheet};
use super::header::{Header, Region};
use super::workbook::{Sheet, Workbook};

/// A sheet's or table's rows as the listing gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsSummary {
    pub name: String,
    /// 1-based; `None` for a sheet with nothing in it.
    pub header_row: Option<usize>,
    pub columns: Vec<String>,
    pub rows: usize,
}

/// A table as the listing gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSummary {
    pub rows: RowsSummary,
    pub sheet: String,
    /// `B4:F20`: header, data and totals row.
    pub range: String,
    pub totals: bool,
}

/// Where a request's rows are: a sheet, by index, and its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    pub sheet: usize,
    pub region: Region,
}

/// The one item `items` yields, if it yields exactly one.
pub(super) fn unique<T>(mut items: impl Iterator<Item = T>) -> Option<T> {
    match (items.next(), items.next()) {
        (Some(item), None) => Some(item),
        _ => None,
    }
}

impl Workbook {
    /// Where the rows named `name` are (§11.1): the sheet of that exact
    /// name, else the table of that exact name, else the one sheet, then
    /// the one table, whose name matches ignoring case. A sheet holding
    /// exactly one table is read and written through it, unless
    /// `header_row` (1-based) names the sheet's header row itself; that row
    /// must hold something (400).
    pub fn source(&self, name: &str, header_row: Option<u64>) -> Result<Source, Error> {
        let Some((sheet, table)) = self.named(name) else {
            return Err(Error::NotFound(format!(
                "the workbook has no sheet or table named {name:?}"
            )));
        };
        let tables = &self.sheets[sheet].layout.tables;
        let table = match (table, header_row) {
            (Some(_), Some(_)) => {
                return Err(Problems::one(
                    "header_row",
                    format!("{name:?} is a table: its header is its first row"),
                )
                .into());
            }
            (Some(table), None) => Some(table),
            (None, None) if tables.len() == 1 => Some(0),
            (None, _) => None,
        };
        let header_row = match header_row {
            Some(number) => {
                let row = usize::try_from(number - 1).unwrap_or(usize::MAX);
                if self.sheets[sheet].row(row).iter().all(Cell::is_empty_value) {
                    return Err(Problems::one(
                        "header_row",
                        format!(
                            "row {number} of sheet {:?} is empty: it names no columns",
                            self.sheets[sheet].name
                        ),
                    )
                    .into());
                }
                Some(row)
            }
            None => None,
        };
        Ok(Source {
            sheet,
            region: Region { table, header_row },
        })
    }

    /// What the listing says of each sheet (§11.1): its rows as a request
    /// naming the sheet finds them.
    pub fn sheet_summaries(&self) -> Vec<RowsSummary> {
        (0..self.sheets.len())
            .map(|sheet| {
                let region = match self.sheets[sheet].layout.tables.len() {
                    1 => Region::table(0),
                    _ => Region::default(),
                };
                self.sheets[sheet].summary(self.sheets[sheet].name.clone(), &region)
            })
            .collect()
    }

    /// What the listing says of each table (§11.1), sheet by sheet.
    pub fn table_summaries(&self) -> Vec<TableSummary> {
        let mut found = Vec::new();
        for sheet in &self.sheets {
            for (index, table) in sheet.layout.tables.iter().enumerate() {
                let region = Region::table(index);
                let range = table.range;
                found.push(TableSummary {
                    sheet: sheet.name.clone(),
                    range: format!(
                        "{}:{}",
                        cell_name(range.first_row, u32::from(range.first_column)),
                        cell_name(range.last_row, u32::from(range.last_column))
                    ),
                    totals: table.totals_row,
                    rows: sheet.summary(table.name.clone(), &region),
                });
            }
        }
        found
    }

    /// The sheet and index of the table whose name `matches`, when exactly
    /// one does.
    /// What `name` names, by the order of [`Workbook::source`]: a sheet
    /// (its index, and `None`) or a table (its sheet's index and its own
    /// among the sheet's tables); `None` when nothing.
    pub fn named(&self, name: &str) -> Option<(usize, Option<usize>)> {
        self.sheets
            .iter()
            .position(|s| s.name == name)
            .map(|sheet| (sheet, None))
            .or_else(|| self.table_named(|t| t == name))
            .or_else(|| {
                unique(
                    self.sheets
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| same_sheet(&s.name, name))
                        .map(|(i, _)| (i, None)),
                )
            })
            .or_else(|| self.table_named(|t| same_sheet(t, name)))
    }

    fn table_named(&self, matches: impl Fn(&str) -> bool) -> Option<(usize, Option<usize>)> {
        unique(self.sheets.iter().enumerate().flat_map(|(s, sheet)| {
            sheet
                .layout
                .tables
                .iter()
                .enumerate()
                .filter(|(_, t)| matches(&t.name))
                .map(move |(t, _)| (s, Some(t)))
        }))
    }
}

impl Sheet {
    /// The number of data rows `region` has.
    pub fn data_row_count(&self, region: &Region) -> usize {
        Header::of(self, region).map_or(0, |header| self.data_rows(&header).len())
    }

    /// The rows `region` means, summed up under `name`: its header row,
    /// columns and number of data rows.
    fn summary(&self, name: String, region: &Region) -> RowsSummary {
        let header = Header::of(self, region);
        RowsSummary {
            name,
            // A table without a header row has none to name.
            header_row: header
                .as_ref()
                .filter(|h| h.first_data_row() == h.row + 1)
                .map(|h| h.row + 1),
            columns: header
                .as_ref()
                .map(|h| h.all().iter().map(|c| c.name.clone()).collect())
                .unwrap_or_default(),
            rows: header.map_or(0, |header| self.data_rows(&header).len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::layout::{Range, Table};

    /// A workbook of sheets by name, each holding the tables named.
    fn workbook(sheets: &[(&str, &[&str])]) -> Workbook {
        let sheets = sheets
            .iter()
            .map(|(name, tables)| {
                let mut sheet = Sheet::new(*name, Vec::new());
                for (i, table) in tables.iter().enumerate() {
                    let column = i as u16 * 3;
                    let range = Range {
                        first_row: 0,
                        first_column: column,
                        last_row: 2,
                        last_column: column + 1,
                    };
                    sheet.layout.tables.push(Table::new(*table, range));
                }
                sheet
            })
            .collect();
        Workbook {
            sheets,
            ..Workbook::default()
        }
    }

    /// Where `name` leads: (sheet, table).
    fn found(workbook: &Workbook, name: &str) -> Option<(usize, Option<usize>)> {
        let source = workbook.source(name, None).ok()?;
        Some((source.sheet, source.region.table))
    }

    #[test]
    fn names_resolve_sheet_then_table_then_either_ignoring_case() {
        let book = workbook(&[("items", &[]), ("Other", &["Items", "Two"])]);
        assert_eq!(found(&book, "items"), Some((0, None)), "the exact sheet");
        assert_eq!(found(&book, "Items"), Some((1, Some(0))), "the exact table");
        assert_eq!(
            found(&book, "OTHER"),
            Some((1, None)),
            "two tables: the sheet"
        );
        assert_eq!(
            found(&book, "two"),
            Some((1, Some(1))),
            "a table ignoring case"
        );
        assert_eq!(
            found(&book, "ITEMS"),
            Some((0, None)),
            "a sheet before a table"
        );
        assert_eq!(found(&book, "none"), None);
        let one = workbook(&[("Data", &["tblData"])]);
        assert_eq!(
            found(&one, "data"),
            Some((0, Some(0))),
            "a sheet's one table"
        );
    }
}
