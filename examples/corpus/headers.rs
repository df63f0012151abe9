//! The header rule (§11.1) measured against hand-labelled real sheets:
//! `--headers tools/corpus/header_labels.tsv target/corpus/files`.
//!
//! Each label names a workbook of the corpus, a sheet and the row a person
//! takes for its header, or `none` for a sheet without one; a `none` agrees
//! with a rule that picks the contract's fallback (the first row of two or
//! more cells, else the first non-empty row), since a sheet must have some
//! header row. The rule was tuned on the `dev` labels only; `test` is the
//! held-out part. Today's rule before v1.2 (the first non-empty row) is
//! measured beside it.

use std::collections::BTreeMap;
use std::path::Path;

use sheetd::model::header::{Header, Region};
use sheetd::model::{Cell, Sheet};
use sheetd::xlsx::read_workbook;

/// One labelled sheet.
struct Label {
    file: String,
    sheet: String,
    /// 0-based; `None` for a sheet without a header.
    row: Option<usize>,
    set: String,
}

/// Agreements out of labels, per set and rule.
#[derive(Default)]
struct Tally {
    agree: usize,
    total: usize,
}

pub fn run(labels: &Path, files: &Path) {
    let text = std::fs::read_to_string(labels).expect("the labels file reads");
    let labels: Vec<Label> = text.lines().skip(1).filter_map(parse).collect();
    let mut by_file: BTreeMap<&str, Vec<&Label>> = BTreeMap::new();
    for label in &labels {
        by_file.entry(&label.file).or_default().push(label);
    }
    // (set, rule, header rows only) → tally
    let mut tallies: BTreeMap<(String, &str, bool), Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut unread = 0;
    for (file, labels) in by_file {
        let Ok(bytes) = std::fs::read(files.join(file)) else {
            unread += labels.len();
            continue;
        };
        let Ok(workbook) = read_workbook(&bytes, usize::MAX) else {
            unread += labels.len();
            continue;
        };
        for label in labels {
            let Some(sheet) = workbook.sheets.iter().find(|s| s.name == label.sheet) else {
                unread += 1;
                continue;
            };
            let rule = Header::of(sheet, &Region::default()).map(|h| h.row);
            let first = sheet.first_non_blank_row();
            for (name, picked) in [("rule", rule), ("first non-empty row", first)] {
                let agrees = match label.row {
                    Some(row) => picked == Some(row),
                    None => picked == fallback(sheet),
                };
                for only_headers in [false, true] {
                    if only_headers && label.row.is_none() {
                        continue;
                    }
                    let tally = tallies
                        .entry((label.set.clone(), name, only_headers))
                        .or_default();
                    tally.total += 1;
                    tally.agree += usize::from(agrees);
                }
                if name == "rule" && !agrees && label.set == "test" {
                    misses.push(format!(
                        "{file} {:?}: labelled {}, rule {}",
                        label.sheet,
                        label.row.map_or("none".into(), |r| (r + 1).to_string()),
                        picked.map_or("none".into(), |r| (r + 1).to_string())
                    ));
                }
            }
        }
    }
    println!("| set | rule | all labels | sheets with a header row |");
    println!("|---|---|---:|---:|");
    for ((set, rule, only_headers), tally) in &tallies {
        if *only_headers {
            continue;
        }
        let headers = &tallies[&(set.clone(), *rule, true)];
        println!(
            "| {set} | {rule} | {} of {} ({:.1}%) | {} of {} ({:.1}%) |",
            tally.agree,
            tally.total,
            percent(tally),
            headers.agree,
            headers.total,
            percent(headers)
        );
    }
    println!("\nlabels whose workbook or sheet did not read: {unread}");
    println!("test-set disagreements of the rule:");
    for miss in misses {
        println!("- {miss}");
    }
}

fn percent(tally: &Tally) -> f64 {
    100.0 * tally.agree as f64 / tally.total.max(1) as f64
}

/// The contract's fallback: the first row of two or more cells, else the
/// first non-empty row.
fn fallback(sheet: &Sheet) -> Option<usize> {
    let count = |row: &Vec<Cell>| row.iter().filter(|c| !is_blank(c)).count();
    sheet
        .rows
        .iter()
        .take(50)
        .position(|row| count(row) >= 2)
        .or_else(|| sheet.rows.iter().take(50).position(|row| count(row) > 0))
}

fn is_blank(cell: &Cell) -> bool {
    match cell.value() {
        Cell::Text(text) => text.trim().is_empty(),
        other => other.is_blank(),
    }
}

/// A line of the labels file: file, source_repo, path, sheet, row, set, why.
fn parse(line: &str) -> Option<Label> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [file, _, _, sheet, row, set, ..] = fields[..] else {
        return None;
    };
    let row = match row {
        "none" => None,
        number => Some(number.parse::<usize>().ok()?.checked_sub(1)?),
    };
    Some(Label {
        file: file.to_owned(),
        sheet: sheet.to_owned(),
        row,
        set: set.to_owned(),
    })
}
