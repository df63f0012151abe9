//! Issue 14's acceptance test: on workbooks from two producers (openpyxl,
//! LibreOffice; `fixtures/formulas/`), after inserts, updates and deletes
//! through the API, every formula cell cached in the written file, and
//! read through the API, equals what LibreOffice computes for that file.
//!
//! Where LibreOffice is installed (with Python's UNO bridge), the test runs
//! its hard recalculation (`tools/libreoffice/recalculate.sh`) on each
//! written file. Everywhere, it compares with LibreOffice's results for the
//! same scenario committed in `fixtures/formulas/expected/`, so that CI
//! needs no LibreOffice. `SHEETD_BLESS=1 cargo test --test recalculation`
//! rewrites those from LibreOffice's results (it requires LibreOffice).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use calamine::{Data, Reader, Xlsx, open_workbook};
use common::*;
use serde_json::{Value, json};

const PRODUCERS: [&str; 2] = ["openpyxl", "libreoffice"];

/// One step of a scenario, as sent through the API.
enum Step {
    Insert(&'static str, Value),
    Update(&'static str, Value),
    Delete(&'static str, Value),
}

/// What each fixture goes through: an update of an input, an insert under
/// the formula columns (filled down), a delete that moves rows under
/// formulas and names that refer to them.
fn scenario(name: &str) -> Vec<Step> {
    use Step::*;
    match name {
        "orders" => vec![
            Update(
                "Orders",
                json!({"type": "row", "row": 2, "data": {"qty": 7}}),
            ),
            Insert(
                "Orders",
                json!({"data": [{"item": "fig", "price": 2, "qty": 3}]}),
            ),
            Delete("Orders", json!({"type": "row", "row": 3})),
        ],
        "mixed" => vec![
            Update("Data", json!({"type": "row", "row": 3, "data": {"b": 2}})),
            Insert(
                "Data",
                json!({"data": [{"a": 4, "b": 1, "label": "nut", "when": "2024/03/01", "flag": true}]}),
            ),
            Delete("Data", json!({"type": "row", "row": 5})),
        ],
        "table" => vec![
            Insert(
                "Sales",
                json!({"data": [{"region": "north", "units": 3, "price": 2}]}),
            ),
            Update(
                "Sales",
                json!({"type": "row", "row": 2, "data": {"units": 20}}),
            ),
            Delete("Sales", json!({"type": "row", "row": 3})),
        ],
        other => panic!("no scenario for {other}"),
    }
}

const FIXTURES: [&str; 3] = ["orders", "mixed", "table"];

/// A cell's value as compared: numbers to 12 significant digits.
#[derive(Debug, Clone, PartialEq)]
enum Value_ {
    Number(f64),
    Text(String),
    Bool(bool),
    Error(String),
    Empty,
}

impl Value_ {
    fn of(data: &Data) -> Value_ {
        match data {
            Data::Int(i) => Value_::Number(*i as f64),
            Data::Float(f) => Value_::Number(*f),
            Data::DateTime(dt) => Value_::Number(dt.as_f64()),
            Data::String(s) if s.is_empty() => Value_::Empty,
            Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => {
                Value_::Text(s.clone())
            }
            Data::Bool(b) => Value_::Bool(*b),
            Data::Error(e) => Value_::Error(e.to_string()),
            Data::Empty => Value_::Empty,
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Value_::Number(n) => json!(n),
            Value_::Text(s) => json!(s),
            Value_::Bool(b) => json!(b),
            Value_::Error(e) => json!({ "error": e }),
            Value_::Empty => Value::Null,
        }
    }

    fn from_json(value: &Value) -> Value_ {
        match value {
            Value::Number(n) => Value_::Number(n.as_f64().unwrap()),
            Value::String(s) => Value_::Text(s.clone()),
            Value::Bool(b) => Value_::Bool(*b),
            Value::Object(o) => Value_::Error(o["error"].as_str().unwrap().to_owned()),
            _ => Value_::Empty,
        }
    }

    fn agrees(&self, other: &Value_) -> bool {
        match (self, other) {
            (Value_::Number(a), Value_::Number(b)) => {
                a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
            }
            (a, b) => a == b,
        }
    }
}

/// Every formula cell of a workbook on disk, `Sheet!A1` → its cached value.
fn formula_values(path: &Path) -> BTreeMap<String, Value_> {
    let mut workbook: Xlsx<_> = open_workbook(path).expect("workbook opens");
    let mut values = BTreeMap::new();
    for sheet in workbook.sheet_names() {
        let formulas = workbook.worksheet_formula(&sheet).expect("formulas");
        let cells = workbook.worksheet_range(&sheet).expect("values");
        let (r0, c0) = formulas.start().unwrap_or((0, 0));
        for (r, c, formula) in formulas.used_cells() {
            if formula.is_empty() {
                continue;
            }
            let (row, column) = (r0 + r as u32, c0 + c as u32);
            let value = cells
                .get_value((row, column))
                .map_or(Value_::Empty, Value_::of);
            values.insert(format!("{sheet}!{}", cell_name(row, column)), value);
        }
    }
    values
}

fn cell_name(row: u32, column: u32) -> String {
    sheetd::model::formula::cell_name(row, column)
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// LibreOffice's recalculation of `written`, if LibreOffice can run here.
fn libreoffice_values(written: &Path) -> Option<BTreeMap<String, Value_>> {
    let out = written.with_extension("libreoffice.xlsx");
    let status = Command::new("bash")
        .arg(manifest().join("tools/libreoffice/recalculate.sh"))
        .arg(written)
        .arg(&out)
        .status()
        .ok()?;
    // 2: LibreOffice or Python's UNO bridge is missing.
    match status.code() {
        Some(0) => Some(formula_values(&out)),
        Some(2) => None,
        _ => panic!("LibreOffice failed on {written:?}: {status}"),
    }
}

fn expected_path(producer: &str, name: &str) -> PathBuf {
    manifest().join(format!("fixtures/formulas/expected/{producer}-{name}.json"))
}

fn read_expected(producer: &str, name: &str) -> BTreeMap<String, Value_> {
    let path = expected_path(producer, name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let json: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    json.iter()
        .map(|(cell, v)| (cell.clone(), Value_::from_json(v)))
        .collect()
}

fn write_expected(producer: &str, name: &str, values: &BTreeMap<String, Value_>) {
    let json: BTreeMap<&String, Value> = values.iter().map(|(k, v)| (k, v.to_json())).collect();
    let text = serde_json::to_string_pretty(&json).unwrap() + "\n";
    std::fs::write(expected_path(producer, name), text).unwrap();
}

/// The formula cells of ours where `reference` differs, described. (A
/// reference saved by LibreOffice has formulas of its own too: it saves
/// booleans as `TRUE()`.)
fn differences(
    ours: &BTreeMap<String, Value_>,
    reference: &BTreeMap<String, Value_>,
) -> Vec<String> {
    ours.iter()
        .filter_map(|(cell, value)| match reference.get(cell) {
            Some(other) if value.agrees(other) => None,
            other => Some(format!("{cell}: sheetd {value:?}, LibreOffice {other:?}")),
        })
        .collect()
}

/// The formula cells of a sheet as read through the API, `Sheet!A1` →
/// value, where the API's JSON can be compared (not dates).
async fn api_values(
    server: &Server,
    sheet: &str,
    on_disk: &BTreeMap<String, Value_>,
) -> Vec<String> {
    let (status, body) = server.get(&rows_path(sheet)).await;
    assert_eq!(status, 200, "{body}");
    let header: Vec<String> = {
        let path = server.file(ID);
        let mut workbook: Xlsx<_> = open_workbook(&path).unwrap();
        let range = workbook.worksheet_range(sheet).unwrap();
        range
            .rows()
            .next()
            .unwrap_or(&[])
            .iter()
            .map(|d| d.to_string())
            .collect()
    };
    let mut problems = Vec::new();
    for row in body["data"].as_array().unwrap() {
        let number = row["_row"].as_u64().unwrap() as u32;
        for (column, name) in header.iter().enumerate() {
            let cell = format!("{sheet}!{}", cell_name(number - 1, column as u32));
            let Some(cached) = on_disk.get(&cell) else {
                continue;
            };
            let served = &row[name.as_str()];
            let agrees = match (cached, served) {
                (Value_::Number(_), Value::String(_)) => true, // a date, served as text
                (Value_::Error(e), Value::String(s)) => e == s,
                (Value_::Empty, Value::Null) => true,
                (cached, served) => cached.agrees(&Value_::from_json(served)),
            };
            if !agrees {
                problems.push(format!(
                    "{cell}: the file caches {cached:?}, the API serves {served}"
                ));
            }
        }
    }
    problems
}

#[tokio::test]
async fn formulas_after_writes_agree_with_libreoffice() {
    let bless = std::env::var_os("SHEETD_BLESS").is_some();
    let mut problems = Vec::new();
    let mut compared = 0;
    for producer in PRODUCERS {
        for name in FIXTURES {
            let case = format!("{producer}/{name}");
            let server = Server::start().await;
            server.add_fixture(&format!("formulas/{producer}/{name}.xlsx"), ID);
            let mut sheets = Vec::new();
            for step in scenario(name) {
                let (sheet, (status, body)) = match step {
                    Step::Insert(sheet, body) => {
                        (sheet, server.post(&rows_path(sheet), body).await)
                    }
                    Step::Update(sheet, body) => {
                        (sheet, server.patch(&rows_path(sheet), body).await)
                    }
                    Step::Delete(sheet, body) => {
                        (sheet, server.delete(&rows_path(sheet), body).await)
                    }
                };
                assert!(status.is_success(), "{case}: {status} {body}");
                sheets.push(sheet);
            }
            let written = server.file(ID);
            let ours = formula_values(&written);
            assert!(!ours.is_empty(), "{case}: the file keeps its formulas");
            compared += ours.len();
            for sheet in ["Orders", "Summary", "Data", "Sales", "Report"] {
                if ours
                    .keys()
                    .any(|cell| cell.starts_with(&format!("{sheet}!")))
                {
                    problems.extend(
                        api_values(&server, sheet, &ours)
                            .await
                            .into_iter()
                            .map(|p| format!("{case}: {p}")),
                    );
                }
            }
            let copy = std::env::temp_dir().join(format!(
                "sheetd-recalc-{producer}-{name}-{}.xlsx",
                std::process::id()
            ));
            std::fs::copy(&written, &copy).unwrap();
            match libreoffice_values(&copy) {
                Some(libreoffice) => {
                    problems.extend(
                        differences(&ours, &libreoffice)
                            .into_iter()
                            .map(|d| format!("{case} (LibreOffice now): {d}")),
                    );
                    if bless {
                        write_expected(producer, name, &libreoffice);
                    }
                }
                None => assert!(!bless, "SHEETD_BLESS needs LibreOffice"),
            }
            let _ = std::fs::remove_file(&copy);
            let _ = std::fs::remove_file(copy.with_extension("libreoffice.xlsx"));
            let expected = read_expected(producer, name);
            problems.extend(
                differences(&ours, &expected)
                    .into_iter()
                    .map(|d| format!("{case} (committed): {d}")),
            );
        }
    }
    assert!(compared > 60, "only {compared} formula cells compared");
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
