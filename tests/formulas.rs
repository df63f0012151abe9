//! Issue 14: formulas are recomputed on every write, filled down on insert
//! and adjusted on delete; a formula the engine cannot compute is never
//! served stale. Every test reads the answer through the API and the file
//! on disk back with calamine (values and formula texts).

mod common;

use calamine::{Data, Reader, Xlsx, open_workbook};
use common::*;
use serde_json::{Value, json};

/// The workbook: `Orders(item, price, qty, total = B*C)` and
/// `Summary` with totals over the orders, a defined name over them, and a
/// link to an order.
fn orders_workbook(server: &Server) {
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            (
                "Orders",
                vec![
                    vec![S("item"), S("price"), S("qty"), S("total")],
                    vec![S("apple"), N(2.0), N(3.0), F("=B2*C2", "6")],
                    vec![S("pear"), N(1.0), N(5.0), F("=B3*C3", "5")],
                    vec![S("plum"), N(4.0), N(2.0), F("=B4*C4", "8")],
                ],
            ),
            (
                "Summary",
                vec![
                    vec![S("label"), S("value")],
                    vec![S("total"), F("=SUM(Orders!D2:D100)", "19")],
                    vec![S("first"), F("=Orders!D2", "6")],
                    vec![S("double"), F("=B2*2", "38")],
                ],
            ),
        ],
    );
}

async fn rows(server: &Server, sheet: &str) -> Vec<Value> {
    let (status, body) = server.get(&rows_path(sheet)).await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().expect("rows").clone()
}

/// The column `name` of every row read through the API.
async fn column(server: &Server, sheet: &str, name: &str) -> Vec<Value> {
    rows(server, sheet)
        .await
        .iter()
        .map(|row| row[name].clone())
        .collect()
}

/// The formula texts of a sheet on disk, by (row, column), 0-based.
fn formulas_on_disk(server: &Server, sheet: &str) -> Vec<((u32, u32), String)> {
    let mut workbook: Xlsx<_> = open_workbook(server.file(ID)).expect("workbook opens");
    let range = workbook.worksheet_formula(sheet).expect("sheet");
    range
        .used_cells()
        .filter(|(_, _, f)| !f.is_empty())
        .map(|(r, c, f)| {
            let (r0, c0) = range.start().unwrap_or((0, 0));
            ((r0 + r as u32, c0 + c as u32), f.clone())
        })
        .collect()
}

#[tokio::test]
async fn an_update_recomputes_the_formulas_that_depend_on_it() {
    let server = Server::start().await;
    orders_workbook(&server);

    let (status, _) = server
        .patch(
            &rows_path("Orders"),
            json!({"type": "row", "row": 2, "data": {"qty": 10}}),
        )
        .await;

    assert_eq!(status, 200);
    assert_eq!(
        column(&server, "Orders", "total").await,
        [json!(20), json!(5), json!(8)]
    );
    assert_eq!(
        column(&server, "Summary", "value").await,
        [json!(33), json!(20), json!(66)]
    );
    let orders = read_sheet(&server.file(ID), "Orders");
    assert_eq!(orders[1][3], Data::Float(20.0));
    let summary = read_sheet(&server.file(ID), "Summary");
    let values: Vec<_> = summary[1..].iter().map(|row| row[1].clone()).collect();
    assert_eq!(
        values,
        [Data::Float(33.0), Data::Float(20.0), Data::Float(66.0)]
    );
}

#[tokio::test]
async fn inserted_rows_take_the_formula_of_the_rows_above() {
    let server = Server::start().await;
    orders_workbook(&server);

    let (status, _) = server
        .post(
            &rows_path("Orders"),
            json!({"data": [{"item": "fig", "price": 3, "qty": 3}, {"item": "kiwi", "price": 1, "qty": 1}]}),
        )
        .await;

    assert_eq!(status, 201);
    assert_eq!(
        column(&server, "Orders", "total").await,
        [json!(6), json!(5), json!(8), json!(9), json!(1)]
    );
    assert_eq!(column(&server, "Summary", "value").await[0], json!(29));
    let formulas = formulas_on_disk(&server, "Orders");
    assert!(formulas.contains(&((4, 3), "B5*C5".into())), "{formulas:?}");
    assert!(formulas.contains(&((5, 3), "B6*C6".into())), "{formulas:?}");
    assert_eq!(
        read_sheet(&server.file(ID), "Orders")[4][3],
        Data::Float(9.0)
    );
}

