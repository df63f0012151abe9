//! What a write through sheetd keeps, refuses or loses, measured on a
//! corpus of real workbooks (issue 13).
//!
//! ```sh
//! python3 tools/corpus/gather.py                       # builds target/corpus
//! cargo run --release --example corpus -- target/corpus/files
//! cargo run --release --example corpus -- --show 5 some.xlsx other.xlsx
//! # keep the written workbooks, to open them in a spreadsheet app:
//! cargo run --release --example corpus -- --out target/corpus/written target/corpus/files
//! # rows move (issue 24): delete the middle data row, insert before it
//! cargo run --release --example corpus -- --moves --out target/corpus/moves target/corpus/files
//! # what a person sees of every cell, before and after (issue 26)
//! cargo run --release --example corpus -- --looks target/corpus/files
//! # a save in part against a whole rewrite (issue 29)
//! cargo run --release --example corpus -- --in-part target/corpus/files
//! ```
//!
//! `--moves` measures deletes and positional inserts instead (`moves.rs`).
//! `--in-part` compares, for the same insert and update, a save in part
//! with a whole rewrite instead (`in_part.rs`, issue 29).
//! `--looks` adds what a person sees (`looks.rs`, issue 26): every
//! untouched cell's resolved style, value, formula text and rich text,
//! every row's and column's own format, before and after, per class.
//!
//! For each workbook it does what one insert and one update over HTTP do:
//! reads it with sheetd's reader, builds the formula engine (when the
//! workbook has formulas), appends a row and changes the first data row's
//! first column on the first sheet with a header, recalculates the
//! formulas, writes it with sheetd's writer (`engine.rs` follows
//! `Store::commit`). Then it compares the package before and after,
//! feature by feature (`features.rs`: a canonical XML comparison that
//! ignores renumbered relationship ids and part names), and every untouched
//! cell value as calamine reads it, telling apart the formula results the
//! recalculation changed or removed. Workbooks whose write sheetd refuses
//! are counted with the reason.
//!
//! `--headers LABELS FILES` measures the header rule against hand-labelled
//! sheets instead (`headers.rs`).
//!
//! `--tsv FILE` writes one line per workbook (engine times and counts),
//! `--cells FILE` one line per formula cell the engine recomputed, kept,
//! made stale or filled down (tools/corpus/compare_recalc.py reads both).
//! Each workbook is measured on a thread of its own: one that takes longer
//! than `--engine-timeout SECONDS` (default 60; 0 for no limit) is reported
//! as timed out, with the step it was in, and its thread is abandoned.

mod engine;
mod features;
mod headers;
mod in_part;
mod looks;
mod moves;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use calamine::{Data, Reader, Xlsx};
use engine::{Calc, Ending};
use sheetd::model::Workbook;
use sheetd::model::header::{Header, Region};
use sheetd::model::request::{InsertRows, UpdateRows};

const INSERTED: &str = "sheetd-corpus-insert";
const UPDATED: &str = "sheetd-corpus-update";
/// The header an empty sheet gets from the insert.
const NEW_HEADER: &str = "sheetd-corpus-header";

