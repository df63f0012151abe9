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
