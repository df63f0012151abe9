//! Workbook fidelity: each workbook of `fixtures/fidelity/` (one feature
//! each, written by openpyxl and again by LibreOffice; see its README) goes
//! through an insert and an update over HTTP, is downloaded, and is read
//! back with sheetd's reader — independent of rust_xlsxwriter, which wrote
//! it. Each test first checks that the feature is there in the original
//! (so a reader blind to it cannot pass) and then that it is the same after.
//! Workbooks with parts sheetd cannot carry are refused, byte for byte.

mod common;

use common::{ID, Server, assert_parts_kept, elements, part, rows_path, without_ids};
use reqwest::StatusCode;
use serde_json::json;
use sheetd::model::format::{CellFormat, Color};
use sheetd::model::layout::{ArrayFormula, LinkTarget, Range, RichText};
use sheetd::model::{Cell, Sheet, Visibility, Workbook};
use sheetd::xlsx::read_workbook;

const PRODUCERS: [&str; 2] = ["openpyxl", "libreoffice"];

/// A fixture before and after an insert and an update.
struct Trip {
    producer: &'static str,
    before: Workbook,
    after: Workbook,
    /// The package before and after, for what only its XML shows.
    bytes_before: Vec<u8>,
    bytes_after: Vec<u8>,
}

fn parse(bytes: &[u8]) -> Workbook {
    read_workbook(bytes, 10_000_000).expect("a readable workbook")
}

/// `workbook` written by sheetd's writer and read back, without HTTP.
fn rewritten(workbook: &Workbook) -> Workbook {
    let mut out = std::io::Cursor::new(Vec::new());
    sheetd::xlsx::write_workbook(workbook, &mut out).expect("written");
    parse(out.get_ref())
}

/// Inserts Eve (row 6) and sets Bob's amount (B3) on sheet `Data`, then
/// downloads the workbook.
async fn round_trip(producer: &'static str, name: &str) -> Trip {
    round_trip_with(producer, name, |_| {}).await
}

async fn round_trip_with(
    producer: &'static str,
    name: &str,
    adjust: impl FnOnce(&mut sheetd::Config),
) -> Trip {
    trip(producer, name, adjust, &[]).await
}

/// As [`round_trip`], then inserts a row like Eve's for each of `more`
/// (rows 7, 8…), one request each: the last ones are saved by the writer
/// the one before kept, where the workbook allows it.
async fn trip(
    producer: &'static str,
    name: &str,
    adjust: impl FnOnce(&mut sheetd::Config),
    more: &[&str],
) -> Trip {
    let server = Server::start_with(adjust).await;
    server.add_fixture(&format!("fidelity/{producer}/{name}.xlsx"), ID);
    let bytes_before = std::fs::read(server.file(ID)).unwrap();
    let before = parse(&bytes_before);
    let row = |name: &str| json!({"name": name, "amount": 50, "when": "2024/05/01", "note": "v"});
    let (status, body) = server
        .post(&rows_path("Data"), json!({"data": [row("Eve")]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{producer}/{name}: {body}");
    let update = json!({"type": "filter", "filter": "name:eq:Bob", "data": {"amount": 21}});
    let (status, body) = server.patch(&rows_path("Data"), update).await;
    assert_eq!(status, StatusCode::OK, "{producer}/{name}: {body}");
    for name in more {
        let (status, body) = server
            .post(&rows_path("Data"), json!({"data": [row(name)]}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{producer}/{name}: {body}");
    }
    let response = server.download(ID).await;
    assert_eq!(response.status(), StatusCode::OK);
    let bytes_after = response.bytes().await.unwrap().to_vec();
    let after = parse(&bytes_after);
    Trip {
        producer,
        before,
        after,
        bytes_before,
        bytes_after,
    }
}

fn sheet<'a>(workbook: &'a Workbook, name: &str) -> &'a Sheet {
    workbook.sheet(name).expect("the sheet exists")
}

/// How a cell looks, by value (format ids differ between files).
fn look(workbook: &Workbook, sheet_name: &str, row: usize, column: usize) -> CellFormat {
    let id = sheet(workbook, sheet_name).layout.format(row, column);
    workbook
        .formats
        .get(id as usize)
        .cloned()
        .unwrap_or_default()
}

fn value(workbook: &Workbook, sheet_name: &str, row: usize, column: usize) -> Cell {
    sheet(workbook, sheet_name)
        .rows
        .get(row)
        .and_then(|cells| cells.get(column))
        .cloned()
        .unwrap_or_default()
}

/// What must not change in an untouched cell: its value, or for a
/// formula its text and its cached result, when the file had one (a
/// formula without one, as openpyxl writes them, gets the result the
/// engine computes at the first write).
fn untouched(cell: Cell) -> Cell {
    match cell {
        Cell::Formula(formula) => Cell::Text(formula.expr),
        other => other,
    }
}

fn range(text: &str) -> Range {
    let cell = |t: &str| {
        let split = t.find(|c: char| c.is_ascii_digit()).unwrap();
        let column = t[..split]
            .bytes()
            .fold(0u16, |n, b| n * 26 + u16::from(b - b'A' + 1))
            - 1;
        (t[split..].parse::<u32>().unwrap() - 1, column)
    };
    let (first, last) = text.split_once(':').unwrap_or((text, text));
    let ((first_row, first_column), (last_row, last_column)) = (cell(first), cell(last));
    Range {
        first_row,
        first_column,
        last_row,
        last_column,
    }
}

impl Trip {
    /// Every sheet's cells look the same after as before in the given
    /// area (rows and columns, 0-based, end excluded), cell by cell; the
    /// values are the same too, except Bob's amount (B3), which was updated.
    /// (`Data`'s new row 6 is checked on its own.)
    fn assert_same_looks(&self, rows: usize, columns: usize) {
        assert_eq!(
            self.before.properties, self.after.properties,
            "{}: document properties",
            self.producer
        );
        let font = |w: &Workbook| (w.default_font.name.clone(), w.default_font.size);
        assert_eq!(
            font(&self.before),
            font(&self.after),
            "{}: default font",
            self.producer
        );
        for sheet_before in &self.before.sheets {
            let name = &sheet_before.name;
            let rows = if name == "Data" { rows.min(5) } else { rows };
            for row in 0..rows {
                for column in 0..columns {
                    assert_eq!(
                        look(&self.before, name, row, column),
                        look(&self.after, name, row, column),
                        "{}: format of {name}!R{}C{}",
                        self.producer,
                        row + 1,
                        column + 1
                    );
                    if (name.as_str(), row, column) != ("Data", 2, 1) {
                        assert_eq!(
                            untouched(value(&self.before, name, row, column)),
                            untouched(value(&self.after, name, row, column)),
                            "{}: value of {name}!R{}C{}",
                            self.producer,
                            row + 1,
                            column + 1
                        );
                    }
                }
            }
        }
        assert_eq!(value(&self.after, "Data", 2, 1), Cell::Number(21.0));
        assert_eq!(value(&self.after, "Data", 5, 0), Cell::Text("Eve".into()));
    }

    /// The new row 6 looks like row 5 above it, column by column.
    fn assert_new_row_looks_like_the_one_above(&self) {
        self.assert_new_row_looks_like_row_five(5);
    }

    /// The new row `row` (0-based) looks like the last row of the original,
    /// row 5, column by column.
    fn assert_new_row_looks_like_row_five(&self, row: usize) {
        for column in 0..4 {
            let above = look(&self.before, "Data", 4, column);
            let new = look(&self.after, "Data", row, column);
            // A date written into a General cell gets the service's own format.
            if above.num_format.is_none() && column == 2 {
                assert!(
                    new.shows_date(),
                    "{}: new date cell shows a date",
                    self.producer
                );
                continue;
            }
            assert_eq!(
                above, new,
                "{}: format of the new row, column {column}",
                self.producer
            );
        }
    }
}

#[tokio::test]
async fn merged_ranges_survive() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "merged").await;
        for workbook in [&trip.before, &trip.after] {
            assert_eq!(
                sheet(workbook, "Data").layout.merges,
                vec![range("F2:G3")],
                "{producer}"
            );
            assert_eq!(
                sheet(workbook, "Report").layout.merges,
                vec![range("A1:D1")],
                "{producer}"
            );
        }
        assert_eq!(
            value(&trip.after, "Report", 0, 0),
            Cell::Text("Quarterly report".into())
        );
        let author = trip.before.properties.author.as_deref();
        assert_eq!(author, Some("sheetd fixtures (openpyxl)"), "{producer}");
        trip.assert_same_looks(6, 8);
    }
}

#[tokio::test]
async fn hyperlinks_survive_with_text_and_tooltip() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "hyperlinks").await;
        let links = &sheet(&trip.before, "Data").layout.links;
        assert_eq!(links.len(), 3, "{producer}");
        let alice = links.iter().find(|l| l.range.first_row == 1).unwrap();
        assert_eq!(
            alice.target,
            LinkTarget::Url("https://example.com/alice".into())
        );
        if producer == "openpyxl" {
            // LibreOffice drops tooltips when it saves (fixtures README).
            assert_eq!(alice.tooltip.as_deref(), Some("Open profile"));
        }
        let report = links.iter().find(|l| l.range.first_row == 2).unwrap();
        assert_eq!(report.target, LinkTarget::Location("Report!A1".into()));
        assert_eq!(
            *links,
            sheet(&trip.after, "Data").layout.links,
            "{producer}"
        );
        assert_eq!(
            value(&trip.after, "Data", 1, 5),
            Cell::Text("Alice's page".into())
        );
        trip.assert_same_looks(6, 7);
    }
}

