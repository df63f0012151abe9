//! Contract §4.5 (whole spreadsheets: sheet listing, upload, download,
//! removal), the id rules of §1/§8 and the 404 shape of §5, plus reading the
//! third-party fixtures of `fixtures/openpyxl` and `fixtures/libreoffice`
//! (see `fixtures/README.md`) through GET rows.

mod common;

use calamine::Data;
use common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
/// A well-formed id that no test stores a file under.
const UNKNOWN: &str = "0b1e3a5c-0000-4000-8000-0000000000ff";
/// A second id, for a second workbook in one data directory.
const ID2: &str = "0b1e3a5c-0000-4000-8000-00000000000b";
/// Both producers of the third-party fixtures.
const PRODUCERS: [&str; 2] = ["openpyxl", "libreoffice"];

/// Uploads `bytes` with the given content type (none when `None`).
async fn upload(
    server: &Server,
    bytes: Vec<u8>,
    content_type: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = server
        .client
        .post(format!("{}/v1/spreadsheets", server.base))
        .body(bytes);
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    json_of(request.send().await.expect("request sent")).await
}

/// Whether `id` is a UUID in lower-case hyphenated form.
fn is_lower_hyphenated_uuid(id: &str) -> bool {
    id.len() == 36
        && id.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_digit() || ('a'..='f').contains(&c),
        })
}

/// Asserts the contract's 404: `{"success": false, "error": "Not Found"}`,
/// optionally with a `detail` string, as JSON.
fn assert_not_found(what: &str, status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {body}");
    let object = body
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object: {body}"));
    assert_eq!(object.get("success"), Some(&json!(false)), "{what}: {body}");
    assert_eq!(
        object.get("error"),
        Some(&json!("Not Found")),
        "{what}: {body}"
    );
    for (key, value) in object {
        let allowed =
            matches!(key.as_str(), "success" | "error") || (key == "detail" && value.is_string());
        assert!(allowed, "{what}: unexpected field {key:?} in {body}");
    }
}

/// Rows of a sheet read through the API, asserting 200.
async fn read_rows(server: &Server, id: &str, sheet: &str) -> Value {
    let (status, body) = server.get(&format!("/v1/data/{id}/{sheet}")).await;
    assert_eq!(status, StatusCode::OK, "{sheet}: {body}");
    body
}

/// The `_row` numbers a filter matches, asserting 200.
async fn matching_rows(server: &Server, sheet: &str, filter: &str) -> Vec<u64> {
    row_numbers(server, sheet, &format!("filter={filter}")).await
}

// ---------------------------------------------------------------------------
// GET /v1/data/{id}: the sheets
// ---------------------------------------------------------------------------

#[tokio::test]
async fn sheet_listing_gives_each_sheet_with_columns_and_data_row_count() {
    let server = Server::start().await;
    people_workbook(&server);

    let (status, body) = server.get(&format!("/v1/data/{ID}")).await;

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"sheets": [
            {"name": "People", "header_row": 1, "columns": ["name", "age", "city", "joined", "active"], "rows": 3},
            {"name": "Other", "header_row": 1, "columns": ["k", "v"], "rows": 2}
        ], "tables": []})
    );
}

#[tokio::test]
async fn sheet_listing_includes_hidden_sheets_in_workbook_order() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/many_sheets.xlsx"), ID);

        let (status, body) = server.get(&format!("/v1/data/{ID}")).await;

        assert_eq!(status, StatusCode::OK, "{producer}: {body}");
        assert_eq!(
            body,
            json!({"sheets": [
                {"name": "Alpha", "header_row": 1, "columns": ["k", "v"], "rows": 3},
                {"name": "Beta", "header_row": 1, "columns": ["k", "v"], "rows": 3},
                {"name": "Gamma", "header_row": 1, "columns": ["k", "v"], "rows": 3}
            ], "tables": []}),
            "{producer}"
        );
    }
}

#[tokio::test]
async fn sheet_listing_of_people_fixture() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/people.xlsx"), ID);

        let (status, body) = server.get(&format!("/v1/data/{ID}")).await;

        assert_eq!(status, StatusCode::OK, "{producer}: {body}");
        assert_eq!(
            body,
            json!({"sheets": [
                {"name": "People", "header_row": 1, "columns": ["name", "age", "city", "joined", "active", "score"], "rows": 4},
                {"name": "Totals", "header_row": 1, "columns": ["label", "value"], "rows": 3},
                {"name": "Hidden", "header_row": 1, "columns": ["secret"], "rows": 1}
            ], "tables": []}),
            "{producer}"
        );
    }
}

