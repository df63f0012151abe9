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
            .replace("{sheet_name}", "People")
            .replace("{etag}", &"0".repeat(64));
        for method in METHODS {
            let in_spec = item.get(method).is_some();
            let verb = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let (status, body) = probe(&server, verb, &path).await;
            let route_missing = status == 404
                && body["detail"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("no route"));
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
    // The routes of contract §4, §10 and §11, each once.
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
            "get /v1/spreadsheets",
            "get /v1/spreadsheets/{spreadsheet_id}",
            "get /v1/spreadsheets/{spreadsheet_id}/versions",
            "get /v1/spreadsheets/{spreadsheet_id}/versions/{etag}",
            "patch /v1/data/{spreadsheet_id}/{sheet_name}",
            "post /v1/batch/{spreadsheet_id}",
            "post /v1/data/{spreadsheet_id}",
            "post /v1/data/{spreadsheet_id}/{sheet_name}",
            "post /v1/spreadsheets",
            "post /v1/spreadsheets/{spreadsheet_id}/versions/{etag}/restore",
            "put /v1/spreadsheets/{spreadsheet_id}",
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

/// Every `$ref` target of `value`, as JSON pointers.
fn refs(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                found.push(target.trim_start_matches('#').to_owned());
            }
            map.values().for_each(|v| refs(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
        _ => {}
    }
}

#[tokio::test]
async fn every_reference_of_the_description_resolves() {
    let server = Server::start().await;
    let (_, spec) = server.get("/v1/openapi.json").await;
    let mut found = Vec::new();
    refs(&spec, &mut found);
    assert!(found.iter().any(|r| r == "/components/schemas/ErrorBody"));
    for target in found {
        assert!(spec.pointer(&target).is_some(), "{target} is not defined");
    }
}

#[tokio::test]
async fn the_description_types_what_the_server_takes() {
    let server = Server::start().await;
    let (_, spec) = server.get("/v1/openapi.json").await;
    let schema = |name: &str| spec["components"]["schemas"][name].clone();
    let rows = &spec["paths"]["/v1/data/{spreadsheet_id}/{sheet_name}"];

    // Bodies: closed objects; `type` an enum; `filter` a string or strings.
    for body in ["InsertBody", "UpdateBody", "DeleteBody"] {
        assert_eq!(schema(body)["additionalProperties"], false, "{body}");
    }
    assert_eq!(
        schema("UpdateBody")["required"],
        serde_json::json!(["type", "data"])
    );
    assert_eq!(
        schema("SelectorType")["enum"],
        serde_json::json!(["filter", "row", "rows"])
    );
    // A filter is an expression, an array of them, or a filter object (§11.4).
    let filter = &schema("DeleteBody")["properties"]["filter"]["oneOf"];
    assert_eq!(filter[0]["type"], "string");
    assert_eq!(filter[1]["type"], "array");
    assert_eq!(filter[1]["items"]["oneOf"][0]["type"], "string");
    assert_eq!(filter[1]["items"]["oneOf"][1]["type"], "object");
    assert_eq!(
        filter[2]["required"],
        serde_json::json!(["column", "op", "value"])
    );
    assert_eq!(filter[2]["additionalProperties"], false);
    // A cell value may be a formula object.
    let value = &schema("InsertBody")["properties"]["data"]["items"]["additionalProperties"];
    assert_eq!(
        value["oneOf"][1]["required"],
        serde_json::json!(["formula"])
    );

    // Parameters: ids are UUIDs, `limit` has its bounds.
    let read = &rows["get"]["parameters"];
    let param = |name: &str| {
        read.as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no parameter {name}"))
            .clone()
    };
    assert_eq!(param("spreadsheet_id")["schema"]["format"], "uuid");
    assert_eq!(param("limit")["schema"]["maximum"], 100_000);

    // Workbooks travel as binary bodies, in either content type.
    let upload = &spec["paths"]["/v1/spreadsheets"]["post"]["requestBody"]["content"];
    for media in [
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/octet-stream",
    ] {
        let schema = &upload[media]["schema"];
        let schema = match schema.get("$ref").and_then(Value::as_str) {
            Some(target) => spec.pointer(target.trim_start_matches('#')).unwrap(),
            None => schema,
        };
        assert_eq!(
            (&schema["type"], &schema["format"]),
            (&"string".into(), &"binary".into())
        );
    }

    // Every operation takes the bearer token but /healthz, said on each
    // operation (generated clients read only that).
    assert_eq!(
        rows["post"]["security"],
        serde_json::json!([{"bearer": []}])
    );
    assert_eq!(
        spec["paths"]["/v1/spreadsheets"]["post"]["security"],
        serde_json::json!([{"bearer": []}])
    );
    assert_eq!(
        spec["paths"]["/healthz"]["get"]["security"],
        serde_json::json!([])
    );

    // Every error status refers to the one error body.
    for status in ["400", "404", "409"] {
        assert_eq!(
            rows["post"]["responses"][status]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorBody",
            "{status}"
        );
    }
}

#[tokio::test]
async fn the_description_speaks_to_its_reader() {
    let server = Server::start().await;
    let (_, spec) = server.get("/v1/openapi.json").await;
    let text = spec.to_string();
    // The reader does not have the contract the code cites.
    assert!(!text.contains('§'), "a § reference in the description");
    for (template, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let summary = operation["summary"].as_str().unwrap_or_default();
            assert!(
                !summary.is_empty() && !summary.contains(['`', '\n']) && summary.len() <= 60,
                "{method} {template}: summary {summary:?} is not one short plain line"
            );
            assert!(
                operation["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{method} {template} has no description"
            );
        }
    }
}
