//! Formula texts read and rewritten without evaluating them: moved as a
//! copy moves them (fill-down), adjusted when rows are deleted or inserted
//! ([`RowMove`], the one rule for where a row, a range and a reference go),
//! and the cells they may read (what the calculator needs to tell which formulas a change
//! makes stale). Where the text cannot tell, the answers err on the safe
//! side: "anything" for the cells read, a refusal for an adjustment.

/// The formula as it reads copied `rows` down and `columns` right (negative:
/// up, left), as a spreadsheet app copies it: every relative reference
/// moves (`B2` → `B3`), a `$` part stays (`$B$2`), whole rows and columns
/// move along their axis (`1:3`, `A:C`), and a reference moved off the
/// grid becomes `#REF!`. Text literals, quoted sheet names and brackets
/// (structured references, external workbooks) are left as they are.
pub fn shifted(formula: &str, rows: i64, columns: i64) -> String {
    let mut out = String::with_capacity(formula.len() + 8);
    for token in tokens(formula) {
        let text = &formula[token.start..token.end];
        let moved = match token.kind {
            Kind::Word => word_moved(formula, token, rows, columns),
            _ => None,
        };
        out.push_str(moved.as_deref().unwrap_or(text));
    }
    out
}

/// The word `token` of `formula` moved by [`moved`], unless it is a
/// function's name (a `(` follows it).
fn word_moved(formula: &str, token: Token, rows: i64, columns: i64) -> Option<String> {
    let before = formula[..token.start].chars().next_back();
    let after = formula[token.end..].chars().next();
    if after == Some('(') {
        return None;
    }
    let in_range = after == Some(':') || before == Some(':');
    moved(&formula[token.start..token.end], rows, columns, in_range)
}

/// `word` moved, when it is a reference: a cell (`$B2`), or next to a `:`
/// a whole column (`C`) or row (`3`). `None` when it is something else (a
/// name, a number, a function).
fn moved(word: &str, rows: i64, columns: i64, in_range: bool) -> Option<String> {
    let last_row = i64::from(LAST_ROW);
    let last_column = i64::from(LAST_COLUMN);
    let (column_fixed, rest) = match word.strip_prefix('$') {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    let letters = rest.chars().take_while(char::is_ascii_alphabetic).count();
    let (column_text, rest) = rest.split_at(letters);
    let (row_fixed, row_text) = match rest.strip_prefix('$') {
        Some(digits) => (true, digits),
        None => (false, rest),
    };
    let digits_only = !row_text.is_empty() && row_text.chars().all(|c| c.is_ascii_digit());
    let column = (letters > 0 && letters <= 3).then(|| i64::from(column_number(column_text)));
    let row = digits_only.then(|| row_text.parse::<i64>().ok()).flatten();
    let shift = |value: i64, by: i64, fixed: bool, last: i64| match fixed {
        true => Some(value),
        false => Some(value + by).filter(|v| (1..=last).contains(v)),
    };
    let column_name = |n: i64| column_letters(n as u32);
    let dollar = |fixed: bool| if fixed { "$" } else { "" };
    let text = match (column, row) {
        (Some(c), Some(r)) if c <= last_column && r <= last_row => {
            match (
                shift(c, columns, column_fixed, last_column),
                shift(r, rows, row_fixed, last_row),
            ) {
                (Some(c), Some(r)) => format!(
                    "{}{}{}{r}",
                    dollar(column_fixed),
                    column_name(c),
                    dollar(row_fixed)
                ),
                _ => "#REF!".to_owned(),
            }
        }
        (Some(c), None) if in_range && rest.is_empty() && c <= last_column => {
            match shift(c, columns, column_fixed, last_column) {
                Some(c) => format!("{}{}", dollar(column_fixed), column_name(c)),
                None => "#REF!".to_owned(),
            }
        }
        (None, Some(r)) if in_range && letters == 0 => {
            let fixed = column_fixed || row_fixed;
            match shift(r, rows, fixed, last_row) {
                Some(r) => format!("{}{r}", dollar(fixed)),
                None => "#REF!".to_owned(),
            }
        }
        _ => return None,
    };
    Some(text)
}

/// A column's letters from its 1-based number: 1 is `A`, 28 is `AB`.
pub fn column_letters(column: u32) -> String {
    let mut letters = Vec::new();
    let mut n = column;
    while n > 0 {
        letters.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    letters.iter().rev().map(|&b| char::from(b)).collect()
}

/// A cell's name from its 0-based row and column: `B7` for row 6, column 1.
pub fn cell_name(row: u32, column: u32) -> String {
    format!("{}{}", column_letters(column + 1), row + 1)
}

/// A sheet's name as a reference's prefix writes it, without the `!`:
/// quoted (`'My Sheet'`, `'Bob''s'`) unless it is letters, digits and
/// underscores not starting with a digit.
pub fn quoted_sheet(name: &str) -> String {
    let plain = name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && name.chars().next().is_some_and(|c| !c.is_ascii_digit());
    match plain {
        true => name.to_owned(),
        false => format!("'{}'", name.replace('\'', "''")),
    }
}

/// The last row of a sheet.
pub const LAST_ROW: u32 = 1_048_576;
/// The last column of a sheet (`XFD`).
const LAST_COLUMN: u32 = 16_384;

/// Why a formula cannot be rewritten from its text for a row deletion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unadjustable(pub String);

/// Rows of one sheet that move: some deleted, or new ones inserted. The
/// one rule for where a row, a range and a reference go, used for cells,
/// formulas and every element that points at cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowMove {
    /// These rows (1-based, sorted, distinct) go; the rows below move up.
    Deleted(Vec<u32>),
    /// `count` new rows go before row `before` (1-based); it and every row
    /// below move down. A range that spans `before` (but does not start
    /// there) grows, as in a spreadsheet app.
    Inserted { before: u32, count: u32 },
}

/// Where the 0-based row `row` is after every one of `moves`, in order;
/// `None` once one of them deletes it (or pushes it past the last row).
pub fn moved_through(moves: &[RowMove], row: u32) -> Option<u32> {
    let mut number = row.checked_add(1)?;
    for moved in moves {
        number = moved.row(number)?;
    }
    Some(number - 1)
}

/// Every number the 0-based row `row` may have after `moves`, for a row
/// logged without saying when: numbered as the sheet was before them,
/// between two of them, or after them all.
pub fn moved_from_any_stage(moves: &[RowMove], row: u32) -> impl Iterator<Item = u32> + '_ {
    (0..=moves.len()).filter_map(move |stage| moved_through(&moves[stage..], row))
}

impl RowMove {
    /// The number row `row` (1-based) has after the move; `None` when it
    /// is deleted, or pushed past the sheet's last row.
    pub fn row(&self, row: u32) -> Option<u32> {
        match self {
            RowMove::Deleted(deleted) => {
                let above = deleted.partition_point(|&d| d < row);
                (deleted.get(above) != Some(&row)).then(|| row - count(above))
            }
            RowMove::Inserted { before, count } => match row >= *before {
                true => row.checked_add(*count).filter(|&r| r <= LAST_ROW),
                false => Some(row),
            },
        }
    }

    /// The ends rows `first` to `last` (either way round, kept) have after
    /// the move; `None` when every one of them is deleted. A range over
    /// every row is a whole column to Excel and stays as it is; one down to
    /// the last row still ends there after a delete; one pushed partly
    /// past the last row ends there.
    pub fn span(&self, first: u32, last: u32) -> Option<(u32, u32)> {
        let (top, bottom) = (first.min(last), first.max(last));
        if (top, bottom) == (1, LAST_ROW) {
            return Some((first, last));
        }
        let (top, bottom) = match self {
            RowMove::Deleted(deleted) => {
                let above = count(deleted.partition_point(|&d| d < top));
                let through = count(deleted.partition_point(|&d| d <= bottom));
                if through - above == bottom - top + 1 {
                    return None;
                }
                // A range down to the last row still ends there, as in
                // LibreOffice and Excel: the rows below move up into it.
                match bottom {
                    LAST_ROW => (top - above, LAST_ROW),
                    _ => (top - above, bottom - through),
                }
            }
            RowMove::Inserted { before, count } => {
                let moved = |row: u32| match row >= *before {
                    true => row.saturating_add(*count).min(LAST_ROW),
                    false => row,
                };
                if top >= *before && top.saturating_add(*count) > LAST_ROW {
                    return None;
                }
                (moved(top), moved(bottom))
            }
        };
        Some(if first <= last {
            (top, bottom)
        } else {
            (bottom, top)
        })
    }

