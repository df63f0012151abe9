//! Rows that only moved, saved without writing them again.
//!
//! When rows are deleted or inserted, every row below moves, and in the
//! file each of them carries its number: the row's `r` and each of its
//! cells'. What else a row holds does not depend on where it is, except
//! formulas, whose references may shift with it. So the rows of the kept
//! chunks from the first that moved are taken as they were saved, with
//! their numbers changed ([`renumber`]); only the rows the batch changed,
//! the rows inserted and those with a formula that names cells go through
//! the writer, in the window. The save then costs inflating and
//! compressing again the rows that moved, not writing them.

use std::io;
use std::sync::LazyLock;

use memchr::memmem;

use super::deflate::Deflater;
use super::{CELL, Chunk, Numbering, ROW, SavedSheet, each_row, has_content, leans};
use crate::model::RowsChanged;
use crate::model::formula::{RowMove, moved_from_any_stage, moved_through};
use crate::model::layout;

/// How the rows of a sheet from one of its chunks down are saved after
/// rows were deleted or inserted.
pub(super) struct Moved {
    /// The first chunk whose rows may have moved: it and every chunk after
    /// it are made again.
    pub(super) from_chunk: usize,
    moves: Vec<RowMove>,
    /// The rows (as numbered now, 0-based, in order) from that chunk's
    /// first down that the window writes: those with a changed cell, and
    /// those whose formula may read other rows…
    pub(super) window: Vec<u32>,
    /// … and every row from this one down: rows appended, which may have
    /// only formats and no cell logged.
    pub(super) window_from: u32,
    /// Whether a row may lean on the row before.
    lean: bool,
}

impl Moved {
    /// The plan for a sheet kept as `sheet` after a batch that `changed`
    /// it and moved rows; whether its rows may `lean` on the row before.
    pub(super) fn plan(sheet: &SavedSheet, changed: &RowsChanged, lean: bool) -> Option<Moved> {
        let from = changed.moved_from()?;
        if sheet.chunks.is_empty() {
            return None;
        }
        let moves = changed.moves.clone();
        let from_chunk = sheet.chunk_of(from);
        let start = sheet.span(from_chunk).start;
        let mut window: Vec<u32> = (sheet.chunks[from_chunk..].iter())
            .flat_map(|chunk| &chunk.formulas)
            .filter_map(|&row| moved_row(&moves, 0, row))
            .collect();
        // A changed row is numbered as the sheet was when it changed: it
        // is taken at each numbering it could have had.
        for &row in &changed.logged {
            window.extend(moved_from_any_stage(&moves, row));
        }
        window.extend(changed.rows.iter().copied().filter(|&row| row >= start));
        // Rows inserted are new, with or without cells.
        for (stage, moved) in moves.iter().enumerate() {
            if let RowMove::Inserted { before, count } = *moved {
                let new = before.saturating_sub(1)..before.saturating_sub(1).saturating_add(count);
                window.extend(new.filter_map(|row| moved_row(&moves, stage + 1, row)));
            }
        }
        window.sort_unstable();
        window.dedup();
        // A row at or below the extent before, at any point of the moves,
        // is at most as many rows higher now as were deleted (inserts push
        // rows down).
        let deleted: usize = (moves.iter())
            .map(|m| match m {
                RowMove::Deleted(rows) => rows.len(),
                RowMove::Inserted { .. } => 0,
            })
            .sum();
        let window_from = (changed.extent.saturating_sub(deleted) as u32).max(start);
        window.retain(|&row| row < window_from);
        Some(Moved {
            from_chunk,
            moves,
            window,
            window_from,
            lean,
        })
    }

    /// The dimension `kept` of the last save, its last row moved down by
    /// the rows inserted above it (or, once deleted itself, by every row
    /// inserted).
    pub(super) fn dimension(&self, kept: Option<layout::Range>) -> Option<layout::Range> {
        let mut range = kept?;
        let inserted: u32 = (self.moves.iter())
            .map(|m| match m {
                RowMove::Inserted { count, .. } => *count,
                RowMove::Deleted(_) => 0,
            })
            .sum();
        range.last_row = moved_row(&self.moves, 0, range.last_row)
            .map_or(range.last_row.saturating_add(inserted), |row| {
                row.max(range.last_row)
            });
        Some(range)
    }

