//! Read benchmark (§11.1): what a read of every row costs through a sheet
//! and through an Excel table over the same cells, without HTTP: finding
//! the header (the header rule, or the table's), selecting the rows and
//! making each row's JSON, as a `GET` does. The benchmark's workbook of
//! 10 columns, with a table over all of it added to its layout.
//!
//! It also times the same read with `values=formatted` (§11.3) against
//! `values=raw`, on the benchmark's workbook with number formats on its
//! number columns (currency, percent, thousands, dates): each row's JSON
//! made as the streamed answer makes it, through `model::render`.
//!
//! `cargo bench --bench read` (seconds). Options after `--`: `--sizes
//! 10000,100000`, `--runs 9`.

use std::time::{Duration, Instant};

use sheetd::model::Workbook;
use sheetd::model::header::Region;
use sheetd::model::layout::{Range, Table, TableColumn};
use sheetd::model::render::{Renderer, Rendering, Values};
use sheetd::model::request::ReadQuery;
use sheetd::xlsx::read_workbook;

mod common;

/// The median time of `runs` runs of `job`.
fn median(runs: usize, mut job: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            job();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Reads every row of `region` as a `GET` with `limit` set to all of them.
fn read_all(workbook: &Workbook, region: &Region, rows: usize) -> usize {
    let pairs = vec![("limit".to_owned(), rows.min(100_000).to_string())];
    let query = ReadQuery::from_pairs(&pairs).expect("a valid query");
    let sheet = &workbook.sheets[0];
    let page = sheet.read(region, &query).expect("reads");
    page.rows
        .iter()
        .map(|&row| sheet.row_json(row, &page.columns).to_string().len())
        .sum()
}

/// Reads every row of the first sheet as a `GET` with `values` does,
/// each row's JSON made by a renderer as the streamed answer makes it.
fn read_rendered(workbook: &Workbook, rows: usize, values: Values) -> usize {
    let pairs = vec![("limit".to_owned(), rows.min(100_000).to_string())];
    let query = ReadQuery::from_pairs(&pairs).expect("a valid query");
    let sheet = &workbook.sheets[0];
    let page = sheet.read(&Region::default(), &query).expect("reads");
    let mut renderer = Renderer::new(Rendering {
        values,
        ..Rendering::default()
    });
    page.rows
        .iter()
        .map(|&row| {
            renderer
                .row_json(workbook, sheet, row, &page.columns)
                .to_string()
                .len()
        })
        .sum()
}

/// The benchmark's workbook with number formats on its number columns:
/// `"$"#,##0.00` (fourth), `0.0%` (seventh), `#,##0.0` (tenth); the date
/// column keeps `yyyy/mm/dd`.
fn formatted_workbook(rows: usize) -> Workbook {
    use rust_xlsxwriter::Format;
    let money = Format::new().set_num_format("\"$\"#,##0.00");
    let percent = Format::new().set_num_format("0.0%");
    let thousands = Format::new().set_num_format("#,##0.0");
    let mut book = rust_xlsxwriter::Workbook::new();
    common::data_sheet(&mut book, rows, |sheet, row, column| {
        let i = f64::from(row.max(1) - 1);
        let (value, format) = match (row, column) {
            (0, _) => return false,
            (_, 3) => (i * 1.25, &money),
            (_, 6) => ((i % 97.0) / 100.0, &percent),
            (_, 9) => ((i % 1000.0) * 12.5, &thousands),
            _ => return false,
        };
        sheet
            .write_number_with_format(row, column, value, format)
            .unwrap();
        true
    });
    read_workbook(&book.save_to_buffer().unwrap(), usize::MAX).expect("parses")
}

fn main() {
    let (sizes, runs) = common::sizes_and_runs(9);
    println!("| rows | values=raw ms | values=formatted ms | formatted / raw |");
    println!("|---:|---:|---:|---:|");
    for &rows in &sizes {
        let workbook = formatted_workbook(rows);
        let raw = median(runs, || {
            std::hint::black_box(read_rendered(&workbook, rows, Values::Raw));
        });
        let formatted = median(runs, || {
            std::hint::black_box(read_rendered(&workbook, rows, Values::Formatted));
        });
        println!(
            "| {rows} | {:.1} | {:.1} | {:.2} |",
            raw.as_secs_f64() * 1000.0,
            formatted.as_secs_f64() * 1000.0,
            formatted.as_secs_f64() / raw.as_secs_f64()
        );
    }
    println!();
    println!("| rows | read through the sheet ms | through a table ms | table / sheet |");
    println!("|---:|---:|---:|---:|");
    for rows in sizes {
        let mut workbook =
            read_workbook(&common::write_workbook(rows), usize::MAX).expect("parses");
        let columns = (0..10)
            .map(|c| TableColumn {
                name: workbook.sheets[0].row(0)[c].text_form().into_owned(),
                ..TableColumn::default()
            })
            .collect();
        let range = Range {
            first_row: 0,
            first_column: 0,
            last_row: rows as u32,
            last_column: 9,
        };
        workbook.sheets[0].layout.tables.push(Table {
            columns,
            ..Table::new("tblData", range)
        });
        let sheet = Region::default();
        let table = Region::table(0);
        assert_eq!(
            read_all(&workbook, &sheet, rows),
            read_all(&workbook, &table, rows)
        );
        let through_sheet = median(runs, || {
            std::hint::black_box(read_all(&workbook, &sheet, rows));
        });
        let through_table = median(runs, || {
            std::hint::black_box(read_all(&workbook, &table, rows));
        });
        println!(
            "| {rows} | {:.1} | {:.1} | {:.2} |",
            through_sheet.as_secs_f64() * 1000.0,
            through_table.as_secs_f64() * 1000.0,
            through_table.as_secs_f64() / through_sheet.as_secs_f64()
        );
    }
}