    /// Moves a list kept by row (item 0 is row 1) as the rows move: the
    /// items of deleted rows go; at an insert's place, when the list
    /// reaches it, `count` items made by `new` from the items above go in.
    pub fn apply<T>(&self, items: &mut Vec<T>, mut new: impl FnMut(&[T]) -> T) {
        match self {
            RowMove::Deleted(deleted) => {
                let mut number = 0;
                items.retain(|_| {
                    number += 1;
                    deleted.binary_search(&number).is_err()
                });
            }
            &RowMove::Inserted { before, count } => {
                let at = (before - 1) as usize;
                if at <= items.len() {
                    let made: Vec<T> = (0..count).map(|_| new(&items[..at])).collect();
                    items.splice(at..at, made);
                }
            }
        }
    }
}

/// Rows moving on one sheet of a workbook, with what a formula needs to
/// know about the workbook: the order of its sheets, for 3D references.
#[derive(Debug, Clone, Copy)]
pub struct SheetRows<'a> {
    /// The sheet whose rows move.
    pub sheet: &'a str,
    /// Every sheet's name in the workbook's order, chart sheets included.
    pub order: &'a [&'a str],
    pub rows: &'a RowMove,
}

/// Whether moving rows may change `formula`'s text: a reference to cells
/// has a row number or a `:` (`A:A`); without either (`TRUE()`, a name, a
/// table column) the text stays as it is.
pub fn names_rows(formula: &str) -> bool {
    formula.bytes().any(|b| b.is_ascii_digit() || b == b':')
}

/// The formula as a spreadsheet app rewrites it once rows of one sheet
/// have moved ([`SheetRows`]), for a formula on sheet `home_sheet` ("" for
/// a defined name or a chart: its unqualified references then point at no
/// sheet and are left alone). Sheet names compare without case.
///
/// On the moved sheet a cell goes where its row goes, `$` or not, and a
/// deleted cell becomes `#REF!`, its sheet's name dropped; a range
/// (`A2:A10`, `3:5`) shrinks by its deleted rows, grows by rows inserted
/// inside it and moves with the rows above it, and becomes `#REF!` when
/// all its rows go. Whole columns (`A:A`, and `A1:A1048576`, which is the
/// same to Excel), other sheets, other workbooks (`[1]Data!A1`), names,
/// structured references, literals and function names are left as written.
///
/// Unadjustable: a 3D reference (`Alpha:Gamma!A1`) whose span includes the
/// sheet, or whose ends are not sheets of the workbook.
pub fn rows_moved(
    formula: &str,
    home_sheet: &str,
    moved: &SheetRows<'_>,
) -> Result<String, Unadjustable> {
    moved_by(formula, home_sheet, moved, false)
}

/// A defined name's formula once rows moved, as LibreOffice moves it: as
/// [`rows_moved`] with no home sheet, except that a reference with a
/// relative row (`Data!$B10`, which each cell using the name reads
/// relative to itself) is left as written.
pub fn name_rows_moved(formula: &str, moved: &SheetRows<'_>) -> Result<String, Unadjustable> {
    moved_by(formula, "", moved, true)
}

fn moved_by(
    formula: &str,
    home_sheet: &str,
    moved: &SheetRows<'_>,
    keep_relative_rows: bool,
) -> Result<String, Unadjustable> {
    if let RowMove::Deleted(deleted) = moved.rows {
        debug_assert!(
            deleted.windows(2).all(|pair| pair[0] < pair[1]),
            "deleted rows are sorted and distinct"
        );
    }
    if !names_rows(formula) {
        return Ok(formula.to_owned());
    }
    let mut out = String::with_capacity(formula.len());
    for piece in pieces(formula) {
        match piece {
            Piece::Reference(reference) => {
                let kept = keep_relative_rows && reference.target.has_relative_row();
                if kept || !points_at(&reference, home_sheet, moved)? {
                    out.push_str(reference.prefix);
                    out.push_str(reference.target_text);
                    continue;
                }
                // A reference that is gone loses its sheet too, as
                // LibreOffice writes it: it reads `Data!#REF!` as a name.
                let target = target_moved(&reference, moved.rows);
                if target != GONE {
                    out.push_str(reference.prefix);
                }
                out.push_str(&target);
            }
            Piece::Text(text) | Piece::Function(text) => out.push_str(text),
        }
    }
    Ok(out)
}

/// A table grown down (§11.1): the formula, on sheet `home_sheet`, with
/// each range of that sheet within columns `columns` (1-based) that ends
/// on row `last` (1-based, the table's last data row before it grew) and
/// starts above it, made to end `count` rows lower, as a totals formula
/// written with cell ranges (`SUM(B2:B4)`) covers the rows the table took
/// in. A cell and every other reference stay as they are.
pub fn ranges_grown(
    formula: &str,
    home_sheet: &str,
    columns: (u32, u32),
    last: u32,
    count: u32,
) -> String {
    let mut out = String::with_capacity(formula.len() + 2);
    for piece in pieces(formula) {
        match piece {
            Piece::Reference(reference) => {
                out.push_str(reference.prefix);
                let own = match &reference.sheet {
                    Sheet::Own => true,
                    Sheet::Named(name) => same_sheet(name, home_sheet),
                    _ => false,
                };
                match &reference.target {
                    Target::Cells(first, end)
                        if own
                            && first.row.number.max(end.row.number) == last
                            && first.row.number.min(end.row.number) < last
                            && (columns.0..=columns.1).contains(&first.column_number)
                            && (columns.0..=columns.1).contains(&end.column_number) =>
                    {
                        out.push_str(&grown_down(first, end, last, count));
                    }
                    _ => out.push_str(reference.target_text),
                }
            }
            Piece::Text(text) | Piece::Function(text) => out.push_str(text),
        }
    }
    out
}

