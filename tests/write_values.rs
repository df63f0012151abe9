//! Contract §11.4, writing values as people mean them, over a real socket:
//! ISO 8601 dates and times stored as date and time cells, formulas
//! written as `{"formula": …}` and computed, typed ordering in filters,
//! quoted columns and filter objects, and errors that name the column
//! that was meant. Every write is checked on disk with calamine (and the
//! number formats in the package), not only through the API.

mod common;

use calamine::Data;
use common::looks::looks;
use common::{
    ID, Server, Spec, formulas_of, make_workbook, people_workbook, read_sheet, row_numbers,
    rows_path,
};
use serde_json::{Value, json};

/// A query value percent-encoded (every byte but unreserved ASCII).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Asserts two serial numbers are the same instant (to a microsecond).
fn assert_same(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() < 1e-11 * expected.abs().max(1.0),
        "{what}: {actual} is not {expected}"
    );
}

/// The serial number calamine reads for a date-like cell.
fn serial(cell: &Data) -> f64 {
    match cell {
        Data::DateTime(date) => date.as_f64(),
        other => panic!("expected a date or time cell, found {other:?}"),
    }
}

/// The number format code of cell `place` (`People!D5`) in the file on disk.
fn number_format(server: &Server, place: &str) -> String {
    let bytes = std::fs::read(server.file(ID)).expect("workbook on disk");
    let look = looks(&bytes)
        .remove(place)
        .unwrap_or_else(|| panic!("no cell {place}"));
    let code = look
        .strip_prefix("format \"")
        .and_then(|rest| rest.split('"').next())
        .expect("a look starts with its format");
    code.to_owned()
}

