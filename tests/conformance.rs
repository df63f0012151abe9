//! Contract §9 (clarifications, second edition): one test per point, each
//! over a real socket, with the workbook on disk read back where a write
//! is involved.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use calamine::Data;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Sends a raw JSON text (which `json!` could not express) and returns
/// status and body.
async fn send_raw(server: &Server, method: Method, path: &str, body: &str) -> (StatusCode, Value) {
    let response = server
        .client
        .request(method, format!("{}{path}", server.base))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("request sent");
    json_of(response).await
}

/// The XML of the first worksheet of the workbook at `path`.
fn first_sheet_xml(path: &std::path::Path) -> String {
    let file = std::fs::File::open(path).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut xml = String::new();
    zip.by_name("xl/worksheets/sheet1.xml")
        .unwrap()
        .read_to_string(&mut xml)
        .unwrap();
    xml
}

// --- What is sent is what is read back -------------------------------------

#[tokio::test]
async fn integral_numbers_are_written_as_integers() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, _) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "Dan", "age": 30}]}),
        )
        .await;
    assert_eq!(status, 201);
    let xml = first_sheet_xml(&server.file(ID));
    assert!(xml.contains("<v>30</v>"), "{xml}");
    assert!(
        !xml.contains(".0</v>"),
        "a number written with a fraction: {xml}"
    );
}

#[tokio::test]
async fn a_number_written_into_a_date_column_reads_back_as_that_number() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, _) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "Dan", "joined": 100}]}),
        )
        .await;
    assert_eq!(status, 201);
    let (_, page) = server
        .get(&format!("{}?filter=name:eq:Dan", rows_path("People")))
        .await;
    assert_eq!(page["data"][0]["joined"], json!(100));

    // A server that parses the file afresh, and calamine, read the same.
    let fresh = Server::start_sharing(server.data_dir()).await;
    let (_, page) = fresh
        .get(&format!("{}?filter=name:eq:Dan", rows_path("People")))
        .await;
    assert_eq!(page["data"][0]["joined"], json!(100));
    assert_eq!(
        read_sheet(&server.file(ID), "People")[4][3],
        Data::Float(100.0)
    );
}

#[tokio::test]
async fn a_date_time_reads_back_as_a_date_time_also_at_midnight() {
    let server = Server::start().await;
    people_workbook(&server); // `joined` is formatted as a date only
    let rows = json!({"data": [
        {"name": "Dan", "joined": "2024/01/15 00:00"},
        {"name": "Eve", "joined": "2024/01/15 12:30"},
        {"name": "Fay", "joined": "2024/01/15"},
    ]});
    let (status, _) = server.post(&rows_path("People"), rows).await;
    assert_eq!(status, 201);
    let expected = [
        json!("2024/01/15 00:00:00"),
        json!("2024/01/15 12:30:00"),
        json!("2024/01/15"),
    ];
    let joined = |page: &Value| -> Vec<Value> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["joined"].clone())
            .collect()
    };
    let query = format!("{}?offset=3", rows_path("People"));
    let (_, page) = server.get(&query).await;
    assert_eq!(joined(&page), expected);
    // Parsed afresh, the file's formats say the same: the date-times were
    // given a format that shows their time.
    let fresh = Server::start_sharing(server.data_dir()).await;
    let (_, page) = fresh.get(&query).await;
    assert_eq!(joined(&page), expected);
}

#[tokio::test]
async fn integer_literals_beyond_two_to_the_53_are_rejected_however_large() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    for literal in [
        "18446744073709551616",
        "1000000000000000000000000000000",
        // Beyond u128, and a float that prints back the same: serde_json
        // turns it into `1e39` when a parsed value is read again.
        "1000000000000000000000000000000000000000",
        "-10000000000000000000000000000000000000000",
    ] {
        let body = format!(r#"{{"data": [{{"name": "x", "age": {literal}}}]}}"#);
        let (status, answer) = send_raw(&server, Method::POST, &rows_path("People"), &body).await;
        assert_eq!(status, 400, "{literal}");
        assert_eq!(
            answer["error"],
            "data[0].age: is an integer beyond 2^53 (a cell cannot hold it exactly)"
        );
    }
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        before,
        "nothing written"
    );
}

// --- Every problem named ----------------------------------------------------

#[tokio::test]
async fn an_update_names_bad_values_and_unknown_columns_together() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server
        .patch(
            &rows_path("People"),
            json!({"type": "filter", "filter": ["nosuch:eq:1", "bad"], "data": {"age": [1], "nme": 1}}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "filter[1]: \"bad\" is not a filter expression (column:operator:value), \
         data.age: must not be an object or array, \
         data.nme: is not a column of the sheet, \
         filter[0]: column \"nosuch\" is not a column of the sheet"
    );
}

