//! Contract 11.1: where the rows are. Excel tables by name, a sheet with
//! one table read through it, inserts that grow tables (above a totals
//! row), `header_row`, letter forms and the listing, over a real socket, on
//! workbooks of two producers (`fixtures/tables/`: openpyxl, and the same
//! saved by LibreOffice).

mod common;

use calamine::Data;
use common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

const FIXTURES: [&str; 2] = ["tables/tables.xlsx", "tables/tables_lo.xlsx"];

async fn serving(fixture: &str) -> Server {
    let server = Server::start().await;
    server.add_fixture(fixture, ID);
    server
}

/// The `ref` of the table named `name` in the workbook on disk.
fn table_ref(server: &Server, name: &str) -> String {
    let bytes = std::fs::read(server.file(ID)).unwrap();
    for n in 1..=9 {
        let Some(xml) = part(&bytes, &format!("xl/tables/table{n}.xml")) else {
            continue;
        };
        let xml = String::from_utf8(xml).unwrap();
        if xml.contains(&format!("name=\"{name}\"")) {
            let at = xml.find(" ref=\"").unwrap() + 6;
            return xml[at..at + xml[at..].find('"').unwrap()].to_owned();
        }
    }
    panic!("no table {name}");
}

fn items(body: &Value) -> Vec<Value> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows: {body}"))
        .iter()
        .map(|row| row["Item"].clone())
        .collect()
}

