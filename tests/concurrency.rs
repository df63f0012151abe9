//! Contract §6: concurrent writers never lose, duplicate or overwrite an
//! acknowledged row, within one server and across two sharing a directory.

mod common;

use std::collections::HashSet;

use calamine::Data;
use common::*;
use serde_json::json;

/// Every `id` cell of sheet People on disk, checking each appears once.
fn ids_on_disk(server_dir: &std::path::Path) -> HashSet<String> {
    let grid = read_sheet(&server_dir.join(format!("{ID}.xlsx")), "People");
    let mut ids = HashSet::new();
    for row in &grid[4..] {
        let Data::String(id) = &row[0] else {
            panic!("unexpected row {row:?}")
        };
        assert!(ids.insert(id.clone()), "row {id} written twice");
    }
    ids
}

async fn insert_many(
    base: String,
    client: reqwest::Client,
    worker: usize,
    count: usize,
) -> Vec<String> {
    let mut acknowledged = Vec::new();
    for i in 0..count {
        let id = format!("w{worker}-{i}");
        let response = client
            .post(format!("{base}{}", rows_path("People")))
            .json(&json!({"data": [{"name": id, "age": i}]}))
            .send()
            .await
            .expect("request sent");
        assert_eq!(response.status(), 201);
        acknowledged.push(id);
    }
    acknowledged
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_clients_times_ten_inserts_give_two_hundred_rows() {
    let server = Server::start().await;
    people_workbook(&server);
    let tasks: Vec<_> = (0..20)
        .map(|w| {
            tokio::spawn(insert_many(
                server.base.clone(),
                server.client.clone(),
                w,
                10,
            ))
        })
        .collect();
    let mut acknowledged = HashSet::new();
    for task in tasks {
        acknowledged.extend(task.await.unwrap());
    }
    assert_eq!(acknowledged.len(), 200);
    assert_eq!(ids_on_disk(server.data_dir()), acknowledged);
    let (_, read) = server
        .get(&format!("{}?limit=0", rows_path("People")))
        .await;
    assert_eq!(read["total"], 203);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_directory_lose_no_rows() {
    let first = Server::start().await;
    people_workbook(&first);
    // Its own store, cache and in-process locks: only the advisory file
    // lock keeps the two from overwriting each other's writes.
    let second = Server::start_sharing(first.data_dir()).await;

    let tasks: Vec<_> = (0..8)
        .map(|w| {
            let base = if w % 2 == 0 {
                &first.base
            } else {
                &second.base
            };
            tokio::spawn(insert_many(base.clone(), first.client.clone(), w, 10))
        })
        .collect();
    let mut acknowledged = HashSet::new();
    for task in tasks {
        acknowledged.extend(task.await.unwrap());
    }
    assert_eq!(acknowledged.len(), 80);
    assert_eq!(ids_on_disk(first.data_dir()), acknowledged);
}

/// A spreadsheet app saves the workbook (a new file renamed over it) while
/// a write of sheetd is under way: the app's save stays, and the write is
/// applied to it instead of overwriting it.
#[tokio::test]
async fn a_save_by_a_spreadsheet_app_during_a_write_is_not_overwritten() {
    use sheetd::model::request::InsertRows;
    use sheetd::store::{Edit, Store, StoreError};

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{ID}.xlsx"));
    let store = Store::open(
        dir.path(),
        sheetd::Config::with_data_dir(dir.path()).store_limits(),
    )
    .unwrap();
    let sheet = |last: &'static str| vec![vec![Spec::S("name")], vec![Spec::S(last)]];
    make_workbook(&file, &[("People", sheet("first"))]);

    let mut saves = 0;
    let app_save = dir.path().join("app-save.tmp");
    let target = file.clone();
    let id = sheetd::model::SpreadsheetId::parse(ID).unwrap();
    let inserted = store
        .edit(id, None, move |workbook| {
            // The app saves once, after sheetd has read the file.
            if saves == 0 {
                make_workbook(&app_save, &[("People", sheet("saved by the app"))]);
                std::fs::rename(&app_save, &target).unwrap();
            }
            saves += 1;
            let rows = InsertRows::from_json(br#"{"data": [{"name": "from sheetd"}]}"#, 10)
                .map_err(|_| StoreError::Conflict("bad request".into()))?;
            let source = workbook
                .source("People", None)
                .map_err(|e| StoreError::Conflict(e.to_string()))?;
            let n = workbook
                .insert(&source, rows, None)
                .map_err(|e| StoreError::Conflict(e.to_string()))?;
            Ok::<_, StoreError>(Edit {
                value: n,
                changed: true,
            })
        })
        .await
        .unwrap();
    assert_eq!(inserted, 1);
    let names: Vec<Data> = read_sheet(&file, "People")
        .into_iter()
        .map(|row| row[0].clone())
        .collect();
    assert_eq!(names, ["name", "saved by the app", "from sheetd"].map(s));
}
