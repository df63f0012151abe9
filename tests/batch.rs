//! Contract §11.6: `POST /v1/batch/{id}`, several operations across sheets
//! in one write, all or nothing, over a real socket.

mod common;

use calamine::Data;
use common::*;
use serde_json::{Value, json};

/// Orders (order, sku, qty), Stock (sku, left) and Summary, whose formula
/// adds up the ordered quantities.
fn shop_workbook(server: &Server) {
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            (
                "Orders",
                vec![
                    vec![S("order"), S("sku"), S("qty")],
                    vec![N(1.0), S("A1"), N(2.0)],
                ],
            ),
            (
                "Stock",
                vec![
                    vec![S("sku"), S("left")],
                    vec![S("A1"), N(10.0)],
                    vec![S("B2"), N(5.0)],
                ],
            ),
            (
                "Summary",
                vec![
                    vec![S("what"), S("value")],
                    vec![S("ordered"), F("=SUM(Orders!C2:C100)", "2")],
                ],
            ),
        ],
    );
}

fn batch_path() -> String {
    format!("/v1/batch/{ID}")
}

#[tokio::test]
async fn operations_on_two_sheets_land_together_and_are_recalculated_once() {
    let server = Server::start().await;
    shop_workbook(&server);
    let body = json!({"operations": [
        {"op": "insert", "sheet": "Orders", "data": [{"order": 2, "sku": "A1", "qty": 3}]},
        {"op": "update", "sheet": "Stock", "type": "filter", "filter": "sku:eq:A1", "data": {"left": 7}},
        {"op": "delete", "sheet": "Stock", "type": "row", "row": 3},
    ]});

    let (status, answer) = server.post(&batch_path(), body).await;

    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"results": [{"inserted": 1}, {"updated": 1}, {"deleted": 1}]})
    );
    let file = server.file(ID);
    assert_eq!(
        read_sheet(&file, "Orders")[2],
        [
            Data::Float(2.0),
            Data::String("A1".into()),
            Data::Float(3.0)
        ]
    );
    assert_eq!(
        read_sheet(&file, "Stock"),
        [
            vec![Data::String("sku".into()), Data::String("left".into())],
            vec![Data::String("A1".into()), Data::Float(7.0)],
        ]
    );
    // The formula reading the other sheet was computed with the new row.
    assert_eq!(read_sheet(&file, "Summary")[1][1], Data::Float(5.0));
}