#[tokio::test]
async fn a_table_is_addressed_by_name_and_a_sheet_with_one_table_through_it() {
    for fixture in FIXTURES {
        let server = serving(fixture).await;
        for name in ["tblExpenses", "tblexpenses", "Budget", "budget"] {
            let (status, body) = server.get(&rows_path(name)).await;
            assert_eq!(status, StatusCode::OK, "{fixture} {name}: {body}");
            // The totals row and the note below are no data rows; `_row`
            // stays the sheet's row number.
            assert_eq!(body["total"], 3, "{fixture} {name}: {body}");
            assert_eq!(
                body["data"][0],
                json!({"_row": 4, "Item": "Rent", "Amount": 900, "Paid": true}),
                "{fixture} {name}"
            );
        }
        let (status, body) = server.get(&rows_path("tblNothing")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{fixture}: {body}");
        assert!(body["detail"].as_str().unwrap().contains("tblNothing"));
    }
}

#[tokio::test]
async fn an_insert_above_a_totals_row_moves_it_down_and_grows_the_table() {
    for fixture in FIXTURES {
        let server = serving(fixture).await;
        let (status, body) = server
            .post(
                &rows_path("tblExpenses"),
                json!({"data": [{"Item": "Bus", "Amount": 50, "Paid": false}]}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{fixture}: {body}");
        let grid = read_sheet(&server.file(ID), "Budget");
        assert_eq!(
            grid[6][1..4],
            [s("Bus"), Data::Float(50.0), Data::Bool(false)]
        );
        assert_eq!(
            grid[7][1..3],
            [s("Total"), Data::Float(1280.0)],
            "{fixture}"
        );
        assert_eq!(
            grid[9][1],
            s("Amounts in euros"),
            "{fixture}: the note moved down"
        );
        assert_eq!(table_ref(&server, "tblExpenses"), "B3:D8", "{fixture}");
        let (_, body) = server.get(&rows_path("Budget")).await;
        assert_eq!(items(&body), ["Rent", "Food", "Gym", "Bus"], "{fixture}");
    }
}

/// §11.1: a totals formula that names the table's data with a cell range
/// (`SUM(C4:C6)`, as people type it) covers the rows an insert grows the
/// table by, as a structured reference does.
#[tokio::test]
async fn a_totals_formula_with_a_cell_range_covers_the_rows_an_insert_adds() {
    for fixture in FIXTURES {
        let server = Server::start().await;
        let bytes = std::fs::read(fixture_path(fixture)).unwrap();
        let typed = repacked(&bytes, |name, xml| match name {
            "xl/worksheets/sheet1.xml" => {
                xml.replace("SUBTOTAL(109,tblExpenses[Amount])", "SUM(C4:C6)")
            }
            _ => xml,
        });
        std::fs::write(server.file(ID), typed).unwrap();
        let (status, body) = server
            .post(
                &rows_path("tblExpenses"),
                json!({"data": [{"Item": "Bus", "Amount": 50}, {"Item": "Taxi", "Amount": 20}]}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{fixture}: {body}");
        let grid = read_sheet(&server.file(ID), "Budget");
        assert_eq!(
            grid[8][1..3],
            [s("Total"), Data::Float(1300.0)],
            "{fixture}"
        );
        let totals: Vec<String> = formulas_of(&server.file(ID), "Budget")
            .into_iter()
            .filter(|&(row, column, _)| (row, column) == (8, 2))
            .map(|(_, _, formula)| formula)
            .collect();
        assert_eq!(totals, ["SUM(C4:C8)"], "{fixture}");
        assert_eq!(table_ref(&server, "tblExpenses"), "B3:D9", "{fixture}");
    }
}

#[tokio::test]
async fn tables_side_by_side_are_read_and_grown_apart() {
    for fixture in FIXTURES {
        let server = serving(fixture).await;
        let (_, big) = server.get(&rows_path("Big")).await;
        assert_eq!(big["total"], 3, "{fixture}: {big}");
        let (_, small) = server.get(&rows_path("Small")).await;
        assert_eq!(
            small["data"],
            json!([
                {"_row": 2, "City": "Bled", "People": 0.008},
                {"_row": 3, "City": "Hum", "People": 0.00003}
            ]),
            "{fixture}"
        );
        let (status, body) = server
            .post(
                &rows_path("Small"),
                json!({"data": [{"City": "Ston", "People": 0.0005}]}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{fixture}: {body}");
        assert_eq!(table_ref(&server, "Small"), "D1:E4", "{fixture}");
        assert_eq!(table_ref(&server, "Big"), "A1:B4", "{fixture}");
        let grid = read_sheet(&server.file(ID), "Cities");
        assert_eq!(grid[3][3], s("Ston"), "{fixture}");
        assert_eq!(grid[3][0], s("Lagos"), "{fixture}: Big's row stays");
        // Filters and updates stay inside the table.
        let (status, body) = server
            .patch(
                &rows_path("Big"),
                json!({"type": "filter", "filter": "City:eq:Ston", "data": {"People": 1}}),
            )
            .await;
        assert_eq!((status, body), (StatusCode::OK, json!({"updated": 0})));
    }
}

#[tokio::test]
async fn header_row_names_the_header_of_a_sheet() {
    for fixture in FIXTURES {
        let server = serving(fixture).await;
        let (status, body) = server
            .get(&format!("{}?header_row=3", rows_path("Budget")))
            .await;
        assert_eq!(status, StatusCode::OK, "{fixture}: {body}");
        // The sheet below row 3, not the table: the totals row, the blank
        // row and the note are rows too.
        assert_eq!(
            items(&body),
            [
                json!("Rent"),
                json!("Food"),
                json!("Gym"),
                json!("Total"),
                Value::Null,
                json!("Amounts in euros")
            ],
            "{fixture}"
        );
        for (query, field) in [
            ("header_row=2", "header_row"),
            ("header_row=0", "header_row"),
            ("header_row=3&header_row=3", "header_row"),
        ] {
            let (status, body) = server
                .get(&format!("{}?{query}", rows_path("Budget")))
                .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{fixture} {query}: {body}");
            assert!(body["error"].as_str().unwrap().starts_with(field), "{body}");
        }
        let (status, body) = server
            .get(&format!("{}?header_row=3", rows_path("tblExpenses")))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{fixture}: {body}");
        // Writes take it too: rows above the header are not touched.
        let (status, body) = server
            .delete(
                &format!("{}?header_row=3", rows_path("Budget")),
                json!({"type": "filter", "filter": "Item:eq:Amounts in euros"}),
            )
            .await;
        assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
        assert_eq!(
            read_sheet(&server.file(ID), "Budget")[0][1],
            s("SIMPLE MONTHLY BUDGET")
        );
    }
}

#[tokio::test]
async fn the_listing_gives_header_rows_and_tables() {
    for fixture in FIXTURES {
        let server = serving(fixture).await;
        let (status, body) = server.get(&format!("/v1/data/{ID}")).await;
        assert_eq!(status, StatusCode::OK, "{fixture}: {body}");
        assert_eq!(
            body["sheets"][0],
            json!({"name": "Budget", "header_row": 3, "columns": ["Item", "Amount", "Paid"], "rows": 3}),
            "{fixture}"
        );
        let mut tables = body["tables"].as_array().unwrap().clone();
        tables.sort_by_key(|t| t["name"].as_str().unwrap().to_owned());
        assert_eq!(
            tables,
            [
                json!({"name": "Big", "sheet": "Cities", "range": "A1:B4", "columns": ["City", "People"], "rows": 3, "totals": false}),
                json!({"name": "Small", "sheet": "Cities", "range": "D1:E3", "columns": ["City", "People"], "rows": 2, "totals": false}),
                json!({"name": "tblExpenses", "sheet": "Budget", "range": "B3:D7", "columns": ["Item", "Amount", "Paid"], "rows": 3, "totals": true}),
                json!({"name": "tblLog", "sheet": "Log", "range": "A1:B3", "columns": ["When", "Event"], "rows": 2, "totals": false}),
            ],
            "{fixture}"
        );
    }
}

#[tokio::test]
async fn growing_a_table_through_a_merged_range_beside_it_is_refused() {
    let server = Server::start().await;
    {
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet().set_name("S").unwrap();
        sheet.write_string(0, 0, "k").unwrap();
        sheet.write_string(0, 1, "v").unwrap();
        sheet.write_string(1, 0, "a").unwrap();
        sheet.write_string(2, 0, "b").unwrap();
        sheet.write_string(3, 0, "below").unwrap();
        let table = rust_xlsxwriter::Table::new().set_name("T");
        sheet.add_table(0, 0, 2, 1, &table).unwrap();
        let merged = rust_xlsxwriter::Format::new();
        sheet.merge_range(2, 3, 3, 3, "beside", &merged).unwrap();
        book.save(server.file(ID)).unwrap();
    }
    let original = std::fs::read(server.file(ID)).unwrap();
    let (status, body) = server
        .post(&rows_path("T"), json!({"data": [{"k": "c"}]}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("D3:D4"), "{body}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), original);
}

#[tokio::test]
async fn a_delete_that_would_take_a_table_beside_away_whole_is_refused() {
    let server = Server::start().await;
    {
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet().set_name("S").unwrap();
        sheet.write_string(0, 0, "name").unwrap();
        sheet.write_string(0, 1, "qty").unwrap();
        for row in 1..10u32 {
            sheet.write_string(row, 0, format!("n{row}")).unwrap();
            sheet.write_number(row, 1, f64::from(row)).unwrap();
        }
        for (row, [sku, stock]) in [(4, ["sku", "stock"]), (5, ["a", "1"]), (6, ["b", "2"])] {
            sheet.write_string(row, 3, sku).unwrap();
            sheet.write_string(row, 4, stock).unwrap();
        }
        let table = |name| rust_xlsxwriter::Table::new().set_name(name);
        sheet.add_table(0, 0, 9, 1, &table("Left")).unwrap();
        sheet.add_table(4, 3, 6, 4, &table("Right")).unwrap();
        book.save(server.file(ID)).unwrap();
    }
    let original = std::fs::read(server.file(ID)).unwrap();
    // Left's rows 4 to 8 are the sheet rows of Right, its header too.
    let (status, body) = server
        .delete(
            &rows_path("Left"),
            json!({"type": "filter", "filter": "qty:in:3,4,5,6,7"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("\"Right\" at S!D5:E7"), "{body}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), original);
    // Rows that leave Right's header are deleted, Right moving up.
    let (status, body) = server
        .delete(
            &rows_path("Left"),
            json!({"type": "filter", "filter": "qty:in:1,2"}),
        )
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 2})));
    assert_eq!(table_ref(&server, "Right"), "D3:E5");
}

#[tokio::test]
async fn deleting_a_totals_row_takes_it_away_from_the_table() {
    for fixture in FIXTURES {
        let server = serving(fixture).await;
        let (status, body) = server
            .delete(
                &format!("{}?header_row=3", rows_path("Budget")),
                json!({"type": "row", "row": 7}),
            )
            .await;
        assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
        assert_eq!(table_ref(&server, "tblExpenses"), "B3:D6", "{fixture}");
        let bytes = std::fs::read(server.file(ID)).unwrap();
        let tables: Vec<String> = (1..=4)
            .filter_map(|n| part(&bytes, &format!("xl/tables/table{n}.xml")))
            .map(|xml| String::from_utf8(xml).unwrap())
            .filter(|xml| xml.contains("tblExpenses"))
            .collect();
        assert!(
            tables[0].contains("totalsRowCount=\"0\""),
            "{fixture}: {}",
            tables[0]
        );
        let (_, body) = server.get(&rows_path("tblExpenses")).await;
        assert_eq!(body["total"], 3, "{fixture}: the last data row stays data");
    }
}

#[tokio::test]
async fn title_rows_above_a_header_are_skipped() {
    use Spec::*;
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[(
            "Report",
            vec![
                vec![S("QUARTERLY REPORT")],
                vec![],
                vec![S("Region"), S("Sales"), S("Target"), S("Owner")],
                vec![S("North"), N(120.0), N(100.0), S("Ann")],
                vec![S("South"), N(80.0), N(90.0), S("Bo")],
            ],
        )],
    );
    let (status, body) = server.get(&rows_path("Report")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"][0],
        json!({"_row": 4, "Region": "North", "Sales": 120, "Target": 100, "Owner": "Ann"})
    );
    let (status, body) = server
        .post(
            &rows_path("Report"),
            json!({"data": [{"Region": "East", "Sales": 5}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(read_sheet(&server.file(ID), "Report")[5][0], s("East"));
    let (_, listing) = server.get(&format!("/v1/data/{ID}")).await;
    assert_eq!(listing["sheets"][0]["header_row"], 3);
}

#[tokio::test]
async fn an_invoices_customer_and_date_lines_are_no_header() {
    use Spec::*;
    let server = Server::start().await;
    make_workbook(
        &server.file(ID),
        &[
            (
                "Invoice",
                vec![
                    vec![S("INVOICE")],
                    vec![S("Customer:"), S("ACME Ltd")],
                    vec![S("Date:"), D(45296.0)],
                    vec![],
                    vec![S("Item"), S("Qty"), S("Price")],
                    vec![S("Bolt"), N(10.0), N(0.5)],
                ],
            ),
            (
                "Years",
                vec![
                    vec![S("Sales by year"), E, E, S("Confidential")],
                    vec![S("Region"), N(2022.0), N(2023.0), N(2024.0)],
                    vec![S("North"), N(1.0), N(2.0), N(3.0)],
                ],
            ),
        ],
    );
    let (_, listing) = server.get(&format!("/v1/data/{ID}")).await;
    assert_eq!(listing["sheets"][0]["header_row"], 5, "{listing}");
    assert_eq!(listing["sheets"][1]["header_row"], 2, "{listing}");
    let (status, body) = server.get(&rows_path("Invoice")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"],
        json!([{"_row": 6, "Item": "Bolt", "Qty": 10, "Price": 0.5}])
    );
    let (_, body) = server.get(&rows_path("Years")).await;
    assert_eq!(
        body["data"],
        json!([{"_row": 3, "Region": "North", "2022": 1, "2023": 2, "2024": 3}])
    );
}

#[tokio::test]
async fn an_upsert_and_a_positional_insert_grow_the_table_too() {
    for fixture in FIXTURES {
        let server = serving(fixture).await;
        let (status, body) = server
            .post(
                &format!("{}?on_conflict=Item", rows_path("tblExpenses")),
                json!({"data": [{"Item": "Gym", "Amount": 35}, {"Item": "Bus", "Amount": 50}]}),
            )
            .await;
        assert_eq!(
            (status, body),
            (StatusCode::OK, json!({"inserted": 1, "updated": 1})),
            "{fixture}"
        );
        assert_eq!(table_ref(&server, "tblExpenses"), "B3:D8", "{fixture}");
        let grid = read_sheet(&server.file(ID), "Budget");
        assert_eq!(grid[5][1..3], [s("Gym"), Data::Float(35.0)], "{fixture}");
        assert_eq!(grid[6][1], s("Bus"), "{fixture}: above the totals row");
        // Before the row after the last data row of a table without a
        // totals row: the new row joins the table.
        let (status, body) = server
            .post(
                &format!("{}?before=4", rows_path("tblLog")),
                json!({"data": [{"When": "2024/01/04", "Event": "again"}]}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{fixture}: {body}");
        assert_eq!(table_ref(&server, "tblLog"), "A1:B4", "{fixture}");
    }
}

#[tokio::test]
async fn header_row_names_the_header_of_inserts_and_upserts_too() {
    let server = serving(FIXTURES[0]).await;
    let budget = format!("{}?header_row=3", rows_path("Budget"));
    let (status, body) = server
        .post(&budget, json!({"data": [{"Item": "Tea", "Amount": 4}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let grid = read_sheet(&server.file(ID), "Budget");
    assert_eq!(
        grid[9][1..3],
        [s("Tea"), Data::Float(4.0)],
        "below the note, row 10"
    );
    let (status, body) = server
        .post(
            &format!("{budget}&on_conflict=Item"),
            json!({"data": [{"Item": "Tea", "Amount": 5}]}),
        )
        .await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"inserted": 0, "updated": 1}))
    );
    assert_eq!(
        read_sheet(&server.file(ID), "Budget")[9][2],
        Data::Float(5.0)
    );
}
