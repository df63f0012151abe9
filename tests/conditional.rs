//! Conditional requests (contract §11.5): `ETag` and `Last-Modified` on
//! every answer about one workbook, 304 for a client whose copy is
//! current, 412 for a write whose workbook changed, checked at the write's
//! turn. The tags are checked against the file on disk, hashed here.

mod common;

use std::path::Path;

use calamine::Data;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Sends `method path` with `headers` and an optional JSON body.
async fn send(
    server: &Server,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> reqwest::Response {
    let mut request = server
        .client
        .request(method, format!("{}{path}", server.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    request.send().await.expect("request sent")
}

/// A response's header, as text.
fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    let value = response.headers().get(name)?;
    Some(value.to_str().expect("ASCII header").to_owned())
}

fn etag(response: &reqwest::Response) -> String {
    header(response, "etag").expect("an ETag")
}

/// The tag of the file at `path`: its BLAKE3 hash, quoted.
fn tag_of_file(path: &Path) -> String {
    etag_of(&std::fs::read(path).expect("file"))
}

/// An update of Alice's age to `age`, row 2 of People.
fn set_age(age: u32) -> Option<Value> {
    Some(json!({"type": "row", "row": 2, "data": {"age": age}}))
}

/// The ages of People, from the file on disk.
fn ages(server: &Server) -> Vec<Data> {
    read_sheet(&server.file(ID), "People")
        .into_iter()
        .map(|row| row[1].clone())
        .collect()
}

#[tokio::test]
async fn every_answer_about_a_workbook_carries_the_hash_of_its_file() {
    let server = Server::start().await;
    people_workbook(&server);
    let on_disk = tag_of_file(&server.file(ID));

    let rows = send(&server, Method::GET, &rows_path("People"), &[], None).await;
    assert_eq!(rows.status(), 200);
    assert_eq!(etag(&rows), on_disk);
    let again = send(&server, Method::GET, &rows_path("People"), &[], None).await;
    assert_eq!(etag(&again), on_disk, "stable across reads");
    let csv = send(
        &server,
        Method::GET,
        &format!("{}?format=csv", rows_path("People")),
        &[],
        None,
    )
    .await;
    assert_eq!(etag(&csv), on_disk);
    let sheets = send(&server, Method::GET, &format!("/v1/data/{ID}"), &[], None).await;
    assert_eq!(etag(&sheets), on_disk);
    let download = server.download(ID).await;
    assert_eq!(etag(&download), on_disk);

    let modified = std::fs::metadata(server.file(ID))
        .unwrap()
        .modified()
        .unwrap();
    let last_modified = header(&rows, "last-modified").expect("Last-Modified");
    assert_eq!(last_modified, httpdate::fmt_http_date(modified));
    assert_eq!(header(&download, "last-modified"), Some(last_modified));
}

#[tokio::test]
async fn the_etag_changes_with_a_write_through_sheetd_and_the_write_answers_with_it() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = tag_of_file(&server.file(ID));

    let insert = json!({"data": [{"name": "Dan"}]});
    let inserted = send(
        &server,
        Method::POST,
        &rows_path("People"),
        &[],
        Some(insert),
    )
    .await;
    assert_eq!(inserted.status(), 201);
    let after = etag(&inserted);
    assert_ne!(after, before);
    assert_eq!(
        after,
        tag_of_file(&server.file(ID)),
        "the tag of the file written"
    );
    assert!(header(&inserted, "last-modified").is_some());

    let read = send(&server, Method::GET, &rows_path("People"), &[], None).await;
    assert_eq!(etag(&read), after);
}

/// §11.5: every write's answer carries the new ETag, the tag of the file
/// it wrote — an upsert, a delete and a sheet added, as an insert does;
/// and the insert, update and delete after the first write, which save
/// the workbook in part (the file hashed as it is written).
#[tokio::test]
async fn every_kind_of_write_answers_the_tag_of_the_file_it_wrote() {
    let server = Server::start().await;
    people_workbook(&server);
    let writes = [
        (
            Method::POST,
            format!("{}?on_conflict=name", rows_path("People")),
            json!({"data": [{"name": "Alice", "age": 31}, {"name": "Eve"}]}),
            200,
        ),
        (
            Method::POST,
            rows_path("People"),
            json!({"data": [{"name": "Finn", "age": 7}]}),
            201,
        ),
        (
            Method::PATCH,
            rows_path("People"),
            json!({"type": "filter", "filter": "name:eq:Finn", "data": {"age": 8}}),
            200,
        ),
        (
            Method::DELETE,
            rows_path("People"),
            json!({"type": "filter", "filter": "name:eq:Eve"}),
            200,
        ),
        // Rows that move below: taken from the last save, numbered again.
        (
            Method::POST,
            format!("{}?before=3", rows_path("People")),
            json!({"data": [{"name": "Gus", "age": 3}]}),
            201,
        ),
        (
            Method::POST,
            format!("/v1/data/{ID}"),
            json!({"name": "Added", "columns": ["k"]}),
            201,
        ),
    ];
    for (method, path, body, status) in writes {
        let before = tag_of_file(&server.file(ID));
        let answer = send(&server, method.clone(), &path, &[], Some(body)).await;
        assert_eq!(answer.status(), status, "{method} {path}");
        let tag = etag(&answer);
        assert_ne!(tag, before, "{method} {path} changed the file");
        assert_eq!(tag, tag_of_file(&server.file(ID)), "{method} {path}");
    }
}

/// §11.5 on a file of several MiB, which sheetd hashes in blocks of 1 MiB
/// on two threads as it writes it: every write, whole or in part, answers
/// the BLAKE3 hash of the bytes on disk.
#[tokio::test]
async fn a_file_of_many_blocks_answers_the_tag_of_its_bytes() {
    let server = Server::start().await;
    // Codes that compress poorly, so that the file holds several blocks.
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("Codes").expect("name");
    sheet.write(0, 0, "n").expect("header");
    sheet.write(0, 1, "code").expect("header");
    let mut state: u64 = 7;
    for row in 1..=60_000u32 {
        state =
            (state.wrapping_mul(6_364_136_223_846_793_005)).wrapping_add(1_442_695_040_888_963_407);
        sheet.write(row, 0, row).expect("n");
        sheet
            .write(
                row,
                1,
                format!(
                    "{state:016x}{:016x}{:016x}",
                    state.rotate_left(29),
                    state.rotate_left(43)
                ),
            )
            .expect("code");
    }
    book.save(server.file(ID)).expect("saved");
    let writes = [
        (
            Method::POST,
            json!({"data": [{"n": 60_001, "code": "first"}]}),
            201,
        ),
        (
            Method::POST,
            json!({"data": [{"n": 60_002, "code": "appended"}]}),
            201,
        ),
        (
            Method::PATCH,
            json!({"type": "filter", "filter": "n:eq:30000", "data": {"code": "x"}}),
            200,
        ),
        (
            Method::DELETE,
            json!({"type": "filter", "filter": "n:eq:20000"}),
            200,
        ),
    ];
    for (method, body, status) in writes {
        let answer = send(
            &server,
            method.clone(),
            &rows_path("Codes"),
            &[],
            Some(body),
        )
        .await;
        assert_eq!(answer.status(), status, "{method}");
        let size = std::fs::metadata(server.file(ID)).expect("file").len();
        assert!(size > 2 << 20, "{size} bytes: fewer than three blocks");
        assert_eq!(etag(&answer), tag_of_file(&server.file(ID)), "{method}");
    }
}

#[tokio::test]
async fn a_write_that_changes_nothing_keeps_the_etag() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = tag_of_file(&server.file(ID));
    let nobody = json!({"type": "filter", "filter": "name:eq:Nobody", "data": {"age": 1}});
    let updated = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &[],
        Some(nobody),
    )
    .await;
    assert_eq!(updated.status(), 200);
    assert_eq!(etag(&updated), before);
    assert_eq!(tag_of_file(&server.file(ID)), before);
}

