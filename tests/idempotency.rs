//! `Idempotency-Key`: a write sent again with the same key gets the first
//! answer and is not applied again, also after a restart.

mod common;

use calamine::Data;
use common::*;
use reqwest::Method;
use serde_json::{Value, json};

/// Sends a write with an idempotency key; returns status, whether the
/// answer is marked as a replay, and the body.
async fn send(
    server: &Server,
    method: Method,
    path: &str,
    key: &str,
    body: Value,
) -> (u16, bool, Value) {
    let response = server
        .client
        .request(method, format!("{}{path}", server.base))
        .header("Idempotency-Key", key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true");
    let (status, body) = json_of(response).await;
    (status.as_u16(), replayed, body)
}

fn names(server: &Server) -> Vec<Data> {
    read_sheet(&server.file(ID), "People")
        .into_iter()
        .map(|row| row[0].clone())
        .collect()
}

#[tokio::test]
async fn a_write_sent_again_with_its_key_is_answered_again_and_not_applied_again() {
    let server = Server::start().await;
    people_workbook(&server);
    let insert = json!({"data": [{"name": "once"}]});
    let first = send(
        &server,
        Method::POST,
        &rows_path("People"),
        "k-1",
        insert.clone(),
    )
    .await;
    assert_eq!(first, (201, false, json!({"inserted": 1})));
    let again = send(&server, Method::POST, &rows_path("People"), "k-1", insert).await;
    assert_eq!(again, (201, true, json!({"inserted": 1})));
    assert_eq!(
        names(&server),
        ["name", "Alice", "Bob", "Carol", "once"].map(s)
    );

    let update = json!({"type": "filter", "filter": "name:eq:once", "data": {"age": 7}});
    for replayed in [false, true] {
        let answer = send(
            &server,
            Method::PATCH,
            &rows_path("People"),
            "k-2",
            update.clone(),
        )
        .await;
        assert_eq!(answer, (200, replayed, json!({"updated": 1})));
    }
    let delete = json!({"type": "filter", "filter": "name:eq:once"});
    for replayed in [false, true] {
        let answer = send(
            &server,
            Method::DELETE,
            &rows_path("People"),
            "k-3",
            delete.clone(),
        )
        .await;
        assert_eq!(answer, (200, replayed, json!({"deleted": 1})));
    }
    assert_eq!(names(&server), ["name", "Alice", "Bob", "Carol"].map(s));
}

#[tokio::test]
async fn a_key_is_remembered_across_a_restart() {
    let server = Server::start().await;
    people_workbook(&server);
    let insert = json!({"data": [{"name": "before the restart"}]});
    let first = send(
        &server,
        Method::POST,
        &rows_path("People"),
        "k",
        insert.clone(),
    )
    .await;
    assert_eq!(first.0, 201);
    // Later writes replace the file the key's write made.
    let later = json!({"data": [{"name": "after"}]});
    assert_eq!(server.post(&rows_path("People"), later).await.0, 201);
    // A new server on the same directory reads the keys from disk.
    let restarted = Server::start_sharing(server.data_dir()).await;
    let again = send(&restarted, Method::POST, &rows_path("People"), "k", insert).await;
    assert_eq!(again, (201, true, json!({"inserted": 1})));
    let rows = names(&server);
    assert_eq!(
        rows.iter()
            .filter(|n| **n == s("before the restart"))
            .count(),
        1
    );
}

#[tokio::test]
async fn a_key_with_another_request_runs_it_and_a_malformed_key_is_refused() {
    let server = Server::start().await;
    people_workbook(&server);
    let path = rows_path("People");
    let (status, _, _) = send(
        &server,
        Method::POST,
        &path,
        "k",
        json!({"data": [{"name": "a"}]}),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _, body) = send(
        &server,
        Method::POST,
        &path,
        "k",
        json!({"data": [{"name": "b"}]}),
    )
    .await;
    // Another body: another request, run, not answered as the first.
    assert_eq!((status, body), (201, json!({"inserted": 1})));
    for bad in ["has space", &"x".repeat(256)] {
        let (status, _, body) = send(
            &server,
            Method::POST,
            &path,
            bad,
            json!({"data": [{"name": "c"}]}),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("Idempotency-Key: must be")
        );
    }
    assert_eq!(
        names(&server),
        ["name", "Alice", "Bob", "Carol", "a", "b"].map(s)
    );
}

#[tokio::test]
async fn a_failed_write_does_not_use_up_its_key() {
    let server = Server::start().await;
    people_workbook(&server);
    let insert = json!({"data": [{"name": "late"}]});
    let missing = send(
        &server,
        Method::POST,
        &rows_path("Nope"),
        "k",
        insert.clone(),
    )
    .await;
    assert_eq!(missing.0, 404);
    // Same key, same request: not a replay of the 404, but run again.
    let missing = send(&server, Method::POST, &rows_path("Nope"), "k", insert).await;
    assert_eq!((missing.0, missing.1), (404, false));
}

#[tokio::test]
async fn an_upload_sent_again_with_its_key_stores_one_workbook() {
    let server = Server::start().await;
    let bytes = std::fs::read(fixture_path("openpyxl/people.xlsx")).unwrap();
    let mut answers = Vec::new();
    for _ in 0..2 {
        let response = server
            .client
            .post(format!("{}/v1/spreadsheets", server.base))
            .header("content-type", "application/octet-stream")
            .header("Idempotency-Key", "upload-1")
            .body(bytes.clone())
            .send()
            .await
            .unwrap();
        let replayed = response.headers().contains_key("idempotent-replayed");
        let (status, body) = json_of(response).await;
        answers.push((status.as_u16(), replayed, body["spreadsheet_id"].clone()));
    }
    assert_eq!(answers[0].0, 201);
    assert_eq!(answers[1], (201, true, answers[0].2.clone()));
    assert_eq!(server.stored_files().len(), 1);
}

/// An answer about a workbook removed since is not given again: the
/// request runs anew. An upload stores its workbook again (under a new
/// id), a row write finds no workbook.
#[tokio::test]
async fn a_key_whose_workbook_was_removed_runs_its_request_again() {
    let server = Server::start().await;
    let bytes = std::fs::read(fixture_path("openpyxl/people.xlsx")).unwrap();
    let upload = || {
        server
            .client
            .post(format!("{}/v1/spreadsheets", server.base))
            .header("content-type", "application/octet-stream")
            .header("Idempotency-Key", "upload-2")
            .body(bytes.clone())
            .send()
    };
    let (status, first) = json_of(upload().await.unwrap()).await;
    assert_eq!(status, 201);
    let first = first["spreadsheet_id"].as_str().unwrap().to_owned();
    let removed = server
        .send(Method::DELETE, &format!("/v1/spreadsheets/{first}"), None)
        .await;
    assert_eq!(removed.0, 204);
    let again = upload().await.unwrap();
    assert!(!again.headers().contains_key("idempotent-replayed"));
    let (status, second) = json_of(again).await;
    assert_eq!(status, 201);
    assert_ne!(second["spreadsheet_id"], first.as_str());
    assert_eq!(server.stored_files().len(), 1);

    people_workbook(&server);
    let insert = json!({"data": [{"name": "once"}]});
    let path = rows_path("People");
    let (status, _, _) = send(&server, Method::POST, &path, "insert-9", insert.clone()).await;
    assert_eq!(status, 201);
    std::fs::remove_file(server.file(ID)).unwrap();
    let (status, replayed, _) = send(&server, Method::POST, &path, "insert-9", insert).await;
    assert_eq!((status, replayed), (404, false));
}
