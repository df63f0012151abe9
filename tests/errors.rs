//! Contract §5: every error, from every layer, in the `{success, error}`
//! shape with the fitting status; authentication first.

mod common;

use common::*;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn unknown_routes_and_methods_answer_in_json() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server.get("/v2/nothing").await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (404, &json!("Not Found"))
    );
    let hint = body["detail"].as_str().unwrap();
    assert!(hint.contains("/v1/openapi.json"), "{hint}");
    let (status, body) = server
        .send(Method::PUT, &rows_path("People"), Some(json!({})))
        .await;
    assert_eq!(
        (status.as_u16(), body),
        (
            405,
            json!({"success": false, "error": "Method Not Allowed"})
        )
    );
}

#[tokio::test]
async fn error_responses_are_json_content() {
    let server = Server::start().await;
    let response = server
        .client
        .get(format!("{}/nothing", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/json");
    assert!(response.headers().contains_key("x-request-id"));
}

#[tokio::test]
async fn bodies_must_be_json() {
    let server = Server::start().await;
    people_workbook(&server);
    let url = format!("{}{}", server.base, rows_path("People"));
    let response = server
        .client
        .post(&url)
        .body(r#"{"data": []}"#)
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!(
        (status.as_u16(), body),
        (
            415,
            json!({"success": false, "error": "Unsupported Media Type",
                "detail": "send the body as JSON with the header Content-Type: application/json"})
        )
    );

    let response = server
        .client
        .post(&url)
        .header("content-type", "application/json; charset=utf-8")
        .body(r#"{"data": []}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);

    let response = server
        .client
        .post(&url)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("body: is not valid JSON"),
        "{body}"
    );
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let server = Server::start_with(|c| c.max_body_bytes = 1024).await;
    people_workbook(&server);
    let big = json!({"data": [{"name": "x".repeat(2000)}]});
    let (status, body) = server.post(&rows_path("People"), big).await;
    assert_eq!(
        (status.as_u16(), body),
        (413, json!({"success": false, "error": "Payload Too Large"}))
    );
}

#[tokio::test]
async fn spreadsheet_ids_must_be_hyphenated_uuids() {
    let server = Server::start().await;
    let (status, body) = server
        .post(
            "/v1/data/0b1e3a5c000040008000000000000000a/People",
            json!({"data": "x"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "spreadsheet_id: must be a UUID in its hyphenated 36-character form, data: must be an array"
    );
    // Any letter case is the same spreadsheet.
    people_workbook(&server);
    let (status, _) = server
        .get(&format!("/v1/data/{}/People", ID.to_uppercase()))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn unknown_spreadsheet_sheet_and_row_are_404() {
    let server = Server::start().await;
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"a": 1}]}))
        .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"], "Not Found");
    assert!(!server.file(ID).exists(), "no file created");
    people_workbook(&server);
    let (status, body) = server.get(&rows_path("Nope")).await;
    assert_eq!(status, 404);
    assert_eq!(body["success"], false);
}

#[tokio::test]
async fn an_unreadable_workbook_is_500_for_itself_only() {
    let server = Server::start().await;
    people_workbook(&server);
    let broken = "0b1e3a5c-0000-4000-8000-0000000000bb";
    std::fs::write(server.file(broken), b"PK\x03\x04 this is no zip").unwrap();
    let (status, body) = server.get(&format!("/v1/data/{broken}/People")).await;
    assert_eq!(status, 500);
    assert_eq!(body["error"], "Internal Server Error");
    assert!(
        !body["detail"].as_str().unwrap_or("").contains('/'),
        "no paths: {body}"
    );
    let (status, _) = server.get(&rows_path("People")).await;
    assert_eq!(status, 200, "other spreadsheets keep working");
}

#[tokio::test]
async fn tokens_are_checked_before_anything_else() {
    let server = Server::start_with(|c| {
        c.tokens = vec!["secret-rw".into()];
        c.read_tokens = vec!["secret-ro".into()];
    })
    .await;
    people_workbook(&server);
    let url = |p: &str| format!("{}{}", server.base, p);

    // No token, a wrong token, even on an unknown route or a bad body: 401.
    for request in [
        server.client.get(url(&rows_path("People"))),
        server.client.get(url("/no/such/route")),
        server
            .client
            .post(url(&rows_path("People")))
            .body("garbage"),
        server
            .client
            .get(url(&rows_path("People")))
            .bearer_auth("wrong"),
    ] {
        let response = request.send().await.unwrap();
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let (status, body) = json_of(response).await;
        assert_eq!(
            (status.as_u16(), body),
            (401, json!({"success": false, "error": "Unauthorized"}))
        );
    }

    // Before the body's size: a head declaring an oversized body, without
    // a token, is answered 401 (the body is never sent).
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let address = server.base.trim_start_matches("http://");
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            rows_path("People"),
            64 << 20
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0; 64];
        let n = socket.read(&mut answer).await.unwrap();
        let status_line = String::from_utf8_lossy(&answer[..n]);
        assert!(status_line.starts_with("HTTP/1.1 401"), "{status_line}");
    }

    let (status, _) = json_of(server.client.get(url("/healthz")).send().await.unwrap()).await;
    assert_eq!(status, 200, "healthz needs no token");

    let read = server
        .client
        .get(url(&rows_path("People")))
        .bearer_auth("secret-ro");
    assert_eq!(read.send().await.unwrap().status(), 200);
    let write = server
        .client
        .post(url(&rows_path("People")))
        .bearer_auth("secret-ro")
        .json(&json!({"data": [{"name": "x"}]}));
    let (status, body) = json_of(write.send().await.unwrap()).await;
    assert_eq!(
        (status.as_u16(), body),
        (
            403,
            json!({"success": false, "error": "Forbidden",
                   "detail": "the token \"--read-token 1\" lacks the permission \"insert\" (it may: read)"})
        )
    );
    let write = server
        .client
        .post(url(&rows_path("People")))
        .bearer_auth("secret-rw")
        .json(&json!({"data": [{"name": "x"}]}));
    assert_eq!(write.send().await.unwrap().status(), 201);
}

#[tokio::test]
async fn healthz_is_ok() {
    let server = Server::start().await;
    assert_eq!(server.get("/healthz").await.1, json!({"status": "ok"}));
}

/// A query with a %-escape that is no UTF-8 is refused, as such a path is,
/// rather than read with U+FFFD in its place; an escaped UTF-8 character
/// is read.
#[tokio::test]
async fn a_query_that_does_not_decode_is_400() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, body) = server
        .get(&format!("{}?filter=name:eq:%FF", rows_path("People")))
        .await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (
            400,
            &json!("query: could not be decoded (a %-escape that is no UTF-8)")
        )
    );
    let (status, body) = server
        .get(&format!("{}?filter=name:eq:%C3%A9", rows_path("People")))
        .await;
    assert_eq!(
        (status.as_u16(), &body["total"]),
        (200, &json!(0)),
        "{body}"
    );
}