#[tokio::test]
async fn a_file_replaced_outside_sheetd_gets_a_new_etag() {
    let server = Server::start().await;
    people_workbook(&server);
    let read = send(&server, Method::GET, &rows_path("People"), &[], None).await;
    let before = etag(&read);

    // Copied over it in place, as a spreadsheet app or a script might.
    std::fs::copy(fixture_path("libreoffice/people.xlsx"), server.file(ID)).unwrap();
    let read = send(&server, Method::GET, &rows_path("People"), &[], None).await;
    assert_eq!(read.status(), 200);
    let after = etag(&read);
    assert_ne!(after, before);
    assert_eq!(after, tag_of_file(&server.file(ID)));
    let download = server.download(ID).await;
    assert_eq!(etag(&download), after);
}

#[tokio::test]
async fn if_none_match_with_the_current_etag_is_304_without_a_body() {
    let server = Server::start().await;
    people_workbook(&server);
    let current = tag_of_file(&server.file(ID));
    let weak = format!("W/{current}");
    let listed = format!("\"other\", {current}");
    for path in [
        rows_path("People"),
        format!("/v1/data/{ID}"),
        format!("/v1/spreadsheets/{ID}"),
    ] {
        for value in [current.as_str(), weak.as_str(), listed.as_str(), "*"] {
            let response = send(
                &server,
                Method::GET,
                &path,
                &[("If-None-Match", value)],
                None,
            )
            .await;
            assert_eq!(response.status(), 304, "{path} with If-None-Match: {value}");
            assert_eq!(etag(&response), current);
            assert!(response.bytes().await.unwrap().is_empty(), "no body");
        }
        let other = send(
            &server,
            Method::GET,
            &path,
            &[("If-None-Match", "\"other\"")],
            None,
        )
        .await;
        assert_eq!(other.status(), 200, "{path} with another tag");
        assert!(!other.bytes().await.unwrap().is_empty());
    }

    // Once the workbook changes, the old tag no longer matches.
    let (status, _) = server
        .patch(&rows_path("People"), set_age(31).unwrap())
        .await;
    assert_eq!(status, 200);
    let response = send(
        &server,
        Method::GET,
        &rows_path("People"),
        &[("If-None-Match", &current)],
        None,
    )
    .await;
    assert_eq!(response.status(), 200);
    let (_, body) = json_of(response).await;
    assert_eq!(body["data"][0]["age"], 31);
}

