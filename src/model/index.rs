//! The rows of a long sheet by the number one column holds, so that a
//! filter `column:eq:number` (how scripts find a row by its id) finds its
//! rows without reading every row's cells: on a sheet of 100k rows that
//! read waits on memory for each row, about 100 ns a row on the
//! development machine.
//!
//! The index is built by the second such filter on a column that no edit
//! changed since the first (the first reads every row), when the sheet has
//! no edit since the last commit. It is kept with the sheet, following the
//! rows that move, until an edit changes a cell of its column
//! ([`Indexes::follow`], from the edits' log the saves rely on).
//! It only narrows the rows to look at: every row it gives is matched
//! against the filters again.

use std::sync::{Arc, Mutex, PoisonError};

use super::filter::number_key;
use super::formula::{RowMove, moved_through};
use super::{Cell, Edited};

/// Sheets with fewer rows than this are read row by row.
pub(super) const MIN_INDEXED_ROWS: usize = 50_000;

/// One column's rows, by the number each holds.
#[derive(Debug)]
pub(super) struct NumberIndex {
    column: usize,
    /// Each number's [`number_key`] and its row, sorted.
    numbers: Vec<(u64, u32)>,
    /// The rows whose cell is neither empty nor a number: a text cell may
    /// equal a number's text, so these are always looked at.
    others: Vec<u32>,
}

impl NumberIndex {
    fn of(rows: &[Vec<Cell>], column: usize) -> NumberIndex {
        let mut numbers = Vec::new();
        let mut others = Vec::new();
        for (row, cells) in rows.iter().enumerate() {
            let Ok(row) = u32::try_from(row) else { break };
            match cells.get(column).map_or(&Cell::Empty, Cell::value) {
                Cell::Number(n) => numbers.push((number_key(*n), row)),
                cell if cell.is_blank() => {}
                _ => others.push(row),
            }
        }
        numbers.sort_unstable();
        NumberIndex::new(column, numbers, others)
    }

    /// The index of these entries, holding no more memory than they take
    /// (see [`Indexes::most_bytes`]).
    fn new(column: usize, mut numbers: Vec<(u64, u32)>, mut others: Vec<u32>) -> NumberIndex {
        numbers.shrink_to_fit();
        others.shrink_to_fit();
        NumberIndex {
            column,
            numbers,
            others,
        }
    }

    /// The memory the entries hold.
    fn bytes(&self) -> usize {
        self.numbers.capacity() * size_of::<(u64, u32)>()
            + self.others.capacity() * size_of::<u32>()
    }

    /// The rows, ascending, whose cell may equal `value` under an `eq`:
    /// those holding that number and those holding something else than a
    /// number. (An empty cell equals only the empty value; a number cell is
    /// compared as a number.)
    pub(super) fn candidates(&self, value: f64) -> Vec<usize> {
        let key = number_key(value);
        let from = self.numbers.partition_point(|&(k, _)| k < key);
        let mut rows: Vec<usize> = self.numbers[from..]
            .iter()
            .take_while(|&&(k, _)| k == key)
            .map(|&(_, row)| row as usize)
            .chain(self.others.iter().map(|&row| row as usize))
            .collect();
        rows.sort_unstable();
        rows
    }

    /// The index after `moves`: each row where it went, the rows deleted
    /// gone. (A move keeps the rows' order, so the entries stay sorted.)
    fn moved(&self, moves: &[RowMove]) -> NumberIndex {
        let to = |row: u32| moved_through(moves, row);
        NumberIndex::new(
            self.column,
            (self.numbers.iter())
                .filter_map(|&(key, row)| Some((key, to(row)?)))
                .collect(),
            self.others.iter().filter_map(|&row| to(row)).collect(),
        )
    }
}

/// A sheet's index, if one was built; not part of what the sheet holds
/// (two sheets with the same cells are equal whatever their indexes).
#[derive(Debug, Default)]
pub struct Indexes(Mutex<Slot>);

#[derive(Debug, Default, Clone)]
enum Slot {
    #[default]
    Empty,
    /// A filter looked for a number in this column, and read every row:
    /// the next one builds the index, if no edit of the column came
    /// between (so that a column filtered once never pays for one).
    Wanted(usize),
    Built(Arc<NumberIndex>),
}

impl Slot {
    fn column(&self) -> Option<usize> {
        match self {
            Slot::Empty => None,
            Slot::Wanted(column) => Some(*column),
            Slot::Built(index) => Some(index.column),
        }
    }
}

