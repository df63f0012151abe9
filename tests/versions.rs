//! Contract §11.7: earlier versions of each workbook, kept by hard links,
//! listed, downloaded and restored, over a real socket.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use common::*;
use serde_json::json;

fn versions_path() -> String {
    format!("/v1/spreadsheets/{ID}/versions")
}

fn versions_dir(server: &Server) -> PathBuf {
    server.data_dir().join(".sheetd-versions").join(ID)
}

async fn insert(server: &Server, name: &str) {
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"name": name}]}))
        .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn each_write_keeps_the_file_it_replaces_as_a_link_not_a_copy() {
    let server = Server::start().await;
    people_workbook(&server);
    let original = std::fs::read(server.file(ID)).unwrap();
    let original_inode = std::fs::metadata(server.file(ID)).unwrap().ino();

    insert(&server, "Dee").await;
    let after_first = std::fs::read(server.file(ID)).unwrap();
    insert(&server, "Eve").await;

    let (status, list) = server.get(&versions_path()).await;
    assert_eq!(status, 200, "{list}");
    let etags: Vec<&str> = list["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["etag"].as_str().unwrap())
        .collect();
    assert_eq!(etags, [etag_of(&after_first), etag_of(&original)]);
    assert_eq!(list["versions"][1]["bytes"], original.len());

    // Downloaded byte for byte.
    let hex = etag_of(&original).trim_matches('"').to_owned();
    let response = server
        .client
        .get(format!("{}{}/{hex}", server.base, versions_path()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["etag"], etag_of(&original).as_str());
    let modified = response.headers()["last-modified"].clone();
    assert_eq!(response.bytes().await.unwrap(), original);
    // A version never changes: a client holding it is told so, without it.
    for (name, value) in [
        ("If-None-Match", etag_of(&original)),
        ("If-Modified-Since", modified.to_str().unwrap().to_owned()),
    ] {
        let response = server
            .client
            .get(format!("{}{}/{hex}", server.base, versions_path()))
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 304, "{name}");
        assert_eq!(response.headers()["etag"], etag_of(&original).as_str());
        assert!(response.bytes().await.unwrap().is_empty());
    }

    // The version is the very file the write replaced: no copy was made.
    let inodes: Vec<u64> = std::fs::read_dir(versions_dir(&server))
        .unwrap()
        .map(|entry| entry.unwrap().metadata().unwrap().ino())
        .collect();
    assert!(inodes.contains(&original_inode), "{inodes:?}");

    // Versions are not workbooks.
    let (_, listing) = server.get("/v1/spreadsheets").await;
    assert_eq!(listing["total"], 1);
}

#[tokio::test]
async fn a_restore_is_a_write_that_if_match_guards() {
    let server = Server::start().await;
    people_workbook(&server);
    let original = std::fs::read(server.file(ID)).unwrap();
    insert(&server, "Dee").await;
    let current = etag_of(&std::fs::read(server.file(ID)).unwrap());
    let restore = format!(
        "{}{}/{}/restore",
        server.base,
        versions_path(),
        etag_of(&original).trim_matches('"')
    );

    let stale = server
        .client
        .post(&restore)
        .header("If-Match", etag_of(b"something else"))
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 412);
    assert_eq!(etag_of(&std::fs::read(server.file(ID)).unwrap()), current);

    let restored = server
        .client
        .post(&restore)
        .header("If-Match", &current)
        .send()
        .await
        .unwrap();
    assert_eq!(restored.status(), 200);
    assert_eq!(restored.headers()["etag"], etag_of(&original).as_str());
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), original);
    let (_, rows) = server.get(&rows_path("People")).await;
    assert_eq!(rows["total"], 3, "the inserted row is gone again");

    // The file the restore replaced is a version too.
    let (_, list) = server.get(&versions_path()).await;
    assert_eq!(list["versions"][0]["etag"], current.as_str());
}

#[tokio::test]
async fn only_the_newest_versions_are_kept_and_they_go_with_their_workbook() {
    let server = Server::start_with(|c| c.keep_versions = 2).await;
    people_workbook(&server);
    for name in ["a", "b", "c", "d"] {
        insert(&server, name).await;
    }
    let (_, list) = server.get(&versions_path()).await;
    assert_eq!(list["versions"].as_array().unwrap().len(), 2);
    // On disk too: the versions dropped are renamed `.gone-…` at once (and
    // unlinked by a thread of their own, not within the write).
    let on_disk = std::fs::read_dir(versions_dir(&server)).unwrap();
    let named: Vec<String> = on_disk
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with(".gone-"))
        .collect();
    assert_eq!(named.len(), 2, "{named:?}");

    let (status, _) = server
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/spreadsheets/{ID}"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (status, _) = server.get(&versions_path()).await;
    assert_eq!(status, 404);
    assert!(!versions_dir(&server).exists());
}

#[tokio::test]
async fn unknown_and_malformed_versions() {
    let server = Server::start_with(|c| c.keep_versions = 0).await;
    people_workbook(&server);
    insert(&server, "Dee").await;
    let (status, list) = server.get(&versions_path()).await;
    assert_eq!((status.as_u16(), list), (200, json!({"versions": []})));
    let (status, _) = server
        .get(&format!("{}/{}", versions_path(), "0".repeat(64)))
        .await;
    assert_eq!(status, 404);
    let (status, body) = server.get(&format!("{}/nope", versions_path())).await;
    assert_eq!(status, 400, "{body}");
}