/// One cell named twice in one object, by its name and by its letter, is
/// a 400 (as a key given twice is, §9), in an insert and an update, and
/// nothing is written.
#[tokio::test]
async fn a_cell_named_twice_is_refused() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "x", "age": 1, "_B": 2}]}),
        )
        .await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (400, &json!("data[0]._B: names the same column as \"age\""))
    );
    let (status, body) = server
        .patch(
            &rows_path("People"),
            json!({"type": "row", "row": 2, "data": {"_b": 2, "age": 1}}),
        )
        .await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (400, &json!("data.age: names the same column as \"_b\""))
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

#[tokio::test]
async fn a_read_names_bad_filters_and_unknown_columns_together() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server
        .get(&format!(
            "{}?filter=bad&filter=nosuch:eq:1",
            rows_path("People")
        ))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "filter: \"bad\" is not a filter expression (column:operator:value), \
         filter: column \"nosuch\" is not a column of the sheet"
    );
}

#[tokio::test]
async fn a_comma_in_a_column_name_does_not_split_a_problem() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"Last, First": "x", "age": [1]}]}),
        )
        .await;
    assert_eq!(status, 400);
    let error = body["error"].as_str().unwrap();
    let problems: Vec<_> = error.split(", ").collect();
    assert_eq!(
        problems,
        [
            "data[0].age: must not be an object or array",
            "data[0].Last,\u{a0}First: is not a column of the sheet"
        ],
        "{error}"
    );
}

#[tokio::test]
async fn a_column_name_is_measured_as_the_writer_does() {
    let server = Server::start().await;
    make_workbook(&server.file(ID), &[("Blank", vec![])]);
    let name = "😀".repeat(16_384); // 32,768 UTF-16 code units
    let (status, body) = server
        .post(&rows_path("Blank"), json!({"data": [{ name: 1 }]}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data[0]: a column name must be at most 32767 UTF-16 code units"
    );
}

#[tokio::test]
async fn a_repeated_name_is_the_first_column_and_the_second_its_letter() {
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[("People", vec![vec![Spec::S("name"), Spec::S("name")]])],
    );
    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "x", "_B": "y"}]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (_, body) = server.get(&rows_path("People")).await;
    assert_eq!(body["data"], json!([{"_row": 2, "name": "x", "_B": "y"}]));
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"_name": "x"}]}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data[0]._name: is reserved: a name starting with _ is _row or a column letter such as _A"
    );
}

// --- Unknown or repeated parameters ------------------------------------------

#[tokio::test]
async fn every_route_rejects_an_unknown_query_parameter() {
    let server = Server::start().await;
    people_workbook(&server);
    let rows = rows_path("People");
    let routes = [
        (Method::GET, "/healthz".to_owned(), None),
        (Method::GET, "/v1/openapi.json".to_owned(), None),
        (Method::GET, format!("/v1/data/{ID}"), None),
        (Method::GET, format!("/v1/spreadsheets/{ID}"), None),
        (Method::DELETE, format!("/v1/spreadsheets/{ID}"), None),
        (
            Method::POST,
            rows.clone(),
            Some(json!({"data": [{"name": "x"}]})),
        ),
        (
            Method::PATCH,
            rows.clone(),
            Some(json!({"type": "row", "row": 2, "data": {"age": 1}})),
        ),
        (
            Method::DELETE,
            rows.clone(),
            Some(json!({"type": "filter", "filter": "name:eq:Bob"})),
        ),
        // v1.1 (§10).
        (Method::GET, "/v1/spreadsheets".to_owned(), None),
        (
            Method::POST,
            format!("/v1/data/{ID}"),
            Some(json!({"name": "Q3", "columns": ["a"]})),
        ),
        (
            Method::POST,
            "/v1/spreadsheets".to_owned(),
            Some(json!({"sheets": [{"name": "Q3", "columns": ["a"]}]})),
        ),
        (
            Method::PUT,
            format!("/v1/spreadsheets/{ID}"),
            Some(json!({"sheets": [{"name": "Q3", "columns": ["a"]}]})),
        ),
        (Method::GET, "/docs".to_owned(), None),
    ];
    let before = std::fs::read(server.file(ID)).unwrap();
    for (method, path, body) in routes {
        let (status, answer) = server
            .send(method.clone(), &format!("{path}?dry_run=true"), body)
            .await;
        assert_eq!(status, 400, "{method} {path}: {answer}");
        assert_eq!(answer["error"], "dry_run: is not a known query parameter");
    }
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        before,
        "nothing written or removed"
    );
    assert_eq!(server.stored_files(), [format!("{ID}.xlsx")]);
    // The single-valued parameters of v1.1 given twice.
    for query in [
        "format=csv&format=json",
        "columns=name&columns=age",
        "offset=1&offset=2",
    ] {
        let (status, answer) = server.get(&format!("{rows}?{query}")).await;
        assert_eq!(status, 400, "{query}: {answer}");
        let name = query.split('=').next().unwrap();
        assert_eq!(
            answer["error"],
            format!("{name}: must be given at most once")
        );
    }
    for query in ["limit=1&limit=2", "offset=1&offset=2"] {
        let (status, answer) = server.get(&format!("/v1/spreadsheets?{query}")).await;
        assert_eq!(status, 400, "{query}: {answer}");
    }
}

