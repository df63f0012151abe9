//! Reading values as people see them (contract §11.3): `values=formatted`
//! against the text LibreOffice shows, `values=formula`, `dates=iso`, over a
//! real socket.
//!
//! `fixtures/formats/` holds a table of number formats (`formats.xlsx`, by
//! openpyxl, and `formats_lo.xlsx`, LibreOffice's re-save of it) and the
//! text LibreOffice displays for each cell (`displayed-<sheet>.csv`), made
//! by `fixtures/formats/make_formats.sh`.

mod common;

use std::collections::BTreeSet;

use common::*;
use serde_json::{Value, json};

/// The cells where sheetd's text is known to differ from LibreOffice's, as
/// `sheet!A1`, each for a reason docs/API.md gives. Every other cell agrees.
/// D30 and G30 are `# ??/??` of a number of 14 or more whole digits, which
/// LibreOffice 7.4 shows as `#FMT` and sheetd (as Excel) with its digits;
/// G54 is -1.005 as `0%`, which LibreOffice rounds from 100.49999… (its
/// binary value times 100) to `-100%`, and sheetd from 100.5 (its 15
/// significant digits, as it rounds `0.00` of 1.005 to `1.01`, as
/// LibreOffice does there) to `-101%`.
const KNOWN_DIFFERENCES: &[&str] = &["Formats!D30", "Formats!G30", "Formats!G54"];

/// RFC 4180 lines: fields split at commas, quotes removed (doubled quotes
/// are one), line breaks inside quotes kept.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// `A1` for 0-based `row` and `column`.
fn cell_name(sheet: &str, row: usize, column: usize) -> String {
    format!("{sheet}!{}{}", (b'A' + column as u8) as char, row + 1)
}

