//! Contract §4.3 (read rows), §3 (filters), §2 (values as read) and §4.4
//! (delete rows), checked over a real socket and, after every delete, on disk
//! with calamine. Reads must never touch the file; refused or empty deletes
//! must leave it byte for byte as it was.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::SystemTime;

use calamine::{Reader, Xlsx, open_workbook};
use common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Percent-encodes a query value (everything but the unreserved characters),
/// so that `+`, `&`, `,`, spaces and `#` reach the server as written.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `rows_path(sheet)` with the query parameters, each value percent-encoded.
fn query_path(sheet: &str, params: &[(&str, &str)]) -> String {
    let query: Vec<String> = params
        .iter()
        .map(|(name, value)| format!("{name}={}", encode(value)))
        .collect();
    format!("{}?{}", rows_path(sheet), query.join("&"))
}

/// The `_row` numbers of a read's `data`.
fn row_numbers(body: &Value) -> Vec<u64> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data array in {body}"))
        .iter()
        .map(|row| row["_row"].as_u64().expect("_row is a number"))
        .collect()
}

/// Runs one read per case (each case: the `filter` params and the rows that
/// must match) and reports every case that answers otherwise.
async fn assert_filters(server: &Server, sheet: &str, cases: &[(&[&str], &[u64])]) {
    let mut failures = Vec::new();
    for (filters, expected) in cases {
        let params: Vec<(&str, &str)> = filters.iter().map(|f| ("filter", *f)).collect();
        let (status, body) = server.get(&query_path(sheet, &params)).await;
        if status != StatusCode::OK {
            failures.push(format!("{filters:?}: status {status}, body {body}"));
            continue;
        }
        let rows = row_numbers(&body);
        if rows != *expected || body["total"] != json!(expected.len()) {
            failures.push(format!(
                "{filters:?}: rows {rows:?} (total {}), expected {expected:?}",
                body["total"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "filters answered wrongly:\n{}",
        failures.join("\n")
    );
}

/// Asserts a 400 in the contract's shape whose error starts with `field: `.
fn assert_invalid(status: StatusCode, body: &Value, field: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["success"], false, "{body}");
    let error = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error text: {body}"));
    assert!(
        error.starts_with(&format!("{field}: ")) || error.contains(&format!(", {field}: ")),
        "error should name {field}: {error}"
    );
}

/// What identifies a file version: its bytes, modification time and inode.
struct FileState {
    bytes: Vec<u8>,
    modified: SystemTime,
    inode: u64,
}

fn file_state(path: &Path) -> FileState {
    let meta = std::fs::metadata(path).expect("file exists");
    FileState {
        bytes: std::fs::read(path).expect("file reads"),
        modified: meta.modified().expect("mtime"),
        inode: meta.ino(),
    }
}

/// Asserts the file is still exactly the version `before` describes.
fn assert_untouched(path: &Path, before: &FileState) {
    let after = file_state(path);
    assert!(after.bytes == before.bytes, "the file's bytes changed");
    assert_eq!(after.modified, before.modified, "the file's mtime changed");
    assert_eq!(after.inode, before.inode, "the file was replaced");
}

// ---------------------------------------------------------------------------
// §4.3 Read rows
// ---------------------------------------------------------------------------

#[tokio::test]
async fn read_returns_every_row_with_row_number_and_null_for_empty_cells() {
    let server = Server::start().await;
    people_workbook(&server);

    let (status, body) = server.get(&rows_path("People")).await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({
            "data": [
                {"_row": 2, "name": "Alice", "age": 30, "city": "Berlin", "joined": "2021/03/04", "active": true},
                {"_row": 3, "name": "Bob", "age": 25, "city": "Paris", "joined": "2020/12/31", "active": false},
                {"_row": 4, "name": "Carol", "age": 41, "city": null, "joined": "2019/07/01", "active": true}
            ],
            "total": 3
        })
    );
}

#[tokio::test]
async fn read_renders_integral_numbers_without_fraction() {
    let server = Server::start().await;
    people_workbook(&server);

    let response = server
        .client
        .get(format!(
            "{}{}",
            server.base,
            query_path("People", &[("filter", "name:eq:Alice")])
        ))
        .send()
        .await
        .expect("request sent");

    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.expect("body");
    assert!(
        text.contains("\"age\":30") && !text.contains("30.0"),
        "age should be written as 30: {text}"
    );
}

/// A cell of the §2 values sheet, as written with rust_xlsxwriter.
enum Written {
    Number(f64),
    Text(&'static str),
    Bool(bool),
    /// A number with a number format.
    Formatted(f64, &'static str),
    /// A formula, its cached result and an optional number format.
    Formula(&'static str, &'static str, Option<&'static str>),
    Nothing,
}

/// One row per kind of cell: its kind, how it is written, how §2 says a
/// read renders it.
fn value_kinds() -> Vec<(&'static str, Written, Value)> {
    use Written::*;
    vec![
        ("int", Number(30.0), json!(30)),
        ("float", Number(2.5), json!(2.5)),
        ("negative", Number(-7.0), json!(-7)),
        (
            "two_pow_53",
            Number(9_007_199_254_740_992.0),
            json!(9_007_199_254_740_992_u64),
        ),
        ("text", Text("hello"), json!("hello")),
        (
            "text_like_formula",
            Text("=not a formula"),
            json!("=not a formula"),
        ),
        ("bool_true", Bool(true), json!(true)),
        ("bool_false", Bool(false), json!(false)),
        (
            "date",
            Formatted(45351.0, "yyyy/mm/dd"),
            json!("2024/02/29"),
        ),
        (
            "date_other_format",
            Formatted(45351.0, "dd.mm.yyyy"),
            json!("2024/02/29"),
        ),
        // Serial 60 is the 1900-02-29 that never was (kept from Lotus 1-2-3).
        (
            "date_1900_01_01",
            Formatted(1.0, "yyyy/mm/dd"),
            json!("1900/01/01"),
        ),
        (
            "date_1900_03_01",
            Formatted(61.0, "yyyy/mm/dd"),
            json!("1900/03/01"),
        ),
        // 13:45:30 is 49530 of 86400 seconds.
        (
            "date_time",
            Formatted(45306.0 + 49530.0 / 86400.0, "yyyy/mm/dd hh:mm:ss"),
            json!("2024/01/15 13:45:30"),
        ),
        // §9: the contract's own date-time format is what a date-time sent
        // through the API is stored with; it reads back as a date-time.
        (
            "date_time_at_midnight",
            Formatted(45306.0, "yyyy/mm/dd hh:mm:ss"),
            json!("2024/01/15 00:00:00"),
        ),
        // Any other format follows §2: a date at midnight reads as a date.
        (
            "own_date_time_format_at_midnight",
            Formatted(45306.0, "dd/mm/yyyy hh:mm"),
            json!("2024/01/15"),
        ),
        (
            "time_only",
            Formatted(12.5 / 24.0, "hh:mm:ss"),
            json!("12:30:00"),
        ),
        (
            "duration",
            Formatted(30.25 / 24.0, "[h]:mm:ss"),
            json!("30:15:00"),
        ),
        ("error", Formula("=1/0", "#DIV/0!", None), json!("#DIV/0!")),
        ("formula_number", Formula("=2+3", "5", None), json!(5)),
        (
            "formula_text",
            Formula("=\"a\"&\"b\"", "ab", None),
            json!("ab"),
        ),
        ("formula_bool", Formula("=1=1", "TRUE", None), json!(true)),
        (
            "formula_date",
            Formula("=DATE(2024,2,29)", "45351", Some("yyyy/mm/dd")),
            json!("2024/02/29"),
        ),
        ("empty", Nothing, Value::Null),
        ("unicode", Text("Grüße 👋"), json!("Grüße 👋")),
    ]
}

/// Sheet `Values` (kind, value) with the rows of [`value_kinds`].
fn write_values_workbook(path: &Path) {
    use rust_xlsxwriter::{Format, Formula, Workbook};
    let mut book = Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name("Values").unwrap();
    sheet.write_string(0, 0, "kind").unwrap();
    sheet.write_string(0, 1, "value").unwrap();
    for (i, (kind, written, _)) in value_kinds().into_iter().enumerate() {
        let row = i as u32 + 1;
        sheet.write_string(row, 0, kind).unwrap();
        match written {
            Written::Number(n) => sheet.write_number(row, 1, n).map(drop),
            Written::Text(text) => sheet.write_string(row, 1, text).map(drop),
            Written::Bool(b) => sheet.write_boolean(row, 1, b).map(drop),
            Written::Formatted(n, format) => {
                let format = Format::new().set_num_format(format);
                sheet.write_number_with_format(row, 1, n, &format).map(drop)
            }
            Written::Formula(formula, result, None) => sheet
                .write_formula(row, 1, Formula::new(formula).set_result(result))
                .map(drop),
            Written::Formula(formula, result, Some(format)) => {
                let format = Format::new().set_num_format(format);
                let formula = Formula::new(formula).set_result(result);
                sheet
                    .write_formula_with_format(row, 1, formula, &format)
                    .map(drop)
            }
            Written::Nothing => Ok(()),
        }
        .unwrap();
    }
    book.save(path).unwrap();
}

#[tokio::test]
async fn read_renders_each_cell_type_as_section_2_says() {
    let server = Server::start().await;
    write_values_workbook(&server.file(ID));
    let expected = value_kinds();

    let (status, body) = server.get(&rows_path("Values")).await;

    assert_eq!(status, StatusCode::OK, "{body}");
    let rows = body["data"].as_array().expect("data");
    assert_eq!(rows.len(), expected.len(), "{body}");
    let mut failures = Vec::new();
    for (i, (row, (kind, _, value))) in rows.iter().zip(&expected).enumerate() {
        let want = json!({"_row": i + 2, "kind": kind, "value": value});
        if *row != want {
            failures.push(format!("got {row}, expected {want}"));
        }
    }
    assert!(
        failures.is_empty(),
        "values rendered wrongly:\n{}",
        failures.join("\n")
    );
}

#[tokio::test]
async fn read_does_not_rewrite_the_file() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = file_state(&server.file(ID));

    for path in [
        rows_path("People"),
        query_path(
            "People",
            &[("filter", "age:gt:26"), ("limit", "1"), ("offset", "1")],
        ),
        rows_path("Other"),
        format!("/v1/data/{ID}"),
    ] {
        let (status, body) = server.get(&path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }

    assert_untouched(&server.file(ID), &before);
    let names: Vec<_> = std::fs::read_dir(server.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".sheetd-locks")
        .collect();
    assert_eq!(names, [format!("{ID}.xlsx")], "no other file appeared");
}

/// Query parameters: (name, value) pairs.
type Params<'a> = &'a [(&'a str, &'a str)];

#[tokio::test]
async fn read_limit_and_offset_page_the_rows_and_total_counts_all_matches() {
    let server = Server::start().await;
    people_workbook(&server);
    let cases: &[(Params, &[u64], u64)] = &[
        (&[("limit", "2")], &[2, 3], 3),
        (&[("offset", "1")], &[3, 4], 3),
        (&[("offset", "1"), ("limit", "1")], &[3], 3),
        (&[("offset", "3")], &[], 3),
        (&[("offset", "99")], &[], 3),
        (&[("limit", "100000")], &[2, 3, 4], 3),
        (&[("filter", "active:eq:true"), ("limit", "1")], &[2], 2),
        (&[("filter", "active:eq:true"), ("offset", "1")], &[4], 2),
    ];
    for (params, rows, total) in cases {
        let (status, body) = server.get(&query_path("People", params)).await;
        assert_eq!(status, StatusCode::OK, "{params:?}: {body}");
        assert_eq!(row_numbers(&body), *rows, "{params:?}");
        assert_eq!(body["total"], json!(total), "{params:?}");
    }
}

#[tokio::test]
async fn read_limit_zero_gives_only_the_total() {
    let server = Server::start().await;
    people_workbook(&server);

    let (status, body) = server
        .get(&query_path(
            "People",
            &[("limit", "0"), ("filter", "age:gte:30")],
        ))
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"data": [], "total": 2}));
}

#[tokio::test]
async fn read_limit_defaults_to_1000() {
    let server = Server::start().await;
    let mut rows = vec![vec![Spec::S("n")]];
    rows.extend((1..=1100).map(|n| vec![Spec::N(f64::from(n))]));
    make_workbook(&server.file(ID), &[("Many", rows)]);

    let (status, body) = server.get(&rows_path("Many")).await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["total"], 1100);
    let rows = row_numbers(&body);
    assert_eq!(rows.len(), 1000);
    assert_eq!((rows[0], rows[999]), (2, 1001));
    assert_eq!(body["data"][999], json!({"_row": 1001, "n": 1000}));
}

#[tokio::test]
async fn read_rejects_limit_above_100000_and_bad_numbers() {
    let server = Server::start().await;
    people_workbook(&server);
    for (name, value) in [
        ("limit", "100001"),
        ("limit", "-1"),
        ("limit", "ten"),
        ("offset", "-1"),
        ("offset", "x"),
    ] {
        let (status, body) = server.get(&query_path("People", &[(name, value)])).await;
        assert_invalid(status, &body, name);
    }
}

#[tokio::test]
async fn read_rejects_unknown_query_parameter() {
    let server = Server::start().await;
    people_workbook(&server);

    let (status, body) = server
        .get(&query_path("People", &[("fliter", "name:eq:Bob")]))
        .await;

    assert_invalid(status, &body, "fliter");
}

#[tokio::test]
async fn read_of_unknown_sheet_is_not_found() {
    let server = Server::start().await;
    people_workbook(&server);

    let (status, body) = server.get(&rows_path("Nobody")).await;

    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["success"], false);
    assert_eq!(body["error"], "Not Found");
}

