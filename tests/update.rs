//! Contract §4.2 (update rows) and §3 (filters), over a real socket.

mod common;

use calamine::Data;
use common::*;
use reqwest::Method;
use serde_json::{Value, json};

async fn update(server: &Server, body: Value) -> (u16, Value) {
    let (status, body) = server.patch(&rows_path("People"), body).await;
    (status.as_u16(), body)
}

#[tokio::test]
async fn update_by_row_changes_only_given_cells() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = read_sheet(&server.file(ID), "People");

    let result = update(
        &server,
        json!({"type": "row", "row": 3, "data": {"age": 26, "city": null}}),
    )
    .await;

    assert_eq!(result, (200, json!({"updated": 1})));
    let mut expected = before.clone();
    expected[2][1] = Data::Float(26.0);
    expected[2][2] = Data::Empty;
    assert_grid_eq(&read_sheet(&server.file(ID), "People"), &expected);
}

#[tokio::test]
async fn update_by_filter_changes_every_match() {
    let server = Server::start().await;
    people_workbook(&server);
    let result = update(
        &server,
        json!({"type": "filter", "filter": "active:is:true", "data": {"city": "Oslo"}}),
    )
    .await;
    assert_eq!(result, (200, json!({"updated": 2})));
    let grid = read_sheet(&server.file(ID), "People");
    let cities: Vec<_> = grid[1..].iter().map(|row| row[2].clone()).collect();
    assert_eq!(
        cities,
        [
            Data::String("Oslo".into()),
            Data::String("Paris".into()),
            Data::String("Oslo".into())
        ]
    );
}

