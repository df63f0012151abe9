//! Formula recalculation (issue 14). After a batch of edits, every formula
//! is recomputed and its cached result follows, so that reads through the
//! API, the file's cached values and a spreadsheet app agree.
//!
//! A pure layer like `xlsx`: no I/O. The store keeps one [`Calculator`] per
//! workbook it caches; the engine behind it sits behind [`Engine`].
//!
//! A formula's [`Freshness`] says what sheetd knows of its result:
//! - the engine computes it, and its result replaces the cached one
//!   whenever the two differ;
//! - the engine does not compute it as the file's producer did (an
//!   unknown function, an external reference, a different result when the
//!   workbook was first loaded): its cached result is *kept*, and given to
//!   the engine as a value, while the cells it refers to are unchanged;
//! - once one of those cells changes, it is *stale*, and so is every
//!   formula that depends on a stale one: no cached result (reads give
//!   `null`, the file holds no value, so spreadsheet apps compute it on
//!   open). A stale value is never served as a fresh one.

mod check;
mod ironcalc;
mod reads;

pub use check::formula_problems;

use std::collections::{HashMap, HashSet};

use crate::model::formula::{References, references};
use crate::model::value::{Cell, Formula, Freshness};
use crate::model::{Edited, Workbook};

/// A cell: sheet index, 0-based row and column.
pub type At = (usize, u32, u32);

/// The error text [`Engine::value`] gives for a cell it cannot read.
const ENGINE_FAILED: &str = "#ERROR!";

/// Error values that say the engine could not compute a formula, as
/// opposed to one the formula computes (`#DIV/0!`): IronCalc's own, and
/// the standard ones for unknown names and unsupported constructs.
const FAILURES: &[&str] = &[
    ENGINE_FAILED,
    "#N/IMPL!",
    "#NAME?",
    "#CIRC!",
    "#SPILL!",
    "#CALC!",
];

/// Functions whose result changes at every calculation: recomputed, never
/// held to the cached result.
const VOLATILE: &[&str] = &["NOW(", "TODAY(", "RAND(", "RANDBETWEEN(", "RANDARRAY("];

/// Functions that tell a formula from its value: while a formula calls
/// one, `TRUE()` and `FALSE()` are given to the engine as formulas.
const FORMULA_READERS: &[&str] = &["ISFORMULA(", "FORMULATEXT("];