#[tokio::test]
async fn sheet_listing_counts_rows_below_an_offset_header_and_a_blank_sheet_as_empty() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/offset_header.xlsx"), ID);
        let (status, body) = server.get(&format!("/v1/data/{ID}")).await;
        assert_eq!(status, StatusCode::OK, "{producer}: {body}");
        assert_eq!(
            body,
            json!({"sheets": [{"name": "Data", "header_row": 3, "columns": ["id", "item", "qty", "_F"], "rows": 3}], "tables": []}),
            "{producer}"
        );

        server.add_fixture(&format!("{producer}/empty_sheet.xlsx"), ID2);
        let (status, body) = server.get(&format!("/v1/data/{ID2}")).await;
        assert_eq!(status, StatusCode::OK, "{producer}: {body}");
        assert_eq!(
            body,
            json!({"sheets": [
                {"name": "Filled", "header_row": 1, "columns": ["x"], "rows": 1},
                {"name": "Blank", "header_row": null, "columns": [], "rows": 0}
            ], "tables": []}),
            "{producer}"
        );
    }
}

#[tokio::test]
async fn sheet_listing_names_numeric_header_by_its_text() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/header_quirks.xlsx"), ID);

        let (status, body) = server.get(&format!("/v1/data/{ID}")).await;

        assert_eq!(status, StatusCode::OK, "{producer}: {body}");
        let sheet = &body["sheets"][0];
        assert_eq!(
            (&sheet["name"], &sheet["rows"]),
            (&json!("Q"), &json!(2)),
            "{producer}: {body}"
        );
        // How a blank or repeated header cell is listed is not fixed by the
        // contract; the named columns must appear in header order.
        let columns: Vec<&str> = sheet["columns"]
            .as_array()
            .expect("columns")
            .iter()
            .map(|c| c.as_str().expect("column names are strings"))
            .collect();
        let position = |name: &str| columns.iter().position(|c| *c == name);
        let order: Vec<_> = ["id", "name", "2024", "Status"]
            .iter()
            .map(|n| position(n))
            .collect();
        assert!(order.iter().all(Option::is_some), "{producer}: {columns:?}");
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "{producer}: order of {columns:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// POST /v1/spreadsheets
// ---------------------------------------------------------------------------

#[tokio::test]
async fn upload_stores_the_exact_bytes_under_a_new_id() {
    let server = Server::start().await;
    let bytes = std::fs::read(fixture_path("libreoffice/people.xlsx")).unwrap();

    let (status, body) = upload(&server, bytes.clone(), Some(XLSX)).await;

    assert_eq!(status, StatusCode::CREATED, "{body}");
    let object = body.as_object().expect("object");
    assert_eq!(object.len(), 1, "only spreadsheet_id: {body}");
    let id = body["spreadsheet_id"].as_str().expect("spreadsheet_id");
    assert!(is_lower_hyphenated_uuid(id), "{id}");
    let stored = std::fs::read(server.file(id)).expect("stored under <id>.xlsx");
    assert!(stored == bytes, "the stored file differs from the upload");
    assert_eq!(server.stored_files(), [format!("{id}.xlsx")]);

    let read = read_rows(&server, id, "People").await;
    assert_eq!(read["total"], 4);
}

#[tokio::test]
async fn upload_accepts_content_type_parameters_and_gives_each_upload_its_own_id() {
    let server = Server::start().await;
    let bytes = std::fs::read(fixture_path("openpyxl/types.xlsx")).unwrap();

    let (first_status, first) = upload(&server, bytes.clone(), Some(XLSX)).await;
    let (second_status, second) =
        upload(&server, bytes, Some(&format!("{XLSX}; charset=binary"))).await;

    assert_eq!(first_status, StatusCode::CREATED, "{first}");
    assert_eq!(second_status, StatusCode::CREATED, "{second}");
    assert_ne!(first["spreadsheet_id"], second["spreadsheet_id"]);
    assert_eq!(server.stored_files().len(), 2);
}

