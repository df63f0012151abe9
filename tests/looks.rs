//! Every cell keeps its look (issue 26): after an insert and an update over
//! HTTP, every untouched cell of `fixtures/looks/` resolves to the same
//! style and runs as before — read from the package alone
//! (tests/common/looks.rs), nothing of sheetd's reader — including what
//! rust_xlsxwriter cannot express: fonts' scripts, unlocked and hidden
//! cells, built-in number formats, diagonal borders, gradient fills, a
//! named style, a formatted column, a superscript run. The row the insert
//! lands in, formatted before anything was typed into it, keeps its own
//! borders and alignment.

mod common;

use common::looks::{Looks, looks};
use common::{ID, Server, rows_path};
use reqwest::StatusCode;
use serde_json::json;

/// Each fixture, with the producer that wrote it.
const FIXTURES: [(&str, &str); 2] = [
    ("openpyxl", "looks/looks.xlsx"),
    ("LibreOffice", "looks/looks_lo.xlsx"),
];

/// The fixture's looks before, and after an insert (landing in row 7) and
/// an update of A4.
async fn before_and_after(fixture: &str) -> (Looks, Looks) {
    let server = Server::start().await;
    server.add_fixture(fixture, ID);
    let original = std::fs::read(server.file(ID)).expect("fixture copied");
    let (status, body) = server
        .post(
            &rows_path("Data"),
            json!({"data": [{"name": "Fay", "script": "x9", "lock": "l9"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = server
        .patch(
            &rows_path("Data"),
            json!({"type": "row", "row": 4, "data": {"name": "Cyd"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let written = server.download(ID).await.bytes().await.expect("body");
    (looks(&original), looks(&written))
}

fn look<'a>(looks: &'a Looks, place: &str) -> &'a str {
    looks.get(place).map_or("(none)", String::as_str)
}

#[tokio::test]
async fn untouched_cells_keep_every_setting_of_their_look() {
    for (producer, fixture) in FIXTURES {
        let (before, after) = before_and_after(fixture).await;
        // What the fixture holds, so a reader blind to it cannot pass.
        for (place, setting) in [
            ("Data!B2", "val=superscript"),
            ("Data!B3", "val=subscript"),
            ("Data!C2", "locked=0"),
            ("Data!C3", "hidden=1"),
            ("Data!D2", "#,##0_);["),
            ("Data!E2", "<diagonal"),
            ("Data!F2", "<vertAlign val=superscript>]\"2\""),
            ("Data!G2", "val=Arial"),
        ] {
            assert!(
                look(&before, place).contains(setting),
                "{producer}: {place} holds {setting}: {}",
                look(&before, place)
            );
        }
        let column_g = before
            .iter()
            .find(|(place, _)| place.starts_with("Data!col 7-"))
            .unwrap_or_else(|| panic!("{producer}: a format on column G"));
        assert_eq!(Some(column_g.1), after.get(column_g.0), "{producer}");
        let touched = |place: &str| {
            place.starts_with("Data!") && (place.ends_with('7') || place == "Data!A4")
        };
        for (place, was) in &before {
            if touched(place) || place.contains("col ") {
                continue;
            }
            assert_eq!(Some(was), after.get(place), "{producer}: {place}");
        }
        // A place with no cell shows its row's or column's format: the
        // write makes no cell there.
        for place in after.keys() {
            assert!(
                before.contains_key(place) || touched(place),
                "{producer}: {place} is new"
            );
        }
    }
}

#[tokio::test]
async fn an_insert_into_a_row_formatted_beforehand_keeps_its_formats() {
    for (producer, fixture) in FIXTURES {
        let (before, after) = before_and_after(fixture).await;
        for place in ["Data!A7", "Data!B7", "Data!C7"] {
            assert!(
                look(&before, place).contains("<left style=thin>")
                    && look(&before, place).contains("horizontal=center"),
                "{producer}: {place} is bordered and centred: {}",
                look(&before, place)
            );
            assert_eq!(
                look(&before, place),
                look(&after, place),
                "{producer}: {place} keeps its own format"
            );
        }
    }
}

/// Fixtures with empty cells of the default format in formatted rows
/// (`<c r="C4" s="0"/>` under `<row s="1" customFormat="1">`): producer,
/// fixture, sheet, such a cell, a cell of the default format elsewhere, and
/// the header of the column an insert fills.
const UNFORMATTED: [(&str, &str, &str, &str, &str, &str); 2] = [
    (
        "LibreOffice",
        "looks/unformatted_lo.xlsx",
        "Data",
        "Data!C4",
        "Data!A1",
        "name",
    ),
    (
        "Excel",
        "looks/excel/even_odd.xlsx",
        "EVEN_ODD",
        "EVEN_ODD!D4",
        "EVEN_ODD!A2",
        "NOTES",
    ),
];

/// A cell of the default format in a formatted row shows no fill, no
/// number format of the row's: after a write it still does, where without
/// its element it would show the row's format.
#[tokio::test]
async fn empty_cells_of_the_default_format_keep_it_in_a_formatted_row() {
    for (producer, fixture, sheet, place, plain, column) in UNFORMATTED {
        let server = Server::start().await;
        server.add_fixture(fixture, ID);
        let before = looks(&std::fs::read(server.file(ID)).expect("fixture copied"));
        assert_eq!(
            look(&before, place),
            look(&before, plain),
            "{producer}: {place} has the default format"
        );
        let (status, body) = server
            .post(&rows_path(sheet), json!({"data": [{column: "new"}]}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{producer}: {body}");
        let written = server.download(ID).await.bytes().await.expect("body");
        let after = looks(&written);
        assert_eq!(
            look(&after, place),
            look(&before, place),
            "{producer}: {place} keeps the default format"
        );
        let unformatted = before
            .iter()
            .filter(|(_, look)| look.as_str() == before[plain].as_str())
            .count();
        let kept = before
            .iter()
            .filter(|(place, look)| {
                look.as_str() == before[plain].as_str() && after.get(*place) == Some(look)
            })
            .count();
        assert_eq!(
            kept, unformatted,
            "{producer}: every cell of the default format"
        );
    }
}

/// A sheet WPS Office saved in Chinese whose column A holds dates in the
/// built-in number format 58, one of the East Asian formats (ids 27–36,
/// 50–58) that no `numFmt` spells out: an insert leaves each of them its
/// format, where the writer used to give them `yyyy/mm/dd` of its own.
#[tokio::test]
async fn dates_in_an_east_asian_builtin_format_keep_it() {
    let server = Server::start().await;
    server.add_fixture("looks/excel/east_asian_date.xlsx", ID);
    let before = looks(&std::fs::read(server.file(ID)).expect("fixture copied"));
    let dated: Vec<&String> = before
        .iter()
        .filter(|(place, look)| place.starts_with("Sheet1!A") && look.contains("built-in 58"))
        .map(|(place, _)| place)
        .collect();
    assert!(dated.len() >= 10, "column A's dates: {before:?}");
    let path = format!("{}?header_row=1", rows_path("Sheet1"));
    let (status, body) = server.post(&path, json!({"data": [{"标题": "新"}]})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let after = looks(&server.download(ID).await.bytes().await.expect("body"));
    for place in dated {
        assert_eq!(before.get(place), after.get(place), "{place}");
    }
}