    /// Whether the window writes row `row` (as numbered now).
    pub(super) fn writes(&self, row: u32) -> bool {
        row >= self.window_from || self.window.binary_search(&row).is_ok()
    }

    /// The chunks that take the place of `sheet`'s from [`Moved::from_chunk`]
    /// down: its rows that are left, numbered as they are now, with the
    /// window's `written` rows (in order) in place of those in
    /// [`Moved::window`]. `None` when a kept row is not as this expects.
    ///
    /// The kept chunks are shared out in runs, one a core, each numbered
    /// and compressed on a thread of its own: at 100k rows compressing
    /// takes about twice as long as inflating and numbering, and a thread
    /// that waits for another's chunks waits again for each.
    pub(super) fn chunks(
        &self,
        sheet: &SavedSheet,
        written: &[(u32, &[u8])],
        chunk_bytes: usize,
    ) -> io::Result<Option<Vec<Chunk>>> {
        let written: Vec<(u32, &[u8])> = (written.iter().copied())
            .filter(|(row, _)| self.writes(*row))
            .collect();
        let kept = &sheet.chunks[self.from_chunk..];
        let threads = crate::cores();
        // Chunks whose rows all lean are mostly kept as they are: only the
        // others are worth a thread.
        let numbered = kept.iter().filter(|c| c.numbering.numbered).count();
        let runs = threads.min(numbered / MIN_RUN_CHUNKS).max(1);
        // Run `i` takes the rows kept from its first chunk's first row down
        // to the next run's, and the rows written from the number the
        // first of them has now down to the next run's.
        let cuts: Vec<(usize, u32)> = (0..runs)
            .map(|run| {
                let chunk = run * kept.len() / runs;
                let now = match run {
                    0 => sheet.span(self.from_chunk).start,
                    _ => moved_bound(&self.moves, kept[chunk].first_row),
                };
                (chunk, now)
            })
            .collect();
        let run = |index: usize| {
            let (chunk, first_row) = cuts[index];
            let (end, below) = cuts.get(index + 1).map_or((kept.len(), u32::MAX), |c| *c);
            let from = written.partition_point(|(row, _)| *row < first_row);
            let to = written.partition_point(|(row, _)| *row < below);
            // The chunk above the run's first, as saved.
            let above = (self.from_chunk + chunk)
                .checked_sub(1)
                .map(|c| &sheet.chunks[c]);
            // The first run follows rows that did not move; a run after
            // it, rows another thread numbers: its first row says its
            // number.
            let follows = match index {
                0 => above.map(|c| (c.last_row, c.numbering.open_end)),
                _ => None,
            };
            let out = Chunks::new(first_row, chunk_bytes, follows, self.lean);
            let before = above.map(|c| c.last_row);
            self.number(&kept[chunk..end], before, &written[from..to], out)
        };
        let made: Vec<io::Result<Option<Vec<Chunk>>>> = std::thread::scope(|scope| {
            let others: Vec<_> = (1..runs)
                .map(|index| scope.spawn(move || run(index)))
                .collect();
            let first = run(0);
            let others = others.into_iter().map(|thread| {
                (thread.join())
                    .unwrap_or_else(|_| Err(io::Error::other("numbering rows that moved panicked")))
            });
            std::iter::once(first).chain(others).collect()
        });
        let mut chunks: Vec<Chunk> = Vec::new();
        for run in made {
            let Some(made) = run? else {
                return Ok(None);
            };
            let mut made = made.into_iter().peekable();
            // The run above was cut short where this one begins: its last
            // chunk and this one's first (whose first row says its number)
            // are joined, so that saves leave no small chunks behind.
            let short = |c: &mut Chunk| (c.segment.len as usize) < chunk_bytes;
            if let Some(short) = chunks.pop_if(short) {
                chunks.push(
                    match made.next_if(|next| next.numbering.leans_from.is_none()) {
                        Some(next) => short.joined(next)?,
                        None => short,
                    },
                );
            }
            chunks.extend(made);
        }
        // Runs above that kept no row leave the first chunk's span where
        // the first run's began.
        if let Some(first) = chunks.first_mut() {
            first.first_row = cuts[0].1;
        }
        Ok(Some(chunks))
    }