#[tokio::test]
async fn upload_of_a_file_that_is_no_workbook_is_rejected() {
    let server = Server::start().await;
    let mut zip_without_workbook = std::io::Cursor::new(Vec::new());
    {
        let mut writer = zip::ZipWriter::new(&mut zip_without_workbook);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        writer.start_file("hello.txt", options).unwrap();
        std::io::Write::write_all(&mut writer, b"hello").unwrap();
        writer.finish().unwrap();
    }
    let mut truncated = std::fs::read(fixture_path("openpyxl/people.xlsx")).unwrap();
    truncated.truncate(truncated.len() / 2);

    for (what, bytes) in [
        ("text", b"hello, I am not a workbook".to_vec()),
        ("empty", Vec::new()),
        ("zip without workbook", zip_without_workbook.into_inner()),
        ("truncated workbook", truncated),
    ] {
        let (status, body) = upload(&server, bytes, Some(XLSX)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {body}");
        assert_eq!(body["success"], false, "{what}: {body}");
        assert!(body["error"].is_string(), "{what}: {body}");
        if what == "truncated workbook" {
            // Said in the user's terms, not the zip library's.
            assert_eq!(
                body["error"],
                "body: is not a readable xlsx workbook (the file is a damaged or cut-short zip archive)"
            );
        }
    }
    assert_eq!(
        server.stored_files(),
        Vec::<String>::new(),
        "nothing stored"
    );
}

#[tokio::test]
async fn upload_with_another_content_type_is_unsupported() {
    let server = Server::start().await;
    let bytes = std::fs::read(fixture_path("openpyxl/people.xlsx")).unwrap();

    // (application/json describes a new workbook since v1.1: those bytes
    // are then a 400, as any body that is not JSON.)
    let (status, _) = upload(&server, bytes.clone(), Some("application/json")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    for content_type in [
        Some("multipart/form-data; boundary=x"),
        Some("application/zip"),
        None,
    ] {
        let (status, body) = upload(&server, bytes.clone(), content_type).await;
        assert_eq!(
            status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type:?}: {body}"
        );
        assert_eq!(body["error"], "Unsupported Media Type", "{content_type:?}");
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains(XLSX) && detail.contains("--data-binary"),
            "{detail}"
        );
    }
    assert_eq!(
        server.stored_files(),
        Vec::<String>::new(),
        "nothing stored"
    );
}

// ---------------------------------------------------------------------------
// GET /v1/spreadsheets/{id}
// ---------------------------------------------------------------------------

#[tokio::test]
async fn download_returns_the_file_as_an_xlsx_attachment() {
    let server = Server::start().await;
    people_workbook(&server);
    let on_disk = std::fs::read(server.file(ID)).unwrap();

    let response = server.download(ID).await;

    assert_eq!(response.status(), StatusCode::OK);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let content_type = header("content-type");
    assert_eq!(content_type.split(';').next().unwrap().trim(), XLSX);
    let disposition = header("content-disposition");
    assert!(
        disposition
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("attachment"),
        "{disposition:?}"
    );
    let bytes = response.bytes().await.expect("body");
    assert!(
        bytes[..] == on_disk[..],
        "the download differs from the file on disk"
    );
}

#[tokio::test]
async fn download_after_upload_returns_the_uploaded_bytes() {
    let server = Server::start().await;
    let bytes = std::fs::read(fixture_path("openpyxl/header_quirks.xlsx")).unwrap();
    let (status, body) = upload(&server, bytes.clone(), Some(XLSX)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["spreadsheet_id"].as_str().expect("spreadsheet_id");

    let response = server.download(id).await;

    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.bytes().await.unwrap()[..] == bytes[..],
        "round trip changed the bytes"
    );
}