/// A list of ranges as an element's `sqref` writes them (`A2:D21 F5`,
/// no sheet names) once rows have moved: each range moves or shrinks as a
/// formula's does, and those whose rows are all deleted go. `None` when
/// none is left.
pub fn ranges_moved(ranges: &str, rows: &RowMove) -> Option<String> {
    let kept: Vec<String> = ranges
        .split_ascii_whitespace()
        .filter_map(|range| range_moved(range, rows))
        .collect();
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// [`ranges_moved`] for an element whose cells rows inserted take from
/// the row above them (a conditional format, a validation): as
/// LibreOffice's insert gives the new rows the formats of the row above,
/// a range that ends on that row reaches over them too (`A2:C21` with a
/// row inserted before row 22 is `A2:C22`).
pub fn ranges_moved_with_row_above(ranges: &str, rows: &RowMove) -> Option<String> {
    let moved = ranges_moved(ranges, rows)?;
    let &RowMove::Inserted { before, count } = rows else {
        return Some(moved);
    };
    let above = before - 1;
    let grown = |range: &str| {
        let pieces = pieces(range);
        let [Piece::Reference(reference)] = pieces.as_slice() else {
            return range.to_owned();
        };
        match &reference.target {
            Target::Cell(cell) if cell.row.number == above => grown_down(cell, cell, above, count),
            Target::Cells(first, end) if first.row.number.max(end.row.number) == above => {
                grown_down(first, end, above, count)
            }
            _ => range.to_owned(),
        }
    };
    let ranges: Vec<String> = moved.split_ascii_whitespace().map(grown).collect();
    Some(ranges.join(" "))
}

/// The range `first:end`, whose lower end is on row `last`, made to end
/// `count` rows lower (at most on the sheet's last row); its upper end
/// stays, also when both are on `last` (`B21` grows to `B21:B23`).
fn grown_down(first: &CellRef<'_>, end: &CellRef<'_>, last: u32, count: u32) -> String {
    let lower = last.saturating_add(count).min(LAST_ROW);
    let kept = |cell: &CellRef<'_>| cell.renumbered(cell.row.number);
    match first.row.number <= end.row.number {
        true => format!("{}:{}", kept(first), end.renumbered(lower)),
        false => format!("{}:{}", first.renumbered(lower), kept(end)),
    }
}

/// One range or cell without a sheet (`B4`, `A2:D21`, `3:5`) once rows
/// have moved; `None` when its rows are all deleted. Text that is no
/// range is kept as it is.
pub fn range_moved(range: &str, rows: &RowMove) -> Option<String> {
    let Some(Piece::Reference(reference)) = pieces(range).into_iter().next() else {
        return Some(range.to_owned());
    };
    if reference.target_text.len() != range.len() {
        return Some(range.to_owned());
    }
    match target_moved(&reference, rows) {
        gone if gone == GONE => None,
        text => Some(text),
    }
}
/// The formula with every reference cut off below row `last_row`: whole
/// columns (`A:C`) become `A1:C{last_row}`, and a range that ends lower
/// (`A2:A1048576`) ends there. For an engine that reads every row a
/// reference spans, on a workbook with no cell below `last_row`, where the
/// result is the same.
pub fn rows_bounded(formula: &str, last_row: u32) -> String {
    let mut out = String::with_capacity(formula.len() + 8);
    for piece in pieces(formula) {
        match piece {
            Piece::Reference(reference) => {
                out.push_str(reference.prefix);
                match &reference.target {
                    Target::Columns(first, last) => out.push_str(&format!(
                        "{}1:{}{last_row}",
                        column_letters(*first),
                        column_letters(*last)
                    )),
                    Target::Cells(first, last)
                        if last.row.number > last_row && first.row.number <= last_row =>
                    {
                        out.push_str(&format!(
                            "{}:{}",
                            reference.target_text.split(':').next().unwrap_or_default(),
                            last.renumbered(last_row)
                        ));
                    }
                    _ => out.push_str(reference.target_text),
                }
            }
            Piece::Text(text) | Piece::Function(text) => out.push_str(text),
        }
    }
    out
}

/// Whether `reference`, in a formula on `home_sheet`, points at the
/// sheet whose rows move. A 3D span is unadjustable when it includes it.
fn points_at(
    reference: &Reference<'_>,
    home_sheet: &str,
    moved: &SheetRows<'_>,
) -> Result<bool, Unadjustable> {
    match &reference.sheet {
        Sheet::Own => Ok(!home_sheet.is_empty() && same_sheet(home_sheet, moved.sheet)),
        Sheet::Named(name) => Ok(same_sheet(name, moved.sheet)),
        Sheet::Span(span) => match span_includes(span, moved) {
            Some(false) => Ok(false),
            Some(true) | None => Err(Unadjustable(format!(
                "the 3D reference {}{} spans sheets {span}, which include {}",
                reference.prefix, reference.target_text, moved.sheet
            ))),
        },
        Sheet::External | Sheet::Deleted => Ok(false),
    }
}

/// Whether the 3D span `First:Last` includes the sheet whose rows move;
/// `None` when an end is no sheet of the workbook.
fn span_includes(span: &str, moved: &SheetRows<'_>) -> Option<bool> {
    let (first, last) = span.split_once(':')?;
    let place = |name: &str| moved.order.iter().position(|s| same_sheet(s, name));
    let (first, last) = (place(first)?, place(last)?);
    let target = place(moved.sheet)?;
    Some((first.min(last)..=first.max(last)).contains(&target))
}

/// What a reference to cells that are gone becomes.
const GONE: &str = "#REF!";

/// The text of `reference`'s target (its prefix aside) once rows of its
/// sheet have moved.
fn target_moved(reference: &Reference<'_>, rows: &RowMove) -> String {
    match &reference.target {
        Target::Cell(cell) => rows
            .row(cell.row.number)
            .map_or_else(|| GONE.to_owned(), |row| cell.renumbered(row)),
        Target::Cells(first, last) => rows.span(first.row.number, last.row.number).map_or_else(
            || GONE.to_owned(),
            |(top, bottom)| format!("{}:{}", first.renumbered(top), last.renumbered(bottom)),
        ),
        Target::Rows(first, last) => rows.span(first.number, last.number).map_or_else(
            || GONE.to_owned(),
            |(top, bottom)| format!("{}:{}", first.renumbered(top), last.renumbered(bottom)),
        ),
        Target::Columns(..) | Target::Name | Target::Table | Target::Error => {
            reference.target_text.to_owned()
        }
    }
}

/// A count of deleted rows as a row number: fewer rows than a sheet holds.
fn count(rows: usize) -> u32 {
    u32::try_from(rows).unwrap_or(u32::MAX)
}

/// Whether two sheet (or table) names are the same, case aside, as
/// spreadsheet apps compare them.
pub fn same_sheet(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// The cells a formula may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum References {
    /// These areas and no other cell (none for a formula without references).
    Areas(Vec<Area>),
    /// Cells the text does not tell: a defined name, `INDIRECT`, `OFFSET`,
    /// a structured or 3D reference.
    Anything,
}

/// A rectangle of cells a formula reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    /// The sheet's name as the formula writes it (unquoted); `None` for
    /// the formula's own sheet.
    pub sheet: Option<String>,
    /// The first and last row, 1-based; `1..=1048576` for whole columns.
    pub rows: (u32, u32),
    /// The first and last column, 1-based; `1..=16384` for whole rows.
    pub columns: (u32, u32),
}

impl Area {
    /// Whether the area holds the cell at `row`, `column` (1-based) of its
    /// sheet.
    pub fn holds(&self, row: u32, column: u32) -> bool {
        (self.rows.0..=self.rows.1).contains(&row)
            && (self.columns.0..=self.columns.1).contains(&column)
    }
}

/// The deepest nesting a formula may have for the formula engine to be
/// given it ([`nesting`]). IronCalc's parser and evaluator recurse at each
/// level, a few kilobytes of stack each: a formula of 1,000 parentheses
/// (2 KB of text) overflowed a thread's stack, which ends the process.
/// Excel allows 64 levels of nested functions.
pub const MAX_NESTING: usize = 128;

/// How deep `formula` nests, as a parser that recurses into it goes, at
/// most: a parenthesis, brace or bracket is a level for what it holds, and
/// each operator (binary, a sign, `%`, `#`, `@`) a level for the operands
/// around it, since a chain (`1+1+…+1`, `-(-(…))`, `1%%…`) is read into a
/// tree as deep as it is long. Deep trees end the engine's parser and
/// evaluator on a thread's stack.
pub fn nesting(formula: &str) -> usize {
    /// An open group, or the formula: the deepest of its arguments done
    /// (operators plus the deepest operand), and the one being read.
    #[derive(Default)]
    struct Group {
        done: usize,
        operators: usize,
        deepest: usize,
    }
    impl Group {
        fn depth(&self) -> usize {
            self.done.max(self.operators + self.deepest)
        }
    }
    let mut groups = vec![Group::default()];
    let close = |groups: &mut Vec<Group>| {
        let closed = groups.pop().map_or(0, |g| g.depth());
        let outer = groups.last_mut().expect("an outer group");
        outer.deepest = outer.deepest.max(closed + 1);
    };
    for token in tokens(formula) {
        let text = &formula[token.start..token.end];
        let nested = groups.len() > 1;
        let group = groups.last_mut().expect("the formula's group stays");
        match (token.kind, text) {
            (Kind::Other, "(" | "{") => groups.push(Group::default()),
            (Kind::Other, ")" | "}") if nested => close(&mut groups),
            (Kind::Other, "," | ";") => {
                group.done = group.depth();
                (group.operators, group.deepest) = (0, 0);
            }
            (Kind::Other, "+" | "-" | "*" | "/" | "^" | "&" | "=" | "<" | ">" | ":")
            | (Kind::Other, "%" | "#" | "@") => group.operators += 1,
            (Kind::Bracket, _) => {
                let brackets = text
                    .chars()
                    .fold((0usize, 0usize), |(open, most), c| match c {
                        '[' => (open + 1, most.max(open + 1)),
                        ']' => (open.saturating_sub(1), most),
                        _ => (open, most),
                    });
                group.deepest = group.deepest.max(brackets.1);
            }
            _ => {}
        }
    }
    // Groups left open count as closed at the end.
    while groups.len() > 1 {
        close(&mut groups);
    }
    groups.pop().map_or(0, |g| g.depth())
}