/// What a cell gives the engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Input<'a> {
    Empty,
    Number(f64),
    Text(&'a str),
    Bool(bool),
    Error(&'a str),
    /// A formula's text, without `=`.
    Formula(&'a str),
}

/// What the engine computed for a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Computed {
    Empty,
    Number(f64),
    Text(String),
    Bool(bool),
    Error(String),
}

/// What sheetd needs of a formula engine.
pub trait Engine: Send {
    /// Gives the cell a value or a formula.
    fn set(&mut self, at: At, input: Input<'_>);
    /// Recomputes every formula.
    fn recalculate(&mut self);
    /// A cell's value as last computed.
    fn value(&self, at: At) -> Computed;
}

/// A workbook's formula engine, its cells in step with the workbook last
/// committed.
pub struct Calculator {
    engine: Box<dyn Engine>,
    /// The cells the formulas read: the engine holds those and the formulas.
    reads: reads::Reads,
    /// The row the engine's references stop at (see [`row_bound`]).
    last_row: u32,
    /// Whether the engine holds a formula it computes or a cell such a
    /// formula reads. When it holds neither, every formula of the workbook
    /// is a [`constant`] (LibreOffice saves booleans so), nothing it holds
    /// matters to a result, and rows that move need no new engine yet…
    holds: bool,
    /// … but the engine is then behind the workbook: its cells, names and
    /// tables are where they were. It is built again before it is given a
    /// formula to compute.
    behind: bool,
    /// Whether a formula calls a volatile function, whose result changes
    /// at every recalculation.
    volatile: bool,
    /// Whether every computed formula's cached result is the engine's: a
    /// whole recalculation ran since the engine was built (the file may
    /// lack results, or hold placeholders).
    settled: bool,
    /// Whether `TRUE()` and `FALSE()` are given to the engine as the values
    /// they always have ([`constant`]): unless a formula tells a formula
    /// from a value ([`FORMULA_READERS`]).
    constants: bool,
    /// The references of the formulas the engine does not compute (kept
    /// as the file has them), by cell, with the text they were read from:
    /// each write asks whether they read a change, and reading a formula's
    /// references takes as long as its text (a few MB of them, a second).
    kept_reads: HashMap<At, (String, References)>,
}

/// What a recalculation did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Recalculated {
    /// Formulas whose cached result changed.
    pub updated: usize,
    /// Formulas that are stale after it.
    pub stale: usize,
}

impl Calculator {
    /// An engine loaded with `workbook`, which learns here which formulas
    /// the engine cannot compute as the file has them (see the module
    /// text). `None` when the engine refuses the workbook's sheets.
    /// A panic in the engine gives `None` too.
    pub fn build(workbook: &mut Workbook) -> Option<Calculator> {
        guarded(|| Calculator::classify(workbook)).flatten()
    }

    /// An engine for a workbook that had no formula before a batch wrote
    /// some (§11.4): each is new, so each is computed by the recalculation
    /// that follows, none held to a cached result it never had.
    pub fn build_for_written(workbook: &mut Workbook) -> Option<Calculator> {
        let calculator = Calculator::build(workbook)?;
        for (_, cell) in all_cells_mut(workbook) {
            if let Cell::Formula(formula) = cell {
                formula.freshness = Freshness::Computed;
            }
        }
        Some(calculator)
    }

    fn classify(workbook: &mut Workbook) -> Option<Calculator> {
        let mut calculator = Calculator::load(workbook)?;
        let constants = calculator.constants;
        let engine = &mut calculator.engine;
        engine.recalculate();
        let mut unknown = Vec::new();
        for (at, cell) in all_cells_mut(workbook) {
            let Cell::Formula(formula) = cell else {
                continue;
            };
            if formula.freshness != Freshness::Computed {
                continue;
            }
            let computed = value_of(engine.as_ref(), at, &formula.expr, constants);
            let failed = is_failure(&computed);
            // The engine's result replaces a placeholder, unless it is an
            // error where the file has a value (`MAXA` of text is 0).
            let placeholder =
                is_placeholder(&formula.cached) && !matches!(computed, Computed::Error(_));
            if failed && formula.cached == Cell::Empty {
                formula.freshness = Freshness::Stale;
                unknown.push(at);
            } else if !agrees(&computed, &formula.cached)
                && (failed || !(is_volatile(&formula.expr) || placeholder))
            {
                formula.freshness = Freshness::Kept;
                engine.set(at, input_of_value(&formula.cached));
            }
        }
        // What reads a formula of unknown value keeps the result the file
        // has for it, if it has one: that was computed with the value.
        for at in mark_dependents(workbook, unknown, true).kept {
            if let Some(Cell::Formula(formula)) = cell_at(workbook, at) {
                calculator.engine.set(at, input_of_value(&formula.cached));
            }
        }
        Some(calculator)
    }

    /// A new engine given every cell of `workbook` as its freshness says.
    fn load(workbook: &Workbook) -> Option<Calculator> {
        let mut reads = reads::Reads::new(workbook.sheets.len());
        let mut constants = true;
        for (at, cell) in all_cells(workbook) {
            // A constant reads no cell and tells nothing of formulas.
            if let Some(formula) = computes(cell, true) {
                reads.add(workbook, at.0, &references(&formula.expr));
                constants &= !calls(&formula.expr, FORMULA_READERS);
            }
        }
        let last_row = row_bound(workbook);
        let engine: Box<dyn Engine> = Box::new(ironcalc::IronCalc::new(workbook, last_row)?);
        let mut calculator = Calculator {
            engine,
            reads,
            last_row,
            holds: false,
            behind: false,
            volatile: false,
            settled: false,
            constants,
            kept_reads: HashMap::new(),
        };
        for (at, cell) in all_cells(workbook) {
            calculator.give(at, cell);
        }
        Some(calculator)
    }

    /// Gives the engine a cell, if it is a formula or a formula reads it.
    fn give(&mut self, at: At, cell: &Cell) {
        let formula = computes(cell, self.constants);
        if let Some(formula) = formula {
            self.volatile |= is_volatile(&formula.expr);
        }
        if formula.is_some() || self.reads.contains(at) {
            self.holds = true;
            self.engine.set(at, input(cell, self.constants));
        }
    }

    /// Learns what the formulas at `formulas` (new, or with a new text)
    /// read, and gives the engine the cells of those it did not hold yet.
    fn learn(&mut self, workbook: &Workbook, formulas: &[At]) {
        let refers: Vec<(usize, References)> = formulas
            .iter()
            .filter_map(|&at| match cell_at(workbook, at) {
                Some(Cell::Formula(formula)) => {
                    self.volatile |= is_volatile(&formula.expr);
                    Some((at.0, references(&formula.expr)))
                }
                _ => None,
            })
            .collect();
        let mut more = reads::Reads::new(workbook.sheets.len());
        for (home, refers) in &refers {
            more.add(workbook, *home, refers);
        }
        let news: Vec<At> = all_cells(workbook)
            .filter(|&(at, cell)| !cell.is_blank() && more.contains(at) && !self.reads.contains(at))
            .map(|(at, _)| at)
            .collect();
        for (home, refers) in &refers {
            self.reads.add(workbook, *home, refers);
        }
        for at in news {
            if let Some(cell) = cell_at(workbook, at) {
                self.holds = true;
                self.engine.set(at, input(cell, self.constants));
            }
        }
    }

    /// Brings the engine to `workbook`, which is the workbook it holds with
    /// the `edits` of a batch (one per sheet) applied, recomputes, and
    /// updates the cached results of the workbook's formulas.
    ///
    /// Should the engine panic, the formulas that read a changed cell are
    /// made stale instead, and `Err` says the calculator is spent.
    pub fn recalculate(
        &mut self,
        workbook: &mut Workbook,
        edits: &[Edited],
    ) -> Result<Recalculated, EngineFailed> {
        match guarded(|| self.recalculate_with_engine(workbook, edits)) {
            Some(Ok(done)) => Ok(done),
            Some(Err(EngineFailed)) | None => {
                mark_readers_stale(workbook, edits);
                Err(EngineFailed)
            }
        }
    }

    fn recalculate_with_engine(
        &mut self,
        workbook: &mut Workbook,
        edits: &[Edited],
    ) -> Result<Recalculated, EngineFailed> {
        let mut changes = Changes::of(edits);
        if changes.is_empty() {
            return Ok(Recalculated::default());
        }
        // A kept formula whose own cell changed is stale (the loop over the
        // results below finds it so).
        for &at in &changes.cells {
            if let Some(Cell::Formula(formula)) = cell_mut(workbook, at)
                && formula.freshness == Freshness::Kept
            {
                make_stale(formula);
            }
        }
        // Rows that moved, or grew past where the engine's references stop,
        // no longer line up with the engine's cells; a sheet added is one
        // the engine lacks (and formulas naming it read it now).
        // So is a formula that tells formulas from values, written where
        // the engine holds the constant ones as values.
        let reads_formulas = |&at: &At| matches!(cell_at(workbook, at), Some(Cell::Formula(f)) if calls(&f.expr, FORMULA_READERS));
        let moved = !changes.moved.is_empty();
        let to_compute = (moved || self.behind) && self.holds_any_after(workbook, edits);
        self.behind |= moved;
        let reload = to_compute
            || row_bound(workbook) > self.last_row
            || workbook.sheets.len() != self.reads.sheets()
            || (self.constants && changes.cells.iter().any(reads_formulas));
        if !reload {
            let formulas: Vec<At> = changes
                .cells
                .iter()
                .copied()
                .filter(|&at| matches!(cell_at(workbook, at), Some(Cell::Formula(_))))
                .collect();
            if !formulas.is_empty() {
                self.learn(workbook, &formulas);
            }
            let mut reaches_a_formula = self.volatile || !self.settled;
            for &at in &changes.cells {
                let cell = cell_at(workbook, at).unwrap_or(&Cell::Empty);
                // A constant's cached result may need its value.
                reaches_a_formula |= matches!(cell, Cell::Formula(_));
                // A cell that is not computed and that no formula reads is
                // cleared: it may have held one.
                let given = if computes(cell, self.constants).is_some() || self.reads.contains(at) {
                    reaches_a_formula = true;
                    self.holds = true;
                    input(cell, self.constants)
                } else {
                    Input::Empty
                };
                self.engine.set(at, given);
            }
            // No formula reads a changed cell, none changed, none is
            // volatile, and every result is the engine's already: every
            // result stays as it is, and computing them all again (a pass
            // over every cell) is skipped.
            if !reaches_a_formula {
                return Ok(Recalculated::default());
            }
        } else {
            *self = Calculator::load(workbook).ok_or(EngineFailed)?;
        }
        self.engine.recalculate();
        self.settled = true;

        // The new results, and the formulas that are kept or stale.
        let mut stale = Vec::new();
        let mut results = Vec::new();
        let mut kept = Vec::new();
        for (at, cell) in all_cells(workbook) {
            let Cell::Formula(formula) = cell else {
                continue;
            };
            match formula.freshness {
                Freshness::Computed => {
                    let computed =
                        value_of(self.engine.as_ref(), at, &formula.expr, self.constants);
                    if agrees(&computed, &formula.cached) {
                        continue;
                    }
                    changes.cells.insert(at);
                    if is_failure(&computed) {
                        // Not a value the formula has: unknown, not wrong.
                        stale.push(at);
                    } else {
                        results.push((at, computed));
                    }
                }
                Freshness::Kept => kept.push(at),
                // A formula that is new or moved may read a cell that was
                // stale already: every stale cell is a start.
                Freshness::Stale => stale.push(at),
            }
        }
        let mut kept_reads = HashMap::with_capacity(kept.len());
        for at in kept {
            let Some(Cell::Formula(formula)) = cell_at(workbook, at) else {
                continue;
            };
            let read = match self.kept_reads.remove(&at) {
                Some((expr, read)) if expr == formula.expr => (expr, read),
                _ => (formula.expr.clone(), references(&formula.expr)),
            };
            if changes.read_by(workbook, at.0, &read.1) {
                stale.push(at);
            }
            kept_reads.insert(at, read);
        }
        self.kept_reads = kept_reads;
        for &at in &stale {
            if let Some(Cell::Formula(formula)) = cell_mut(workbook, at) {
                make_stale(formula);
            }
        }
        let mut done = Recalculated {
            updated: 0,
            stale: stale.len(),
        };
        done.stale += mark_dependents(workbook, stale, false).stale;
        for (at, computed) in results {
            let shows_date = shows_date(workbook, at);
            if let Some(Cell::Formula(formula)) = cell_mut(workbook, at)
                && formula.freshness == Freshness::Computed
            {
                formula.cached = cell_of(computed, &formula.cached, shows_date);
                done.updated += 1;
            }
        }
        Ok(done)
    }

    /// Whether, after the `edits`, the engine holds or must be given a
    /// formula it computes or a cell one reads: if so, rows that moved
    /// (now or [before](Calculator::behind)) call for a new engine. If
    /// not, no computed formula was written either, wherever the moves put
    /// it, and nothing the engine holds matters to a result.
    fn holds_any_after(&self, workbook: &Workbook, edits: &[Edited]) -> bool {
        self.holds || workbook.logged_any(edits, |cell| computes(cell, self.constants).is_some())
    }

    /// The estimated memory the engine takes, for the cache's bound: it
    /// was given every cell of the workbook it is in step with, of `cells`
    /// [cell slots](Workbook::cell_slots).
    pub fn bytes(&self, cells: usize) -> usize {
        // Measured: about 18 MB for 100,000 cells (docs/FORMULA-ENGINE.md).
        let kept: usize = (self.kept_reads.values())
            .map(|(expr, _)| 2 * expr.len() + 64)
            .sum();
        cells * 180 + kept
    }
}

/// The engine panicked, or refused the workbook after rows moved: its state
/// is unknown, and it must not be used again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the formula engine failed")]
pub struct EngineFailed;

/// The row below every sheet's last that the engine's references stop at:
/// IronCalc reads every row a reference spans, and a whole column
/// (`SUM(A:A)`) spans 1,048,576, which takes it seconds to minutes. With
/// no cell below, the results are the same. A power of two, at least 1,024,
/// so that rows appended rarely pass it; when they do, the engine is built
/// again.
fn row_bound(workbook: &Workbook) -> u32 {
    let rows = workbook
        .sheets
        .iter()
        .map(|s| s.rows.len())
        .max()
        .unwrap_or(0);
    let bound = (rows + 1).next_power_of_two().max(1024);
    u32::try_from(bound).unwrap_or(u32::MAX).min(1_048_576)
}

/// Runs a step of the engine; `None` if it panicked (the panic is logged
/// by the panic hook; a workbook must never take the service down).
fn guarded<T>(step: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).ok()
}

