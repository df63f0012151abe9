//! Reading in v1.1 (contract §10.1): `order`, `columns`, CSV, and the
//! `X-Total-Count` and `Link` headers, over a real socket.

mod common;

use common::*;
use serde_json::{Value, json};

/// A sheet made for ordering: ties, empty cells, text that sorts by code
/// point (`Zoe` before `adam`), and dates.
fn orders_workbook(server: &Server) {
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Orders",
            vec![
                vec![S("name"), S("qty"), S("day"), S("note")],
                vec![S("adam"), N(3.0), D(45000.0), S("plain")],
                vec![S("Zoe"), N(10.0), E, S("a, b")],
                vec![S("bea"), E, D(44000.0), S("say \"hi\"")],
                vec![S("cy"), N(3.0), D(46000.0), E],
                vec![S("dan"), N(-1.5), D(44500.0), S("two\nlines")],
            ],
        )],
    );
}

async fn read(server: &Server, query: &str, accept: Option<&str>) -> reqwest::Response {
    let mut request = server
        .client
        .get(format!("{}{}?{query}", server.base, rows_path("Orders")));
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    request.send().await.unwrap()
}

/// The names of the rows a JSON read answers, in order.
async fn names(server: &Server, query: &str) -> Vec<String> {
    let (status, body) = json_of(read(server, query, None).await).await;
    assert_eq!(status, 200, "{body}");
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn order_is_typed_with_empty_cells_last_and_ties_in_sheet_order() {
    let server = Server::start().await;
    orders_workbook(&server);
    // Numbers numerically (-1.5 first), the tie of 3 in sheet order, the
    // empty quantity last.
    assert_eq!(
        names(&server, "order=qty.asc").await,
        ["dan", "adam", "cy", "Zoe", "bea"]
    );
    // Descending: the tie still in sheet order, the empty cell still last.
    assert_eq!(
        names(&server, "order=qty.desc").await,
        ["Zoe", "adam", "cy", "dan", "bea"]
    );
    // Dates chronologically.
    assert_eq!(
        names(&server, "order=day.asc").await,
        ["bea", "dan", "adam", "cy", "Zoe"]
    );
    // Text by code point: upper case before lower case.
    assert_eq!(
        names(&server, "order=name.asc").await,
        ["Zoe", "adam", "bea", "cy", "dan"]
    );
    // A second key breaks the first one's ties.
    assert_eq!(
        names(&server, "order=qty.desc,name.desc").await,
        ["Zoe", "cy", "adam", "dan", "bea"]
    );
    // Paging applies to the ordered rows; filters before.
    assert_eq!(
        names(&server, "order=qty.asc&offset=1&limit=2").await,
        ["adam", "cy"]
    );
    assert_eq!(
        names(&server, "order=qty.desc&filter=qty:gte:3").await,
        ["Zoe", "adam", "cy"]
    );
}

#[tokio::test]
async fn columns_choose_what_each_row_shows() {
    let server = Server::start().await;
    orders_workbook(&server);
    let (status, body) = json_of(read(&server, "columns=note,name&limit=1", None).await).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"data": [{"_row": 2, "note": "plain", "name": "adam"}], "total": 5})
    );
}

#[tokio::test]
async fn unknown_columns_and_malformed_options_are_400_naming_each() {
    let server = Server::start().await;
    orders_workbook(&server);
    let (status, body) =
        json_of(read(&server, "order=size.asc&columns=name,colour", None).await).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "order: \"size\" is not a column of the sheet, columns: \"colour\" is not a column of the sheet"
    );
    for (query, expected) in [
        (
            "order=qty.up",
            "order: must be column.asc or column.desc (several: separated by commas)",
        ),
        (
            "order=qty.asc&order=name.asc",
            "order: must be given at most once",
        ),
        (
            "columns=name,",
            "columns: must name one or more columns separated by commas",
        ),
        ("format=xml", "format: must be json or csv"),
    ] {
        let (status, body) = json_of(read(&server, query, None).await).await;
        assert_eq!(
            (status.as_u16(), &body["error"]),
            (400, &json!(expected)),
            "{query}"
        );
    }
}

#[tokio::test]
async fn csv_is_asked_for_by_format_or_accept_and_quoted_as_rfc_4180_says() {
    let server = Server::start().await;
    orders_workbook(&server);
    let expected = "name,qty,day,note\r\n\
        adam,3,2023/03/15,plain\r\n\
        Zoe,10,,\"a, b\"\r\n\
        bea,,2020/06/18,\"say \"\"hi\"\"\"\r\n\
        cy,3,2025/12/09,\r\n\
        dan,-1.5,2021/10/31,\"two\nlines\"\r\n";
    for (query, accept) in [("format=csv", None), ("", Some("text/csv"))] {
        let response = read(&server, query, accept).await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"],
            "text/csv; charset=utf-8"
        );
        assert_eq!(response.headers()["x-total-count"], "5");
        assert_eq!(
            response.text().await.unwrap(),
            expected,
            "{query} {accept:?}"
        );
    }
    // The query wins over Accept.
    let response = read(&server, "format=json", Some("text/csv")).await;
    assert_eq!(response.headers()["content-type"], "application/json");
    // Columns, order and paging apply to CSV too.
    let response = read(
        &server,
        "format=csv&columns=name&order=name.desc&limit=2",
        None,
    )
    .await;
    assert_eq!(response.text().await.unwrap(), "name\r\ndan\r\ncy\r\n");
}