#[tokio::test]
async fn a_value_sent_for_a_formula_column_wins_over_the_fill() {
    let server = Server::start().await;
    orders_workbook(&server);

    let body = json!({"data": [{"item": "fig", "price": 3, "qty": 3, "total": 100}, {"item": "nut", "total": null}]});
    let (status, _) = server.post(&rows_path("Orders"), body).await;

    assert_eq!(status, 201);
    let totals = column(&server, "Orders", "total").await;
    assert_eq!(totals[3..], [json!(100), Value::Null]);
    let formulas = formulas_on_disk(&server, "Orders");
    assert!(
        formulas.iter().all(|((row, _), _)| *row < 4),
        "{formulas:?}"
    );
}

#[tokio::test]
async fn deletes_adjust_every_reference_to_the_moved_rows() {
    let server = Server::start().await;
    orders_workbook(&server);

    // Row 3 (pear): the total below moves up; Summary's range shrinks.
    let (status, body) = server
        .delete(&rows_path("Orders"), json!({"type": "row", "row": 3}))
        .await;

    assert_eq!((status.as_u16(), body), (200, json!({"deleted": 1})));
    assert_eq!(
        column(&server, "Orders", "total").await,
        [json!(6), json!(8)]
    );
    assert_eq!(
        column(&server, "Summary", "value").await,
        [json!(14), json!(6), json!(28)]
    );
    let orders = formulas_on_disk(&server, "Orders");
    assert_eq!(orders, [((1, 3), "B2*C2".into()), ((2, 3), "B3*C3".into())]);
    let summary = formulas_on_disk(&server, "Summary");
    assert!(
        summary.contains(&((1, 1), "SUM(Orders!D2:D99)".into())),
        "{summary:?}"
    );
}

#[tokio::test]
async fn a_reference_to_a_deleted_cell_becomes_ref_error() {
    let server = Server::start().await;
    orders_workbook(&server);

    let (status, _) = server
        .delete(&rows_path("Orders"), json!({"type": "row", "row": 2}))
        .await;

    assert_eq!(status, 200);
    let summary = formulas_on_disk(&server, "Summary");
    assert!(summary.contains(&((2, 1), "#REF!".into())), "{summary:?}");
    assert_eq!(
        column(&server, "Summary", "value").await,
        [json!(13), json!("#REF!"), json!(26)]
    );
    let values = read_sheet(&server.file(ID), "Summary");
    assert_eq!(values[2][1], Data::Error(calamine::CellErrorType::Ref));
}

/// A workbook with formulas the engine cannot compute: an unknown
/// function over Data!B2, one formula depending on it, and an external
/// reference; each with the result its producer cached.
fn uncomputable_workbook(server: &Server) {
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Data",
            vec![
                vec![S("name"), S("n"), S("calc")],
                vec![S("a"), N(2.0), F("=SHEETDUNKNOWN(B2)", "7")],
                vec![S("b"), N(3.0), F("=C2*2", "14")],
                vec![S("c"), N(4.0), F("=[1]Other!A1+B4", "40")],
                vec![S("d"), N(5.0), F("=B5*10", "50")],
            ],
        )],
    );
}

#[tokio::test]
async fn a_formula_the_engine_cannot_compute_keeps_its_value_while_its_inputs_do() {
    let server = Server::start().await;
    uncomputable_workbook(&server);

    let (status, _) = server
        .patch(
            &rows_path("Data"),
            json!({"type": "row", "row": 5, "data": {"n": 6}}),
        )
        .await;

    assert_eq!(status, 200);
    assert_eq!(
        column(&server, "Data", "calc").await,
        [json!(7), json!(14), json!(40), json!(60)]
    );
    let grid = read_sheet(&server.file(ID), "Data");
    let calc: Vec<_> = grid[1..].iter().map(|row| row[2].clone()).collect();
    assert_eq!(
        calc,
        [
            Data::Float(7.0),
            Data::Float(14.0),
            Data::Float(40.0),
            Data::Float(60.0)
        ]
    );
}

