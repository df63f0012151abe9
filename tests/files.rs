//! What happens to the files: leftovers of a crash, edits made outside the
//! service, permissions, sheet visibility, and content a rewrite would lose.

mod common;

use std::os::unix::fs::PermissionsExt;

use calamine::{Reader, SheetVisible, Xlsx, open_workbook};
use common::*;
use serde_json::json;

#[tokio::test]
async fn start_up_removes_temp_files_left_by_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let leftover = dir.path().join(format!(".sheetd-tmp-{ID}-abc123.xlsx"));
    std::fs::write(&leftover, b"half a workbook").unwrap();
    let unrelated = dir.path().join("notes.txt");
    std::fs::write(&unrelated, b"mine").unwrap();

    let server = Server::start_in(dir, |_| {}).await;

    assert!(!leftover.exists(), "leftover temp file removed");
    assert!(unrelated.exists(), "other files left alone");
    people_workbook(&server);
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 201);
    let names: Vec<_> = std::fs::read_dir(server.data_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".sheetd-tmp"))
        .collect();
    assert!(names.is_empty(), "no temp file after a write: {names:?}");
}

#[tokio::test]
async fn a_workbook_replaced_on_disk_is_read_again() {
    let server = Server::start().await;
    people_workbook(&server);
    let (_, first) = server
        .get(&format!("{}?limit=0", rows_path("People")))
        .await;
    assert_eq!(first["total"], 3);
    // A write first, so that the cached version is one the service wrote.
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "before"}]}))
        .await;
    assert_eq!(status, 201);

    // Someone saves another version of the file, as a spreadsheet app would.
    make_workbook(
        &server.file(ID),
        &[("People", vec![vec![Spec::S("name")], vec![Spec::S("only")]])],
    );
    let (_, second) = server.get(&rows_path("People")).await;
    assert_eq!(second["data"], json!([{"_row": 2, "name": "only"}]));

    // And a write starts from the new version, not the cached old one.
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "next"}]}))
        .await;
    assert_eq!(status, 201);
    let grid = read_sheet(&server.file(ID), "People");
    assert_eq!(
        grid,
        vec![vec![s("name")], vec![s("only")], vec![s("next")]]
    );
}

#[tokio::test]
async fn a_write_keeps_the_file_permissions() {
    let server = Server::start().await;
    people_workbook(&server);
    std::fs::set_permissions(server.file(ID), std::fs::Permissions::from_mode(0o640)).unwrap();
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 201);
    let mode = std::fs::metadata(server.file(ID))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[tokio::test]
async fn hidden_sheets_stay_hidden_and_in_order() {
    let server = Server::start().await;
    server.add_fixture("openpyxl/many_sheets.xlsx", ID);
    let (status, _) = server
        .post(
            &rows_path("Gamma"),
            json!({"data": [{"k": 4, "v": "Gamma-4"}]}),
        )
        .await;
    assert_eq!(status, 201);
    let book: Xlsx<_> = open_workbook(server.file(ID)).unwrap();
    let sheets: Vec<_> = book
        .sheets_metadata()
        .iter()
        .map(|s| (s.name.clone(), s.visible))
        .collect();
    assert_eq!(
        sheets,
        [
            ("Alpha".to_string(), SheetVisible::Visible),
            ("Beta".to_string(), SheetVisible::Hidden),
            ("Gamma".to_string(), SheetVisible::Visible),
        ]
    );
    for (sheet, rows) in [("Alpha", 4), ("Beta", 4), ("Gamma", 5)] {
        assert_eq!(read_sheet(&server.file(ID), sheet).len(), rows, "{sheet}");
    }
}

#[tokio::test]
async fn content_of_a_third_producer_is_carried_through_a_write() {
    type AddFeature = Box<dyn FnOnce(&mut rust_xlsxwriter::Worksheet)>;
    let cases: Vec<(&str, AddFeature)> = vec![
        (
            "conditionalFormatting",
            Box::new(|s| {
                let rule = rust_xlsxwriter::ConditionalFormatCell::new()
                    .set_rule(rust_xlsxwriter::ConditionalFormatCellRule::GreaterThan(5))
                    .set_format(rust_xlsxwriter::Format::new().set_bold());
                s.add_conditional_format(1, 0, 9, 0, &rule).unwrap();
            }),
        ),
        (
            "legacyDrawing",
            Box::new(|s| {
                s.insert_note(1, 0, &rust_xlsxwriter::Note::new("a note"))
                    .unwrap();
            }),
        ),
        (
            "dataValidations",
            Box::new(|s| {
                let rule = rust_xlsxwriter::DataValidation::new()
                    .allow_list_strings(&["a", "b"])
                    .unwrap();
                s.add_data_validation(1, 1, 9, 1, &rule).unwrap();
            }),
        ),
    ];
    for (element, add) in cases {
        let server = Server::start().await;
        workbook_with(&server.file(ID), add);
        let before = std::fs::read(server.file(ID)).unwrap();

        let (status, body) = server
            .post(&rows_path("People"), json!({"data": [{"name": "b"}]}))
            .await;

        assert_eq!(status, 201, "{element}: {body}");
        let after = std::fs::read(server.file(ID)).unwrap();
        let sheet = "xl/worksheets/sheet1.xml";
        let kept = without_ids(elements(&part(&before, sheet).unwrap(), element));
        assert_eq!(kept.len(), 1, "{element}: the original has it");
        assert_eq!(
            without_ids(elements(&part(&after, sheet).unwrap(), element)),
            kept,
            "{element}: carried as it was"
        );
        assert_eq!(read_sheet(&server.file(ID), "People").len(), 3, "{element}");
    }
}

