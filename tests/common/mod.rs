//! Test helpers: a real server on an ephemeral port with its own data
//! directory, requests that return status + JSON, workbooks made with
//! rust_xlsxwriter, and sheets read back from disk with calamine.
#![allow(dead_code)] // each test binary uses a different part of this file

pub mod elements;
pub mod looks;
pub mod spawn;

use std::path::{Path, PathBuf};

use calamine::{Data, Reader, Xlsx, open_workbook};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sheetd::store::Store;
use sheetd::{AppState, Config};
use tempfile::TempDir;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The path of `fixtures/<name>`.
pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The `ETag` of a file holding `bytes`: its BLAKE3 hash in lower-case
/// hex, quoted (what `b3sum` prints), computed here, not by sheetd.
pub fn etag_of(bytes: &[u8]) -> String {
    format!("\"{}\"", blake3::hash(bytes).to_hex())
}

/// The spreadsheet id tests use for their main workbook.
pub const ID: &str = "0b1e3a5c-0000-4000-8000-00000000000a";

/// A running server; stops when dropped.
pub struct Server {
    pub base: String,
    pub dir: TempDir,
    /// The directory the server serves: `dir`, unless it shares another's.
    data_dir: PathBuf,
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    _task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    pub async fn start() -> Server {
        Server::start_with(|_| {}).await
    }

    /// Starts a server whose configuration `adjust` may change.
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        Server::start_in(dir, adjust).await
    }

    /// Starts a server on an existing data directory.
    pub async fn start_in(dir: TempDir, adjust: impl FnOnce(&mut Config)) -> Server {
        let data_dir = dir.path().to_path_buf();
        Server::launch(dir, data_dir, adjust).await
    }

    /// A second server (own store, cache and in-process locks) on the data
    /// directory of another: like a second process sharing the directory.
    pub async fn start_sharing(data_dir: &Path) -> Server {
        let unused = tempfile::tempdir().expect("temp dir");
        Server::launch(unused, data_dir.to_path_buf(), |_| {}).await
    }

    async fn launch(dir: TempDir, data_dir: PathBuf, adjust: impl FnOnce(&mut Config)) -> Server {
        let mut config = Config::with_data_dir(&data_dir);
        adjust(&mut config);
        let store = Store::open(&data_dir, config.store_limits()).expect("open store");
        let state = AppState::new(config, store).expect("server state");
        state.keyring.watch(std::time::Duration::from_millis(50));
        // Bound before the server task starts: requests can be sent at once.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(sheetd::serve(listener, state, async {
            let _ = rx.await;
        }));
        Server {
            base,
            dir,
            data_dir,
            client: reqwest::Client::new(),
            shutdown: Some(tx),
            _task: task,
        }
    }

    /// The directory the server serves.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The names of the `.xlsx` files in the data directory, sorted.
    pub fn stored_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.data_dir())
            .expect("data dir")
            .map(|e| {
                e.expect("entry")
                    .file_name()
                    .into_string()
                    .expect("utf-8 name")
            })
            .filter(|n| n.ends_with(".xlsx"))
            .collect();
        names.sort();
        names
    }

    /// The path of a spreadsheet's file.
    pub fn file(&self, id: &str) -> PathBuf {
        self.data_dir.join(format!("{id}.xlsx"))
    }

    /// Copies `fixtures/<name>` in as spreadsheet `id`.
    pub fn add_fixture(&self, name: &str, id: &str) {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        std::fs::copy(&from, self.file(id)).unwrap_or_else(|e| panic!("copy {from:?}: {e}"));
    }

    /// `GET /v1/spreadsheets/{id}`: the workbook's bytes, as a response.
    pub async fn download(&self, id: &str) -> reqwest::Response {
        self.client
            .get(format!("{}/v1/spreadsheets/{id}", self.base))
            .send()
            .await
            .expect("request sent")
    }

    /// Sends a request with an optional JSON body; returns status and JSON body.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request sent");
        json_of(response).await
    }

    /// `GET path`: the answer's body as text, whatever its status.
    pub async fn text(&self, path: &str) -> String {
        let url = format!("{}{path}", self.base);
        let response = self.client.get(url).send().await.expect("request sent");
        response.text().await.expect("body")
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::POST, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::PATCH, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::DELETE, path, Some(body)).await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Status and body of a response whose body is JSON (or empty: `Null`).
pub async fn json_of(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let bytes = response.bytes().await.expect("body");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    };
    (status, body)
}

