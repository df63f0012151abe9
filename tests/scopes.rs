//! Contract §11.7: scoped tokens from `--tokens-file`, over a real socket.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use calamine::Data;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sheetd::access::sha256_hex;

/// A second workbook, beyond the scoped tokens' reach.
const OTHER: &str = "0b1e3a5c-7d2f-4a8e-9c61-3f0d2b7e4a19";

/// Longest a change of the tokens file may take to be seen.
const BOUND: Duration = Duration::from_secs(20);

/// One `[[tokens]]` entry.
fn entry(name: &str, secret: &str, spreadsheets: &str, sheets: Option<&str>, can: &str) -> String {
    let sheets = sheets.map_or(String::new(), |s| format!("sheets = {s}\n"));
    format!(
        "[[tokens]]\nname = \"{name}\"\nsha256 = \"{}\"\nspreadsheets = {spreadsheets}\n{sheets}can = {can}\n",
        sha256_hex(secret)
    )
}

/// The tokens the tests use: an append-only form on People, a reader of
/// the People workbook, and an expired token.
fn tokens_file() -> String {
    [
        entry(
            "form",
            "form-secret",
            &format!("[\"{ID}\"]"),
            Some("[\"People\"]"),
            "[\"insert\"]",
        ),
        entry(
            "reader",
            "reader-secret",
            &format!("[\"{ID}\"]"),
            None,
            "[\"read\"]",
        ),
        format!(
            "{}expires = \"2020-01-01T00:00:00Z\"\n",
            entry("old", "old-secret", "[\"*\"]", None, "[\"read\"]")
        ),
    ]
    .join("\n")
}

struct Scoped {
    server: Server,
    tokens: PathBuf,
    _dir: tempfile::TempDir,
}

async fn scoped_server(text: &str) -> Scoped {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, text).unwrap();
    let path = tokens.clone();
    let server = Server::start_with(move |c| {
        c.tokens_file = Some(path);
        c.tokens = vec!["admin-secret".into()];
    })
    .await;
    people_workbook(&server);
    server.add_fixture("libreoffice/people.xlsx", OTHER);
    Scoped {
        server,
        tokens,
        _dir: dir,
    }
}

impl Scoped {
    async fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .server
            .client
            .request(method, format!("{}{path}", self.server.base))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        json_of(request.send().await.expect("request sent")).await
    }

    fn tokens(&self) -> &Path {
        &self.tokens
    }
}