    /// The rows of the `kept` chunks (after the row numbered `before`, if
    /// any, as saved), numbered as they are now, with the window's
    /// `written` rows (in order, each of them between the first of those
    /// and the first of the next run's) in place of those it writes: made
    /// into chunks by `out`. A kept chunk whose rows all lean, all moved
    /// alike and none written, is kept as it was compressed. `None` when a
    /// kept row is not as this expects.
    fn number(
        &self,
        kept: &[Chunk],
        mut before: Option<u32>,
        written: &[(u32, &[u8])],
        mut out: Chunks,
    ) -> io::Result<Option<Vec<Chunk>>> {
        let mut written = written.iter().peekable();
        for chunk in kept {
            if let Some((first, last)) = self.moved_whole(chunk) {
                while let Some((row, xml)) = written.next_if(|(row, _)| *row < first) {
                    out.push(*row, xml)?;
                }
                if out.keep(chunk, first, last)? {
                    before = Some(chunk.last_row);
                    continue;
                }
            }
            let xml = chunk.segment.inflate()?;
            for (old, row) in each_row(&xml, before) {
                let Some(new) = moved_row(&self.moves, 0, old) else {
                    continue;
                };
                if self.writes(new) {
                    continue;
                }
                while let Some((row, xml)) = written.next_if(|(row, _)| *row < new) {
                    out.push(*row, xml)?;
                }
                if !out.push_moved(new, row, old)? {
                    return Ok(None);
                }
            }
            before = Some(chunk.last_row);
        }
        for (row, xml) in written {
            out.push(*row, xml)?;
        }
        out.finish().map(Some)
    }

    /// Where the first and last rows of `chunk` are now (0-based) when
    /// every row of it leans, the moves took each of them alike, and the
    /// window writes none: its rows can stay as they were compressed.
    fn moved_whole(&self, chunk: &Chunk) -> Option<(u32, u32)> {
        let numbering = chunk.numbering;
        let first = numbering.leans_from.filter(|_| !numbering.numbered)?;
        let (now_first, now_last) = (
            moved_row(&self.moves, 0, first)?,
            moved_row(&self.moves, 0, chunk.last_row)?,
        );
        // Rows deleted among them would draw them closer; rows inserted
        // among them are written.
        let alike = now_last.checked_sub(now_first) == chunk.last_row.checked_sub(first);
        let at = self.window.partition_point(|&row| row < now_first);
        let writes =
            now_last >= self.window_from || self.window.get(at).is_some_and(|&r| r <= now_last);
        (alike && !writes && chunk.formulas.is_empty()).then_some((now_first, now_last))
    }
}

/// The fewest kept chunks a thread numbers: fewer are not worth a thread.
const MIN_RUN_CHUNKS: usize = 4;

/// The number (0-based) the moves give the first row at or below `row`
/// (0-based, numbered before them) that they keep, or would give it if
/// there were one: every kept row above `row` ends above it, every one
/// from it down at or below it, and so does every row they insert.
fn moved_bound(moves: &[RowMove], row: u32) -> u32 {
    let mut number = row.saturating_add(1);
    for moved in moves {
        number = match *moved {
            RowMove::Deleted(ref deleted) => {
                number - deleted.partition_point(|&d| d < number) as u32
            }
            RowMove::Inserted { before, count } if number >= before => number.saturating_add(count),
            RowMove::Inserted { .. } => number,
        };
    }
    number - 1
}