#[tokio::test]
async fn if_modified_since_is_304_until_the_file_changes_and_yields_to_if_none_match() {
    let server = Server::start().await;
    people_workbook(&server);
    let read = send(&server, Method::GET, &rows_path("People"), &[], None).await;
    let last_modified = header(&read, "last-modified").unwrap();
    let modified = httpdate::parse_http_date(&last_modified).unwrap();
    let an_hour_before = httpdate::fmt_http_date(modified - std::time::Duration::from_secs(3600));

    let same = [("If-Modified-Since", last_modified.as_str())];
    let response = send(&server, Method::GET, &rows_path("People"), &same, None).await;
    assert_eq!(response.status(), 304);
    let earlier = [("If-Modified-Since", an_hour_before.as_str())];
    let response = send(&server, Method::GET, &rows_path("People"), &earlier, None).await;
    assert_eq!(response.status(), 200);
    let both = [
        ("If-Modified-Since", last_modified.as_str()),
        ("If-None-Match", "\"other\""),
    ];
    let response = send(
        &server,
        Method::GET,
        &format!("/v1/spreadsheets/{ID}"),
        &both,
        None,
    )
    .await;
    assert_eq!(response.status(), 200, "If-None-Match decides alone");
    let not_a_date = [("If-Modified-Since", "yesterday")];
    let response = send(
        &server,
        Method::GET,
        &rows_path("People"),
        &not_a_date,
        None,
    )
    .await;
    assert_eq!(response.status(), 200, "an invalid date is ignored");
}

