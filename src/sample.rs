//! The sample workbook a new data directory starts with, so that the first
//! `cargo run` has something to serve.

use crate::model::value::{DateParse, DateSyntax, parse_date};
use crate::model::{Cell, Sheet, SpreadsheetId, Workbook};

/// The sample's fixed id, as the README documents it.
pub const SAMPLE_ID: SpreadsheetId =
    SpreadsheetId::from_uuid(uuid::uuid!("5ee7d000-0000-4000-8000-000000000001"));

/// A small "People" sheet: name, age, city, joined.
pub fn workbook() -> Workbook {
    let date = |text: &str| match parse_date(text, DateSyntax::Value) {
        DateParse::Valid(serial, _) => Cell::DateTime(serial),
        _ => unreachable!("the sample's dates are real"),
    };
    let text = |s: &str| Cell::Text(s.to_owned());
    let rows = vec![
        vec![text("name"), text("age"), text("city"), text("joined")],
        vec![
            text("Ada"),
            Cell::Number(36.0),
            text("London"),
            date("2021/03/04"),
        ],
        vec![
            text("Linus"),
            Cell::Number(28.0),
            text("Helsinki"),
            date("2022/11/15"),
        ],
        vec![
            text("Grace"),
            Cell::Number(45.0),
            text("Arlington"),
            date("2020/07/01"),
        ],
    ];
    Workbook {
        sheets: vec![Sheet::new("People", rows)],
        ..Workbook::default()
    }
}