#[tokio::test]
async fn read_finds_sheet_by_percent_decoded_and_case_insensitive_name() {
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[("My Sheet", vec![vec![Spec::S("a")], vec![Spec::N(1.0)]])],
    );

    for sheet in ["My%20Sheet", "my%20sheet", "MY%20SHEET"] {
        let (status, body) = server.get(&rows_path(sheet)).await;
        assert_eq!(status, StatusCode::OK, "{sheet}: {body}");
        assert_eq!(
            body,
            json!({"data": [{"_row": 2, "a": 1}], "total": 1}),
            "{sheet}"
        );
    }
}

#[tokio::test]
async fn read_of_sheet_without_cells_is_empty() {
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[("Data", vec![vec![Spec::S("x")]]), ("Blank", vec![])],
    );

    let (status, body) = server.get(&rows_path("Blank")).await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"data": [], "total": 0}));
}

#[tokio::test]
async fn read_row_numbers_follow_the_sheet_when_header_is_not_in_row_1() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Data",
            vec![
                vec![],
                vec![],
                vec![E, S("id"), S("item")],
                vec![E, N(1.0), S("apple")],
                vec![],
                vec![E, N(3.0), S("plum")],
            ],
        )],
    );

    let (status, body) = server.get(&rows_path("Data")).await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({
            "data": [
                {"_row": 4, "id": 1, "item": "apple"},
                {"_row": 5, "id": null, "item": null},
                {"_row": 6, "id": 3, "item": "plum"}
            ],
            "total": 3
        }),
        "an empty row between data rows is a data row"
    );
}