/// The cells `formula` may read, as its text tells: each reference's area
/// (none for another workbook's or an error), or `Anything` when one of
/// them depends on more than the text (see [`References::Anything`]).
pub fn references(formula: &str) -> References {
    let mut areas = Vec::new();
    for piece in pieces(formula) {
        match piece {
            Piece::Function(name) if builds_references(name) => return References::Anything,
            // A range with a computed end (`A1:INDEX(…)`), or a spill (`A1#`).
            Piece::Text(":" | "#") => return References::Anything,
            Piece::Reference(reference) => match reference.reads() {
                Reads::Area(area) => areas.push(area),
                Reads::Nothing => {}
                Reads::Unknown => return References::Anything,
            },
            Piece::Text(_) | Piece::Function(_) => {}
        }
    }
    References::Areas(areas)
}

/// Whether `formula` refers to another workbook (`[1]Data!A1`,
/// `'[book.xlsx]Data'!A1`, `[1]!Rate`): a formula written through the API
/// may not (§11.4), since sheetd has no other workbook to read.
pub fn names_another_workbook(formula: &str) -> bool {
    pieces(formula).iter().any(|piece| {
        matches!(
            piece,
            Piece::Reference(Reference {
                sheet: Sheet::External,
                ..
            })
        )
    })
}

/// Whether the function `name` (`_xlfn.` or not) reads cells its
/// arguments do not name: built references, a spill's unknown size.
fn builds_references(name: &str) -> bool {
    let mut name = name;
    while let Some(rest) = ["_xlfn.", "_xlws."]
        .iter()
        .find_map(|prefix| strip_prefix_ignoring_case(name, prefix))
    {
        name = rest;
    }
    ["INDIRECT", "OFFSET", "ANCHORARRAY"]
        .iter()
        .any(|known| name.eq_ignore_ascii_case(known))
}

/// `text` without `prefix`, compared without ASCII case.
fn strip_prefix_ignoring_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// What one reference reads.
enum Reads {
    /// This area.
    Area(Area),
    /// No cell of this workbook: another workbook's, or an error.
    Nothing,
    /// Cells its text does not tell.
    Unknown,
}

/// A piece of a formula's text, as [`pieces`] cuts it.
#[derive(Debug)]
enum Piece<'a> {
    /// A reference, its sheet prefix included.
    Reference(Reference<'a>),
    /// A function's name (a `(` follows it).
    Function(&'a str),
    /// Anything else, one token: an operator, a literal, a number, a space.
    Text(&'a str),
}

/// A reference: the sheet it is on and what it points at there.
#[derive(Debug)]
struct Reference<'a> {
    /// The sheet its prefix names.
    sheet: Sheet,
    /// Its prefix as written, `!` included (`'My Sheet'!`); "" for none.
    prefix: &'a str,
    /// What it points at.
    target: Target<'a>,
    /// The text of `target`.
    target_text: &'a str,
}

impl Reference<'_> {
    /// The cells this reference reads.
    fn reads(&self) -> Reads {
        let sheet = match &self.sheet {
            Sheet::Own => None,
            Sheet::Named(name) => Some(name.clone()),
            Sheet::Span(_) => return Reads::Unknown,
            Sheet::External | Sheet::Deleted => return Reads::Nothing,
        };
        let ordered = |a: u32, b: u32| (a.min(b), a.max(b));
        let (rows, columns) = match &self.target {
            Target::Cell(cell) => (
                (cell.row.number, cell.row.number),
                (cell.column_number, cell.column_number),
            ),
            Target::Cells(first, last) => (
                ordered(first.row.number, last.row.number),
                ordered(first.column_number, last.column_number),
            ),
            Target::Rows(first, last) => (ordered(first.number, last.number), (1, LAST_COLUMN)),
            Target::Columns(first, last) => ((1, LAST_ROW), ordered(*first, *last)),
            Target::Name | Target::Table => return Reads::Unknown,
            Target::Error => return Reads::Nothing,
        };
        Reads::Area(Area {
            sheet,
            rows,
            columns,
        })
    }
}

/// The sheet a reference's prefix names.
#[derive(Debug, PartialEq, Eq)]
enum Sheet {
    /// No prefix: the formula's own sheet.
    Own,
    /// A sheet of this workbook, its name unquoted (`My Sheet` for
    /// `'My Sheet'!`).
    Named(String),
    /// A 3D span of sheets (`Alpha:Gamma`).
    Span(String),
    /// A sheet of another workbook (`[1]Data!`).
    External,
    /// A sheet since deleted (`#REF!A1`).
    Deleted,
}

impl Sheet {
    /// The sheet a single name means: a quoted one may hold a 3D span
    /// (`'Jan 1:Mar 1'`) or a workbook (`'[1]My Data'`), which no sheet's
    /// name can.
    fn named(name: String) -> Sheet {
        if name.contains('[') {
            Sheet::External
        } else if name.contains(':') {
            Sheet::Span(name)
        } else {
            Sheet::Named(name)
        }
    }
}

/// What a reference points at on its sheet.
#[derive(Debug)]
enum Target<'a> {
    /// A cell: `B2`, `$B$2`.
    Cell(CellRef<'a>),
    /// A range of cells: `A2:B10`.
    Cells(CellRef<'a>, CellRef<'a>),
    /// Whole rows: `2:4`, `$2:$4`.
    Rows(RowRef<'a>, RowRef<'a>),
    /// Whole columns, by number: `A:C`.
    Columns(u32, u32),
    /// A defined name: `Rate`, `Data!Rate`.
    Name,
    /// A structured reference: `Table1[Amount]`, `[@Amount]`.
    Table,
    /// An error in place of a reference: `#REF!`.
    Error,
}

impl Target<'_> {
    /// Whether a row of it is written without `$`.
    fn has_relative_row(&self) -> bool {
        match self {
            Target::Cell(cell) => !cell.row.fixed,
            Target::Cells(first, last) => !first.row.fixed || !last.row.fixed,
            Target::Rows(first, last) => !first.fixed || !last.fixed,
            Target::Columns(..) | Target::Name | Target::Table | Target::Error => false,
        }
    }
}

/// A row number as a reference writes it.
#[derive(Debug, Clone, Copy)]
struct RowRef<'a> {
    /// As written: `3`, `$3`.
    text: &'a str,
    /// Whether it has a `$`.
    fixed: bool,
    number: u32,
}

impl<'a> RowRef<'a> {
    /// The row `word` writes (`3`, `$3`), on the grid.
    fn parse(word: &'a str) -> Option<Self> {
        let (fixed, digits) = match word.strip_prefix('$') {
            Some(digits) => (true, digits),
            None => (false, word),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let number = digits.parse().ok().filter(|n| (1..=LAST_ROW).contains(n))?;
        Some(RowRef {
            text: word,
            fixed,
            number,
        })
    }

    /// Its text with row `number` instead, `$` kept; as written when the
    /// number is its own.
    fn renumbered(&self, number: u32) -> String {
        match (number == self.number, self.fixed) {
            (true, _) => self.text.to_owned(),
            (false, true) => format!("${number}"),
            (false, false) => number.to_string(),
        }
    }
}

/// A cell as a reference writes it.
#[derive(Debug, Clone, Copy)]
struct CellRef<'a> {
    /// Its column as written: `B`, `$b`.
    column: &'a str,
    column_number: u32,
    row: RowRef<'a>,
}

impl<'a> CellRef<'a> {
    /// The cell `word` writes (`B2`, `$B$2`), on the grid.
    fn parse(word: &'a str) -> Option<Self> {
        let dollar = usize::from(word.starts_with('$'));
        let letters = word[dollar..]
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .count();
        let (column, row) = word.split_at(dollar + letters);
        Some(CellRef {
            column,
            column_number: column_of(column)?,
            row: RowRef::parse(row)?,
        })
    }

