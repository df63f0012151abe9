//! Browsers (contract §10.4): `--cors-origin` lets pages on those origins
//! call the API; a preflight is answered 204 before authentication.

mod common;

use common::*;
use reqwest::Method;

const APP: &str = "https://app.example.com";

async fn preflight(server: &Server, origin: &str) -> reqwest::Response {
    server
        .client
        .request(
            Method::OPTIONS,
            format!("{}{}", server.base, rows_path("People")),
        )
        .header("origin", origin)
        .header("access-control-request-method", "PATCH")
        .header(
            "access-control-request-headers",
            "authorization, content-type, idempotency-key",
        )
        .send()
        .await
        .unwrap()
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn a_configured_origin_gets_its_preflight_and_reads_answers() {
    let server = Server::start_with(|c| {
        c.cors_origins = vec![APP.into()];
        c.tokens = vec!["secret".into()];
    })
    .await;
    people_workbook(&server);

    // No token on a preflight: answered anyway, before authentication.
    let response = preflight(&server, APP).await;
    assert_eq!(response.status(), 204);
    assert_eq!(header(&response, "access-control-allow-origin"), Some(APP));
    let methods = header(&response, "access-control-allow-methods").unwrap();
    assert!(methods.contains("PATCH"), "{methods}");
    let headers = header(&response, "access-control-allow-headers").unwrap();
    for name in ["authorization", "content-type", "idempotency-key"] {
        assert!(headers.contains(name), "{headers}");
    }

    let response = server
        .client
        .get(format!("{}{}", server.base, rows_path("People")))
        .header("origin", APP)
        .bearer_auth("secret")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "access-control-allow-origin"), Some(APP));
    let exposed = header(&response, "access-control-expose-headers").unwrap();
    assert!(
        exposed.contains("x-total-count") && exposed.contains("link"),
        "{exposed}"
    );

    // An error is readable by the page too.
    let response = server
        .client
        .get(format!("{}{}", server.base, rows_path("People")))
        .header("origin", APP)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(header(&response, "access-control-allow-origin"), Some(APP));
    // A 404, and a 503 whose Retry-After the page may read.
    let unknown = "/v1/data/0b1e3a5c-0000-4000-8000-0000000000ff/People";
    let response = server
        .client
        .get(format!("{}{unknown}", server.base))
        .header("origin", APP)
        .bearer_auth("secret")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(header(&response, "access-control-allow-origin"), Some(APP));
    let exposed = header(&response, "access-control-expose-headers").unwrap();
    assert!(exposed.contains("retry-after"), "{exposed}");

    // Another site is not allowed.
    let response = preflight(&server, "https://evil.example").await;
    assert_eq!(header(&response, "access-control-allow-origin"), None);
}

#[tokio::test]
async fn without_origins_there_is_no_cors() {
    let server = Server::start().await;
    people_workbook(&server);
    let response = preflight(&server, APP).await;
    assert_eq!(response.status(), 405);
    assert_eq!(header(&response, "access-control-allow-origin"), None);
}

#[tokio::test]
async fn a_star_allows_any_origin() {
    let server = Server::start_with(|c| c.cors_origins = vec!["*".into()]).await;
    people_workbook(&server);
    let response = preflight(&server, "https://anywhere.example").await;
    assert_eq!(response.status(), 204);
    assert_eq!(header(&response, "access-control-allow-origin"), Some("*"));
}