#[tokio::test]
async fn a_write_with_a_stale_if_match_is_412_and_writes_nothing() {
    let server = Server::start().await;
    people_workbook(&server);
    let stale = tag_of_file(&server.file(ID));
    let (status, _) = server
        .patch(&rows_path("People"), set_age(31).unwrap())
        .await;
    assert_eq!(status, 200);
    let bytes = std::fs::read(server.file(ID)).unwrap();

    let if_match = [("If-Match", stale.as_str())];
    let writes = [
        (Method::PATCH, rows_path("People"), set_age(99)),
        (
            Method::POST,
            rows_path("People"),
            Some(json!({"data": [{"name": "Eve"}]})),
        ),
        (
            Method::POST,
            format!("{}?on_conflict=name", rows_path("People")),
            Some(json!({"data": [{"name": "Eve"}]})),
        ),
        (
            Method::DELETE,
            rows_path("People"),
            Some(json!({"type": "row", "row": 2})),
        ),
        (
            Method::POST,
            format!("/v1/data/{ID}"),
            Some(json!({"name": "Q3", "columns": ["a"]})),
        ),
    ];
    for (method, path, body) in writes {
        let response = send(&server, method.clone(), &path, &if_match, body).await;
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{method} {path}");
        assert_eq!(body["success"], false);
        assert_eq!(body["error"], "Precondition Failed");
        assert!(
            body["detail"].as_str().unwrap().contains("If-Match"),
            "{body}"
        );
    }
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        bytes,
        "nothing written"
    );
}

#[tokio::test]
async fn a_write_with_the_current_if_match_is_made_and_answers_the_new_etag() {
    let server = Server::start().await;
    people_workbook(&server);
    let current = tag_of_file(&server.file(ID));
    let matching = format!("\"other\", {current}");
    let response = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &[("If-Match", &matching)],
        set_age(32),
    )
    .await;
    assert_eq!(response.status(), 200);
    let new = etag(&response);
    assert_ne!(new, current);
    assert_eq!(new, tag_of_file(&server.file(ID)));
    assert_eq!(ages(&server)[1], Data::Float(32.0));

    // `*` matches whatever version there is; a weak tag never does.
    let weak = format!("W/{new}");
    let response = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &[("If-Match", &weak)],
        set_age(33),
    )
    .await;
    assert_eq!(response.status(), 412, "weak tags never match a write");
    let response = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &[("If-Match", "*")],
        set_age(34),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(ages(&server)[1], Data::Float(34.0));
}

#[tokio::test]
async fn if_unmodified_since_refuses_a_write_to_a_file_changed_after_it() {
    let server = Server::start().await;
    people_workbook(&server);
    let modified = std::fs::metadata(server.file(ID))
        .unwrap()
        .modified()
        .unwrap();
    let earlier = httpdate::fmt_http_date(modified - std::time::Duration::from_secs(3600));
    let bytes = std::fs::read(server.file(ID)).unwrap();
    let stale = [("If-Unmodified-Since", earlier.as_str())];
    let response = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &stale,
        set_age(50),
    )
    .await;
    assert_eq!(response.status(), 412);
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), bytes);

    let current = httpdate::fmt_http_date(modified);
    let fresh = [("If-Unmodified-Since", current.as_str())];
    let response = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &fresh,
        set_age(50),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(ages(&server)[1], Data::Float(50.0));
}

/// A copy put in place with its old date kept (`cp -p`, a backup unpacked)
/// changed the workbook now, whatever its modification time says: a date a
/// client read before names a version gone.
#[tokio::test]
async fn a_file_copied_in_with_an_old_date_is_modified_since_any_date_read_before() {
    let server = Server::start().await;
    people_workbook(&server);
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let file = std::fs::File::options()
        .write(true)
        .open(server.file(ID))
        .unwrap();
    file.set_modified(hour_ago).unwrap();
    drop(file);
    let read = read_people(&server).await;
    let seen = header(&read, "last-modified").unwrap();

    // Another version, its modification time set back years, renamed in.
    let copy = server.file(ID).with_extension("copy");
    let rows = vec![
        vec![Spec::S("name"), Spec::S("age")],
        vec![Spec::S("x"), Spec::N(1.0)],
    ];
    make_workbook(&copy, &[("People", rows)]);
    let years_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_577_836_800);
    let file = std::fs::File::options().write(true).open(&copy).unwrap();
    file.set_modified(years_ago).unwrap();
    drop(file);
    std::fs::rename(&copy, server.file(ID)).unwrap();
    let bytes = std::fs::read(server.file(ID)).unwrap();

    let since = [("If-Unmodified-Since", seen.as_str())];
    let response = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &since,
        set_age(50),
    )
    .await;
    assert_eq!(response.status(), 412);
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), bytes);
    let since = [("If-Modified-Since", seen.as_str())];
    let response = send(&server, Method::GET, &rows_path("People"), &since, None).await;
    assert_eq!(response.status(), 200);
}