#[tokio::test]
async fn a_single_valued_parameter_given_twice_is_rejected() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server
        .get(&format!("{}?limit=1&limit=2", rows_path("People")))
        .await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (400, &json!("limit: must be given at most once"))
    );
}

#[tokio::test]
async fn a_json_object_with_a_duplicate_key_is_rejected() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let cases = [
        (
            Method::PATCH,
            r#"{"type": "row", "type": "filter", "filter": "name:eq:Bob", "data": {"age": 1}}"#,
            "type: is given more than once (a JSON object may not repeat a key)",
        ),
        (
            Method::POST,
            r#"{"data": [{"name": "a"}, {"name": "b", "name": "c"}]}"#,
            "data[1].name: is given more than once (a JSON object may not repeat a key)",
        ),
    ];
    for (method, body, error) in cases {
        let (status, answer) = send_raw(&server, method, &rows_path("People"), body).await;
        assert_eq!((status.as_u16(), &answer["error"]), (400, &json!(error)));
    }
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        before,
        "nothing written"
    );
}

// --- Limits the writer enforces ----------------------------------------------

#[tokio::test]
async fn text_is_measured_in_utf16_code_units() {
    let server = Server::start().await;
    people_workbook(&server);
    let too_long = "😀".repeat(16_384); // 32,768 UTF-16 code units
    let (status, body) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "ok"}, {"name": too_long}]}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data[1].name: is longer than 32767 UTF-16 code units (the xlsx limit of a cell)"
    );
    let fits = "😀".repeat(16_383);
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": fits}]}))
        .await;
    assert_eq!(status, 201);
}

// --- Authentication ---------------------------------------------------------

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let server = Server::start_with(|config| config.tokens = vec!["secret".into()]).await;
    people_workbook(&server);
    for (header, expected) in [
        ("Bearer secret", 200),
        ("bearer secret", 200),
        ("BEARER secret", 200),
        ("Basic secret", 401),
        ("bearer other", 401),
    ] {
        let response = server
            .client
            .get(format!("{}{}", server.base, rows_path("People")))
            .header("authorization", header)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), expected, "{header}");
    }
}

// --- Errors teach -----------------------------------------------------------

async fn upload(server: &Server, bytes: Vec<u8>) -> (StatusCode, Value) {
    let response = server
        .client
        .post(format!("{}/v1/spreadsheets", server.base))
        .header("content-type", "application/octet-stream")
        .body(bytes)
        .send()
        .await
        .unwrap();
    json_of(response).await
}

