//! Reading: xlsx bytes → [`Workbook`], with calamine.
//!
//! This is the one place that knows calamine's ranges are offset: cells get
//! their absolute sheet position here, so nobody else does that arithmetic.
//! What calamine does not expose (formats, layout, defined names, and the
//! parts a rewrite would not carry) comes from [`super::package`].

use std::collections::{BTreeMap, HashMap};
use std::io::{Cursor, Read, Seek};

use calamine::{DataRef, Reader, SheetType, SheetVisible, Xlsx, XlsxError};

use super::package::{check_size, read_package};
use super::repair;
use super::{ReadError, from_1904, unreadable};
use crate::model::format::CellFormat;
use crate::model::layout::FileFormula;
use crate::model::value::{DateParse, DateSyntax, Formula, parse_date};
use crate::model::{Cell, Sheet, Visibility, Workbook};

/// The most shared strings a workbook may hold: a string costs the parsers
/// about as much as four cells, and one no cell uses is of no use; but at
/// least [`MIN_SHARED_STRINGS`], a few megabytes, whatever the cell budget.
pub fn max_shared_strings(max_cells: usize) -> usize {
    (max_cells / 4).max(MIN_SHARED_STRINGS)
}

/// See [`max_shared_strings`].
const MIN_SHARED_STRINGS: usize = 100_000;

/// The bytes of text that count as one cell against the cell budget.
pub(super) const TEXT_BYTES_PER_CELL: usize = 32;

/// The most bytes of text (values, cached results and formulas) the cells
/// of a workbook may hold once read: [`TEXT_BYTES_PER_CELL`] a cell of the
/// cell budget, but at least [`MIN_TEXT_BYTES`]. Each cell that shows a shared string holds a
/// copy of it, so a file of 100 KB can name a string of a megabyte in
/// fifty thousand cells (Apache POI's `poc-shared-strings.xlsx`): 50 GB.
pub fn max_text_bytes(max_cells: usize) -> usize {
    max_cells
        .saturating_mul(TEXT_BYTES_PER_CELL)
        .max(MIN_TEXT_BYTES)
}

/// See [`max_text_bytes`].
const MIN_TEXT_BYTES: usize = 64 << 20;