/// Where row `row` (0-based), numbered as the sheet was after the first
/// `stage` of `moves`, is after them all; `None` once deleted.
fn moved_row(moves: &[RowMove], stage: usize, row: u32) -> Option<u32> {
    moved_through(&moves[stage.min(moves.len())..], row)
}

/// Appends to `out` `row`, a `<row>` element numbered `old` (1-based)
/// whose cells all carry their reference first, numbered `new`: its `r`
/// and each cell's. False, with part of it appended, when it is not such
/// an element.
pub(super) fn renumber(row: &[u8], old: u32, new: u32, out: &mut Vec<u8>) -> bool {
    static ELEMENT: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"<c"));
    let (mut old_digits, mut new_digits) = ([0; 10], [0; 10]);
    let (old, new) = (decimal(old, &mut old_digits), decimal(new, &mut new_digits));
    let numbered = |at: usize| {
        let rest = row.get(at..)?;
        (rest.strip_prefix(old)?.first() == Some(&b'"')).then_some(at + old.len())
    };
    let Some(mut at) = row.strip_prefix(ROW).and_then(|_| numbered(ROW.len())) else {
        return false;
    };
    out.extend_from_slice(ROW);
    out.extend_from_slice(new);
    let mut from = at;
    while let Some(found) = ELEMENT.find(&row[from..]).map(|found| from + found) {
        let rest = &row[found..];
        if !rest.starts_with(CELL) {
            // Another element named `c…`, or a cell whose reference is not
            // its first attribute.
            match rest.get(2) {
                Some(b' ' | b'>' | b'/') => return false,
                _ => {
                    from = found + 2;
                    continue;
                }
            }
        }
        let letters = found + CELL.len();
        let digits = letters
            + row[letters..]
                .iter()
                .take_while(|b| b.is_ascii_uppercase())
                .count();
        let Some(past) = numbered(digits) else {
            return false;
        };
        out.extend_from_slice(&row[at..digits]);
        out.extend_from_slice(new);
        at = past;
        from = past;
    }
    out.extend_from_slice(&row[at..]);
    true
}

/// Appends to `out` `row`, a `<row>` element numbered `number` (1-based)
/// whose cells all carry their reference first, without its numbers: its
/// `r` and its cells' left out, so that it leans on the row before. False
/// unless its cells are in the columns from A on, one after another, and
/// each has content (a reader that counts cells skips an empty `<c/>`).
fn lean(row: &[u8], number: u32, out: &mut Vec<u8>) -> bool {
    let mut digits = [0; 10];
    let digits = decimal(number, &mut digits);
    let numbered = |at: usize| {
        let rest = row.get(at..)?;
        (rest.strip_prefix(digits)?.first() == Some(&b'"')).then_some(at + digits.len() + 1)
    };
    let Some(mut at) = row.strip_prefix(ROW).and_then(|_| numbered(ROW.len())) else {
        return false;
    };
    if !has_content(row) {
        return false;
    }
    out.extend_from_slice(b"<row");
    for (column, found) in cells(row, at).enumerate() {
        let Some(letters) = row[found..].strip_prefix(CELL) else {
            return false;
        };
        let length = letters
            .iter()
            .take_while(|b| b.is_ascii_uppercase())
            .count();
        // Column A is 1, AB 28 (a reference has at most three letters).
        let named = (letters[..length.min(3)].iter())
            .fold(0usize, |n, b| n * 26 + usize::from(b - b'A' + 1));
        let past = found + CELL.len() + length;
        let Some(past) = numbered(past).filter(|_| length <= 3 && named == column + 1) else {
            return false;
        };
        let closed = memchr::memchr(b'>', &row[past..]).map(|end| row[past + end - 1] == b'/');
        if closed != Some(false) {
            return false;
        }
        // `<c` kept, ` r="…"` left out.
        out.extend_from_slice(&row[at..found + 2]);
        at = past;
    }
    out.extend_from_slice(&row[at..]);
    true
}

