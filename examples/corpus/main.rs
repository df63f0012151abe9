//! What a write through sheetd keeps, refuses or loses, measured on a
//! corpus of real workbooks (issue 13).
//!
//! ```sh
//! python3 tools/corpus/gather.py                       # builds target/corpus
//! cargo run --release --example corpus -- target/corpus/files
//! cargo run --release --example corpus -- --show 5 some.xlsx other.xlsx
//! # keep the written workbooks, to open them in a spreadsheet app:
//! cargo run --release --example corpus -- --out target/corpus/written target/corpus/files
//! ```
//!
//! For each workbook it does what one insert and one update over HTTP do:
//! reads it with sheetd's reader, appends a row and changes the first data
//! row's first column on the first sheet with a header, writes it with
//! sheetd's writer. Then it compares the package before and after, feature
//! by feature (`features.rs`: a canonical XML comparison that ignores
//! renumbered relationship ids and part names), and every untouched cell
//! value as calamine reads it. Workbooks whose write sheetd refuses are
//! counted with the reason.

mod features;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use calamine::{Data, Reader, Xlsx};
use sheetd::model::Workbook;
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
    Written {
        lost: Vec<(&'static str, String)>,
        kept: Vec<&'static str>,
        changed_values: Vec<String>,
    },
}

fn main() {
    let mut show = 3;
    let mut out: Option<PathBuf> = None;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--show" => show = args.next().and_then(|n| n.parse().ok()).unwrap_or(3),
            "--out" => out = args.next().map(PathBuf::from),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    let files = workbooks(&paths);
    if files.is_empty() {
        eprintln!("usage: corpus [--show N] <directory or .xlsx files>…");
        std::process::exit(2);
    }
    let mut report = Report::default();
    for file in &files {
        let outcome = match std::fs::read(file) {
            Ok(bytes) => measure(&bytes, |written| keep(out.as_deref(), file, written)),
            Err(e) => Outcome::Unreadable(e.to_string()),
        };
        report.add(file, outcome);
    }
    report.print(show);
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

fn measure(original: &[u8], keep: impl FnOnce(&[u8])) -> Outcome {
    let mut workbook = match sheetd::xlsx::read_workbook(original, 50_000_000) {
        Ok(workbook) => workbook,
        Err(e) => return Outcome::Unreadable(e.to_string()),
    };
    if !workbook.unkept.is_empty() {
        return Outcome::Refused(workbook.unkept.join(" and "));
    }
    if !insert_and_update(&mut workbook) {
        return Outcome::NothingToWrite;
    }
    let mut written = Cursor::new(Vec::new());
    if let Err(e) = sheetd::xlsx::write_workbook(&workbook, &mut written) {
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
                changed_values: Vec::new(),
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
        changed_values: changed_values(original, &written),
    }
}

/// One insert and one update, as the API makes them, on the first sheet
/// that takes them; whether one was made.
fn insert_and_update(workbook: &mut Workbook) -> bool {
    for sheet in &mut workbook.sheets {
        // The first header column, as the API names it; an empty sheet
        // takes the inserted keys as its header.
        let header_row = sheet.first_non_blank_row();
        let column = match header_row {
            Some(row) => match sheet.row(row).iter().find(|c| !c.is_empty_value()) {
                Some(cell) => cell.text_form().into_owned(),
                None => continue,
            },
            None => NEW_HEADER.to_owned(),
        };
        let has_data = sheet.data_row_count() > 0;
        let insert = serde_json::json!({"data": [{ &column: INSERTED }]}).to_string();
        let Ok(request) = InsertRows::from_json(insert.as_bytes(), 1000) else {
            continue;
        };
        if sheet.insert(request).is_err() {
            continue;
        }
        if let (true, Some(header_row)) = (has_data, header_row) {
            let row = header_row + 2;
            let update =
                serde_json::json!({"type": "row", "row": row, "data": { &column: UPDATED }})
                    .to_string();
            if let Ok(request) = UpdateRows::from_json(update.as_bytes()) {
                let _ = sheet.update(request);
            }
        }
        return true;
    }
    false
}

/// Cells whose value calamine reads differently after the write, apart
/// from the ones the write set.
fn changed_values(before: &[u8], after: &[u8]) -> Vec<String> {
    let (Ok(mut before), Ok(mut after)) = (
        Xlsx::new(Cursor::new(before)),
        Xlsx::new(Cursor::new(after)),
    ) else {
        return vec!["calamine cannot open one of the files".into()];
    };
    let mut changed = Vec::new();
    for name in before.sheet_names() {
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
                changed.push(format!("{name}!{at:?}: {:?} → {value:?}", old.get(at)));
            }
        }
        for (at, value) in &old {
            if !new.contains_key(at) {
                changed.push(format!("{name}!{at:?}: {value:?} → gone"));
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
}

impl Report {
    fn add(&mut self, file: &Path, outcome: Outcome) {
        self.files += 1;
        match outcome {
            Outcome::Unreadable(why) => self.unreadable.push((file.into(), why)),
            Outcome::Refused(why) => self.refused.push((file.into(), why)),
            Outcome::NothingToWrite => self.nothing += 1,
            Outcome::Written {
                lost,
                kept,
                changed_values,
            } => {
                self.written += 1;
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
                if !changed_values.is_empty() {
                    self.changed.push((file.into(), changed_values));
                }
            }
        }
    }

    fn print(&self, show: usize) {
        let percent = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
        let readable = self.files - self.unreadable.len();
        println!("workbooks:                 {}", self.files);
        println!("unreadable (also by reads): {}", self.unreadable.len());
        println!(
            "writes refused:            {} ({:.1}% of readable)",
            self.refused.len(),
            percent(self.refused.len(), readable)
        );
        println!("no sheet with a header:    {}", self.nothing);
        println!("written:                   {}", self.written);
        println!(
            "written, every feature kept: {} ({:.1}%)",
            self.all_kept,
            percent(self.all_kept, self.written)
        );
        println!(
            "written, an untouched value changed: {} ({:.1}%)",
            self.changed.len(),
            percent(self.changed.len(), self.written)
        );
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
        for (file, changes) in self.changed.iter().take(show * 3) {
            for change in changes.iter().take(show) {
                println!("changed {}: {change}", file.display());
            }
        }
        for (file, why) in self.unreadable.iter().take(show) {
            println!("unreadable {}: {why}", file.display());
        }
    }
}
