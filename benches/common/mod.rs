//! The benchmarks' workbook: `rows` x 10 columns of text, numbers, dates
//! and booleans, as rust_xlsxwriter writes it.
#![allow(dead_code)] // each benchmark uses a different part of this file

use std::path::Path;

const COLUMNS: [&str; 10] = [
    "id", "name", "city", "amount", "joined", "active", "qty", "note", "code", "score",
];

/// Writes an `rows` x 10 workbook with rust_xlsxwriter: the benchmark's
/// data, and (timed) the floor.
pub fn write_workbook(rows: usize) -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    data_sheet(&mut book, rows, |_, _, _| false);
    book.save_to_buffer().unwrap()
}

/// The benchmark's workbook with `rows` rows whose free-text cells (the
/// eighth column) take `styles` distinct formats in turn: fonts of their
/// own size, colour and boldness, some superscript, some unlocked.
pub fn write_workbook_with_styles(rows: usize, styles: usize) -> Vec<u8> {
    let formats: Vec<rust_xlsxwriter::Format> = (0..styles)
        .map(|i| {
            let format = rust_xlsxwriter::Format::new()
                .set_font_size(8.0 + (i % 12) as f64)
                .set_font_color(rust_xlsxwriter::Color::RGB(0x10_00_00 + i as u32 * 97));
            let format = if i % 2 == 0 {
                format.set_bold()
            } else {
                format
            };
            let format = if i % 5 == 0 {
                format.set_font_script(rust_xlsxwriter::FormatScript::Superscript)
            } else {
                format
            };
            if i % 3 == 0 {
                format.set_unlocked()
            } else {
                format
            }
        })
        .collect();
    let mut book = rust_xlsxwriter::Workbook::new();
    data_sheet(&mut book, rows, |sheet, row, column| {
        if row == 0 || column != 7 {
            return false;
        }
        let format = &formats[row as usize % formats.len()];
        sheet
            .write_string_with_format(row, column, "some free text in a note", format)
            .unwrap();
        true
    });
    book.save_to_buffer().unwrap()
}

/// Adds the benchmark's sheet `Data` to `book`: a header and `rows` rows.
/// `own(sheet, row, column)` may write a cell itself (the header's too) and
/// say so, for a workbook that differs in some columns.
pub fn data_sheet(
    book: &mut rust_xlsxwriter::Workbook,
    rows: usize,
    mut own: impl FnMut(&mut rust_xlsxwriter::Worksheet, u32, u16) -> bool,
) {
    let date = rust_xlsxwriter::Format::new().set_num_format("yyyy/mm/dd");
    let sheet = book.add_worksheet().set_name("Data").unwrap();
    for (c, name) in COLUMNS.iter().enumerate() {
        if !own(sheet, 0, c as u16) {
            sheet.write_string(0, c as u16, *name).unwrap();
        }
    }
    for i in 0..rows {
        let r = i as u32 + 1;
        for c in 0..COLUMNS.len() as u16 {
            if own(sheet, r, c) {
                continue;
            }
            match c {
                0 => sheet.write_number(r, c, i as f64),
                1 => sheet.write_string(r, c, format!("name {i}")),
                2 => sheet.write_string(r, c, ["Berlin", "Paris", "Lima", "Oslo"][i % 4]),
                3 => sheet.write_number(r, c, i as f64 * 1.25),
                4 => sheet.write_number_with_format(r, c, 45000.0 + (i % 1000) as f64, &date),
                5 => sheet.write_boolean(r, c, i % 2 == 0),
                6 => sheet.write_number(r, c, (i % 97) as f64),
                7 => sheet.write_string(r, c, "some free text in a note"),
                8 => sheet.write_string(r, c, format!("C-{i:06}")),
                _ => sheet.write_number(r, c, (i % 1000) as f64 / 10.0),
            }
            .unwrap();
        }
    }
}