/// What happened to one workbook.
enum Outcome {
    Unreadable(String),
    Refused(String),
    /// No sheet has a header to insert under.
    NothingToWrite,
    /// The measure ran past `--engine-timeout` (`Report::timed_out` says where).
    TimedOut,
    Written {
        lost: Vec<(&'static str, String)>,
        kept: Vec<&'static str>,
        changed_values: Changed,
        /// What a person sees, when `--looks` asks for it.
        looks: Option<Result<looks::Verdict, String>>,
    },
}

/// Cells whose value calamine reads differently after the write, by cause.
#[derive(Default)]
struct Changed {
    /// Untouched cells: neither set by the write nor a formula result the
    /// engine changed.
    untouched: Vec<String>,
    /// Formula results the recalculation changed.
    recomputed: Vec<String>,
    /// Formula results removed: the formula is stale, written without one.
    stale: Vec<String>,
    /// Cells the edits set besides the inserted and updated text: formulas
    /// filled down into the inserted row, with their computed results.
    filled: Vec<String>,
}

fn main() {
    let started = Instant::now();
    let mut show = 3;
    let mut out: Option<PathBuf> = None;
    let mut tsv: Option<PathBuf> = None;
    let mut cells: Option<PathBuf> = None;
    let mut progress = false;
    let mut moves = false;
    let mut in_part = false;
    let mut looks = false;
    let mut timeout = Duration::from_secs(60);
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--show" => show = args.next().and_then(|n| n.parse().ok()).unwrap_or(3),
            "--out" => out = args.next().map(PathBuf::from),
            "--tsv" => tsv = args.next().map(PathBuf::from),
            "--cells" => cells = args.next().map(PathBuf::from),
            "--progress" => progress = true,
            "--headers" => {
                let labels = args.next().map(PathBuf::from).unwrap_or_default();
                let files = args.next().map(PathBuf::from).unwrap_or_default();
                headers::run(&labels, &files);
                return;
            }
            "--moves" => moves = true,
            "--in-part" => in_part = true,
            "--looks" => looks = true,
            "--engine-timeout" => {
                let seconds = args.next().and_then(|n| n.parse().ok()).unwrap_or(60);
                timeout = Duration::from_secs(if seconds == 0 { u64::MAX / 4 } else { seconds });
            }
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    let files = workbooks(&paths);
    if files.is_empty() {
        eprintln!(
            "usage: corpus [--moves] [--looks] [--in-part] [--show N] [--out DIR] [--tsv FILE] [--cells FILE] [--progress] \
             [--engine-timeout SECONDS] <directory or .xlsx files>…"
        );
        std::process::exit(2);
    }
    engine::record_engine_panics();
    if moves {
        moves::run(&files, out.as_deref(), show, timeout, tsv.as_deref());
        return;
    }
    if in_part {
        in_part::run(&files, show);
        return;
    }
    let mut report = Report::default();
    for file in &files {
        if progress {
            eprintln!("{}", file.display());
        }
        let (outcome, calc) = match std::fs::read(file) {
            Ok(bytes) => measure_in_time(bytes, file, out.clone(), timeout, looks, &mut report),
            Err(e) => (Outcome::Unreadable(e.to_string()), None),
        };
        report.add(file, outcome, calc);
    }
    report.print(show);
    println!(
        "\nwall time of the run: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (path, text) in [(tsv, report.tsv()), (cells, report.cells_tsv())] {
        if let Some(path) = path
            && let Err(e) = std::fs::write(&path, text)
        {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}

/// The `.xlsx`/`.xlsm` files under the given paths, sorted.
fn workbooks(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            let Ok(entries) = std::fs::read_dir(path) else {
                continue;
            };
            let inner: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            found.extend(workbooks(&inner));
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("xlsx") || e.eq_ignore_ascii_case("xlsm"))
        {
            found.push(path.clone());
        }
    }
    found.sort();
    found
}

/// Saves a written workbook under `out`, named as the original.
fn keep(out: Option<&Path>, original: &Path, written: &[u8]) {
    let (Some(out), Some(name)) = (out, original.file_name()) else {
        return;
    };
    if let Err(e) =
        std::fs::create_dir_all(out).and_then(|()| std::fs::write(out.join(name), written))
    {
        eprintln!("cannot keep {}: {e}", original.display());
    }
}

/// Where a measure is, for the report of one that runs out of time.
#[derive(Default)]
struct Progress {
    /// Set when the measure ran out of time: its written workbook is not kept.
    abandoned: AtomicBool,
    step: AtomicU8,
    formulas: AtomicUsize,
    cells: AtomicUsize,
}

const STEPS: [&str; 5] = ["read", "build", "edits", "recalculate", "write and compare"];

impl Progress {
    fn at(&self, step: usize) {
        self.step.store(step as u8, Ordering::Relaxed);
    }
}

/// [`measure`] on a thread of its own, given `timeout`: a workbook whose
/// engine runs longer is reported as timed out, and its thread is left to
/// run (it cannot be stopped; the process ends without waiting for it).
fn measure_in_time(
    bytes: Vec<u8>,
    file: &Path,
    out: Option<PathBuf>,
    timeout: Duration,
    looks: bool,
    report: &mut Report,
) -> (Outcome, Option<Calc>) {
    let progress = Arc::new(Progress::default());
    let (send, receive) = mpsc::channel();
    let shared = Arc::clone(&progress);
    let name = file.to_owned();
    let started = Instant::now();
    std::thread::spawn(move || {
        let keep = |written: &[u8]| {
            if !shared.abandoned.load(Ordering::Relaxed) {
                keep(out.as_deref(), &name, written);
            }
        };
        let _ = send.send(measure(&bytes, keep, &shared, looks));
    });
    match receive.recv_timeout(timeout) {
        Ok(done) => done,
        Err(_) => {
            progress.abandoned.store(true, Ordering::Relaxed);
            let step =
                STEPS[usize::from(progress.step.load(Ordering::Relaxed)).min(STEPS.len() - 1)];
            report.timed_out.push(TimedOut {
                file: file.to_owned(),
                step,
                after: started.elapsed(),
                formulas: progress.formulas.load(Ordering::Relaxed),
                cells: progress.cells.load(Ordering::Relaxed),
            });
            eprintln!("timed out in {step}: {}", file.display());
            (Outcome::TimedOut, None)
        }
    }
}

/// What happened to a workbook, and what the formula engine did to it
/// (`None` when it was not read, or sheetd refuses to write it).
fn measure(
    original: &[u8],
    keep: impl FnOnce(&[u8]),
    progress: &Progress,
    looks: bool,
) -> (Outcome, Option<Calc>) {
    let mut workbook = match sheetd::xlsx::read_workbook(original, 50_000_000) {
        Ok(workbook) => workbook,
        Err(e) => return (Outcome::Unreadable(e.to_string()), None),
    };
    if !workbook.unkept.is_empty() {
        return (Outcome::Refused(workbook.unkept.join(" and ")), None);
    }
    // As `Store::commit`: the engine is built before the edits, and the
    // formulas are recalculated after them, before the write.
    progress.at(1);
    progress
        .cells
        .store(workbook.cell_slots(), Ordering::Relaxed);
    progress.formulas.store(
        workbook
            .sheets
            .iter()
            .flat_map(|s| s.cells())
            .filter(|c| matches!(c, sheetd::model::Cell::Formula(_)))
            .count(),
        Ordering::Relaxed,
    );
    let (mut calc, calculator) = Calc::build(&mut workbook);
    progress.at(2);
    if !insert_and_update(&mut workbook) {
        return (Outcome::NothingToWrite, Some(calc));
    }
    progress.at(3);
    calc.recalculate(&mut workbook, calculator);
    progress.at(4);
    let outcome = write_and_compare(original, &workbook, &calc, keep, looks);
    (outcome, Some(calc))
}

fn write_and_compare(
    original: &[u8],
    workbook: &Workbook,
    calc: &Calc,
    keep: impl FnOnce(&[u8]),
    looks: bool,
) -> Outcome {
    let mut written = Cursor::new(Vec::new());
    if let Err(e) = sheetd::xlsx::write_workbook(workbook, &mut written) {
        return Outcome::Refused(e.to_string());
    }
    let written = written.into_inner();
    keep(&written);
    let (before, after) = match (features::inventory(original), features::inventory(&written)) {
        (Ok(before), Ok(after)) => (before, after),
        (Err(e), _) => return Outcome::Unreadable(format!("inventory: {e}")),
        (_, Err(e)) => {
            return Outcome::Written {
                lost: vec![("package", format!("the written file: {e}"))],
                kept: Vec::new(),
                changed_values: Changed::default(),
                looks: None,
            };
        }
    };
    let mut kept = Vec::new();
    let mut lost = Vec::new();
    for (feature, same, why) in features::compare(&before, &after) {
        if same {
            kept.push(feature);
        } else {
            lost.push((feature, why));
        }
    }
    Outcome::Written {
        lost,
        kept,
        changed_values: changed_values(original, &written, calc),
        looks: looks.then(|| compare_looks(original, &written, calc)),
    }
}

/// What a person sees of `original` that `written` kept, the cells the
/// write set left out (found by the texts it wrote).
fn compare_looks(original: &[u8], written: &[u8], calc: &Calc) -> Result<looks::Verdict, String> {
    let before = looks::Looks::read(original)?;
    let after = looks::Looks::read(written).map_err(|e| format!("the written file: {e}"))?;
    let edited: Vec<(String, (u32, u32))> = (calc.edited.iter())
        .filter_map(|&(sheet, row, column)| {
            let name = calc.sheets.get(sheet)?.clone();
            Some((name, (row + 1, column + 1)))
        })
        .collect();
    let marks = looks::Marks {
        rows: &[INSERTED, NEW_HEADER],
        cells: &[UPDATED],
        edited: &edited,
    };
    Ok(looks::compare(&before, &after, &marks))
}

/// One insert and one update, as the API makes them, on the first sheet
/// that takes them; whether one was made.
fn insert_and_update(workbook: &mut Workbook) -> bool {
    for sheet in &mut workbook.sheets {
        // The first header column, as the API names it (its header rule
        // skips title rows); an empty sheet takes the inserted keys as its
        // header.
        let region = Region::default();
        let header = Header::of(sheet, &region);
        let header_row = header.as_ref().map(|header| header.row);
        let column = match (&header, sheet.first_non_blank_row()) {
            (Some(header), _) => match header.readable().next() {
                Some(column) => column.name.clone(),
                None => continue,
            },
            (None, Some(_)) => continue,
            (None, None) => NEW_HEADER.to_owned(),
        };
        let has_data = sheet.data_row_count(&region) > 0;
        let insert = serde_json::json!({"data": [{ &column: INSERTED }]}).to_string();
        let Ok(request) = InsertRows::from_json(insert.as_bytes(), 1000) else {
            continue;
        };
        if sheet.insert(&region, request).is_err() {
            continue;
        }
        if let (true, Some(header_row)) = (has_data, header_row) {
            let row = header_row + 2;
            let update =
                serde_json::json!({"type": "row", "row": row, "data": { &column: UPDATED }})
                    .to_string();
            if let Ok(request) = UpdateRows::from_json(update.as_bytes()) {
                let _ = sheet.update(&region, request);
            }
        }
        return true;
    }
    false
}

/// Cells whose value calamine reads differently after the write, apart
/// from the ones the write set, by cause.
fn changed_values(before: &[u8], after: &[u8], calc: &Calc) -> Changed {
    let (Ok(mut before), Ok(mut after)) = (
        Xlsx::new(Cursor::new(before)),
        Xlsx::new(Cursor::new(after)),
    ) else {
        return Changed {
            untouched: vec!["calamine cannot open one of the files".into()],
            ..Changed::default()
        };
    };
    let mut changed = Changed::default();
    for name in before.sheet_names() {
        let sheet = calc.sheets.iter().position(|s| *s == name);
        // Where the change is from: the engine, the edits, or neither.
        let bucket = |changed: &mut Changed, (row, column): (u32, u32), text: String| {
            let at = sheet.map(|s| (s, row, column));
            let list = match at {
                Some(at) if calc.edited.contains(&at) => &mut changed.filled,
                Some(at) if calc.recomputed.contains(&at) => &mut changed.recomputed,
                Some(at) if calc.stale_cells.contains(&at) => &mut changed.stale,
                _ => &mut changed.untouched,
            };
            list.push(text);
        };
        let (Ok(old), Ok(new)) = (before.worksheet_range(&name), after.worksheet_range(&name))
        else {
            continue;
        };
        let cells = |range: &calamine::Range<Data>| -> BTreeMap<(u32, u32), Data> {
            range
                .used_cells()
                .map(|(r, c, v)| {
                    let (r0, c0) = range.start().unwrap_or((0, 0));
                    ((r0 + r as u32, c0 + c as u32), v.clone())
                })
                .filter(|(_, v)| *v != Data::Empty)
                .collect()
        };
        let (old, new) = (cells(&old), cells(&new));
        for (at, value) in &new {
            let written = matches!(value, Data::String(s) if [INSERTED, UPDATED, NEW_HEADER].contains(&s.as_str()));
            if !written && old.get(at) != Some(value) {
                let text = format!("{name}!{at:?}: {:?} → {value:?}", old.get(at));
                bucket(&mut changed, *at, text);
            }
        }
        for (at, value) in &old {
            if !new.contains_key(at) {
                bucket(
                    &mut changed,
                    *at,
                    format!("{name}!{at:?}: {value:?} → gone"),
                );
            }
        }
    }
    changed
}

#[derive(Default)]
struct Report {
    files: usize,
    unreadable: Vec<(PathBuf, String)>,
    refused: Vec<(PathBuf, String)>,
    nothing: usize,
    written: usize,
    all_kept: usize,
    /// Per feature: files that have it, files that lost it, examples.
    features: BTreeMap<&'static str, (usize, usize, Vec<String>)>,
    changed: Vec<(PathBuf, Vec<String>)>,
    recomputed: Vec<(PathBuf, Vec<String>)>,
    stale_values: Vec<(PathBuf, Vec<String>)>,
    filled: Vec<(PathBuf, Vec<String>)>,
    /// Per workbook with formulas that the engine saw.
    engine: Vec<EngineLine>,
    timed_out: Vec<TimedOut>,
    /// What a person sees (`--looks`), when asked for.
    looks: Option<looks::Summary>,
}

/// A workbook whose measure ran past the time limit.
struct TimedOut {
    file: PathBuf,
    step: &'static str,
    after: Duration,
    formulas: usize,
    cells: usize,
}

/// What the engine did to one workbook, for the report.
struct EngineLine {
    file: PathBuf,
    outcome: &'static str,
    calc: Calc,
    /// Cells calamine reads differently: recomputed, removed (stale),
    /// other untouched ones.
    recomputed_values: usize,
    stale_values: usize,
    untouched_changed: usize,
}

impl Report {
    fn add(&mut self, file: &Path, outcome: Outcome, calc: Option<Calc>) {
        self.files += 1;
        let label = match &outcome {
            Outcome::Unreadable(_) => "unreadable",
            Outcome::Refused(_) => "refused",
            Outcome::NothingToWrite => "nothing to write",
            Outcome::TimedOut => "timed out",
            Outcome::Written { .. } => "written",
        };
        let counts = match &outcome {
            Outcome::Written { changed_values, .. } => (
                changed_values.recomputed.len(),
                changed_values.stale.len(),
                changed_values.untouched.len(),
            ),
            _ => (0, 0, 0),
        };
        if let Some(calc) = calc.filter(|c| c.ending != Ending::NoFormulas) {
            self.engine.push(EngineLine {
                file: file.into(),
                outcome: label,
                calc,
                recomputed_values: counts.0,
                stale_values: counts.1,
                untouched_changed: counts.2,
            });
        }
        match outcome {
            Outcome::Unreadable(why) => self.unreadable.push((file.into(), why)),
            Outcome::Refused(why) => self.refused.push((file.into(), why)),
            Outcome::NothingToWrite => self.nothing += 1,
            // Listed in `timed_out` already.
            Outcome::TimedOut => {}
            Outcome::Written {
                lost,
                kept,
                changed_values,
                looks,
            } => {
                self.written += 1;
                if let Some(verdict) = looks {
                    self.looks.get_or_insert_default().add(file, verdict);
                }
                if lost.is_empty() {
                    self.all_kept += 1;
                }
                for feature in kept {
                    self.features.entry(feature).or_default().0 += 1;
                }
                for (feature, why) in lost {
                    let entry = self.features.entry(feature).or_default();
                    entry.0 += 1;
                    entry.1 += 1;
                    entry.2.push(format!("{}: {why}", file.display()));
                }
                let Changed {
                    untouched,
                    recomputed,
                    stale,
                    filled,
                } = changed_values;
                for (list, cells) in [
                    (&mut self.changed, untouched),
                    (&mut self.recomputed, recomputed),
                    (&mut self.stale_values, stale),
                    (&mut self.filled, filled),
                ] {
                    if !cells.is_empty() {
                        list.push((file.into(), cells));
                    }
                }
            }
        }
    }