impl Indexes {
    /// The memory to count for the index of a sheet of `rows` rows, in
    /// the cache's estimate: what the one built holds (it may have been
    /// built when the sheet was longer), and at least the most a sheet
    /// that long may give one, whether or not a filter built it yet (a
    /// read builds it without telling the cache).
    pub(super) fn bytes(&self, rows: usize) -> usize {
        let most = match rows < MIN_INDEXED_ROWS {
            true => 0,
            false => rows * size_of::<(u64, u32)>(),
        };
        match &*self.slot() {
            Slot::Built(index) => index.bytes().max(most),
            _ => most,
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The index of `column` over `rows`: the one kept, or one built now
    /// if the last filter on the sheet wanted it too; `None` (read every
    /// row) the first time.
    pub(super) fn of_column(&self, rows: &[Vec<Cell>], column: usize) -> Option<Arc<NumberIndex>> {
        let mut slot = self.slot();
        match &*slot {
            Slot::Built(index) if index.column == column => Some(Arc::clone(index)),
            Slot::Wanted(wanted) if *wanted == column => {
                let index = Arc::new(NumberIndex::of(rows, column));
                *slot = Slot::Built(Arc::clone(&index));
                Some(index)
            }
            _ => {
                *slot = Slot::Wanted(column);
                None
            }
        }
    }

    /// Brings the index up to `edited`, the edits made since: it follows
    /// the rows that moved, and is forgotten (with the wish for one) when
    /// a cell of its column changed or a table grew.
    pub(super) fn follow(&self, edited: &Edited) {
        let mut slot = self.slot();
        let Some(column) = slot.column() else {
            return;
        };
        let changed = edited.grown
            || edited
                .cells
                .iter()
                .any(|&(_, changed)| changed as usize == column)
            // Rows moved without saying where: they could be anywhere.
            || (edited.moved && edited.moves.is_empty());
        if changed {
            *slot = Slot::Empty;
        } else if let Slot::Built(index) = &*slot
            && !edited.moves.is_empty()
        {
            *slot = Slot::Built(Arc::new(index.moved(&edited.moves)));
        }
    }
}

impl Clone for Indexes {
    /// The same index: the copy has the same cells.
    fn clone(&self) -> Indexes {
        Indexes(Mutex::new(self.slot().clone()))
    }
}

impl PartialEq for Indexes {
    fn eq(&self, _: &Indexes) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidates_are_the_rows_of_that_number_and_every_row_not_a_number() {
        let rows: Vec<Vec<Cell>> = vec![
            vec![Cell::Text("id".into())],
            vec![Cell::Number(5.0)],
            vec![],
            vec![Cell::Number(-0.0)],
            vec![Cell::Number(7.0)],
            vec![Cell::Text("5".into())],
            vec![Cell::Number(5.0), Cell::Number(1.0)],
            vec![Cell::Empty],
        ];
        let index = NumberIndex::of(&rows, 0);
        assert_eq!(index.candidates(5.0), [0, 1, 5, 6]);
        assert_eq!(index.candidates(0.0), [0, 3, 5]);
        assert_eq!(index.candidates(8.0), [0, 5]);
        let second = NumberIndex::of(&rows, 1);
        assert_eq!(second.candidates(1.0), [6]);
    }

    #[test]
    fn the_cache_counts_at_least_what_an_index_holds() {
        let rows: Vec<Vec<Cell>> = (0..MIN_INDEXED_ROWS)
            .map(|n| match n % 3 {
                0 => vec![Cell::Text("x".into())],
                _ => vec![Cell::Number(n as f64)],
            })
            .collect();
        let counted = |indexes: &Indexes| indexes.bytes(rows.len());
        let indexes = Indexes::default();
        let unbuilt = counted(&indexes);
        let index = NumberIndex::of(&rows, 0);
        assert!(index.bytes() <= unbuilt, "{} > {unbuilt}", index.bytes());
        assert_eq!(Indexes::default().bytes(MIN_INDEXED_ROWS - 1), 0);
        // One built is counted as it is once its sheet is shorter.
        indexes.of_column(&rows, 0);
        indexes.of_column(&rows, 0).expect("built");
        assert_eq!(indexes.bytes(10), index.bytes());
    }

    #[test]
    fn the_index_follows_the_rows_that_move() {
        let rows: Vec<Vec<Cell>> = (0..8u32)
            .map(|n| vec![Cell::Number(f64::from(n % 4))])
            .chain([vec![Cell::Text("x".into())]])
            .collect();
        let indexes = Indexes::default();
        indexes.of_column(&rows, 0);
        indexes.of_column(&rows, 0).expect("built");
        // Rows 2 and 6 (1-based) go, then one row comes before row 1.
        let moves = vec![
            RowMove::Deleted(vec![2, 6]),
            RowMove::Inserted {
                before: 1,
                count: 1,
            },
        ];
        indexes.follow(&Edited {
            moved: true,
            moves: moves.clone(),
            ..Edited::default()
        });
        let mut moved: Vec<Vec<Cell>> = rows.clone();
        for gone in [5, 1] {
            moved.remove(gone);
        }
        moved.insert(0, Vec::new());
        let index = indexes.of_column(&moved, 0).expect("kept");
        let rebuilt = NumberIndex::of(&moved, 0);
        for value in [0.0, 1.0, 2.0, 3.0, 9.0] {
            assert_eq!(
                index.candidates(value),
                rebuilt.candidates(value),
                "{value}"
            );
        }
    }

    #[test]
    fn the_second_filter_builds_the_index_and_an_edit_of_its_column_forgets_it() {
        let rows = vec![vec![Cell::Number(1.0), Cell::Number(2.0)]];
        let indexes = Indexes::default();
        assert!(
            indexes.of_column(&rows, 0).is_none(),
            "the first reads every row"
        );
        let built = indexes.of_column(&rows, 0).expect("the second builds it");
        let other_column = Edited {
            cells: vec![(0, 1)],
            ..Edited::default()
        };
        indexes.follow(&other_column);
        let kept = indexes.of_column(&rows, 0).expect("kept");
        assert!(Arc::ptr_eq(&built, &kept));
        let same_column = Edited {
            cells: vec![(0, 0)],
            ..Edited::default()
        };
        indexes.follow(&same_column);
        assert!(matches!(*indexes.slot(), Slot::Empty));
        // Rows moved without saying where: forgotten.
        assert!(indexes.of_column(&rows, 0).is_none());
        indexes.follow(&Edited {
            moved: true,
            ..Edited::default()
        });
        assert!(indexes.of_column(&rows, 0).is_none());
        // Another column wanted: the index of the first goes.
        assert!(indexes.of_column(&rows, 0).is_some());
        assert!(indexes.of_column(&rows, 1).is_none());
        assert!(matches!(*indexes.slot(), Slot::Wanted(1)));
    }
}