/// A sheet `Data` with the header `columns` and no rows.
fn data_sheet(server: &Server, columns: &[&'static str]) {
    let header = columns.iter().map(|c| Spec::S(c)).collect();
    make_workbook(&server.file(ID), &[("Data", vec![header])]);
}

async fn insert(server: &Server, sheet: &str, rows: Value) -> (u16, Value) {
    let (status, body) = server
        .post(&rows_path(sheet), json!({ "data": rows }))
        .await;
    (status.as_u16(), body)
}

async fn rows(server: &Server, sheet: &str, query: &str) -> Value {
    let (status, body) = server.get(&format!("{}?{query}", rows_path(sheet))).await;
    assert_eq!(status, 200, "{query}: {body}");
    body
}

/// §9: a new value takes the formats of the row above only where they fit
/// its kind. A date under a time format would show `00:00`, a time of day
/// under a date format a day of 1899, a boolean under a date format a date
/// (in LibreOffice): each gets a number format that fits. A value the file
/// holds in a format that does not fit it keeps that format.
#[tokio::test]
async fn a_value_gets_a_number_format_of_its_kind_where_the_row_above_has_another() {
    let server = Server::start().await;
    let path = server.file(ID);
    {
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet().set_name("Data").unwrap();
        let time = rust_xlsxwriter::Format::new().set_num_format("hh:mm");
        let elapsed = rust_xlsxwriter::Format::new().set_num_format("[h]:mm:ss");
        let date = rust_xlsxwriter::Format::new().set_num_format("yyyy/mm/dd");
        for (column, name) in ["start", "took", "day", "done"].iter().enumerate() {
            sheet.write_string(0, column as u16, *name).unwrap();
        }
        // The file's own misfit: a whole day shown as a time.
        sheet
            .write_number_with_format(1, 0, 45306.0, &time)
            .unwrap();
        sheet
            .write_number_with_format(1, 2, 45307.0, &date)
            .unwrap();
        sheet.write_number_with_format(2, 0, 0.5, &time).unwrap();
        sheet.write_number_with_format(2, 1, 1.5, &elapsed).unwrap();
        sheet
            .write_number_with_format(2, 2, 45306.0, &date)
            .unwrap();
        sheet.write_boolean_with_format(2, 3, true, &date).unwrap();
        book.save(&path).unwrap();
    }
    let written = json!([
        {"start": "2024/01/15", "took": "2024/01/16", "day": "12:30", "done": false},
        {"start": "12:30", "took": "10:00", "day": "2024/01/17", "done": "x"},
    ]);
    let (status, body) = insert(&server, "Data", written).await;
    assert_eq!(status, 201, "{body}");
    let formats: Vec<String> = ["A4", "B4", "C4", "D4", "A5", "B5", "C5"]
        .iter()
        .map(|cell| number_format(&server, &format!("Data!{cell}")))
        .collect();
    assert_eq!(
        formats,
        [
            "yyyy/mm/dd",
            "yyyy/mm/dd",
            "hh:mm:ss",
            "General",
            "hh:mm",
            "[h]:mm:ss",
            "yyyy/mm/dd"
        ],
        "fitted in row 4, inherited where they fit in row 5"
    );
    assert_eq!(
        number_format(&server, "Data!A2"),
        "hh:mm",
        "the file's cell keeps its format"
    );
    let read = rows(&server, "Data", "offset=2").await;
    assert_eq!(
        read["data"][0],
        json!({"_row": 4, "start": "2024/01/15", "took": "2024/01/16", "day": "12:30:00", "done": false})
    );
    // What a spreadsheet app shows, the cached workbook shows too.
    let shown = rows(&server, "Data", "offset=0&values=formatted").await;
    assert_eq!(
        [
            &shown["data"][0]["start"],
            &shown["data"][2]["start"],
            &shown["data"][2]["day"],
            &shown["data"][2]["done"]
        ],
        [
            &json!("00:00"),
            &json!("2024/01/15"),
            &json!("12:30:00"),
            &json!("FALSE")
        ],
        "{shown}"
    );
    // An update of the file's misfit is a value written here: it is fitted.
    let update = json!({"type": "row", "row": 2, "data": {"start": "2024/02/01"}});
    assert_eq!(server.patch(&rows_path("Data"), update).await.0, 200);
    assert_eq!(number_format(&server, "Data!A2"), "yyyy/mm/dd");
}

// ---------------------------------------------------------------------------
// ISO 8601 dates and times

#[tokio::test]
async fn iso_dates_are_stored_as_the_slash_forms_are() {
    let server = Server::start().await;
    people_workbook(&server);
    let written = json!([
        {"name": "slash date", "joined": "2024/06/23"},
        {"name": "iso date", "joined": "2024-06-23"},
        {"name": "slash time", "joined": "2024/06/23 10:00:00"},
        {"name": "iso T", "joined": "2024-06-23T10:00"},
        {"name": "iso space", "joined": "2024-06-23 10:00:00"},
        {"name": "iso midnight", "joined": "2024-06-23T00:00:00"},
    ]);
    assert_eq!(insert(&server, "People", written).await.0, 201);

    let grid = read_sheet(&server.file(ID), "People");
    // Rows 5.. are the new ones (the header and three rows come first).
    let joined: Vec<f64> = (4..10).map(|r| serial(&grid[r][3])).collect();
    // 2024-06-23 is serial 45466 in the 1900 date system.
    assert_eq!(joined[0], 45466.0);
    assert_eq!(joined[1], joined[0], "an ISO date is the same date");
    assert_same(joined[2], 45466.0 + 10.0 / 24.0, "10:00");
    assert_eq!(joined[3], joined[2], "T and a missing :SS");
    assert_eq!(joined[4], joined[2], "a space for the T");
    assert_eq!(joined[5], 45466.0);
    // The number formats §2 and §9 give: a date, a date-time (also at midnight).
    assert_eq!(number_format(&server, "People!D6"), "yyyy/mm/dd");
    assert_eq!(number_format(&server, "People!D8"), "yyyy/mm/dd hh:mm:ss");
    assert_eq!(number_format(&server, "People!D10"), "yyyy/mm/dd hh:mm:ss");

    let read = rows(&server, "People", "offset=3").await;
    let values: Vec<&Value> = read["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["joined"])
        .collect();
    assert_eq!(
        values,
        [
            "2024/06/23",
            "2024/06/23",
            "2024/06/23 10:00:00",
            "2024/06/23 10:00:00",
            "2024/06/23 10:00:00",
            "2024/06/23 00:00:00"
        ]
    );
}

#[tokio::test]
async fn zones_are_converted_to_utc_and_milliseconds_kept() {
    let server = Server::start().await;
    people_workbook(&server);
    let written = json!([
        {"name": "z", "joined": "2024-06-23T10:00:00Z"},
        {"name": "plus", "joined": "2024-06-23T12:00:00+02:00"},
        {"name": "minus", "joined": "2024-06-23T05:00-0500"},
        {"name": "across midnight", "joined": "2024-06-24T01:30:00+02:00"},
        {"name": "millis", "joined": "2024-06-23T10:00:00.250Z"},
    ]);
    assert_eq!(insert(&server, "People", written).await.0, 201);

    let grid = read_sheet(&server.file(ID), "People");
    let ten = 45466.0 + 10.0 / 24.0;
    for row in &grid[4..7] {
        assert_same(serial(&row[3]), ten, "10:00 UTC");
    }
    assert_same(
        serial(&grid[7][3]),
        45466.0 + 23.5 / 24.0,
        "23:30 the day before",
    );
    let millis = serial(&grid[8][3]);
    assert!(
        ((millis - ten) * 86_400_000.0 - 250.0).abs() < 0.5,
        "250 ms after ten: {millis}"
    );
    let read = rows(&server, "People", "offset=3").await;
    assert_eq!(read["data"][1]["joined"], "2024/06/23 10:00:00");
    assert_eq!(read["data"][3]["joined"], "2024/06/23 23:30:00");
}

#[tokio::test]
async fn times_of_day_are_stored_as_time_cells() {
    let server = Server::start().await;
    data_sheet(&server, &["what", "at"]);
    let written = json!([
        {"what": "lunch", "at": "12:30"},
        {"what": "late", "at": "23:59:59"},
        {"what": "midnight", "at": "00:00"},
    ]);
    assert_eq!(insert(&server, "Data", written).await.0, 201);

    let grid = read_sheet(&server.file(ID), "Data");
    assert_same(serial(&grid[1][1]), 12.5 / 24.0, "12:30");
    assert_same(serial(&grid[2][1]), 86_399.0 / 86_400.0, "23:59:59");
    assert_eq!(serial(&grid[3][1]), 0.0);
    assert_eq!(number_format(&server, "Data!B2"), "hh:mm:ss");

    let read = rows(&server, "Data", "").await;
    let times: Vec<&Value> = read["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["at"])
        .collect();
    assert_eq!(times, ["12:30:00", "23:59:59", "00:00:00"]);
    // Filters read times too.
    assert_eq!(
        row_numbers(&server, "Data", "filter=at:gt:12:00").await,
        [2, 3]
    );
    assert_eq!(
        row_numbers(&server, "Data", "filter=at:eq:12:30").await,
        [2]
    );
}

#[tokio::test]
async fn impossible_dates_and_times_are_refused_and_nothing_is_written() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let written = json!([
        {"name": "a", "joined": "2023-02-29"},
        {"name": "b", "joined": "2024-06-23T24:00"},
        {"name": "d", "joined": "2024-06-23T10:00+30:00"},
    ]);
    let (status, body) = insert(&server, "People", written).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data[0].joined: is not a real date, data[1].joined: is not a real time of day, \
         data[2].joined: has an offset from UTC that is no real one"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
    // Other shapes stay text, a bare time outside the day among them (§11.4).
    let text = json!([
        {"name": "2024-06-23 noon", "city": "12:30 pm"},
        {"name": "24:00", "city": "25:00"},
    ]);
    assert_eq!(insert(&server, "People", text).await.0, 201);
    let grid = read_sheet(&server.file(ID), "People");
    assert_eq!(grid[4][0], Data::String("2024-06-23 noon".into()));
    assert_eq!(grid[4][2], Data::String("12:30 pm".into()));
    assert_eq!(grid[5][0], Data::String("24:00".into()));
    assert_eq!(grid[5][2], Data::String("25:00".into()));
}

#[tokio::test]
async fn iso_values_work_in_updates_and_upserts() {
    let server = Server::start().await;
    people_workbook(&server);
    let by_filter =
        json!({"type": "filter", "filter": "name:eq:Bob", "data": {"joined": "2024-06-23"}});
    assert_eq!(server.patch(&rows_path("People"), by_filter).await.0, 200);
    let by_rows = json!({"type": "rows", "rows": [2, 4], "data": {"city": "09:15"}});
    assert_eq!(server.patch(&rows_path("People"), by_rows).await.0, 200);
    let upsert = json!({"data": [{"name": "Alice", "joined": "2024-06-23T10:00Z"}, {"name": "Dan", "joined": "2024-06-24"}]});
    let (status, body) = server
        .post(&format!("{}?on_conflict=name", rows_path("People")), upsert)
        .await;
    assert_eq!(
        (status.as_u16(), body),
        (200, json!({"inserted": 1, "updated": 1}))
    );

    let grid = read_sheet(&server.file(ID), "People");
    assert_eq!(serial(&grid[2][3]), 45466.0, "Bob's date");
    assert_same(serial(&grid[1][2]), 9.25 / 24.0, "Alice's city is a time");
    assert_same(serial(&grid[3][2]), 9.25 / 24.0, "Carol's city");
    assert_same(
        serial(&grid[1][3]),
        45466.0 + 10.0 / 24.0,
        "Alice's date-time",
    );
    assert_eq!(serial(&grid[4][3]), 45467.0);
    assert_eq!(number_format(&server, "People!C2"), "hh:mm:ss");
    let read = rows(&server, "People", "filter=name:eq:Alice").await;
    assert_eq!(read["data"][0]["joined"], "2024/06/23 10:00:00");
    assert_eq!(read["data"][0]["city"], "09:15:00");
}

// ---------------------------------------------------------------------------
// Formulas

fn order_sheet(server: &Server) {
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            (
                "Orders",
                vec![
                    vec![S("item"), S("price"), S("qty"), S("total")],
                    vec![S("pen"), N(2.0), N(3.0), F("B2*C2", "6")],
                ],
            ),
            ("Rates", vec![vec![S("rate")], vec![N(0.5)]]),
        ],
    );
}