/// Parses a whole workbook. Any failure means "no readable workbook".
/// `max_cells` bounds the cell slots the workbook may take in memory: each
/// row holds its cells up to its last used column, so a row with one cell in
/// column XFD costs 16,384 slots (about 32 bytes each). The bound keeps a
/// hostile or absurd file from exhausting memory.
pub fn read_workbook(bytes: &[u8], max_cells: usize) -> Result<Workbook, ReadError> {
    if let Some(what) = not_a_package(bytes) {
        return Err(ReadError(what.into()));
    }
    // Checked first: the two parsers below run side by side, so the package
    // scan's own budget cannot stop calamine in time.
    check_size(Cursor::new(bytes), max_shared_strings(max_cells))?;
    // The package scan and calamine parse the same bytes independently, each
    // inflating and reading every sheet's XML: on two threads, a cold load
    // takes about as long as the slower of them instead of both.
    let (package, grids) = std::thread::scope(|scope| {
        let package = scope.spawn(|| read_package(Cursor::new(bytes), max_cells));
        let grids = read_grids(bytes, max_cells);
        let package = package
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (package, grids)
    });
    let mut package = package?;
    let grids = match grids {
        // Refused by calamine for what spreadsheet apps open: read again,
        // repaired (the package scan above tolerates the same as it is).
        Err(CalamineError::Calamine(error)) if repair::repairable(&error) => {
            read_grids(&repair::repaired(bytes)?, max_cells)
        }
        // Read by calamine otherwise than apps read it: read again, repaired.
        Ok(_) if package.spaced_string_index => read_grids(&repair::repaired(bytes)?, max_cells),
        grids => grids,
    };
    let grids = grids.map_err(ReadError::from)?;
    let mut workbook = Workbook {
        sheets: Vec::new(),
        unkept: package.unkept,
        properties: package.properties,
        formats: package.formats,
        default_font: package.default_font,
        names: Vec::new(),
        active_sheet: 0,
        carried: std::sync::Arc::new(package.carried),
        row_formulas_absent: false,
    };
    // Sheet indexes in the file (chart sheets included) → in the model.
    let mut kept_index = Vec::new();
    let mut future_functions = HashMap::new();
    for (position, grid) in grids.into_iter().enumerate() {
        let Some(Cells {
            mut rows,
            iso_dates,
        }) = grid.cells
        else {
            kept_index.push(None);
            let carried = workbook
                .carried
                .other_sheets
                .iter()
                .any(|other| other.position == position);
            if !carried {
                workbook.unkept.push(format!(
                    "the {:?} sheet {:?}",
                    grid.meta.typ, grid.meta.name
                ));
            }
            continue;
        };
        kept_index.push(Some(workbook.sheets.len()));
        let shared = package.shared_formulas.remove(&grid.meta.name);
        for (row, column, formula) in shared.into_iter().flatten() {
            let cell = rows
                .get_mut(row as usize)
                .and_then(|cells| cells.get_mut(usize::from(column)));
            if let Some(Cell::Formula(f)) = cell {
                f.expr = formula;
            }
        }
        let mut sheet = Sheet::new(grid.meta.name, rows);
        sheet.visibility = match grid.meta.visible {
            SheetVisible::Visible => Visibility::Visible,
            SheetVisible::Hidden => Visibility::Hidden,
            SheetVisible::VeryHidden => Visibility::VeryHidden,
        };
        sheet.layout = package.layouts.remove(&sheet.name).unwrap_or_default();
        sheet.layout.iso_dates = iso_dates;
        keep_respelled(&mut sheet);
        keep_file_formulas(&mut sheet, &mut future_functions);
        if let Some(carried) = package.carried_sheets.remove(&sheet.name) {
            sheet.carried = std::sync::Arc::new(carried);
        }
        if workbook.carried.date1904 {
            dates_from_1904(&mut sheet, &workbook.formats);
        }
        sheet.show_times(&workbook.formats);
        sheet.keep_misfits(&workbook.formats);
        workbook.sheets.push(sheet);
    }
    workbook.active_sheet = kept_index
        .get(package.active_tab)
        .copied()
        .flatten()
        .unwrap_or(0);
    for mut name in package.names {
        match name.scope.map(|i| kept_index.get(i).copied().flatten()) {
            // A name of a chart sheet is carried with the sheet.
            Some(None) => {}
            scope => {
                name.scope = scope.flatten();
                workbook.names.push(name);
            }
        }
    }
    Ok(workbook)
}

/// Keeps the spellings the package scan found (see
/// [`Spelling`](crate::model::layout::Spelling)) of the text cells the
/// writer would spell otherwise, each with the text read from its cell.
fn keep_respelled(sheet: &mut Sheet) {
    let spelled = std::mem::take(&mut sheet.layout.spelled);
    sheet.layout.spelled = spelled
        .into_iter()
        .filter_map(|((row, column), mut spelling)| {
            let cell = sheet.rows.get(row as usize)?.get(usize::from(column))?;
            let Cell::Text(text) = cell else {
                return None;
            };
            if !super::fix::respelled(text, &spelling) {
                return None;
            }
            spelling.text = text.clone();
            Some(((row, column), spelling))
        })
        .collect();
}

/// Keeps the text of each formula the writer would write otherwise (see
/// [`super::future`]), and gives each data table the package scan found
/// the value read from its cell (see
/// [`FileFormula`](crate::model::layout::FileFormula)). `known` remembers
/// the functions already asked about.
fn keep_file_formulas(sheet: &mut Sheet, known: &mut HashMap<String, bool>) {
    let formulas = &mut sheet.layout.formulas;
    for (key, formula) in formulas.iter_mut() {
        if let FileFormula::DataTable(table) = formula {
            let (row, column) = (key.0 as usize, usize::from(key.1));
            let cell = sheet.rows.get(row).and_then(|cells| cells.get(column));
            table.value = cell.cloned().unwrap_or_default();
        }
    }
    for (row, cells) in sheet.rows.iter().enumerate() {
        for (column, cell) in cells.iter().enumerate() {
            if let Cell::Formula(f) = cell
                && super::future::writer_rewrites(&f.expr, known)
            {
                let text = FileFormula::Text(f.expr.clone());
                formulas.insert((row as u32, column as u16), text);
            }
        }
    }
}

