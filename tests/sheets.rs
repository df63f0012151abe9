//! §10.3 `POST /v1/data/{spreadsheet_id}`: adding a sheet, last, with its
//! header row, to a workbook that keeps everything else it holds.

mod common;

use calamine::{Data, Reader};
use common::*;
use reqwest::StatusCode;
use serde_json::json;

/// The fidelity fixtures a sheet is added to, from both producers.
const FIXTURES: [&str; 6] = [
    "chart",
    "conditional",
    "validations",
    "merged",
    "defined_names",
    "hyperlinks",
];

/// Elements of a worksheet part that a rewrite puts back as the file had
/// them (hyperlinks are rewritten from the model, in the writer's words).
const SHEET_ELEMENTS: [&str; 5] = [
    "conditionalFormatting",
    "dataValidation",
    "mergeCell",
    "drawing",
    "col",
];

fn data_path() -> String {
    format!("/v1/data/{ID}")
}

/// A workbook made by rust_xlsxwriter: a `Data` sheet whose `C1` reads
/// `Q3!A1` (no such sheet yet), and a chart sheet named `Chart`.
fn workbook_waiting_for_q3() -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let data = book.add_worksheet().set_name("Data").unwrap();
    data.write(0, 0, "name").unwrap();
    data.write(0, 1, "score").unwrap();
    data.write(1, 0, "Ann").unwrap();
    data.write(1, 1, 7).unwrap();
    data.write_formula(
        0,
        2,
        rust_xlsxwriter::Formula::new("=IFERROR(Q3!A1,\"none\")").set_result("none"),
    )
    .unwrap();
    let mut chart = rust_xlsxwriter::Chart::new_column();
    chart.add_series().set_values("Data!$B$2:$B$2");
    book.add_chartsheet()
        .set_name("Chart")
        .unwrap()
        .insert_chart(0, 0, &chart)
        .unwrap();
    book.save_to_buffer().unwrap()
}