/// Without an engine (it refused the workbook, or failed): every formula
/// that reads a cell the `edits` changed, and every formula that reads one
/// of those, is made stale, so that no stale result is served as fresh.
pub fn mark_readers_stale(workbook: &mut Workbook, edits: &[Edited]) {
    let changes = Changes::of(edits);
    if changes.is_empty() {
        return;
    }
    let readers: Vec<At> = all_cells(workbook)
        .filter_map(|(at, cell)| match cell {
            Cell::Formula(f) if f.freshness != Freshness::Stale => changes
                .read_by(workbook, at.0, &references(&f.expr))
                .then_some(at),
            _ => None,
        })
        .collect();
    for &at in &readers {
        if let Some(Cell::Formula(formula)) = cell_mut(workbook, at) {
            make_stale(formula);
        }
    }
    mark_dependents(workbook, readers, false);
}

/// What a batch changed.
struct Changes {
    /// The cells whose content or result changed.
    cells: HashSet<At>,
    /// The sheets whose rows moved: every cell of them may have changed.
    moved: Vec<usize>,
}

impl Changes {
    fn of(edits: &[Edited]) -> Changes {
        let mut cells = HashSet::new();
        let mut moved = Vec::new();
        for (sheet, edited) in edits.iter().enumerate() {
            cells.extend(
                edited
                    .cells
                    .iter()
                    .map(|&(row, column)| (sheet, row, column)),
            );
            // A table grown: what its structured references read changed.
            if edited.moved || edited.grown {
                moved.push(sheet);
            }
        }
        Changes { cells, moved }
    }