#[tokio::test]
async fn spreadsheet_id_accepts_any_letter_case() {
    let server = Server::start().await;
    people_workbook(&server);
    let upper = ID.to_ascii_uppercase();

    let read = read_rows(&server, &upper, "People").await;
    assert_eq!(read["total"], 3);
    let (status, body) = server.get(&format!("/v1/data/{upper}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let response = server.download(&upper).await;
    assert_eq!(response.status(), StatusCode::OK);
}

// ---------------------------------------------------------------------------
// DELETE /v1/spreadsheets/{id}
// ---------------------------------------------------------------------------

#[tokio::test]
async fn removing_a_spreadsheet_answers_204_and_later_reads_are_not_found() {
    let server = Server::start().await;
    people_workbook(&server);

    let response = server
        .client
        .delete(format!("{}/v1/spreadsheets/{ID}", server.base))
        .send()
        .await
        .expect("request sent");

    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(
        response.bytes().await.unwrap().is_empty(),
        "204 has no body"
    );
    assert!(!server.file(ID).exists(), "the file is gone");
    assert_eq!(server.stored_files(), Vec::<String>::new());

    let (status, body) = server.get(&format!("/v1/data/{ID}")).await;
    assert_not_found("listing", status, &body);
    let (status, body) = server.get(&rows_path("People")).await;
    assert_not_found("rows", status, &body);
    let response = server.download(ID).await;
    let (status, body) = json_of(response).await;
    assert_not_found("download", status, &body);
    let response = server
        .client
        .delete(format!("{}/v1/spreadsheets/{ID}", server.base))
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(response).await;
    assert_not_found("second removal", status, &body);
}

// ---------------------------------------------------------------------------
// Unknown and malformed ids
// ---------------------------------------------------------------------------

#[tokio::test]
async fn unknown_spreadsheet_is_not_found_on_every_route() {
    let server = Server::start().await;
    people_workbook(&server);
    let rows = format!("/v1/data/{UNKNOWN}/People");

    let checks = [
        (
            "list sheets",
            server.get(&format!("/v1/data/{UNKNOWN}")).await,
        ),
        ("read rows", server.get(&rows).await),
        (
            "insert rows",
            server.post(&rows, json!({"data": [{"name": "x"}]})).await,
        ),
        (
            "update rows",
            server
                .patch(
                    &rows,
                    json!({"type": "row", "row": 2, "data": {"name": "x"}}),
                )
                .await,
        ),
        (
            "delete rows",
            server.delete(&rows, json!({"type": "row", "row": 2})).await,
        ),
    ];
    for (what, (status, body)) in &checks {
        assert_not_found(what, *status, body);
    }
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = server
            .client
            .request(
                method.clone(),
                format!("{}/v1/spreadsheets/{UNKNOWN}", server.base),
            )
            .send()
            .await
            .expect("request sent");
        let content_type = response.headers().get("content-type").cloned();
        let (status, body) = json_of(response).await;
        assert_not_found(&format!("{method} spreadsheet"), status, &body);
        let content_type = content_type.expect("error responses carry a content type");
        assert!(
            content_type
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{content_type:?}"
        );
    }
    assert_eq!(
        server.stored_files(),
        [format!("{ID}.xlsx")],
        "no file was created"
    );
}

#[tokio::test]
async fn non_hyphenated_spreadsheet_id_is_a_validation_error() {
    let server = Server::start().await;
    people_workbook(&server);
    let simple = ID.replace('-', "");
    let ids = [
        simple.clone(),
        simple.to_ascii_uppercase(),
        format!("%7B{ID}%7D"),
        format!("urn:uuid:{ID}"),
        "not-a-uuid".to_string(),
        "0b1e3a5c-0000-4000-8000-00000000000".to_string(),
    ];
    for id in &ids {
        let mut answers = vec![
            ("list sheets", server.get(&format!("/v1/data/{id}")).await),
            (
                "read rows",
                server.get(&format!("/v1/data/{id}/People")).await,
            ),
        ];
        for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
            let response = server
                .client
                .request(
                    method.clone(),
                    format!("{}/v1/spreadsheets/{id}", server.base),
                )
                .send()
                .await
                .expect("request sent");
            answers.push((
                if method == reqwest::Method::GET {
                    "download"
                } else {
                    "remove"
                },
                json_of(response).await,
            ));
        }
        for (what, (status, body)) in answers {
            assert_eq!(status, StatusCode::BAD_REQUEST, "{what} {id}: {body}");
            assert_eq!(body["success"], false, "{what} {id}: {body}");
            let error = body["error"].as_str().unwrap_or_default();
            assert!(error.starts_with("spreadsheet_id: "), "{what} {id}: {body}");
        }
    }
    assert!(server.file(ID).exists(), "the workbook was not removed");
}

// ---------------------------------------------------------------------------
// Third-party fixtures read through GET rows
// ---------------------------------------------------------------------------

#[tokio::test]
async fn people_fixture_reads_with_dates_booleans_and_empty_cells() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/people.xlsx"), ID);

        let body = read_rows(&server, ID, "People").await;

        assert_eq!(
            body,
            json!({
                "data": [
                    {"_row": 2, "name": "Alice", "age": 30, "city": "Berlin", "joined": "2021/03/04", "active": true, "score": 9.5},
                    {"_row": 3, "name": "Bob", "age": 25, "city": "Paris", "joined": "2020/12/31", "active": false, "score": 7},
                    {"_row": 4, "name": "Carol", "age": 41, "city": "berlin", "joined": "2019/07/01", "active": true, "score": 8.25},
                    {"_row": 5, "name": "Dave", "age": 30, "city": null, "joined": "2022/01/15", "active": false, "score": null}
                ],
                "total": 4
            }),
            "{producer}"
        );
    }
}