#[tokio::test]
async fn defined_names_survive_with_their_scope() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "defined_names").await;
        let names = |workbook: &Workbook| {
            let mut names: Vec<_> = workbook
                .names
                .iter()
                .map(|n| (n.name.clone(), n.scope, n.refers_to.replace('\'', "")))
                .collect();
            names.sort();
            names
        };
        assert_eq!(
            names(&trip.before),
            vec![
                ("Local".into(), Some(0), "Data!$A$1".into()),
                ("Rates".into(), None, "Data!$B$2:$B$5".into()),
                ("VAT".into(), None, "0.2".into()),
            ],
            "{producer}"
        );
        assert_eq!(names(&trip.before), names(&trip.after), "{producer}");
    }
}

#[tokio::test]
async fn tables_survive_and_grow_with_inserted_rows() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "tables").await;
        let people = |workbook: &Workbook| sheet(workbook, "Data").layout.tables[0].clone();
        let (before, after) = (people(&trip.before), people(&trip.after));
        assert_eq!(before.name, "People");
        assert_eq!(before.range, range("A1:D5"));
        assert_eq!(
            after.range,
            range("A1:D6"),
            "{producer}: the table takes the new row in"
        );
        assert_eq!(
            after
                .columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            ["name", "amount", "when", "note"]
        );
        assert_eq!(
            (after.style.clone(), after.banded_rows),
            (before.style.clone(), before.banded_rows)
        );
        if producer == "openpyxl" {
            assert_eq!(before.style.as_deref(), Some("TableStyleMedium9"));
        }
        let sums = |workbook: &Workbook| sheet(workbook, "Totals").layout.tables[0].clone();
        assert_eq!(sums(&trip.before).range, range("A1:B5"));
        assert!(sums(&trip.before).totals_row);
        assert_eq!(
            sums(&trip.before),
            sums(&trip.after),
            "{producer}: a table with totals is kept as it was"
        );
        assert!(matches!(
            value(&trip.after, "Totals", 4, 1),
            Cell::Formula(_)
        ));
    }
}

/// A table's part comes back as the file wrote it, with what sheetd does
/// not model (its id, its header and totals settings) byte for byte, but
/// for its range and its autofilter's, which take the inserted row in.
#[tokio::test]
async fn table_parts_are_carried_with_their_new_range() {
    for producer in PRODUCERS {
        let path = common::fixture_path(&format!("fidelity/{producer}/tables.xlsx"));
        let original = std::fs::read(path).unwrap();
        let part_name = "xl/tables/table1.xml";
        let before = String::from_utf8(part(&original, part_name).unwrap()).unwrap();
        assert!(before.contains(r#"ref="A1:D5""#), "{producer}: {before}");
        let written = written_after_insert(&original, producer).await;
        let after = String::from_utf8(part(&written, part_name).unwrap()).unwrap();
        assert_eq!(
            after.replace(" />", "/>"),
            before
                .replace(r#"ref="A1:D5""#, r#"ref="A1:D6""#)
                .replace(" />", "/>"),
            "{producer}"
        );
    }
}

#[tokio::test]
async fn number_formats_survive_and_new_rows_inherit_them() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "number_formats").await;
        let currency = look(&trip.before, "Data", 1, 1).num_format.unwrap();
        assert!(
            currency.contains("#,##0.00") && currency.contains('€'),
            "{currency}"
        );
        assert_eq!(
            look(&trip.before, "Data", 1, 4).num_format.as_deref(),
            Some("0.0%")
        );
        trip.assert_same_looks(6, 6);
        trip.assert_new_row_looks_like_the_one_above();
        assert_eq!(
            look(&trip.after, "Data", 5, 1).num_format.as_deref(),
            Some(currency.as_str())
        );
    }
}

#[tokio::test]
async fn fonts_fills_borders_and_alignment_survive() {
    for name in ["fonts", "fills_borders", "alignment"] {
        for producer in PRODUCERS {
            let trip = round_trip(producer, name).await;
            trip.assert_same_looks(6, 6);
            trip.assert_new_row_looks_like_the_one_above();
        }
    }
    let trip = round_trip("openpyxl", "fonts").await;
    assert!(look(&trip.before, "Data", 0, 0).font.bold);
    let red = look(&trip.before, "Data", 1, 0).font;
    assert!(
        red.italic && red.color == Some(Color::Rgb(0xFF0000)),
        "{red:?}"
    );
    let trip = round_trip("libreoffice", "fills_borders").await;
    assert_eq!(
        look(&trip.before, "Data", 0, 0).fill.foreground,
        Some(Color::Rgb(0xFFFF00))
    );
    assert_eq!(
        look(&trip.before, "Data", 2, 2)
            .borders
            .top
            .style
            .as_deref(),
        Some("thick")
    );
    let trip = round_trip("libreoffice", "alignment").await;
    assert!(look(&trip.before, "Data", 1, 3).alignment.wrap);
    assert_eq!(look(&trip.before, "Data", 2, 2).alignment.rotation, 45);
}

#[tokio::test]
async fn column_widths_and_row_heights_survive() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "dimensions").await;
        let (before, after) = (
            &sheet(&trip.before, "Data").layout,
            &sheet(&trip.after, "Data").layout,
        );
        let width = |layout: &sheetd::model::layout::Layout, column: u16| {
            layout
                .columns
                .iter()
                .find(|c| (c.first..=c.last).contains(&column))
                .map(|c| (c.width.map(|w| (w * 100.0).round()), c.hidden))
        };
        assert!(
            width(before, 0).unwrap().0.unwrap() >= 3000.0,
            "{producer}: column A is wide"
        );
        assert!(
            width(before, 2).unwrap().1,
            "{producer}: column C is hidden"
        );
        for column in 0..4 {
            assert_eq!(
                width(before, column),
                width(after, column),
                "{producer}: column {column}"
            );
        }
        let height = |layout: &sheetd::model::layout::Layout| layout.rows[&2].height.unwrap();
        assert!((height(before) - 40.0).abs() <= 0.5, "{producer}");
        assert_eq!(height(after), height(before), "{producer}: exact");
        assert!(
            before.rows[&3].hidden && after.rows[&3].hidden,
            "{producer}: row 4 hidden"
        );
        trip.assert_same_looks(6, 5);
    }
}

#[tokio::test]
async fn panes_autofilter_tab_colours_and_sheet_states_survive() {
    let trip = round_trip("openpyxl", "freeze").await;
    assert_eq!(sheet(&trip.before, "Data").layout.freeze, Some((1, 0)));
    assert_eq!(sheet(&trip.before, "Wide").layout.freeze, Some((2, 1)));
    for name in ["Data", "Wide"] {
        assert_eq!(
            sheet(&trip.before, name).layout.freeze,
            sheet(&trip.after, name).layout.freeze
        );
    }
    for producer in PRODUCERS {
        let trip = round_trip(producer, "autofilter").await;
        assert_eq!(
            sheet(&trip.before, "Data").layout.autofilter,
            Some(range("A1:D5"))
        );
        assert_eq!(
            sheet(&trip.after, "Data").layout.autofilter,
            Some(range("A1:D6")),
            "{producer}"
        );

        let trip = round_trip(producer, "tab_colors").await;
        assert_eq!(
            sheet(&trip.before, "Data").layout.tab_color,
            Some(Color::Rgb(0xFF0000))
        );
        for name in ["Data", "Other"] {
            assert_eq!(
                sheet(&trip.before, name).layout.tab_color,
                sheet(&trip.after, name).layout.tab_color
            );
        }

        let trip = round_trip(producer, "sheets_state").await;
        let states = |workbook: &Workbook| {
            workbook
                .sheets
                .iter()
                .map(|s| (s.name.clone(), s.visibility))
                .collect::<Vec<_>>()
        };
        assert_eq!(states(&trip.before), states(&trip.after), "{producer}");
        assert_eq!(trip.before.sheets[1].visibility, Visibility::Hidden);
        assert_eq!(trip.before.active_sheet, 3, "{producer}: `Last` is active");
        assert_eq!(trip.after.active_sheet, 3, "{producer}");
    }
}

#[tokio::test]
async fn formulas_and_dates_survive() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "formulas").await;
        trip.assert_same_looks(6, 7);
        // Recomputed: `E = B*2` on every row, Eve's new row 6 included
        // (filled down), and `G2 = SUM(B2:B5)` after Bob's update.
        let number = |row: usize, column: usize| match value(&trip.after, "Data", row, column) {
            Cell::Formula(formula) => (Some(formula.expr), formula.cached),
            other => (None, other),
        };
        let mut sum = 0.0;
        for row in 1..6 {
            let (_, Cell::Number(b)) = number(row, 1) else {
                panic!("{producer}: B{} is a number", row + 1);
            };
            sum += if row < 5 { b } else { 0.0 };
            let expected = (Some(format!("B{}*2", row + 1)), Cell::Number(b * 2.0));
            assert_eq!(number(row, 4), expected, "{producer}: E{}", row + 1);
        }
        let expected = (Some("SUM(B2:B5)".to_owned()), Cell::Number(sum));
        assert_eq!(number(1, 6), expected, "{producer}: G2");
        let array = &sheet(&trip.before, "Data").layout.array_formulas;
        let legacy = ArrayFormula {
            range: range("F2"),
            dynamic: false,
        };
        assert_eq!(array, &vec![legacy], "{producer}");
        assert_eq!(array, &sheet(&trip.after, "Data").layout.array_formulas);

        let trip = round_trip(producer, "date1904").await;
        assert_eq!(
            value(&trip.before, "Data", 1, 2),
            Cell::DateTime(45306.0),
            "{producer}: 2024-01-15"
        );
        trip.assert_same_looks(6, 4);

        let trip = round_trip(producer, "styles_all").await;
        trip.assert_same_looks(6, 6);
        trip.assert_new_row_looks_like_the_one_above();
    }
}