#[tokio::test]
async fn formulas_are_written_and_computed_before_the_answer() {
    let server = Server::start().await;
    order_sheet(&server);
    let written = json!([
        {"item": "ink", "price": 4, "qty": 5, "total": {"formula": "=B3*C3"}},
        {"item": "pad", "price": 1.5, "qty": 2, "total": {"formula": "B4*C4*Rates!A2"}},
        {"item": "=B2*C2"},
    ]);
    let (status, body) = insert(&server, "Orders", written).await;
    assert_eq!(status, 201, "{body}");

    // On disk: the formula and its computed value, as any app reads them.
    let formulas = formulas_of(&server.file(ID), "Orders");
    assert!(
        formulas.contains(&(2, 3, "B3*C3".to_owned())),
        "{formulas:?}"
    );
    assert!(
        formulas.contains(&(3, 3, "B4*C4*Rates!A2".to_owned())),
        "{formulas:?}"
    );
    let grid = read_sheet(&server.file(ID), "Orders");
    assert_eq!(grid[2][3], Data::Float(20.0));
    assert_eq!(grid[3][3], Data::Float(1.5));
    // A string starting with = stays text (§2).
    assert_eq!(grid[4][0], Data::String("=B2*C2".into()));
    assert!(!formulas.iter().any(|(row, _, _)| *row == 4));

    let read = rows(&server, "Orders", "").await;
    assert_eq!(read["data"][1]["total"], 20);
    assert_eq!(read["data"][2]["total"], 1.5);

    // Its inputs change: the result follows.
    let update = json!({"type": "row", "row": 3, "data": {"qty": 10}});
    assert_eq!(server.patch(&rows_path("Orders"), update).await.0, 200);
    assert_eq!(
        read_sheet(&server.file(ID), "Orders")[2][3],
        Data::Float(40.0)
    );
    assert_eq!(rows(&server, "Orders", "").await["data"][1]["total"], 40);
}

