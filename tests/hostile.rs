//! Hostile and broken files, uploaded or dropped into the data directory:
//! the service answers with an error for that spreadsheet and keeps serving.

mod common;

use common::*;
use serde_json::json;

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

async fn upload(server: &Server, bytes: Vec<u8>) -> (u16, serde_json::Value) {
    let response = server
        .client
        .post(format!("{}/v1/spreadsheets", server.base))
        .header("content-type", XLSX)
        .body(bytes)
        .send()
        .await
        .expect("request sent");
    let (status, body) = json_of(response).await;
    (status.as_u16(), body)
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
    )
    .expect("fixture exists")
}

/// A server holding the People workbook refuses `bytes` (what `what`
/// names): uploaded, 400 and nothing stored; dropped into the directory,
/// 500 for it alone, the file left as it was, and the People workbook
/// still served. Gives the upload's error.
async fn refused_everywhere(server: &Server, what: &str, bytes: Vec<u8>) -> String {
    let (status, body) = upload(server, bytes.clone()).await;
    assert_eq!(status, 400, "{what}: {body}");
    let error = body["error"].as_str().unwrap().to_owned();
    assert!(
        error.starts_with("body: is not a readable xlsx workbook"),
        "{what}: {body}"
    );

    let dropped = "0b1e3a5c-0000-4000-8000-0000000000cc";
    std::fs::write(server.file(dropped), &bytes).unwrap();
    let (status, body) = server.get(&format!("/v1/data/{dropped}/People")).await;
    assert_eq!(status, 500, "{what}: {body}");
    let (status, body) = server
        .post(
            &format!("/v1/data/{dropped}/People"),
            json!({"data": [{"name": "x"}]}),
        )
        .await;
    assert_eq!(status, 500, "{what}: {body}");
    assert_eq!(
        std::fs::read(server.file(dropped)).unwrap(),
        bytes,
        "{what}: left as it was"
    );

    let (status, _) = server.get(&rows_path("People")).await;
    assert_eq!(status, 200, "{what}: the other spreadsheet still works");
    error
}

/// Every hostile fixture: refused on upload (nothing stored), and a 500 for
/// that spreadsheet only when dropped into the directory.
#[tokio::test]
async fn hostile_workbooks_are_refused_and_others_keep_working() {
    let server = Server::start_with(|c| c.max_body_bytes = 64 << 20).await;
    people_workbook(&server);
    for name in [
        "hostile/zip_bomb.xlsx",
        "hostile/lying_bomb.xlsx",
        "hostile/billion_laughs.xlsx",
        "hostile/truncated.xlsx",
        "hostile/far_cell.xlsx",
        "hostile/text_bomb.xlsx",
        "hostile/strings_bomb.xlsx",
    ] {
        refused_everywhere(&server, name, fixture(name)).await;
    }
    let stored = server.stored_files();
    assert_eq!(stored.len(), 2, "no upload was stored: {stored:?}");
}

/// Reads a spreadsheet of `fixture` dropped into a fresh directory from a
/// server process; returns the status and the process's peak memory in MiB
/// (read from /proc).
async fn read_dropped(fixture_name: &str) -> (u16, u64) {
    let dir = tempfile::tempdir().unwrap();
    let id = "0b1e3a5c-0000-4000-8000-0000000000dd";
    std::fs::write(dir.path().join(format!("{id}.xlsx")), fixture(fixture_name)).unwrap();
    let (mut child, base) = common::spawn::spawn_sheetd(dir.path(), &[]);

    let response = reqwest::get(format!("{base}/v1/data/{id}/People"))
        .await
        .unwrap();
    let status = response.status().as_u16();
    let status_file = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let peak_kib: u64 = status_file
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .expect("a VmHWM line");
    (status, peak_kib >> 10)
}

/// A cell whose text unpacks to 1.5 GiB: the server refuses the file without
/// holding the text (its peak memory stays far below it).
#[tokio::test]
async fn a_text_bomb_is_refused_without_unpacking_it_into_memory() {
    let (status, peak_mib) = read_dropped("hostile/text_bomb.xlsx").await;
    assert_eq!(status, 500);
    assert!(peak_mib < 256, "peak memory {peak_mib} MiB");
}

/// 60 million one-letter shared strings (2.4 MB zipped, 1.02 GB unpacked,
/// within the unpacked budget) cost calamine 3.3 GB and 52 s; counted
/// before any parser runs, the file is refused past the strings budget.
#[tokio::test]
async fn a_shared_strings_bomb_is_refused_before_parsing() {
    let (status, peak_mib) = read_dropped("hostile/strings_bomb.xlsx").await;
    assert_eq!(status, 500);
    assert!(peak_mib < 256, "peak memory {peak_mib} MiB");
}

