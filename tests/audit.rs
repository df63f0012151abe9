//! Contract §11.7: the audit log, one JSON line per write request, over a
//! real socket.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use reqwest::Method;
use serde_json::{Value, json};

struct Audited {
    server: Server,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

async fn audited_server() -> Audited {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let path = log.clone();
    let server = Server::start_with(move |c| {
        c.audit_log = Some(path);
        c.tokens = vec!["writer".into()];
        c.read_tokens = vec!["reader".into()];
    })
    .await;
    people_workbook(&server);
    Audited {
        server,
        log,
        _dir: dir,
    }
}

/// Sends a request with a token; the status, the answer's request id and
/// its body.
async fn call(
    server: &Server,
    token: &str,
    method: Method,
    path: &str,
    body: Value,
) -> (u16, String, Value, String) {
    let response = server
        .client
        .request(method, format!("{}{path}", server.base))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("request sent");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map_or("", |v| v.to_str().unwrap())
            .to_owned()
    };
    let (request_id, etag) = (header("x-request-id"), header("etag"));
    let (status, body) = json_of(response).await;
    (status.as_u16(), request_id, body, etag)
}

/// Every line of the log, each parsed as JSON (a line that is not JSON
/// fails the test).
fn lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[tokio::test]
async fn every_write_leaves_one_line_refused_ones_too_and_reads_none() {
    let audited = audited_server().await;
    let server = &audited.server;
    let people = rows_path("People");
    let original = std::fs::read(server.file(ID)).unwrap();

    let insert = call(
        server,
        "writer",
        Method::POST,
        &people,
        json!({"data": [{"name": "Dee"}, {"name": "Eve"}]}),
    )
    .await;
    assert_eq!(insert.0, 201);
    let (status, _) = server.get(&people).await;
    assert_eq!(status, 401, "reads need a token here");
    let read = server
        .client
        .get(format!("{}{people}", server.base))
        .bearer_auth("reader")
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    let forbidden = call(
        server,
        "reader",
        Method::DELETE,
        &people,
        json!({"type": "row", "row": 2}),
    )
    .await;
    assert_eq!(forbidden.0, 403);
    let invalid = call(
        server,
        "writer",
        Method::PATCH,
        &people,
        json!({"type": "row"}),
    )
    .await;
    assert_eq!(invalid.0, 400);
    let update = call(
        server,
        "writer",
        Method::PATCH,
        &people,
        json!({"type": "filter", "filter": "name:like:*e*", "data": {"city": "Rome"}}),
    )
    .await;
    assert_eq!(update.0, 200);

    let lines = lines(&audited.log);
    assert_eq!(lines.len(), 4, "{lines:#?}");
    // ETags: the insert found the file as the test wrote it and left the
    // version its answer names; the refused requests changed nothing; the
    // update found what the insert left.
    assert_eq!(lines[0]["etag_before"], etag_of(&original));
    assert_eq!(lines[0]["etag_after"], insert.3.as_str());
    assert_eq!(lines[1]["etag_before"], insert.3.as_str());
    assert_eq!(lines[1]["etag_after"], Value::Null);
    assert_eq!(lines[3]["etag_before"], insert.3.as_str());
    assert_eq!(
        lines[3]["etag_after"],
        etag_of(&std::fs::read(server.file(ID)).unwrap())
    );
    let expected = [
        (&insert, "--token 1", "insert", 201, json!({"inserted": 2})),
        (&forbidden, "--read-token 1", "delete", 403, json!({})),
        (&invalid, "--token 1", "update", 400, json!({})),
        (&update, "--token 1", "update", 200, update.2.clone()),
    ];
    for (line, (answer, token, operation, status, rows)) in lines.iter().zip(expected) {
        assert_eq!(line["request_id"], answer.1.as_str(), "{line}");
        assert_eq!(line["token"], token, "{line}");
        assert_eq!(line["operation"], operation, "{line}");
        assert_eq!(line["status"], status, "{line}");
        assert_eq!(line["rows"], rows, "{line}");
        assert_eq!(line["spreadsheet"], ID, "{line}");
        assert_eq!(line["sheet"], "People", "{line}");
        assert!(
            line["time"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{line}"
        );
    }
}

#[tokio::test]
async fn a_write_refused_by_its_precondition_is_logged_with_412() {
    let audited = audited_server().await;
    let server = &audited.server;
    let before = std::fs::read(server.file(ID)).unwrap();
    let refused = server
        .client
        .post(format!("{}{}", server.base, rows_path("People")))
        .bearer_auth("writer")
        .header("If-Match", format!("\"{}\"", "0".repeat(64)))
        .json(&json!({"data": [{"name": "Dee"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 412);
    let lines = lines(&audited.log);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["status"], 412);
    assert_eq!(lines[0]["rows"], json!({}));
    assert_eq!(lines[0]["etag_after"], Value::Null);
    assert_eq!(lines[0]["etag_before"], etag_of(&before));
}

#[tokio::test]
async fn concurrent_writes_leave_whole_lines() {
    let audited = audited_server().await;
    let base = audited.server.base.clone();
    let writes: Vec<_> = (0..40)
        .map(|i| {
            let url = format!("{base}{}", rows_path("People"));
            tokio::spawn(async move {
                reqwest::Client::new()
                    .post(url)
                    .bearer_auth("writer")
                    .json(&json!({"data": [{"name": format!("n{i}")}]}))
                    .send()
                    .await
                    .unwrap()
                    .status()
            })
        })
        .collect();
    for write in writes {
        assert_eq!(write.await.unwrap(), 201);
    }
    let lines = lines(&audited.log);
    assert_eq!(lines.len(), 40);
    assert!(
        lines
            .iter()
            .all(|line| line["rows"] == json!({"inserted": 1}))
    );
}

/// §11.7: the routes that manage workbooks are logged too, under their
/// operation, and a conflict (409) like any refusal.
#[tokio::test]
async fn sheets_and_workbooks_managed_are_logged_a_conflict_too() {
    let audited = audited_server().await;
    let server = &audited.server;
    let original = std::fs::read(server.file(ID)).unwrap();
    let sheets = format!("/v1/data/{ID}");
    let added = call(
        server,
        "writer",
        Method::POST,
        &sheets,
        json!({"name": "Added", "columns": ["k"]}),
    )
    .await;
    assert_eq!(added.0, 201);
    let taken = call(
        server,
        "writer",
        Method::POST,
        &sheets,
        json!({"name": "added", "columns": ["k"]}),
    )
    .await;
    assert_eq!(taken.0, 409);
    let restore = format!(
        "/v1/spreadsheets/{ID}/versions/{}/restore",
        etag_of(&original).trim_matches('"')
    );
    let restored = call(server, "writer", Method::POST, &restore, Value::Null).await;
    assert_eq!(restored.0, 200, "{:?}", restored.2);
    let removed = server
        .client
        .delete(format!("{}/v1/spreadsheets/{ID}", server.base))
        .bearer_auth("writer")
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 204);
    let upload = std::fs::read(fixture_path("openpyxl/people.xlsx")).unwrap();
    let uploaded = server
        .client
        .post(format!("{}/v1/spreadsheets", server.base))
        .bearer_auth("writer")
        .header("content-type", "application/octet-stream")
        .body(upload)
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), 201);
    let created: Value = uploaded.json().await.unwrap();

    let lines = lines(&audited.log);
    let seen: Vec<(Value, Value, Value)> = lines
        .iter()
        .map(|l| {
            (
                l["operation"].clone(),
                l["status"].clone(),
                l["sheet"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (json!("add_sheet"), json!(201), json!("Added")),
            (json!("add_sheet"), json!(409), Value::Null),
            (json!("restore"), json!(200), Value::Null),
            (json!("remove"), json!(204), Value::Null),
            (json!("upload"), json!(201), Value::Null),
        ],
        "{lines:#?}"
    );
    assert_eq!(lines[1]["etag_after"], Value::Null);
    assert_eq!(lines[2]["etag_after"], etag_of(&original).as_str());
    assert_eq!(lines[3]["etag_after"], Value::Null, "nothing is left");
    // The workbook an upload creates is named, as the answer names it.
    assert_eq!(
        lines[4]["spreadsheet"], created["spreadsheet_id"],
        "{lines:#?}"
    );
    assert!(lines[4]["spreadsheet"].is_string());
}