    /// Its text on row `number` instead, the rest as written.
    fn renumbered(&self, number: u32) -> String {
        format!("{}{}", self.column, self.row.renumbered(number))
    }
}

/// The number of the column `word` writes (`C`, `$c`), on the grid.
fn column_of(word: &str) -> Option<u32> {
    let letters = word.strip_prefix('$').unwrap_or(word);
    let valid =
        (1..=3).contains(&letters.len()) && letters.bytes().all(|b| b.is_ascii_alphabetic());
    valid
        .then(|| column_number(letters))
        .filter(|&n| n <= LAST_COLUMN)
}

/// The number of a column's letters (at most three, ASCII): 1 for `A`,
/// 28 for `ab`.
pub fn column_number(letters: &str) -> u32 {
    letters.bytes().fold(0, |n, b| {
        n * 26 + u32::from(b.to_ascii_uppercase() - b'A' + 1)
    })
}

/// Whether a word that is neither called nor a cell is a defined name:
/// not a number (`2`, `1.5E`), a boolean or a LET/LAMBDA parameter
/// (`_xlpm.x`).
fn is_name(word: &str) -> bool {
    let number = word.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    let boolean = word.eq_ignore_ascii_case("TRUE") || word.eq_ignore_ascii_case("FALSE");
    let parameter = strip_prefix_ignoring_case(word, "_xlpm.").is_some();
    !(number || boolean || parameter)
}

/// The formula cut into references and the tokens between them; together
/// they are its whole text.
fn pieces(formula: &str) -> Vec<Piece<'_>> {
    let tokens = Tokens {
        formula,
        tokens: tokens(formula),
    };
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < tokens.tokens.len() {
        let (piece, next) = tokens.piece_at(at);
        pieces.push(piece);
        at = next;
    }
    pieces
}

/// A formula's tokens, read by index.
struct Tokens<'a> {
    formula: &'a str,
    tokens: Vec<Token>,
}

impl<'a> Tokens<'a> {
    /// The kind of token `at`; `None` past the end.
    fn kind(&self, at: usize) -> Option<Kind> {
        self.tokens.get(at).map(|token| token.kind)
    }

    /// The text of token `at`; "" past the end.
    fn text(&self, at: usize) -> &'a str {
        self.tokens
            .get(at)
            .map_or("", |token| &self.formula[token.start..token.end])
    }

    /// Whether token `at` is the character `c`.
    fn is(&self, at: usize, c: char) -> bool {
        self.kind(at) == Some(Kind::Other) && self.text(at).starts_with(c)
    }

    /// The text of tokens `from` up to (not including) `to`.
    fn span(&self, from: usize, to: usize) -> &'a str {
        let offset = |at: usize| self.tokens.get(at).map_or(self.formula.len(), |t| t.start);
        &self.formula[offset(from)..offset(to)]
    }

    /// The piece that starts at token `at`, and the token after it.
    fn piece_at(&self, at: usize) -> (Piece<'a>, usize) {
        if let Some((reference, next)) = self.reference_at(at) {
            return (Piece::Reference(reference), next);
        }
        let text = self.text(at);
        let called = self.kind(at) == Some(Kind::Word) && self.is(at + 1, '(');
        let piece = if called {
            Piece::Function(text)
        } else {
            Piece::Text(text)
        };
        (piece, at + 1)
    }

    /// The reference that starts at token `at`, prefix and all, and the
    /// token after it.
    fn reference_at(&self, at: usize) -> Option<(Reference<'a>, usize)> {
        let (sheet, start) = self.prefix_at(at).unwrap_or((Sheet::Own, at));
        let (target, end) = self.target_at(start, &sheet)?;
        let reference = Reference {
            sheet,
            prefix: self.span(at, start),
            target,
            target_text: self.span(start, end),
        };
        Some((reference, end))
    }

    /// The sheet prefix that starts at token `at` (`Data!`, `'My Sheet'!`,
    /// `Alpha:Gamma!`, `[1]Data!`, `[1]!`, `#REF!` before a cell), and the
    /// token after its `!`.
    fn prefix_at(&self, at: usize) -> Option<(Sheet, usize)> {
        match self.kind(at)? {
            Kind::Bracket if self.is(at + 1, '!') => Some((Sheet::External, at + 2)),
            Kind::Bracket => self
                .sheets_at(at + 1)
                .map(|(_, next)| (Sheet::External, next)),
            Kind::Error
                if self.text(at).ends_with('!') && self.kind(at + 1) == Some(Kind::Word) =>
            {
                Some((Sheet::Deleted, at + 1))
            }
            _ => self.sheets_at(at),
        }
    }

    /// The sheet (`Data!`) or 3D span of sheets (`Alpha:Gamma!`) named from
    /// token `at`, and the token after its `!`. A word that is a cell does
    /// not start a span (such a sheet name is quoted): `A1:Data!B2` is a
    /// range operator.
    fn sheets_at(&self, at: usize) -> Option<(Sheet, usize)> {
        let first = self.sheet_name_at(at)?;
        if self.is(at + 1, '!') {
            return Some((Sheet::named(first), at + 2));
        }
        let spans = self.is(at + 1, ':')
            && self.sheet_name_at(at + 2).is_some()
            && self.is(at + 3, '!')
            && !(self.kind(at) == Some(Kind::Word) && CellRef::parse(self.text(at)).is_some());
        spans.then(|| (Sheet::Span(self.span(at, at + 3).to_owned()), at + 4))
    }

    /// The sheet name token `at` writes: a word, or a quoted name
    /// unquoted (`''` is a quote in it).
    fn sheet_name_at(&self, at: usize) -> Option<String> {
        let text = self.text(at);
        match self.kind(at)? {
            Kind::Word => Some(text.to_owned()),
            Kind::Quoted => {
                let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
                Some(inner.replace("''", "'"))
            }
            _ => None,
        }
    }

    /// What the reference whose prefix, naming `sheet`, ends before token
    /// `at` points at, and the token after it; `None` when no reference is
    /// there.
    fn target_at(&self, at: usize, sheet: &Sheet) -> Option<(Target<'a>, usize)> {
        match self.kind(at)? {
            Kind::Error => Some((Target::Error, at + 1)),
            Kind::Bracket => Some((Target::Table, at + 1)),
            Kind::Word => self.word_target_at(at, sheet),
            _ => None,
        }
    }

    /// What the word `at` (and a range or table after it) points at.
    fn word_target_at(&self, at: usize, sheet: &Sheet) -> Option<(Target<'a>, usize)> {
        if self.kind(at + 1) == Some(Kind::Bracket) {
            return Some((Target::Table, at + 2));
        }
        if self.is(at + 1, '(') {
            return None;
        }
        if let Some(range) = self.range_at(at, sheet) {
            return Some(range);
        }
        let word = self.text(at);
        if let Some(cell) = CellRef::parse(word) {
            return Some((Target::Cell(cell), at + 1));
        }
        is_name(word).then_some((Target::Name, at + 1))
    }

    /// The range `first:last` from the word `at` (cells, whole columns or
    /// whole rows), and the token after it. The end may name the start's
    /// sheet `sheet` again (`Data!B12:Data!B14`, which LibreOffice reads
    /// as `Data!B12:B14`).
    fn range_at(&self, at: usize, sheet: &Sheet) -> Option<(Target<'a>, usize)> {
        let again = match (self.is(at + 1, ':'), sheet) {
            (true, Sheet::Named(name)) => self
                .sheets_at(at + 2)
                .filter(|(end, _)| matches!(end, Sheet::Named(end) if same_sheet(end, name))),
            _ => None,
        };
        let last_at = again.map_or(at + 2, |(_, next)| next);
        let joined = self.is(at + 1, ':') && self.kind(last_at) == Some(Kind::Word);
        let last_called =
            self.is(last_at + 1, '(') || self.kind(last_at + 1) == Some(Kind::Bracket);
        if !joined || last_called {
            return None;
        }
        let (first, last) = (self.text(at), self.text(last_at));
        let target =
            if let (Some(first), Some(last)) = (CellRef::parse(first), CellRef::parse(last)) {
                Target::Cells(first, last)
            } else if let (Some(first), Some(last)) = (column_of(first), column_of(last)) {
                Target::Columns(first, last)
            } else {
                Target::Rows(RowRef::parse(first)?, RowRef::parse(last)?)
            };
        Some((target, last_at + 1))
    }
}