#[tokio::test]
async fn non_workbook_bodies_are_refused() {
    let server = Server::start().await;
    for body in [
        b"".to_vec(),
        b"hello".to_vec(),
        b"PK\x03\x04garbage".to_vec(),
    ] {
        let (status, answer) = upload(&server, body).await;
        assert_eq!(status, 400, "{answer}");
    }
}

#[tokio::test]
async fn a_sheet_spanning_the_whole_grid_is_served() {
    let server = Server::start().await;
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("Wide").unwrap();
    sheet.write_string(0, 0, "k").unwrap();
    sheet.write_string(0, 16_383, "last column").unwrap();
    sheet.write_string(1_048_575, 16_383, "far corner").unwrap();
    book.save(server.file(ID)).unwrap();

    let (status, body) = server.get(&format!("{}?limit=1", rows_path("Wide"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["total"], 1_048_575);
    assert_eq!(
        body["data"][0],
        json!({"_row": 2, "k": null, "last column": null})
    );
}

#[tokio::test]
async fn a_workbook_over_the_cell_budget_is_refused() {
    let server = Server::start().await;
    // 1,300 rows that each reach column XFD: 21 million cell slots.
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    for row in 0..1300 {
        sheet.write_string(row, 16_383, "x").unwrap();
    }
    let bytes = book.save_to_buffer().unwrap();
    let (status, body) = upload(&server, bytes).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("too large"),
        "{body}"
    );
}

/// A small file can show one long shared string in many cells, each of
/// which holds a copy once read (Apache POI's `poc-shared-strings.xlsx`:
/// 110 KB, 50 GB of text): past the budget of text the upload is refused,
/// and the server goes on serving.
#[tokio::test]
async fn a_workbook_whose_cells_hold_too_much_text_is_refused() {
    // 10,000 cells give the least budget of text, 64 MiB: 2,100 cells of
    // Excel's longest text pass it.
    let server = Server::start_with(|config| config.max_cells = 10_000).await;
    let long = "x".repeat(32_767);
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    for row in 0..2_100 {
        sheet.write_string(row, 0, &long).unwrap();
    }
    let bytes = book.save_to_buffer().unwrap();
    assert!(bytes.len() < 100_000, "{}", bytes.len());

    let (status, body) = upload(&server, bytes).await;

    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("MiB of text"),
        "{body}"
    );
    let (status, _) = server.get("/v1/spreadsheets").await;
    assert_eq!(status, 200);
}