/// The benchmark's workbook with what people keep on such a sheet, which
/// a row move rewrites: two conditional formats and a validation over the
/// data, a note on every 100th row, and a chart of one column.
pub fn write_workbook_with_carried(rows: usize) -> Vec<u8> {
    use rust_xlsxwriter::{
        Chart, ChartType, ConditionalFormatCell, ConditionalFormatCellRule, DataValidation,
        DataValidationRule, Format, Note,
    };
    let mut book = rust_xlsxwriter::Workbook::new();
    data_sheet(&mut book, rows, |_, _, _| false);
    let sheet = book.worksheet_from_name("Data").unwrap();
    let last = rows as u32;
    let red = Format::new().set_font_color("#9C0006");
    let above = ConditionalFormatCell::new()
        .set_rule(ConditionalFormatCellRule::GreaterThan(500))
        .set_format(&red);
    sheet.add_conditional_format(1, 3, last, 3, &above).unwrap();
    let below = ConditionalFormatCell::new()
        .set_rule(ConditionalFormatCellRule::LessThan(10))
        .set_format(&red);
    sheet.add_conditional_format(1, 6, last, 6, &below).unwrap();
    let whole = DataValidation::new().allow_whole_number(DataValidationRule::Between(0, 100));
    sheet.add_data_validation(1, 6, last, 6, &whole).unwrap();
    for row in (1..=last).step_by(100) {
        sheet.insert_note(row, 7, &Note::new("checked")).unwrap();
    }
    let mut chart = Chart::new(ChartType::Line);
    chart.add_series().set_values(("Data", 1, 3, last, 3));
    sheet.insert_chart(1, 11, &chart).unwrap();
    book.save_to_buffer().unwrap()
}

/// `--sizes 10000,100000` and `--runs N` from the command line, with the
/// benchmark's defaults: 10k and 100k rows, `runs` runs.
pub fn sizes_and_runs(runs: usize) -> (Vec<usize>, usize) {
    let (mut sizes, mut runs) = (vec![10_000, 100_000], runs);
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.windows(2) {
        match pair[0].as_str() {
            "--sizes" => {
                sizes = pair[1]
                    .split(',')
                    .map(|n| n.parse().expect("a number"))
                    .collect()
            }
            "--runs" => runs = pair[1].parse().expect("a number"),
            _ => {}
        }
    }
    (sizes, runs)
}

/// The rows of the Excel-saved workbook, its header included.
pub const EXCEL_ROWS: usize = 10_000;

/// The program that saved the workbook the server is given.
#[derive(Clone, Copy, PartialEq)]
pub enum Producer {
    RustXlsxwriter,
    Openpyxl,
    LibreOffice,
    /// A workbook Microsoft Excel saved, from a public test suite: 10,000
    /// rows only (`benches/producers/excel/README.md`).
    Excel,
}

impl Producer {
    pub const ALL: [Producer; 4] = [
        Producer::RustXlsxwriter,
        Producer::Openpyxl,
        Producer::LibreOffice,
        Producer::Excel,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Producer::RustXlsxwriter => "rust_xlsxwriter",
            Producer::Openpyxl => "openpyxl",
            Producer::LibreOffice => "libreoffice",
            Producer::Excel => "excel",
        }
    }

    /// Whether this program's workbook comes in `rows` rows.
    pub fn makes(self, rows: usize) -> bool {
        self != Producer::Excel || rows == EXCEL_ROWS
    }

    /// The sheet the benchmark reads and writes.
    pub fn sheet(self) -> &'static str {
        match self {
            Producer::Excel => "Sheet1",
            _ => "Data",
        }
    }

    /// The benchmark's workbook of `rows` rows as this program saves it.
    /// openpyxl's and LibreOffice's are made once by
    /// `benches/producers/make.py` and kept in `target/bench-producers/`.
    pub fn workbook(self, rows: usize) -> Vec<u8> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        match self {
            Producer::RustXlsxwriter => return write_workbook(rows),
            Producer::Excel => {
                assert!(self.makes(rows), "--producer excel has {EXCEL_ROWS} rows");
                let path = root.join("benches/producers/excel/test10x10000.xlsx");
                return std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            }
            Producer::Openpyxl | Producer::LibreOffice => {}
        }
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let out = root.join(target).join("bench-producers");
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let made = std::process::Command::new(&python)
            .arg(root.join("benches/producers/make.py"))
            .args(["--producer", self.key(), "--rows", &rows.to_string()])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "--producer {} runs benches/producers/make.py with {python} (set PYTHON to \
                     another): {e}",
                    self.key()
                )
            });
        assert!(
            made.status.success(),
            "--producer {}: benches/producers/make.py failed: {}",
            self.key(),
            String::from_utf8_lossy(&made.stderr).trim()
        );
        let path = String::from_utf8_lossy(&made.stdout).trim().to_string();
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}