/// What a token of a formula is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A text literal: `"…"`.
    Text,
    /// A quoted sheet name: `'…'`.
    Quoted,
    /// A bracketed part: a structured reference's `[…]`, an external
    /// workbook's `[1]`.
    Bracket,
    /// An error literal: `#REF!`, `#N/A`.
    Error,
    /// Letters, digits, `$`, `_` and `.`: a reference, a name, a
    /// function's name, a number.
    Word,
    /// Any other single character: an operator, a parenthesis, `!`, `:`,
    /// a space.
    Other,
}

/// A token of a formula: its kind and where its text is (byte offsets).
#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// The error literals a formula can hold.
const ERRORS: [&str; 17] = [
    "#NULL!",
    "#DIV/0!",
    "#VALUE!",
    "#REF!",
    "#NAME?",
    "#NUM!",
    "#N/A",
    "#GETTING_DATA",
    "#SPILL!",
    "#CALC!",
    "#FIELD!",
    "#BLOCKED!",
    "#CONNECT!",
    "#BUSY!",
    "#UNKNOWN!",
    "#PYTHON!",
    "#EXTERNAL!",
];

/// The formula cut into tokens, every character in one.
fn tokens(formula: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut start = 0;
    while let Some(c) = formula[start..].chars().next() {
        let rest = &formula[start..];
        let (kind, len) = match c {
            '"' => (Kind::Text, quoted_len(rest)),
            '\'' => (Kind::Quoted, quoted_len(rest)),
            '[' => (Kind::Bracket, bracket_len(rest)),
            '#' => error_len(rest).map_or((Kind::Other, 1), |len| (Kind::Error, len)),
            c if is_word_char(c) => (
                Kind::Word,
                rest.find(|c| !is_word_char(c)).unwrap_or(rest.len()),
            ),
            c => (Kind::Other, c.len_utf8()),
        };
        tokens.push(Token {
            kind,
            start,
            end: start + len,
        });
        start += len;
    }
    tokens
}

/// Whether `c` can be part of a word: a reference, name or number.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '$' | '_' | '.')
}

/// The length of the literal or quoted name that opens `text` (a doubled
/// quote is a quote inside it; unclosed, it runs to the end).
fn quoted_len(text: &str) -> usize {
    let mut chars = text.char_indices();
    let Some((_, quote)) = chars.next() else {
        return 0;
    };
    let mut chars = chars.peekable();
    while let Some((i, c)) = chars.next() {
        if c != quote {
            continue;
        }
        if chars.next_if(|&(_, next)| next == quote).is_none() {
            return i + c.len_utf8();
        }
    }
    text.len()
}

/// The length of the bracketed part that opens `text`, nested brackets
/// included (`'` escapes the character after it, as in a structured
/// reference's `Price'[USD']`).
fn bracket_len(text: &str) -> usize {
    let mut depth = 0;
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            '\'' => {
                chars.next();
            }
            _ => {}
        }
    }
    text.len()
}