#[tokio::test]
async fn operations_apply_in_order_each_seeing_the_ones_before() {
    let server = Server::start().await;
    shop_workbook(&server);
    // Row 2 is deleted first; the row that moves up into row 2 is updated.
    let body = json!({"operations": [
        {"op": "delete", "sheet": "Stock", "type": "row", "row": 2},
        {"op": "update", "sheet": "Stock", "type": "row", "row": 2, "data": {"left": 0}},
    ]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        read_sheet(&server.file(ID), "Stock")[1],
        [Data::String("B2".into()), Data::Float(0.0)]
    );
}

#[tokio::test]
async fn a_failing_operation_changes_nothing_and_is_named_by_its_index() {
    let server = Server::start().await;
    shop_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    // The third operation addresses a row the sheet does not have after
    // the first two ran: the earlier operations are undone with it.
    let body = json!({"operations": [
        {"op": "insert", "sheet": "Orders", "data": [{"order": 2, "sku": "B2", "qty": 1}]},
        {"op": "delete", "sheet": "Stock", "type": "row", "row": 3},
        {"op": "update", "sheet": "Stock", "type": "row", "row": 3, "data": {"left": 1}},
    ]});

    let (status, answer) = server.post(&batch_path(), body).await;

    assert_eq!(status, 404, "{answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(detail.starts_with("operations[2]: "), "{detail}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
    let (_, rows) = server.get(&rows_path("Orders")).await;
    assert_eq!(rows["total"], 1);
}

#[tokio::test]
async fn an_unknown_column_in_one_operation_is_a_400_naming_its_path() {
    let server = Server::start().await;
    shop_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let body = json!({"operations": [
        {"op": "insert", "sheet": "Orders", "data": [{"order": 2, "sku": "A1", "qty": 3}]},
        {"op": "update", "sheet": "Stock", "type": "filter", "filter": "sku:eq:A1", "data": {"qty": 1}},
    ]});

    let (status, answer) = server.post(&batch_path(), body).await;

    assert_eq!(status, 400, "{answer}");
    let error = answer["error"].as_str().unwrap();
    assert!(error.starts_with("operations[1].data.qty: "), "{error}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

#[tokio::test]
async fn an_unknown_sheet_is_a_404_naming_the_operation() {
    let server = Server::start().await;
    shop_workbook(&server);
    let body = json!({"operations": [
        {"op": "insert", "sheet": "Orders", "data": [{"order": 2}]},
        {"op": "delete", "sheet": "Nowhere", "type": "row", "row": 2},
    ]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer["detail"]
            .as_str()
            .unwrap()
            .starts_with("operations[1]: "),
        "{answer}"
    );
    let (_, rows) = server.get(&rows_path("Orders")).await;
    assert_eq!(rows["total"], 1);
}

#[tokio::test]
async fn every_malformed_operation_is_named_at_once() {
    let server = Server::start().await;
    shop_workbook(&server);
    let body = json!({"operations": [
        {"sheet": "Orders", "data": []},
        {"op": "upsert", "sheet": "Orders"},
        {"op": "insert", "data": [{"order": 1}]},
        {"op": "delete", "sheet": "Stock", "type": "row", "row": 2, "before": 3},
        {"op": "update", "sheet": "Stock", "type": "row", "row": 0, "data": {}},
        "insert",
        {"op": "insert", "sheet": "Orders", "data": [{"qty": 18446744073709551616_u128}]},
    ], "atomic": true});

    let (status, answer) = server.post(&batch_path(), body).await;

    assert_eq!(status, 400, "{answer}");
    let error = answer["error"].as_str().unwrap();
    for expected in [
        "atomic: is not a known field",
        "operations[0].op: is required",
        "operations[1].op: must be one of insert or update or delete",
        "operations[2].sheet: is required",
        "operations[3].before: is not allowed with op delete",
        "operations[4].row: ",
        "operations[4].data: must set at least one column",
        "operations[5]: must be an object with op and sheet",
        "operations[6].data[0].qty: ",
    ] {
        assert!(
            error.contains(expected),
            "{expected:?} missing from {error}"
        );
    }
}

#[tokio::test]
async fn a_batch_over_the_operation_limit_is_refused() {
    let server = Server::start().await;
    shop_workbook(&server);
    let operation =
        json!({"op": "update", "sheet": "Stock", "type": "row", "row": 2, "data": {"left": 1}});
    let body = json!({"operations": vec![operation; 1001]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer["error"],
        "operations: holds 1001 operations; one batch may hold at most 1000"
    );
}

#[tokio::test]
async fn an_insert_with_on_conflict_upserts_and_answers_both_counts() {
    let server = Server::start().await;
    shop_workbook(&server);
    let body = json!({"operations": [
        {"op": "insert", "sheet": "Stock", "on_conflict": "sku",
         "data": [{"sku": "A1", "left": 9}, {"sku": "C3", "left": 4}]},
    ]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer, json!({"results": [{"inserted": 1, "updated": 1}]}));
    let (_, rows) = server
        .get(&format!("{}?order=sku.asc", rows_path("Stock")))
        .await;
    let left: Vec<&Value> = rows["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row["left"])
        .collect();
    assert_eq!(left, [&json!(9), &json!(5), &json!(4)]);
}

#[tokio::test]
async fn a_batch_that_changes_nothing_does_not_rewrite_the_file() {
    let server = Server::start().await;
    shop_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let body = json!({"operations": [
        {"op": "update", "sheet": "Stock", "type": "filter", "filter": "sku:eq:Z9", "data": {"left": 1}},
        {"op": "delete", "sheet": "Orders", "type": "filter", "filter": "sku:eq:Z9"},
    ]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer, json!({"results": [{"updated": 0}, {"deleted": 0}]}));
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

#[tokio::test]
async fn formulas_in_a_batch_are_computed_and_a_bad_one_changes_nothing() {
    let server = Server::start().await;
    shop_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let body = json!({"operations": [
        {"op": "insert", "sheet": "Orders", "data": [{"order": 2, "sku": "A1", "qty": 3}]},
        {"op": "update", "sheet": "Stock", "type": "row", "row": 2, "data": {"left": {"formula": "=SUM(("}}},
    ]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 400, "{answer}");
    let error = answer["error"].as_str().unwrap();
    assert!(
        error.starts_with("operations[1].data.left: formula "),
        "{error}"
    );
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);

    let body = json!({"operations": [
        {"op": "insert", "sheet": "Orders", "data": [{"order": 2, "sku": "A1", "qty": 3}]},
        {"op": "update", "sheet": "Stock", "type": "row", "row": 2,
         "data": {"left": {"formula": "=10-SUM(Orders!C2:C10)"}}},
    ]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 200, "{answer}");
    let (_, rows) = server.get(&rows_path("Stock")).await;
    assert_eq!(rows["data"][0]["left"], 5);
}

#[tokio::test]
async fn a_formula_written_by_one_operation_moves_with_the_rows_a_later_one_deletes() {
    let server = Server::start().await;
    // No formula anywhere before the batch.
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Stock",
            vec![
                vec![S("sku"), S("left")],
                vec![S("A1"), N(10.0)],
                vec![S("B2"), N(5.0)],
                vec![S("C3"), N(7.0)],
            ],
        )],
    );
    let body = json!({"operations": [
        {"op": "update", "sheet": "Stock", "type": "row", "row": 4,
         "data": {"left": {"formula": "=B3*2"}}},
        {"op": "delete", "sheet": "Stock", "type": "row", "row": 2},
    ]});
    let (status, answer) = server.post(&batch_path(), body).await;
    assert_eq!(status, 200, "{answer}");
    // Row 3 moved up to row 2, and the formula (row 4, now 3) with it.
    assert_eq!(
        formulas_of(&server.file(ID), "Stock"),
        [(2, 1, "B2*2".to_owned())]
    );
    let (_, rows) = server.get(&rows_path("Stock")).await;
    assert_eq!(rows["data"][1]["left"], 10, "{rows}");
}

#[tokio::test]
async fn a_batch_honours_if_match_and_answers_the_new_etag() {
    let server = Server::start().await;
    shop_workbook(&server);
    let url = format!("{}{}", server.base, batch_path());
    let body = json!({"operations": [
        {"op": "update", "sheet": "Stock", "type": "row", "row": 2, "data": {"left": 1}},
    ]});
    let before = std::fs::read(server.file(ID)).unwrap();

    let stale = server
        .client
        .post(&url)
        .header(
            "If-Match",
            "\"0000000000000000000000000000000000000000000000000000000000000000\"",
        )
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 412);
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);

    let current = server
        .client
        .get(format!("{}/v1/data/{ID}", server.base))
        .send()
        .await
        .unwrap();
    let etag = current.headers()["etag"].to_str().unwrap().to_owned();
    let made = server
        .client
        .post(&url)
        .header("If-Match", &etag)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 200);
    let new_etag = made.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(new_etag, etag);
    let (_, listing) = server.get("/v1/spreadsheets").await;
    assert_eq!(listing["spreadsheets"][0]["etag"], new_etag.as_str());
}