    fn is_empty(&self) -> bool {
        self.cells.is_empty() && self.moved.is_empty()
    }

    /// Whether a formula on sheet `home` with these references reads a
    /// changed cell.
    fn read_by(&self, workbook: &Workbook, home: usize, refers: &References) -> bool {
        let areas = match refers {
            References::Anything => return !self.is_empty(),
            References::Areas(areas) => areas,
        };
        areas.iter().any(|area| {
            let Some(sheet) = reads::sheet_of(workbook, home, area) else {
                return false;
            };
            self.moved.contains(&sheet)
                || self
                    .cells
                    .iter()
                    .any(|&(s, row, column)| s == sheet && area.holds(row + 1, column + 1))
        })
    }
}

/// What the engine is given for a cell: a computed formula's text (a
/// [`constant`]'s value, with `constants`); a kept one's cached result;
/// nothing for a stale one.
fn input(cell: &Cell, constants: bool) -> Input<'_> {
    match cell {
        Cell::Formula(formula) => match formula.freshness {
            Freshness::Computed => match constant(&formula.expr).filter(|_| constants) {
                Some(value) => Input::Bool(value),
                None => Input::Formula(&formula.expr),
            },
            Freshness::Kept => input_of_value(&formula.cached),
            Freshness::Stale => Input::Empty,
        },
        value => input_of_value(value),
    }
}

/// The formula of a cell that the engine computes: with `constants`, not a
/// [`constant`] one.
fn computes(cell: &Cell, constants: bool) -> Option<&Formula> {
    match cell {
        Cell::Formula(formula) if !(constants && constant(&formula.expr).is_some()) => {
            Some(formula)
        }
        _ => None,
    }
}

/// The result of the formula `expr` at `at`, as `engine` last computed
/// it; with `constants`, a [`constant`]'s own.
fn value_of(engine: &dyn Engine, at: At, expr: &str, constants: bool) -> Computed {
    match constant(expr).filter(|_| constants) {
        Some(value) => Computed::Bool(value),
        None => engine.value(at),
    }
}

/// The value of a formula that is a constant whatever the cells hold:
/// `TRUE()` and `FALSE()`, which LibreOffice writes for every boolean
/// cell (100k of them in a sheet of 100k rows). Unless a formula tells
/// formulas from values, the engine does not hold them as formulas, to
/// parse and compute, but as values, and only when a formula reads them.
fn constant(expr: &str) -> Option<bool> {
    match expr.trim() {
        e if e.eq_ignore_ascii_case("TRUE()") => Some(true),
        e if e.eq_ignore_ascii_case("FALSE()") => Some(false),
        _ => None,
    }
}

fn input_of_value(cell: &Cell) -> Input<'_> {
    match cell {
        Cell::Empty | Cell::Formula(_) => Input::Empty,
        Cell::Number(n) | Cell::DateTime(n) | Cell::Timestamp(n) | Cell::Duration(n) => {
            Input::Number(*n)
        }
        Cell::Text(text) => Input::Text(text),
        Cell::Bool(b) => Input::Bool(*b),
        Cell::Error(error) => Input::Error(error),
    }
}