/// The answer to a CSV read of `sheet` with `query`, as rows of fields.
async fn csv_read(server: &Server, id: &str, sheet: &str, query: &str) -> Vec<Vec<String>> {
    let response = server
        .client
        .get(format!(
            "{}/v1/data/{id}/{sheet}?format=csv&{query}",
            server.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    parse_csv(&response.text().await.unwrap())
}

/// The cells (as `sheet!A1`) whose text differs between `ours` and
/// LibreOffice's, and how many cells were compared.
fn differences(
    sheet: &str,
    ours: &[Vec<String>],
    expected: &[Vec<String>],
) -> (BTreeSet<String>, usize) {
    assert_eq!(ours.len(), expected.len(), "{sheet}: rows");
    let mut differ = BTreeSet::new();
    let mut compared = 0;
    for (r, (mine, theirs)) in ours.iter().zip(expected).enumerate() {
        for c in 0..mine.len().max(theirs.len()) {
            let mine = mine.get(c).map_or("", String::as_str);
            let theirs = theirs.get(c).map_or("", String::as_str);
            if theirs.is_empty() && mine.is_empty() {
                continue;
            }
            compared += 1;
            if mine != theirs {
                eprintln!(
                    "{}: sheetd {mine:?}, LibreOffice {theirs:?}",
                    cell_name(sheet, r, c)
                );
                differ.insert(cell_name(sheet, r, c));
            }
        }
    }
    (differ, compared)
}

const LO_ID: &str = "0b1e3a5c-0000-4000-8000-0000000000f1";
const OPENPYXL_ID: &str = "0b1e3a5c-0000-4000-8000-0000000000f2";

fn expected(sheet: &str) -> Vec<Vec<String>> {
    let path = fixture_path(&format!("formats/displayed-{sheet}.csv"));
    parse_csv(&std::fs::read_to_string(path).unwrap())
}

/// Every cell of the table of formats, in the file as openpyxl wrote it
/// (built-in format ids) and as LibreOffice saved it (its own codes), and
/// every kind of cell (LibreOffice's file, which caches formula results),
/// reads with `values=formatted` as LibreOffice displays it.
#[tokio::test]
async fn formatted_values_are_the_text_libreoffice_shows() {
    let server = Server::start().await;
    server.add_fixture("formats/formats_lo.xlsx", LO_ID);
    server.add_fixture("formats/formats.xlsx", OPENPYXL_ID);
    let mut all = BTreeSet::new();
    let mut total = (0, 0);
    for (id, sheet) in [
        (LO_ID, "Formats"),
        (OPENPYXL_ID, "Formats"),
        (LO_ID, "Kinds"),
    ] {
        let ours = csv_read(&server, id, sheet, "values=formatted").await;
        let (differ, compared) = differences(sheet, &ours, &expected(sheet));
        eprintln!(
            "{id} {sheet}: {} of {compared} cells as LibreOffice shows them",
            compared - differ.len()
        );
        total = (total.0 + compared - differ.len(), total.1 + compared);
        all.extend(differ);
    }
    eprintln!("agreement: {} / {}", total.0, total.1);
    let known: BTreeSet<String> = KNOWN_DIFFERENCES.iter().map(|s| s.to_string()).collect();
    assert_eq!(all, known);
}

/// JSON gives the same text as CSV, every value a string, and `null` for an
/// empty cell; `_row` stays a number.
#[tokio::test]
async fn formatted_json_rows_hold_strings() {
    let server = Server::start().await;
    server.add_fixture("formats/formats_lo.xlsx", LO_ID);
    let (status, body) = server
        .get(&format!("/v1/data/{LO_ID}/Kinds?values=formatted"))
        .await;
    assert_eq!(status, 200, "{body}");
    let data = body["data"].as_array().unwrap();
    let csv = csv_read(&server, LO_ID, "Kinds", "values=formatted").await;
    for (row, line) in data.iter().zip(&csv[1..]) {
        assert!(row["_row"].is_u64());
        for (name, field) in csv[0].iter().zip(line) {
            match &row[name] {
                Value::Null => assert_eq!(field, "", "{name}"),
                Value::String(text) => assert_eq!(text, field, "{name}"),
                other => panic!("{name}: {other} is not a string"),
            }
        }
    }
    assert_eq!(data[1]["x"], "TRUE");
    assert_eq!(data[1]["z"], Value::Null);
    assert_eq!(data[2]["x"], "#DIV/0!");
    assert_eq!(data[5]["x"], "$1,234.50");
    assert_eq!(data[5]["y"], "25%");
    // A format on an empty cell shows nothing.
    assert_eq!(data[6]["x"], Value::Null);
    // Text through a format's text section.
    assert_eq!(data[7]["x"], " abc ");
    assert_eq!(data[7]["y"], "pre abc post");
    assert_eq!(data[7]["z"], "xabc");
}

/// `values=formula`: a formula cell reads as its formula with `=`, every
/// other cell as `raw` would read it.
#[tokio::test]
async fn formula_values_give_formula_text() {
    let server = Server::start().await;
    server.add_fixture("formats/formats_lo.xlsx", LO_ID);
    let path = format!("/v1/data/{LO_ID}/Kinds");
    let (_, raw) = server.get(&path).await;
    let (status, body) = server.get(&format!("{path}?values=formula")).await;
    assert_eq!(status, 200, "{body}");
    let formulas = &body["data"];
    assert_eq!(formulas[2]["x"], "=1/0");
    assert_eq!(formulas[2]["y"], "=B7*C7");
    assert_eq!(formulas[4]["x"], "=SUM(B7:C7)");
    assert_eq!(raw["data"][4]["x"], 1234.75);
    // Not formulas: as raw.
    assert_eq!(formulas[0], raw["data"][0]);
    assert_eq!(formulas[5], raw["data"][5]);
    assert_eq!(formulas[5]["x"], 1234.5);
    // LibreOffice saves a boolean as the formula TRUE() or FALSE().
    assert_eq!(formulas[1]["x"], "=TRUE()");
    assert_eq!(raw["data"][1]["x"], true);
    // In CSV too.
    let csv = csv_read(&server, LO_ID, "Kinds", "values=formula").await;
    assert_eq!(csv[3], ["formulas", "=1/0", "=B7*C7", "=NA()"]);
}

/// `dates=iso`: dates and date-times in ISO 8601, with `values=raw` (the
/// default) and for the cells `values=formula` shows as raw; filters still
/// take `YYYY/MM/DD`.
#[tokio::test]
async fn iso_dates() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server
        .patch(
            &rows_path("People"),
            json!({"type": "row", "row": 3, "data": {"joined": "2024/06/23 10:00"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let joined = |body: &Value| -> Vec<Value> {
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["joined"].clone())
            .collect()
    };
    let (_, plain) = server.get(&rows_path("People")).await;
    assert_eq!(
        joined(&plain),
        [
            json!("2021/03/04"),
            json!("2024/06/23 10:00:00"),
            json!("2019/07/01")
        ]
    );
    for query in [
        "dates=iso",
        "dates=iso&values=raw",
        "values=formula&dates=iso",
    ] {
        let (status, body) = server
            .get(&format!("{}?{query}", rows_path("People")))
            .await;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(
            joined(&body),
            [
                json!("2021-03-04"),
                json!("2024-06-23T10:00:00"),
                json!("2019-07-01")
            ],
            "{query}"
        );
        assert_eq!(body["data"][0]["age"], 30, "{query}");
    }
    let csv = csv_read(
        &server,
        ID,
        "People",
        "dates=iso&filter=joined:gt:2020/01/01",
    )
    .await;
    assert_eq!(csv[1][3], "2021-03-04");
    assert_eq!(csv[2][3], "2024-06-23T10:00:00");
    assert_eq!(csv.len(), 3);
    // The formula sheet keeps its formula with dates=iso.
    let (_, other) = server
        .get(&format!("{}?values=formula&dates=iso", rows_path("Other")))
        .await;
    assert_eq!(other["data"][1]["v"], "=1+2");
}

/// Unknown values of `values` and `dates` are validation errors, named
/// with the request's other problems.
#[tokio::test]
async fn unknown_values_and_dates_are_refused() {
    let server = Server::start().await;
    people_workbook(&server);
    for (query, error) in [
        (
            "values=pretty",
            "values: must be one of raw|formatted|formula",
        ),
        ("values=", "values: must be one of raw|formatted|formula"),
        (
            "values=Formatted",
            "values: must be one of raw|formatted|formula",
        ),
        ("dates=us", "dates: must be iso"),
        (
            "values=x&dates=y&limit=-1",
            "values: must be one of raw|formatted|formula, dates: must be iso, \
             limit: must be an integer from 0 to 100000",
        ),
    ] {
        let (status, body) = server
            .get(&format!("{}?{query}", rows_path("People")))
            .await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["success"], false);
        assert_eq!(body["error"], error, "{query}");
    }
}

/// The OpenAPI document describes both parameters of a read, with their
/// values.
#[tokio::test]
async fn openapi_describes_values_and_dates() {
    let server = Server::start().await;
    let (status, doc) = server.get("/v1/openapi.json").await;
    assert_eq!(status, 200);
    let parameters = doc["paths"]["/v1/data/{spreadsheet_id}/{sheet_name}"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let values_of = |name: &str| -> Value {
        let parameter = parameters.iter().find(|p| p["name"] == name).unwrap();
        assert_eq!(parameter["in"], "query", "{name}");
        assert!(parameter["description"].as_str().unwrap().len() > 20);
        parameter["schema"]["enum"].clone()
    };
    assert_eq!(values_of("values"), json!(["raw", "formatted", "formula"]));
    assert_eq!(values_of("dates"), json!(["iso"]));
}

/// Cells written through the API read back formatted with the formats
/// sheetd gave them (§2: `yyyy/mm/dd`, `yyyy/mm/dd hh:mm:ss`), numbers as
/// General, booleans in capitals; the file keeps its typed values.
#[tokio::test]
async fn written_cells_read_formatted() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [
                {"name": "Alan", "age": 41.5, "joined": "2024/06/23 10:00", "active": false},
                {"name": "Grace", "age": 0.1, "joined": "2024/06/24"},
                {"name": "Edsger", "age": "2024/06/25", "joined": 7}
            ]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = server
        .get(&format!(
            "{}?values=formatted&offset=3",
            rows_path("People")
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    // The same as a server that reads the written file afresh: the cached
    // workbook shows the formats the file has.
    let fresh = Server::start_sharing(server.data_dir()).await;
    let (_, from_file) = fresh
        .get(&format!(
            "{}?values=formatted&offset=3",
            rows_path("People")
        ))
        .await;
    assert_eq!(body, from_file);
    assert_eq!(
        body["data"],
        json!([
            {"_row": 5, "name": "Alan", "age": "41.5", "city": null,
             "joined": "2024/06/23 10:00:00", "active": "FALSE"},
            {"_row": 6, "name": "Grace", "age": "0.1", "city": null,
             "joined": "2024/06/24", "active": null},
            {"_row": 7, "name": "Edsger", "age": "2024/06/25", "city": null,
             "joined": "7", "active": null}
        ])
    );
    let (_, raw) = server
        .get(&format!("{}?offset=3&dates=iso", rows_path("People")))
        .await;
    assert_eq!(raw["data"][0]["age"], 41.5);
    assert_eq!(raw["data"][0]["joined"], "2024-06-23T10:00:00");
    assert_eq!(raw["data"][1]["joined"], "2024-06-24");
}