// ---------------------------------------------------------------------------
// §3 Filters
// ---------------------------------------------------------------------------

#[tokio::test]
async fn filter_text_cells_compare_exactly_and_by_code_point() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["name:eq:Bob"], &[3]),
            (&["name:eq:bob"], &[]),
            (&["name:eq:Bo"], &[]),
            (&["name:neq:Bob"], &[2, 4]),
            (&["name:lt:B"], &[2]),
            (&["name:lte:Bob"], &[2, 3]),
            (&["name:gt:Bob"], &[4]),
            (&["name:gte:Bob"], &[3, 4]),
            // Upper case letters come before lower case ones by code point.
            (&["name:lt:a"], &[2, 3, 4]),
            (&["city:eq:Berlin"], &[2]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_numeric_cells_compare_as_numbers() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["age:eq:30"], &[2]),
            (&["age:eq:30.0"], &[2]),
            (&["age:eq:3e1"], &[2]),
            (&["age:neq:30"], &[3, 4]),
            // As text, "9" would sort after "30" and "100" before it.
            (&["age:gt:9"], &[2, 3, 4]),
            (&["age:lt:100"], &[2, 3, 4]),
            (&["age:gt:30"], &[4]),
            (&["age:gte:30"], &[2, 4]),
            (&["age:lt:30"], &[3]),
            (&["age:lte:30"], &[2, 3]),
            (&["age:gt:25.5"], &[2, 4]),
            // A value that is no number compares with the text form.
            (&["age:eq:thirty"], &[]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_date_cells_compare_chronologically() {
    let server = Server::start().await;
    people_workbook(&server);
    // joined: 2021/03/04 (row 2), 2020/12/31 (row 3), 2019/07/01 (row 4)
    assert_filters(
        &server,
        "People",
        &[
            (&["joined:eq:2021/03/04"], &[2]),
            (&["joined:eq:2021-03-04"], &[2]),
            (&["joined:neq:2021/03/04"], &[3, 4]),
            (&["joined:gt:2020/12/31"], &[2]),
            (&["joined:gte:2020/12/31"], &[2, 3]),
            (&["joined:lt:2020/12/31"], &[4]),
            (&["joined:lte:2020-12-31"], &[3, 4]),
            (&["joined:lt:2020-06-01"], &[4]),
            // Compared by date, not by text: "2021/1/1"-style text would differ.
            (&["joined:gt:2019/12/31"], &[2, 3]),
            (&["joined:lt:2020/12/31 00:00:01"], &[3, 4]),
            (&["joined:gt:2020/12/30 23:59"], &[2, 3]),
            (&["joined:eq:2020/12/31 00:00:00"], &[3]),
            (&["joined:in:2019-07-01,2021/03/04"], &[2, 4]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_boolean_cells_compare_with_true_or_false_in_any_case() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["active:eq:true"], &[2, 4]),
            (&["active:eq:TRUE"], &[2, 4]),
            (&["active:eq:False"], &[3]),
            (&["active:neq:true"], &[3]),
            (&["active:is:true"], &[2, 4]),
            (&["active:is:false"], &[3]),
            (&["active:in:FALSE"], &[3]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_like_matches_whole_text_with_star_case_sensitively() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["name:like:A*"], &[2]),
            (&["name:like:a*"], &[]),
            (&["name:like:*o*"], &[3, 4]),
            (&["name:like:*ol"], &[4]),
            (&["name:like:C*r*l"], &[4]),
            (&["name:like:lic"], &[]),
            (&["name:like:Alice"], &[2]),
            (&["name:like:*"], &[2, 3, 4]),
            // Only `*` is special: `?`, `%`, `_` and `.` are literal.
            (&["name:like:B?b"], &[]),
            (&["name:like:B%"], &[]),
            (&["name:like:B_b"], &[]),
            (&["name:like:.*"], &[]),
            // Numbers and dates match by their text form.
            (&["age:like:3*"], &[2]),
            (&["joined:like:2021/*"], &[2]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_ilike_matches_whole_text_ignoring_case() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["name:ilike:a*"], &[2]),
            (&["name:ilike:ALICE"], &[2]),
            (&["name:ilike:*O*"], &[3, 4]),
            (&["city:ilike:berlin"], &[2]),
            (&["city:ilike:*R*"], &[2, 3]),
            (&["name:ilike:lic"], &[]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_in_matches_any_listed_value_typed_by_the_cell() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["name:in:Alice,Carol"], &[2, 4]),
            (&["name:in:Bob"], &[3]),
            (&["name:in:alice,bob"], &[]),
            (&["age:in:25,41.0"], &[3, 4]),
            (&["city:in:Paris,"], &[3, 4]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_is_tests_for_empty_and_booleans() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["city:is:null"], &[4]),
            (&["city:is:notnull"], &[2, 3]),
            (&["name:is:null"], &[]),
            (&["active:is:true"], &[2, 4]),
            (&["active:is:false"], &[3]),
            // A text cell is neither true nor false.
            (&["name:is:true"], &[]),
            (&["name:is:false"], &[]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_empty_cell_equals_only_the_empty_value_and_never_orders() {
    let server = Server::start().await;
    people_workbook(&server);
    // Carol (row 4) has no city.
    assert_filters(
        &server,
        "People",
        &[
            (&["city:eq:"], &[4]),
            (&["name:eq:"], &[]),
            (&["city:gt:A"], &[2, 3]),
            (&["city:lt:Z"], &[2, 3]),
            (&["city:lte:Zzz"], &[2, 3]),
            (&["city:gte:"], &[2, 3]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_neq_matches_empty_cells() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[(&["city:neq:Paris"], &[2, 4]), (&["city:neq:"], &[2, 3])],
    )
    .await;
}

#[tokio::test]
async fn filter_value_may_contain_colons() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Log",
            vec![
                vec![S("time"), S("what")],
                vec![S("12:30"), S("lunch")],
                vec![S("12:30:15"), S("a:b:c")],
            ],
        )],
    );
    assert_filters(
        &server,
        "Log",
        &[
            (&["time:eq:12:30"], &[2]),
            (&["time:eq:12:30:15"], &[3]),
            (&["what:eq:a:b:c"], &[3]),
            (&["time:like:12:30*"], &[2, 3]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_repeated_parameters_must_all_hold() {
    let server = Server::start().await;
    people_workbook(&server);
    assert_filters(
        &server,
        "People",
        &[
            (&["active:eq:true", "age:gt:35"], &[4]),
            (&["active:eq:true", "city:is:notnull"], &[2]),
            (&["age:gte:25", "age:lte:30"], &[2, 3]),
            (&["name:eq:Bob", "name:eq:Alice"], &[]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_values_keep_plus_ampersand_and_spaces() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "T",
            vec![
                vec![S("v")],
                vec![S("+49 30")],
                vec![S("R&D")],
                vec![S("a b")],
            ],
        )],
    );
    assert_filters(
        &server,
        "T",
        &[
            (&["v:eq:+49 30"], &[2]),
            (&["v:eq:R&D"], &[3]),
            (&["v:eq:a b"], &[4]),
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_errors_are_validation_errors() {
    let server = Server::start().await;
    people_workbook(&server);
    for filter in [
        "name",
        "name:eq",
        ":eq:Bob",
        "name:EQ:Bob",
        "name:equals:Bob",
        "name:is:empty",
        "name:is:",
        "nme:eq:Bob",
        "Name:eq:Bob",
    ] {
        let (status, body) = server
            .get(&query_path("People", &[("filter", filter)]))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{filter}: {body}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(
            error.starts_with("filter"),
            "{filter}: the error should name the filter: {body}"
        );
        assert_eq!(body["success"], false);
    }
}

// ---------------------------------------------------------------------------
// §4.4 Delete rows
// ---------------------------------------------------------------------------

#[tokio::test]
async fn delete_by_row_moves_rows_below_up() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = read_sheet(&server.file(ID), "People");
    let other_before = read_sheet(&server.file(ID), "Other");

    let (status, body) = server
        .delete(&rows_path("People"), json!({"type": "row", "row": 3}))
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 1}));
    let people = read_sheet(&server.file(ID), "People");
    assert_grid_eq(
        &people,
        &[before[0].clone(), before[1].clone(), before[3].clone()],
    );
    assert_grid_eq(&read_sheet(&server.file(ID), "Other"), &other_before);
    assert_eq!(sheet_names(&server.file(ID)), ["People", "Other"]);

    let (_, read) = server.get(&rows_path("People")).await;
    assert_eq!(row_numbers(&read), [2, 3]);
    assert_eq!(read["data"][1]["name"], "Carol");
}

#[tokio::test]
async fn delete_by_filter_removes_every_match_and_closes_the_gaps() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = read_sheet(&server.file(ID), "People");

    let (status, body) = server
        .delete(
            &rows_path("People"),
            json!({"type": "filter", "filter": "active:eq:true"}),
        )
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 2}));
    assert_grid_eq(
        &read_sheet(&server.file(ID), "People"),
        &[before[0].clone(), before[2].clone()],
    );
}

#[tokio::test]
async fn delete_by_filter_array_requires_every_filter() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = read_sheet(&server.file(ID), "People");

    let (status, body) = server
        .delete(
            &rows_path("People"),
            json!({"type": "filter", "filter": ["age:gte:25", "city:is:notnull", "joined:lt:2021/01/01"]}),
        )
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 1}));
    assert_grid_eq(
        &read_sheet(&server.file(ID), "People"),
        &[before[0].clone(), before[1].clone(), before[3].clone()],
    );
}