/// Appends to `out` `row`, a `<row>` element that leans, saying its number
/// `number` (1-based): in its `r` and its cells', each in the column after
/// the one before, from A. False when a cell already says where it is.
pub(super) fn number(row: &[u8], number: u32, out: &mut Vec<u8>) -> bool {
    let mut digits = [0; 10];
    let digits = decimal(number, &mut digits);
    let Some(rest) = row.strip_prefix(b"<row").filter(|_| leans(row)) else {
        return false;
    };
    out.extend_from_slice(ROW);
    out.extend_from_slice(digits);
    out.push(b'"');
    let mut at = row.len() - rest.len();
    for (column, found) in (1..).zip(cells(row, at)) {
        if row[found..].starts_with(CELL) {
            return false;
        }
        out.extend_from_slice(&row[at..found + 2]);
        out.extend_from_slice(b" r=\"");
        out.extend_from_slice(crate::model::formula::column_letters(column).as_bytes());
        out.extend_from_slice(digits);
        out.push(b'"');
        at = found + 2;
    }
    out.extend_from_slice(&row[at..]);
    true
}

/// Where each cell element `<c …>` of `row` starts, from `from` on (other
/// elements whose names begin with `c`, such as a rich text's `<color>`,
/// are passed over).
fn cells(row: &[u8], from: usize) -> impl Iterator<Item = usize> + '_ {
    static ELEMENT: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"<c"));
    (ELEMENT.find_iter(&row[from..]))
        .map(move |found| from + found)
        .filter(|&found| matches!(row.get(found + 2), Some(b' ' | b'>' | b'/')))
}

/// `n` in decimal digits, written at the end of `digits`.
fn decimal(mut n: u32, digits: &mut [u8; 10]) -> &[u8] {
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[start..];
        }
    }
}

/// Rows given in order, cut into chunks of about `chunk_bytes` and
/// compressed, each with its first row. A row that follows a row with
/// content numbered one less leans on it where it can: it is written
/// without its numbers.
struct Chunks {
    deflater: Deflater,
    made: Vec<Chunk>,
    chunk_bytes: usize,
    /// The first row of the next chunk.
    first_row: u32,
    raw: Vec<u8>,
    /// The number of the row before those in `raw`.
    raw_after: Option<u32>,
    /// The number (0-based) of the last row given, and whether it has
    /// content.
    last: Option<(u32, bool)>,
    /// Whether a row may lean on the row before.
    lean: bool,
}

impl Chunks {
    /// Chunks whose first starts at `first_row`, after the row `last` if
    /// any (its number, and whether it has content); whether a row may
    /// `lean` on the row before.
    fn new(first_row: u32, chunk_bytes: usize, last: Option<(u32, bool)>, lean: bool) -> Chunks {
        Chunks {
            deflater: Deflater::new(),
            made: Vec::new(),
            chunk_bytes,
            first_row,
            raw: Vec::with_capacity(chunk_bytes + chunk_bytes / 4),
            raw_after: last.map(|(row, _)| row),
            last,
            lean,
        }
    }

    /// Row `row` as the window wrote it, saying its number.
    fn push(&mut self, row: u32, xml: &[u8]) -> io::Result<()> {
        self.start(row);
        let mark = self.raw.len();
        if !(self.follows(row) && lean(xml, row + 1, &mut self.raw)) {
            self.raw.truncate(mark);
            self.raw.extend_from_slice(xml);
        }
        self.end(row, xml)
    }

    /// The kept `row` numbered `old` (0-based) as saved, numbered `new`:
    /// leaning on the row before when it follows it, else saying its
    /// number. False when it is not a row as this writes them.
    fn push_moved(&mut self, new: u32, row: &[u8], old: u32) -> io::Result<bool> {
        self.start(new);
        let mark = self.raw.len();
        let done = match (leans(row), self.follows(new)) {
            (true, true) => {
                self.raw.extend_from_slice(row);
                true
            }
            (true, false) => number(row, new + 1, &mut self.raw),
            (false, true) => {
                lean(row, old + 1, &mut self.raw) || {
                    self.raw.truncate(mark);
                    renumber(row, old + 1, new + 1, &mut self.raw)
                }
            }
            (false, false) => renumber(row, old + 1, new + 1, &mut self.raw),
        };
        if !done {
            return Ok(false);
        }
        self.end(new, row).map(|()| true)
    }

