//! The cells a workbook's formulas read. The engine is given the formulas
//! and these cells only: a sheet of 10 columns whose formulas read 3 is
//! evaluated at about half the cost (IronCalc walks every cell it holds at
//! each evaluation).

use std::collections::HashMap;

use super::At;
use crate::model::Workbook;
use crate::model::formula::{Area, References};

/// Areas wider than this many columns are kept as whole rows.
const MAX_COLUMNS_EACH: u32 = 64;

#[derive(Debug, Default)]
pub struct Reads {
    /// A formula reads cells its text does not tell (a defined name,
    /// `INDIRECT`): every cell counts as read.
    everything: bool,
    sheets: Vec<SheetReads>,
}

/// Row intervals (0-based, inclusive), sorted and disjoint.
type Intervals = Vec<(u32, u32)>;

#[derive(Debug, Default, Clone)]
struct SheetReads {
    /// Rows read in every column.
    rows: Intervals,
    /// Rows read, by 0-based column.
    columns: HashMap<u32, Intervals>,
}

impl Reads {
    pub fn new(sheets: usize) -> Reads {
        Reads {
            everything: false,
            sheets: vec![SheetReads::default(); sheets],
        }
    }

    /// How many sheets it was made for.
    pub fn sheets(&self) -> usize {
        self.sheets.len()
    }

    /// Adds what a formula on sheet `home` reads.
    pub fn add(&mut self, workbook: &Workbook, home: usize, refers: &References) {
        let areas = match refers {
            References::Anything => {
                self.everything = true;
                return;
            }
            References::Areas(areas) => areas,
        };
        for area in areas {
            let Some(sheet) = sheet_of(workbook, home, area) else {
                continue;
            };
            let rows = (area.rows.0.saturating_sub(1), area.rows.1.saturating_sub(1));
            let reads = &mut self.sheets[sheet];
            if area.columns.1 - area.columns.0 >= MAX_COLUMNS_EACH {
                insert(&mut reads.rows, rows);
            } else {
                for column in area.columns.0..=area.columns.1 {
                    insert(reads.columns.entry(column - 1).or_default(), rows);
                }
            }
        }
    }

    /// Whether a formula reads the cell.
    pub fn contains(&self, (sheet, row, column): At) -> bool {
        if self.everything {
            return true;
        }
        let Some(reads) = self.sheets.get(sheet) else {
            return false;
        };
        holds(&reads.rows, row)
            || reads
                .columns
                .get(&column)
                .is_some_and(|rows| holds(rows, row))
    }
}

/// The index of the sheet an area of a formula on sheet `home` is on, if
/// the workbook has it (names compare without case).
pub fn sheet_of(workbook: &Workbook, home: usize, area: &Area) -> Option<usize> {
    match &area.sheet {
        None => Some(home),
        Some(name) => workbook.sheet_index(name).ok(),
    }
}

fn holds(intervals: &Intervals, row: u32) -> bool {
    let after = intervals.partition_point(|&(first, _)| first <= row);
    after > 0 && intervals[after - 1].1 >= row
}

/// Adds an interval, merging it with those it touches.
fn insert(intervals: &mut Intervals, (first, last): (u32, u32)) {
    let start = intervals.partition_point(|&(_, end)| end.saturating_add(1) < first);
    let end = intervals.partition_point(|&(begin, _)| begin <= last.saturating_add(1));
    let merged = intervals[start..end]
        .iter()
        .fold((first, last), |(a, b), &(c, d)| (a.min(c), b.max(d)));
    intervals.splice(start..end, [merged]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sheet;

    #[test]
    fn an_area_is_on_its_own_sheet_or_the_one_it_names() {
        let workbook = Workbook {
            sheets: vec![Sheet::new("Orders", vec![]), Sheet::new("My Sheet", vec![])],
            ..Workbook::default()
        };
        let area = |sheet: Option<&str>| Area {
            sheet: sheet.map(str::to_owned),
            rows: (1, 1),
            columns: (1, 1),
        };
        assert_eq!(sheet_of(&workbook, 1, &area(None)), Some(1));
        assert_eq!(sheet_of(&workbook, 0, &area(Some("MY SHEET"))), Some(1));
        assert_eq!(sheet_of(&workbook, 0, &area(Some("Other"))), None);
    }

    #[test]
    fn intervals_merge_and_answer() {
        let mut intervals = Intervals::new();
        for interval in [(10, 12), (0, 2), (4, 5), (3, 3), (20, 30), (11, 21)] {
            insert(&mut intervals, interval);
        }
        assert_eq!(intervals, [(0, 5), (10, 30)]);
        assert!(holds(&intervals, 0) && holds(&intervals, 5) && holds(&intervals, 30));
        assert!(!holds(&intervals, 6) && !holds(&intervals, 31));
    }
}
