//! The configurable limits: rows per request, cells per workbook, the
//! per-spreadsheet queue and its wait; and the format's column limit.

mod common;

use std::fs::OpenOptions;

use calamine::Data;
use common::*;
use serde_json::{Map, Value, json};

#[tokio::test]
async fn inserts_over_the_row_limit_are_refused() {
    let server = Server::start_with(|c| c.max_rows_per_request = 2).await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let rows = json!({"data": [{"name": "a"}, {"name": "b"}, {"name": "c"}]});
    let (status, body) = server.post(&rows_path("People"), rows).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data: holds 3 rows; one request may insert at most 2"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
    let (status, _) = server
        .post(
            &rows_path("People"),
            json!({"data": [{"name": "a"}, {"name": "b"}]}),
        )
        .await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn writes_may_not_grow_a_workbook_past_the_cell_limit() {
    // People: 4 rows x 5 columns, Other: 3 rows x 2 columns = 26 cells.
    let server = Server::start_with(|c| c.max_cells = 30).await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let wide = json!({"data": [{"name": "a", "active": true}, {"name": "b", "active": true}]});
    let (status, body) = server.post(&rows_path("People"), wide).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("past 30 cells"),
        "{body}"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "a"}]}))
        .await;
    assert_eq!(status, 201);
}

/// The same refusal once a write has kept its writer for the next insert:
/// the refused rows reach neither the file nor the inserts after them.
#[tokio::test]
async fn a_refused_insert_leaves_no_rows_behind_for_the_next_one() {
    let server = Server::start_with(|c| c.max_cells = 30).await;
    people_workbook(&server);
    let name = |n: &str| json!({"data": [{"name": n}]});
    assert_eq!(server.post(&rows_path("People"), name("a")).await.0, 201);
    let before = std::fs::read(server.file(ID)).unwrap();

    let wide = json!({"data": [{"name": "x", "active": true}, {"name": "y", "active": true}]});
    let (status, body) = server.post(&rows_path("People"), wide).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);

    assert_eq!(server.post(&rows_path("People"), name("b")).await.0, 201);
    let names: Vec<Data> = read_sheet(&server.file(ID), "People")
        .into_iter()
        .map(|row| row[0].clone())
        .collect();
    assert_eq!(names, ["name", "Alice", "Bob", "Carol", "a", "b"].map(s));
}

#[tokio::test]
async fn workbooks_over_the_cell_limit_are_not_served() {
    let server = Server::start_with(|c| c.max_cells = 10).await;
    people_workbook(&server);
    let (status, body) = server.get(&rows_path("People")).await;
    assert_eq!(status, 500, "{body}");
}

#[tokio::test]
async fn a_full_queue_answers_503_with_retry_after() {
    let server = Server::start_with(|c| c.queue_limit = 0).await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let response = server
        .client
        .post(format!("{}{}", server.base, rows_path("People")))
        .json(&json!({"data": [{"name": "x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["retry-after"], "1");
    let (status, body) = json_of(response).await;
    assert_eq!(
        (status.as_u16(), body),
        (
            503,
            json!({"success": false, "error": "Service Unavailable"})
        )
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
    let (status, _) = server.get(&rows_path("People")).await;
    assert_eq!(status, 200, "reads do not queue");
}

#[tokio::test]
async fn a_write_that_waits_too_long_for_its_turn_gets_503() {
    let server = Server::start_with(|c| c.queue_timeout_ms = 100).await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    // Another process holds the spreadsheet's lock.
    let lock_path = server
        .data_dir()
        .join(".sheetd-locks")
        .join(format!("{ID}.lock"));
    let other = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap();
    other.lock().unwrap();

    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);

    other.unlock().unwrap();
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn a_new_header_may_not_pass_the_column_limit() {
    let server = Server::start_with(|c| c.max_body_bytes = 1 << 20).await;
    make_workbook(&server.file(ID), &[("Blank", vec![])]);
    let row: Map<String, Value> = (0..16_385).map(|i| (format!("c{i}"), json!(1))).collect();
    let (status, body) = server
        .post(&rows_path("Blank"), json!({"data": [row]}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "data: names 16385 columns; a sheet has at most 16384"
    );
}