    /// Keeps `chunk`, whose rows all lean, as it was compressed, its rows
    /// now numbered `first` to `last`, when its first row follows the last
    /// given. False, with nothing kept, when it does not.
    fn keep(&mut self, chunk: &Chunk, first: u32, last: u32) -> io::Result<bool> {
        // A small chunk, or one after few rows given, is written again
        // with them: kept, small chunks would stay small.
        let half = self.chunk_bytes / 2;
        let small = (chunk.segment.len as usize) < half || (1..half).contains(&self.raw.len());
        if small || !self.follows(first) {
            return Ok(false);
        }
        if !self.raw.is_empty() {
            self.cut()?;
        }
        let first_row = match self.made.is_empty() {
            true => self.first_row,
            false => first,
        };
        self.made.push(Chunk {
            first_row,
            last_row: last,
            formulas: Vec::new(),
            numbering: Numbering {
                leans_from: Some(first),
                ..chunk.numbering
            },
            segment: chunk.segment.clone(),
        });
        self.last = Some((last, chunk.numbering.open_end));
        self.raw_after = self.last.map(|(row, _)| row);
        Ok(true)
    }

    /// Whether row `row` (0-based) can lean on the last row given.
    fn follows(&self, row: u32) -> bool {
        self.lean && row > 0 && self.last == Some((row - 1, true))
    }

    fn start(&mut self, row: u32) {
        if self.raw.is_empty() && !self.made.is_empty() {
            self.first_row = row;
        }
    }

    fn end(&mut self, row: u32, xml: &[u8]) -> io::Result<()> {
        self.last = Some((row, has_content(xml)));
        match self.raw.len() >= self.chunk_bytes {
            true => self.cut(),
            false => Ok(()),
        }
    }

    fn cut(&mut self) -> io::Result<()> {
        let chunk = Chunk::of(
            self.first_row,
            &self.raw,
            self.raw_after,
            &mut self.deflater,
        )?;
        self.made.push(chunk);
        self.raw.clear();
        self.raw_after = self.last.map(|(row, _)| row);
        Ok(())
    }