/// Two writes within one second leave two versions with the same
/// `Last-Modified` (HTTP dates have whole seconds): the first's date must
/// not let a write through over the second (§11.5: 412 when the workbook is
/// no longer that version), nor a read answer 304. Whether or not the two
/// writes share a second, the first's date names a version gone.
#[tokio::test]
async fn a_date_two_versions_share_names_neither() {
    let server = Server::start().await;
    people_workbook(&server);
    let first = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &[],
        set_age(51),
    )
    .await;
    assert_eq!(first.status(), 200);
    let first_date = header(&first, "last-modified").unwrap();
    let second = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &[],
        set_age(52),
    )
    .await;
    assert_eq!(second.status(), 200);
    let bytes = std::fs::read(server.file(ID)).unwrap();

    let since_first = [("If-Unmodified-Since", first_date.as_str())];
    let response = send(
        &server,
        Method::PATCH,
        &rows_path("People"),
        &since_first,
        set_age(1),
    )
    .await;
    assert_eq!(response.status(), 412, "the second write is not lost");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), bytes);
    assert_eq!(ages(&server)[1], Data::Float(52.0));

    let modified_since = [("If-Modified-Since", first_date.as_str())];
    let response = send(
        &server,
        Method::GET,
        &rows_path("People"),
        &modified_since,
        None,
    )
    .await;
    assert_eq!(
        response.status(),
        200,
        "the rows changed since the first write"
    );

    // A server started afresh knows it from the version the second write
    // kept of the first.
    let fresh = Server::start_sharing(server.data_dir()).await;
    let response = send(
        &fresh,
        Method::GET,
        &rows_path("People"),
        &modified_since,
        None,
    )
    .await;
    assert_eq!(response.status(), 200, "after a restart");
    let response = send(
        &fresh,
        Method::PATCH,
        &rows_path("People"),
        &since_first,
        set_age(1),
    )
    .await;
    assert_eq!(response.status(), 412, "after a restart");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), bytes);
}

#[tokio::test]
async fn a_malformed_if_match_is_400() {
    let server = Server::start().await;
    people_workbook(&server);
    let bytes = std::fs::read(server.file(ID)).unwrap();
    for bad in ["abc", "\"unterminated", "\"a\" \"b\"", ""] {
        let response = send(
            &server,
            Method::PATCH,
            &rows_path("People"),
            &[("If-Match", bad)],
            set_age(60),
        )
        .await;
        let (status, body) = json_of(response).await;
        assert_eq!(status, 400, "If-Match: {bad}");
        assert_eq!(
            body["error"],
            "If-Match: must be * or a comma-separated list of quoted entity tags (\"…\" or W/\"…\")"
        );
    }
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), bytes);
}

/// Ten writes sent at once with the same `If-Match`: whichever takes its
/// turn first is made; the other nine find the workbook changed, whether
/// they are committed in the same group as the first or after it.
#[tokio::test]
async fn of_ten_concurrent_writes_with_the_same_if_match_exactly_one_is_made() {
    let server = Server::start().await;
    people_workbook(&server);
    let current = tag_of_file(&server.file(ID));
    let writes: Vec<_> = (0..10u32)
        .map(|i| {
            let request = server
                .client
                .patch(format!("{}{}", server.base, rows_path("People")))
                .header("If-Match", &current)
                .json(&set_age(100 + i));
            tokio::spawn(async move { (i, request.send().await.expect("sent")) })
        })
        .collect();
    let mut made = Vec::new();
    let mut refused = 0;
    for write in writes {
        let (i, response) = write.await.unwrap();
        match response.status().as_u16() {
            200 => made.push((i, etag(&response))),
            412 => refused += 1,
            other => panic!("write {i}: {other}"),
        }
    }
    assert_eq!(made.len(), 1, "exactly one write is made");
    assert_eq!(refused, 9);
    let (i, new) = &made[0];
    assert_eq!(*new, tag_of_file(&server.file(ID)));
    let expected: Vec<Data> = vec![
        s("age"),
        Data::Float(f64::from(100 + i)),
        Data::Float(25.0),
        Data::Float(41.0),
    ];
    assert_eq!(ages(&server), expected, "one change on disk");
}