#[tokio::test]
async fn total_count_and_a_link_to_the_next_page() {
    let server = Server::start().await;
    orders_workbook(&server);
    let response = read(&server, "filter=qty:gte:0&limit=2&order=qty.asc", None).await;
    assert_eq!(response.headers()["x-total-count"], "3");
    let link = response.headers()["link"].to_str().unwrap().to_owned();
    let path = rows_path("Orders");
    assert_eq!(
        link,
        format!("<{path}?filter=qty%3Agte%3A0&limit=2&order=qty.asc&offset=2>; rel=\"next\"")
    );
    // Following it gives the last page, which has no link.
    let next = link.trim_start_matches('<').split('>').next().unwrap();
    let response = server
        .client
        .get(format!("{}{next}", server.base))
        .send()
        .await
        .unwrap();
    assert!(response.headers().get("link").is_none());
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    assert_eq!(body["data"][0]["name"], "Zoe");
    // No page left, no link; limit=0 asks for the count only, no link.
    for query in ["limit=5", "limit=0"] {
        let response = read(&server, query, None).await;
        assert_eq!(response.headers()["x-total-count"], "5");
        assert!(response.headers().get("link").is_none(), "{query}");
    }
}

/// A name the header has twice cannot be ordered by or shown (§1: it is
/// ambiguous), and `columns` names each column once.
#[tokio::test]
async fn ambiguous_and_repeated_columns_are_400() {
    let server = Server::start().await;
    server.add_fixture("openpyxl/header_quirks.xlsx", ID);
    for (query, error) in [
        (
            "order=_Z.desc",
            "order: \"_Z\" is a column letter outside the sheet's columns",
        ),
        (
            "columns=id,_x",
            "columns: \"_x\" is a column letter outside the sheet's columns",
        ),
        ("columns=id,id", "columns: must name each column once"),
        (
            "order=nope.up,size.asc",
            "order: must be column.asc or column.desc (several: separated by commas), \
             order: \"size\" is not a column of the sheet",
        ),
    ] {
        let (status, body) = server.get(&format!("{}?{query}", rows_path("Q"))).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["error"], error, "{query}");
    }
    let (status, body) = server
        .get(&format!("{}?columns=id&order=id.desc", rows_path("Q")))
        .await;
    assert_eq!(status, 200, "{body}");
}

/// The format may follow `Accept`, with its quality values: the answer
/// says so in `Vary`, and `q=0` refuses CSV.
#[tokio::test]
async fn accept_weighs_quality_and_answers_vary() {
    let server = Server::start().await;
    orders_workbook(&server);
    for (accept, content_type) in [
        ("text/csv", "text/csv; charset=utf-8"),
        ("text/csv;q=0, application/json", "application/json"),
        ("application/json, text/csv;q=0.5", "application/json"),
    ] {
        let answer = read(&server, "limit=1", Some(accept)).await;
        assert_eq!(answer.headers()["content-type"], content_type, "{accept}");
        let vary: Vec<_> = answer.headers().get_all("vary").iter().collect();
        assert!(vary.iter().any(|v| *v == "accept"), "{accept}: {vary:?}");
    }
}

/// A blank sheet has no header: its CSV is empty, not one empty record.
#[tokio::test]
async fn a_blank_sheet_reads_as_empty_csv() {
    let server = Server::start().await;
    make_workbook(&server.file(ID), &[("Blank", vec![])]);
    let answer = server
        .client
        .get(format!("{}{}?format=csv", server.base, rows_path("Blank")))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["x-total-count"], "0");
    assert_eq!(answer.text().await.unwrap(), "");
}

/// The `Link` of a CSV answer too, with a sheet name and a filter value
/// that need escaping: following it gives the next page.
#[tokio::test]
async fn a_csv_answer_links_its_next_page_with_everything_escaped() {
    use Spec::*;
    let server = Server::start().await;
    let rows = vec![
        vec![S("name")],
        vec![S("a+b&c")],
        vec![S("one")],
        vec![S("two")],
    ];
    make_workbook(&server.file(ID), &[("My Sheet é", rows)]);
    let path = format!("/v1/data/{ID}/My%20Sheet%20%C3%A9");
    let query = "filter=name%3Aneq%3Aa%2Bb%26c&limit=1&format=csv";
    let response = server
        .client
        .get(format!("{}{path}?{query}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-total-count"], "2");
    let link = response.headers()["link"].to_str().unwrap().to_owned();
    assert_eq!(
        link,
        format!("<{path}?filter=name%3Aneq%3Aa%2Bb%26c&limit=1&format=csv&offset=1>; rel=\"next\"")
    );
    assert_eq!(response.text().await.unwrap(), "name\r\none\r\n");
    let next = link.trim_start_matches('<').split('>').next().unwrap();
    assert_eq!(server.text(next).await, "name\r\ntwo\r\n");
}