/// A sheet of the file as calamine lists it, with its values when it is a
/// worksheet (chart sheets and the like have none the model keeps).
struct Grid {
    meta: calamine::Sheet,
    cells: Option<Cells>,
}

/// A worksheet's values, and the text of its ISO 8601 date cells.
struct Cells {
    rows: Vec<Vec<Cell>>,
    iso_dates: BTreeMap<(u32, u16), String>,
}

/// Why the values could not be read: calamine's error, kept for
/// [`repair::repairable`], or the cell budget's.
enum CalamineError {
    Calamine(XlsxError),
    Read(ReadError),
}

impl From<CalamineError> for ReadError {
    fn from(error: CalamineError) -> ReadError {
        match error {
            CalamineError::Calamine(error) => unreadable(in_our_words(error)),
            CalamineError::Read(error) => error,
        }
    }
}

/// What calamine's most common refusals mean, said without its wording
/// (`File not found '_rels/.rels'`); the others as it says them.
fn in_our_words(error: XlsxError) -> String {
    match error {
        XlsxError::FileNotFound(part) => format!("the package has no part {part}"),
        XlsxError::Password => "it is encrypted with a password".to_owned(),
        XlsxError::Zip(_) => "it is not a readable zip archive".to_owned(),
        other => other.to_string(),
    }
}

/// Every sheet's values, read with calamine, in the file's order.
fn read_grids(bytes: &[u8], max_cells: usize) -> Result<Vec<Grid>, CalamineError> {
    let mut xlsx = Xlsx::new(Cursor::new(bytes)).map_err(CalamineError::Calamine)?;
    let mut budget = Budget {
        slots: 0,
        max_cells,
        text: 0,
        max_text: max_text_bytes(max_cells),
    };
    let mut grids = Vec::new();
    for meta in xlsx.sheets_metadata().to_vec() {
        let cells = if meta.typ == SheetType::WorkSheet {
            Some(read_cells(&mut xlsx, &meta.name, &mut budget)?)
        } else {
            None
        };
        grids.push(Grid { meta, cells });
    }
    Ok(grids)
}

/// Counts the dates of a 1904 workbook's sheet as the model counts dates
/// (from 1900, see [`from_1904`]), once its cells' formats are known: a
/// value under 1 in a format that shows a time and no date is a time of
/// day, which both systems count alike, and stays as it is; so does an
/// ISO 8601 date.
fn dates_from_1904(sheet: &mut Sheet, formats: &[CellFormat]) {
    let shows: Vec<_> = formats.iter().map(CellFormat::date_parts).collect();
    for (r, row) in sheet.rows.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            let value = match cell {
                Cell::Formula(formula) => &mut formula.cached,
                other => other,
            };
            let Cell::DateTime(serial) = value else {
                continue;
            };
            // An ISO 8601 date (`t="d"`) names its day in no system.
            if sheet.layout.iso_dates.contains_key(&(r as u32, c as u16)) {
                continue;
            }
            let id = sheet.layout.format(r, c) as usize;
            let parts = shows.get(id).copied().unwrap_or_default();
            let time_of_day = parts.time && !parts.date && (0.0..1.0).contains(serial);
            if !time_of_day {
                *serial = from_1904(*serial);
            }
        }
    }
}

/// What a file is when it is plainly no .xlsx package, said so that the
/// user knows what to do (§9); `None` when it starts like a zip archive.
fn not_a_package(bytes: &[u8]) -> Option<&'static str> {
    /// Every OLE compound file (legacy .xls, encrypted .xlsx) starts so.
    const COMPOUND_FILE: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
    if bytes.is_empty() {
        return Some("the file is empty");
    }
    if bytes.starts_with(b"PK") {
        return None;
    }
    if bytes.starts_with(COMPOUND_FILE) {
        // An encrypted workbook keeps its package in a stream of a compound
        // file, beside one named EncryptionInfo (MS-OFFCRYPTO).
        let name: Vec<u8> = "EncryptionInfo"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        if bytes.windows(name.len()).any(|w| w == name) {
            return Some(
                "the workbook is password-protected (encrypted); remove its password in the \
                 spreadsheet app and save it again",
            );
        }
        return Some("the file is a legacy .xls workbook (or another OLE file); save it as .xlsx");
    }
    Some("the file is not an .xlsx package (an .xlsx file is a zip archive)")
}