#[tokio::test]
async fn uploads_say_what_is_wrong_with_the_file() {
    let server = Server::start().await;
    let encrypted = std::fs::read(fixture_path("encrypted/people_password.xlsx")).unwrap();
    let cases = [
        (
            Vec::new(),
            "body: is empty; send the bytes of an .xlsx file (curl --data-binary @book.xlsx)",
        ),
        (
            // An OLE compound file without an encrypted package: legacy .xls.
            [&b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"[..], &[0; 504]].concat(),
            "body: is not a readable xlsx workbook (the file is a legacy .xls workbook \
             (or another OLE file); save it as .xlsx)",
        ),
        (
            encrypted,
            "body: is not a readable xlsx workbook (the workbook is password-protected \
             (encrypted); remove its password in the spreadsheet app and save it again)",
        ),
        (
            // A zip archive, but no package: said in sheetd's words.
            zip_of(&[("notes.txt", b"x")]),
            "body: is not a readable xlsx workbook (the package has no part _rels/.rels)",
        ),
    ];
    for (bytes, error) in cases {
        let (status, body) = upload(&server, bytes).await;
        assert_eq!((status.as_u16(), &body["error"]), (400, &json!(error)));
    }
}

/// A zip archive of `parts` (name, bytes).
fn zip_of(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in parts {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A stored file that cannot be served says why, as its upload would have
/// (§9: a password-protected workbook is named as such).
#[tokio::test]
async fn a_stored_file_that_cannot_be_read_says_why() {
    let server = Server::start().await;
    let encrypted = std::fs::read(fixture_path("encrypted/people_password.xlsx")).unwrap();
    std::fs::write(server.file(ID), encrypted).unwrap();
    let (status, body) = server.get(&rows_path("People")).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body["detail"],
        "the spreadsheet's file is not a readable xlsx workbook (the workbook is \
         password-protected (encrypted); remove its password in the spreadsheet app and save \
         it again)"
    );
}

#[tokio::test]
async fn an_octet_stream_upload_is_taken() {
    let server = Server::start().await;
    let bytes = std::fs::read(fixture_path("libreoffice/people.xlsx")).unwrap();
    let (status, body) = upload(&server, bytes.clone()).await;
    assert_eq!(status, 201, "{body}");
    let id = body["spreadsheet_id"].as_str().unwrap();
    assert_eq!(std::fs::read(server.file(id)).unwrap(), bytes);
}

/// The People workbook with its first sheet renamed to `name` in the
/// package (spreadsheet apps refuse such names; hand-edited files have them).
fn workbook_with_sheet_named(path: &std::path::Path, name: &str) {
    let built = path.with_extension("tmp");
    workbook_with(&built, |_| {});
    let mut from = zip::ZipArchive::new(std::fs::File::open(&built).unwrap()).unwrap();
    let mut to = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..from.len() {
        let mut part = from.by_index(i).unwrap();
        let part_name = part.name().unwrap().into_owned();
        let mut bytes = Vec::new();
        part.read_to_end(&mut bytes).unwrap();
        if part_name == "xl/workbook.xml" {
            bytes = String::from_utf8(bytes)
                .unwrap()
                .replace("name=\"People\"", &format!("name=\"{name}\""))
                .into_bytes();
        }
        to.start_file(part_name, zip::write::SimpleFileOptions::default())
            .unwrap();
        to.write_all(&bytes).unwrap();
    }
    to.finish().unwrap();
    std::fs::remove_file(built).unwrap();
}

#[tokio::test]
async fn a_conflict_names_the_workbook_content_not_a_library_call() {
    let server = Server::start().await;
    workbook_with_sheet_named(&server.file(ID), "a/b");
    let before = std::fs::read(server.file(ID)).unwrap();
    let (status, body) = server
        .post(
            "/v1/data/0b1e3a5c-0000-4000-8000-00000000000a/a%2Fb",
            json!({"data": [{"name": "x"}]}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("the sheet name \"a/b\" is not allowed"),
        "{detail}"
    );
    for internal in ["set_name", "worksheet", "/tmp", "Worksheet name"] {
        assert!(!detail.contains(internal), "{detail}");
    }
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

// --- Malformed HTTP ----------------------------------------------------------

/// Sends raw bytes on a new connection and returns the whole answer.
fn raw_exchange(base: &str, request: &[u8]) -> String {
    let address = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    // The server may answer and close before it has read everything.
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status and JSON body of a raw answer.
fn status_and_body(answer: &str) -> (u16, Value) {
    let (head, body) = answer.split_once("\r\n\r\n").expect("a whole answer");
    let status = head[9..12].parse().unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    (status, serde_json::from_str(body).expect("a JSON body"))
}

#[tokio::test]
async fn answers_of_the_http_library_wear_the_contract_shape() {
    let server = Server::start().await;
    let long_uri = format!(
        "GET /v1/data/{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(70_000)
    );
    let mut many_headers = String::from("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    for i in 0..150 {
        many_headers.push_str(&format!("x-h{i}: v\r\n"));
    }
    many_headers.push_str("\r\n");
    let cases = [
        (long_uri, 414, "URI Too Long"),
        (many_headers, 431, "Request Header Fields Too Large"),
        ("HELLO\r\n\r\n".to_owned(), 400, "Bad Request"),
    ];
    for (request, status, error) in cases {
        let base = server.base.clone();
        let answer = tokio::task::spawn_blocking(move || raw_exchange(&base, request.as_bytes()))
            .await
            .unwrap();
        let (got, body) = status_and_body(&answer);
        assert_eq!(got, status, "{answer}");
        assert_eq!(body["success"], false);
        assert_eq!(body["error"], error);
    }
}