#[tokio::test]
async fn people_fixture_filters_by_typed_cells() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/people.xlsx"), ID);
        let cases: [(&str, &[u64]); 9] = [
            ("city:eq:berlin", &[4]),
            ("city:ilike:berlin", &[2, 4]),
            ("city:is:null", &[5]),
            ("joined:gte:2021/01/01", &[2, 5]),
            ("joined:lt:2020-01-01", &[4]),
            ("active:is:true", &[2, 4]),
            ("active:eq:FALSE", &[3, 5]),
            ("age:eq:30.0", &[2, 5]),
            ("score:gt:8", &[2, 4]),
        ];
        for (filter, expected) in cases {
            assert_eq!(
                matching_rows(&server, "People", filter).await,
                expected,
                "{producer}: {filter}"
            );
        }
    }
}

#[tokio::test]
async fn formulas_read_as_their_cached_results() {
    let server = Server::start().await;
    server.add_fixture("libreoffice/people.xlsx", ID);

    let body = read_rows(&server, ID, "Totals").await;

    assert_eq!(
        body,
        json!({"data": [
            {"_row": 2, "label": "count", "value": 4},
            {"_row": 3, "label": "sum age", "value": 126},
            {"_row": 4, "label": "text", "value": "n=4"}
        ], "total": 3})
    );
}

#[tokio::test]
async fn formulas_without_a_cached_result_read_as_null() {
    let server = Server::start().await;
    server.add_fixture("openpyxl/people.xlsx", ID);

    let body = read_rows(&server, ID, "Totals").await;

    assert_eq!(
        body,
        json!({"data": [
            {"_row": 2, "label": "count", "value": null},
            {"_row": 3, "label": "sum age", "value": null},
            {"_row": 4, "label": "text", "value": null}
        ], "total": 3})
    );
}

#[tokio::test]
async fn hidden_sheets_are_readable() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/people.xlsx"), ID);
        assert_eq!(
            read_rows(&server, ID, "Hidden").await,
            json!({"data": [{"_row": 2, "secret": "x"}], "total": 1}),
            "{producer}"
        );

        server.add_fixture(&format!("{producer}/many_sheets.xlsx"), ID2);
        assert_eq!(
            read_rows(&server, ID2, "Beta").await,
            json!({"data": [
                {"_row": 2, "k": 1, "v": "Beta-1"},
                {"_row": 3, "k": 2, "v": "Beta-2"},
                {"_row": 4, "k": 3, "v": "Beta-3"}
            ], "total": 3}),
            "{producer}"
        );
    }
}

#[tokio::test]
async fn sheet_names_match_case_insensitively_when_unique() {
    let server = Server::start().await;
    server.add_fixture("libreoffice/many_sheets.xlsx", ID);

    let body = read_rows(&server, ID, "gamma").await;

    assert_eq!(body["total"], 3);
    assert_eq!(body["data"][0], json!({"_row": 2, "k": 1, "v": "Gamma-1"}));
}

#[tokio::test]
async fn offset_header_rows_are_numbered_from_the_sheet() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/offset_header.xlsx"), ID);

        let body = read_rows(&server, ID, "Data").await;

        // Column E holds nothing and is left out; F has no header and is
        // read by its letter.
        assert_eq!(
            body,
            json!({"data": [
                {"_row": 4, "id": 1, "item": "apple", "qty": 3, "_F": null},
                {"_row": 5, "id": 2, "item": "pear", "qty": 0, "_F": "note"},
                {"_row": 6, "id": 3, "item": "plum", "qty": 12, "_F": null}
            ], "total": 3}),
            "{producer}"
        );
        assert_eq!(
            matching_rows(&server, "Data", "qty:eq:0").await,
            [5],
            "{producer}"
        );
        assert_eq!(
            matching_rows(&server, "Data", "qty:gt:2").await,
            [4, 6],
            "{producer}"
        );
        assert_eq!(
            matching_rows(&server, "Data", "item:like:p*").await,
            [5, 6],
            "{producer}"
        );
    }
}