/// Ten writes with the same `If-Match` that queue while another write
/// holds the workbook's turn (it parses a large workbook the server has not
/// read yet) are committed together, with one rewrite: the first is made,
/// and the nine after it, in the same commit, find a workbook it changed.
#[tokio::test]
async fn ten_writes_with_one_if_match_queued_behind_another_are_made_once() {
    let server = Server::start().await;
    let mut rows = vec![vec![Spec::S("name"), Spec::S("age")]];
    rows.extend((0..30_000).map(|i| vec![Spec::S("someone"), Spec::N(f64::from(i))]));
    make_workbook(&server.file(ID), &[("People", rows)]);
    // The tag is the file's hash: known without asking the server, so the
    // server has not parsed the workbook when the writes arrive.
    let current = tag_of_file(&server.file(ID));
    let patch = |body: Value| {
        server
            .client
            .patch(format!("{}{}", server.base, rows_path("People")))
            .json(&body)
    };
    let nobody = json!({"type": "filter", "filter": "name:eq:Nobody", "data": {"age": 1}});
    let holding = tokio::spawn(patch(nobody).send());
    let writes: Vec<_> = (0..10u32)
        .map(|i| {
            let request = patch(set_age(100 + i).unwrap()).header("If-Match", &current);
            tokio::spawn(async move { (i, request.send().await.expect("sent")) })
        })
        .collect();
    let held = holding.await.unwrap().unwrap();
    assert_eq!(held.status(), 200);
    assert_eq!(
        etag(&held),
        current,
        "the write that matched nothing changed nothing"
    );
    let mut made = Vec::new();
    let mut refused = 0;
    for write in writes {
        let (i, response) = write.await.unwrap();
        match response.status().as_u16() {
            200 => made.push(i),
            412 => refused += 1,
            other => panic!("write {i}: {other}"),
        }
    }
    assert_eq!((made.len(), refused), (1, 9));
    let on_disk = read_sheet(&server.file(ID), "People");
    assert_eq!(on_disk[1][1], Data::Float(f64::from(100 + made[0])));
    assert_eq!(on_disk[2][1], Data::Float(1.0), "the next row is as it was");
}

#[tokio::test]
async fn the_listing_gives_each_workbook_the_etag_its_download_carries() {
    let server = Server::start().await;
    people_workbook(&server);
    let listed = |body: &Value| body["spreadsheets"][0]["etag"].as_str().unwrap().to_owned();
    let (status, body) = server.get("/v1/spreadsheets").await;
    assert_eq!(status, 200);
    let download = server.download(ID).await;
    assert_eq!(listed(&body), etag(&download));

    let (status, _) = server
        .patch(&rows_path("People"), set_age(70).unwrap())
        .await;
    assert_eq!(status, 200);
    let (_, body) = server.get("/v1/spreadsheets").await;
    let download = server.download(ID).await;
    assert_eq!(listed(&body), etag(&download));
    assert_eq!(listed(&body), tag_of_file(&server.file(ID)));
}

#[tokio::test]
async fn deleting_a_workbook_with_a_stale_if_match_is_412_and_keeps_it() {
    let server = Server::start().await;
    people_workbook(&server);
    let path = format!("/v1/spreadsheets/{ID}");
    let bytes = std::fs::read(server.file(ID)).unwrap();
    let response = send(
        &server,
        Method::DELETE,
        &path,
        &[("If-Match", "\"stale\"")],
        None,
    )
    .await;
    assert_eq!(response.status(), 412);
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        bytes,
        "kept as it was"
    );

    let current = tag_of_file(&server.file(ID));
    let response = send(
        &server,
        Method::DELETE,
        &path,
        &[("If-Match", &current)],
        None,
    )
    .await;
    assert_eq!(response.status(), 204);
    assert!(!server.file(ID).exists());
}