#[tokio::test]
async fn update_filter_array_requires_all() {
    let server = Server::start().await;
    people_workbook(&server);
    let body = json!({"type": "filter", "filter": ["age:gte:25", "joined:lt:2021-01-01"], "data": {"name": "match"}});
    assert_eq!(update(&server, body).await, (200, json!({"updated": 2})));
    let (_, read) = server
        .get(&format!("{}?filter=name:eq:match", rows_path("People")))
        .await;
    let rows: Vec<_> = read["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["_row"].clone())
        .collect();
    assert_eq!(rows, [json!(3), json!(4)]);
}

#[tokio::test]
async fn update_counts_matches_even_when_values_are_unchanged() {
    let server = Server::start().await;
    people_workbook(&server);
    let body = json!({"type": "filter", "filter": "name:eq:Alice", "data": {"age": 30}});
    assert_eq!(update(&server, body).await, (200, json!({"updated": 1})));
}

#[tokio::test]
async fn update_without_match_does_not_rewrite() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let body = json!({"type": "filter", "filter": "name:eq:Nobody", "data": {"age": 1}});
    assert_eq!(update(&server, body).await, (200, json!({"updated": 0})));
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

#[tokio::test]
async fn update_row_numbers_outside_the_data_rows() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = update(
        &server,
        json!({"type": "row", "row": 1, "data": {"age": 1}}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "row: row 1 is the header row or above it; data starts at row 2"
    );
    let (status, body) = update(
        &server,
        json!({"type": "row", "row": 5, "data": {"age": 1}}),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"], "Not Found");
    let (status, _) = update(
        &server,
        json!({"type": "row", "row": 4, "data": {"age": 1}}),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn update_validation_errors_name_every_problem() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let cases = [
        (json!({}), "type: is required, data: is required"),
        (
            json!({"type": "all", "data": {"age": 1}}),
            "type: must be one of filter or row or rows",
        ),
        (
            json!({"type": "filter", "fliter": "age:eq:1", "data": {"age": 1}}),
            "fliter: is not a known field, filter: is required when type is filter",
        ),
        (
            json!({"type": "row", "row": 2, "filter": "age:eq:1", "data": {"age": 1}}),
            "filter: is not allowed when type is row",
        ),
        (
            json!({"type": "filter", "filter": "age:eq:1", "row": 2, "data": {"age": 1}}),
            "row: is not allowed when type is filter",
        ),
        (
            json!({"type": "row", "row": "2", "data": {"age": 1}}),
            "row: must be a row number (an integer of 1 or more)",
        ),
        (
            json!({"type": "row", "row": 2, "data": {}}),
            "data: must set at least one column",
        ),
        (
            json!({"type": "row", "row": 2, "data": [1]}),
            "data: must be an object of column names to values",
        ),
        (
            json!({"type": "row", "row": 2, "data": {"age": [1]}}),
            "data.age: must not be an object or array",
        ),
        (
            json!({"type": "row", "row": 2, "data": {"joined": "2023/02/29"}}),
            "data.joined: is not a real date",
        ),
        (
            json!({"type": "row", "row": 2, "data": {"agee": 1}}),
            "data.agee: is not a column of the sheet",
        ),
        (
            json!({"type": "filter", "filter": "age:EQ:1", "data": {"age": 1}}),
            "filter: unknown operator \"EQ\" (use eq|neq|gt|gte|lt|lte|like|ilike|in|is)",
        ),
        (
            json!({"type": "filter", "filter": "age", "data": {"age": 1}}),
            "filter: \"age\" is not a filter expression (column:operator:value)",
        ),
        (
            json!({"type": "filter", "filter": "agee:eq:1", "data": {"nme": 1}}),
            "data.nme: is not a column of the sheet, filter: column \"agee\" is not a column of the sheet",
        ),
        (
            json!({"type": "filter", "filter": ["age:eq:1", "x:is:maybe"], "data": {"age": 1}}),
            "filter[1]: operator is takes null|notnull|true|false (not \"maybe\")",
        ),
        (
            json!({"type": "filter", "filter": [], "data": {"age": 1}}),
            "filter: must not be an empty array",
        ),
        (
            json!({"type": "filter", "filter": 5, "data": {"age": 1}}),
            "filter: must be a filter expression or an array of them",
        ),
    ];
    for (body, error) in cases {
        let (status, answer) = update(&server, body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(answer, json!({"success": false, "error": error}), "{body}");
    }
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        before,
        "nothing written"
    );
}

/// One case per operator and typing rule of contract §3: the filter, and the
/// rows (by number) of the People workbook it must match.
#[tokio::test]
async fn filters_match_as_the_contract_says() {
    let server = Server::start().await;
    people_workbook(&server);
    let cases: &[(&str, &[u64])] = &[
        ("age:eq:30", &[2]),
        ("age:eq:30.0", &[2]),
        ("age:neq:30", &[3, 4]),
        ("age:gt:25", &[2, 4]),
        ("age:gte:25", &[2, 3, 4]),
        ("age:lt:30", &[3]),
        ("age:lte:30", &[2, 3]),
        ("name:like:*o*", &[3, 4]),
        ("name:like:a*", &[]),
        ("name:ilike:a*", &[2]),
        ("name:in:Bob,Carol", &[3, 4]),
        ("city:is:null", &[4]),
        ("city:is:notnull", &[2, 3]),
        ("city:eq:", &[4]),
        ("city:neq:Paris", &[2, 4]),
        ("city:gt:A", &[2, 3]),
        ("active:is:true", &[2, 4]),
        ("active:is:false", &[3]),
        ("active:eq:TRUE", &[2, 4]),
        ("joined:eq:2021/03/04", &[2]),
        ("joined:gt:2020-12-31", &[2]),
        ("joined:gte:2020/12/31 00:00", &[2, 3]),
        ("joined:lt:2020/01/01", &[4]),
        ("name:eq:alice", &[]),
        ("name:lt:Bob", &[2]),
    ];
    for (filter, rows) in cases {
        let (status, read) = server
            .get(&format!(
                "{}?filter={}",
                rows_path("People"),
                filter.replace(' ', "%20")
            ))
            .await;
        assert_eq!(status, 200, "{filter}: {read}");
        let got: Vec<u64> = read["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["_row"].as_u64().unwrap())
            .collect();
        assert_eq!(&got, rows, "filter {filter}");
        assert_eq!(read["total"], rows.len(), "filter {filter}");
    }
}

#[tokio::test]
async fn filter_values_may_contain_colons() {
    let server = Server::start().await;
    people_workbook(&server);
    let body = json!({"type": "row", "row": 2, "data": {"city": "12:30"}});
    assert_eq!(update(&server, body).await.0, 200);
    let body = json!({"type": "filter", "filter": "city:eq:12:30", "data": {"name": "colon"}});
    assert_eq!(update(&server, body).await, (200, json!({"updated": 1})));
}

#[tokio::test]
async fn update_a_formula_cell_replaces_the_formula_and_keeps_others() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, _) = server
        .patch(
            &rows_path("Other"),
            json!({"type": "row", "row": 2, "data": {"v": 9}}),
        )
        .await;
    assert_eq!(status, 200);
    let grid = read_sheet(&server.file(ID), "Other");
    assert_eq!(grid[1][1], Data::Float(9.0));
    assert_eq!(grid[2][1], Data::Float(3.0), "formula result kept");
    let mut book: calamine::Xlsx<_> = calamine::open_workbook(server.file(ID)).unwrap();
    let formulas = calamine::Reader::worksheet_formula(&mut book, "Other").unwrap();
    assert_eq!(formulas.get_value((2, 1)).map(String::as_str), Some("1+2"));
}

/// §10.2: `type: rows` sets each row's own values, all or nothing.
#[tokio::test]
async fn rows_updated_each_with_its_own_values() {
    let server = Server::start().await;
    people_workbook(&server);
    let body = json!({"type": "rows", "data": [
        {"_row": 4, "age": 42, "city": "Oslo"},
        {"_row": 2, "age": 31},
    ]});
    let (status, answer) = server.patch(&rows_path("People"), body).await;
    assert_eq!((status.as_u16(), answer), (200, json!({"updated": 2})));
    let grid = read_sheet(&server.file(ID), "People");
    assert_eq!(grid[1][..3], [s("Alice"), Data::Float(31.0), s("Berlin")]);
    assert_eq!(grid[2][..3], [s("Bob"), Data::Float(25.0), s("Paris")]);
    assert_eq!(grid[3][..3], [s("Carol"), Data::Float(42.0), s("Oslo")]);
}

#[tokio::test]
async fn a_rows_update_with_any_bad_row_changes_nothing() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let patch = |data: serde_json::Value| json!({"type": "rows", "data": data});
    for (body, status, expected) in [
        (
            patch(json!([{"_row": 2, "age": 1}, {"_row": 9, "age": 2}])),
            404,
            json!({"success": false, "error": "Not Found",
                "detail": "row 9 is below the last data row of sheet \"People\""}),
        ),
        (
            patch(json!([{"_row": 1, "age": 1}, {"_row": 3, "colour": "red"}])),
            400,
            json!({"success": false, "error":
                "data[0]._row: row 1 is the header row or above it; data starts at row 2, data[1].colour: is not a column of the sheet"}),
        ),
        (
            patch(json!([{"_row": 2, "age": 1}, {"_row": 2, "age": 2}, {"age": 3}, {"_row": 3}])),
            400,
            json!({"success": false, "error":
                "data[1]._row: row 2 is given twice (also in data[0]), data[2]._row: is required, data[3]: must set at least one column"}),
        ),
        (
            // The request's own problems and those only the sheet sees, all.
            patch(
                json!([{"_row": 1, "age": 1}, {"_row": 3, "nope": 2}, {"_row": 4, "age": "2023/02/30", "_x": [1]}]),
            ),
            400,
            json!({"success": false, "error":
                "data[2]._x: must not be an object or array, data[2].age: is not a real date, \
                 data[0]._row: row 1 is the header row or above it; data starts at row 2, \
                 data[1].nope: is not a column of the sheet"}),
        ),
        (
            json!({"type": "rows", "row": 2, "data": {"age": 1}}),
            400,
            json!({"success": false, "error":
                "row: is not allowed when type is rows, data: must be a non-empty array of rows when type is rows: objects with _row and the values to set"}),
        ),
    ] {
        let (got, answer) = server.patch(&rows_path("People"), body.clone()).await;
        assert_eq!((got.as_u16(), answer), (status, expected), "{body}");
    }
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

/// A sheet long enough (60k rows) that a filter looking for a number is
/// answered through an index of the column after the first: whatever the
/// edits between, the rows found are those a look at every row finds.
#[tokio::test]
async fn a_long_sheet_finds_rows_by_number_through_every_kind_of_edit() {
    let server = Server::start().await;
    let data = (1..=60_000u32).map(|n| match n {
        // Text that reads as the number 7: `eq` matches it too.
        40_000 => vec![Spec::S("7"), Spec::N(0.0)],
        // Square roots, which compress badly: the file stays larger than
        // the buffers a write goes out in once rows that moved no longer
        // say their numbers.
        n => vec![Spec::N(f64::from(n)), Spec::N(f64::from(n).sqrt())],
    });
    let header = vec![Spec::S("id"), Spec::S("v")];
    make_workbook(
        &server.file(ID),
        &[("Long", std::iter::once(header).chain(data).collect())],
    );
    let rows = |query: &'static str| row_numbers(&server, "Long", query);

    // The first reads every row, the second builds the index: the same rows.
    assert_eq!(rows("filter=id:eq:7").await, [8, 40_001]);
    assert_eq!(rows("filter=id:eq:7").await, [8, 40_001]);
    // The text "7" is not the text "7.0"; the number 7 is the number 7.0.
    assert_eq!(rows("filter=id:eq:7.0").await, [8]);
    assert_eq!(rows("filter=id:eq:60001").await, Vec::<u64>::new());

    // Another column changed: the index stays, and still finds the row.
    let write = |method, body| write_long(&server, method, body);
    let set = |filter: &str, data: Value| json!({"type": "filter", "filter": filter, "data": data});
    assert_eq!(
        write(Method::PATCH, set("id:eq:5", json!({"v": 1}))).await,
        200
    );
    assert_eq!(rows("filter=id:eq:5").await, [6]);

    // The column itself changed.
    let to_123456 = set("id:eq:5", json!({"id": 123_456}));
    assert_eq!(write(Method::PATCH, to_123456).await, 200);
    assert_eq!(rows("filter=id:eq:5").await, Vec::<u64>::new());
    assert_eq!(rows("filter=id:eq:123456").await, [6]);
    assert_eq!(rows("filter=id:eq:123456").await, [6]);

    // Rows moved up by a delete.
    let delete = |filter: &str| json!({"type": "filter", "filter": filter});
    assert_eq!(write(Method::DELETE, delete("id:eq:2")).await, 200);
    assert_eq!(rows("filter=id:eq:123456").await, [5]);
    assert_eq!(rows("filter=id:eq:60000").await, [60_000]);
    assert_eq!(rows("filter=id:eq:60000").await, [60_000]);
    // Three more at once, found without the index: the index follows.
    assert_eq!(write(Method::DELETE, delete("id:in:10,20,30")).await, 200);
    assert_eq!(rows("filter=id:eq:60000").await, [59_997]);
    assert_eq!(rows("filter=id:eq:25").await, [23]);
    assert_eq!(rows("filter=id:eq:20").await, Vec::<u64>::new());
    assert_eq!(rows("filter=id:eq:7").await, [7, 39_997]);

    // A row appended.
    let appended = json!({"data": [{"id": 777_777}]});
    assert_eq!(write(Method::POST, appended).await, 201);
    assert_eq!(rows("filter=id:eq:777777").await, [59_998]);
    assert_eq!(rows("filter=id:eq:777777").await, [59_998]);

    // And what the updates found is what the file holds.
    let grid = read_sheet(&server.file(ID), "Long");
    assert_eq!(grid[4], [Data::Float(123_456.0), Data::Float(1.0)]);
    assert_eq!(grid[59_997][0], Data::Float(777_777.0));
}

/// Sends a write to sheet Long; gives its status. The file it leaves,
/// larger than the buffers a write goes out in, is downloaded with the
/// hash of its bytes as its tag (§11.5).
async fn write_long(server: &Server, method: Method, body: Value) -> u16 {
    let (status, _) = server.send(method, &rows_path("Long"), Some(body)).await;
    let download = server.download(ID).await;
    let tag = download.headers()["etag"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    let bytes = download.bytes().await.expect("the file");
    assert!(bytes.len() > 512 * 1024, "{} bytes", bytes.len());
    assert_eq!(tag, etag_of(&bytes));
    status.as_u16()
}

/// Rows a delete moves lean on the row before in the file (they leave out
/// their numbers, which every reader counts again), unless the operator
/// asks for every row to say its number; either way the sheet reads back
/// as the deletes left it.
#[tokio::test]
async fn rows_moved_twice_say_their_numbers_only_when_the_operator_asks() {
    for every_row in [false, true] {
        let server = Server::start_with(|c| c.number_every_row = every_row).await;
        let data = (1..=50u32).map(|n| vec![Spec::N(f64::from(n)), Spec::S("x")]);
        let header = vec![Spec::S("id"), Spec::S("v")];
        make_workbook(
            &server.file(ID),
            &[("Long", std::iter::once(header).chain(data).collect())],
        );
        // The first write is a whole rewrite; the second moves rows kept
        // from it.
        for row in [10, 20] {
            let body = json!({"type": "row", "row": row});
            let (status, _) = server.delete(&rows_path("Long"), body).await;
            assert_eq!(status, 200);
        }
        let package = std::fs::read(server.file(ID)).expect("the file");
        let xml = part(&package, "xl/worksheets/sheet1.xml").expect("the sheet");
        let xml = String::from_utf8(xml).expect("UTF-8");
        let rows = xml.matches("<row").count();
        let numbered = xml.matches("<row r=\"").count();
        assert_eq!(rows, 49, "{xml}");
        match every_row {
            true => assert_eq!(numbered, rows, "{xml}"),
            false => assert!(numbered < rows / 2, "{xml}"),
        }
        // Ids 9 (row 10) and 20 (row 21, row 20 once row 10 was gone).
        let ids: Vec<Data> = read_sheet(&server.file(ID), "Long")[1..]
            .iter()
            .map(|row| row[0].clone())
            .collect();
        let expected: Vec<Data> = (1..=50)
            .filter(|&n| n != 9 && n != 20)
            .map(|n| Data::Float(f64::from(n)))
            .collect();
        assert_eq!(ids, expected);
    }
}
