//! The header row: the first non-empty row of a sheet, and column lookup.
//!
//! Column names are the header cells' text exactly as stored; matching is
//! exact and case-sensitive. Cells with an empty header, or one named `_row`
//! (the key of each row's number), are kept but cannot be addressed, and a
//! name that appears twice is ambiguous (contract §1).

use std::collections::HashMap;

use super::request::ROW_KEY;
use super::workbook::Sheet;

/// One addressable column: its name and its 0-based column index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub index: usize,
}

/// The header of a sheet that has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// 0-based index of the header row.
    pub row: usize,
    /// The named columns, left to right (duplicates included).
    columns: Vec<Column>,
    /// Name → column index, or `None` when the name appears more than once.
    index: HashMap<String, Option<usize>>,
}

impl Header {
    /// The header of `sheet`, or `None` when the sheet has no cells at all.
    pub fn of(sheet: &Sheet) -> Option<Header> {
        let row = sheet.first_non_blank_row()?;
        let columns = sheet.rows[row]
            .iter()
            .enumerate()
            .filter(|(_, cell)| !cell.is_empty_value())
            .map(|(index, cell)| Column {
                name: cell.text_form().into_owned(),
                index,
            })
            // Rows read carry their number under this key.
            .filter(|column| column.name != ROW_KEY)
            .collect();
        Some(Header::new(row, columns))
    }

    fn new(row: usize, columns: Vec<Column>) -> Header {
        let mut index = HashMap::with_capacity(columns.len());
        for column in &columns {
            index
                .entry(column.name.clone())
                .and_modify(|found| *found = None)
                .or_insert(Some(column.index));
        }
        Header {
            row,
            columns,
            index,
        }
    }

    /// Builds the header a blank sheet gets from the keys of its first insert.
    pub fn from_names(names: impl IntoIterator<Item = String>) -> Header {
        let columns = names
            .into_iter()
            .enumerate()
            .map(|(index, name)| Column { name, index })
            .collect();
        Header::new(0, columns)
    }

    /// The column a name addresses; `Err` holds the rule a bad name breaks.
    pub fn resolve(&self, name: &str) -> Result<usize, &'static str> {
        match self.index.get(name) {
            Some(Some(column)) => Ok(*column),
            Some(None) => Err("is ambiguous: more than one column of the header has this name"),
            None => Err("is not a column of the sheet"),
        }
    }

    /// Every column name in header order, duplicates included.
    pub fn all(&self) -> &[Column] {
        &self.columns
    }

    /// The columns a read returns: each name once, at its first place.
    pub fn readable(&self) -> impl Iterator<Item = &Column> {
        let mut seen = std::collections::HashSet::new();
        self.columns
            .iter()
            .filter(move |c| seen.insert(c.name.as_str()))
    }

    /// 0-based index of the first data row.
    pub fn first_data_row(&self) -> usize {
        self.row + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::Cell;

    fn sheet(rows: Vec<Vec<Cell>>) -> Sheet {
        Sheet::new("S", rows)
    }

    #[test]
    fn header_is_first_non_empty_row() {
        let s = sheet(vec![
            vec![],
            vec![Cell::Empty, Cell::Text(String::new())],
            vec![Cell::Empty, Cell::Text("id".into()), Cell::Number(2024.0)],
        ]);
        let header = Header::of(&s).expect("has a header");
        assert_eq!(header.row, 2);
        assert_eq!(header.resolve("id"), Ok(1));
        assert_eq!(header.resolve("2024"), Ok(2));
        assert_eq!(header.resolve("ID"), Err("is not a column of the sheet"));
    }

    #[test]
    fn duplicate_names_are_ambiguous_and_read_once() {
        let s = sheet(vec![vec![
            Cell::Text("a".into()),
            Cell::Text("b".into()),
            Cell::Text("a".into()),
        ]]);
        let header = Header::of(&s).expect("has a header");
        assert!(header.resolve("a").is_err());
        let names: Vec<_> = header.readable().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
    }
}
