//! The formula engine as a commit runs it (`src/store/commit.rs`), measured
//! per workbook: the calculator is built before the edits (when the
//! workbook has formulas), the edits are taken and the formulas
//! recalculated after them, as `Store::commit` does before it writes.
//!
//! Every step of the engine runs under `catch_unwind`, and a panic hook
//! records the message and location of a panic inside it, also one the
//! calculator catches itself (it then answers `None` or `EngineFailed`).

use std::cell::{Cell as Flag, RefCell};
use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use sheetd::calc::{self, Calculator};
use sheetd::model::Workbook;
use sheetd::model::formula::cell_name;
use sheetd::model::value::{Cell, Freshness};

/// A cell: sheet index, 0-based row and column.
pub type At = (usize, u32, u32);

thread_local! {
    /// Whether an engine step is running on this thread.
    static IN_ENGINE: Flag<bool> = const { Flag::new(false) };
    /// The panics raised during the running engine step.
    static PANICS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Installs a panic hook that records a panic inside an engine step (and
/// says nothing), and leaves every other panic to the default hook.
pub fn record_engine_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_ENGINE.get() {
            return default(info);
        }
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        let location = info.location().map_or_else(
            || "?".to_owned(),
            |l| format!("{}:{}:{}", short_path(l.file()), l.line(), l.column()),
        );
        PANICS.with_borrow_mut(|panics| panics.push(format!("{message} (at {location})")));
    }));
}

/// A registry source path from the crate's directory on:
/// `ironcalc_base-0.9.1/src/…`.
fn short_path(file: &str) -> &str {
    match file.find("/registry/src/") {
        Some(at) => {
            let rest = &file[at + "/registry/src/".len()..];
            rest.find('/').map_or(rest, |slash| &rest[slash + 1..])
        }
        None => file,
    }
}

/// Runs an engine step under `catch_unwind`: its result (`Err` with the
/// message if the panic reached here) and the panics raised in it.
fn engine_step<T>(step: impl FnOnce() -> T) -> (Result<T, String>, Vec<String>) {
    PANICS.with_borrow_mut(Vec::clear);
    IN_ENGINE.set(true);
    let result = std::panic::catch_unwind(AssertUnwindSafe(step));
    IN_ENGINE.set(false);
    let panics = PANICS.with_borrow_mut(std::mem::take);
    let result = result.map_err(|_| panics.last().cloned().unwrap_or_else(|| "panic".into()));
    (result, panics)
}

/// How the engine's steps ended for a workbook.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Ending {
    /// No formulas: no calculator is built (as in a commit).
    #[default]
    NoFormulas,
    Ok,
    /// `Calculator::build` returned `None` without a panic (IronCalc
    /// refused the workbook's sheets or names).
    BuildNone,
    /// The engine panicked in `build` (the calculator answers `None`).
    BuildPanic(String),
    /// The engine panicked in `recalculate` (`Err(EngineFailed)`).
    RecalculatePanic(String),
}

/// A formula cell the engine changed or marks, for the per-cell list.
pub struct Touched {
    pub at: At,
    /// `recomputed`, `kept`, `stale` or `filled` (filled down by the insert).
    pub state: &'static str,
    pub formula: String,
    /// The cached result the file had at this place (before the build).
    pub original: Option<Cell>,
    /// The cached result written.
    pub written: Cell,
}

/// What the formula engine did to one workbook.
#[derive(Default)]
pub struct Calc {
    /// The workbook's sheet names, by index.
    pub sheets: Vec<String>,
    pub formulas: usize,
    pub cell_slots: usize,
    pub build: Duration,
    pub recalculate: Duration,
    pub ending: Ending,
    /// Formulas marked kept or stale by the build.
    pub kept_after_build: usize,
    pub stale_after_build: usize,
    /// After the recalculation, as written.
    pub kept: usize,
    pub stale: usize,
    /// `Recalculated::updated`.
    pub updated: usize,
    /// Formula cells whose cached result the recalculation changed.
    pub recomputed: HashSet<At>,
    /// Formula cells that are stale as written (no cached result).
    pub stale_cells: HashSet<At>,
    /// The cells the edits set (`take_edits`).
    pub edited: HashSet<At>,
    pub touched: Vec<Touched>,
    /// The formulas' cached results before the build, by place.
    original: HashMap<At, Cell>,
}

impl Calc {
    /// Before the edits: builds the calculator, as a commit does, when the
    /// workbook has formulas.
    pub fn build(workbook: &mut Workbook) -> (Calc, Option<Calculator>) {
        let mut calc = Calc {
            sheets: workbook.sheets.iter().map(|s| s.name.clone()).collect(),
            ..Calc::default()
        };
        if !workbook.formulas().any {
            return (calc, None);
        }
        calc.original = cached_results(workbook);
        calc.formulas = calc.original.len();
        calc.cell_slots = workbook.cell_slots();
        let start = Instant::now();
        let (result, panics) = engine_step(|| Calculator::build(workbook));
        calc.build = start.elapsed();
        let calculator = match result {
            Ok(Some(calculator)) => {
                calc.ending = Ending::Ok;
                Some(calculator)
            }
            Ok(None) => {
                calc.ending = match panics.first() {
                    Some(panic) => Ending::BuildPanic(panic.clone()),
                    None => Ending::BuildNone,
                };
                None
            }
            Err(panic) => {
                calc.ending = Ending::BuildPanic(panic);
                None
            }
        };
        (calc.kept_after_build, calc.stale_after_build) = freshness_counts(workbook);
        // What the build marked, for a workbook that is not written.
        calc.touch(workbook, &HashMap::new());
        (calc, calculator)
    }