/// Inserts after the first are saved by the writer the one before kept
/// (where the workbook's sheets allow it): the workbook keeps its looks,
/// and each new row takes the looks of the rows above.
#[tokio::test]
async fn inserts_saved_by_a_kept_writer_keep_the_looks() {
    for producer in PRODUCERS {
        for (name, columns) in [
            ("styles_all", 6),
            ("number_formats", 7),
            ("fonts", 6),
            ("dimensions", 6),
            ("date1904", 4),
        ] {
            let trip = trip(producer, name, |_| {}, &["Fay", "Gus"]).await;
            trip.assert_same_looks(6, columns);
            for row in 5..8 {
                trip.assert_new_row_looks_like_row_five(row);
            }
            assert_eq!(
                value(&trip.after, "Data", 7, 0),
                Cell::Text("Gus".into()),
                "{producer}/{name}"
            );
        }
    }
}

/// Workbooks with parts the writer does not produce: an insert and an
/// update succeed, and each part comes back byte for byte, each element of
/// the sheet as it was, with the relationships that lead to them.
#[tokio::test]
async fn parts_the_writer_does_not_produce_are_carried() {
    // Per fixture: the sheet elements and the parts that must survive.
    let cases: [(&str, &[&str], &str); 6] = [
        ("comments", &["legacyDrawing"], "xl/comments"),
        ("image", &["drawing"], "xl/media/"),
        ("chart", &["drawing"], "xl/charts/"),
        ("protection", &["sheetProtection"], ""),
        ("validations", &["dataValidations"], ""),
        ("conditional", &["conditionalFormatting"], ""),
    ];
    for producer in PRODUCERS {
        for (name, sheet_elements, part_prefix) in cases {
            let case = format!("{producer}/{name}");
            let server = Server::start().await;
            server.add_fixture(&format!("fidelity/{producer}/{name}.xlsx"), ID);
            let original = std::fs::read(server.file(ID)).unwrap();
            let (status, body) = server
                .post(&rows_path("Data"), json!({"data": [{"name": "Eve"}]}))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{case}: {body}");
            let update = json!({"type": "row", "row": 2, "data": {"name": "changed"}});
            let (status, body) = server.patch(&rows_path("Data"), update).await;
            assert_eq!(status, StatusCode::OK, "{case}: {body}");
            let written = std::fs::read(server.file(ID)).unwrap();

            let sheet = "xl/worksheets/sheet1.xml";
            for element in sheet_elements {
                let before = without_ids(elements(&part(&original, sheet).unwrap(), element));
                let after = without_ids(elements(&part(&written, sheet).unwrap(), element));
                assert!(!before.is_empty(), "{case}: the fixture has <{element}>");
                assert_eq!(after, before, "{case}: <{element}>");
            }
            let names = |package: &[u8]| -> Vec<String> {
                let zip = zip::ZipArchive::new(std::io::Cursor::new(package.to_vec())).unwrap();
                let mut names: Vec<String> =
                    zip.file_names().map(|n| n.unwrap().into_owned()).collect();
                names.retain(|n| !part_prefix.is_empty() && n.starts_with(part_prefix));
                names.sort();
                names
            };
            for carried in names(&original) {
                assert_eq!(
                    part(&written, &carried),
                    part(&original, &carried),
                    "{case}: {carried} is carried byte for byte"
                );
            }
            let after = parse(&written);
            assert_eq!(parse(&original).sheets.len(), after.sheets.len(), "{case}");
            assert_eq!(
                value(&after, "Data", 5, 0),
                Cell::Text("Eve".into()),
                "{case}"
            );
        }
    }
}

/// Text formatted in parts keeps its runs, each with its font, as the
/// file writes them.
#[tokio::test]
async fn rich_text_keeps_its_runs() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "rich_text").await;
        let runs = |workbook: &Workbook| sheet(workbook, "Data").layout.rich_text.clone();
        let before = runs(&trip.before);
        assert!(!before.is_empty(), "{producer}: the fixture has rich text");
        let looks = |runs: &std::collections::BTreeMap<(u32, u16), RichText>| {
            runs.iter()
                .map(|(at, rich)| {
                    let runs: Vec<(String, bool)> = rich
                        .runs
                        .iter()
                        .map(|r| (r.text.clone(), r.font.as_ref().is_some_and(|f| f.bold)))
                        .collect();
                    (*at, runs)
                })
                .collect::<Vec<_>>()
        };
        let expected = vec![(
            (1, 3),
            vec![
                ("see ".to_owned(), false),
                ("bold".to_owned(), true),
                (" part".to_owned(), false),
            ],
        )];
        assert_eq!(looks(&before), expected, "{producer}: the fixture's runs");
        assert_eq!(looks(&runs(&trip.after)), expected, "{producer}");
        assert_eq!(runs(&trip.after), before, "{producer}: the runs' XML");
        assert!(trip.after.unkept.is_empty(), "{producer}");
    }
}

/// A workbook with a chart sheet (a whole sheet that is a chart), which the
/// writer has no place for.
fn workbook_with_a_chart_sheet() -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let data = book.add_worksheet().set_name("Data").unwrap();
    data.write(0, 0, "name").unwrap();
    data.write(1, 0, "Ann").unwrap();
    add_chart_sheet(&mut book);
    book.save_to_buffer().unwrap()
}

/// Adds a chart sheet named `Chart`, charting `Data!A1`.
fn add_chart_sheet(book: &mut rust_xlsxwriter::Workbook) {
    let mut chart = rust_xlsxwriter::Chart::new_column();
    chart.add_series().set_values("Data!$A$1:$A$1");
    book.add_chartsheet()
        .set_name("Chart")
        .unwrap()
        .insert_chart(0, 0, &chart)
        .unwrap();
}

