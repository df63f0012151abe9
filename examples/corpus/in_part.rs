//! `--in-part`: whether a save in part writes what a whole rewrite writes,
//! on real workbooks (issue 29).
//!
//! For each workbook: the first save is a whole rewrite that keeps the rows
//! in chunks (of 4 KiB of XML, so that even small sheets have several);
//! then the insert and update `main.rs` makes, told apart as the commit
//! tells them (the outline and the edits' log), are saved in part and
//! written whole, and the two packages are compared: every part byte for
//! byte, but the time in the document properties and each sheet's
//! `<dimension>` (a save in part keeps a dimension that held cells since
//! emptied), and with each row that leans on the row before (a row that
//! moved, written without its numbers) numbered again. Then the same for a delete of the middle data row of the
//! first sheet with data (the rows below it move up), and for an insert of
//! a row before it (they move down again).

use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use sheetd::model::Sheet;
use sheetd::model::request::DeleteRows;
use sheetd::xlsx::{Rewrite, with_row_numbers, write_workbook};

/// How a workbook fared.
enum Fate {
    /// Saved in part and whole alike; whether a delete and an insert
    /// between rows were too.
    Same(bool),
    /// The parts that differ.
    Differs(Vec<String>),
    /// Not saved in part, and why.
    Whole(String),
}

pub fn run(files: &[PathBuf], show: usize) {
    let (mut same, mut deletes) = (0, 0);
    let mut differ: Vec<(PathBuf, Vec<String>)> = Vec::new();
    let mut whole: BTreeMap<String, usize> = BTreeMap::new();
    for file in files {
        match std::fs::read(file)
            .map_err(|e| e.to_string())
            .map(|b| fate(&b))
        {
            Ok(Fate::Same(deleted)) => {
                same += 1;
                deletes += usize::from(deleted);
            }
            Ok(Fate::Differs(parts)) => differ.push((file.clone(), parts)),
            Ok(Fate::Whole(why)) | Err(why) => *whole.entry(why).or_default() += 1,
        }
    }
    println!(
        "{} workbooks: {same} saved in part as written whole ({deletes} of them a delete and an insert between rows too), \
         {} otherwise, {} not saved in part",
        files.len(),
        differ.len(),
        whole.values().sum::<usize>()
    );
    for (why, count) in &whole {
        println!("  not in part: {count} ({why})");
    }
    for (file, parts) in differ.iter().take(show) {
        println!("  differs: {} ({})", file.display(), parts.join(", "));
    }
}

fn fate(bytes: &[u8]) -> Fate {
    let Ok(mut workbook) = sheetd::xlsx::read_workbook(bytes, 50_000_000) else {
        return Fate::Whole("unreadable".into());
    };
    if !workbook.unkept.is_empty() {
        return Fate::Whole("refused".into());
    }
    let Ok(rewrite) = Rewrite::begin(&workbook) else {
        return Fate::Whole("refused by the writer".into());
    };
    let mut rewrite = rewrite.with_chunks_of(4096).keeping_chunks(true);
    if rewrite.save(&workbook, Cursor::new(Vec::new())).is_err() {
        return Fate::Whole("refused by the writer".into());
    }
    if rewrite.files() > 0 {
        return Fate::Whole("a sheet not written in row order".into());
    }
    let outline = workbook.outline();
    if !super::insert_and_update(&mut workbook) {
        return Fate::Whole("nothing to write".into());
    }
    let logs = workbook.take_edits();
    let Some(changed) = workbook.changed_in_place(&outline, &[&logs]) else {
        return Fate::Whole("rows moved or more than cells changed".into());
    };
    if !rewrite.takes(&workbook, &changed) {
        return Fate::Whole("the rewrite cannot take the change".into());
    }
    match compared(&mut rewrite, &workbook, &changed) {
        Fate::Same(_) => {}
        other => return other,
    }
    // Then a delete of the middle data row of the first sheet that has
    // one (the rows below it move up), and an insert of a row before it
    // (they move down again).
    for (what, mv) in [
        ("a delete", Move::Delete),
        ("an insert between rows", Move::Insert),
    ] {
        let outline = workbook.outline();
        if !middle_row_moved(&mut workbook, mv) {
            return Fate::Same(false);
        }
        let logs = workbook.take_edits();
        let Some(changed) = workbook.changed_in_place(&outline, &[&logs]) else {
            return Fate::Same(false);
        };
        match compared(&mut rewrite, &workbook, &changed) {
            Fate::Same(_) => {}
            Fate::Differs(parts) => {
                return Fate::Differs(
                    parts
                        .into_iter()
                        .map(|p| format!("{p} after {what}"))
                        .collect(),
                );
            }
            other => return other,
        }
    }
    Fate::Same(true)
}