#[tokio::test]
async fn put_honours_if_match_and_if_none_match_star() {
    let server = Server::start().await;
    people_workbook(&server);
    let path = format!("/v1/spreadsheets/{ID}");
    let upload = |headers: Vec<(&'static str, String)>, id_path: String| {
        let mut request = server
            .client
            .put(format!("{}{id_path}", server.base))
            .header(
                "Content-Type",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            )
            .body(std::fs::read(fixture_path("libreoffice/people.xlsx")).unwrap());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        request.send()
    };
    let bytes = std::fs::read(server.file(ID)).unwrap();
    let response = upload(vec![("If-Match", "\"stale\"".into())], path.clone())
        .await
        .unwrap();
    assert_eq!(response.status(), 412);
    let response = upload(vec![("If-None-Match", "*".into())], path.clone())
        .await
        .unwrap();
    assert_eq!(response.status(), 412, "If-None-Match: * only creates");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), bytes);

    let current = tag_of_file(&server.file(ID));
    let response = upload(vec![("If-Match", current.clone())], path)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(etag(&response), tag_of_file(&server.file(ID)));
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        std::fs::read(fixture_path("libreoffice/people.xlsx")).unwrap()
    );

    let new_id = "0b1e3a5c-0000-4000-8000-00000000000b";
    let response = upload(
        vec![("If-None-Match", "*".into())],
        format!("/v1/spreadsheets/{new_id}"),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(etag(&response), tag_of_file(&server.file(new_id)));
}

#[tokio::test]
async fn an_upload_answers_the_etag_of_the_stored_file() {
    let server = Server::start().await;
    let response = server
        .client
        .post(format!("{}/v1/spreadsheets", server.base))
        .json(&json!({"sheets": [{"name": "People", "columns": ["name", "age"]}]}))
        .send()
        .await
        .unwrap();
    let tag = etag(&response);
    let (status, body) = json_of(response).await;
    assert_eq!(status, 201);
    let id = body["spreadsheet_id"].as_str().unwrap();
    assert_eq!(tag, tag_of_file(&server.file(id)));
}

#[tokio::test]
async fn a_replayed_write_carries_the_etag_it_had() {
    let server = Server::start().await;
    people_workbook(&server);
    let key = [("Idempotency-Key", "conditional-1")];
    let insert = || Some(json!({"data": [{"name": "Dan"}]}));
    let first = send(&server, Method::POST, &rows_path("People"), &key, insert()).await;
    assert_eq!(first.status(), 201);
    let (status, _) = server
        .patch(&rows_path("People"), set_age(80).unwrap())
        .await;
    assert_eq!(status, 200);
    let again = send(&server, Method::POST, &rows_path("People"), &key, insert()).await;
    assert_eq!(again.status(), 201);
    assert_eq!(
        header(&again, "idempotent-replayed").as_deref(),
        Some("true")
    );
    assert_eq!(etag(&again), etag(&first));

    // A write that changed nothing is replayed with the tag it answered.
    let key = [("Idempotency-Key", "conditional-2")];
    let nobody = || Some(json!({"type": "filter", "filter": "name:eq:Nobody", "data": {"age": 1}}));
    let first = send(&server, Method::PATCH, &rows_path("People"), &key, nobody()).await;
    assert_eq!(etag(&first), tag_of_file(&server.file(ID)));
    let again = send(&server, Method::PATCH, &rows_path("People"), &key, nobody()).await;
    assert_eq!(
        header(&again, "idempotent-replayed").as_deref(),
        Some("true")
    );
    assert_eq!(etag(&again), etag(&first));
}