    fn print(&self, show: usize) {
        let percent = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
        let cells =
            |list: &[(PathBuf, Vec<String>)]| list.iter().map(|(_, c)| c.len()).sum::<usize>();
        let readable = self.files - self.unreadable.len();
        println!("workbooks:                 {}", self.files);
        println!("unreadable (also by reads): {}", self.unreadable.len());
        println!(
            "writes refused:            {} ({:.1}% of readable)",
            self.refused.len(),
            percent(self.refused.len(), readable)
        );
        println!("no sheet with a header:    {}", self.nothing);
        println!("timed out (see below):     {}", self.timed_out.len());
        println!("written:                   {}", self.written);
        println!(
            "written, every feature kept: {} ({:.1}%)",
            self.all_kept,
            percent(self.all_kept, self.written)
        );
        println!(
            "written, an untouched value changed: {} ({:.1}%), {} cells",
            self.changed.len(),
            percent(self.changed.len(), self.written),
            cells(&self.changed)
        );
        println!(
            "written, formula results recomputed: {} ({:.1}%), {} cells",
            self.recomputed.len(),
            percent(self.recomputed.len(), self.written),
            cells(&self.recomputed)
        );
        println!(
            "written, formula results removed (stale): {} ({:.1}%), {} cells",
            self.stale_values.len(),
            percent(self.stale_values.len(), self.written),
            cells(&self.stale_values)
        );
        println!(
            "written, formulas filled down into the inserted row: {}, {} cells",
            self.filled.len(),
            cells(&self.filled)
        );
        self.print_engine();
        println!("\n{:<28} {:>7} {:>7}", "feature", "files", "lost");
        for (feature, (files, lost, _)) in &self.features {
            println!("{feature:<28} {files:>7} {lost:>7}");
        }
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for (_, why) in &self.refused {
            let kind = why
                .split(" and ")
                .map(|part| part.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' '))
                .map(|part| part.split(" on sheet").next().unwrap_or(part).to_owned())
                .collect::<Vec<_>>()
                .join(" + ");
            *reasons.entry(kind).or_default() += 1;
        }
        println!("\nrefusals by reason:");
        for (why, count) in &reasons {
            println!("{count:>6}  {why}");
        }
        println!("\nexamples:");
        for (feature, (_, _, examples)) in &self.features {
            for example in examples.iter().take(show) {
                println!("lost {feature}: {example}");
            }
        }
        for (what, list) in [
            ("changed", &self.changed),
            ("recomputed", &self.recomputed),
            ("stale", &self.stale_values),
            ("filled", &self.filled),
        ] {
            for (file, changes) in list.iter().take(show * 3) {
                for change in changes.iter().take(show) {
                    println!("{what} {}: {change}", file.display());
                }
            }
        }
        for (file, why) in self.unreadable.iter().take(show) {
            println!("unreadable {}: {why}", file.display());
        }
        if let Some(looks) = &self.looks {
            looks.print(show);
        }
    }