#[tokio::test]
async fn delete_keeps_row_numbers_of_an_offset_header_and_moves_unheaded_cells_too() {
    let server = Server::start().await;
    server.add_fixture("openpyxl/offset_header.xlsx", ID);
    let before = read_sheet(&server.file(ID), "Data");
    assert_eq!(before[4][5], s("note"), "fixture: F5 holds a note");

    let (status, body) = server
        .delete(&rows_path("Data"), json!({"type": "row", "row": 4}))
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 1}));
    let after = read_sheet(&server.file(ID), "Data");
    assert_grid_eq(
        &after,
        &[
            vec![],
            vec![],
            before[2].clone(),
            before[4].clone(),
            before[5].clone(),
        ],
    );
    let (_, read) = server.get(&rows_path("Data")).await;
    assert_eq!(
        read,
        json!({"data": [
            {"_row": 4, "id": 2, "item": "pear", "qty": 0, "_F": "note"},
            {"_row": 5, "id": 3, "item": "plum", "qty": 12, "_F": null}
        ], "total": 2})
    );
}

#[tokio::test]
async fn delete_of_the_header_row_or_above_is_rejected() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Data",
            vec![vec![], vec![S("a")], vec![N(1.0)], vec![N(2.0)]],
        )],
    );
    let before = file_state(&server.file(ID));

    for row in [2, 1] {
        let (status, body) = server
            .delete(&rows_path("Data"), json!({"type": "row", "row": row}))
            .await;
        assert_invalid(status, &body, "row");
    }
    assert_untouched(&server.file(ID), &before);
}