/// What [`mark_dependents`] marked.
struct Marked {
    kept: Vec<At>,
    stale: usize,
}

/// Marks stale, in rounds, every formula that reads a cell that is stale,
/// starting from `stale`; with `keep_cached`, a computed reader with a
/// cached result (not a placeholder) is kept instead, and its readers are
/// left as they are.
fn mark_dependents(workbook: &mut Workbook, mut stale: Vec<At>, keep_cached: bool) -> Marked {
    let mut marked = Marked {
        kept: Vec::new(),
        stale: 0,
    };
    while !stale.is_empty() {
        let round = Changes {
            cells: stale.drain(..).collect(),
            moved: Vec::new(),
        };
        let readers: Vec<At> = all_cells(workbook)
            .filter_map(|(at, cell)| match cell {
                Cell::Formula(f)
                    if f.freshness == Freshness::Computed
                        || (!keep_cached && f.freshness == Freshness::Kept) =>
                {
                    round
                        .read_by(workbook, at.0, &references(&f.expr))
                        .then_some(at)
                }
                _ => None,
            })
            .collect();
        for at in readers {
            if let Some(Cell::Formula(formula)) = cell_mut(workbook, at) {
                if keep_cached && !is_placeholder(&formula.cached) {
                    formula.freshness = Freshness::Kept;
                    marked.kept.push(at);
                } else {
                    make_stale(formula);
                    marked.stale += 1;
                    stale.push(at);
                }
            }
        }
    }
    marked
}

fn make_stale(formula: &mut crate::model::value::Formula) {
    formula.freshness = Freshness::Stale;
    formula.cached = Cell::Empty;
}

/// Whether a computed result and a cached one are the same value. Numbers
/// agree to 12 significant digits: a file's cached results are printed
/// with 15 to 17, and sums may round differently.
fn agrees(computed: &Computed, cached: &Cell) -> bool {
    match (computed, cached) {
        (
            Computed::Number(a),
            Cell::Number(b) | Cell::DateTime(b) | Cell::Timestamp(b) | Cell::Duration(b),
        ) => a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-3),
        (Computed::Text(a), Cell::Text(b)) => a == b,
        (Computed::Text(a), Cell::Empty) => a.is_empty(),
        (Computed::Bool(a), Cell::Bool(b)) => a == b,
        (Computed::Error(a), Cell::Error(b)) => a == b,
        (Computed::Empty, Cell::Empty) => true,
        _ => false,
    }
}

/// Whether a cached result may be a writer's placeholder rather than a
/// computed result: none, or the `0` that libraries such as XlsxWriter
/// write for every formula.
fn is_placeholder(cached: &Cell) -> bool {
    matches!(cached, Cell::Empty) || *cached == Cell::Number(0.0)
}

fn is_failure(computed: &Computed) -> bool {
    matches!(computed, Computed::Error(error) if FAILURES.contains(&error.as_str()))
}

fn is_volatile(expr: &str) -> bool {
    calls(expr, VOLATILE)
}