/// `/v1/data/{ID}/{sheet}`.
pub fn rows_path(sheet: &str) -> String {
    format!("/v1/data/{ID}/{sheet}")
}

/// The `_row` numbers a read of `sheet` with the query `query` answers,
/// asserting 200.
pub async fn row_numbers(server: &Server, sheet: &str, query: &str) -> Vec<u64> {
    let (status, body) = server.get(&format!("{}?{query}", rows_path(sheet))).await;
    assert_eq!(status, StatusCode::OK, "{query}: {body}");
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|row| row["_row"].as_u64().expect("_row"))
        .collect()
}

/// A text cell as calamine reads it.
pub fn s(text: &str) -> Data {
    Data::String(text.into())
}

/// A sheet read back from disk: `grid[row][column]` with absolute positions
/// (row 0 is the sheet's row 1), trailing empties trimmed.
pub fn read_sheet(path: &Path, sheet: &str) -> Vec<Vec<Data>> {
    let mut workbook: Xlsx<_> = open_workbook(path).expect("workbook opens");
    let range = workbook.worksheet_range(sheet).expect("sheet exists");
    let mut grid: Vec<Vec<Data>> = Vec::new();
    if let Some((row0, col0)) = range.start() {
        for (r, row) in range.rows().enumerate() {
            let row_index = row0 as usize + r;
            if grid.len() <= row_index {
                grid.resize_with(row_index + 1, Vec::new);
            }
            let mut cells = vec![Data::Empty; col0 as usize];
            cells.extend(row.iter().cloned());
            while cells.last() == Some(&Data::Empty) {
                cells.pop();
            }
            grid[row_index] = cells;
        }
    }
    while grid.last().is_some_and(Vec::is_empty) {
        grid.pop();
    }
    grid
}

/// The formula text of every formula cell of a sheet on disk, by position.
pub fn formulas_of(path: &Path, sheet: &str) -> Vec<(u32, u32, String)> {
    let mut workbook: Xlsx<_> = open_workbook(path).expect("workbook opens");
    let range = workbook.worksheet_formula(sheet).expect("sheet exists");
    range
        .cells()
        .filter(|(_, _, f)| !f.is_empty())
        .map(|(r, c, f)| {
            let (row0, col0) = range.start().expect("non-empty range");
            (row0 + r as u32, col0 + c as u32, f.clone())
        })
        .collect()
}

/// The sheet names of a workbook on disk, in order.
pub fn sheet_names(path: &Path) -> Vec<String> {
    let workbook: Xlsx<_> = open_workbook(path).expect("workbook opens");
    workbook.sheet_names()
}

/// Asserts two grids are equal, naming the first differing cell.
pub fn assert_grid_eq(actual: &[Vec<Data>], expected: &[Vec<Data>]) {
    let rows = actual.len().max(expected.len());
    for r in 0..rows {
        let (a, e) = (actual.get(r), expected.get(r));
        let columns = a.map_or(0, Vec::len).max(e.map_or(0, Vec::len));
        for c in 0..columns {
            let av = a.and_then(|row| row.get(c)).unwrap_or(&Data::Empty);
            let ev = e.and_then(|row| row.get(c)).unwrap_or(&Data::Empty);
            assert_eq!(av, ev, "cell at row {} column {} differs", r + 1, c + 1);
        }
    }
}

/// A cell of a generated workbook.
pub enum Spec {
    S(&'static str),
    N(f64),
    B(bool),
    /// A date given as an Excel serial, shown as `yyyy/mm/dd`.
    D(f64),
    /// A formula and its cached result.
    F(&'static str, &'static str),
    E,
}

/// Writes a workbook with rust_xlsxwriter: sheets in order, rows from row 1.
pub fn make_workbook(path: &Path, sheets: &[(&str, Vec<Vec<Spec>>)]) {
    let mut book = rust_xlsxwriter::Workbook::new();
    let date = rust_xlsxwriter::Format::new().set_num_format("yyyy/mm/dd");
    for (name, rows) in sheets {
        let sheet = book.add_worksheet();
        sheet.set_name(*name).expect("sheet name");
        for (r, row) in rows.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                let (r, c) = (r as u32, c as u16);
                match cell {
                    Spec::S(s) => sheet.write_string(r, c, *s).map(drop),
                    Spec::N(n) => sheet.write_number(r, c, *n).map(drop),
                    Spec::B(b) => sheet.write_boolean(r, c, *b).map(drop),
                    Spec::D(d) => sheet.write_number_with_format(r, c, *d, &date).map(drop),
                    Spec::F(f, v) => sheet
                        .write_formula(r, c, rust_xlsxwriter::Formula::new(*f).set_result(*v))
                        .map(drop),
                    Spec::E => Ok(()),
                }
                .expect("cell written");
            }
        }
    }
    book.save(path).expect("workbook saved");
}