/// The grid of one sheet, rows and columns absolute, formulas with their
/// cached results (text of no characters included: it is a value in the
/// file, which a rewrite keeps), read cell by cell (never as one dense range: a sheet
/// with cells at A1 and XFD1048576 would be 17 billion cells), counted
/// against the whole workbook's `budget`.
fn read_cells<R: Read + Seek>(
    xlsx: &mut Xlsx<R>,
    sheet: &str,
    budget: &mut Budget,
) -> Result<Cells, CalamineError> {
    let mut reader = xlsx
        .worksheet_cells_reader(sheet)
        .map_err(CalamineError::Calamine)?;
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    let mut iso_dates = BTreeMap::new();
    while let Some(record) = reader
        .next_cell_with_formula()
        .map_err(CalamineError::Calamine)?
    {
        // Counted before the text is copied out of the shared strings.
        budget.text += text_bytes(&record.value) + record.formula.as_ref().map_or(0, String::len);
        if budget.text > budget.max_text {
            return Err(CalamineError::Read(ReadError(format!(
                "the workbook is too large: its cells hold more than {} MiB of text",
                budget.max_text >> 20
            ))));
        }
        let value = cell_of(&record.value);
        let cell = match record.formula {
            Some(expr) if !expr.is_empty() => Cell::Formula(Box::new(Formula::new(expr, value))),
            _ => value,
        };
        if cell == Cell::Empty {
            continue;
        }
        let (row, column) = (record.pos.0 as usize, record.pos.1 as usize);
        if let DataRef::DateTimeIso(iso) = &record.value {
            iso_dates.insert((record.pos.0, column as u16), iso.clone());
        }
        // Counted before anything grows: a cell far down or far right must
        // fail the budget, not allocate for it first.
        let new_rows = (row + 1).saturating_sub(rows.len());
        let width = rows.get(row).map_or(0, Vec::len);
        // A row counts its length, at least 1 (as `Workbook::cell_slots`).
        budget.slots += new_rows + (column + 1).saturating_sub(width.max(1));
        if budget.slots > budget.max_cells {
            return Err(CalamineError::Read(ReadError(format!(
                "the workbook is too large: it spans more than {} cells",
                budget.max_cells
            ))));
        }
        if new_rows > 0 {
            rows.resize_with(row + 1, Vec::new);
        }
        let cells = &mut rows[row];
        if cells.len() <= column {
            cells.resize_with(column + 1, Cell::default);
        }
        cells[column] = cell;
    }
    Ok(Cells { rows, iso_dates })
}

/// What the cells read so far take, against the bounds of a workbook.
struct Budget {
    /// Cell slots: each row up to its last used column.
    slots: usize,
    max_cells: usize,
    /// Bytes of text: see [`max_text_bytes`].
    text: usize,
    max_text: usize,
}

/// The bytes of text a cell of this value holds once read.
fn text_bytes(data: &DataRef<'_>) -> usize {
    match data {
        DataRef::String(s) | DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => s.len(),
        DataRef::SharedString(s) => s.len(),
        _ => 0,
    }
}

fn cell_of(data: &DataRef<'_>) -> Cell {
    match data {
        DataRef::Empty => Cell::Empty,
        DataRef::Int(i) => Cell::Number(*i as f64),
        DataRef::Float(f) => Cell::Number(*f),
        DataRef::String(s) => Cell::Text(s.clone()),
        DataRef::SharedString(s) => Cell::Text((*s).to_owned()),
        DataRef::Bool(b) => Cell::Bool(*b),
        DataRef::DateTime(dt) if dt.is_duration() => Cell::Duration(dt.as_f64()),
        DataRef::DateTime(dt) => Cell::DateTime(dt.as_f64()),
        DataRef::DateTimeIso(iso) => iso_cell(iso),
        DataRef::DurationIso(iso) => Cell::Text(iso.clone()),
        DataRef::Error(error) => Cell::Error(error.to_string()),
    }
}