    /// The formula engine's figures: failures, marks, times.
    fn print_engine(&self) {
        let lines = &self.engine;
        let sum = |f: &dyn Fn(&EngineLine) -> usize| lines.iter().map(f).sum::<usize>();
        let files = |f: &dyn Fn(&EngineLine) -> usize| lines.iter().filter(|l| f(l) > 0).count();
        let figure = |what: &str, f: &dyn Fn(&EngineLine) -> usize| {
            println!("  {what:<44} {:>8} cells in {:>5} files", sum(f), files(f));
        };
        println!("\nformula engine (as Store::commit runs it):");
        println!(
            "  workbooks with formulas, engine built:      {:>8} (of which written: {}), {} formula cells",
            lines.len(),
            lines.iter().filter(|l| l.outcome == "written").count(),
            sum(&|l| l.calc.formulas)
        );
        figure("formulas marked Kept by the build", &|l| {
            l.calc.kept_after_build
        });
        figure("formulas marked Stale by the build", &|l| {
            l.calc.stale_after_build
        });
        figure("formulas Kept after the write", &|l| l.calc.kept);
        figure("formulas Stale after the write", &|l| l.calc.stale);
        figure("formulas updated (Recalculated::updated)", &|l| {
            l.calc.updated
        });
        figure("formula results recomputed (model)", &|l| {
            l.calc.recomputed.len()
        });
        figure("  of which calamine reads another value", &|l| {
            l.recomputed_values
        });
        figure("formula results removed (stale, calamine)", &|l| {
            l.stale_values
        });
        let panics: Vec<&EngineLine> = lines
            .iter()
            .filter(|l| {
                matches!(
                    l.calc.ending,
                    Ending::BuildPanic(_) | Ending::RecalculatePanic(_)
                )
            })
            .collect();
        let refusals: Vec<&EngineLine> = lines
            .iter()
            .filter(|l| l.calc.ending == Ending::BuildNone)
            .collect();
        println!(
            "  engine panicked:                            {:>8} files",
            panics.len()
        );
        for line in &panics {
            let (step, message) = match &line.calc.ending {
                Ending::BuildPanic(m) => ("build", m),
                Ending::RecalculatePanic(m) => ("recalculate", m),
                _ => unreachable!(),
            };
            println!("    {} [{step}]: {message}", line.file.display());
        }
        println!(
            "  build returned None (no panic):             {:>8} files",
            refusals.len()
        );
        for line in &refusals {
            println!("    {}", line.file.display());
        }
        println!(
            "  timed out (--engine-timeout), not measured: {:>8} files",
            self.timed_out.len()
        );
        for t in &self.timed_out {
            println!(
                "    {} [in {} after {:.0} s; {} formulas, {} cells]",
                t.file.display(),
                t.step,
                t.after.as_secs_f64(),
                t.formulas,
                t.cells
            );
        }
        let build: Duration = lines.iter().map(|l| l.calc.build).sum();
        let recalculate: Duration = lines.iter().map(|l| l.calc.recalculate).sum();
        println!(
            "  time: build {:.2} s, recalculate {:.2} s, together {:.2} s",
            build.as_secs_f64(),
            recalculate.as_secs_f64(),
            (build + recalculate).as_secs_f64()
        );
        let mut slowest: Vec<&EngineLine> = lines.iter().collect();
        slowest.sort_by_key(|l| std::cmp::Reverse(l.calc.engine_time()));
        println!("  slowest 10 (build + recalculate):");
        println!(
            "    {:>9} {:>9} {:>9} {:>8} {:>9}  file",
            "total ms", "build ms", "recalc ms", "formulas", "cells"
        );
        for line in slowest.iter().take(10) {
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            println!(
                "    {:>9.1} {:>9.1} {:>9.1} {:>8} {:>9}  {}",
                ms(line.calc.engine_time()),
                ms(line.calc.build),
                ms(line.calc.recalculate),
                line.calc.formulas,
                line.calc.cell_slots,
                line.file.display()
            );
        }
    }

