//! Request bodies and read queries: validate, then apply to small sheets.
//! Never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use sheetd::model::request::{DeleteRows, InsertRows, ReadQuery, UpdateRows};
use sheetd::model::value::Formula;
use sheetd::model::{Cell, Sheet, Workbook};

fn text(t: &str) -> Cell {
    Cell::Text(t.to_owned())
}

/// A header row of names, a blank row, data rows of every cell kind.
fn people() -> Sheet {
    Sheet::new(
        "S",
        vec![
            vec![
                text("name"),
                text("age"),
                text("city"),
                text("joined"),
                text("ok"),
                text("dup"),
                text("dup"),
                Cell::Empty,
                text("note"),
            ],
            vec![
                text("Alice"),
                Cell::Number(30.0),
                text("London"),
                Cell::DateTime(45306.0),
                Cell::Bool(true),
            ],
            vec![],
            vec![
                text("Bob"),
                Cell::Number(25.5),
                Cell::Empty,
                Cell::DateTime(45306.75),
                Cell::Bool(false),
                text("d1"),
                text("d2"),
                text("no header"),
                Cell::Duration(1.5),
            ],
            vec![Cell::Empty, Cell::Empty, text("Paris"), Cell::Error("#N/A".into())],
        ],
    )
}

/// A sheet whose header is not on row 1.
fn offset() -> Sheet {
    let mut sheet = people();
    sheet.rows.insert(0, vec![]);
    sheet.rows.insert(0, vec![Cell::Empty, Cell::Text(String::new())]);
    sheet
}

/// Each sheet an edit is tried on: header on row 1, header lower down, blank.
fn sheets() -> Vec<Sheet> {
    vec![people(), offset(), Sheet::new("S", vec![])]
}

/// Query pairs: from a JSON object (`{"filter": ["a:eq:1"], "limit": 3}`),
/// or, when the input is not JSON, the input decoded as a query string.
fn pairs_of(data: &[u8], json: Option<&Value>) -> Vec<(String, String)> {
    let Some(Value::Object(map)) = json else {
        return serde_urlencoded::from_bytes::<Vec<(String, String)>>(data).unwrap_or_default();
    };
    let mut pairs = Vec::new();
    for (key, value) in map {
        let one = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match value {
            Value::Array(items) => pairs.extend(items.iter().map(|v| (key.clone(), one(v)))),
            other => pairs.push((key.clone(), one(other))),
        }
    }
    pairs
}

fn read_all(sheet: &Sheet, query: Option<&ReadQuery>) {
    if let Some(query) = query {
        let _ = sheet.read(query);
    }
    let everything = ReadQuery::from_pairs(&[]).expect("no pairs is a valid query");
    let _ = sheet.read(&everything);
    let _ = sheet.data_row_count();
}

fuzz_target!(|data: &[u8]| {
    let json: Option<Value> = serde_json::from_slice(data).ok();

    let query = ReadQuery::from_pairs(&pairs_of(data, json.as_ref())).ok();
    if let Some(query) = &query {
        for sheet in sheets() {
            let _ = sheet.read(query);
        }
    }

    if json.is_none() {
        return;
    }

    match InsertRows::from_json(data, usize::MAX) {
        Ok(insert) => {
            for mut sheet in sheets() {
                let _ = sheet.insert(insert.clone());
                read_all(&sheet, query.as_ref());
            }
        }
        Err(rejected) => {
            for sheet in sheets() {
                let _ = sheet.insert_problems(&rejected.partial);
            }
        }
    }

    match UpdateRows::from_json(data) {
        Ok(update) => {
            for mut sheet in sheets() {
                let _ = sheet.update(update.clone());
                read_all(&sheet, query.as_ref());
            }
        }
        Err(rejected) => {
            for sheet in sheets() {
                let _ = sheet.update_problems(&rejected.partial);
            }
        }
    }

    if let Ok(delete) = DeleteRows::from_json(data) {
        for sheet in sheets() {
            let mut workbook = Workbook {
                sheets: vec![sheet],
                ..Workbook::default()
            };
            let _ = workbook.delete_rows("S", &delete);
            let _ = workbook.delete_rows("s", &delete); // case-insensitive lookup
            read_all(&workbook.sheets[0], query.as_ref());

            // A second sheet whose formula names S: deletes are refused.
            let formula = Cell::Formula(Box::new(Formula::new("SUM(S!B2:B9)", Cell::Number(55.5))));
            workbook.sheets.push(Sheet::new("Sum", vec![vec![formula]]));
            let _ = workbook.delete_rows("S", &delete);
        }
    }
});