/// The OpenAPI description lists the conditional headers of each route,
/// 412 for every write and 304 for every read of one workbook.
#[tokio::test]
async fn the_openapi_description_lists_the_headers_304_and_412() {
    let server = Server::start().await;
    let (status, spec) = server.get("/v1/openapi.json").await;
    assert_eq!(status, 200);
    let rows = "/v1/data/{spreadsheet_id}/{sheet_name}";
    let sheets = "/v1/data/{spreadsheet_id}";
    let workbook = "/v1/spreadsheets/{spreadsheet_id}";
    let header_names = |operation: &Value| -> Vec<String> {
        operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "header")
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let writes = [
        (rows, "post"),
        (rows, "patch"),
        (rows, "delete"),
        (sheets, "post"),
        (workbook, "put"),
        (workbook, "delete"),
    ];
    for (path, method) in writes {
        let operation = &spec["paths"][path][method];
        assert!(
            operation["responses"]["412"].is_object(),
            "{method} {path} lists 412"
        );
        let headers = header_names(operation);
        for name in ["If-Match", "If-Unmodified-Since"] {
            assert!(headers.iter().any(|h| h == name), "{method} {path}: {name}");
        }
    }
    for path in [rows, sheets, workbook] {
        let operation = &spec["paths"][path]["get"];
        assert!(
            operation["responses"]["304"].is_object(),
            "get {path} lists 304"
        );
        assert!(
            operation["responses"]["200"]["headers"]["ETag"].is_object(),
            "get {path}"
        );
        let headers = header_names(operation);
        assert!(headers.iter().any(|h| h == "If-None-Match"), "get {path}");
    }
    let listed = &spec["components"]["schemas"]["SpreadsheetSummary"]["properties"];
    assert!(
        listed["etag"].is_object(),
        "the listing's etag is described"
    );
}

#[tokio::test]
async fn a_read_with_an_if_match_that_does_not_hold_is_412() {
    let server = Server::start().await;
    people_workbook(&server);
    let stale = [("If-Match", "\"stale\"")];
    let response = send(&server, Method::GET, &rows_path("People"), &stale, None).await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, 412);
    assert_eq!(body["error"], "Precondition Failed");
    let current = tag_of_file(&server.file(ID));
    let response = send(
        &server,
        Method::GET,
        &rows_path("People"),
        &[("If-Match", &current)],
        None,
    )
    .await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_read_that_fails_fails_whatever_its_conditions() {
    let server = Server::start().await;
    people_workbook(&server);
    let current = tag_of_file(&server.file(ID));
    let if_none_match = [("If-None-Match", current.as_str())];
    let response = send(
        &server,
        Method::GET,
        &rows_path("Nowhere"),
        &if_none_match,
        None,
    )
    .await;
    assert_eq!(response.status(), 404);
    let unknown_column = format!("{}?filter=height:eq:2", rows_path("People"));
    let response = send(&server, Method::GET, &unknown_column, &if_none_match, None).await;
    assert_eq!(response.status(), 400);
}

/// Two processes sharing a data directory give a file the same tag, and a
/// write through one is seen by the other's next read and `If-Match`.
#[tokio::test]
async fn two_servers_on_one_data_directory_agree_on_the_etag() {
    let first = Server::start().await;
    people_workbook(&first);
    let second = Server::start_sharing(first.data_dir()).await;
    let before = etag(&read_people(&first).await);
    assert_eq!(etag(&read_people(&second).await), before);

    let response = send(
        &first,
        Method::PATCH,
        &rows_path("People"),
        &[],
        set_age(90),
    )
    .await;
    let after = etag(&response);
    assert_eq!(etag(&read_people(&second).await), after);
    let stale = [("If-Match", before.as_str())];
    let response = send(
        &second,
        Method::PATCH,
        &rows_path("People"),
        &stale,
        set_age(91),
    )
    .await;
    assert_eq!(response.status(), 412);
    let fresh = [("If-Match", after.as_str())];
    let response = send(
        &second,
        Method::PATCH,
        &rows_path("People"),
        &fresh,
        set_age(92),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(ages(&first)[1], Data::Float(92.0));
}

/// `GET` the People rows.
async fn read_people(server: &Server) -> reqwest::Response {
    send(server, Method::GET, &rows_path("People"), &[], None).await
}