/// A workbook as some producers and damaged copies leave it (issue 26):
/// one cell without a reference (its place comes from the cells before
/// it), a worksheet entry whose checksum is wrong (only seen after the
/// sheet's XML ends, where calamine stops reading) and a thumbnail entry
/// that does not inflate at all.
fn damaged_workbook() -> Vec<u8> {
    use std::io::{Read, Write};
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("People").unwrap();
    sheet.write(0, 0, "name").unwrap();
    sheet.write(0, 1, "age").unwrap();
    sheet.write(1, 0, "Alice").unwrap();
    sheet.write(1, 1, 30).unwrap();
    let original = book.save_to_buffer().unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(original)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default();
    for i in 0..archive.len() {
        let mut part = archive.by_index(i).unwrap();
        let name = part.name().unwrap().into_owned();
        let mut bytes = Vec::new();
        part.read_to_end(&mut bytes).unwrap();
        if name == "xl/worksheets/sheet1.xml" {
            let xml = String::from_utf8(bytes).unwrap();
            // B2 without its reference: after A2, it is B2.
            let xml = xml.replacen(r#"<c r="B2""#, "<c", 1);
            assert!(!xml.contains(r#"r="B2""#), "{xml}");
            bytes = xml.into_bytes();
        }
        out.start_file(name, deflated).unwrap();
        out.write_all(&bytes).unwrap();
    }
    out.start_file("docProps/thumbnail.wmf", deflated).unwrap();
    out.write_all(b"a picture nobody reads").unwrap();
    let mut bytes = out.finish().unwrap().into_inner();
    corrupt_checksum(&mut bytes, "xl/worksheets/sheet1.xml");
    corrupt_checksum(&mut bytes, "docProps/thumbnail.wmf");
    bytes
}

/// Flips the CRC-32 of the entry `name`, in its local header and in the
/// central directory.
fn corrupt_checksum(zip: &mut [u8], name: &str) {
    for (signature, crc_at, name_at) in [(b"PK\x03\x04", 14, 30), (b"PK\x01\x02", 16, 46)] {
        let at = (0..zip.len() - name_at)
            .find(|&i| {
                zip[i..].starts_with(signature) && zip[i + name_at..].starts_with(name.as_bytes())
            })
            .expect("entry header");
        zip[at + crc_at] ^= 0xFF;
    }
}

/// Whatever calamine reads, sheetd serves: a damaged entry it does not
/// need, or one damaged past the XML it reads, is no reason for a 500.
/// A write that could not carry the damaged part is refused, saying so.
#[tokio::test]
async fn a_workbook_with_damaged_entries_calamine_reads_is_served() {
    let server = Server::start().await;
    let id = "0b1e3a5c-0000-4000-8000-0000000000dd";
    std::fs::write(server.file(id), damaged_workbook()).unwrap();

    let (status, body) = server.get(&format!("/v1/data/{id}/People")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"],
        json!([{"_row": 2, "name": "Alice", "age": 30}])
    );

    let (status, body) = server
        .post(
            &format!("/v1/data/{id}/People"),
            json!({"data": [{"name": "Bob", "age": 25}]}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("docProps/thumbnail.wmf"), "{body}");
}

/// A workbook calamine refuses but spreadsheet apps open (issue 26): a
/// cell reference without a row (`r="B"`) and a shared string index past
/// the table.
fn misreferenced_workbook() -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("People").unwrap();
    for (row, values) in [["name", "city"], ["Alice", "Berlin"], ["Bob", "Paris"]]
        .iter()
        .enumerate()
    {
        for (column, value) in values.iter().enumerate() {
            sheet.write(row as u32, column as u16, *value).unwrap();
        }
    }
    repacked(&book.save_to_buffer().unwrap(), |name, xml| match name {
        // "Berlin" is string 3, "Paris" string 5 of 6.
        "xl/worksheets/sheet1.xml" => {
            xml.replacen(r#"<c r="B2""#, r#"<c r="B""#, 1)
                .replacen("<v>5</v>", "<v>99</v>", 1)
        }
        _ => xml,
    })
}

#[tokio::test]
async fn a_workbook_with_cells_calamine_refuses_is_served() {
    let server = Server::start().await;
    let id = "0b1e3a5c-0000-4000-8000-0000000000de";
    std::fs::write(server.file(id), misreferenced_workbook()).unwrap();
    let (status, body) = server.get(&format!("/v1/data/{id}/People")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"],
        json!([
            {"_row": 2, "name": "Alice", "city": "Berlin"},
            {"_row": 3, "name": "Bob", "city": null}
        ])
    );
}

/// The formula engine's parser recurses at each level of a formula: 1,000
/// parentheses (2 KB of text), or a chain of 1,200 terms (`1+1+…`, 2.4 KB,
/// a tree as deep as it is long), overflowed the thread's stack, which
/// ends the process. Past 128 levels a formula written is refused, and one
/// in the file keeps the result the file has.
#[tokio::test]
async fn formulas_nested_past_what_the_engine_reads_never_stop_the_server() {
    let server = Server::start().await;
    let deep = format!("{}1{}", "(".repeat(1000), ")".repeat(1000));
    let signs = format!("{}1", "-".repeat(1001));
    // 2.4 KB: a chain is read into a tree as deep as it is long.
    let chain = format!("1{}", "+1".repeat(1199));
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("S").unwrap();
    sheet.write(0, 0, "name").unwrap();
    sheet.write(0, 1, "value").unwrap();
    sheet.write(1, 0, "deep").unwrap();
    let cached = rust_xlsxwriter::Formula::new(format!("={deep}")).set_result("1");
    sheet.write_formula(1, 1, cached).unwrap();
    sheet.write(2, 0, "signs").unwrap();
    let cached = rust_xlsxwriter::Formula::new(format!("={signs}")).set_result("-1");
    sheet.write_formula(2, 1, cached).unwrap();
    sheet.write(3, 0, "chain").unwrap();
    let cached = rust_xlsxwriter::Formula::new(format!("={chain}")).set_result("1200");
    sheet.write_formula(3, 1, cached).unwrap();
    book.save(server.file(ID)).unwrap();

    // A write builds the engine, which is given none of the formulas.
    let (status, body) = server
        .post(
            &rows_path("S"),
            json!({"data": [{"name": "new", "value": 2}]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, rows) = server.get(&rows_path("S")).await;
    assert_eq!(status, 200, "{rows}");
    let values: Vec<_> = (rows["data"].as_array().unwrap().iter())
        .map(|row| row["value"].clone())
        .collect();
    assert_eq!(values, [json!(1), json!(-1), json!(1200), json!(2)]);

    for formula in [deep, signs, chain] {
        let (status, body) = server
            .post(
                &rows_path("S"),
                json!({"data": [{"name": "x", "value": {"formula": format!("={formula}")}}]}),
            )
            .await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("levels deep"),
            "{body}"
        );
    }
    let (status, _) = server.get(&rows_path("S")).await;
    assert_eq!(status, 200);
}

/// A sheet whose column runs set the width of 81,920 columns, in five runs
/// over the whole row (a few hundred bytes of XML): past the 65,536 sheetd
/// reads, the file is refused, uploaded (400, nothing stored) or dropped
/// in (500 for it alone, the file left as it was).
#[tokio::test]
async fn a_sheet_whose_column_runs_overlap_past_the_bound_is_refused() {
    let server = Server::start().await;
    people_workbook(&server);
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("People").unwrap();
    sheet.write(0, 0, "name").unwrap();
    sheet.write(1, 0, "Alice").unwrap();
    let bytes = repacked(&book.save_to_buffer().unwrap(), |name, xml| match name {
        "xl/worksheets/sheet1.xml" => xml.replacen(
            "<sheetData>",
            &format!(
                "<cols>{}</cols><sheetData>",
                r#"<col min="1" max="16384" width="9" customWidth="1"/>"#.repeat(5)
            ),
            1,
        ),
        _ => xml,
    });

    let error = refused_everywhere(&server, "column runs", bytes).await;
    assert!(error.contains("more than 65536 columns"), "{error}");
    assert_eq!(server.stored_files().len(), 2, "no upload was stored");
}

/// Elements nested 100,000 levels deep (a few hundred bytes zipped) in a
/// sheet's extension list, in the workbook's and in a cell's string: each
/// file is refused, naming the bound.
#[tokio::test]
async fn a_workbook_nested_past_the_bound_is_refused() {
    let server = Server::start().await;
    people_workbook(&server);
    let nest = format!(
        r#"<x:a xmlns:x="urn:x">{}{}</x:a>"#,
        "<x:b>".repeat(100_000),
        "</x:b>".repeat(100_000)
    );
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("People").unwrap();
    sheet.write(0, 0, "name").unwrap();
    sheet.write(1, 0, "Alice").unwrap();
    let original = book.save_to_buffer().unwrap();
    let ext = format!(r#"<extLst><ext uri="{{X}}">{nest}</ext></extLst>"#);
    let cell = format!(r#"<c r="B2" t="inlineStr"><is><t>x</t>{nest}</is></c></row>"#);
    for (part, from, to) in [
        (
            "xl/worksheets/sheet1.xml",
            "</worksheet>",
            format!("{ext}</worksheet>"),
        ),
        (
            "xl/workbook.xml",
            "</workbook>",
            format!("{ext}</workbook>"),
        ),
        (
            "xl/worksheets/sheet1.xml",
            "</row></sheetData>",
            format!("{cell}</sheetData>"),
        ),
    ] {
        let bytes = repacked(&original, |name, xml| match name == part {
            true => xml.replacen(from, &to, 1),
            false => xml,
        });
        let error = refused_everywhere(&server, part, bytes).await;
        assert!(error.contains("levels deep"), "{part}: {error}");
    }
    assert_eq!(server.stored_files().len(), 2, "no upload was stored");
}

/// A drawing past the 32 MiB rows move in (its shapes would be read into a
/// tree of about thirteen times that): a delete, which moves the rows
/// below, gets 409 naming the part and writes nothing; an append, which
/// moves none, is written.
#[tokio::test]
async fn rows_do_not_move_in_a_drawing_past_the_bound() {
    let server = Server::start().await;
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("People").unwrap();
    for (row, name) in ["name", "Alice", "Bob", "Carol"].iter().enumerate() {
        sheet.write(row as u32, 0, *name).unwrap();
    }
    let mut chart = rust_xlsxwriter::Chart::new_column();
    chart.add_series().set_values("People!$B$2:$B$4");
    sheet.insert_chart(5, 3, &chart).unwrap();
    let padding = " ".repeat(33 << 20);
    let bytes = repacked(&book.save_to_buffer().unwrap(), |name, xml| match name {
        "xl/drawings/drawing1.xml" => {
            xml.replacen("</xdr:wsDr>", &format!("{padding}</xdr:wsDr>"), 1)
        }
        _ => xml,
    });
    std::fs::write(server.file(ID), &bytes).unwrap();

    let (status, body) = server
        .delete(&rows_path("People"), json!({"type": "row", "row": 2}))
        .await;
    assert_eq!(status, 409, "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("xl/drawings/drawing1.xml") && detail.contains("32 MiB"),
        "{body}"
    );
    assert_eq!(
        std::fs::read(server.file(ID)).unwrap(),
        bytes,
        "nothing written"
    );

    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"name": "Dan"}]}))
        .await;
    assert_eq!(status, 201, "{body}");
    let names: Vec<Vec<calamine::Data>> = read_sheet(&server.file(ID), "People");
    assert_eq!(names.len(), 5, "{names:?}");
}
