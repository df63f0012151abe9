//! Contract §4.1 (insert rows) and §2 (values), checked over a real socket
//! and on disk with calamine.

mod common;

use calamine::Data;
use common::*;
use serde_json::json;

#[tokio::test]
async fn insert_appends_below_last_row_and_keeps_other_sheets() {
    let server = Server::start().await;
    people_workbook(&server);
    let other_before = read_sheet(&server.file(ID), "Other");
    let people_before = read_sheet(&server.file(ID), "People");

    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "Dan", "age": 52}, {"city": "Rome"}]}),
        )
        .await;

    assert_eq!(status, 201, "{body}");
    assert_eq!(body, json!({"inserted": 2}));
    let people = read_sheet(&server.file(ID), "People");
    assert_eq!(people.len(), 6);
    assert_grid_eq(&people[..4], &people_before);
    assert_eq!(people[4], vec![s("Dan"), Data::Float(52.0)]);
    assert_eq!(people[5], vec![Data::Empty, Data::Empty, s("Rome")]);
    assert_grid_eq(&read_sheet(&server.file(ID), "Other"), &other_before);
    assert_eq!(sheet_names(&server.file(ID)), ["People", "Other"]);
}

/// After an insert the service saves the next one by writing only the new
/// rows (the rows before were formatted already); any other write between
/// them rewrites the whole sheet. Every version on disk must hold it all.
#[tokio::test]
async fn inserts_between_other_writes_all_reach_the_file() {
    let server = Server::start().await;
    people_workbook(&server);
    let path = rows_path("People");
    let name = |n: &str| json!({"data": [{"name": n}]});

    assert_eq!(server.post(&path, name("Dan")).await.0, 201);
    assert_eq!(server.post(&path, name("Eve")).await.0, 201);
    let update = json!({"type": "row", "row": 2, "data": {"name": "Alicia"}});
    assert_eq!(server.patch(&path, update).await.0, 200);
    assert_eq!(server.post(&path, name("Fay")).await.0, 201);
    assert_eq!(server.post(&path, name("Gus")).await.0, 201);

    let names: Vec<Data> = read_sheet(&server.file(ID), "People")
        .into_iter()
        .map(|row| row[0].clone())
        .collect();
    let expected = ["name", "Alicia", "Bob", "Carol", "Dan", "Eve", "Fay", "Gus"];
    assert_eq!(names, expected.map(s));
    assert_eq!(
        read_sheet(&server.file(ID), "People")[1][1],
        Data::Float(30.0)
    );
}

/// A row below the data with a height of its own (as a spreadsheet app
/// leaves when someone resizes an empty row): inserts land above it, and
/// each of them must reach the file.
#[tokio::test]
async fn inserts_above_a_resized_empty_row_all_reach_the_file() {
    let server = Server::start().await;
    workbook_with(&server.file(ID), |sheet| {
        sheet.set_row_height(20, 30).unwrap();
    });

    for name in ["Bo", "Cy", "Di"] {
        let body = json!({"data": [{"name": name}]});
        assert_eq!(server.post(&rows_path("People"), body).await.0, 201);
    }

    let names: Vec<Data> = read_sheet(&server.file(ID), "People")
        .into_iter()
        .take(5)
        .map(|row| row[0].clone())
        .collect();
    assert_eq!(names, ["name", "a", "Bo", "Cy", "Di"].map(s));
}

#[tokio::test]
async fn insert_stores_typed_values() {
    let server = Server::start().await;
    people_workbook(&server);
    let row = json!({"name": "=SUM(A1:A2)", "age": 2.5, "city": "+49 30", "joined": "2024/02/29", "active": false});
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [row]}))
        .await;
    assert_eq!(status, 201, "{body}");

    let people = read_sheet(&server.file(ID), "People");
    let new = &people[4];
    assert_eq!(new[0], s("=SUM(A1:A2)"), "a leading = stays text");
    assert_eq!(new[1], Data::Float(2.5));
    assert_eq!(new[2], s("+49 30"));
    match &new[3] {
        Data::DateTime(dt) => assert_eq!(dt.as_f64(), 45351.0),
        other => panic!("joined should be a date cell, is {other:?}"),
    }
    assert_eq!(new[4], Data::Bool(false));

    let (_, read) = server
        .get(&format!("{}?filter=age:eq:2.5", rows_path("People")))
        .await;
    assert_eq!(
        read["data"][0],
        json!({"_row": 5, "name": "=SUM(A1:A2)", "age": 2.5, "city": "+49 30", "joined": "2024/02/29", "active": false})
    );
}