#[tokio::test]
async fn a_formula_is_computed_in_a_workbook_that_had_none() {
    let server = Server::start().await;
    data_sheet(&server, &["a", "b", "sum"]);
    let written = json!([
        {"a": 1, "b": 2, "sum": {"formula": "=A2+B2"}},
        {"a": 1, "b": 0, "sum": {"formula": "=A3/B3"}},
    ]);
    assert_eq!(insert(&server, "Data", written).await.0, 201);
    let grid = read_sheet(&server.file(ID), "Data");
    assert_eq!(grid[1][2], Data::Float(3.0));
    assert_eq!(grid[2][2], Data::Error(calamine::CellErrorType::Div0));
    let read = rows(&server, "Data", "").await;
    assert_eq!(read["data"][0]["sum"], 3);
    assert_eq!(read["data"][1]["sum"], "#DIV/0!");
}

#[tokio::test]
async fn a_bad_formula_is_named_with_the_other_problems() {
    let server = Server::start().await;
    order_sheet(&server);
    let written = json!([{"item": "x", "total": {"formula": "=B3*"}, "Qty": 1}]);
    let (status, body) = insert(&server, "Orders", written).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data[0].total: formula cannot be parsed at character 4: Unexpected end of input., \
         data[0].Qty: is not a column of the sheet; did you mean \"qty\"?"
    );
}