#[tokio::test]
async fn header_quirks_numeric_header_is_addressable_and_blank_or_repeated_names_go_by_letter() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/header_quirks.xlsx"), ID);

        let body = read_rows(&server, ID, "Q").await;
        assert_eq!(body["total"], 2, "{producer}: {body}");
        assert_eq!(
            body["data"],
            json!([
                {"_row": 2, "id": 1, "name": "a", "_C": "c-hidden", "_D": "dup1", "2024": 100, "Status": "open"},
                {"_row": 3, "id": 2, "name": "b", "_C": "c2", "_D": "dup2", "2024": 200, "Status": "closed"}
            ]),
            "{producer}: the blank-headed column C and the second name are read by letter"
        );
        assert_eq!(
            matching_rows(&server, "Q", "_D:eq:dup2").await,
            [3],
            "{producer}"
        );

        assert_eq!(
            matching_rows(&server, "Q", "2024:eq:100").await,
            [2],
            "{producer}"
        );
        assert_eq!(
            matching_rows(&server, "Q", "2024:gt:150").await,
            [3],
            "{producer}"
        );
        assert_eq!(
            matching_rows(&server, "Q", "Status:eq:closed").await,
            [3],
            "{producer}"
        );

        for filter in ["status:eq:open", ":eq:c2", "_E1:eq:x"] {
            let (status, body) = server
                .get(&format!("{}?filter={filter}", rows_path("Q")))
                .await;
            assert_eq!(
                status,
                StatusCode::BAD_REQUEST,
                "{producer}: {filter}: {body}"
            );
            assert!(
                body["error"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("filter"),
                "{producer}: {filter}: {body}"
            );
        }
    }
}

#[tokio::test]
async fn types_fixture_reads_every_value_kind() {
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("{producer}/types.xlsx"), ID);
        let libreoffice = producer == "libreoffice";
        // openpyxl stores no cached formula results; LibreOffice keeps 15
        // significant digits, so 2^53 is stored as 9007199254740990.
        let cached = |value: Value| if libreoffice { value } else { Value::Null };
        let big = if libreoffice {
            9_007_199_254_740_990_u64
        } else {
            9_007_199_254_740_992
        };
        let expected = [
            ("int", json!(42)),
            ("float", json!(2.5)),
            ("neg", json!(-7)),
            ("big", json!(big)),
            ("text", json!("hello")),
            ("formula_text", json!("=not a formula")),
            ("bool_true", json!(true)),
            ("bool_false", json!(false)),
            ("date", json!("2024/02/29")),
            ("datetime", json!("2024/01/15 13:45:30")),
            ("time", json!("12:30:00")),
            ("duration", json!("30:15:00")),
            ("error", cached(json!("#DIV/0!"))),
            ("formula_num", cached(json!(5))),
            ("formula_str", cached(json!("ab"))),
            ("empty", Value::Null),
            ("unicode", json!("Grüße 👋")),
        ];

        let body = read_rows(&server, ID, "Types").await;

        let rows = body["data"].as_array().expect("data");
        assert_eq!(rows.len(), expected.len(), "{producer}: {body}");
        let mut failures = Vec::new();
        for (i, (row, (kind, value))) in rows.iter().zip(&expected).enumerate() {
            let want = json!({"_row": i + 2, "kind": kind, "value": value});
            if *row != want {
                failures.push(format!("got {row}, expected {want}"));
            }
        }
        assert!(failures.is_empty(), "{producer}:\n{}", failures.join("\n"));
    }
}

/// §10.3 `GET /v1/spreadsheets`: every workbook, newest first, with its
/// sheets, size and time, paged; what is not a workbook of the directory is
/// left out.
#[tokio::test]
async fn the_workbooks_are_listed_newest_first() {
    let server = Server::start().await;
    let older = "0b1e3a5c-0000-4000-8000-000000000001";
    let newer = "0b1e3a5c-0000-4000-8000-000000000002";
    server.add_fixture("openpyxl/people.xlsx", older);
    server.add_fixture("openpyxl/people.xlsx", newer);
    let set_time = |id: &str, secs: u64| {
        let file = std::fs::File::options()
            .write(true)
            .open(server.file(id))
            .unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        file.set_modified(at).unwrap();
    };
    set_time(older, 1_700_000_000);
    set_time(newer, 1_795_502_130);
    // Not workbooks of the directory: another name, a link, a directory.
    std::fs::write(server.data_dir().join("notes.xlsx"), b"x").unwrap();
    std::os::unix::fs::symlink(
        server.file(older),
        server.file("0b1e3a5c-0000-4000-8000-000000000003"),
    )
    .unwrap();
    std::fs::create_dir(server.file("0b1e3a5c-0000-4000-8000-000000000004")).unwrap();

    let (status, body) = server.get("/v1/spreadsheets").await;
    assert_eq!(status, 200, "{body}");
    let bytes = std::fs::metadata(server.file(newer)).unwrap().len();
    assert_eq!(body["total"], 2);
    assert_eq!(
        body["spreadsheets"][0],
        json!({
            "spreadsheet_id": newer,
            "sheets": sheet_names(&server.file(newer)),
            "bytes": bytes,
            "modified": "2026-11-24T06:35:30Z",
            // v1.2 (§11.5): the quoted hash of the file.
            "etag": etag_of(&std::fs::read(server.file(newer)).unwrap()),
        })
    );
    assert_eq!(body["spreadsheets"][1]["spreadsheet_id"], older);
    assert_eq!(body["spreadsheets"][1]["modified"], "2023-11-14T22:13:20Z");

    let (_, page) = server.get("/v1/spreadsheets?limit=1&offset=1").await;
    assert_eq!(page["total"], 2);
    assert_eq!(page["spreadsheets"].as_array().unwrap().len(), 1);
    assert_eq!(page["spreadsheets"][0]["spreadsheet_id"], older);

    let (status, body) = server.get("/v1/spreadsheets?limit=x&sort=name").await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "limit: must be an integer from 0 to 100000, sort: is not a known query parameter"
    );
}