/// Whether `expr` calls one of `functions` (each named with its `(`,
/// in capitals), in any case.
fn calls(expr: &str, functions: &[&str]) -> bool {
    let text = expr.as_bytes();
    functions.iter().any(|function| {
        let function = function.as_bytes();
        (0..=text.len().saturating_sub(function.len())).any(|at| {
            let named = text.get(at..at + function.len());
            // `NOW(` but not `KNOW(`.
            let part_of_another = at > 0
                && matches!(text[at - 1], b'.' | b'_' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z');
            named.is_some_and(|named| named.eq_ignore_ascii_case(function)) && !part_of_another
        })
    })
}

/// A computed result as a cached one: a date stays a date (and a number
/// in a date format becomes one), as the reader would type it.
fn cell_of(computed: Computed, previous: &Cell, shows_date: bool) -> Cell {
    match computed {
        Computed::Number(n) => match previous {
            Cell::DateTime(_) => Cell::DateTime(n),
            Cell::Timestamp(_) => Cell::Timestamp(n),
            Cell::Duration(_) => Cell::Duration(n),
            _ if shows_date => Cell::DateTime(n),
            _ => Cell::Number(n),
        },
        Computed::Text(text) => Cell::Text(text),
        Computed::Bool(b) => Cell::Bool(b),
        Computed::Error(error) => Cell::Error(error),
        Computed::Empty => Cell::Empty,
    }
}

/// Whether the cell's number format shows a date.
fn shows_date(workbook: &Workbook, (sheet, row, column): At) -> bool {
    let id = workbook.sheets[sheet]
        .layout
        .format(row as usize, column as usize);
    workbook
        .formats
        .get(id as usize)
        .is_some_and(|format| format.shows_date())
}

fn all_cells(workbook: &Workbook) -> impl Iterator<Item = (At, &Cell)> {
    workbook.sheets.iter().enumerate().flat_map(|(s, sheet)| {
        sheet.rows.iter().enumerate().flat_map(move |(r, row)| {
            row.iter()
                .enumerate()
                .map(move |(c, cell)| ((s, r as u32, c as u32), cell))
        })
    })
}

fn all_cells_mut(workbook: &mut Workbook) -> impl Iterator<Item = (At, &mut Cell)> {
    workbook
        .sheets
        .iter_mut()
        .enumerate()
        .flat_map(|(s, sheet)| {
            sheet.rows.iter_mut().enumerate().flat_map(move |(r, row)| {
                row.iter_mut()
                    .enumerate()
                    .map(move |(c, cell)| ((s, r as u32, c as u32), cell))
            })
        })
}

fn cell_at(workbook: &Workbook, (sheet, row, column): At) -> Option<&Cell> {
    workbook
        .sheets
        .get(sheet)?
        .rows
        .get(row as usize)?
        .get(column as usize)
}

/// The cell at `at`, to change: logged as changed in its sheet's
/// [`Edited`](crate::model::Edited), for the commit to tell an append.
fn cell_mut(workbook: &mut Workbook, (sheet, row, column): At) -> Option<&mut Cell> {
    let sheet = workbook.sheets.get_mut(sheet)?;
    let cell = sheet.rows.get_mut(row as usize)?.get_mut(column as usize)?;
    sheet.edited.cells.push((row, column));
    Some(cell)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sheet;
    use crate::model::formula::RowMove;
    use crate::model::value::Formula;

    fn formula(expr: &str, cached: f64) -> Cell {
        Cell::Formula(Box::new(Formula::new(expr, Cell::Number(cached))))
    }

    /// A constant formula as LibreOffice saves a boolean.
    fn boolean(expr: &str, value: bool) -> Cell {
        Cell::Formula(Box::new(Formula::new(expr, Cell::Bool(value))))
    }

    /// A formula written without a result.
    fn told(expr: &str) -> Cell {
        Cell::Formula(Box::new(Formula::new(expr, Cell::Empty)))
    }

    /// Row `row` (1-based) of the first sheet deleted, as the model
    /// deletes it, by a batch that logged `cells` (numbered as before).
    fn row_deleted(workbook: &mut Workbook, row: u32, cells: Vec<(u32, u32)>) -> [Edited; 1] {
        let moved = RowMove::Deleted(vec![row]);
        moved.apply(&mut workbook.sheets[0].rows, |_| Vec::new());
        [Edited {
            cells,
            moved: true,
            moves: vec![moved],
            ..Edited::default()
        }]
    }

    /// The first row of the first sheet as the API answers it.
    fn first_row(workbook: &Workbook) -> Vec<serde_json::Value> {
        workbook.sheets[0].rows[0]
            .iter()
            .map(Cell::to_json)
            .collect()
    }

    fn freshness(workbook: &Workbook, row: usize, column: usize) -> Freshness {
        match &workbook.sheets[0].rows[row][column] {
            Cell::Formula(formula) => formula.freshness,
            other => panic!("not a formula: {other:?}"),
        }
    }

    /// A: 1, 2; B1 = A1*2, B2 = B1+1 (reads B1), C1 = A2*3 (reads only A2).
    fn workbook() -> Workbook {
        let rows = vec![
            vec![
                Cell::Number(1.0),
                formula("A1*2", 2.0),
                formula("A2*3", 6.0),
            ],
            vec![Cell::Number(2.0), formula("B1+1", 3.0)],
        ];
        Workbook {
            sheets: vec![Sheet::new("S", rows)],
            ..Workbook::default()
        }
    }

    #[test]
    fn without_an_engine_the_readers_of_a_change_and_theirs_go_stale() {
        let mut workbook = workbook();
        workbook.sheets[0].rows[0][0] = Cell::Number(5.0);
        let edits = [Edited {
            cells: vec![(0, 0)],
            ..Edited::default()
        }];

        mark_readers_stale(&mut workbook, &edits);

        assert_eq!(freshness(&workbook, 0, 1), Freshness::Stale);
        assert_eq!(freshness(&workbook, 1, 1), Freshness::Stale, "reads B1");
        assert_eq!(
            freshness(&workbook, 0, 2),
            Freshness::Computed,
            "reads A2 only"
        );
        assert_eq!(
            workbook.sheets[0].rows[0][1].to_json(),
            serde_json::Value::Null
        );
    }

    #[test]
    fn constant_formulas_keep_their_value_and_give_it_to_their_readers() {
        // As LibreOffice saves booleans: `TRUE()` and `FALSE()` formulas.
        let rows = vec![
            vec![boolean("TRUE()", true), formula("IF(A1,1,2)", 1.0)],
            vec![boolean("false()", false), formula("IF(A2,1,2)", 2.0)],
        ];
        let mut workbook = Workbook {
            sheets: vec![Sheet::new("S", rows)],
            ..Workbook::default()
        };
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        // Row 1's constant becomes the other one; its reader follows.
        workbook.sheets[0].rows[0][0] = boolean("FALSE()", true);
        let edits = [Edited {
            cells: vec![(0, 0)],
            ..Edited::default()
        }];

        calculator.recalculate(&mut workbook, &edits).unwrap();

        let values: Vec<_> = [(0, 0), (0, 1), (1, 0), (1, 1)]
            .iter()
            .map(|&(r, c)| workbook.sheets[0].rows[r][c].to_json())
            .collect();
        assert_eq!(
            values,
            [false.into(), 2.into(), false.into(), 2.into()] as [serde_json::Value; 4]
        );
        assert!(!is_volatile("TRUE()"));
        assert_eq!(super::constant(" TRUE() "), Some(true));
        assert_eq!(super::constant("TRUE()+0"), None);
    }

    #[test]
    fn constant_formulas_stay_formulas_to_a_formula_that_tells_them_from_values() {
        let rows = vec![vec![
            boolean("TRUE()", true),
            Cell::Number(1.0),
            Cell::Empty,
        ]];
        let mut workbook = Workbook {
            sheets: vec![Sheet::new("S", rows)],
            ..Workbook::default()
        };
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        // Written after the engine took the constant as a value.
        workbook.sheets[0].rows[0][1] = told("ISFORMULA(A1)");
        workbook.sheets[0].rows[0][2] = told("formulatext(A1)");
        let edits = [Edited {
            cells: vec![(0, 1), (0, 2)],
            ..Edited::default()
        }];
        for formula in &mut workbook.sheets[0].rows[0][1..] {
            if let Cell::Formula(formula) = formula {
                formula.freshness = Freshness::Computed;
            }
        }

        calculator.recalculate(&mut workbook, &edits).unwrap();

        let values: Vec<_> = (0..3)
            .map(|c| workbook.sheets[0].rows[0][c].to_json())
            .collect();
        assert_eq!(
            values,
            [true.into(), true.into(), "=TRUE()".into()] as [serde_json::Value; 3]
        );
    }

    /// Rows that move in a workbook whose only formulas are constants keep
    /// the engine (it holds nothing whose place matters); a formula that
    /// reads cells, written before or with the move, is computed where
    /// the cells are now.
    #[test]
    fn rows_that_move_among_constants_leave_formulas_written_later_right() {
        let rows = (1..=4)
            .map(|n| vec![boolean("TRUE()", true), Cell::Number(f64::from(n))])
            .collect();
        let mut workbook = Workbook {
            sheets: vec![Sheet::new("S", rows)],
            ..Workbook::default()
        };
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        assert!(!calculator.holds);
        // A constant changed, then the first row deleted.
        workbook.sheets[0].rows[1][0] = boolean("FALSE()", false);
        let edits = row_deleted(&mut workbook, 1, vec![(1, 0)]);
        calculator.recalculate(&mut workbook, &edits).unwrap();
        assert!(!calculator.holds, "constants alone: nothing held");

        // A formula written at row 2 (`TRUE()`, 3), then the first row
        // deleted in the same batch: it reads the cells row 1 holds now.
        workbook.sheets[0].rows[1].push(told("IF(A1,B1*10,1)"));
        let edits = row_deleted(&mut workbook, 1, vec![(1, 2)]);
        calculator.recalculate(&mut workbook, &edits).unwrap();
        assert_eq!(
            workbook.sheets[0].rows[0][2].to_json(),
            serde_json::json!(30)
        );
        assert!(calculator.holds);

        // Once the engine holds a formula, rows that move are followed.
        workbook.sheets[0].rows[0][1] = Cell::Number(5.0);
        let edits = row_deleted(&mut workbook, 2, vec![(0, 1)]);
        calculator.recalculate(&mut workbook, &edits).unwrap();
        assert_eq!(
            first_row(&workbook),
            [true.into(), 5.into(), 50.into()] as [serde_json::Value; 3]
        );
    }

    /// An engine kept through rows that moved is behind the workbook (its
    /// names, and a constant's kept value, are where they were): the first
    /// formula to compute, in a later batch that moves nothing, gets a new
    /// one.
    #[test]
    fn a_formula_written_after_rows_moved_among_constants_reads_names_where_they_are_now() {
        // A1 is a constant whose cached value is no boolean: the engine
        // keeps that value.
        let at_a1 = Cell::Formula(Box::new(Formula::new("TRUE()", Cell::Number(1.0))));
        let rows = vec![
            vec![at_a1, Cell::Number(1.0)],
            vec![Cell::Empty, Cell::Number(2.0)],
            vec![boolean("TRUE()", true), Cell::Number(3.0)],
            vec![boolean("TRUE()", true), Cell::Number(4.0)],
        ];
        let mut workbook = Workbook {
            sheets: vec![Sheet::new("S", rows)],
            names: vec![crate::model::workbook::DefinedName {
                name: "Data".into(),
                scope: None,
                refers_to: "S!$B$2:$B$4".into(),
                hidden: false,
            }],
            ..Workbook::default()
        };
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        // Row 1 deleted, and the name moved as the model moves it.
        let edits = row_deleted(&mut workbook, 1, Vec::new());
        workbook.names[0].refers_to = "S!$B$1:$B$3".into();
        calculator.recalculate(&mut workbook, &edits).unwrap();

        workbook.sheets[0].rows[0].extend([told("SUM(Data)"), told("A1*5")]);
        let edits = [Edited {
            cells: vec![(0, 2), (0, 3)],
            ..Edited::default()
        }];
        calculator.recalculate(&mut workbook, &edits).unwrap();

        assert_eq!(
            first_row(&workbook)[2..],
            [9.into(), 0.into()] as [serde_json::Value; 2]
        );
    }

    #[test]
    fn the_engine_recomputes_what_reads_a_change() {
        let mut workbook = workbook();
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        workbook.sheets[0].rows[0][0] = Cell::Number(5.0);
        let edits = [Edited {
            cells: vec![(0, 0)],
            ..Edited::default()
        }];

        let done = calculator.recalculate(&mut workbook, &edits).unwrap();

        assert_eq!(
            done,
            Recalculated {
                updated: 2,
                stale: 0
            }
        );
        let values: Vec<_> = [(0, 1), (1, 1), (0, 2)]
            .iter()
            .map(|&(r, c)| workbook.sheets[0].rows[r][c].to_json())
            .collect();
        assert_eq!(values, [10, 11, 6]);
    }

    #[test]
    fn a_change_no_formula_reads_changes_no_result_but_volatile_ones() {
        let mut workbook = workbook();
        workbook.sheets[0].rows[1].push(Cell::Number(0.0));
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        let change_c2 = |workbook: &mut Workbook, calculator: &mut Calculator, to: f64| {
            workbook.sheets[0].rows[1][2] = Cell::Number(to);
            let edits = [Edited {
                cells: vec![(1, 2)],
                ..Edited::default()
            }];
            calculator.recalculate(workbook, &edits).unwrap()
        };
        assert_eq!(
            change_c2(&mut workbook, &mut calculator, 4.0),
            Recalculated::default()
        );

        // A random number is drawn again at every recalculation.
        workbook.sheets[0].rows[0].push(formula("RAND()+5", 5.5));
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        let done = change_c2(&mut workbook, &mut calculator, 8.0);
        assert_eq!(done.updated, 1, "{done:?}");
    }

    #[test]
    fn results_that_disagree_with_the_file_are_kept_unless_placeholders() {
        let mut workbook = workbook();
        workbook.sheets[0].rows[0][1] = formula("A1*2", 99.0);
        workbook.sheets[0].rows[1][1] = formula("B1+1", 0.0);

        Calculator::build(&mut workbook).expect("engine");

        assert_eq!(freshness(&workbook, 0, 1), Freshness::Kept);
        assert_eq!(
            freshness(&workbook, 1, 1),
            Freshness::Computed,
            "0 is a placeholder"
        );
    }

    #[test]
    fn a_result_the_file_has_wins_over_an_engine_error() {
        let mut workbook = workbook();
        // MAXA over text is 0 to Excel; an empty TEXT() is "".
        workbook.sheets[0].rows[0][1] = formula("A1/\"x\"", 0.0);
        workbook.sheets[0].rows[1][1] = Cell::Formula(Box::new(Formula::new(
            "A2/\"x\"",
            Cell::Text(String::new()),
        )));

        Calculator::build(&mut workbook).expect("engine");

        assert_eq!(freshness(&workbook, 0, 1), Freshness::Kept);
        assert_eq!(freshness(&workbook, 1, 1), Freshness::Kept);
    }

    /// The references of a formula kept as the file has it are read once,
    /// and still tell, write after write, which change it reads.
    #[test]
    fn a_kept_formula_goes_stale_when_a_later_write_changes_what_it_reads() {
        let mut workbook = workbook();
        workbook.sheets[0].rows[0][1] = formula("A1/\"x\"", 0.0);
        workbook.sheets[0].rows[0][2] = formula("A2/\"x\"", 0.0);
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        assert_eq!(freshness(&workbook, 0, 2), Freshness::Kept);
        let mut change = |row: usize, to: f64| {
            workbook.sheets[0].rows[row][0] = Cell::Number(to);
            let edits = [Edited {
                cells: vec![(row as u32, 0)],
                ..Edited::default()
            }];
            calculator.recalculate(&mut workbook, &edits).unwrap();
            (0..2)
                .map(|c| freshness(&workbook, 0, c + 1))
                .collect::<Vec<_>>()
        };
        assert_eq!(change(0, 7.0), [Freshness::Stale, Freshness::Kept]);
        assert_eq!(change(0, 8.0), [Freshness::Stale, Freshness::Kept]);
        assert_eq!(change(1, 9.0), [Freshness::Stale, Freshness::Stale]);
    }

    #[test]
    fn what_reads_an_unknown_result_keeps_the_files_result_at_load() {
        let mut workbook = workbook();
        workbook.sheets[0].rows[0][1] =
            Cell::Formula(Box::new(Formula::new("SHEETDUNKNOWN(A1)", Cell::Empty)));

        Calculator::build(&mut workbook).expect("engine");

        assert_eq!(freshness(&workbook, 0, 1), Freshness::Stale);
        assert_eq!(freshness(&workbook, 1, 1), Freshness::Kept, "B2 reads B1");
        assert_eq!(workbook.sheets[0].rows[1][1].to_json(), 3);
    }

    #[test]
    fn whole_columns_are_read_to_the_last_row() {
        let mut workbook = workbook();
        workbook.sheets[0].rows[1][1] = formula("SUM(A:A)", 3.0);
        let mut calculator = Calculator::build(&mut workbook).expect("engine");
        // 2,000 rows: past the 1,024 the engine's references stop at.
        for row in 2..2000u32 {
            workbook.sheets[0].rows.push(vec![Cell::Number(1.0)]);
            workbook.sheets[0].edited.cells.push((row, 0));
        }
        let edits = workbook.take_edits();
        calculator.recalculate(&mut workbook, &edits).unwrap();
        assert_eq!(workbook.sheets[0].rows[1][1].to_json(), 3 + 1998);
    }

    #[test]
    fn volatile_functions_are_told_by_name() {
        assert!(is_volatile("NOW()-A1"));
        assert!(is_volatile("1+rand()"));
        assert!(!is_volatile("KNOW(1)+MY.NOW(2)"));
        assert!(!is_volatile("SUM(A1:A3)"));
    }

    #[test]
    fn numbers_agree_to_twelve_digits() {
        assert!(agrees(&Computed::Number(0.1 + 0.2), &Cell::Number(0.3)));
        assert!(agrees(&Computed::Number(45306.0), &Cell::DateTime(45306.0)));
        assert!(agrees(&Computed::Number(-4.44e-16), &Cell::Number(0.0)));
        assert!(!agrees(&Computed::Number(1.0001), &Cell::Number(1.0)));
        assert!(!agrees(&Computed::Text("1".into()), &Cell::Number(1.0)));
    }
}