#[tokio::test]
async fn delete_of_row_below_the_last_data_row_is_not_found() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = file_state(&server.file(ID));

    for row in [5, 1_048_576] {
        let (status, body) = server
            .delete(&rows_path("People"), json!({"type": "row", "row": row}))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "row {row}: {body}");
        assert_eq!(body["success"], false);
        assert_eq!(body["error"], "Not Found");
    }
    assert_untouched(&server.file(ID), &before);
}

#[tokio::test]
async fn delete_with_no_match_deletes_nothing_and_leaves_the_file_untouched() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = file_state(&server.file(ID));

    let (status, body) = server
        .delete(
            &rows_path("People"),
            json!({"type": "filter", "filter": "name:eq:Zed"}),
        )
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 0}));
    assert_untouched(&server.file(ID), &before);
}

#[tokio::test]
async fn delete_with_no_match_on_a_sheet_with_formulas_deletes_nothing() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Data",
            vec![
                vec![S("a"), S("b")],
                vec![N(1.0), F("=A2*2", "2")],
                vec![N(2.0), F("=A3*2", "4")],
            ],
        )],
    );
    let before = file_state(&server.file(ID));

    let (status, body) = server
        .delete(
            &rows_path("Data"),
            json!({"type": "filter", "filter": "a:eq:99"}),
        )
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 0}));
    assert_untouched(&server.file(ID), &before);
}