#[derive(Clone, Copy)]
enum Move {
    Delete,
    Insert,
}

/// Deletes the middle data row of the first sheet with data rows, or
/// inserts a row before it, as the API does, and moves what the file
/// carries with it; whether it did.
fn middle_row_moved(workbook: &mut sheetd::model::Workbook, mv: Move) -> bool {
    let Some(index) = workbook.sheets.iter().position(|s| s.rows.len() > 2) else {
        return false;
    };
    let name = workbook.sheets[index].name.clone();
    let number = 2 + workbook.sheets[index].rows.len() / 2;
    let Ok(source) = workbook.source(&name, None) else {
        return false;
    };
    let moved = match mv {
        Move::Delete => {
            let body = format!(r#"{{"type": "row", "row": {number}}}"#);
            let Ok(request) = DeleteRows::from_json(body.as_bytes()) else {
                return false;
            };
            workbook.delete_rows(&source, &request).is_ok()
        }
        Move::Insert => match super::moves::insert_request(workbook, index) {
            Some(request) => workbook
                .insert_before(&source, request, number as u64)
                .is_ok(),
            None => false,
        },
    };
    moved && sheetd::xlsx::carried_rows_moved(workbook).is_ok()
}

/// Saves `workbook` in part with `rewrite` and whole, and compares them.
/// (A delete is saved in part here even where the server would rewrite
/// the workbook whole, because the window would write more than a
/// quarter of the rows: see `Rewrite::takes`.)
fn compared(
    rewrite: &mut Rewrite,
    workbook: &sheetd::model::Workbook,
    changed: &[sheetd::model::RowsChanged],
) -> Fate {
    let mut in_part = Cursor::new(Vec::new());
    if let Err(e) = rewrite.save_changed(workbook, changed, &mut in_part) {
        return Fate::Differs(vec![format!("the save in part failed: {e}")]);
    }
    let mut whole = Cursor::new(Vec::new());
    if write_workbook(workbook, &mut whole).is_err() {
        return Fate::Whole("refused by the writer".into());
    }
    let sheets = workbook.sheets.iter().map(Sheet::extent).count();
    match (parts(in_part.get_ref()), parts(whole.get_ref())) {
        (Ok(a), Ok(b)) => {
            let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
            names.sort();
            names.dedup();
            let differing: Vec<String> = names
                .into_iter()
                .filter(|name| a.get(*name) != b.get(*name))
                .cloned()
                .collect();
            match differing.is_empty() {
                true => Fate::Same(false),
                false => Fate::Differs(differing),
            }
        }
        (Err(e), _) => Fate::Differs(vec![format!("{sheets} sheets, saved in part: {e}")]),
        (_, Err(e)) => Fate::Whole(format!("the whole rewrite: {e}")),
    }
}

/// Every part of a package, inflated, but the core properties (the time
/// of the save), each sheet's dimension left out.
fn parts(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| e.to_string())?;
    let mut parts = BTreeMap::new();
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).map_err(|e| e.to_string())?;
        let name = file.name().map_err(|e| e.to_string())?.into_owned();
        if name == "docProps/core.xml" {
            continue;
        }
        let mut data = Vec::new();
        file.read_to_end(&mut data).map_err(|e| e.to_string())?;
        if is_sheet(Path::new(&name)) {
            // Rows that moved may lean on the row before: numbered again,
            // as the writer numbers them.
            data = without_dimension(with_row_numbers(&data));
        }
        parts.insert(name, data);
    }
    Ok(parts)
}

fn is_sheet(name: &Path) -> bool {
    name.starts_with("xl/worksheets") && name.extension().is_some_and(|e| e == "xml")
}

fn without_dimension(xml: Vec<u8>) -> Vec<u8> {
    let Some(start) = memchr::memmem::find(&xml, b"<dimension ") else {
        return xml;
    };
    match memchr::memmem::find(&xml[start..], b"/>") {
        Some(end) => [&xml[..start], &xml[start + end + 2..]].concat(),
        None => xml,
    }
}
