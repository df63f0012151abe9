//! Contract §4.6: `GET /v1/openapi.json` is a valid OpenAPI 3 description
//! naming exactly the routes and methods the router serves.

mod common;

use common::*;
use reqwest::Method;
use serde_json::Value;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

#[tokio::test]
async fn openapi_is_valid_and_names_every_route() {
    let server = Server::start().await;
    people_workbook(&server);
    let (status, spec) = server.get("/v1/openapi.json").await;
    assert_eq!(status, 200);

    let parsed = oas3::from_json(spec.to_string()).expect("parses as OpenAPI 3.1");
    assert!(
        parsed.openapi.starts_with("3."),
        "version {}",
        parsed.openapi
    );

    let paths = spec["paths"].as_object().expect("paths");
    let mut described = Vec::new();
    for (template, item) in paths {
        let path = template
            .replace("{spreadsheet_id}", ID)
            .replace("{sheet_name}", "People");
        for method in METHODS {
            let in_spec = item.get(method).is_some();
            let verb = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let (status, body) = probe(&server, verb, &path).await;
            let route_missing = status == 404 && body.get("detail").is_none();
            if in_spec {
                described.push(format!("{method} {template}"));
                assert!(
                    status != 405 && !route_missing,
                    "{method} {template} is described but not served ({status} {body})"
                );
            } else {
                assert_eq!(
                    status, 405,
                    "{method} {template} is served but not described"
                );
            }
        }
    }
    // The routes of contract §4, each once.
    described.sort();
    assert_eq!(
        described,
        [
            "delete /v1/data/{spreadsheet_id}/{sheet_name}",
            "delete /v1/spreadsheets/{spreadsheet_id}",
            "get /healthz",
            "get /v1/data/{spreadsheet_id}",
            "get /v1/data/{spreadsheet_id}/{sheet_name}",
            "get /v1/openapi.json",
            "get /v1/spreadsheets/{spreadsheet_id}",
            "patch /v1/data/{spreadsheet_id}/{sheet_name}",
            "post /v1/data/{spreadsheet_id}/{sheet_name}",
            "post /v1/spreadsheets",
        ]
    );
}

/// Status and JSON body (`Null` when the body is no JSON, as for a download).
async fn probe(server: &Server, method: Method, path: &str) -> (reqwest::StatusCode, Value) {
    let response = server
        .client
        .request(method, format!("{}{path}", server.base))
        .header("content-type", "application/json")
        .body("null")
        .send()
        .await
        .expect("request sent");
    let status = response.status();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test]
async fn openapi_describes_errors_and_bodies() {
    let server = Server::start().await;
    let (_, spec) = server.get("/v1/openapi.json").await;
    let insert = &spec["paths"]["/v1/data/{spreadsheet_id}/{sheet_name}"]["post"];
    for status in ["201", "400", "401", "404", "409", "413", "415", "500"] {
        assert!(
            insert["responses"].get(status).is_some(),
            "insert lacks {status}"
        );
    }
    assert!(insert["requestBody"]["content"]["application/json"].is_object());
    assert_eq!(
        spec["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}