#[tokio::test]
async fn once_its_inputs_change_such_a_formula_and_its_dependents_are_stale() {
    let server = Server::start().await;
    uncomputable_workbook(&server);

    let (status, _) = server
        .patch(
            &rows_path("Data"),
            json!({"type": "row", "row": 2, "data": {"n": 9}}),
        )
        .await;

    assert_eq!(status, 200);
    // No value rather than a stale one; the external reference's inputs
    // (another workbook, and B4) did not change.
    assert_eq!(
        column(&server, "Data", "calc").await,
        [Value::Null, Value::Null, json!(40), json!(50)]
    );
    let grid = read_sheet(&server.file(ID), "Data");
    assert_eq!(grid[1].get(2), None, "written without a cached value");
    assert_eq!(grid[2].get(2), None);
    let formulas = formulas_on_disk(&server, "Data");
    assert!(
        formulas.contains(&((1, 2), "SHEETDUNKNOWN(B2)".into())),
        "{formulas:?}"
    );
    assert!(formulas.contains(&((2, 2), "C2*2".into())), "{formulas:?}");

    // Stale stays stale across writes and a restart of the cache.
    let (status, _) = server
        .patch(
            &rows_path("Data"),
            json!({"type": "row", "row": 5, "data": {"n": 1}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        column(&server, "Data", "calc").await,
        [Value::Null, Value::Null, json!(40), json!(10)]
    );
}

#[tokio::test]
async fn a_three_d_reference_refuses_the_delete_naming_it() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            ("A", vec![vec![S("k")], vec![N(1.0)], vec![N(2.0)]]),
            ("B", vec![vec![S("k")], vec![N(1.0)]]),
            ("Sum", vec![vec![S("v")], vec![F("=SUM(A:B!A2)", "2")]]),
        ],
    );
    let before = std::fs::read(server.file(ID)).unwrap();

    let (status, body) = server
        .delete(&rows_path("A"), json!({"type": "row", "row": 2}))
        .await;

    assert_eq!(status, 409, "{body}");
    let message = body["detail"].as_str().unwrap_or_default();
    assert!(message.contains("Sum!A2"), "{message}");
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        before,
        "nothing written"
    );
}

#[tokio::test]
async fn whole_column_references_are_recomputed() {
    // The engine reads every row a reference spans; sheetd stops whole
    // columns below the workbook's last row, where the sum is the same.
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            ("Data", vec![vec![S("n")], vec![N(1.0)], vec![N(2.0)]]),
            (
                "Sum",
                vec![
                    vec![S("label"), S("value")],
                    vec![S("all"), F("=SUM(Data!A:A)", "3")],
                    vec![S("lookup"), F("=VLOOKUP(2,Data!$A:$A,1,0)", "2")],
                ],
            ),
        ],
    );

    let (status, _) = server
        .patch(
            &rows_path("Data"),
            json!({"type": "row", "row": 2, "data": {"n": 5}}),
        )
        .await;

    assert_eq!(status, 200);
    assert_eq!(column(&server, "Sum", "value").await, [json!(7), json!(2)]);
    let formulas = formulas_on_disk(&server, "Sum");
    assert!(
        formulas.contains(&((1, 1), "SUM(Data!A:A)".into())),
        "{formulas:?}"
    );
    assert_eq!(read_sheet(&server.file(ID), "Sum")[1][1], Data::Float(7.0));
}

