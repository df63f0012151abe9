//! What one client can hold: connections, request heads and bodies, slots
//! for requests and body memory. Each bound answers in the contract's shape
//! (or closes a connection that sent nothing answerable) and leaves the
//! service answering others.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest any step here may take before the test fails instead of hanging.
const BOUND: Duration = Duration::from_secs(20);

async fn connect(server: &Server) -> TcpStream {
    let address = server.base.trim_start_matches("http://");
    TcpStream::connect(address).await.expect("connect")
}

/// Reads until the server closes the connection; fails after [`BOUND`].
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    tokio::time::timeout(BOUND, stream.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection in time")
        .expect("read");
    String::from_utf8_lossy(&answer).into_owned()
}

/// Status and JSON body of a raw HTTP/1.1 answer.
fn status_and_body(answer: &str) -> (u16, Value) {
    let status = answer
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

async fn healthz_answers(server: &Server) {
    let (status, body) = tokio::time::timeout(BOUND, server.get("/healthz"))
        .await
        .expect("healthz answers in time");
    assert_eq!((status.as_u16(), body), (200, json!({"status": "ok"})));
}

#[tokio::test]
async fn a_half_sent_head_is_closed_after_the_header_timeout() {
    let server = Server::start_with(|c| c.header_timeout_secs = 1).await;
    let mut stalled = connect(&server).await;
    stalled
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut idle = connect(&server).await;
    healthz_answers(&server).await;
    // Closed without an answer: the request was never complete.
    assert_eq!(read_to_close(&mut stalled).await, "");
    assert_eq!(read_to_close(&mut idle).await, "");
}

#[tokio::test]
async fn connections_over_the_cap_get_503_and_are_closed() {
    let server = Server::start_with(|c| c.max_connections = 2).await;
    let _first = connect(&server).await;
    let _second = connect(&server).await;
    let mut third = connect(&server).await;
    let answer = read_to_close(&mut third).await;
    assert!(answer.contains("retry-after: 1\r\n"), "{answer}");
    let (status, body) = status_and_body(&answer);
    assert_eq!(status, 503);
    assert_eq!(body["error"], "Service Unavailable");
    assert_eq!(
        body["detail"],
        "too many connections are open; retry shortly"
    );
    drop((_first, _second));
    // The slots come back once the connections close.
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        if let Ok(response) = server
            .client
            .get(format!("{}/healthz", server.base))
            .send()
            .await
            && response.status() == 200
        {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no slot came back");
        tokio::task::yield_now().await;
    }
}

/// A request whose body never comes: it holds a request slot and the room
/// of its body until the body timeout.
async fn half_sent_body(server: &Server, length: usize) -> TcpStream {
    let mut stream = connect(server).await;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{",
        rows_path("People")
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// Retries `request` until it answers `status` (the half-sent request must
/// first reach the server), failing after [`BOUND`].
async fn answered(server: &Server, status: u16, body: Value) -> Value {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let (got, answer) = server.post(&rows_path("People"), body.clone()).await;
        if got.as_u16() == status {
            return answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still {got}: {answer}"
        );
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_body_that_does_not_come_gets_408_and_nothing_is_written() {
    let server = Server::start_with(|c| c.body_timeout_secs = 1).await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let mut stream = half_sent_body(&server, 1000).await;
    let (status, body) = status_and_body(&read_to_close(&mut stream).await);
    assert_eq!(status, 408);
    assert_eq!(body["error"], "Request Timeout");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

#[tokio::test]
async fn requests_over_the_cap_get_503_and_healthz_still_answers() {
    let server = Server::start_with(|c| c.max_requests = 1).await;
    people_workbook(&server);
    let _holding = half_sent_body(&server, 1000).await;
    let answer = answered(&server, 503, json!({"data": [{"name": "x"}]})).await;
    assert_eq!(
        answer["detail"],
        "too many requests are being handled; retry shortly"
    );
    healthz_answers(&server).await;
}

#[tokio::test]
async fn bodies_over_the_memory_budget_get_503() {
    // Room for 4 KiB of bodies; the half-sent one takes 3 KiB of it.
    let server = Server::start_with(|c| c.max_body_memory = 4096).await;
    people_workbook(&server);
    let _holding = half_sent_body(&server, 3000).await;
    let big = json!({"data": [{"name": "x".repeat(2000)}]});
    let answer = answered(&server, 503, big).await;
    assert_eq!(
        answer["detail"],
        "too many request bodies are being received; retry shortly"
    );
    // A body that fits in what is left is served.
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"name": "y"}]}))
        .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_413_before_the_body_is_read() {
    let server = Server::start_with(|c| c.max_body_bytes = 100).await;
    let mut stream = half_sent_body(&server, 1_000_000).await;
    let (status, body) = status_and_body(&read_to_close(&mut stream).await);
    assert_eq!((status, &body["error"]), (413, &json!("Payload Too Large")));
}

/// Sends a whole body of `length` bytes (declared, or chunked when
/// `chunked`), then reads the answer until the server closes.
async fn send_whole_body(address: String, length: usize, chunked: bool) -> String {
    let stream = TcpStream::connect(address).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let framing = if chunked {
        "Transfer-Encoding: chunked".to_owned()
    } else {
        format!("Content-Length: {length}")
    };
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{framing}\r\n\r\n",
        rows_path("People"),
    );
    let send = async move {
        writer.write_all(head.as_bytes()).await?;
        let chunk = vec![b' '; 16 * 1024];
        for _ in 0..length / chunk.len() {
            if chunked {
                writer
                    .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                    .await?;
                writer.write_all(&chunk).await?;
                writer.write_all(b"\r\n").await?;
            } else {
                writer.write_all(&chunk).await?;
            }
        }
        if chunked {
            writer.write_all(b"0\r\n\r\n").await?;
        }
        writer.flush().await
    };
    let receive = async move {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(BOUND, reader.read_to_end(&mut answer)).await;
        (read, answer)
    };
    // As most clients do (Python's requests, for one): the whole body
    // first, then the answer. A send that fails (the server closed on the
    // rest of the body) loses the answer for such a client.
    if let Err(e) = send.await {
        panic!("the body could not be sent whole ({e}): the answer is lost to the client");
    }
    let (read, answer) = receive.await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    match read {
        Ok(Ok(_)) => answer,
        Ok(Err(e)) => panic!("the answer was lost ({e}); read so far: {answer:?}"),
        Err(_) => panic!("no answer within {BOUND:?}"),
    }
}

#[tokio::test]
async fn every_early_413_reaches_a_client_that_keeps_sending() {
    let server = Server::start_with(|c| c.max_body_bytes = 64 * 1024).await;
    people_workbook(&server);
    let address = server.base.trim_start_matches("http://").to_owned();
    // 8 MiB each: on loopback, socket buffers take a 1 MiB body whole, and
    // the client finishes sending whatever the server does.
    let clients: Vec<_> = (0..20)
        .map(|i| {
            tokio::spawn(send_whole_body(
                address.clone(),
                8 * 1024 * 1024,
                i % 2 == 1,
            ))
        })
        .collect();
    for client in clients {
        let answer = client.await.expect("client task");
        let (status, body) = status_and_body(&answer);
        assert_eq!(
            (status, &body["error"]),
            (413, &json!("Payload Too Large")),
            "{answer}"
        );
    }
    healthz_answers(&server).await;
}