/// Chart sheets are carried: the write succeeds and the chart sheet comes
/// back in its place, its part byte for byte, its chart with it.
#[tokio::test]
async fn chart_sheets_are_carried() {
    let original = workbook_with_a_chart_sheet();
    let written = written_after_insert(&original, "chart sheet").await;
    let entries = elements(&part(&written, "xl/workbook.xml").unwrap(), "sheet");
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(entries[1].contains(r#"name="Chart""#), "{entries:?}");
    assert_parts_kept(
        &original,
        &written,
        &["xl/chartsheets/sheet1.xml", "xl/charts/chart1.xml"],
    );
    let path = std::env::temp_dir().join(format!("sheetd-chart-{}.xlsx", std::process::id()));
    std::fs::write(&path, &written).unwrap();
    assert_eq!(common::sheet_names(&path), ["Data", "Chart"]);
    std::fs::remove_file(&path).unwrap();
    let after = parse(&written);
    assert!(after.unkept.is_empty(), "{:?}", after.unkept);
    assert_eq!(value(&after, "Data", 2, 0), Cell::Text("Eve".into()));
}

/// A chart sheet whose part is missing cannot be carried: writes are
/// refused, 409 naming it, the file untouched.
#[tokio::test]
async fn writes_that_would_lose_a_sheet_are_refused() {
    let broken = with_part_removed(&workbook_with_a_chart_sheet(), "xl/chartsheets/sheet1.xml");
    let server = Server::start().await;
    std::fs::write(server.file(ID), &broken).unwrap();
    let (status, body) = server
        .post(&rows_path("Data"), json!({"data": [{"name": "Eve"}]}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("sheet \"Chart\""), "{detail}");
    assert_eq!(std::fs::read(server.file(ID)).unwrap(), broken);
}

#[tokio::test]
async fn an_operator_may_allow_lossy_writes() {
    let server = Server::start_with(|config| config.allow_lossy_writes = true).await;
    let broken = with_part_removed(&workbook_with_a_chart_sheet(), "xl/chartsheets/sheet1.xml");
    std::fs::write(server.file(ID), broken).unwrap();
    let (status, body) = server
        .post(&rows_path("Data"), json!({"data": [{"name": "Eve"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let after = parse(&std::fs::read(server.file(ID)).unwrap());
    assert!(
        after.unkept.is_empty(),
        "the chart sheet is gone: {:?}",
        after.unkept
    );
    assert_eq!(value(&after, "Data", 2, 0), Cell::Text("Eve".into()));
}

/// `package` without the part `name`.
fn with_part_removed(package: &[u8], name: &str) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(package)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..zip.len() {
        let file = zip.by_index(i).unwrap();
        if file.name().unwrap() != name {
            out.raw_copy_file(file).unwrap();
        }
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn a_default_font_other_than_calibri_survives() {
    let mut book = rust_xlsxwriter::Workbook::new();
    let arial = rust_xlsxwriter::Format::new()
        .set_font_name("Arial")
        .set_font_size(10);
    book.set_default_format(&arial, 17, 64).unwrap();
    book.add_worksheet().write(0, 0, "x").unwrap();
    let before = parse(&book.save_to_buffer().unwrap());
    assert_eq!(before.default_font.name.as_deref(), Some("Arial"));

    let after = rewritten(&before);
    assert_eq!(
        (after.default_font.name, after.default_font.size),
        (Some("Arial".to_owned()), Some(10.0))
    );
}

#[test]
fn shared_formulas_come_back_one_per_cell() {
    // B2:B4 share `A2*2` (written as Excel does: the formula in B2, B3 and
    // B4 point at it); see fixtures/fidelity/make_shared_formulas.py.
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/fidelity/handmade/shared_formulas.xlsx"
    ))
    .unwrap();
    let workbook = parse(&bytes);
    let exprs: Vec<_> = (1..4)
        .map(|row| match value(&workbook, "Data", row, 1) {
            Cell::Formula(f) => (f.expr, f.cached),
            other => panic!("row {row}: {other:?}"),
        })
        .collect();
    assert_eq!(
        exprs,
        [
            ("A2*2".to_owned(), Cell::Number(2.0)),
            ("A3*2".to_owned(), Cell::Number(4.0)),
            ("A4*2".to_owned(), Cell::Number(6.0)),
        ]
    );
}

#[tokio::test]
async fn print_settings_survive() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "print_settings").await;
        let print = &sheet(&trip.before, "Data").layout.print;
        assert!(print.landscape, "{producer}");
        assert_eq!(print.paper_size, Some(9), "{producer}: A4");
        assert_eq!(print.fit_to_pages, Some((1, 0)), "{producer}");
        assert_eq!(
            print.margins,
            Some([0.5, 0.5, 1.0, 1.0, 0.4, 0.4]),
            "{producer}"
        );
        assert_eq!(
            print.header.as_deref(),
            Some("&CQuarterly data"),
            "{producer}"
        );
        assert_eq!(
            print.footer.as_deref(),
            Some("&RPage &P of &N"),
            "{producer}"
        );
        assert!(print.center_horizontally && print.gridlines, "{producer}");
        assert_eq!(
            *print,
            sheet(&trip.after, "Data").layout.print,
            "{producer}"
        );
        trip.assert_same_looks(6, 4);
    }
}

#[test]
fn document_properties_survive() {
    let mut book = rust_xlsxwriter::Workbook::new();
    let properties = rust_xlsxwriter::DocProperties::new()
        .set_title("Stock & orders")
        .set_author("Eve")
        .set_company("Example Ltd")
        .set_keywords("stock, orders")
        .set_comment("kept by sheetd");
    book.set_properties(&properties);
    book.add_worksheet().write(0, 0, "x").unwrap();
    let before = parse(&book.save_to_buffer().unwrap());
    assert_eq!(before.properties.title.as_deref(), Some("Stock & orders"));
    assert_eq!(before.properties.company.as_deref(), Some("Example Ltd"));

    assert_eq!(rewritten(&before).properties, before.properties);
}

#[tokio::test]
async fn grouped_rows_and_columns_survive() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "outline").await;
        let levels = |workbook: &Workbook| {
            let layout = &sheet(workbook, "Data").layout;
            let rows: Vec<u8> = (0..6)
                .map(|row| layout.rows.get(&row).map_or(0, |p| p.outline_level))
                .collect();
            let columns: Vec<u8> = (0..4)
                .map(|column| {
                    let c = layout
                        .columns
                        .iter()
                        .find(|c| (c.first..=c.last).contains(&column));
                    c.map_or(0, |c| c.outline_level)
                })
                .collect();
            (rows, columns)
        };
        assert_eq!(
            levels(&trip.before),
            (vec![0, 1, 2, 2, 1, 0], vec![0, 1, 1, 0]),
            "{producer}"
        );
        assert_eq!(levels(&trip.after), levels(&trip.before), "{producer}");
        trip.assert_same_looks(6, 4);
    }
}

#[test]
fn tinted_theme_colours_survive() {
    use rust_xlsxwriter::{Color as XlsxColor, Format, FormatPattern};
    let mut book = rust_xlsxwriter::Workbook::new();
    let light_fill = Format::new()
        .set_pattern(FormatPattern::Solid)
        .set_background_color(XlsxColor::Theme(4, 1))
        .set_font_color(XlsxColor::Theme(1, 2));
    let dark_fill = Format::new()
        .set_pattern(FormatPattern::Solid)
        .set_background_color(XlsxColor::Theme(5, 5));
    let sheet = book.add_worksheet();
    sheet.write_with_format(0, 0, "light", &light_fill).unwrap();
    sheet.write_with_format(1, 0, "dark", &dark_fill).unwrap();
    let before = parse(&book.save_to_buffer().unwrap());
    let light = look(&before, "Sheet1", 0, 0);
    assert_eq!(
        light.fill.foreground,
        Some(Color::Theme(4, 800)),
        "{light:?}"
    );
    assert_eq!(light.font.color, Some(Color::Theme(1, 350)));
    assert_eq!(
        look(&before, "Sheet1", 1, 0).fill.foreground,
        Some(Color::Theme(5, -500))
    );

    let after = rewritten(&before);
    for row in 0..2 {
        assert_eq!(
            look(&before, "Sheet1", row, 0),
            look(&after, "Sheet1", row, 0),
            "row {row}"
        );
    }
}

/// A chart sheet is not a sheet of the model: the worksheets after it keep
/// their place for the active sheet and for names scoped to them, in the
/// model and in the written file, where the chart sheet comes back between
/// them.
#[test]
fn a_chart_sheet_between_worksheets_keeps_their_indexes_right() {
    let mut book = rust_xlsxwriter::Workbook::new();
    book.add_worksheet()
        .set_name("Data")
        .unwrap()
        .write(0, 0, 1)
        .unwrap();
    add_chart_sheet(&mut book);
    let other = book.add_worksheet().set_name("Other").unwrap();
    other.write(0, 0, 2).unwrap();
    other.set_active(true);
    other.autofilter(0, 0, 0, 0).unwrap();
    book.define_name("Other!total", "=Other!$A$1").unwrap();
    book.define_name("Chart!picked", "=Data!$A$1").unwrap();

    let workbook = parse(&book.save_to_buffer().unwrap());
    let names: Vec<&str> = workbook.sheets.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Data", "Other"]);
    assert_eq!(workbook.active_sheet, 1, "Other is the active sheet");
    assert_eq!(workbook.names.len(), 1);
    assert_eq!(workbook.names[0].scope, Some(1), "total belongs to Other");
    assert!(workbook.unkept.is_empty(), "{:?}", workbook.unkept);

    let mut out = std::io::Cursor::new(Vec::new());
    sheetd::xlsx::write_workbook(&workbook, &mut out).unwrap();
    let xml = String::from_utf8(part(out.get_ref(), "xl/workbook.xml").unwrap()).unwrap();
    let entries = elements(xml.as_bytes(), "sheet");
    let order: Vec<bool> = ["Data", "Chart", "Other"]
        .iter()
        .zip(&entries)
        .map(|(name, entry)| entry.contains(&format!(r#"name="{name}""#)))
        .collect();
    assert_eq!(order, [true, true, true], "{entries:?}");
    assert!(xml.contains(r#"activeTab="2""#), "{xml}");
    for name in elements(xml.as_bytes(), "definedName") {
        let sheet = match () {
            _ if name.contains("total") || name.contains("_FilterDatabase") => "2",
            _ if name.contains("picked") => "1",
            _ => panic!("{name}"),
        };
        assert!(
            name.contains(&format!(r#"localSheetId="{sheet}""#)),
            "{name}"
        );
    }
    assert_eq!(elements(xml.as_bytes(), "definedName").len(), 3, "{xml}");
    let again = parse(out.get_ref());
    assert_eq!(again.active_sheet, 1);
    assert_eq!(again.names, workbook.names);
}

/// A workbook in the 1904 date system stays in it, every date the same:
/// the writer counts from 1900, so the serials are moved back by the
/// 1,462 days between the two.
#[test]
fn a_1904_workbook_stays_in_1904_with_the_same_dates() {
    for producer in PRODUCERS {
        let path = common::fixture_path(&format!("fidelity/{producer}/date1904.xlsx"));
        let before = parse(&std::fs::read(path).unwrap());
        let mut out = std::io::Cursor::new(Vec::new());
        sheetd::xlsx::write_workbook(&before, &mut out).expect("written");
        let written = out.into_inner();
        let settings = elements(&part(&written, "xl/workbook.xml").unwrap(), "workbookPr");
        assert!(
            settings
                .iter()
                .any(|e| e.contains("date1904=\"1\"") || e.contains("date1904=\"true\"")),
            "{producer}: {settings:?}"
        );
        let after = parse(&written);
        for (b, a) in before.sheets.iter().zip(&after.sheets) {
            assert_eq!(a.rows, b.rows, "{producer}: sheet {}", b.name);
        }
        assert!(
            before.sheets[0]
                .cells()
                .any(|c| matches!(c, Cell::DateTime(_))),
            "{producer}: the fixture has dates"
        );
    }
}

/// In a 1904 workbook, dates before 1900/03/01 (negative serials, which
/// LibreOffice and openpyxl show) read and write as the days they are:
/// the 1900 system's 29 February 1900, which never was, is not counted
/// between them. -1460 is 1900/01/01, -1402 is 1900/02/28.
#[tokio::test]
async fn dates_before_1900_03_01_in_a_1904_workbook_are_the_days_they_show() {
    let early = r#"<row r="30"><c r="A30" t="inlineStr"><is><t>first</t></is></c><c r="C30" s="1"><v>-1460</v></c></row><row r="31"><c r="A31" t="inlineStr"><is><t>leap</t></is></c><c r="C31" s="1"><v>-1402</v></c></row>"#;
    for producer in PRODUCERS {
        let server = Server::start().await;
        std::fs::write(server.file(ID), with_row(producer, "date1904", early)).unwrap();
        let (status, body) = server
            .get(&format!("{}?filter=name:in:first,leap", rows_path("Data")))
            .await;
        assert_eq!(status, StatusCode::OK, "{producer}: {body}");
        let when: Vec<&serde_json::Value> = body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| &row["when"])
            .collect();
        assert_eq!(
            when,
            [&json!("1900/01/01"), &json!("1900/02/28")],
            "{producer}"
        );
        let (_, shown) = server
            .get(&format!(
                "{}?filter=name:in:first,leap&values=formatted",
                rows_path("Data")
            ))
            .await;
        let shown: Vec<&serde_json::Value> = (shown["data"].as_array().unwrap().iter())
            .map(|row| &row["when"])
            .collect();
        // As LibreOffice shows them, in the fixture's `yyyy-mm-dd`.
        assert_eq!(
            shown,
            [&json!("1900-01-01"), &json!("1900-02-28")],
            "{producer}"
        );
        let written = json!({"data": [
            {"name": "new", "when": "1900/01/01"},
            {"name": "march", "when": "1900/03/01"},
            {"name": "time", "when": "10:30"},
        ]});
        let (status, body) = server.post(&rows_path("Data"), written).await;
        assert_eq!(status, StatusCode::CREATED, "{producer}: {body}");
        let grid = common::read_sheet(&server.file(ID), "Data");
        let serial = |row: usize| match &grid[row][2] {
            calamine::Data::DateTime(date) => date.as_f64(),
            other => panic!("{producer}: row {} holds {other:?}", row + 1),
        };
        assert_eq!(
            [serial(29), serial(30)],
            [-1460.0, -1402.0],
            "{producer}: kept"
        );
        assert_eq!(
            [serial(31), serial(32)],
            [-1460.0, -1401.0],
            "{producer}: written"
        );
        // A time of day is counted alike in both systems.
        assert_eq!(serial(33), 0.4375, "{producer}: a time of day");
        let fresh = Server::start_sharing(server.data_dir()).await;
        let (_, read) = fresh
            .get(&format!("{}?filter=name:eq:time", rows_path("Data")))
            .await;
        assert_eq!(read["data"][0]["when"], "10:30:00", "{producer}: {read}");
    }
}

/// `package` with one part's text changed by `edit`.
fn with_part_edited(package: &[u8], name: &str, edit: impl Fn(String) -> String) -> Vec<u8> {
    common::repacked(package, |part, text| match part == name {
        true => edit(text),
        false => text,
    })
}

/// Columns come back as the file had them: widths exact (not rounded to
/// the writer's pixels) and the attributes the model does not keep.
#[test]
fn columns_come_back_as_the_file_had_them() {
    let path = common::fixture_path("fidelity/openpyxl/dimensions.xlsx");
    let sheet_part = "xl/worksheets/sheet1.xml";
    let original = with_part_edited(&std::fs::read(path).unwrap(), sheet_part, |xml| {
        xml.replace(
            r#"<col width="30" customWidth="1" min="1" max="1" />"#,
            r#"<col width="15.78" customWidth="1" bestFit="1" min="1" max="1" />"#,
        )
    });
    let cols = |package: &[u8]| -> Vec<String> {
        let found = elements(&part(package, sheet_part).unwrap(), "col");
        found.iter().map(|col| col.replace(" />", "/>")).collect()
    };
    assert!(
        cols(&original)[0].contains("15.78"),
        "{:?}",
        cols(&original)
    );
    let mut out = std::io::Cursor::new(Vec::new());
    sheetd::xlsx::write_workbook(&parse(&original), &mut out).expect("written");
    let written = out.into_inner();
    assert_eq!(cols(&written), cols(&original));
    let width = sheet(&parse(&written), "Data").layout.columns[0].width;
    assert_eq!(width, Some(15.78));
}

/// The default font keeps every setting the file gave it, not only the
/// name and size the model reads.
#[test]
fn the_default_font_comes_back_as_the_file_had_it() {
    for producer in PRODUCERS {
        let path = common::fixture_path(&format!("fidelity/{producer}/fonts.xlsx"));
        let original = std::fs::read(path).unwrap();
        let mut out = std::io::Cursor::new(Vec::new());
        sheetd::xlsx::write_workbook(&parse(&original), &mut out).expect("written");
        let first_font = |package: &[u8]| {
            let fonts = elements(&part(package, "xl/styles.xml").unwrap(), "fonts");
            elements(fonts[0].as_bytes(), "font")[0].clone()
        };
        assert_eq!(
            first_font(out.get_ref()),
            first_font(&original),
            "{producer}"
        );
    }
}

/// Rows deleted and inserted under carried elements move them as a
/// spreadsheet app does (§11.2): conditional formats and validations
/// shrink with a deleted row and grow with a row inserted inside them.
#[tokio::test]
async fn carried_elements_move_with_deleted_and_inserted_rows() {
    for producer in PRODUCERS {
        for (name, element, ranges) in [
            ("conditional", "conditionalFormatting", ["B2:B20", "C2:C20"]),
            ("validations", "dataValidation", ["D2:D20", "B2:B20"]),
        ] {
            let server = Server::start().await;
            server.add_fixture(&format!("fidelity/{producer}/{name}.xlsx"), ID);
            let sqrefs = |server: &Server| {
                let bytes = std::fs::read(server.file(ID)).unwrap();
                let xml = part(&bytes, "xl/worksheets/sheet1.xml").unwrap();
                attribute_values(&xml, element, "sqref")
            };
            let before = sqrefs(&server);
            assert_eq!(before, ranges, "{producer}/{name}");
            let (status, body) = server
                .delete(&rows_path("Data"), json!({"type": "row", "row": 2}))
                .await;
            assert_eq!(status, StatusCode::OK, "{producer}/{name}: {body}");
            let shrunk: Vec<String> = before.iter().map(|r| r.replace("20", "19")).collect();
            assert_eq!(sqrefs(&server), shrunk, "{producer}/{name}");
            let (status, body) = server
                .post(
                    &format!("{}?before=5", rows_path("Data")),
                    json!({"data": [{"name": "new"}]}),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{producer}/{name}: {body}");
            assert_eq!(sqrefs(&server), before, "{producer}/{name}");
        }
    }
}

/// The values of attribute `name` of every element `element` (local
/// names) in `xml`, in order.
fn attribute_values(xml: &[u8], element: &str, name: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut found = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == element => {
                let value = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.local_name().as_ref() == name)
                    .map(|a| a.value.into_owned());
                found.extend(value);
            }
            Ok(Event::Eof) | Err(_) => return found,
            Ok(_) => {}
        }
        buf.clear();
    }
}

/// Whether every element and attribute prefix of `xml` is declared.
fn prefixes_declared(xml: &[u8]) -> Result<(), String> {
    use quick_xml::events::Event;
    use quick_xml::name::ResolveResult;
    let mut reader = quick_xml::NsReader::from_reader(xml);
    let mut buf = Vec::new();
    loop {
        match reader.read_resolved_event_into(&mut buf) {
            Ok((ResolveResult::Unknown(prefix), _)) => {
                return Err(format!("undeclared prefix {prefix:?}"));
            }
            Ok((_, Event::Eof)) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(e.to_string()),
        }
        buf.clear();
    }
}

/// Differential formats and fonts written with a prefix (as ClosedXML
/// writes them) keep the declaration of that prefix: the styles part stays
/// well formed.
#[test]
fn carried_styles_keep_their_namespace() {
    // With differential formats and a font, and with a font alone.
    for (fixture, has_dxf) in [("conditional", true), ("fonts", false)] {
        let path = common::fixture_path(&format!("fidelity/openpyxl/{fixture}.xlsx"));
        let original = with_part_edited(&std::fs::read(path).unwrap(), "xl/styles.xml", |xml| {
            let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
            xml.replacen(
                "<styleSheet ",
                &format!("<styleSheet xmlns:x=\"{main}\" "),
                1,
            )
            .replace("<dxf>", "<x:dxf>")
            .replace("</dxf>", "</x:dxf>")
            .replacen("<font>", "<x:font>", 1)
            .replacen("</font>", "<x:b /></x:font>", 1)
        });
        let edited = part(&original, "xl/styles.xml").unwrap();
        prefixes_declared(&edited).expect("the edited original");
        let mut out = std::io::Cursor::new(Vec::new());
        sheetd::xlsx::write_workbook(&parse(&original), &mut out).expect("written");
        let styles = part(out.get_ref(), "xl/styles.xml").unwrap();
        let text = String::from_utf8_lossy(&styles);
        assert!(text.contains("<x:font>"), "{fixture}: {text}");
        assert_eq!(text.contains("<x:dxf>"), has_dxf, "{fixture}: {text}");
        prefixes_declared(&styles).unwrap_or_else(|e| panic!("{fixture}: {e}"));
    }
}

/// The fixture `fidelity/<producer>/<name>.xlsx` with `row` (XML) added
/// as the last row of its first sheet.
fn with_row(producer: &str, name: &str, row: &str) -> Vec<u8> {
    let path = common::fixture_path(&format!("fidelity/{producer}/{name}.xlsx"));
    with_part_edited(
        &std::fs::read(path).unwrap(),
        "xl/worksheets/sheet1.xml",
        |xml| xml.replacen("</sheetData>", &format!("{row}</sheetData>"), 1),
    )
}

/// `package` served as spreadsheet `ID`, after an insert of Eve into sheet
/// `Data` over HTTP: the file the write left on disk.
async fn written_after_insert(package: &[u8], case: &str) -> Vec<u8> {
    let server = Server::start().await;
    std::fs::write(server.file(ID), package).unwrap();
    let (status, body) = server
        .post(&rows_path("Data"), json!({"data": [{"name": "Eve"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{case}: {body}");
    std::fs::read(server.file(ID)).unwrap()
}

/// Cells the writer would write otherwise than the file had them read the
/// same after a write, cell by cell, in calamine: text of no characters, a
/// formula's cached text that looks like a number or a boolean, a formula
/// without a cached result, ISO 8601 dates (`t="d"`) as values and as
/// cached results, the empty cells of an array formula's range, and a
/// formula's cached date in a 1904 workbook.
/// `grid` with the results the engine gives the formulas that had none
/// in the fixture `name` (openpyxl writes none): the base fixture's
/// `E = B*2`, `F2 = SUM(B2:B5*2)` and `G2 = SUM(B2:B5)`, and row 30's
/// `1+1` (D30).
fn computed(mut grid: Vec<Vec<calamine::Data>>, name: &str) -> Vec<Vec<calamine::Data>> {
    use calamine::Data;
    if name != "formulas" {
        return grid;
    }
    let column_b: Vec<f64> = (1..5)
        .map(|row| match grid[row].get(1) {
            Some(Data::Float(b)) => *b,
            other => panic!("B{} is {other:?}", row + 1),
        })
        .collect();
    let mut set_if_empty = |row: usize, column: usize, value: f64| {
        let cells: &mut Vec<Data> = &mut grid[row];
        if cells.get(column).is_none_or(|cell| *cell == Data::Empty) {
            cells.resize(cells.len().max(column + 1), Data::Empty);
            cells[column] = Data::Float(value);
        }
    };
    for (row, value) in (1..5).zip(&column_b) {
        set_if_empty(row, 4, value * 2.0);
    }
    let sum: f64 = column_b.iter().sum();
    set_if_empty(1, 5, sum * 2.0);
    set_if_empty(1, 6, sum);
    set_if_empty(29, 3, 2.0);
    grid
}

#[tokio::test]
async fn untouched_values_read_the_same_after_a_write() {
    use calamine::Data;
    let row = r#"<row r="30"><c r="A30" t="inlineStr"><is><t></t></is></c><c r="B30" t="str"><f>"0"&amp;"1"</f><v>01</v></c><c r="C30" t="str"><f>IF(1,"TRUE")</f><v>TRUE</v></c><c r="D30"><f>1+1</f></c><c r="E30" t="d"><v>2024-01-15T10:30:00</v></c><c r="F30" t="d"><f>E30+1</f><v>2024-01-16T10:30:00</v></c><c r="G30"><f t="array" ref="G30:H30">TRANSPOSE(B2:B2)</f><v>10.5</v></c></row>"#;
    let dated = r#"<row r="30"><c r="C30" s="1"><f>C2+1</f><v>43845</v></c><c r="D30" t="d"><v>2009-06-15</v></c></row>"#;
    for producer in PRODUCERS {
        for (name, row, expected) in [
            (
                "formulas",
                row,
                vec![
                    Data::String(String::new()),
                    Data::String("01".into()),
                    Data::String("TRUE".into()),
                    Data::Empty,
                    Data::DateTimeIso("2024-01-15T10:30:00".into()),
                    Data::DateTimeIso("2024-01-16T10:30:00".into()),
                    Data::Float(10.5),
                ],
            ),
            (
                "date1904",
                dated,
                vec![
                    Data::Empty,
                    Data::Empty,
                    Data::DateTime(calamine::ExcelDateTime::new(
                        43845.0,
                        calamine::ExcelDateTimeType::DateTime,
                        true,
                    )),
                    Data::DateTimeIso("2009-06-15".into()),
                ],
            ),
        ] {
            let case = format!("{producer}/{name}");
            let server = Server::start().await;
            std::fs::write(server.file(ID), with_row(producer, name, row)).unwrap();
            let before = common::read_sheet(&server.file(ID), "Data");
            assert_eq!(before.len(), 30, "{case}: the row is in the fixture");
            assert_eq!(
                before[29][..expected.len()],
                expected[..],
                "{case}: calamine reads the fixture's row"
            );
            let (status, body) = server
                .post(&rows_path("Data"), json!({"data": [{"name": "Eve"}]}))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{case}: {body}");
            let after = common::read_sheet(&server.file(ID), "Data");
            assert_eq!(after.len(), 31, "{case}: Eve is below the row");
            common::assert_grid_eq(&after[..30], &computed(before, name));
            if name == "formulas" {
                // An empty text cell kept in the file still reads as an
                // empty cell through the API (contract §8).
                let (status, body) = server
                    .get(&format!("{}?filter=name:is:null", rows_path("Data")))
                    .await;
                assert_eq!(status, StatusCode::OK, "{case}: {body}");
                let row_30 = body["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|row| row["_row"] == 30)
                    .unwrap_or_else(|| panic!("{case}: row 30 matches is:null: {body}"));
                assert_eq!(row_30["name"], serde_json::Value::Null, "{case}");
                assert_eq!(row_30["amount"], "01", "{case}: a cached text stays text");
            }
        }
    }
}

/// Row settings come back as the file had them, in the sheet XML: a
/// height equal to the writer's default, one between whole pixels, a
/// collapsed outline and a row formatted with the default format (none of
/// which the writer writes so by itself), on rows without cells.
#[tokio::test]
async fn row_settings_come_back_as_the_file_had_them() {
    let rows = r#"<row r="30" ht="15" customHeight="1"/><row r="31" ht="13.3" customHeight="1" collapsed="1"/><row r="32" s="0" customFormat="1"/>"#;
    for producer in PRODUCERS {
        let written = written_after_insert(&with_row(producer, "dimensions", rows), producer).await;
        let xml = part(&written, "xl/worksheets/sheet1.xml").unwrap();
        let row = |number: &str| {
            elements(&xml, "row")
                .into_iter()
                .find(|row| row.starts_with(&format!("<row r=\"{number}\"")))
                .unwrap_or_else(|| panic!("{producer}: row {number} is written"))
        };
        for (number, attributes) in [
            ("30", &[r#"ht="15""#, r#"customHeight="1""#][..]),
            (
                "31",
                &[r#"ht="13.3""#, r#"customHeight="1""#, r#"collapsed="1""#],
            ),
            ("32", &[r#"s="0""#, r#"customFormat="1""#]),
        ] {
            let row = row(number);
            for attribute in attributes {
                assert!(row.contains(attribute), "{producer}: {row} has {attribute}");
            }
        }
        let after = parse(&written);
        assert_eq!(value(&after, "Data", 5, 0), Cell::Text("Eve".into()));
    }
}

/// The value of attribute `name` of the start tag of `element` (XML text).
fn attribute(element: &str, name: &str) -> Option<String> {
    let tag = &element[..element.find('>')?];
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[at..at + tag[at..].find('"')?].to_owned())
}

/// Each named cell style of a styles part with what it looks like: its
/// name, and the font, fill, border and number format code of its style
/// format, as XML text (so renumbered ids compare equal). Style format 0,
/// the Normal style's, is the writer's after a write (the default font
/// and the rest, as `the_default_font_comes_back_as_the_file_had_it`
/// checks): only its style's name is compared.
fn named_styles(styles: &[u8]) -> Vec<[String; 5]> {
    let list = |name: &str, item: &str| -> Vec<String> {
        elements(styles, name)
            .first()
            .map(|list| elements(list.as_bytes(), item))
            .unwrap_or_default()
    };
    let (fonts, fills, borders) = (
        list("fonts", "font"),
        list("fills", "fill"),
        list("borders", "border"),
    );
    let codes = list("numFmts", "numFmt");
    let formats = list("cellStyleXfs", "xf");
    let pick = |items: &[String], xf: &str, id: &str| {
        attribute(xf, id)
            .and_then(|i| items.get(i.parse::<usize>().ok()?).cloned())
            .unwrap_or_default()
            .replace(" />", "/>")
    };
    let mut out: Vec<[String; 5]> = list("cellStyles", "cellStyle")
        .iter()
        .map(|style| {
            let xf = attribute(style, "xfId")
                .filter(|i| i != "0")
                .and_then(|i| formats.get(i.parse::<usize>().ok()?).cloned())
                .unwrap_or_default();
            let number = attribute(&xf, "numFmtId").unwrap_or_default();
            let code = codes
                .iter()
                .find(|c| attribute(c, "numFmtId").as_deref() == Some(number.as_str()))
                .and_then(|c| attribute(c, "formatCode"))
                .unwrap_or(number);
            [
                attribute(style, "name").unwrap_or_default(),
                pick(&fonts, &xf, "fontId"),
                pick(&fills, &xf, "fillId"),
                pick(&borders, &xf, "borderId"),
                code,
            ]
        })
        .collect();
    out.sort();
    out
}

/// Named cell styles ("Good", "Heading 1", a user's own) survive a write
/// with their names and what they look like: font, fill, border and
/// number format, although the writer writes only Normal and numbers the
/// fonts, fills and formats its own way.
#[tokio::test]
async fn named_cell_styles_survive() {
    for producer in PRODUCERS {
        let path = common::fixture_path(&format!("fidelity/{producer}/styles_all.xlsx"));
        let mut package = std::fs::read(path).unwrap();
        if producer == "openpyxl" {
            // openpyxl writes Normal only: add a style as Excel writes one.
            package = with_part_edited(&package, "xl/styles.xml", |xml| {
                xml.replace(
                    r#"<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" /></cellStyleXfs>"#,
                    r#"<cellStyleXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" /><xf numFmtId="167" fontId="3" fillId="2" borderId="2" /></cellStyleXfs>"#,
                )
                .replace("</cellStyles>", r#"<cellStyle name="Loud" xfId="1" /></cellStyles>"#)
            });
        }
        let before = named_styles(&part(&package, "xl/styles.xml").unwrap());
        assert!(before.len() > 1, "{producer}: named styles besides Normal");
        assert!(
            before
                .iter()
                .any(|style| !style[1].is_empty() && style[0] != "Normal"),
            "{producer}: a named style with a font"
        );
        let written = written_after_insert(&package, producer).await;
        let after = named_styles(&part(&written, "xl/styles.xml").unwrap());
        assert_eq!(after, before, "{producer}");
    }
}

/// A link comes back with the text a spreadsheet app keeps for it
/// (`display`) and on the whole range it covers, not only its first cell.
#[tokio::test]
async fn links_keep_their_range_and_display_text() {
    for producer in PRODUCERS {
        let path = common::fixture_path(&format!("fidelity/{producer}/hyperlinks.xlsx"));
        let sheet_part = "xl/worksheets/sheet1.xml";
        let original = with_part_edited(&std::fs::read(path).unwrap(), sheet_part, |xml| {
            xml.replace(
                "</hyperlinks>",
                r#"<hyperlink ref="G2:H3" location="Report!A1" display="both cells"/></hyperlinks>"#,
            )
        });
        let written = written_after_insert(&original, producer).await;
        let links = elements(&part(&written, sheet_part).unwrap(), "hyperlink");
        let on_range = links
            .iter()
            .find(|link| link.contains(r#"ref="G2:H3""#))
            .unwrap_or_else(|| panic!("{producer}: the range keeps its link: {links:?}"));
        assert!(
            on_range.contains(r#"display="both cells""#),
            "{producer}: {on_range}"
        );
        assert!(
            on_range.contains(r#"location="Report!A1""#),
            "{producer}: {on_range}"
        );
        let to_alice = links
            .iter()
            .find(|link| link.contains(r#"ref="F2""#))
            .unwrap_or_else(|| panic!("{producer}: {links:?}"));
        assert!(
            to_alice.contains(r#"display="Alice&apos;s page""#)
                || to_alice.contains(r#"display="Alice's page""#),
            "{producer}: {to_alice}"
        );
        assert_eq!(
            sheet(&parse(&original), "Data").layout.links,
            sheet(&parse(&written), "Data").layout.links,
            "{producer}: every link, its target and tooltip"
        );
    }
}

/// Links of a workbook that carries nothing else (a plain workbook, as
/// rust_xlsxwriter writes one) survive a write.
#[test]
fn links_survive_in_a_workbook_that_carries_nothing() {
    let mut book = rust_xlsxwriter::Workbook::new();
    let data = book.add_worksheet().set_name("Data").unwrap();
    data.write(0, 0, "name").unwrap();
    data.write(1, 0, "Ann").unwrap();
    let mut workbook = parse(&book.save_to_buffer().unwrap());
    assert!(workbook.carried.is_empty(), "{:?}", workbook.carried);
    assert!(workbook.sheets[0].carried.is_empty());
    workbook.sheets[0]
        .layout
        .links
        .push(sheetd::model::layout::Link {
            range: range("A2"),
            target: LinkTarget::Url("https://example.com/".into()),
            tooltip: Some("see".into()),
            attributes: vec![("display".into(), "Ann".into())],
        });
    let links = &sheet(&workbook, "Data").layout.links;
    assert_eq!(&sheet(&rewritten(&workbook), "Data").layout.links, links);
}

/// A shared formula whose first cell is not the top-left corner of its
/// range (Excel writes such groups when a later row starts further left):
/// each cell's formula is the first cell's moved by their distance, and a
/// write keeps it so. calamine moves it from the corner instead.
#[test]
fn shared_formulas_are_moved_from_their_first_cell() {
    let mut book = rust_xlsxwriter::Workbook::new();
    book.add_worksheet().set_name("Data").unwrap();
    let plain = book.save_to_buffer().unwrap();
    let cells = r#"<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c><c r="B1" t="inlineStr"><is><t>m</t></is></c><c r="C1" t="inlineStr"><is><t>k</t></is></c></row><row r="2"><c r="A2"><v>1</v></c><c r="B2"><v>2</v></c><c r="C2"><f t="shared" ref="B2:C3" si="0">B2*10</f><v>20</v></c></row><row r="3"><c r="A3"><v>3</v></c><c r="B3"><f t="shared" si="0"/><v>30</v></c><c r="C3"><f t="shared" si="0"/><v>300</v></c></row></sheetData>"#;
    let package = with_part_edited(&plain, "xl/worksheets/sheet1.xml", |xml| {
        let start = xml.find("<sheetData").unwrap();
        let end = xml
            .find("</sheetData>")
            .map(|i| i + "</sheetData>".len())
            .unwrap_or_else(|| start + xml[start..].find("/>").unwrap() + 2);
        format!("{}{cells}{}", &xml[..start], &xml[end..])
    });
    let expr = |workbook: &Workbook, row, column| match value(workbook, "Data", row, column) {
        Cell::Formula(f) => f.expr,
        other => panic!("({row}, {column}) holds {other:?}"),
    };
    let workbook = parse(&package);
    assert_eq!(expr(&workbook, 1, 2), "B2*10");
    assert_eq!(
        expr(&workbook, 2, 1),
        "A3*10",
        "B3 is C2's formula one down, one left"
    );
    assert_eq!(expr(&workbook, 2, 2), "B3*10");
    let after = rewritten(&workbook);
    assert_eq!(expr(&after, 2, 1), "A3*10");
    assert_eq!(expr(&after, 2, 2), "B3*10");
}

/// A cell as its XML spells it: its type, its formula (with the `<f>`'s
/// `t` and `ref`), its value or cached result, its string (a shared
/// string's text looked up). Texts are as they stand in the XML, entities
/// resolved but `_xHHHH_` escapes not decoded (as openpyxl reads them);
/// a text with outer spaces is marked kept when its element says
/// `xml:space="preserve"`.
#[derive(Debug, Default, PartialEq)]
struct CellXml {
    kind: Option<String>,
    formula: Option<(String, Option<String>, Option<String>)>,
    value: Option<(String, bool)>,
    text: Option<(String, bool)>,
}

/// An element of a part: its local name, its attributes (by name as
/// written) and its text.
type XmlElement = (String, Vec<(String, String)>, String);

/// Every element of a part, in order.
fn xml_elements(xml: &[u8]) -> Vec<XmlElement> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut out: Vec<XmlElement> = Vec::new();
    loop {
        match reader.read_event().expect("valid XML") {
            Event::Start(e) | Event::Empty(e) => {
                let attributes = e
                    .attributes()
                    .map(|a| {
                        let a = a.expect("an attribute");
                        let value = a
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .expect("a value");
                        (a.key.as_ref().to_owned(), value.into_owned())
                    })
                    .collect();
                let name = e.local_name().as_ref().to_owned();
                out.push((name, attributes, String::new()));
            }
            Event::Text(t) => {
                if let Some(last) = out.last_mut() {
                    last.2.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                let text = match r.resolve_char_ref().expect("a reference") {
                    Some(c) => c.to_string(),
                    None => quick_xml::escape::resolve_predefined_entity(&r.xml10_content())
                        .expect("a known entity")
                        .to_owned(),
                };
                if let Some(last) = out.last_mut() {
                    last.2.push_str(&text);
                }
            }
            Event::Eof => return out,
            _ => {}
        }
    }
}

/// Whether an element's text keeps its outer spaces for a reader: it has
/// none, or the element says `xml:space="preserve"`.
fn kept(text: &str, attributes: &[(String, String)]) -> bool {
    let space = |c: char| c.is_ascii_whitespace();
    !(text.starts_with(space) || text.ends_with(space))
        || attributes
            .iter()
            .any(|(n, v)| n == "xml:space" && v == "preserve")
}

/// Every cell of the first sheet of `package` as its XML spells it.
fn cells_xml(package: &[u8]) -> std::collections::HashMap<String, CellXml> {
    let strings: Vec<(String, bool)> = match part(package, "xl/sharedStrings.xml") {
        None => Vec::new(),
        Some(sst) => {
            let mut strings: Vec<(String, bool)> = Vec::new();
            for (name, attributes, text) in xml_elements(&sst) {
                match name.as_str() {
                    "si" => strings.push((String::new(), true)),
                    "t" => {
                        let last = strings.last_mut().expect("in a string");
                        last.1 &= kept(&text, &attributes);
                        last.0.push_str(&text);
                    }
                    _ => {}
                }
            }
            strings
        }
    };
    let sheet = part(package, "xl/worksheets/sheet1.xml").expect("sheet 1");
    let mut cells = std::collections::HashMap::new();
    let mut at: Option<(String, CellXml)> = None;
    let get = |attributes: &[(String, String)], name: &str| {
        attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    for (name, attributes, text) in xml_elements(&sheet) {
        match name.as_str() {
            "c" => {
                cells.extend(at.take());
                let cell = CellXml {
                    kind: get(&attributes, "t").filter(|t| t != "n"),
                    ..CellXml::default()
                };
                at = Some((get(&attributes, "r").expect("a reference"), cell));
            }
            "f" => {
                let (_, cell) = at.as_mut().expect("in a cell");
                let kind = get(&attributes, "t");
                cell.formula = Some((text, kind, get(&attributes, "ref")));
            }
            "v" => {
                let (_, cell) = at.as_mut().expect("in a cell");
                let keeps = kept(&text, &attributes);
                if cell.kind.as_deref() == Some("s") {
                    cell.kind = Some("string".into());
                    cell.text = strings.get(text.parse::<usize>().unwrap()).cloned();
                } else {
                    cell.value = Some((text, keeps));
                }
            }
            "t" => {
                let (_, cell) = at.as_mut().expect("in a cell");
                cell.kind = Some("string".into());
                let keeps = kept(&text, &attributes);
                let (all, all_kept) = cell.text.get_or_insert((String::new(), true));
                all.push_str(&text);
                *all_kept &= keeps;
            }
            "row" => cells.extend(at.take()),
            _ => {}
        }
    }
    cells.extend(at);
    cells
}

/// Values and formula texts come back as the file has them (issue 26):
/// error constants stay constants (LibreOffice writes them as formulas,
/// which stay formulas), formula texts keep their spacing, line breaks and
/// array constants, text keeps its `_xHHHH_` escapes and outer spaces, and
/// a cached text result with outer spaces is marked kept. Read back
/// independently of sheetd: the sheet XML, and calamine for the values.
#[tokio::test]
async fn values_and_formula_texts_are_kept_as_the_file_has_them() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "values").await;
        let (before, after) = (cells_xml(&trip.bytes_before), cells_xml(&trip.bytes_after));
        let errors = ["#NULL!", "#VALUE!", "#N/A", "#DIV/0!"];
        for (row, error) in (2..6).zip(errors) {
            let cell = &before[&format!("F{row}")];
            assert_eq!(cell.kind.as_deref(), Some("e"), "{producer}: F{row}");
            assert_eq!(cell.value, Some((error.to_owned(), true)));
        }
        assert_eq!(
            before["H2"].formula,
            Some((
                "{1,2;3,4}".into(),
                Some("array".into()),
                Some("H2:I3".into())
            ))
        );
        assert_eq!(before["G3"].formula.as_ref().unwrap().0, "SUM(\nB2,\nB3)");
        assert!(before["J4"].text.as_ref().unwrap().0.starts_with("line"));
        for column in ["F", "G", "H", "I", "J", "K"] {
            for row in 2..6 {
                let at = format!("{column}{row}");
                // A cell the file leaves out is an empty one.
                let none = CellXml::default();
                let had = before.get(&at).unwrap_or(&none);
                let has = after.get(&at).unwrap_or(&none);
                // Recomputed results may change; a text result with outer
                // spaces is the file's, and kept.
                let result = |cell: &CellXml| match cell.formula {
                    Some(_) => cell.value.as_ref().filter(|(v, _)| v.trim() != v).cloned(),
                    None => cell.value.clone(),
                };
                assert_eq!(has.formula, had.formula, "{producer}: {at}");
                assert_eq!(has.text, had.text, "{producer}: {at}");
                match (result(had), result(has)) {
                    (Some((text, _)), has) => {
                        assert_eq!(has, Some((text, true)), "{producer}: {at}")
                    }
                    // A result the recalculation gave keeps its spaces.
                    (None, Some((_, keeps))) if had.formula.is_some() => {
                        assert!(keeps, "{producer}: {at}")
                    }
                    (None, has) => assert_eq!(has, None, "{producer}: {at}"),
                }
                // A formula's type is its result's; a string's may change
                // from shared to inline.
                if had.text.is_none() && had.formula.is_none() {
                    assert_eq!(has.kind, had.kind, "{producer}: {at}");
                }
            }
        }

        // calamine reads the same constants before and after: F2:F5, J2:J4.
        let values = |bytes: &[u8]| {
            let mut xlsx: calamine::Xlsx<_> =
                calamine::Reader::new(std::io::Cursor::new(bytes.to_vec())).expect("opens");
            let range = calamine::Reader::worksheet_range(&mut xlsx, "Data").expect("Data");
            let constants = (1..5u32)
                .map(|row| (row, 5))
                .chain((1..4).map(|row| (row, 9)));
            constants
                .map(|at| range.get_value(at).cloned())
                .collect::<Vec<_>>()
        };
        let had = values(&trip.bytes_before);
        assert_eq!(
            had[0],
            Some(calamine::Data::Error(calamine::CellErrorType::Null)),
            "{producer}: F2"
        );
        assert_eq!(values(&trip.bytes_after), had, "{producer}");
    }
}

/// A formula cell's `cm` (its cell metadata: a dynamic array's), and its
/// `<f>`'s attributes (sorted) and text.
type FormulaXml = (Option<String>, Vec<(String, String)>, String);

/// Every formula of the first sheet of `package`, by cell.
fn formulas_xml(package: &[u8]) -> std::collections::BTreeMap<String, FormulaXml> {
    let sheet = part(package, "xl/worksheets/sheet1.xml").expect("sheet 1");
    let mut formulas = std::collections::BTreeMap::new();
    let mut cell = None;
    for (name, mut attributes, text) in xml_elements(&sheet) {
        let get = |name: &str| attributes.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        match name.as_str() {
            "c" => cell = Some((get("r").expect("a reference").clone(), get("cm").cloned())),
            "f" => {
                let (at, metadata) = cell.clone().expect("in a cell");
                // `aca` (LibreOffice writes it on every formula) means
                // something only in an array formula, and false is its
                // default.
                let array = get("t").is_some_and(|t| t == "array");
                attributes.retain(|(n, v)| n != "aca" || (array && v != "false"));
                attributes.sort();
                formulas.insert(at, (metadata, attributes, text));
            }
            _ => {}
        }
    }
    formulas
}

/// A value typed over an array formula's first cell replaces the formula,
/// and the results the array filled go with it, as in a spreadsheet app
/// (Excel empties a spilling formula's range): none stays behind as a
/// value nobody typed. D2:D5 is a dynamic array in the openpyxl file
/// (without results: the engine computes them), a legacy one with its
/// results in LibreOffice's. Read back with calamine.
#[tokio::test]
async fn a_value_over_an_array_formulas_first_cell_takes_its_results_away() {
    use calamine::{Data, Reader, Xlsx};
    for producer in PRODUCERS {
        let server = Server::start().await;
        server.add_fixture(&format!("fidelity/{producer}/array_anchor.xlsx"), ID);
        let before = std::fs::read(server.file(ID)).unwrap();
        let (_, attributes, _) = &formulas_xml(&before)["D2"];
        assert!(
            attributes.contains(&("ref".into(), "D2:D5".into())),
            "{producer}: {attributes:?}"
        );
        let update = json!({"type": "row", "row": 2, "data": {"note": "typed"}});
        let (status, body) = server.patch(&rows_path("Data"), update).await;
        assert_eq!(status, StatusCode::OK, "{producer}: {body}");
        let after = server.download(ID).await.bytes().await.unwrap().to_vec();
        assert!(!formulas_xml(&after).contains_key("D2"), "{producer}");
        let mut book: Xlsx<_> = Xlsx::new(std::io::Cursor::new(after)).unwrap();
        let range = book.worksheet_range("Data").unwrap();
        let at = |row: u32, column: u32| {
            range
                .get_value((row, column))
                .cloned()
                .unwrap_or(Data::Empty)
        };
        assert_eq!(at(1, 3), Data::String("typed".into()), "{producer}: D2");
        for row in 2..5 {
            assert_eq!(at(row, 3), Data::Empty, "{producer}: D{}", row + 1);
            assert_ne!(at(row, 1), Data::Empty, "{producer}: B{}", row + 1);
        }
    }
}

/// Formulas come back as the kind of formula the file has (issue 26): a
/// plain formula calling a function Excel added after 2007 stays plain
/// (the writer makes it a dynamic array) and keeps its text with or
/// without `_xlfn.` (the writer adds it); a legacy array formula calling
/// one stays legacy, a dynamic array stays dynamic (`cm`, with the
/// workbook's cell metadata); a data table keeps its `<f t="dataTable">`.
/// LibreOffice 7.4 writes the unknown functions in small letters, no
/// dynamic array, and the data table as `TABLE(…)` formulas.
#[tokio::test]
async fn formulas_are_kept_as_the_kind_of_formula_the_file_has() {
    for producer in PRODUCERS {
        let trip = round_trip(producer, "formula_kinds").await;
        let before = formulas_xml(&trip.bytes_before);
        let after = formulas_xml(&trip.bytes_after);
        for (at, had) in &before {
            assert_eq!(after.get(at), Some(had), "{producer}: {at}");
        }
        let metadata = |bytes: &[u8]| part(bytes, "xl/metadata.xml").is_some();
        assert_eq!(
            metadata(&trip.bytes_after),
            metadata(&trip.bytes_before),
            "{producer}: the cell metadata a dynamic array points at"
        );
    }
    // What the openpyxl file has, for the comparison above to mean it.
    let trip = round_trip("openpyxl", "formula_kinds").await;
    let had = formulas_xml(&trip.bytes_before);
    let attributes = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(had["F2"], (None, vec![], "XLOOKUP(A3,A2:A5,B2:B5)".into()));
    assert_eq!(had["F4"], (None, vec![], "CONCAT(A2,A3)".into()));
    let array = |range: &str| attributes(&[("ref", range), ("t", "array")]);
    assert_eq!(
        had["G2"],
        (None, array("G2:G5"), "_xlfn._xlws.SORT(B2:B5)".into())
    );
    assert_eq!(
        had["H2"],
        (Some("1".into()), array("H2:H5"), "B2:B5*2".into())
    );
    let table = attributes(&[("r1", "J1"), ("ref", "K3:K5"), ("t", "dataTable")]);
    assert_eq!(had["K3"], (None, table, String::new()));
}

/// Excel writes extensions' elements after `workbookPr` (a saved file's
/// path in `mc:AlternateContent`): they stay after it when that element is
/// the writer's own, or the workbook part breaks the schema's order, which
/// Excel repairs.
#[tokio::test]
async fn excels_elements_after_workbook_settings_stay_after_them() {
    let server = Server::start().await;
    common::people_workbook(&server);
    let path = server.file(ID);
    let absolute_path = concat!(
        r#"<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">"#,
        r#"<mc:Choice Requires="x15"><x15ac:absPath xmlns:x15ac="http://schemas.microsoft.com/office/spreadsheetml/2010/11/ac" url="C:\Users\me\"/>"#,
        r#"</mc:Choice></mc:AlternateContent>"#
    );
    let settings = r#"<workbookPr defaultThemeVersion="124226"/>"#;
    let original = with_part_edited(&std::fs::read(&path).unwrap(), "xl/workbook.xml", |xml| {
        assert!(xml.contains(settings), "the writer's own settings: {xml}");
        xml.replace(settings, &format!("{settings}{absolute_path}"))
    });
    std::fs::write(&path, original).unwrap();
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"name": "Eve"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let written =
        String::from_utf8(part(&std::fs::read(&path).unwrap(), "xl/workbook.xml").unwrap())
            .unwrap();
    let at = |text: &str| {
        written
            .find(text)
            .unwrap_or_else(|| panic!("{text} in {written}"))
    };
    assert!(at("<workbookPr") < at("<mc:AlternateContent"), "{written}");
    assert!(at("<mc:AlternateContent") < at("<bookViews"), "{written}");
}

/// A row height the app fitted to the row's content (a large title, a
/// wrapped header: `ht` without `customHeight`, as Excel saves it) stays,
/// still fitted; a height that is the sheet's default stays unset, and so
/// does one fitted to a row with nothing in it.
#[tokio::test]
async fn row_heights_fitted_to_their_content_survive_a_write() {
    let server = Server::start().await;
    common::people_workbook(&server);
    let path = server.file(ID);
    let sheet = "xl/worksheets/sheet1.xml";
    let original = with_part_edited(&std::fs::read(&path).unwrap(), sheet, |xml| {
        xml.replacen(r#"<row r="1""#, r#"<row r="1" ht="31.5""#, 1)
            .replacen(r#"<row r="2""#, r#"<row r="2" ht="15""#, 1)
            .replacen("</sheetData>", r#"<row r="9" ht="30"/></sheetData>"#, 1)
    });
    std::fs::write(&path, original).unwrap();
    let (status, body) = server
        .post(&rows_path("People"), json!({"data": [{"name": "Eve"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let rows = elements(&part(&std::fs::read(&path).unwrap(), sheet).unwrap(), "row");
    assert!(rows[0].contains(r#"ht="31.5""#), "{rows:?}");
    assert!(!rows[0].contains("customHeight"), "{rows:?}");
    assert!(!rows[1].contains("ht="), "{rows:?}");
    assert!(rows[4].contains("Eve"), "{rows:?}");
    assert_eq!(rows.len(), 5, "{rows:?}");
}