#[tokio::test]
async fn insert_stores_date_times_with_seconds() {
    let server = Server::start().await;
    people_workbook(&server);
    let data = json!({"data": [{"name": "a", "joined": "2024/01/15 13:45"}, {"name": "b", "joined": "2024/01/15 13:45:30"}]});
    let (status, _) = server.post(&rows_path("People"), data).await;
    assert_eq!(status, 201);
    let (_, read) = server
        .get(&format!("{}?offset=3", rows_path("People")))
        .await;
    assert_eq!(read["data"][0]["joined"], "2024/01/15 13:45:00");
    assert_eq!(read["data"][1]["joined"], "2024/01/15 13:45:30");
}

#[tokio::test]
async fn insert_empty_string_and_null_leave_cells_empty() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, _) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "x", "city": "", "age": null}]}),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(read_sheet(&server.file(ID), "People")[4], vec![s("x")]);
}

#[tokio::test]
async fn insert_rejects_every_bad_row_and_writes_nothing() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let body = json!({"data": [
        {"name": "ok"},
        {"nme": "typo"},
        {"age": {"nested": 1}},
        {"joined": "2023/02/30"},
        {"age": 9_007_199_254_740_993_u64},
        {"name": "x".repeat(32_768)},
        {"name": null},
        "not an object",
        {"joined": "2024/01/15 25:00"}
    ]});

    let (status, body) = server.post(&rows_path("People"), body).await;

    assert_eq!(status, 400);
    assert_eq!(body["success"], false);
    assert_eq!(
        body["error"],
        "data[2].age: must not be an object or array, \
         data[3].joined: is not a real date, \
         data[4].age: is an integer beyond 2^53 (a cell cannot hold it exactly), \
         data[5].name: is longer than 32767 UTF-16 code units (the xlsx limit of a cell), \
         data[6]: must set at least one non-null value, \
         data[7]: must be an object, \
         data[8].joined: is not a real time of day, \
         data[1].nme: is not a column of the sheet"
    );
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        before,
        "nothing written"
    );

    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"nme": "typo"}, {"name": "ok", "agee": 1}]}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data[0].nme: is not a column of the sheet, data[1].agee: is not a column of the sheet"
    );
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        before,
        "nothing written"
    );
}

#[tokio::test]
async fn insert_of_no_rows_does_not_rewrite() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::metadata(server.file(ID)).unwrap();
    let (status, body) = server.post(&rows_path("People"), json!({"data": []})).await;
    assert_eq!((status.as_u16(), body), (201, json!({"inserted": 0})));
    let after = std::fs::metadata(server.file(ID)).unwrap();
    assert_eq!(before.modified().unwrap(), after.modified().unwrap());
    use std::os::unix::fs::MetadataExt;
    assert_eq!(before.ino(), after.ino(), "the file was not replaced");
}

#[tokio::test]
async fn insert_into_blank_sheet_makes_header_from_keys() {
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[("Data", vec![vec![Spec::S("x")]]), ("Blank", vec![])],
    );
    let body = json!({"data": [{"b": 1, "a": "one"}, {"c": true, "a": "two"}]});

    let (status, _) = server.post(&rows_path("Blank"), body).await;

    assert_eq!(status, 201);
    let grid = read_sheet(&server.file(ID), "Blank");
    assert_grid_eq(
        &grid,
        &[
            vec![s("b"), s("a"), s("c")],
            vec![Data::Float(1.0), s("one")],
            vec![Data::Empty, s("two"), Data::Bool(true)],
        ],
    );
}

#[tokio::test]
async fn insert_follows_a_header_that_is_not_in_row_one() {
    let server = Server::start().await;
    server.add_fixture("openpyxl/offset_header.xlsx", ID);
    let (status, _) = server
        .post(
            &rows_path("Data"),
            json!({"data": [{"id": 4, "item": "fig", "qty": 1}]}),
        )
        .await;
    assert_eq!(status, 201);
    let grid = read_sheet(&server.file(ID), "Data");
    assert_eq!(grid.len(), 7, "appended as row 7");
    assert_eq!(
        grid[6],
        vec![Data::Empty, Data::Float(4.0), s("fig"), Data::Float(1.0)]
    );
    let (_, read) = server
        .get(&format!("{}?filter=item:eq:fig", rows_path("Data")))
        .await;
    // Column F holds a note below the header without a name: it is read
    // under its letter.
    assert_eq!(
        read["data"],
        json!([{"_row": 7, "id": 4, "item": "fig", "qty": 1, "_F": null}])
    );
}