/// Deleting row `row` of `sheet` is refused with a 409 in the contract's
/// shape, and the file stays as it was.
async fn assert_row_delete_refused(server: &Server, sheet: &str, row: u32) {
    let before = file_state(&server.file(ID));

    let (status, body) = server
        .delete(&rows_path(sheet), json!({"type": "row", "row": row}))
        .await;

    assert_conflict(server, status, &body);
    assert_untouched(&server.file(ID), &before);
}

/// Asserts a 409 refusal in the contract's shape, with a `detail` that gives
/// a reason and no file path.
fn assert_conflict(server: &Server, status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["success"], false, "{body}");
    assert_eq!(body["error"], "Conflict", "{body}");
    let detail = body["detail"]
        .as_str()
        .unwrap_or_else(|| panic!("no detail: {body}"));
    assert!(!detail.trim().is_empty(), "empty detail");
    let dir = server.dir.path().to_string_lossy();
    assert!(
        !detail.contains(dir.as_ref()) && !detail.contains(".xlsx"),
        "detail leaks a path: {detail}"
    );
}

/// Deletes row `row` of `sheet`, which must succeed and delete one row.
async fn delete_row(server: &Server, sheet: &str, row: u32) {
    let (status, body) = server
        .delete(&rows_path(sheet), json!({"type": "row", "row": row}))
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
}

#[tokio::test]
async fn delete_adjusts_a_formula_on_the_same_sheet_that_refers_to_moving_rows() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Data",
            vec![
                vec![S("a"), S("b")],
                vec![N(1.0), F("=A4*10", "30")],
                vec![N(2.0)],
                vec![N(3.0)],
            ],
        )],
    );

    let (status, body) = server
        .delete(
            &rows_path("Data"),
            json!({"type": "filter", "filter": "a:eq:2"}),
        )
        .await;

    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
    assert_eq!(
        formulas_of(&server.file(ID), "Data"),
        [(1, 1, "A3*10".into())]
    );
    let grid = read_sheet(&server.file(ID), "Data");
    assert_eq!(
        grid[1][1],
        calamine::Data::Float(30.0),
        "the same cell, moved up"
    );
}

#[tokio::test]
async fn delete_adjusts_a_formula_on_another_sheet_that_refers_to_the_sheet() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            (
                "Data",
                vec![vec![S("a")], vec![N(1.0)], vec![N(2.0)], vec![N(3.0)]],
            ),
            (
                "Sum",
                vec![vec![S("total")], vec![F("=SUM(Data!A2:A4)", "6")]],
            ),
        ],
    );

    delete_row(&server, "Data", 2).await;

    assert_eq!(
        formulas_of(&server.file(ID), "Sum"),
        [(1, 0, "SUM(Data!A2:A3)".into())]
    );
    let (_, read) = server.get(&rows_path("Sum")).await;
    assert_eq!(read["data"][0]["total"], 5);
}

#[tokio::test]
async fn delete_adjusts_a_quoted_sheet_reference() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            ("My Data", vec![vec![S("a")], vec![N(1.0)], vec![N(2.0)]]),
            ("Sum", vec![vec![S("last")], vec![F("='My Data'!A3", "2")]]),
        ],
    );

    let (status, body) = server
        .delete(
            &rows_path("My%20Data"),
            json!({"type": "filter", "filter": "a:eq:1"}),
        )
        .await;

    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
    assert_eq!(
        formulas_of(&server.file(ID), "Sum"),
        [(1, 0, "'My Data'!A2".into())]
    );
}

#[tokio::test]
async fn delete_adjusts_a_defined_name_that_refers_to_the_sheet() {
    let server = Server::start().await;
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name("Data").unwrap();
    for (row, value) in ["a", "1", "2", "3"].iter().enumerate() {
        sheet.write_string(row as u32, 0, *value).unwrap();
    }
    book.define_name("Values", "=Data!$A$2:$A$4").unwrap();
    book.define_name("First", "=Data!$A$2").unwrap();
    book.save(server.file(ID)).unwrap();

    delete_row(&server, "Data", 2).await;

    let names: Vec<_> = parse_file(&server.file(ID))
        .names
        .into_iter()
        .map(|name| (name.name, name.refers_to))
        .collect();
    assert!(
        names.contains(&("Values".into(), "Data!$A$2:$A$3".into())),
        "{names:?}"
    );
    assert!(
        names.contains(&("First".into(), "#REF!".into())),
        "{names:?}"
    );
}

/// The places the internal hyperlinks of `sheet` lead to.
fn link_places(path: &Path, sheet: &str) -> Vec<String> {
    parse_file(path)
        .sheet(sheet)
        .unwrap()
        .layout
        .links
        .iter()
        .filter_map(|link| match &link.target {
            sheetd::model::layout::LinkTarget::Location(place) => Some(place.clone()),
            sheetd::model::layout::LinkTarget::Url(_) => None,
        })
        .collect()
}

#[tokio::test]
async fn delete_adjusts_a_hyperlink_that_leads_to_the_sheet() {
    let server = Server::start().await;
    let mut book = rust_xlsxwriter::Workbook::new();
    let data = book.add_worksheet().set_name("Data").unwrap();
    for (row, value) in ["a", "1", "2", "3"].iter().enumerate() {
        data.write_string(row as u32, 0, *value).unwrap();
    }
    let index = book.add_worksheet().set_name("Index").unwrap();
    index.write_string(0, 0, "name").unwrap();
    index.write_string(1, 0, "x").unwrap();
    let link = rust_xlsxwriter::Url::new("internal:Data!A4").set_text("row 4");
    index.write_url(2, 0, link).unwrap();
    book.save(server.file(ID)).unwrap();

    delete_row(&server, "Data", 2).await;

    assert_eq!(link_places(&server.file(ID), "Index"), ["Data!A3"]);
}