    fn finish(mut self) -> io::Result<Vec<Chunk>> {
        if !self.raw.is_empty() {
            self.cut()?;
        }
        Ok(self.made)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`renumber`] into a buffer of its own.
    fn renumbered(row: &[u8], old: u32, new: u32) -> Option<String> {
        let mut out = Vec::new();
        renumber(row, old, new, &mut out).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn a_row_is_numbered_again_in_its_r_and_each_cells() {
        let row = br#"<row r="9" ht="20"><c r="A9" s="1"><v>9</v></c><c r="AB9" t="inlineStr"><is><t>r="A9"</t></is></c></row>"#;
        assert_eq!(
            renumbered(row, 9, 10).expect("renumbered"),
            r#"<row r="10" ht="20"><c r="A10" s="1"><v>9</v></c><c r="AB10" t="inlineStr"><is><t>r="A9"</t></is></c></row>"#
        );
        let row = br#"<row r="1048576"><c r="XFD1048576"/></row>"#;
        assert_eq!(
            renumbered(row, 1_048_576, 7).as_deref(),
            Some(r#"<row r="7"><c r="XFD7"/></row>"#)
        );
    }

    #[test]
    fn a_row_not_as_written_is_not_numbered_again() {
        // Another number, a cell without its reference first, a cell
        // numbered otherwise.
        assert_eq!(renumbered(br#"<row r="8"><c r="A8"/></row>"#, 9, 10), None);
        assert_eq!(
            renumbered(br#"<row r="9"><c s="1" r="A9"/></row>"#, 9, 10),
            None
        );
        assert_eq!(renumbered(br#"<row r="9"><c r="A90"/></row>"#, 9, 10), None);
    }

    /// [`lean`] or [`number`] into a buffer of its own.
    fn written(with: fn(&[u8], u32, &mut Vec<u8>) -> bool, row: &[u8], n: u32) -> Option<String> {
        let mut out = Vec::new();
        with(row, n, &mut out).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn a_row_whose_cells_run_from_a_leans_and_says_its_number_again() {
        let row = br#"<row r="9" spans="1:3"><c r="A9" s="1"><v>9</v></c><c r="B9" t="inlineStr"><is><r><rPr><color rgb="FF0000"/></rPr><t>x</t></r></is></c><c r="C9"><f>A9</f><v>1</v></c></row>"#;
        let leaning = written(lean, row, 9).expect("leans");
        assert_eq!(
            leaning,
            r#"<row spans="1:3"><c s="1"><v>9</v></c><c t="inlineStr"><is><r><rPr><color rgb="FF0000"/></rPr><t>x</t></r></is></c><c><f>A9</f><v>1</v></c></row>"#
        );
        assert_eq!(
            written(number, leaning.as_bytes(), 9).as_deref(),
            Some(std::str::from_utf8(row).unwrap())
        );
    }

    #[test]
    fn a_row_with_a_gap_an_empty_cell_or_another_number_does_not_lean() {
        // B missing; C an empty element; another row's number; no cells.
        let gap = br#"<row r="2"><c r="A2"><v>1</v></c><c r="C2"><v>3</v></c></row>"#;
        let empty = br#"<row r="2"><c r="A2"><v>1</v></c><c r="B2" s="3"/></row>"#;
        let other = br#"<row r="2"><c r="A2"><v>1</v></c></row>"#;
        let bare = br#"<row r="2" ht="30" customHeight="1"/>"#;
        assert_eq!(written(lean, gap, 2), None);
        assert_eq!(written(lean, empty, 2), None);
        assert_eq!(written(lean, other, 3), None);
        assert_eq!(written(lean, bare, 2), None);
        // A row that says its number does not take it twice.
        assert_eq!(written(number, other, 2), None);
    }

    #[test]
    fn rows_move_through_every_deletion_from_the_numbering_they_had() {
        let moves = [RowMove::Deleted(vec![3]), RowMove::Deleted(vec![5, 6])];
        // 0-based row 9 (row 10) before both: up one, then two.
        assert_eq!(moved_row(&moves, 0, 9), Some(6));
        // Numbered after the first: up two.
        assert_eq!(moved_row(&moves, 1, 9), Some(7));
        assert_eq!(moved_row(&moves, 2, 9), Some(9));
        // Row 3 goes; row 6 goes after the first move made it row 5.
        assert_eq!(moved_row(&moves, 0, 2), None);
        assert_eq!(moved_row(&moves, 0, 5), None);
        assert_eq!(moved_row(&moves, 0, 1), Some(1));
    }

    #[test]
    fn a_bound_splits_the_rows_kept_and_inserted_where_the_moves_put_them() {
        // Rows 3, 5 and 6 deleted, then two inserted before row 4.
        let moves = [
            RowMove::Deleted(vec![3, 5, 6]),
            RowMove::Inserted {
                before: 4,
                count: 2,
            },
        ];
        // From 0-based row 4 (row 5, deleted with row 6) down, the first
        // kept is row 7: row 4 after the deletions, row 6 after the insert.
        assert_eq!(moved_bound(&moves, 4), 5);
        assert_eq!(moved_row(&moves, 0, 6), Some(5));
        // Every row kept above is above the bound, the rows inserted too.
        assert!(moved_row(&moves, 0, 3).is_some_and(|row| row < 5));
        assert!(moved_bound(&moves, 3) <= 3);
        // Above the insert, a kept row is its own bound.
        assert_eq!(moved_bound(&moves, 1), moved_row(&moves, 0, 1).unwrap());
        // Every row deleted from the bound's row down: where the next
        // would be.
        assert_eq!(moved_bound(&[RowMove::Deleted(vec![9, 10])], 8), 8);
    }
}