/// Every file and directory under `dir`, hidden ones included.
fn everything_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path.clone());
            }
            found.push(path);
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn requests_for_unknown_ids_leave_no_files() {
    let server = Server::start().await;
    people_workbook(&server);
    let before = everything_under(server.data_dir());
    for _ in 0..20 {
        let unknown = uuid::Uuid::new_v4();
        let (status, _) = server
            .send(
                reqwest::Method::DELETE,
                &format!("/v1/spreadsheets/{unknown}"),
                None,
            )
            .await;
        assert_eq!(status, 404);
        let rows = format!("/v1/data/{unknown}/People");
        let (status, _) = server.post(&rows, json!({"data": [{"name": "x"}]})).await;
        assert_eq!(status, 404);
        let filter = json!({"type": "filter", "filter": "name:eq:x", "data": {"age": 1}});
        assert_eq!(server.patch(&rows, filter).await.0, 404);
        assert_eq!(server.get(&rows).await.0, 404);
    }
    assert_eq!(everything_under(server.data_dir()), before);
}

#[tokio::test]
async fn a_removed_workbook_leaves_no_lock_file_and_orphans_go_at_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let locks = dir.path().join(".sheetd-locks");
    std::fs::create_dir(&locks).unwrap();
    let orphan = locks.join("0b1e3a5c-0000-4000-8000-00000000aaaa.lock");
    std::fs::write(&orphan, b"").unwrap();
    let server = Server::start_in(dir, |_| {}).await;
    assert!(!orphan.exists(), "the lock of a workbook that is gone");

    people_workbook(&server);
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 201);
    assert!(locks.join(format!("{ID}.lock")).exists());
    let (status, _) = server
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/spreadsheets/{ID}"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(
        everything_under(server.data_dir()),
        vec![locks],
        "only the (empty) lock directory is left"
    );
}

#[tokio::test]
async fn a_symbolic_link_named_like_a_workbook_is_neither_served_nor_replaced() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secret.xlsx");
    std::fs::copy(fixture_path("openpyxl/people.xlsx"), &target).unwrap();
    let before = std::fs::read(&target).unwrap();
    let server = Server::start().await;
    let link = server.file(ID);
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let (status, body) = server.get(&rows_path("People")).await;
    assert_eq!(status, 500, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("not a regular file"), "{detail}");
    assert!(
        !detail.contains(outside.path().to_str().unwrap()),
        "{detail}"
    );
    assert_eq!(server.download(ID).await.status(), 500);
    let (status, _) = server
        .post(&rows_path("People"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 500);

    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), before);
}

#[tokio::test]
async fn a_temp_directory_that_cannot_be_written_fails_the_write_without_naming_it() {
    let missing = std::path::PathBuf::from("/nonexistent/sheetd-temp");
    let server = Server::start_with(|c| c.temp_dir = Some(missing.clone())).await;
    people_workbook(&server);
    let before = std::fs::read(server.file(ID)).unwrap();
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"name": "x"}]}))
        .await;
    assert_eq!(status, 500, "{body}");
    assert!(!body.to_string().contains("nonexistent"), "{body}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
    // Reads do not need it.
    assert_eq!(server.get(&rows_path("People")).await.0, 200);
    // Every file the store writes uses it: a workbook made from names too.
    let new = json!({"sheets": [{"name": "Q3", "columns": ["a"]}]});
    let (status, body) = server.post("/v1/spreadsheets", new.clone()).await;
    assert_eq!(status, 500, "{body}");
    let (status, _) = server
        .send(
            reqwest::Method::PUT,
            &format!("/v1/spreadsheets/{ID}"),
            Some(new),
        )
        .await;
    assert_eq!(status, 500);
    assert_eq!(server.stored_files(), [format!("{ID}.xlsx")]);
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), before);
}
