//! Rewrite benchmark: what a write and a cache miss cost, without HTTP,
//! locks or fsync. For the load benchmark's workbook of 10k and 100k rows x
//! 10 columns it times, as the median of several runs:
//! - the cold load: `parse_workbook` of the file (the package scan and
//!   calamine, side by side);
//! - the rewrite: `write_workbook` of the parsed workbook, into memory;
//! - what an insert of 64 rows costs once the last write kept its writer:
//!   the outline of the workbook the commit takes (all but its cells), the
//!   check that finds from it and the edits' log that the batch only
//!   appends rows, and the save that writes just those rows;
//! - the floor: rust_xlsxwriter alone writing the same workbook with its
//!   default settings;
//! - a delete of the middle row and its rewrite, on that workbook and on one
//!   that also carries conditional formats, a validation, notes and a chart
//!   (which the delete moves): a second table;
//! - the rewrite of that workbook and of one whose cells of the free-text
//!   column use 1,000 distinct cell formats (each written back as the
//!   file's record through a stand-in): a third table.
//!
//! `cargo bench --bench rewrite` (about a minute on 2 cores). Options after
//! `--`: `--sizes 10000`, `--runs 9`.

use std::time::{Duration, Instant};

use sheetd::model::request::{DeleteRows, Selector};
use sheetd::model::{Edited, Workbook};
use sheetd::xlsx::{Rewrite, carried_rows_moved, read_workbook, write_workbook};

mod common;
use common::{
    write_workbook as write_floor, write_workbook_with_carried, write_workbook_with_styles,
};

/// The median time of `runs` runs of `job`.
fn median(runs: usize, mut job: impl FnMut()) -> Duration {
    median_after(runs, || (), |()| job())
}

/// Times one step, median of `runs`, each after an untimed `setup`.
fn median_after<S>(runs: usize, mut setup: impl FnMut() -> S, mut job: impl FnMut(S)) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let state = setup();
            let start = Instant::now();
            job(state);
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// `workbook` with its last row (and that row's formats) appended `n` times,
/// and the log of the cells that set.
fn appended(workbook: &Workbook, n: usize) -> (Workbook, Vec<Edited>) {
    let mut more = workbook.clone();
    let sheet = &mut more.sheets[0];
    let (row, formats) = (
        sheet.rows.last().cloned(),
        sheet.layout.formats.last().cloned(),
    );
    let mut log = Edited::default();
    for _ in 0..n {
        let at = sheet.rows.len() as u32;
        let width = row.as_ref().map_or(0, Vec::len) as u32;
        log.cells.extend((0..width).map(|column| (at, column)));
        sheet.rows.extend(row.clone());
        sheet.layout.formats.extend(formats.clone());
    }
    (more, vec![log])
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let (sizes, runs) = common::sizes_and_runs(5);
    println!(
        "| rows | file KiB | cold load ms | rewrite ms | rewritten KiB | floor ms | rewrite / floor \
         | insert 64: outline ms | check ms | save in part ms |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &rows in &sizes {
        let file = write_floor(rows);
        let cold = median(runs, || {
            std::hint::black_box(read_workbook(&file, usize::MAX).expect("parses"));
        });
        let workbook = read_workbook(&file, usize::MAX).expect("parses");
        let mut size = 0;
        let rewrite = median(runs, || {
            let mut out = std::io::Cursor::new(Vec::new());
            write_workbook(&workbook, &mut out).expect("writes");
            size = out.into_inner().len();
        });
        let floor = median(runs, || {
            std::hint::black_box(write_floor(rows));
        });
        let outline = workbook.outline();
        let outlining = median(runs, || {
            std::hint::black_box(workbook.outline());
        });
        let (more, log) = appended(&workbook, 64);
        let compare = median(runs, || assert!(more.appended(&outline, &[&log])));
        let kept = || {
            let mut rewrite = Rewrite::begin(&workbook)
                .expect("begins")
                .keeping_chunks(true);
            rewrite
                .save(&workbook, std::io::Cursor::new(Vec::new()))
                .expect("saves");
            rewrite
        };
        let save = median_after(runs, kept, |mut rewrite| {
            let mut out = std::io::Cursor::new(Vec::new());
            rewrite.save(&more, &mut out).expect("saves again");
        });
        println!(
            "| {rows} | {} | {} | {} | {} | {} | {:.2} | {} | {} | {} |",
            file.len() / 1024,
            ms(cold),
            ms(rewrite),
            size / 1024,
            ms(floor),
            rewrite.as_secs_f64() / floor.as_secs_f64(),
            ms(outlining),
            ms(compare),
            ms(save),
        );
    }
    println!();
    println!("| rows | delete 1 row + rewrite, plain ms | with carried elements ms | ratio |");
    println!("|---:|---:|---:|---:|");
    for &rows in &sizes {
        let plain = deleted_and_rewritten(&write_floor(rows), rows, runs);
        let carried = deleted_and_rewritten(&write_workbook_with_carried(rows), rows, runs);
        println!(
            "| {rows} | {} | {} | {:.2} |",
            ms(plain),
            ms(carried),
            carried.as_secs_f64() / plain.as_secs_f64()
        );
    }
    println!();
    println!("| rows | rewrite, plain ms | with {STYLES} distinct cell formats ms | ratio |");
    println!("|---:|---:|---:|---:|");
    for rows in sizes {
        let rewrite = |file: &[u8]| {
            let workbook = read_workbook(file, usize::MAX).expect("parses");
            median(runs, || {
                write_workbook(&workbook, std::io::Cursor::new(Vec::new())).expect("writes");
            })
        };
        let plain = rewrite(&write_floor(rows));
        let styled = rewrite(&write_workbook_with_styles(rows, STYLES));
        println!(
            "| {rows} | {} | {} | {:.2} |",
            ms(plain),
            ms(styled),
            styled.as_secs_f64() / plain.as_secs_f64()
        );
    }
}

/// How many distinct cell formats the styled workbook has.
const STYLES: usize = 1000;

/// What deleting the middle data row of `file` costs, as a commit does it:
/// the model's delete, the carried elements moved, the rewrite.
fn deleted_and_rewritten(file: &[u8], rows: usize, runs: usize) -> Duration {
    let workbook = read_workbook(file, usize::MAX).expect("parses");
    let delete = DeleteRows {
        selector: Selector::Row(rows as u64 / 2 + 1),
    };
    median_after(
        runs,
        || workbook.clone(),
        |mut workbook| {
            let source = workbook.source("Data", None).expect("a sheet");
            workbook.delete_rows(&source, &delete).expect("deletes");
            carried_rows_moved(&mut workbook).expect("moves");
            let mut out = std::io::Cursor::new(Vec::new());
            write_workbook(&workbook, &mut out).expect("writes");
        },
    )
}