#[tokio::test]
async fn a_sheet_is_added_last_with_its_header_row() {
    let server = Server::start().await;
    let original = workbook_waiting_for_q3();
    std::fs::write(server.file(ID), &original).unwrap();

    let body = json!({"name": "Q3", "columns": ["item", "price"]});
    let (status, answer) = server.post(&data_path(), body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(
        answer,
        json!({"name": "Q3", "header_row": 1, "columns": ["item", "price"], "rows": 0})
    );

    let file = server.file(ID);
    assert_eq!(sheet_names(&file), ["Data", "Chart", "Q3"]);
    assert_eq!(read_sheet(&file, "Q3"), [vec![s("item"), s("price")]]);
    assert_eq!(
        read_sheet(&file, "Data")[1],
        [s("Ann"), Data::Float(7.0)],
        "the other sheet's cells stay"
    );
    // The formula that named the missing sheet reads it now, and its
    // cached result says so.
    assert_eq!(read_sheet(&file, "Data")[0][2], s("item"));
    let written = std::fs::read(&file).unwrap();
    assert_parts_kept(
        &original,
        &written,
        &["xl/chartsheets/sheet1.xml", "xl/charts/chart1.xml"],
    );

    let (status, listed) = server.get(&data_path()).await;
    assert_eq!(status, 200);
    assert_eq!(
        listed["sheets"][1],
        json!({"name": "Q3", "header_row": 1, "columns": ["item", "price"], "rows": 0})
    );
    let (status, _) = server
        .post(
            &rows_path("Q3"),
            json!({"data": [{"item": "pen", "price": 2}]}),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(read_sheet(&file, "Q3")[1], [s("pen"), Data::Float(2.0)]);
}

/// What a file of another producer holds comes back after a sheet is
/// added: every part the writer does not make itself byte for byte, each
/// sheet's cells, and the elements around them.
#[tokio::test]
async fn adding_a_sheet_keeps_what_real_workbooks_hold() {
    for producer in ["libreoffice", "openpyxl"] {
        for name in FIXTURES {
            let case = format!("{producer}/{name}");
            let server = Server::start().await;
            let from = fixture_path(&format!("fidelity/{producer}/{name}.xlsx"));
            let original = std::fs::read(&from).unwrap();
            std::fs::write(server.file(ID), &original).unwrap();
            let sheets_before = sheet_names(&server.file(ID));

            let body = json!({"name": "Added", "columns": ["a", "b"]});
            let (status, answer) = server.post(&data_path(), body).await;
            assert_eq!(status, StatusCode::CREATED, "{case}: {answer}");

            let file = server.file(ID);
            let written = std::fs::read(&file).unwrap();
            let mut expected_names = sheets_before.clone();
            expected_names.push("Added".into());
            assert_eq!(sheet_names(&file), expected_names, "{case}");
            assert_eq!(read_sheet(&file, "Added"), [vec![s("a"), s("b")]], "{case}");
            for sheet in &sheets_before {
                assert_eq!(
                    read_sheet(&file, sheet),
                    read_sheet(&from, sheet),
                    "{case}: {sheet}"
                );
            }
            for carried in carried_parts(&original) {
                assert_eq!(
                    part(&written, &carried),
                    part(&original, &carried),
                    "{case}: {carried}"
                );
            }
            let before = worksheet_parts(&original);
            let after = worksheet_parts(&written);
            for (i, xml) in before.iter().enumerate() {
                for element in SHEET_ELEMENTS {
                    assert_eq!(
                        without_ids(elements(&after[i], element)),
                        without_ids(elements(xml, element)),
                        "{case}: sheet {i}'s {element}"
                    );
                }
            }
        }
    }
}

/// The parts a rewrite carries as they were: all but the workbook, the
/// worksheets, the styles, the shared strings, the document properties
/// and the package's bookkeeping, which the writer makes.
fn carried_parts(package: &[u8]) -> Vec<String> {
    let zip = zip::ZipArchive::new(std::io::Cursor::new(package)).unwrap();
    let made = [
        "[Content_Types].xml",
        "_rels/.rels",
        "xl/workbook.xml",
        "xl/_rels/workbook.xml.rels",
        "xl/styles.xml",
        "xl/sharedStrings.xml",
        "xl/theme/theme1.xml",
    ];
    zip.file_names()
        .filter_map(Result::ok)
        .map(|name| name.into_owned())
        .filter(|name| {
            !made.contains(&name.as_str())
                && !name.starts_with("xl/worksheets/")
                && !name.starts_with("docProps/")
                && !name.ends_with('/')
        })
        .collect()
}

/// The worksheet parts of a package, in the workbook's sheet order.
fn worksheet_parts(package: &[u8]) -> Vec<Vec<u8>> {
    let book: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(std::io::Cursor::new(package.to_vec())).unwrap();
    let sheets = book.sheets_metadata().to_vec();
    let rels = part(package, "xl/_rels/workbook.xml.rels").unwrap();
    let workbook = part(package, "xl/workbook.xml").unwrap();
    let entries = elements(&workbook, "sheet");
    sheets
        .iter()
        .filter(|meta| meta.typ == calamine::SheetType::WorkSheet)
        .filter_map(|meta| {
            let entry = entries
                .iter()
                .find(|e| e.contains(&format!("name=\"{}\"", meta.name)))?;
            let id = attribute(entry, "r:id")?;
            let relationship = elements(&rels, "Relationship")
                .into_iter()
                .find(|r| attribute(r, "Id").as_deref() == Some(id.as_str()))?;
            let target = attribute(&relationship, "Target")?;
            let name = match target.strip_prefix('/') {
                Some(absolute) => absolute.to_owned(),
                None => format!("xl/{target}"),
            };
            part(package, &name)
        })
        .collect()
}

/// The value of attribute `name` in an element's text.
fn attribute(element: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = element.find(&key)? + key.len();
    let end = element[start..].find('"')?;
    Some(element[start..start + end].to_owned())
}

#[tokio::test]
async fn a_taken_name_is_a_conflict_and_a_name_past_the_format_a_400() {
    let server = Server::start().await;
    std::fs::write(server.file(ID), workbook_waiting_for_q3()).unwrap();
    let before = std::fs::read(server.file(ID)).unwrap();
    for (taken, by) in [("data", "Data"), ("CHART", "Chart")] {
        let body = json!({"name": taken, "columns": ["a"]});
        let (status, answer) = server.post(&data_path(), body).await;
        assert_eq!(status, StatusCode::CONFLICT, "{taken}: {answer}");
        let detail = answer["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(&format!("{by:?}")), "{taken}: {answer}");
    }
    // Within 31 characters, but more than 31 UTF-16 code units: a limit of
    // the format, told like the other rules of the body.
    let body = json!({"name": "😀".repeat(16), "columns": ["_row"]});
    let (status, answer) = server.post(&data_path(), body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["error"],
        "name: must take at most 31 UTF-16 code units (an emoji takes two), \
         columns[0]: must not be _row (each row's number is read under it)"
    );
    // XML has no place for a control character: the workbook part would
    // open in no other reader.
    for name in ["x\u{1}y", "\u{0}", "tab\there", "x\u{fffe}"] {
        let body = json!({"name": name, "columns": ["a"]});
        let (status, answer) = server.post(&data_path(), body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name:?}: {answer}");
        assert_eq!(answer["error"], "name: must not hold a control character");
    }
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}

#[tokio::test]
async fn a_bad_request_is_400_naming_every_problem_and_an_unknown_id_404() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();

    let body = json!({"name": "a:b", "columns": ["x", "x", ""], "colour": "red"});
    let (status, answer) = server.post("/v1/data/not-an-id", body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer["error"],
        "spreadsheet_id: must be a UUID in its hyphenated 36-character form, \
         colour: is not a known field, name: must not hold any of [ ] : * ? / \\, \
         columns[1]: \"x\" is given twice, columns[2]: must not be empty"
    );
    for (body, problem) in [
        (json!({"columns": ["a"]}), "name: is required"),
        (json!({"name": "Q3"}), "columns: is required"),
        (
            json!({"name": "Q3", "columns": []}),
            "columns: must be a non-empty array of column names",
        ),
        (json!(["Q3"]), "body: must be a JSON object"),
    ] {
        let (status, answer) = server.post(&data_path(), body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert_eq!(answer["error"], problem);
    }
    let (status, answer) = server
        .post(&data_path(), json!({"name": "Q3", "columns": ["a"]}))
        .await;
    assert_eq!(status, 201, "the workbook takes a valid request: {answer}");
    let (status, answer) = server
        .post(
            "/v1/data/0b1e3a5c-0000-4000-8000-0000000000ff",
            json!({"name": "Q4", "columns": ["a"]}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    assert_eq!(server.stored_files(), [format!("{ID}.xlsx")]);
    assert_ne!(std::fs::read(server.file(ID)).unwrap(), before);
    assert_eq!(
        sheet_names(&server.file(ID)).last().map(String::as_str),
        Some("Q3")
    );
}

#[tokio::test]
async fn a_sheet_added_again_with_the_same_key_is_added_once() {
    let server = Server::start().await;
    people_workbook(&server);
    let send = || {
        server
            .client
            .post(format!("{}{}", server.base, data_path()))
            .header("Idempotency-Key", "add-q3")
            .json(&json!({"name": "Q3", "columns": ["a"]}))
            .send()
    };
    let first = send().await.unwrap();
    assert_eq!(first.status(), 201);
    let second = send().await.unwrap();
    assert_eq!(second.status(), 201);
    assert_eq!(second.headers()["idempotent-replayed"], "true");
    let (_, body) = json_of(second).await;
    assert_eq!(
        body,
        json!({"name": "Q3", "header_row": 1, "columns": ["a"], "rows": 0})
    );
    let names = sheet_names(&server.file(ID));
    assert_eq!(names.iter().filter(|n| *n == "Q3").count(), 1, "{names:?}");
}

/// A rewrite holds a file open per sheet: a workbook made or grown through
/// the API stops at 1,024 sheets.
#[tokio::test]
async fn sheets_stop_at_1024() {
    let server = Server::start().await;
    let sheets = |n: usize| -> Vec<serde_json::Value> {
        (1..=n)
            .map(|i| json!({"name": format!("S{i}"), "columns": ["a"]}))
            .collect()
    };
    let (status, answer) = server
        .post("/v1/spreadsheets", json!({"sheets": sheets(1025)}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"], "sheets: must hold at most 1024 sheets");
    assert!(server.stored_files().is_empty());

    let (status, answer) = server
        .post("/v1/spreadsheets", json!({"sheets": sheets(1024)}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let id = answer["spreadsheet_id"].as_str().unwrap().to_owned();
    // At the bound, the workbook is still written to.
    let (status, answer) = server
        .post(&format!("/v1/data/{id}/S1024"), json!({"data": [{"a": 1}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let before = std::fs::read(server.file(&id)).unwrap();
    let body = json!({"name": "One more", "columns": ["a"]});
    let (status, answer) = server.post(&format!("/v1/data/{id}"), body).await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    assert_eq!(std::fs::read(server.file(&id)).unwrap(), before);
}

/// Two requests adding the same name at once: one sheet is added, the
/// other request is told the name is taken.
#[tokio::test]
async fn of_two_adds_of_one_name_at_once_one_wins() {
    let server = Server::start().await;
    people_workbook(&server);
    let path = data_path();
    let add =
        |columns: [&'static str; 1]| server.post(&path, json!({"name": "Q3", "columns": columns}));
    let ((first, _), (second, _)) = tokio::join!(add(["a"]), add(["b"]));
    let mut statuses = [first.as_u16(), second.as_u16()];
    statuses.sort();
    assert_eq!(statuses, [201, 409]);
    let names = sheet_names(&server.file(ID));
    assert_eq!(names.iter().filter(|n| *n == "Q3").count(), 1, "{names:?}");
}