#[tokio::test]
async fn a_row_inserted_under_a_table_takes_its_calculated_column() {
    // openpyxl's table.xlsx: `Sales(region, units, price, amount)`, amount
    // `Sales[[#This Row],[units]]*Sales[[#This Row],[price]]`, no results.
    let server = Server::start().await;
    server.add_fixture("formulas/openpyxl/table.xlsx", ID);

    let body = json!({"data": [{"region": "west", "units": 3, "price": 2}]});
    let (status, _) = server.post(&rows_path("Sales"), body).await;

    assert_eq!(status, 201);
    assert_eq!(column(&server, "Sales", "amount").await[5], json!(6));
    let formulas = formulas_on_disk(&server, "Sales");
    let amount = "Sales[[#This Row],[units]]*Sales[[#This Row],[price]]";
    assert!(formulas.contains(&((6, 3), amount.into())), "{formulas:?}");
    // The report's total takes the new row in: 119 before it.
    assert_eq!(column(&server, "Report", "value").await[0], json!(125));
}

#[tokio::test]
async fn rows_added_to_a_table_take_its_calculated_column_whatever_the_row_above_holds() {
    // The same table: its part holds the calculated column's formula.
    let server = Server::start().await;
    server.add_fixture("formulas/openpyxl/table.xlsx", ID);
    let amount = "Sales[[#This Row],[units]]*Sales[[#This Row],[price]]";

    // The last row's amount typed over with a number: the next row still
    // takes the table's formula, not the row above's value.
    let typed = json!({"type": "row", "row": 6, "data": {"amount": 100}});
    assert_eq!(server.patch(&rows_path("Sales"), typed).await.0, 200);
    let body = json!({"data": [{"region": "west", "units": 3, "price": 2}]});
    assert_eq!(server.post(&rows_path("Sales"), body).await.0, 201);
    // Before the first data row, where no row above has a formula.
    let body = json!({"data": [{"region": "north", "units": 4, "price": 5}]});
    let first = format!("{}?before=2", rows_path("Sales"));
    assert_eq!(server.post(&first, body).await.0, 201);

    let amounts = column(&server, "Sales", "amount").await;
    assert_eq!(
        (amounts[0].clone(), amounts[6].clone()),
        (json!(20), json!(6))
    );
    let formulas = formulas_on_disk(&server, "Sales");
    for row in [1, 7] {
        assert!(
            formulas.contains(&((row, 3), amount.into())),
            "{row}: {formulas:?}"
        );
    }
}

/// LibreOffice saves booleans as `TRUE()` and `FALSE()` formulas, which
/// name no row: deletes among them need neither adjusting nor computing,
/// and a formula that names rows, written later, is adjusted by the
/// deletes after it and computed where its cells are.
#[tokio::test]
async fn deletes_among_constant_formulas_adjust_a_formula_written_later() {
    let server = Server::start().await;
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[(
            "Flags",
            vec![
                vec![S("name"), S("done"), S("n"), S("twice")],
                vec![S("a"), F("=TRUE()", "TRUE"), N(1.0)],
                vec![S("b"), F("=FALSE()", "FALSE"), N(2.0)],
                vec![S("c"), F("=TRUE()", "TRUE"), N(3.0)],
                vec![S("d"), F("=FALSE()", "FALSE"), N(4.0)],
            ],
        )],
    );
    let delete = |row: u32| {
        let server = &server;
        async move {
            let (status, body) = server
                .delete(&rows_path("Flags"), json!({"type": "row", "row": row}))
                .await;
            assert_eq!((status.as_u16(), body), (200, json!({"deleted": 1})));
        }
    };
    // The first write learns that no formula names a row.
    delete(2).await;
    assert_eq!(column(&server, "Flags", "name").await, ["b", "c", "d"]);
    // d is on row 4: its formula reads c's number on row 3.
    let (status, body) = server
        .patch(
            &rows_path("Flags"),
            json!({"type": "row", "row": 4, "data": {"twice": {"formula": "=C3*2"}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(column(&server, "Flags", "twice").await[2], 6);

    // b goes: the formula follows c up to row 2, and the next delete's
    // look for formulas to adjust finds it.
    delete(2).await;
    delete(2).await;
    assert_eq!(
        formulas_on_disk(&server, "Flags"),
        [((1, 1), "FALSE()".into()), ((1, 3), "#REF!*2".into())]
    );
    assert_eq!(column(&server, "Flags", "done").await, [false]);
}
