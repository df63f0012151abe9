//! Memory benchmark: the cache's estimate of a workbook's size against the
//! memory loading it takes (issue 29, item 4). For one producer's workbook
//! of `rows` rows x 10 columns (see benches/load.rs), it reads the
//! process's resident memory (`VmRSS`), parses the file as a cache miss
//! does (`read_workbook`), reads it again with the workbook held, and
//! prints the growth beside `Workbook::estimated_bytes`, the figure the
//! cache counts against `--cache-bytes`.
//!
//! The parse runs in a fresh process, so that nothing freed before it is
//! resident already and reused. One workbook per run:
//! `cargo bench --bench memory -- --producer openpyxl --rows 100000`
//! (producers: `rust_xlsxwriter`, the default, `openpyxl`, `libreoffice`,
//! `excel` at 10000 rows).

mod common;

use common::Producer;
use sheetd::xlsx::read_workbook;

/// The process's resident memory in bytes.
fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: usize = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("VmRSS in /proc/self/status");
    kib * 1024
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let mut producer = Producer::RustXlsxwriter;
    let mut rows = 100_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--producer" => {
                let key = args.next().unwrap_or_default();
                producer = Producer::ALL
                    .into_iter()
                    .find(|p| p.key() == key)
                    .unwrap_or_else(|| panic!("--producer {key}: not one of the four"));
            }
            "--rows" => {
                rows = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rows takes a number");
            }
            "--measure" => return measure(&args.next().expect("--measure takes a file")),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    // Made here (rust_xlsxwriter's in this process), measured in a fresh
    // process: memory this one freed would be reused by the parse.
    let file = producer.workbook(rows);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("workbook.xlsx");
    std::fs::write(&path, &file).expect("written");
    let measured = std::process::Command::new(std::env::current_exe().expect("this program"))
        .arg("--measure")
        .arg(&path)
        .output()
        .expect("runs");
    assert!(
        measured.status.success(),
        "{}",
        String::from_utf8_lossy(&measured.stderr)
    );
    let (held, estimate): (usize, usize) = String::from_utf8_lossy(&measured.stdout)
        .split_once(' ')
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)))
        .expect("two numbers");
    println!(
        "| producer | rows | file MiB | loading grew the process by MiB | estimate MiB | estimate / growth |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {rows} | {:.1} | {:.1} | {:.1} | {:.2} |",
        producer.key(),
        mib(file.len()),
        mib(held),
        mib(estimate),
        estimate as f64 / held.max(1) as f64,
    );
}

/// Prints how much parsing `path` grew the process, and the estimate.
fn measure(path: &str) {
    let file = std::fs::read(path).expect("the workbook");
    let before = resident();
    let workbook = read_workbook(&file, usize::MAX).expect("parses");
    let held = resident().saturating_sub(before);
    println!("{held} {}", workbook.estimated_bytes(workbook.cell_slots()));
    std::hint::black_box(&workbook);
}