fn detail(body: &Value) -> &str {
    body["detail"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn an_append_only_token_for_one_sheet_may_insert_there_and_nothing_else() {
    let scoped = scoped_server(&tokens_file()).await;
    let form = "form-secret";
    let people = rows_path("People");

    let (status, body) = scoped
        .call(
            form,
            Method::POST,
            &people,
            Some(json!({"data": [{"name": "Dee"}]})),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    for (method, path, body, permission) in [
        (Method::GET, people.clone(), None, "read"),
        (
            Method::PATCH,
            people.clone(),
            Some(json!({"type": "row", "row": 2, "data": {"age": 1}})),
            "update",
        ),
        (
            Method::DELETE,
            people.clone(),
            Some(json!({"type": "row", "row": 2})),
            "delete",
        ),
        (
            Method::POST,
            format!("{people}?on_conflict=name"),
            Some(json!({"data": [{"name": "Dee"}]})),
            "update",
        ),
    ] {
        let (status, body) = scoped.call(form, method.clone(), &path, body).await;
        assert_eq!(status, 403, "{method} {path}: {body}");
        assert!(
            detail(&body).contains(&format!("permission \"{permission}\"")),
            "{body}"
        );
    }
    // Another sheet of the same workbook.
    let (status, body) = scoped
        .call(
            form,
            Method::POST,
            &rows_path("Other"),
            Some(json!({"data": [{"k": "y"}]})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        detail(&body).contains("does not reach the sheet or table \"Other\""),
        "{body}"
    );
    // The whole workbook, and managing it.
    let (status, _) = scoped
        .call(form, Method::GET, &format!("/v1/spreadsheets/{ID}"), None)
        .await;
    assert_eq!(status, 403);
    let (status, _) = scoped
        .call(
            form,
            Method::POST,
            &format!("/v1/data/{ID}"),
            Some(json!({"name": "X", "columns": ["a"]})),
        )
        .await;
    assert_eq!(status, 403);

    // Exactly one row was added, and nothing else changed.
    let names: Vec<Data> = read_sheet(&scoped.server.file(ID), "People")
        .into_iter()
        .map(|row| row[0].clone())
        .collect();
    assert_eq!(names.last(), Some(&Data::String("Dee".into())));
    assert_eq!(names.len(), 5);
    assert_eq!(sheet_names(&scoped.server.file(ID)), ["People", "Other"]);
}

#[tokio::test]
async fn a_batch_needs_every_permission_its_operations_need() {
    let scoped = scoped_server(&tokens_file()).await;
    let before = std::fs::read(scoped.server.file(ID)).unwrap();
    let body = json!({"operations": [
        {"op": "insert", "sheet": "People", "data": [{"name": "Dee"}]},
        {"op": "delete", "sheet": "People", "type": "row", "row": 2},
    ]});
    let (status, answer) = scoped
        .call(
            "form-secret",
            Method::POST,
            &format!("/v1/batch/{ID}"),
            Some(body),
        )
        .await;
    assert_eq!(status, 403, "{answer}");
    assert!(detail(&answer).starts_with("operations[1]: "), "{answer}");
    let body = json!({"operations": [{"op": "insert", "sheet": "Other", "data": [{"k": "z"}]}]});
    let (status, answer) = scoped
        .call(
            "form-secret",
            Method::POST,
            &format!("/v1/batch/{ID}"),
            Some(body),
        )
        .await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(std::fs::read(scoped.server.file(ID)).unwrap(), before);

    let body =
        json!({"operations": [{"op": "insert", "sheet": "People", "data": [{"name": "Dee"}]}]});
    let (status, answer) = scoped
        .call(
            "form-secret",
            Method::POST,
            &format!("/v1/batch/{ID}"),
            Some(body),
        )
        .await;
    assert_eq!(
        (status.as_u16(), answer),
        (200, json!({"results": [{"inserted": 1}]}))
    );
}

#[tokio::test]
async fn a_workbook_beyond_a_tokens_reach_is_absent_to_it() {
    let scoped = scoped_server(&tokens_file()).await;
    let reader = "reader-secret";
    for path in [
        format!("/v1/data/{OTHER}"),
        format!("/v1/data/{OTHER}/People"),
        format!("/v1/spreadsheets/{OTHER}"),
    ] {
        let (status, body) = scoped.call(reader, Method::GET, &path, None).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(detail(&body), "no spreadsheet has that id");
    }
    let (status, list) = scoped
        .call(reader, Method::GET, "/v1/spreadsheets", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(list["total"], 1);
    assert_eq!(list["spreadsheets"][0]["spreadsheet_id"], ID);
    // The token of --token still reaches both.
    let (_, list) = scoped
        .call("admin-secret", Method::GET, "/v1/spreadsheets", None)
        .await;
    assert_eq!(list["total"], 2);
}

#[tokio::test]
async fn a_sheet_scoped_token_sees_only_its_sheets_in_listings() {
    let scoped =
        scoped_server(&tokens_file().replace("can = [\"insert\"]", "can = [\"insert\", \"read\"]"))
            .await;
    let (status, list) = scoped
        .call("form-secret", Method::GET, &format!("/v1/data/{ID}"), None)
        .await;
    assert_eq!(status, 200, "{list}");
    let names: Vec<&str> = list["sheets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["People"]);
    let (_, list) = scoped
        .call("form-secret", Method::GET, "/v1/spreadsheets", None)
        .await;
    assert_eq!(list["spreadsheets"][0]["sheets"], json!(["People"]));
}

#[tokio::test]
async fn expired_and_unknown_tokens_get_401() {
    let scoped = scoped_server(&tokens_file()).await;
    for token in ["old-secret", "nobody", "reader-secret2"] {
        let (status, body) = scoped
            .call(token, Method::GET, &rows_path("People"), None)
            .await;
        assert_eq!(status, 401, "{token:?}: {body}");
    }
    let (status, _) = scoped
        .call("reader-secret", Method::GET, &rows_path("People"), None)
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_changed_tokens_file_is_read_again_without_a_restart() {
    let scoped = scoped_server(&tokens_file()).await;
    let (status, _) = scoped
        .call("late-secret", Method::GET, &rows_path("People"), None)
        .await;
    assert_eq!(status, 401);

    let added = entry("late", "late-secret", "[\"*\"]", None, "[\"read\"]");
    // Without the reader: a removed token stops working too.
    let text = tokens_file().replace(
        &entry(
            "reader",
            "reader-secret",
            &format!("[\"{ID}\"]"),
            None,
            "[\"read\"]",
        ),
        &added,
    );
    std::fs::write(scoped.tokens(), text).unwrap();

    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let (status, _) = scoped
            .call("late-secret", Method::GET, &rows_path("People"), None)
            .await;
        if status == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the new token never worked"
        );
        tokio::task::yield_now().await;
    }
    let (status, _) = scoped
        .call("reader-secret", Method::GET, &rows_path("People"), None)
        .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn percent_encoding_reaches_nothing_more() {
    let scoped = scoped_server(&tokens_file()).await;
    // `%30` is `0`, `%2D` is `-`: the router decodes them, and so does the
    // scope check.
    let encoded = format!("%30{}", &OTHER[1..]).replacen('-', "%2D", 1);
    for path in [
        format!("/v1/data/{encoded}/People"),
        format!("/v1/spreadsheets/{encoded}"),
    ] {
        let (status, body) = scoped.call("reader-secret", Method::GET, &path, None).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let before = std::fs::read(scoped.server.file(ID)).unwrap();
    let (status, body) = scoped
        .call(
            "form-secret",
            Method::POST,
            &format!("{}?on%5Fconflict=name", rows_path("People")),
            Some(json!({"data": [{"name": "Alice", "age": 99}]})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(std::fs::read(scoped.server.file(ID)).unwrap(), before);
}

/// A sheet or table a token lists is reached however a request spells it,
/// as requests name sheets (exactly, else ignoring case), and only it: a
/// token for the table `Items` does not reach the sheet `items`, which the
/// name `items` leads to, nor the sheet the table is on.
#[tokio::test]
async fn a_token_reaches_what_its_names_lead_to_in_any_case_and_nothing_else() {
    const NAMES: &str = "5e0b3c1a-2f4d-4b6e-8a7c-9d1e2f3a4b5c";
    let text = [
        tokens_file(),
        entry(
            "table",
            "table-secret",
            &format!("[\"{NAMES}\"]"),
            Some("[\"Items\"]"),
            "[\"read\", \"insert\"]",
        ),
    ]
    .join("\n");
    let scoped = scoped_server(&text).await;
    {
        let mut book = rust_xlsxwriter::Workbook::new();
        let items = book.add_worksheet().set_name("items").unwrap();
        items.write_string(0, 0, "secret").unwrap();
        items.write_string(1, 0, "kept").unwrap();
        let other = book.add_worksheet().set_name("Other").unwrap();
        other.write_string(0, 0, "k").unwrap();
        other.write_string(1, 0, "a").unwrap();
        other.write_string(4, 0, "below").unwrap();
        let columns = [rust_xlsxwriter::TableColumn::new().set_header("k")];
        let table = rust_xlsxwriter::Table::new()
            .set_name("Items")
            .set_columns(&columns);
        other.add_table(0, 0, 1, 0, &table).unwrap();
        book.save(scoped.server.file(NAMES)).unwrap();
    }
    let (status, body) = scoped
        .call(
            "form-secret",
            Method::POST,
            &rows_path("people"),
            Some(json!({"data": [{"name": "Lee"}]})),
        )
        .await;
    assert_eq!(
        status, 201,
        "the sheet People, spelled in lower case: {body}"
    );
    let rows = |sheet: &str| format!("/v1/data/{NAMES}/{sheet}");
    let (status, body) = scoped
        .call("table-secret", Method::GET, &rows("Items"), None)
        .await;
    assert_eq!(
        (status, &body["data"]),
        (StatusCode::OK, &json!([{"_row": 2, "k": "a"}]))
    );
    let (status, _) = scoped
        .call("table-secret", Method::GET, &rows("ITEMS"), None)
        .await;
    assert_eq!(status, 403, "ITEMS leads to the sheet items");
    for name in ["items", "Other"] {
        let (status, body) = scoped
            .call("table-secret", Method::GET, &rows(name), None)
            .await;
        assert_eq!(status, 403, "{name}: {body}");
        assert!(
            detail(&body).contains("does not reach the sheet or table"),
            "{body}"
        );
    }
    let batch =
        json!({"operations": [{"op": "insert", "sheet": "items", "data": [{"secret": "x"}]}]});
    let (status, body) = scoped
        .call(
            "table-secret",
            Method::POST,
            &format!("/v1/batch/{NAMES}"),
            Some(batch),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(detail(&body).starts_with("operations[0]: "), "{body}");
    assert_eq!(
        read_sheet(&scoped.server.file(NAMES), "items").len(),
        2,
        "nothing written"
    );
    let list_path = format!("/v1/data/{NAMES}");
    let (status, list) = scoped
        .call("table-secret", Method::GET, &list_path, None)
        .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["sheets"], json!([]), "{list}");
    let tables: Vec<&Value> = (list["tables"].as_array().unwrap().iter())
        .map(|t| &t["name"])
        .collect();
    assert_eq!(tables, [&json!("Items")], "{list}");
}

#[tokio::test]
async fn a_token_for_some_sheets_writes_no_formulas() {
    let scoped = scoped_server(&tokens_file()).await;
    let before = std::fs::read(scoped.server.file(ID)).unwrap();
    // A formula may read any sheet: `=Other!B2` would read past the scope.
    let (status, body) = scoped
        .call(
            "form-secret",
            Method::POST,
            &rows_path("People"),
            Some(json!({"data": [{"name": {"formula": "=Other!B2"}}]})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(detail(&body).contains("cannot write formulas"), "{body}");
    let batch = json!({"operations": [
        {"op": "insert", "sheet": "People", "data": [{"name": {"formula": "=Other!B2"}}]},
    ]});
    let (status, body) = scoped
        .call(
            "form-secret",
            Method::POST,
            &format!("/v1/batch/{ID}"),
            Some(batch),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(std::fs::read(scoped.server.file(ID)).unwrap(), before);
}

/// §11.7: managing workbooks (add a sheet, replace, remove) needs `manage`;
/// a token with it may, within its reach; a write to a workbook beyond its
/// reach is 404, as a read is, and changes nothing.
#[tokio::test]
async fn managing_needs_manage_and_a_write_beyond_reach_is_404() {
    let text = [
        tokens_file(),
        entry(
            "keeper",
            "keeper-secret",
            &format!("[\"{ID}\"]"),
            None,
            "[\"read\", \"manage\"]",
        ),
    ]
    .join("\n");
    let scoped = scoped_server(&text).await;
    let add_sheet = || Some(json!({"name": "Added", "columns": ["k"]}));
    let sheets = format!("/v1/data/{ID}");
    let workbook = format!("/v1/spreadsheets/{ID}");

    let (status, body) = scoped
        .call("reader-secret", Method::POST, &sheets, add_sheet())
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(detail(&body).contains("manage"), "{body}");
    let (status, body) = scoped
        .call("reader-secret", Method::DELETE, &workbook, None)
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(scoped.server.file(ID).exists());

    let (status, body) = scoped
        .call("keeper-secret", Method::POST, &sheets, add_sheet())
        .await;
    assert_eq!(status, 201, "{body}");
    assert!(sheet_names(&scoped.server.file(ID)).contains(&"Added".to_string()));

    let other = std::fs::read(scoped.server.file(OTHER)).unwrap();
    for (token, method, path) in [
        (
            "keeper-secret",
            Method::DELETE,
            format!("/v1/spreadsheets/{OTHER}"),
        ),
        ("keeper-secret", Method::POST, format!("/v1/data/{OTHER}")),
        (
            "form-secret",
            Method::POST,
            format!("/v1/data/{OTHER}/People"),
        ),
    ] {
        let body = Some(json!({"data": [{"name": "x"}], "name": "S", "columns": ["a"]}))
            .filter(|_| method == Method::POST);
        let (status, answer) = scoped.call(token, method.clone(), &path, body).await;
        assert_eq!(status, 404, "{token} {method} {path}: {answer}");
        assert_eq!(detail(&answer), "no spreadsheet has that id");
    }
    assert_eq!(std::fs::read(scoped.server.file(OTHER)).unwrap(), other);
    // A workbook it would make has a new id, beyond its reach: refused.
    let files = scoped.server.stored_files();
    let create = Some(json!({"sheets": [{"name": "New", "columns": ["a"]}]}));
    let (status, body) = scoped
        .call("keeper-secret", Method::POST, "/v1/spreadsheets", create)
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        detail(&body).contains("reaches only the workbooks it lists"),
        "{body}"
    );
    assert_eq!(scoped.server.stored_files(), files);

    let (status, _) = scoped
        .call("keeper-secret", Method::DELETE, &workbook, None)
        .await;
    assert_eq!(status, 204);
    assert!(!scoped.server.file(ID).exists());
}

/// A delete takes whole sheet rows (§11.2): a token for one table may not
/// delete the rows a table beside it, which it does not reach, also holds;
/// rows only its table holds it may. A token for the sheet may.
#[tokio::test]
async fn a_token_for_a_table_deletes_no_rows_of_the_table_beside_it() {
    const TABLES: &str = "6f1c4d2b-3a5e-4c7f-9b8d-0e2f3a4b5c6d";
    let scoped = left_table_server(TABLES, "[\"delete\"]").await;
    let path = format!("/v1/data/{TABLES}/Left");
    let before = std::fs::read(scoped.server.file(TABLES)).unwrap();
    let delete = |row: u32| Some(json!({"type": "row", "row": row}));

    // Row 2 holds a row of Right too.
    let (status, body) = scoped
        .call("left-secret", Method::DELETE, &path, delete(2))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(detail(&body).contains("\"Right\""), "{body}");
    assert_eq!(std::fs::read(scoped.server.file(TABLES)).unwrap(), before);

    // Row 4 is Left's alone.
    let (status, body) = scoped
        .call("left-secret", Method::DELETE, &path, delete(4))
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
    // A token for the whole workbook may take both tables' rows.
    let (status, body) = scoped
        .call("admin-secret", Method::DELETE, &path, delete(2))
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": 1})));
    let grid = read_sheet(&scoped.server.file(TABLES), "Stock");
    assert_eq!(grid[1][0], s("b"));
    assert_eq!(grid[1][2], s("y"));
}

/// A server with the token `left` (secret `left-secret`), which reaches
/// the table `Left` of workbook `id` and may do what `permissions` lists,
/// and that workbook, saved by [`save_tables_side_by_side`].
async fn left_table_server(id: &str, permissions: &str) -> Scoped {
    let left = entry(
        "left",
        "left-secret",
        &format!("[\"{id}\"]"),
        Some("[\"Left\"]"),
        permissions,
    );
    let scoped = scoped_server(&[tokens_file(), left].join("\n")).await;
    save_tables_side_by_side(&scoped.server.file(id));
    scoped
}

/// Sheet `Stock`: table `Left` (column `k`: a, b, c, rows 1–4) and, beside
/// it, table `Right` (column `v`: x, y, rows 1–3), so that sheet rows 2
/// and 3 hold rows of both.
fn save_tables_side_by_side(path: &Path) {
    let mut book = rust_xlsxwriter::Workbook::new();
    let stock = book.add_worksheet().set_name("Stock").unwrap();
    for (row, text) in ["k", "a", "b", "c"].iter().enumerate() {
        stock.write_string(row as u32, 0, *text).unwrap();
    }
    for (row, text) in ["v", "x", "y"].iter().enumerate() {
        stock.write_string(row as u32, 2, *text).unwrap();
    }
    let table = |name: &str, header: &str| {
        let columns = [rust_xlsxwriter::TableColumn::new().set_header(header)];
        rust_xlsxwriter::Table::new()
            .set_name(name)
            .set_columns(&columns)
    };
    stock.add_table(0, 0, 3, 0, &table("Left", "k")).unwrap();
    stock.add_table(0, 2, 2, 2, &table("Right", "v")).unwrap();
    book.save(path).unwrap();
}

#[tokio::test]
async fn a_batch_for_a_table_deletes_no_rows_of_the_table_beside_it() {
    const TABLES: &str = "0b7e9c2a-5d4f-4e1a-8c3b-6f2d9e8a7b10";
    let scoped = left_table_server(TABLES, "[\"insert\", \"delete\"]").await;
    let path = format!("/v1/batch/{TABLES}");
    let before = std::fs::read(scoped.server.file(TABLES)).unwrap();
    let delete = |row: u32| json!({"op": "delete", "sheet": "Left", "type": "row", "row": row});

    // The first delete is Left's alone; the second's row 2 holds a row of
    // Right too: the batch is refused whole, naming the second.
    let batch = json!({"operations": [delete(4), delete(2)]});
    let (status, body) = scoped
        .call("left-secret", Method::POST, &path, Some(batch))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(detail(&body).starts_with("operations[1]: "), "{body}");
    assert!(detail(&body).contains("\"Right\""), "{body}");
    assert_eq!(std::fs::read(scoped.server.file(TABLES)).unwrap(), before);

    // Rows are judged where the operations before put them: two sheet
    // rows inserted before row 2 move `a` and `x` to row 4, `c` to row 6.
    let insert = json!({"op": "insert", "sheet": "Left", "before": 2,
        "data": [{"k": "n1"}, {"k": "n2"}]});
    let batch = json!({"operations": [insert.clone(), delete(4)]});
    let (status, body) = scoped
        .call("left-secret", Method::POST, &path, Some(batch))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(detail(&body).starts_with("operations[1]: "), "{body}");
    assert_eq!(std::fs::read(scoped.server.file(TABLES)).unwrap(), before);

    let batch = json!({"operations": [insert, delete(6)]});
    let (status, body) = scoped
        .call("left-secret", Method::POST, &path, Some(batch))
        .await;
    assert_eq!(status, 200, "{body}");
    let grid = read_sheet(&scoped.server.file(TABLES), "Stock");
    let column = |c: usize| {
        let cell = |row: &Vec<Data>| row.get(c).cloned().unwrap_or(Data::Empty);
        grid.iter().skip(1).map(cell).collect::<Vec<_>>()
    };
    assert_eq!(column(0), [s("n1"), s("n2"), s("a"), s("b")]);
    assert_eq!(column(2), [Data::Empty, Data::Empty, s("x"), s("y")]);
}