#[tokio::test]
async fn formulas_replace_values_in_updates() {
    let server = Server::start().await;
    order_sheet(&server);
    let update =
        json!({"type": "filter", "filter": "item:eq:pen", "data": {"qty": {"formula": "=B2+2"}}});
    let (status, body) = server.patch(&rows_path("Orders"), update).await;
    assert_eq!((status.as_u16(), body), (200, json!({"updated": 1})));
    let grid = read_sheet(&server.file(ID), "Orders");
    assert_eq!(grid[1][2], Data::Float(4.0));
    // The total that reads it is computed again.
    assert_eq!(grid[1][3], Data::Float(8.0));
    let formulas = formulas_of(&server.file(ID), "Orders");
    assert!(
        formulas.contains(&(1, 2, "B2+2".to_owned())),
        "{formulas:?}"
    );
}

#[tokio::test]
async fn formulas_work_in_row_updates_and_upserts() {
    let server = Server::start().await;
    order_sheet(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let bad =
        json!({"type": "rows", "data": [{"_row": 2, "qty": 1, "total": {"formula": "=(B2"}}]});
    let (status, body) = server.patch(&rows_path("Orders"), bad).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("data[0].total: formula cannot be parsed"),
        "{body}"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);

    let upsert = json!({"data": [
        {"item": "pen", "total": {"formula": "=B2*C2*10"}},
        {"item": "cap", "price": 5, "qty": 1, "total": {"formula": "=B3*C3"}},
    ]});
    let (status, body) = server
        .post(&format!("{}?on_conflict=item", rows_path("Orders")), upsert)
        .await;
    assert_eq!(
        (status.as_u16(), body),
        (200, json!({"inserted": 1, "updated": 1}))
    );
    let grid = read_sheet(&server.file(ID), "Orders");
    assert_eq!(grid[1][3], Data::Float(60.0));
    assert_eq!(grid[2][3], Data::Float(5.0));
    let formulas = formulas_of(&server.file(ID), "Orders");
    assert!(
        formulas.contains(&(1, 3, "B2*C2*10".to_owned())),
        "{formulas:?}"
    );
}

