//! §10.4 `GET /docs`: the API explorer's page and assets come from sheetd
//! itself and need no token. (The page is checked in a real browser by
//! `tools/explorer/check.mjs`, which `.ci/explorer-check.sh` runs.)

mod common;

use common::*;
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION};

async fn server_with_a_token() -> Server {
    Server::start_with(|config| config.tokens = vec!["secret".into()]).await
}

#[tokio::test]
async fn the_page_loads_without_a_token_and_names_only_its_own_assets() {
    let server = server_with_a_token().await;
    let page = server
        .client
        .get(format!("{}/docs", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()[CONTENT_TYPE], "text/html; charset=utf-8");
    let policy = page.headers()[CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(policy.contains("default-src 'self'"), "{policy}");
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    let html = page.text().await.unwrap();
    let sources: Vec<&str> = html
        .split(['"', '\''])
        .filter(|s| s.ends_with(".js") || s.ends_with(".css"))
        .collect();
    assert_eq!(
        sources,
        [
            "docs/swagger-ui.css",
            "docs/explorer.css",
            "docs/swagger-ui-bundle.js",
            "docs/explorer.js"
        ]
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );

    for (asset, content_type) in [
        ("swagger-ui.css", "text/css; charset=utf-8"),
        ("explorer.css", "text/css; charset=utf-8"),
        ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
        ("explorer.js", "text/javascript; charset=utf-8"),
    ] {
        let answer = server
            .client
            .get(format!("{}/docs/{asset}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{asset}");
        assert_eq!(answer.headers()[CONTENT_TYPE], content_type, "{asset}");
        assert!(answer.headers().contains_key(CACHE_CONTROL), "{asset}");
        let bytes = answer.bytes().await.unwrap();
        assert!(bytes.len() > 100, "{asset}: {} bytes", bytes.len());
    }
    let script = server.text("/docs/explorer.js").await;
    assert!(script.contains("validatorUrl: null"), "no online validator");
    assert!(script.contains("\"docs/openapi.json\""), "{script}");
}

#[tokio::test]
async fn the_explorer_reads_the_served_description_without_a_token() {
    let server = server_with_a_token().await;
    let (status, copy) = server.get("/docs/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = server.get("/v1/openapi.json").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the API's own route keeps its token"
    );
    let served = server
        .client
        .get(format!("{}/v1/openapi.json", server.base))
        .bearer_auth("secret")
        .send()
        .await
        .unwrap();
    let (_, served) = json_of(served).await;
    assert_eq!(copy, served);
    // Calls from the page need the token like any other.
    let (status, _) = server.get("/v1/spreadsheets").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_root_leads_to_the_explorer_and_unknown_assets_are_404() {
    let server = server_with_a_token().await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for (from, status) in [
        ("/", StatusCode::TEMPORARY_REDIRECT),
        ("/docs/", StatusCode::PERMANENT_REDIRECT),
    ] {
        let answer = client
            .get(format!("{}{from}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), status, "{from}");
        assert_eq!(answer.headers()[LOCATION], "/docs", "{from}");
    }
    // Authentication first, as for every path the explorer does not have.
    let (status, _) = server.get("/docs/swagger-ui.js.map").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let answer = server
        .client
        .get(format!("{}/docs/swagger-ui.js.map", server.base))
        .bearer_auth("secret")
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(answer).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "Not Found");
    // Only reading the explorer goes without a token.
    let (status, _) = server.post("/docs", serde_json::json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let answer = server
        .client
        .post(format!("{}/docs", server.base))
        .bearer_auth("secret")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED);
    // Like every route, the explorer's refuse unknown query parameters.
    for path in ["/docs?x=1", "/docs/explorer.js?v=2", "/docs/openapi.json?x"] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
    }
}