    /// After the edits: takes them and recalculates, as a commit does.
    pub fn recalculate(&mut self, workbook: &mut Workbook, calculator: Option<Calculator>) {
        let edits = workbook.take_edits();
        for (sheet, edited) in edits.iter().enumerate() {
            self.edited.extend(
                edited
                    .cells
                    .iter()
                    .map(|&(row, column)| (sheet, row, column)),
            );
        }
        let before = cached_results(workbook);
        match calculator {
            Some(mut calculator) => {
                let start = Instant::now();
                let (result, panics) = engine_step(|| calculator.recalculate(workbook, &edits));
                self.recalculate = start.elapsed();
                match result {
                    Ok(Ok(done)) => self.updated = done.updated,
                    Ok(Err(calc::EngineFailed)) => {
                        let panic = panics
                            .first()
                            .cloned()
                            .unwrap_or_else(|| "EngineFailed".into());
                        self.ending = Ending::RecalculatePanic(panic);
                    }
                    Err(panic) => {
                        // Not caught by the calculator: what a commit would
                        // do without one.
                        self.ending = Ending::RecalculatePanic(panic);
                        calc::mark_readers_stale(workbook, &edits);
                    }
                }
            }
            None => calc::mark_readers_stale(workbook, &edits),
        }
        (self.kept, self.stale) = freshness_counts(workbook);
        self.touched.clear();
        self.touch(workbook, &before);
        self.original = HashMap::new();
    }

    /// Lists the formulas the engine marked, and those whose cached result
    /// differs from `before` (by place) or that the edits set.
    fn touch(&mut self, workbook: &Workbook, before: &HashMap<At, Cell>) {
        for (at, cell) in formula_cells(workbook) {
            let Cell::Formula(formula) = cell else {
                continue;
            };
            let state = match formula.freshness {
                Freshness::Stale => {
                    self.stale_cells.insert(at);
                    "stale"
                }
                Freshness::Kept => "kept",
                Freshness::Computed if self.edited.contains(&at) => "filled",
                Freshness::Computed if before.is_empty() => continue,
                Freshness::Computed if before.get(&at) != Some(&formula.cached) => {
                    self.recomputed.insert(at);
                    "recomputed"
                }
                Freshness::Computed => continue,
            };
            self.touched.push(Touched {
                at,
                state,
                formula: formula.expr.clone(),
                original: self.original.get(&at).cloned(),
                written: formula.cached.clone(),
            });
        }
    }

    pub fn engine_time(&self) -> Duration {
        self.build + self.recalculate
    }
}

/// Formulas marked kept and stale.
fn freshness_counts(workbook: &Workbook) -> (usize, usize) {
    let (mut kept, mut stale) = (0, 0);
    for (_, cell) in formula_cells(workbook) {
        if let Cell::Formula(formula) = cell {
            match formula.freshness {
                Freshness::Kept => kept += 1,
                Freshness::Stale => stale += 1,
                Freshness::Computed => {}
            }
        }
    }
    (kept, stale)
}

/// Every formula's cached result, by place.
fn cached_results(workbook: &Workbook) -> HashMap<At, Cell> {
    formula_cells(workbook)
        .filter_map(|(at, cell)| match cell {
            Cell::Formula(formula) => Some((at, formula.cached.clone())),
            _ => None,
        })
        .collect()
}

fn formula_cells(workbook: &Workbook) -> impl Iterator<Item = (At, &Cell)> {
    workbook.sheets.iter().enumerate().flat_map(|(s, sheet)| {
        sheet.rows.iter().enumerate().flat_map(move |(r, row)| {
            row.iter()
                .enumerate()
                .filter(|(_, cell)| matches!(cell, Cell::Formula(_)))
                .map(move |(c, cell)| ((s, r as u32, c as u32), cell))
        })
    })
}

/// `Sheet!B7`.
pub fn place(workbook_sheets: &[String], (sheet, row, column): At) -> String {
    let name = workbook_sheets.get(sheet).map_or("?", String::as_str);
    format!("{name}!{}", cell_name(row, column))
}

/// A cached result for a tab-separated line: `n:1.5`, `s:text`, `b:true`,
/// `e:#N/A`, `d:45306` (a date's serial), or empty.
pub fn show(cell: &Cell) -> String {
    let text = match cell {
        Cell::Empty => String::new(),
        Cell::Number(n) => format!("n:{n:?}"),
        Cell::DateTime(n) | Cell::Timestamp(n) | Cell::Duration(n) => format!("d:{n:?}"),
        Cell::Text(text) => format!("s:{text}"),
        Cell::Bool(b) => format!("b:{b}"),
        Cell::Error(error) => format!("e:{error}"),
        Cell::Formula(formula) => format!("f:{}", formula.expr),
    };
    tsv_field(&text)
}

/// A field without tabs or line breaks.
pub fn tsv_field(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}