#[tokio::test]
async fn formulas_that_cannot_be_used_are_refused_and_nothing_is_written() {
    let server = Server::start().await;
    order_sheet(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let refused = [
        (json!({"formula": "=B2*"}), "formula cannot be parsed"),
        (json!({"formula": "=SUM(B2:C2"}), "formula cannot be parsed"),
        (json!({"formula": "=B2)"}), "formula cannot be parsed"),
        (
            json!({"formula": "=[1]Sheet1!A1"}),
            "formula refers to another workbook",
        ),
        (
            json!({"formula": "='[book.xlsx]S'!A1"}),
            "formula refers to another workbook",
        ),
        (
            json!({"formula": "=Nowhere!A1"}),
            "formula refers to sheet \"Nowhere\"",
        ),
        (json!({"formula": ""}), "formula is empty"),
        (json!({"formula": 3}), "formula must be the formula's text"),
        (json!({"formula": "=1", "cached": 1}), "is a formula object"),
        (json!({"value": 1}), "must not be an object or array"),
        (json!(["=1"]), "must not be an object or array"),
    ];
    for (value, reason) in refused {
        let row = json!([{"item": "x", "total": value}]);
        let (status, body) = insert(&server, "Orders", row).await;
        assert_eq!(status, 400, "{value}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.starts_with(&format!("data[0].total: {reason}")),
            "{value}: {error}"
        );
        let update = json!({"type": "row", "row": 2, "data": {"total": value}});
        let (status, body) = server.patch(&rows_path("Orders"), update).await;
        assert_eq!(status, 400, "{value}: {body}");
        assert!(
            body["error"].as_str().unwrap().starts_with("data.total: "),
            "{body}"
        );
    }
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

// ---------------------------------------------------------------------------
// Filters: typed ordering, quoted columns, filter objects

#[tokio::test]
async fn ordering_filters_compare_only_values_of_the_cells_kind() {
    let server = Server::start().await;
    people_workbook(&server);
    let more = json!([{"name": "Dan", "age": "n/a"}, {"name": "Eve", "age": 50}]);
    assert_eq!(insert(&server, "People", more).await.0, 201);
    // Rows: 2 Alice 30, 3 Bob 25, 4 Carol 41, 5 Dan "n/a", 6 Eve 50.
    let cases: &[(&str, &[u64])] = &[
        ("age:gt:40", &[4, 6]),
        ("age:lte:30", &[2, 3]),
        ("age:lt:abc", &[]),
        ("age:gte:n", &[5]),
        ("age:neq:30", &[3, 4, 5, 6]),
        ("age:eq:n/a", &[5]),
        ("joined:gt:2021-01-01", &[2]),
        ("joined:lt:40", &[]),
        ("name:gt:C", &[4, 5, 6]),
        ("name:gt:2", &[]),
    ];
    for (filter, expected) in cases {
        let query = format!("filter={}", encode(filter));
        assert_eq!(
            row_numbers(&server, "People", &query).await,
            *expected,
            "{filter}"
        );
    }
    // Order is typed as before: numbers, then text.
    let ordered = row_numbers(&server, "People", "order=age.asc").await;
    assert_eq!(ordered, [3, 2, 4, 6, 5]);
}

fn report_sheet(server: &Server) {
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Reports",
            vec![
                vec![S("Report ID : W1"), S("say \"hi\""), S("Field 4 ")],
                vec![S("x"), S("a"), N(1.0)],
                vec![S("y"), S("b"), N(2.0)],
                vec![S("x"), S("c"), N(3.0)],
            ],
        )],
    );
}

