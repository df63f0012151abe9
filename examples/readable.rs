//! Which workbooks calamine reads but sheetd's reader does not (issue 26):
//! for each file, calamine opens every worksheet, then
//! `sheetd::xlsx::read_workbook` reads the file; a file calamine reads
//! whole and sheetd refuses, or panics on, is listed with the reason.
//!
//! `--write DIR` also writes each workbook sheetd reads back, unchanged,
//! into `DIR` (for `tools/corpus/audit.py`); `--verbose` prints what was
//! read of each sheet.
//!
//! ```sh
//! cargo run --release --example readable -- target/corpus/files
//! cargo run --release --example readable -- --write target/readable target/corpus/files
//! ```

use std::io::Cursor;
use std::path::{Path, PathBuf};

use calamine::{Reader, SheetType, Xlsx};

fn main() {
    let mut files = Vec::new();
    let mut verbose = false;
    let mut write_to: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--verbose" => verbose = true,
            "--write" => write_to = args.next().map(PathBuf::from),
            _ => collect(Path::new(&arg), &mut files),
        }
    }
    files.sort();
    let (mut both, mut neither, mut ours) = (0, 0, 0);
    for file in &files {
        let Ok(bytes) = std::fs::read(file) else {
            continue;
        };
        let calamine = calamine_reads(&bytes);
        let sheetd = std::panic::catch_unwind(|| {
            sheetd::xlsx::read_workbook(&bytes, 50_000_000).map(|book| {
                if verbose {
                    for sheet in &book.sheets {
                        eprintln!(
                            "  {:?}: {} rows, {} formatted rows",
                            sheet.name,
                            sheet.rows.len(),
                            sheet.layout.formats.len()
                        );
                    }
                    eprintln!(
                        "  {} formats, {} carried parts",
                        book.formats.len(),
                        book.carried.parts.len()
                    );
                }
                if let Some(dir) = &write_to {
                    let mut written = Cursor::new(Vec::new());
                    match sheetd::xlsx::write_workbook(&book, &mut written) {
                        Ok(()) => {
                            let name = file.file_name().unwrap_or_default();
                            let _ = std::fs::create_dir_all(dir);
                            let _ = std::fs::write(dir.join(name), written.into_inner());
                        }
                        Err(e) => eprintln!("write refused\t{}\t{e}", file.display()),
                    }
                }
            })
        });
        let name = file.display();
        match (calamine, sheetd) {
            (Ok(()), Ok(Ok(()))) => both += 1,
            (Ok(()), Ok(Err(e))) => {
                ours += 1;
                println!("sheetd refuses\t{name}\t{e}");
            }
            (Ok(()), Err(_)) => {
                ours += 1;
                println!("sheetd panics\t{name}");
            }
            (Err(e), _) => {
                neither += 1;
                eprintln!("calamine refuses\t{name}\t{e}");
            }
        }
    }
    println!(
        "{} files: both read {both}, calamine alone {ours}, calamine refuses {neither}",
        files.len()
    );
}

/// Every worksheet of the file, read with calamine.
fn calamine_reads(bytes: &[u8]) -> Result<(), String> {
    let mut xlsx = Xlsx::new(Cursor::new(bytes)).map_err(|e| e.to_string())?;
    for meta in xlsx.sheets_metadata().to_vec() {
        if meta.typ == SheetType::WorkSheet {
            xlsx.worksheet_range(&meta.name)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            collect(&entry.path(), files);
        }
    } else {
        files.push(path.to_owned());
    }
}