#[tokio::test]
async fn insert_addresses_numeric_headers_and_repeated_names_by_letter() {
    let server = Server::start().await;
    server.add_fixture("openpyxl/header_quirks.xlsx", ID);
    let (status, body) = server
        .post(&rows_path("Q"), json!({"data": [{"id": 3, "2024": 300}]}))
        .await;
    assert_eq!(status, 201, "{body}");
    // `name` is the first column of that name; the second is `_D`, the
    // unnamed one `_C` (§11.1).
    let (status, body) = server
        .post(
            &rows_path("Q"),
            json!({"data": [{"name": "z", "_D": "second", "_c": "third"}]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let grid = read_sheet(&server.file(ID), "Q");
    assert_eq!(grid[4][1..4], [s("z"), s("third"), s("second")]);
}

#[tokio::test]
async fn sheet_names_match_exactly_then_ignoring_case() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, _) = server
        .post(&rows_path("people"), json!({"data": [{"name": "lower"}]}))
        .await;
    assert_eq!(status, 201);
    let (status, body) = server
        .post(&rows_path("Nobody"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"], "Not Found");
}

#[tokio::test]
async fn sheet_names_are_percent_decoded() {
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[("My Sheet é", vec![vec![Spec::S("k")]])],
    );
    let (status, body) = server
        .post(
            &rows_path("My%20Sheet%20%C3%A9"),
            json!({"data": [{"k": "v"}]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(read_sheet(&server.file(ID), "My Sheet é")[1], vec![s("v")]);
}

#[tokio::test]
async fn insert_keeps_libreoffice_workbooks_readable() {
    let server = Server::start().await;
    server.add_fixture("libreoffice/people.xlsx", ID);
    let totals_before = read_sheet(&server.file(ID), "Totals");
    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "Eve", "age": 33, "joined": "2023/05/06"}]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_grid_eq(&read_sheet(&server.file(ID), "Totals"), &totals_before);
    assert_eq!(
        sheet_names(&server.file(ID)),
        ["People", "Totals", "Hidden"]
    );
    let (_, read) = server
        .get(&format!("{}?filter=name:eq:Eve", rows_path("People")))
        .await;
    assert_eq!(read["data"][0]["joined"], "2023/05/06");
    assert_eq!(read["data"][0]["_row"], 6);
}

#[tokio::test]
async fn insert_past_the_last_row_of_the_format_is_rejected() {
    let server = Server::start().await;
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("S").unwrap();
    sheet.write_string(0, 0, "k").unwrap();
    sheet.write_string(1_048_575, 0, "last").unwrap();
    book.save(server.file(ID)).unwrap();
    let (status, body) = server
        .post(&rows_path("S"), json!({"data": [{"k": "x"}]}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data: 1 rows would pass the sheet's last row (1048576)"
    );
}

/// §10.2 upsert: `on_conflict=<column>` updates the row holding the value
/// (only the keys given) and inserts the rest, in one write.
#[tokio::test]
async fn on_conflict_updates_matching_rows_and_inserts_the_rest() {
    let server = Server::start().await;
    people_workbook(&server);
    let path = format!("{}?on_conflict=name", rows_path("People"));
    let body = json!({"data": [
        {"name": "Bob", "age": 26},
        {"name": "Dora", "age": 50, "city": "Rome"},
        {"name": "Dora", "city": "Milan"},
    ]});
    let (status, answer) = server.post(&path, body).await;
    assert_eq!(
        (status.as_u16(), answer),
        (200, json!({"inserted": 1, "updated": 1}))
    );
    let grid = read_sheet(&server.file(ID), "People");
    assert_eq!(grid.len(), 5, "one row added: {grid:?}");
    // Bob's age set, his city kept.
    assert_eq!(grid[2][..3], [s("Bob"), Data::Float(26.0), s("Paris")]);
    // The second Dora row added to the first.
    assert_eq!(grid[4][..3], [s("Dora"), Data::Float(50.0), s("Milan")]);
    // Numbers match by value: 26.0 is 26.
    let path = format!("{}?on_conflict=age", rows_path("People"));
    let (status, answer) = server
        .post(&path, json!({"data": [{"age": 26.0, "city": "Lyon"}]}))
        .await;
    assert_eq!(
        (status.as_u16(), answer),
        (200, json!({"inserted": 0, "updated": 1}))
    );
    assert_eq!(read_sheet(&server.file(ID), "People")[2][2], s("Lyon"));
}

#[tokio::test]
async fn on_conflict_refuses_a_value_held_by_two_rows_and_an_unknown_column() {
    let server = Server::start().await;
    people_workbook(&server);
    // Two rows with active = true.
    let before = std::fs::read(server.file(ID)).unwrap();
    let path = format!("{}?on_conflict=active", rows_path("People"));
    let body = json!({"data": [{"name": "New", "active": false}, {"name": "Eve", "active": true}]});
    let (status, answer) = server.post(&path, body).await;
    assert_eq!(status.as_u16(), 409, "{answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.contains("data[1].active is in rows 2 and 4"),
        "{detail}"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);

    let path = format!("{}?on_conflict=colour", rows_path("People"));
    let (status, answer) = server.post(&path, json!({"data": [{"name": "x"}]})).await;
    assert_eq!(
        (status.as_u16(), answer),
        (
            400,
            json!({"success": false, "error": "on_conflict: is not a column of the sheet"})
        )
    );
    let path = format!(
        "{}?on_conflict=name&on_conflict=age&x=1",
        rows_path("People")
    );
    let (status, answer) = server.post(&path, json!({"data": [{"name": "x"}]})).await;
    assert_eq!(
        (status.as_u16(), answer),
        (
            400,
            json!({"success": false, "error": "on_conflict: must be given at most once, x: is not a known query parameter"})
        )
    );
    // Named with the id's problem and those only the sheet sees.
    let path = "/v1/data/not-an-id/People?on_conflict=a&on_conflict=b";
    let (status, answer) = server.post(path, json!({"data": [{"": 1}]})).await;
    assert_eq!(status.as_u16(), 400);
    assert_eq!(
        answer["error"],
        "spreadsheet_id: must be a UUID in its hyphenated 36-character form, \
         on_conflict: must be given at most once, data[0]: a column name must not be empty"
    );
    let path = format!("{}?on_conflict=a&on_conflict=b", rows_path("People"));
    let (status, answer) = server.post(&path, json!({"data": [{"colour": 1}]})).await;
    assert_eq!(status.as_u16(), 400);
    assert_eq!(
        answer["error"],
        "on_conflict: must be given at most once, data[0].colour: is not a column of the sheet"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

/// `_row` is where each row read carries its number (§1): no write sets
/// it, so a blank sheet never gets a `_row` column from an insert; a
/// file's own column of that name cannot be addressed, as an empty header
/// cell cannot.
#[tokio::test]
async fn no_column_takes_the_place_of_the_row_number() {
    use Spec::*;
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[
            ("Blank", vec![]),
            (
                "Own",
                vec![vec![S("_row"), S("x")], vec![S("mine"), N(1.0)]],
            ),
        ],
    );
    let before = std::fs::read(server.file(ID)).unwrap();
    let (status, body) = server
        .post(&rows_path("Blank"), json!({"data": [{"_row": 7, "x": 2}]}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"],
        "data[0]._row: is the row number: no write sets it"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);

    let (status, body) = server.get(&rows_path("Own")).await;
    assert_eq!(status, 200);
    // A header cell named `_row` names no column: it is read by its letter.
    assert_eq!(body["data"], json!([{"_row": 2, "_A": "mine", "x": 1}]));
    let csv = server
        .text(&format!("{}?format=csv", rows_path("Own")))
        .await;
    assert_eq!(
        csv, "_A,x\r\nmine,1\r\n",
        "the file's _row column is read by its letter"
    );
    let (status, body) = server.get(&format!("/v1/data/{ID}")).await;
    assert_eq!(status, 200);
    assert_eq!(body["sheets"][1]["columns"], json!(["_A", "x"]));
}