#[tokio::test]
async fn delete_adjusts_a_hyperlink_on_the_sheet_that_names_only_a_cell() {
    // A link to `A3` with no sheet name leads to its own sheet's A3.
    let server = Server::start().await;
    workbook_with(&server.file(ID), |sheet| {
        sheet.write_string(2, 0, "b").unwrap();
        let link = rust_xlsxwriter::Url::new("internal:A3").set_text("to b");
        sheet.write_url(0, 3, link).unwrap();
    });

    delete_row(&server, "People", 2).await;

    assert_eq!(link_places(&server.file(ID), "People"), ["A2"]);
}

#[tokio::test]
async fn delete_is_refused_when_a_3d_reference_spans_the_sheet() {
    // `Alpha:Gamma!A2` takes in every sheet from Alpha to Gamma, Data included,
    // without naming Data.
    let server = Server::start().await;
    use Spec::*;
    let column = || vec![vec![S("a")], vec![N(1.0)], vec![N(2.0)]];
    make_workbook(
        &server.file(ID),
        &[
            ("Alpha", column()),
            ("Data", column()),
            ("Gamma", column()),
            (
                "Sum",
                vec![vec![S("total")], vec![F("=SUM(Alpha:Gamma!A2)", "3")]],
            ),
        ],
    );
    assert_row_delete_refused(&server, "Data", 2).await;
}

#[tokio::test]
async fn delete_shrinks_a_table_that_covers_the_rows() {
    let server = Server::start().await;
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name("Data").unwrap();
    sheet.write_string(0, 0, "a").unwrap();
    for row in 1..4 {
        sheet.write_number(row, 0, f64::from(row)).unwrap();
    }
    let table = rust_xlsxwriter::Table::new()
        .set_columns(&[rust_xlsxwriter::TableColumn::new().set_header("a")]);
    sheet.add_table(0, 0, 3, 0, &table).unwrap();
    book.save(server.file(ID)).unwrap();
    let before = file_state(&server.file(ID));

    let (status, body) = server
        .delete(&rows_path("Data"), json!({"type": "row", "row": 2}))
        .await;

    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
    assert_ne!(std::fs::read(server.file(ID)).unwrap(), before.bytes);
    // The table's first and last row (0-based) in the file.
    let table_rows = || {
        let range = parse_file(&server.file(ID)).sheets[0].layout.tables[0].range;
        (range.first_row, range.last_row)
    };
    assert_eq!(table_rows(), (0, 2), "A1:A4 became A1:A3");

    // With every data row deleted, it keeps its header and one empty row,
    // as in a spreadsheet app.
    let (status, body) = server
        .delete(
            &rows_path("Data"),
            json!({"type": "filter", "filter": "a:gte:1"}),
        )
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 2})));
    assert_eq!(table_rows(), (0, 1), "A1:A3 became A1:A2");
}

#[tokio::test]
async fn delete_moves_merged_cells_below_up() {
    let server = Server::start().await;
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name("Data").unwrap();
    sheet.write_string(0, 0, "a").unwrap();
    sheet.write_string(0, 1, "b").unwrap();
    sheet.write_string(1, 0, "1").unwrap();
    sheet.write_string(2, 0, "2").unwrap();
    sheet
        .merge_range(3, 0, 3, 1, "merged", &rust_xlsxwriter::Format::new())
        .unwrap();
    book.save(server.file(ID)).unwrap();
    let before = file_state(&server.file(ID));

    let (status, body) = server
        .delete(&rows_path("Data"), json!({"type": "row", "row": 2}))
        .await;

    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
    assert_ne!(std::fs::read(server.file(ID)).unwrap(), before.bytes);
    let after = parse_file(&server.file(ID));
    let merge = after.sheet("Data").unwrap().layout.merges[0];
    assert_eq!(
        (merge.first_row, merge.last_row, merge.last_column),
        (2, 2, 1),
        "A4:B4 became A3:B3"
    );
}

#[tokio::test]
async fn delete_keeps_formulas_of_other_sheets_that_do_not_refer_to_the_sheet() {
    let server = Server::start().await;
    people_workbook(&server);
    let other_before = read_sheet(&server.file(ID), "Other");
    let formulas_before = formulas_of(&server.file(ID), "Other");
    assert_eq!(formulas_before.len(), 1, "fixture: Other holds one formula");

    let (status, body) = server
        .delete(&rows_path("People"), json!({"type": "row", "row": 2}))
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 1}));
    assert_grid_eq(&read_sheet(&server.file(ID), "Other"), &other_before);
    assert_eq!(formulas_of(&server.file(ID), "Other"), formulas_before);
}