/// A `t="d"` cell's ISO 8601 text as the model holds it: a date when it
/// is one, else the text.
pub(super) fn iso_cell(iso: &str) -> Cell {
    match parse_date(iso.get(..19).unwrap_or(iso), DateSyntax::Filter) {
        DateParse::Valid(serial, _) => Cell::DateTime(serial),
        _ => Cell::Text(iso.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// `book` saved, with its first sheet's XML edited by `edit`.
    fn with_sheet_edited(
        book: &mut rust_xlsxwriter::Workbook,
        edit: impl Fn(String) -> String,
    ) -> Vec<u8> {
        let original = book.save_to_buffer().unwrap();
        let mut archive = zip::ZipArchive::new(Cursor::new(original)).unwrap();
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for i in 0..archive.len() {
            let mut part = archive.by_index(i).unwrap();
            let name = part.name().unwrap().into_owned();
            let mut xml = String::new();
            part.read_to_string(&mut xml).unwrap();
            if name == "xl/worksheets/sheet1.xml" {
                xml = edit(xml);
            }
            out.start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            out.write_all(xml.as_bytes()).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    /// A one-sheet workbook whose only cell is `reference`, which may lie
    /// far outside the grid Excel allows.
    fn workbook_with_a_cell_at(reference: &str) -> Vec<u8> {
        let mut book = rust_xlsxwriter::Workbook::new();
        book.add_worksheet().write(0, 0, 1).unwrap();
        with_sheet_edited(&mut book, |xml| {
            xml.replace(r#"r="A1""#, &format!(r#"r="{reference}""#))
        })
    }

    #[test]
    fn a_shared_string_index_with_spaces_around_it_names_its_string() {
        // calamine reads `<v>2 </v>` as string 0, LibreOffice as string 2.
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet();
        sheet.write(0, 0, "Konto").unwrap();
        sheet.write(0, 1, "Name").unwrap();
        sheet.write(1, 1, "Mustermann").unwrap();
        let bytes = with_sheet_edited(&mut book, |xml| xml.replace("<v>2</v>", "<v>2 </v>"));
        let workbook = read_workbook(&bytes, 100).unwrap();
        assert_eq!(
            workbook.sheets[0].rows[1][1],
            Cell::Text("Mustermann".into())
        );
        // Written back, every reader finds it.
        let mut written = Cursor::new(Vec::new());
        crate::xlsx::write_workbook(&workbook, &mut written).unwrap();
        let mut again: Xlsx<_> = Xlsx::new(Cursor::new(written.into_inner())).unwrap();
        let range = again.worksheet_range_at(0).unwrap().unwrap();
        assert_eq!(
            range.get_value((1, 1)),
            Some(&calamine::Data::String("Mustermann".into()))
        );
    }

    #[test]
    fn cells_numbered_without_a_column_stay_in_their_row() {
        // As ExcelDataReader's fillreport.xlsx numbers them: r="0", r="1"…
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet();
        sheet.write(0, 0, 0).unwrap();
        sheet.write(1, 0, 1).unwrap();
        sheet.write(1, 1, 2).unwrap();
        let bytes = with_sheet_edited(&mut book, |xml| {
            xml.replace(r#"r="A1""#, r#"r="0""#)
                .replace(r#"r="A2""#, r#"r="0""#)
                .replace(r#"r="B2""#, r#"r="1""#)
        });
        let workbook = read_workbook(&bytes, 100).unwrap();
        assert_eq!(workbook.sheets[0].rows[0], [Cell::Number(0.0)]);
        assert_eq!(
            workbook.sheets[0].rows[1],
            [Cell::Number(1.0), Cell::Number(2.0)]
        );
    }

    #[test]
    fn a_text_constant_held_in_a_value_is_written_back_so() {
        // `t="str"` without a formula: calamine keeps the trailing space,
        // LibreOffice trims it; written back as it was, both read the same.
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet();
        sheet.write(0, 0, "name").unwrap();
        sheet.write(1, 0, 1).unwrap();
        let bytes = with_sheet_edited(&mut book, |xml| {
            xml.replace(
                r#"<c r="A2"><v>1</v></c>"#,
                r#"<c r="A2" t="str"><v>City </v></c>"#,
            )
        });
        let workbook = read_workbook(&bytes, 100).unwrap();
        assert_eq!(workbook.sheets[0].rows[1][0], Cell::Text("City ".into()));
        let mut written = Cursor::new(Vec::new());
        crate::xlsx::write_workbook(&workbook, &mut written).unwrap();
        let mut archive = zip::ZipArchive::new(Cursor::new(written.into_inner())).unwrap();
        let mut xml = String::new();
        archive
            .by_name("xl/worksheets/sheet1.xml")
            .unwrap()
            .read_to_string(&mut xml)
            .unwrap();
        assert!(
            xml.contains(r#"<c r="A2" t="str"><v>City </v></c>"#),
            "{xml}"
        );
    }

    #[test]
    fn reads_a_cell_where_it_is() {
        let workbook = read_workbook(&workbook_with_a_cell_at("C3"), 100).unwrap();
        assert_eq!(
            workbook.sheets[0].rows[2],
            [Cell::Empty, Cell::Empty, Cell::Number(1.0)]
        );
    }

    #[test]
    fn a_cell_reference_without_a_row_takes_the_rows() {
        // calamine refuses `r="C"`; spreadsheet apps place the cell in its row.
        let workbook = read_workbook(&workbook_with_a_cell_at("C"), 100).unwrap();
        assert_eq!(
            workbook.sheets[0].rows[0],
            [Cell::Empty, Cell::Empty, Cell::Number(1.0)]
        );
    }

    #[test]
    fn a_shared_string_past_the_table_reads_as_an_empty_cell() {
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet();
        sheet.write(0, 0, "kept").unwrap();
        sheet.write(0, 1, "lost").unwrap();
        let bytes = with_sheet_edited(&mut book, |xml| xml.replace("<v>1</v>", "<v>7</v>"));
        let workbook = read_workbook(&bytes, 100).unwrap();
        assert_eq!(workbook.sheets[0].rows[0], [Cell::Text("kept".into())]);
    }

    #[test]
    fn shared_strings_past_the_budget_are_refused_before_parsing() {
        let strings = MIN_SHARED_STRINGS as u32 + 10;
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet();
        for row in 0..strings {
            sheet.write(row, 0, format!("{row}")).unwrap();
        }
        let bytes = book.save_to_buffer().unwrap();
        // A budget of four cells a string allows them all; one of four
        // cells for each string but one does not.
        let cells = 4 * strings as usize;
        assert!(read_workbook(&bytes, cells).is_ok());
        let error = read_workbook(&bytes, cells - 4).unwrap_err();
        let expected = format!("more than {} shared strings", strings - 1);
        assert!(error.to_string().contains(&expected), "{error}");
    }

    #[test]
    fn text_past_the_budget_is_refused_before_it_is_copied() {
        // One shared string of Excel's longest, in as many cells as take
        // a little more than the least budget of text.
        let long = "x".repeat(32_767);
        let cells = MIN_TEXT_BYTES / long.len() + 2;
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet();
        for row in 0..cells as u32 {
            sheet.write(row, 0, &long).unwrap();
        }
        let bytes = book.save_to_buffer().unwrap();
        assert!(bytes.len() < 1 << 20, "{}", bytes.len());
        let error = read_workbook(&bytes, 10 * cells).unwrap_err();
        assert!(error.to_string().contains("MiB of text"), "{error}");
        // Two fewer fit within it.
        let fewer = cells - 2;
        let mut book = rust_xlsxwriter::Workbook::new();
        let sheet = book.add_worksheet();
        for row in 0..fewer as u32 {
            sheet.write(row, 0, &long).unwrap();
        }
        let workbook = read_workbook(&book.save_to_buffer().unwrap(), 10 * cells).unwrap();
        assert_eq!(workbook.sheets[0].rows.len(), fewer);
    }

    #[test]
    fn a_cell_past_the_budget_fails_before_anything_grows() {
        // Four billion rows down: growing the grid first would ask for about
        // 100 GB (the fuzzer found this).
        let error = read_workbook(&workbook_with_a_cell_at("A4000000000"), 1000).unwrap_err();
        assert!(error.to_string().contains("too large"), "{error}");
    }
}