/// §10.3 `PUT /v1/spreadsheets/{id}`: stores a workbook under the id the
/// client chose (201), replaces it whole (200), refuses what is no workbook.
#[tokio::test]
async fn a_workbook_is_stored_and_replaced_under_a_chosen_id() {
    let server = Server::start().await;
    let id = "0b1e3a5c-0000-4000-8000-00000000beef";
    let put = |name: &str| {
        let bytes = std::fs::read(fixture_path(name)).unwrap();
        server
            .client
            .put(format!("{}/v1/spreadsheets/{id}", server.base))
            .header("content-type", "application/octet-stream")
            .body(bytes)
            .send()
    };
    let (status, body) = json_of(put("openpyxl/people.xlsx").await.unwrap()).await;
    assert_eq!(
        (status.as_u16(), body),
        (201, json!({"spreadsheet_id": id}))
    );
    assert_eq!(
        std::fs::read(server.file(id)).unwrap(),
        std::fs::read(fixture_path("openpyxl/people.xlsx")).unwrap()
    );
    let (status, _) = server.get(&format!("/v1/data/{id}/People")).await;
    assert_eq!(status, 200);

    let other = "libreoffice/people.xlsx";
    let (status, body) = json_of(put(other).await.unwrap()).await;
    assert_eq!(
        (status.as_u16(), body),
        (200, json!({"spreadsheet_id": id}))
    );
    assert_eq!(
        std::fs::read(server.file(id)).unwrap(),
        std::fs::read(fixture_path(other)).unwrap(),
        "replaced whole, and served from the new file"
    );
    assert_eq!(
        sheet_names(&server.file(id)),
        sheet_names(&fixture_path(other))
    );
    // Reads through the API see the new workbook, not the one read before.
    let (status, _) = server.get(&format!("/v1/data/{id}/People")).await;
    assert_eq!(status, 200);
    let (status, _) = json_of(put("openpyxl/many_sheets.xlsx").await.unwrap()).await;
    assert_eq!(status, 200);
    let (_, listed) = server.get(&format!("/v1/data/{id}")).await;
    let names: Vec<&str> = listed["sheets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        sheet_names(&fixture_path("openpyxl/many_sheets.xlsx"))
    );

    let before = std::fs::read(server.file(id)).unwrap();
    let response = server
        .client
        .put(format!("{}/v1/spreadsheets/{id}", server.base))
        .header("content-type", "application/octet-stream")
        .body(b"not a workbook".to_vec())
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(std::fs::read(server.file(id)).unwrap(), before);
}

/// `PUT` with JSON makes the workbook it describes under the chosen id, as
/// `POST /v1/spreadsheets` does under a new one: behind a proxy that
/// routes by id, that is how a workbook is created from names.
#[tokio::test]
async fn a_workbook_described_in_json_is_stored_under_a_chosen_id() {
    let server = Server::start().await;
    let id = "0b1e3a5c-0000-4000-8000-00000000cafe";
    let path = format!("/v1/spreadsheets/{id}");
    let body = json!({"sheets": [{"name": "Q3", "columns": ["item", "price"]}]});
    let (status, answer) = server.send(reqwest::Method::PUT, &path, Some(body)).await;
    assert_eq!(
        (status.as_u16(), answer),
        (201, json!({"spreadsheet_id": id}))
    );
    assert_eq!(
        read_sheet(&server.file(id), "Q3"),
        [vec![s("item"), s("price")]]
    );

    let bad = json!({"sheets": [{"name": "a:b", "columns": []}]});
    let before = std::fs::read(server.file(id)).unwrap();
    let (status, answer) = server.send(reqwest::Method::PUT, &path, Some(bad)).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer["error"],
        "sheets[0].name: must not hold any of [ ] : * ? / \\, \
         sheets[0].columns: must be a non-empty array of column names"
    );
    assert_eq!(std::fs::read(server.file(id)).unwrap(), before);

    let again = json!({"sheets": [{"name": "Q4", "columns": ["a"]}]});
    let (status, _) = server.send(reqwest::Method::PUT, &path, Some(again)).await;
    assert_eq!(status, 200);
    assert_eq!(sheet_names(&server.file(id)), ["Q4"]);
}