/// A workbook (written by rust_xlsxwriter) with a sheet People of one
/// column, `name`, and one row, `a`, to which `add` adds one feature.
pub fn workbook_with(path: &Path, add: impl FnOnce(&mut rust_xlsxwriter::Worksheet)) {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("People").unwrap();
    sheet.write_string(0, 0, "name").unwrap();
    sheet.write_string(1, 0, "a").unwrap();
    add(sheet);
    book.save(path).unwrap();
}

/// The "People" workbook most tests start from, as spreadsheet [`ID`]:
/// sheet People (name, age, city, joined, active) with three rows, and a
/// second sheet Other with a formula that must survive every write.
pub fn people_workbook(server: &Server) {
    use Spec::*;
    make_workbook(
        &server.file(ID),
        &[
            (
                "People",
                vec![
                    vec![S("name"), S("age"), S("city"), S("joined"), S("active")],
                    vec![S("Alice"), N(30.0), S("Berlin"), D(44259.0), B(true)],
                    vec![S("Bob"), N(25.0), S("Paris"), D(44196.0), B(false)],
                    vec![S("Carol"), N(41.0), E, D(43647.0), B(true)],
                ],
            ),
            (
                "Other",
                vec![
                    vec![S("k"), S("v")],
                    vec![S("x"), N(1.5)],
                    vec![S("sum"), F("=1+2", "3")],
                ],
            ),
        ],
    );
}

/// `package` packed again, each part's text as `edit` makes it from its
/// name and text (parts that are not text, such as images, as they were).
pub fn repacked(package: &[u8], edit: impl Fn(&str, String) -> String) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(package)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut part = archive.by_index(i).unwrap();
        let name = part.name().unwrap().into_owned();
        let mut bytes = Vec::new();
        part.read_to_end(&mut bytes).unwrap();
        let bytes = match String::from_utf8(bytes) {
            Ok(text) => edit(&name, text).into_bytes(),
            Err(binary) => binary.into_bytes(),
        };
        out.start_file(&name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&bytes).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// The text of a package part, by name.
pub fn part(package: &[u8], name: &str) -> Option<Vec<u8>> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(package)).ok()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut zip.by_name(name).ok()?, &mut bytes).ok()?;
    Some(bytes)
}

/// Asserts that each of `parts`, which `original` has, is in `written`
/// byte for byte.
pub fn assert_parts_kept(original: &[u8], written: &[u8], parts: &[&str]) {
    for name in parts {
        let had = part(original, name);
        assert!(had.is_some(), "the original has {name}");
        assert_eq!(part(written, name), had, "{name}");
    }
}

/// Every `<name …>…</name>` (or `<name …/>`) element of `xml`, as text.
pub fn elements(xml: &[u8], name: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(xml);
    let mut found = Vec::new();
    let mut rest = text.as_ref();
    let open = format!("<{name}");
    while let Some(start) = rest.find(&open) {
        let tail = &rest[start..];
        let after_name = tail[open.len()..].chars().next();
        if !matches!(after_name, Some(' ' | '>' | '/')) {
            rest = &tail[open.len()..];
            continue;
        }
        let tag_end = tail.find('>').unwrap_or(tail.len() - 1);
        let end = if tail[..tag_end].ends_with('/') {
            tag_end + 1
        } else {
            let close = format!("</{name}>");
            tail.find(&close).map_or(tail.len(), |i| i + close.len())
        };
        found.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    found
}

/// Elements with their relationship ids (`r:id="rId3"`) blanked, and the
/// space before `/>` dropped: a write may number a part's relationships
/// anew, and writes a start tag it changes without that space.
pub fn without_ids(elements: Vec<String>) -> Vec<String> {
    elements
        .into_iter()
        .map(|element| {
            let mut out = String::new();
            let mut rest = element.as_str();
            while let Some(at) = rest.find("r:id=\"") {
                let value = &rest[at + 6..];
                let end = value.find('"').unwrap_or(value.len());
                out.push_str(&rest[..at + 6]);
                rest = &value[end..];
            }
            out.push_str(rest);
            out.replace(" />", "/>")
        })
        .collect()
}