    /// One line per workbook the engine saw.
    fn tsv(&self) -> String {
        let mut out = String::from(
            "file\toutcome\tformulas\tcell_slots\tbuild_ms\trecalc_ms\tengine\tkept_after_build\t\
             stale_after_build\tkept\tstale\tupdated\trecomputed\trecomputed_values\tstale_values\t\
             untouched_changed\tpanic\n",
        );
        for line in &self.engine {
            let c = &line.calc;
            let (engine, panic) = match &c.ending {
                Ending::NoFormulas => ("none", ""),
                Ending::Ok => ("ok", ""),
                Ending::BuildNone => ("build-none", ""),
                Ending::BuildPanic(m) => ("build-panic", m.as_str()),
                Ending::RecalculatePanic(m) => ("recalculate-panic", m.as_str()),
            };
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{:.3}\t{:.3}\t{engine}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                line.file.display(),
                line.outcome,
                c.formulas,
                c.cell_slots,
                c.build.as_secs_f64() * 1000.0,
                c.recalculate.as_secs_f64() * 1000.0,
                c.kept_after_build,
                c.stale_after_build,
                c.kept,
                c.stale,
                c.updated,
                c.recomputed.len(),
                line.recomputed_values,
                line.stale_values,
                line.untouched_changed,
                engine::tsv_field(panic)
            );
        }
        out
    }

    /// One line per formula cell the engine recomputed, kept, made stale
    /// or filled down (in a workbook not written: kept or stale by the
    /// build).
    fn cells_tsv(&self) -> String {
        let mut out = String::from("file\toutcome\tcell\tstate\tformula\toriginal\twritten\n");
        for line in &self.engine {
            let name = line
                .file
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            for t in &line.calc.touched {
                let _ = writeln!(
                    out,
                    "{name}\t{}\t{}\t{}\t{}\t{}\t{}",
                    line.outcome,
                    engine::tsv_field(&engine::place(&line.calc.sheets, t.at)),
                    t.state,
                    engine::tsv_field(&t.formula),
                    t.original
                        .as_ref()
                        .map(engine::show)
                        .unwrap_or_else(|| "-".into()),
                    engine::show(&t.written),
                );
            }
        }
        out
    }
}