/// §10.3 `POST /v1/spreadsheets` with JSON: a new workbook with these
/// sheets and header rows, ready for rows.
#[tokio::test]
async fn a_workbook_is_created_from_sheet_and_column_names() {
    let server = Server::start().await;
    let body = json!({"sheets": [
        {"name": "People", "columns": ["name", "age"]},
        {"name": "Q3", "columns": ["item", "price", "sold"]},
    ]});
    let (status, answer) = server.post("/v1/spreadsheets", body).await;
    assert_eq!(status, 201, "{answer}");
    let id = answer["spreadsheet_id"].as_str().unwrap().to_owned();
    let file = server.file(&id);
    assert_eq!(sheet_names(&file), ["People", "Q3"]);
    assert_eq!(
        read_sheet(&file, "Q3"),
        [vec![s("item"), s("price"), s("sold")]]
    );

    let rows = json!({"data": [{"item": "pen", "price": 1.5}]});
    let (status, _) = server.post(&format!("/v1/data/{id}/Q3"), rows).await;
    assert_eq!(status, 201);
    assert_eq!(
        read_sheet(&file, "Q3")[1][..2],
        [s("pen"), Data::Float(1.5)]
    );
}

#[tokio::test]
async fn a_workbook_description_with_problems_is_400_naming_each() {
    let server = Server::start().await;
    let body = json!({"sheets": [
        {"name": "People", "columns": ["name", "name"]},
        {"name": "people", "columns": []},
        {"name": "a/b", "columns": ["x"], "colour": "red"},
    ], "extra": 1});
    let (status, answer) = server.post("/v1/spreadsheets", body).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer["error"],
        "extra: is not a known field, sheets[0].columns[1]: \"name\" is given twice, \
         sheets[1].name: \"people\" is given twice (ignoring case), \
         sheets[1].columns: must be a non-empty array of column names, \
         sheets[2].colour: is not a known field, sheets[2].name: must not hold any of [ ] : * ? / \\"
    );
    // Limits of the xlsx format the schema cannot state are 400s too: a
    // name of 16 emoji is 16 characters but 32 UTF-16 code units; and no
    // column may take the name rows are numbered under.
    let beyond = json!({"sheets": [
        {"name": "😀".repeat(16), "columns": ["a", "_row"]},
        {"name": "history", "columns": ["a"]},
        {"name": "a\u{1}b", "columns": ["a"]},
        {"name": "a\u{fffe}", "columns": ["a"]},
    ]});
    let (status, answer) = server.post("/v1/spreadsheets", beyond).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer["error"],
        "sheets[0].name: must take at most 31 UTF-16 code units (an emoji takes two), \
         sheets[0].columns[1]: must not be _row (each row's number is read under it), \
         sheets[1].name: must not be History (Excel keeps that name for itself), \
         sheets[2].name: must not hold a control character, \
         sheets[3].name: must not hold a control character"
    );
    let (status, answer) = server.post("/v1/spreadsheets", json!({"sheets": []})).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer["error"],
        "sheets: must be a non-empty array of {name and columns}"
    );
    assert_eq!(server.stored_files(), Vec::<String>::new());
}

/// A workbook described in JSON is held to `--max-cells` as an uploaded
/// file is: past it, 400 and nothing stored (else it would be stored and
/// then refused at every read).
#[tokio::test]
async fn a_described_workbook_past_the_cell_limit_is_400() {
    let server = Server::start_with(|config| config.max_cells = 10).await;
    let columns: Vec<String> = (0..11).map(|i| format!("c{i}")).collect();
    let body = json!({"sheets": [{"name": "Wide", "columns": columns}]});
    let (status, answer) = server.post("/v1/spreadsheets", body.clone()).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer["error"],
        "sheets: must span at most 10 cells in all (the server's limit)"
    );
    let path = format!("/v1/spreadsheets/{ID}");
    let (status, _) = server.send(reqwest::Method::PUT, &path, Some(body)).await;
    assert_eq!(status, 400);
    assert!(server.stored_files().is_empty());
}