#[tokio::test]
async fn delete_keeps_sheet_order_and_hidden_state_of_a_third_party_workbook() {
    let server = Server::start().await;
    server.add_fixture("libreoffice/many_sheets.xlsx", ID);
    let alpha = read_sheet(&server.file(ID), "Alpha");
    let beta = read_sheet(&server.file(ID), "Beta");
    let gamma = read_sheet(&server.file(ID), "Gamma");

    let (status, body) = server
        .delete(
            &rows_path("Alpha"),
            json!({"type": "filter", "filter": "v:eq:Alpha-2"}),
        )
        .await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 1}));
    let workbook: Xlsx<_> = open_workbook(server.file(ID)).unwrap();
    let sheets: Vec<_> = workbook
        .sheets_metadata()
        .iter()
        .map(|m| (m.name.clone(), m.visible))
        .collect();
    assert_eq!(
        sheets,
        [
            ("Alpha".to_string(), calamine::SheetVisible::Visible),
            ("Beta".to_string(), calamine::SheetVisible::Hidden),
            ("Gamma".to_string(), calamine::SheetVisible::Visible),
        ]
    );
    assert_grid_eq(
        &read_sheet(&server.file(ID), "Alpha"),
        &[alpha[0].clone(), alpha[1].clone(), alpha[3].clone()],
    );
    assert_grid_eq(&read_sheet(&server.file(ID), "Beta"), &beta);
    assert_grid_eq(&read_sheet(&server.file(ID), "Gamma"), &gamma);
}

#[tokio::test]
async fn delete_rejects_malformed_bodies_and_deletes_nothing() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = file_state(&server.file(ID));
    let cases = [
        (json!({"type": "filter", "fliter": "name:eq:Bob"}), "fliter"),
        (json!({"type": "filter"}), "filter"),
        (json!({"type": "filter", "filter": []}), "filter"),
        (json!({"type": "filter", "filter": "name:EQ:Bob"}), "filter"),
        (json!({"type": "filter", "filter": "nme:eq:Bob"}), "filter"),
        (
            json!({"type": "filter", "filter": "name:eq:Bob", "row": 3}),
            "row",
        ),
        (
            json!({"type": "row", "row": 3, "filter": "name:eq:Bob"}),
            "filter",
        ),
        (json!({"type": "row"}), "row"),
        (json!({"type": "row", "row": "3"}), "row"),
        (json!({"type": "row", "row": 0}), "row"),
        (json!({"type": "rows", "row": 3}), "rows"),
        (json!({"type": "rows", "rows": []}), "rows"),
        (json!({"type": "rows", "rows": "3"}), "rows"),
        (json!({"type": "rows", "rows": [3, 0]}), "rows[1]"),
        (json!({"type": "rows", "rows": [3, 3]}), "rows[1]"),
        (json!({"type": "rows", "rows": [1, 3]}), "rows[0]"),
        (json!({"type": "row", "row": 3, "rows": [3]}), "rows"),
        (json!({"row": 3}), "type"),
    ];
    for (body, field) in cases {
        let (status, answer) = server.delete(&rows_path("People"), body.clone()).await;
        assert_invalid(status, &answer, field);
    }
    assert_untouched(&server.file(ID), &before);
}

#[tokio::test]
async fn delete_on_unknown_sheet_or_spreadsheet_is_not_found() {
    let server = Server::start().await;
    people_workbook(&server);
    let unknown = "/v1/data/0b1e3a5c-0000-4000-8000-0000000000ff/People";

    for path in [rows_path("Nobody"), unknown.to_string()] {
        let (status, body) = server.delete(&path, json!({"type": "row", "row": 2})).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_eq!(body["error"], "Not Found");
    }
}

#[tokio::test]
async fn delete_without_json_content_type_is_unsupported() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = file_state(&server.file(ID));

    let response = server
        .client
        .delete(format!("{}{}", server.base, rows_path("People")))
        .header("content-type", "text/plain")
        .body(r#"{"type": "row", "row": 2}"#)
        .send()
        .await
        .expect("request sent");
    let (status, body) = json_of(response).await;

    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    assert_eq!(body["error"], "Unsupported Media Type");
    assert_untouched(&server.file(ID), &before);
}

/// LibreOffice stores booleans as `TRUE()` formulas; formulas that refer to
/// no cell (`TRUE()`, `=2+3`) cannot point at moved data, so they do not
/// block a delete, and they move up with their rows.
#[tokio::test]
async fn delete_is_allowed_when_formulas_refer_to_no_cell() {
    let server = Server::start().await;
    server.add_fixture("libreoffice/types.xlsx", ID);
    let (status, body) = server
        .delete(
            &rows_path("Types"),
            json!({"type": "filter", "filter": "kind:in:int,float"}),
        )
        .await;
    assert_eq!((status.as_u16(), body), (200, json!({"deleted": 2})));
    let (_, read) = server
        .get(&format!(
            "{}?filter=kind:in:bool_true,formula_num",
            rows_path("Types")
        ))
        .await;
    assert_eq!(
        read["data"],
        json!([
            {"_row": 6, "kind": "bool_true", "value": true},
            {"_row": 13, "kind": "formula_num", "value": 5}
        ])
    );
    let mut book: calamine::Xlsx<_> = calamine::open_workbook(server.file(ID)).unwrap();
    let formulas = calamine::Reader::worksheet_formula(&mut book, "Types").unwrap();
    assert_eq!(formulas.get_value((12, 1)).map(String::as_str), Some("2+3"));
    // The boolean moved up as the formula it is, with its value (the
    // formula engine holds it as a value, §11.2 and issue 29).
    assert_eq!(
        formulas.get_value((5, 1)).map(String::as_str),
        Some("TRUE()")
    );
    let values = calamine::Reader::worksheet_range(&mut book, "Types").unwrap();
    assert_eq!(values.get_value((5, 1)), Some(&calamine::Data::Bool(true)));
}

/// The workbook on disk, read with sheetd's reader (layout included).
fn parse_file(path: &std::path::Path) -> sheetd::model::Workbook {
    let bytes = std::fs::read(path).unwrap();
    sheetd::xlsx::read_workbook(&bytes, 1_000_000).unwrap()
}