/// The length of the error literal that opens `text`, if one does.
fn error_len(text: &str) -> Option<usize> {
    ERRORS
        .iter()
        .find(|error| strip_prefix_ignoring_case(text, error).is_some())
        .map(|error| error.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_ending_on_a_grown_tables_last_row_grow_with_it() {
        let grown = |formula: &str| ranges_grown(formula, "Data", (2, 3), 4, 2);
        assert_eq!(grown("SUM(B2:B4)"), "SUM(B2:B6)");
        assert_eq!(
            grown("SUM($B$2:$C$4)/Data!B2:B4"),
            "SUM($B$2:$C$6)/Data!B2:B6"
        );
        assert_eq!(grown("SUM(B4:B2)"), "SUM(B6:B2)", "either way round");
        assert_eq!(
            grown("B4+SUM(B2:B3)"),
            "B4+SUM(B2:B3)",
            "cells and other ends stay"
        );
        assert_eq!(
            grown("SUM(B4:B4)+SUM(A2:A4)+SUM(B2:D4)"),
            "SUM(B4:B4)+SUM(A2:A4)+SUM(B2:D4)"
        );
        assert_eq!(
            grown("SUM(Other!B2:B4)+SUM(T[x])"),
            "SUM(Other!B2:B4)+SUM(T[x])"
        );
    }

    #[test]
    fn nesting_counts_what_a_parser_recurses_into() {
        let cases = [
            ("A1", 0),
            ("A1+B1-C1", 2),
            ("-A1", 1),
            ("SUM(A1,-B1)*-2", 4),
            ("((1))", 2),
            ("-(-(-1))", 5),
            ("IF(A1>0,SUM(B1:B9),{1,2})", 3),
            ("Table1[[#This Row],[Price]]*2", 3),
            ("\"((((\"&'((('!A1", 1),
            ("(1)+(1)+(1)", 3),
            ("5%-1", 2),
            ("SUM(1+1+1,2)", 3),
            ("((1", 2),
            ("A1<>B1", 2),
        ];
        for (formula, expected) in cases {
            assert_eq!(nesting(formula), expected, "{formula}");
        }
        let deep = format!("{}1{}", "(".repeat(1000), ")".repeat(1000));
        assert_eq!(nesting(&deep), 1000);
        assert_eq!(nesting(&"-".repeat(1_000_000)), 1_000_000);
        // A chain is as deep as it is long; arguments are side by side.
        assert_eq!(nesting(&format!("1{}", "+1".repeat(1200))), 1200);
        assert_eq!(nesting(&format!("\"a\"{}", "&\"a\"".repeat(500))), 500);
        assert_eq!(nesting(&format!("SUM(1{})", ",1".repeat(1000))), 1);
        // Postfix and spill operators, error values the tokens do not know,
        // and signs before a call are levels too.
        assert_eq!(nesting(&format!("1{}", "%".repeat(8000))), 8000);
        assert_eq!(nesting(&format!("A1{}#", "#*A1".repeat(2000))), 4001);
        assert_eq!(
            nesting(&format!("#ERROR!{}", "&#ERROR!".repeat(1000))),
            2001
        );
        let signed_calls = format!("{}1{}", "-SUM(".repeat(128), ")".repeat(128));
        assert_eq!(nesting(&signed_calls), 256);
    }

    #[test]
    fn rows_bounded_cuts_whole_columns_and_long_ranges() {
        let cases = [
            ("SUM(A:A)", "SUM(A1:A1024)"),
            ("VLOOKUP(A4,$D:$E,2,0)", "VLOOKUP(A4,D1:E1024,2,0)"),
            ("Data!C:C&B2", "Data!C1:C1024&B2"),
            ("SUM(A2:A1048576)", "SUM(A2:A1024)"),
            ("SUM(A2:A100)+A5000", "SUM(A2:A100)+A5000"),
            ("\"A:A\"&1", "\"A:A\"&1"),
        ];
        for (formula, expected) in cases {
            assert_eq!(rows_bounded(formula, 1024), expected, "{formula}");
        }
    }

    #[test]
    fn shifted_formulas_move_their_relative_references() {
        let cases = [
            ("B2*C2", 3, 0, "B5*C5"),
            ("$B$2*C2+B$2+$C2", 3, 2, "$B$2*E5+D$2+$C5"),
            ("SUM(A2:A10)", 1, 0, "SUM(A3:A11)"),
            ("SUM(A:A)+SUM(2:3)", 2, 1, "SUM(B:B)+SUM(4:5)"),
            ("Data!B2+'My Sheet'!C3", 1, 0, "Data!B3+'My Sheet'!C4"),
            ("\"B2\"&B2", 1, 0, "\"B2\"&B3"),
            ("LOG10(B2)+ATAN2(1,2)", 1, 0, "LOG10(B3)+ATAN2(1,2)"),
            ("Table1[Amount]*B2", 1, 0, "Table1[Amount]*B3"),
            ("TEXT(C25, B25)", 3, 0, "TEXT(C28, B28)"),
            ("B2", -2, 0, "#REF!"),
            ("Rate*1.5+2", 5, 5, "Rate*1.5+2"),
        ];
        for (formula, rows, columns, expected) in cases {
            assert_eq!(shifted(formula, rows, columns), expected, "{formula}");
        }
    }

    /// The sheets of the workbook the tests' formulas live in, in order.
    const ORDER: &[&str] = &[
        "Alpha", "Jan 1", "Beta", "Orders", "Mar 1", "Gamma", "Summary", "My Sheet", "Other",
        "Bob's",
    ];

    /// [`rows_moved`] for rows `deleted` of sheet `target`.
    fn rows_deleted(
        formula: &str,
        home: &str,
        target: &str,
        deleted: &[u32],
    ) -> Result<String, Unadjustable> {
        let rows = RowMove::Deleted(deleted.to_vec());
        let moved = SheetRows {
            sheet: target,
            order: ORDER,
            rows: &rows,
        };
        rows_moved(formula, home, &moved)
    }

    /// [`rows_moved`] for `count` rows inserted before row `before` of
    /// sheet `Orders`, for a formula there.
    fn inserted_on_orders(formula: &str, before: u32, count: u32) -> String {
        let rows = RowMove::Inserted { before, count };
        let moved = SheetRows {
            sheet: "Orders",
            order: ORDER,
            rows: &rows,
        };
        rows_moved(formula, "Orders", &moved).expect(formula)
    }

    #[test]
    fn inserting_rows_moves_the_rows_below_down_and_grows_ranges_across() {
        let cases: [(&str, u32, u32, &str); 10] = [
            ("B5*C5", 5, 1, "B6*C6"),
            ("B5*C5", 6, 2, "B5*C5"),
            ("$D$10+D2", 3, 4, "$D$14+D2"),
            ("SUM(A2:A10)", 5, 1, "SUM(A2:A11)"),
            ("SUM(A2:A10)", 2, 1, "SUM(A3:A11)"),
            ("SUM(A2:A10)", 11, 1, "SUM(A2:A10)"),
            ("SUM(3:5)+SUM(A:A)", 4, 2, "SUM(3:7)+SUM(A:A)"),
            ("SUM(A1:A1048576)", 4, 2, "SUM(A1:A1048576)"),
            ("Other!A5+Orders!A5", 1, 1, "Other!A5+Orders!A6"),
            ("A1048576", 2, 1, "#REF!"),
        ];
        for (formula, before, count, expected) in cases {
            assert_eq!(
                inserted_on_orders(formula, before, count),
                expected,
                "{formula}"
            );
        }
    }

    #[test]
    fn names_keep_references_with_relative_rows_as_libreoffice_does() {
        let moved = |formula: &str, rows: RowMove| {
            let order = ["Data"];
            let moved = SheetRows {
                sheet: "Data",
                order: &order,
                rows: &rows,
            };
            name_rows_moved(formula, &moved).unwrap()
        };
        let cases = [
            ("Data!$B10", RowMove::Deleted(vec![2]), "Data!$B10"),
            (
                "Data!$B9:$B11",
                RowMove::Deleted(vec![9, 10, 11]),
                "Data!$B9:$B11",
            ),
            ("Data!$B$10", RowMove::Deleted(vec![2]), "Data!$B$9"),
            ("Data!B$10", RowMove::Deleted(vec![10]), "#REF!"),
            (
                "Data!$B$9:$B11",
                RowMove::Inserted {
                    before: 2,
                    count: 1,
                },
                "Data!$B$9:$B11",
            ),
        ];
        for (formula, rows, expected) in cases {
            assert_eq!(moved(formula, rows), expected, "{formula}");
        }
    }

    #[test]
    fn ranges_of_formats_grow_over_rows_inserted_below_their_last() {
        let below = |before| RowMove::Inserted { before, count: 2 };
        let cases = [
            ("A2:C21 E5", 22, Some("A2:C23 E5")),
            ("B21", 22, Some("B21:B23")),
            ("$A$2:$C$21", 22, Some("$A$2:$C$23")),
            ("A2:C21", 23, Some("A2:C21")),
            ("A2:C21", 10, Some("A2:C23")),
            ("A10:C12", 5, Some("A12:C14")),
            ("A2:C1048576", 22, Some("A2:C1048576")),
        ];
        for (ranges, before, expected) in cases {
            let moved = ranges_moved_with_row_above(ranges, &below(before));
            assert_eq!(moved.as_deref(), expected, "{ranges} before {before}");
        }
        let deleted = RowMove::Deleted(vec![21]);
        assert_eq!(
            ranges_moved_with_row_above("A2:C21", &deleted).as_deref(),
            Some("A2:C20")
        );
    }

    #[test]
    fn ranges_of_an_element_move_shrink_and_go() {
        let deleted = RowMove::Deleted(vec![10]);
        assert_eq!(
            ranges_moved("A2:D21 A10:D10 B12 $C$15", &deleted).as_deref(),
            Some("A2:D20 B11 $C$14")
        );
        assert_eq!(ranges_moved("A10:D10 E10", &deleted), None);
        let inserted = RowMove::Inserted {
            before: 10,
            count: 2,
        };
        assert_eq!(
            ranges_moved("A2:D21 A10:D10 B3", &inserted).as_deref(),
            Some("A2:D23 A12:D12 B3")
        );
    }

    /// `rows_deleted` for a formula on sheet `Orders`, rows deleted there.
    fn deleted_on_orders(formula: &str, deleted: &[u32]) -> String {
        rows_deleted(formula, "Orders", "Orders", deleted).expect(formula)
    }

    #[test]
    fn deleting_rows_moves_the_cells_below_up() {
        let cases: [(&str, &[u32], &str); 13] = [
            ("B5*C5", &[2], "B4*C4"),
            ("$D$10", &[3], "$D$9"),
            ("$A5+B$6+a7", &[1, 2], "$A3+B$4+a5"),
            ("B2*C2", &[3], "B2*C2"),
            ("\"A5\"&A5", &[1], "\"A5\"&A4"),
            ("LOG10(A5)+Rate+TRUE", &[1], "LOG10(A4)+Rate+TRUE"),
            ("_xlfn.CONCAT(A1,B5)", &[2], "_xlfn.CONCAT(A1,B4)"),
            ("A5*1.5E+3+2", &[1], "A4*1.5E+3+2"),
            (
                "Table1[[#This Row],[Amount]]*A5",
                &[1],
                "Table1[[#This Row],[Amount]]*A4",
            ),
            (
                "_xlfn.LET(_xlpm.x,A5,_xlpm.x*2)",
                &[1],
                "_xlfn.LET(_xlpm.x,A4,_xlpm.x*2)",
            ),
            ("A1048576", &[1], "A1048575"),
            ("Table1[Col']A5]*A5", &[1], "Table1[Col']A5]*A4"),
            ("#REF!+A5+#N/A", &[1], "#REF!+A4+#N/A"),
        ];
        for (formula, deleted, expected) in cases {
            assert_eq!(deleted_on_orders(formula, deleted), expected, "{formula}");
        }
    }

    #[test]
    fn deleting_rows_turns_deleted_cells_into_ref_errors() {
        let cases: [(&str, &[u32], &str); 4] = [
            ("B2*C2", &[2], "#REF!*#REF!"),
            ("Orders!A5+A6", &[5], "#REF!+A5"),
            ("$B$3", &[1, 3], "#REF!"),
            ("SUM(A3,A4)", &[3], "SUM(#REF!,A3)"),
        ];
        for (formula, deleted, expected) in cases {
            assert_eq!(deleted_on_orders(formula, deleted), expected, "{formula}");
        }
    }

    #[test]
    fn deleting_rows_shrinks_and_moves_ranges() {
        let all: Vec<u32> = (2..=100).collect();
        let cases: [(&str, &[u32], &str); 17] = [
            ("SUM(D2:D100)", &[5], "SUM(D2:D99)"),
            ("SUM(B12:B1048576)", &[5], "SUM(B11:B1048576)"),
            ("SUM(B12:B1048576)", &[12, 1048576], "SUM(B12:B1048576)"),
            ("SUM(D2:D100)", &all, "SUM(#REF!)"),
            ("SUM(A2:A10)", &[1, 5, 20], "SUM(A1:A8)"),
            ("A3:A6", &[3], "A3:A5"),
            ("A3:A6", &[6], "A3:A5"),
            ("A3:A6", &[3, 4], "A3:A4"),
            ("A3:A6", &[10], "A3:A6"),
            ("$A$3:B$6", &[1], "$A$2:B$5"),
            ("A6:A3", &[3], "A5:A3"),
            ("Orders!B2:C3", &[2, 3], "#REF!"),
            ("SUM(3:5)", &[4], "SUM(3:4)"),
            ("SUM($3:$5)", &[1], "SUM($2:$4)"),
            ("SUM(3:4)", &[3, 4], "SUM(#REF!)"),
            ("SUM(A:A)+SUM($B:C)", &[1], "SUM(A:A)+SUM($B:C)"),
            (
                "SUM(A1:A1048576)+SUM(1:1048576)",
                &[5],
                "SUM(A1:A1048576)+SUM(1:1048576)",
            ),
        ];
        for (formula, deleted, expected) in cases {
            assert_eq!(deleted_on_orders(formula, deleted), expected, "{formula}");
        }
    }

    #[test]
    fn deleting_rows_follows_sheet_names() {
        let cases = [
            ("Orders!D5", "Summary", "Orders", 3, "Orders!D4"),
            ("orders!D5", "Summary", "ORDERS", 3, "orders!D4"),
            ("'My Sheet'!A5", "Summary", "my sheet", 5, "#REF!"),
            (
                "'My Sheet'!A5:A6",
                "Summary",
                "My Sheet",
                1,
                "'My Sheet'!A4:A5",
            ),
            ("'Bob''s'!A5", "Summary", "bob's", 1, "'Bob''s'!A4"),
            ("Other!A5", "Orders", "Orders", 1, "Other!A5"),
            ("A5+Orders!A5", "Summary", "Orders", 1, "A5+Orders!A4"),
            ("A5+Orders!$A$5", "", "Orders", 1, "A5+Orders!$A$4"),
            (
                "[1]Orders!A5+'[1]My Sheet'!A5+[1]!Rate",
                "Orders",
                "Orders",
                1,
                "[1]Orders!A5+'[1]My Sheet'!A5+[1]!Rate",
            ),
            ("#REF!A5+A5", "Orders", "Orders", 1, "#REF!A5+A4"),
            ("Orders!Rate+A5", "Orders", "Orders", 1, "Orders!Rate+A4"),
            // The end naming the start's sheet again is one range.
            (
                "SUM(Orders!B2:Orders!B4)",
                "Summary",
                "Orders",
                2,
                "SUM(Orders!B2:B3)",
            ),
            (
                "SUM(Orders!B2:orders!B4)",
                "Summary",
                "Orders",
                4,
                "SUM(Orders!B2:B3)",
            ),
            (
                "SUM(Orders!B5:Orders!B6)",
                "Summary",
                "Other",
                1,
                "SUM(Orders!B5:Orders!B6)",
            ),
            // A range's end on another sheet is no range: each cell moves.
            (
                "Orders!B2:Other!B4",
                "Summary",
                "Orders",
                1,
                "Orders!B1:Other!B4",
            ),
        ];
        for (formula, home, target, row, expected) in cases {
            let rewritten = rows_deleted(formula, home, target, &[row]).expect(formula);
            assert_eq!(rewritten, expected, "{formula}");
        }
    }

    #[test]
    fn deleting_rows_refuses_3d_references() {
        for formula in ["SUM(Alpha:Gamma!A2)", "SUM('Jan 1:Mar 1'!A2)", "A:C!A1"] {
            let refused = rows_deleted(formula, "Orders", "Orders", &[1]);
            assert!(refused.is_err(), "{formula}");
        }
        // A span that leaves the sheet out is no reference to it.
        for formula in ["SUM(Summary:Other!A2)", "SUM(Alpha:Beta!A2)"] {
            let kept = rows_deleted(formula, "Orders", "Orders", &[1]);
            assert_eq!(kept.as_deref(), Ok(formula));
        }
        let Err(Unadjustable(reason)) = rows_deleted("Alpha:Gamma!A2", "X", "Beta", &[1]) else {
            panic!("a 3D reference is adjusted");
        };
        assert!(reason.contains("Alpha:Gamma"), "{reason}");
        // Another workbook's 3D reference is left alone.
        assert_eq!(
            rows_deleted("[1]Alpha:Gamma!A2", "X", "Alpha", &[1]),
            Ok("[1]Alpha:Gamma!A2".to_owned())
        );
    }

    #[test]
    fn deleting_rows_at_once_is_deleting_them_one_by_one_from_the_bottom() {
        let formula = "SUM(A2:B9)+C5+Orders!D7:D8+SUM(4:6)+$E$12-Other!A3+SUM(Orders!A1:A3)";
        let sets: [&[u32]; 7] = [
            &[1],
            &[2, 9],
            &[3, 4, 5],
            &[1, 5, 7, 8, 12],
            &[4, 5, 6, 10],
            &[2, 3, 6, 9, 11, 12],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        ];
        for deleted in sets {
            let at_once = deleted_on_orders(formula, deleted);
            let one_by_one = deleted
                .iter()
                .rev()
                .fold(formula.to_owned(), |formula, &row| {
                    deleted_on_orders(&formula, &[row])
                });
            assert_eq!(at_once, one_by_one, "{deleted:?}");
        }
    }

    /// An area on `sheet` (`None`: the formula's own).
    fn area(sheet: Option<&str>, rows: (u32, u32), columns: (u32, u32)) -> Area {
        Area {
            sheet: sheet.map(str::to_owned),
            rows,
            columns,
        }
    }

    #[test]
    fn references_are_the_areas_a_formula_reads() {
        let cases = [
            ("1+2", vec![]),
            ("\"A1\"&\"Data!B2\"", vec![]),
            (
                "B2*C3",
                vec![area(None, (2, 2), (2, 2)), area(None, (3, 3), (3, 3))],
            ),
            (
                "SUM(Orders!D2:D100)",
                vec![area(Some("Orders"), (2, 100), (4, 4))],
            ),
            (
                "'My Sheet'!$B$2*2",
                vec![area(Some("My Sheet"), (2, 2), (2, 2))],
            ),
            ("SUM(C3:a1)", vec![area(None, (1, 3), (1, 3))]),
            (
                "SUM(Orders!D2:Orders!D9)",
                vec![area(Some("Orders"), (2, 9), (4, 4))],
            ),
            ("SUM(A:B)", vec![area(None, (1, 1_048_576), (1, 2))]),
            ("SUM(2:4)", vec![area(None, (2, 4), (1, 16_384))]),
            ("[1]Sheet1!A1+[1]!Rate+B1", vec![area(None, (1, 1), (2, 2))]),
            ("LOG10(A2)+TRUE", vec![area(None, (2, 2), (1, 1))]),
            (
                "_xlfn.LET(_xlpm.x,A1,_xlpm.x*2)",
                vec![area(None, (1, 1), (1, 1))],
            ),
            ("#REF!+Orders!#REF!+#REF!A1", vec![]),
            ("IFERROR(1/0,#N/A)", vec![]),
        ];
        for (formula, areas) in cases {
            assert_eq!(references(formula), References::Areas(areas), "{formula}");
        }
    }

    #[test]
    fn references_that_the_text_does_not_tell() {
        for formula in [
            "Rate*2",
            "Orders!Rate",
            "INDIRECT(\"A1\")",
            "OFFSET(A1,1,1)",
            "_xlfn.ANCHORARRAY(A1)",
            "SUM(Table1[Amount])",
            "SUM(Alpha:Gamma!A2)",
            "SUM('Jan 1:Mar 1'!A2)",
            "SUM(A1:INDEX(B:B,3))",
        ] {
            assert_eq!(references(formula), References::Anything, "{formula}");
        }
    }

    #[test]
    fn an_area_holds_its_cells() {
        let own = area(None, (2, 4), (1, 2));
        assert!(own.holds(3, 2));
        assert!(!own.holds(5, 2));
        assert!(!own.holds(3, 3));
    }
}