#[tokio::test]
async fn a_quoted_column_may_hold_colons_in_queries_and_bodies() {
    let server = Server::start().await;
    report_sheet(&server);
    let filter = encode(r#""Report ID : W1":eq:x"#);
    assert_eq!(
        row_numbers(&server, "Reports", &format!("filter={filter}")).await,
        [2, 4]
    );
    let quotes = encode(r#""say ""hi""":gte:b"#);
    assert_eq!(
        row_numbers(&server, "Reports", &format!("filter={quotes}")).await,
        [3, 4]
    );
    let update =
        json!({"type": "filter", "filter": r#""Report ID : W1":eq:y"#, "data": {"Field 4 ": 20}});
    let (status, body) = server.patch(&rows_path("Reports"), update).await;
    assert_eq!((status.as_u16(), body), (200, json!({"updated": 1})));
    assert_eq!(
        read_sheet(&server.file(ID), "Reports")[2][2],
        Data::Float(20.0)
    );

    let (status, body) = server
        .get(&format!(
            "{}?filter={}",
            rows_path("Reports"),
            encode(r#""open:eq:x"#)
        ))
        .await;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("filter: \"\\\"open:eq:x\" is not a filter expression"),
        "{body}"
    );
}

#[tokio::test]
async fn filter_objects_select_rows_in_bodies() {
    let server = Server::start().await;
    report_sheet(&server);
    let update = json!({
        "type": "filter",
        "filter": [
            {"column": "Report ID : W1", "op": "eq", "value": "x"},
            {"column": "Field 4 ", "op": "gt", "value": 1},
        ],
        "data": {"say \"hi\"": "updated"}
    });
    let (status, body) = server.patch(&rows_path("Reports"), update).await;
    assert_eq!((status.as_u16(), body), (200, json!({"updated": 1})));
    let grid = read_sheet(&server.file(ID), "Reports");
    assert_eq!(grid[3][1], Data::String("updated".into()));
    assert_eq!(grid[1][1], Data::String("a".into()));

    let delete = json!({"type": "filter", "filter": {"column": "Report ID : W1", "op": "in", "value": "y,z"}});
    let (status, body) = server.delete(&rows_path("Reports"), delete).await;
    assert_eq!((status.as_u16(), body), (200, json!({"deleted": 1})));
    let grid = read_sheet(&server.file(ID), "Reports");
    assert_eq!(grid.len(), 3, "the header and two rows remain");
    assert_eq!(grid[2][0], Data::String("x".into()));
}

#[tokio::test]
async fn filter_objects_with_problems_are_named_by_key() {
    let server = Server::start().await;
    report_sheet(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let delete = json!({
        "type": "filter",
        "filter": [
            {"column": "Field 4 ", "op": "eq", "value": 1},
            {"column": "Field 4 ", "value": 1, "opp": "eq"},
            {"column": "Field 4 ", "op": "like", "value": null},
            {"column": "nope", "op": "eq", "value": "1"},
        ]
    });
    let (status, body) = server.delete(&rows_path("Reports"), delete).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "filter[1].opp: is not a key of a filter object (column|op|value), \
         filter[1].op: is required, \
         filter[2].value: must be text or a number or a boolean, \
         filter[3]: column \"nope\" is not a column of the sheet"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

// ---------------------------------------------------------------------------
// Errors say what was meant

#[tokio::test]
async fn an_unknown_column_names_the_column_meant() {
    let server = Server::start().await;
    report_sheet(&server);
    let (status, body) = insert(
        &server,
        "Reports",
        json!([{"Field 4": 1, "report id : w1": "z"}]),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data[0].Field 4: is not a column of the sheet; did you mean \"Field 4 \"?, \
         data[0].report id : w1: is not a column of the sheet; did you mean \"Report ID : W1\"?"
    );

    let query = format!(
        "filter={}&order={}&columns={}",
        encode("field 4:eq:1"),
        encode("FIELD 4.asc"),
        encode("Field 4,Nope")
    );
    let (status, body) = server
        .get(&format!("{}?{query}", rows_path("Reports")))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "filter: column \"field 4\" is not a column of the sheet; did you mean \"Field 4 \"?, \
         order: \"FIELD 4\" is not a column of the sheet; did you mean \"Field 4 \"?, \
         columns: \"Field 4\" is not a column of the sheet; did you mean \"Field 4 \"?, \
         columns: \"Nope\" is not a column of the sheet"
    );

    let update = json!({"type": "row", "row": 2, "data": {" field 4 ": 5}});
    let (status, body) = server.patch(&rows_path("Reports"), update).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data. field 4 : is not a column of the sheet; did you mean \"Field 4 \"?"
    );
    let (status, body) = server
        .post(
            &format!("{}?on_conflict=field%204", rows_path("Reports")),
            json!({"data": [{"Field 4 ": 1}]}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "on_conflict: is not a column of the sheet; did you mean \"Field 4 \"?"
    );
}
