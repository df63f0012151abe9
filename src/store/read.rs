//! Reading: xlsx bytes → [`Workbook`], with calamine.
//!
//! This is the one place that knows calamine's ranges are offset: cells get
//! their absolute sheet position here, so nobody else does that arithmetic.
//! It also lists the parts of the package that a rewrite would not carry over
//! (see [`Workbook::unkept`]), so that a write can refuse instead of losing them.

use std::io::{Cursor, Read, Seek};

use calamine::{DataRef, Reader, SheetType, SheetVisible, Xlsx};

use super::StoreError;
use crate::model::value::{DateParse, DateSyntax, Formula, parse_date};
use crate::model::{Cell, Sheet, Visibility, Workbook};

/// Days between the 1904 and the 1900 date systems' day zero.
const DAYS_1900_TO_1904: f64 = 1462.0;

/// The most bytes the parts of one package may unpack to. Counted while
/// decompressing (a zip's declared sizes can lie), so a zip bomb is stopped
/// after this much work instead of filling memory.
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;
/// The most parts one package may have.
const MAX_PARTS: usize = 10_000;

/// Parses a whole workbook. Any failure means "no readable workbook".
/// `max_cells` bounds the cell slots the workbook may take in memory: each
/// row holds its cells up to its last used column, so a row with one cell in
/// column XFD costs 16,384 slots (about 32 bytes each). The bound keeps a
/// hostile or absurd file from exhausting memory.
pub fn parse_workbook(bytes: &[u8], max_cells: usize) -> Result<Workbook, StoreError> {
    let unkept = unkept_parts(Cursor::new(bytes))?;
    let mut xlsx = Xlsx::new(Cursor::new(bytes)).map_err(unreadable)?;
    let date_offset = if xlsx.has_1904_epoch() {
        DAYS_1900_TO_1904
    } else {
        0.0
    };
    let mut workbook = Workbook {
        sheets: Vec::new(),
        unkept,
        ..Workbook::default()
    };
    if !xlsx.defined_names().is_empty() {
        workbook
            .unkept
            .push(format!("{} defined name(s)", xlsx.defined_names().len()));
    }
    let mut slots = 0;
    for meta in xlsx.sheets_metadata().to_vec() {
        if meta.typ != SheetType::WorkSheet {
            workbook
                .unkept
                .push(format!("the {:?} sheet {:?}", meta.typ, meta.name));
            continue;
        }
        let rows = read_cells(&mut xlsx, &meta.name, date_offset, &mut slots, max_cells)?;
        let mut sheet = Sheet::new(meta.name, rows);
        sheet.visibility = match meta.visible {
            SheetVisible::Visible => Visibility::Visible,
            SheetVisible::Hidden => Visibility::Hidden,
            SheetVisible::VeryHidden => Visibility::VeryHidden,
        };
        workbook.sheets.push(sheet);
    }
    Ok(workbook)
}

fn unreadable(error: impl std::fmt::Display) -> StoreError {
    StoreError::Unreadable(error.to_string())
}

/// The grid of one sheet, rows and columns absolute, formulas with their
/// cached results, read cell by cell (never as one dense range: a sheet
/// with cells at A1 and XFD1048576 would be 17 billion cells). `slots`
/// counts the cell slots of the whole workbook against `max_cells`.
fn read_cells<R: Read + Seek>(
    xlsx: &mut Xlsx<R>,
    sheet: &str,
    date_offset: f64,
    slots: &mut usize,
    max_cells: usize,
) -> Result<Vec<Vec<Cell>>, StoreError> {
    let mut reader = xlsx.worksheet_cells_reader(sheet).map_err(unreadable)?;
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    while let Some(record) = reader.next_cell_with_formula().map_err(unreadable)? {
        let value = cell_of(&record.value, date_offset);
        let cell = match record.formula {
            Some(expr) if !expr.is_empty() => Cell::Formula(Box::new(Formula {
                expr,
                cached: value,
            })),
            _ => value,
        };
        if cell.is_blank() {
            continue;
        }
        let (row, column) = (record.pos.0 as usize, record.pos.1 as usize);
        if rows.len() <= row {
            *slots += row + 1 - rows.len();
            rows.resize_with(row + 1, Vec::new);
        }
        let cells = &mut rows[row];
        if cells.len() <= column {
            // A row counts its length, at least 1 (as `Workbook::cell_slots`).
            *slots += column + 1 - cells.len().max(1);
            cells.resize_with(column + 1, Cell::default);
        }
        if *slots > max_cells {
            return Err(StoreError::Unreadable(format!(
                "the workbook is too large: it spans more than {max_cells} cells"
            )));
        }
        cells[column] = cell;
    }
    Ok(rows)
}

fn cell_of(data: &DataRef<'_>, date_offset: f64) -> Cell {
    match data {
        DataRef::Empty => Cell::Empty,
        DataRef::Int(i) => Cell::Number(*i as f64),
        DataRef::Float(f) => Cell::Number(*f),
        DataRef::String(s) => Cell::Text(s.clone()),
        DataRef::SharedString(s) => Cell::Text((*s).to_owned()),
        DataRef::Bool(b) => Cell::Bool(*b),
        DataRef::DateTime(dt) if dt.is_duration() => Cell::Duration(dt.as_f64()),
        DataRef::DateTime(dt) => Cell::DateTime(dt.as_f64() + date_offset),
        // `t="d"` cells hold ISO 8601 text; keep them as dates when they are.
        DataRef::DateTimeIso(iso) => {
            match parse_date(iso.get(..19).unwrap_or(iso), DateSyntax::Filter) {
                DateParse::Valid(serial, _) => Cell::DateTime(serial),
                _ => Cell::Text(iso.clone()),
            }
        }
        DataRef::DurationIso(iso) => Cell::Text(iso.clone()),
        DataRef::Error(error) => Cell::Error(error.to_string()),
    }
}

/// Package parts that a rewrite does not reproduce, by where they live.
const UNKEPT_PARTS: &[(&str, &str)] = &[
    ("xl/charts/chart", "chart(s)"),
    ("xl/drawings/drawing", "drawing(s) (shapes or images)"),
    ("xl/comments", "comment part(s)"),
    ("xl/threadedComments/", "threaded comment part(s)"),
    ("xl/vbaProject.bin", "VBA macro project(s)"),
    ("xl/pivotTables/", "pivot table(s)"),
    ("xl/externalLinks/", "external link(s)"),
    ("xl/slicers/", "slicer(s)"),
    ("xl/embeddings/", "embedded object(s)"),
    ("xl/tables/", "table(s)"),
    ("xl/ctrlProps/", "form control(s)"),
    ("customXml/item", "custom XML part(s)"),
];

/// Elements of a worksheet's XML that a rewrite does not reproduce.
const UNKEPT_ELEMENTS: &[(&str, &str)] = &[
    ("mergeCell ", "merged cell range(s)"),
    ("hyperlink ", "hyperlink(s)"),
    ("dataValidation ", "data validation rule(s)"),
    ("conditionalFormatting", "conditional format(s)"),
    ("sheetProtection", "sheet protection setting(s)"),
    ("autoFilter", "autofilter(s)"),
    ("sparklineGroup ", "sparkline group(s)"),
];

/// Checks the package's size by unpacking every part once, and describes
/// every part of it that a rewrite would not keep.
fn unkept_parts<R: Read + Seek>(reader: R) -> Result<Vec<String>, StoreError> {
    let mut archive = zip::ZipArchive::new(reader).map_err(unreadable)?;
    if archive.len() > MAX_PARTS {
        return Err(StoreError::Unreadable(format!(
            "the package has more than {MAX_PARTS} parts"
        )));
    }
    let mut part_counts = vec![0usize; UNKEPT_PARTS.len()];
    let mut element_counts = vec![0usize; UNKEPT_ELEMENTS.len()];
    let mut unpacked = 0u64;
    for i in 0..archive.len() {
        let entry = archive.by_index(i).map_err(unreadable)?;
        let name = entry.name().map_err(unreadable)?.into_owned();
        for (count, (prefix, _)) in part_counts.iter_mut().zip(UNKEPT_PARTS) {
            if name.starts_with(prefix) && !name.ends_with(".rels") {
                *count += 1;
            }
        }
        // Never read more than the budget left, whatever the headers say.
        let budget = MAX_UNPACKED_BYTES - unpacked;
        let mut part = CountingReader {
            inner: entry.take(budget + 1),
            count: 0,
        };
        if name.starts_with("xl/worksheets/") && name.ends_with(".xml") {
            count_elements(&mut part, &mut element_counts).map_err(unreadable)?;
        } else {
            std::io::copy(&mut part, &mut std::io::sink()).map_err(unreadable)?;
        }
        unpacked += part.count;
        if unpacked > MAX_UNPACKED_BYTES {
            return Err(StoreError::Unreadable(format!(
                "the package unpacks to more than {} MiB",
                MAX_UNPACKED_BYTES >> 20
            )));
        }
    }
    let parts = part_counts.iter().zip(UNKEPT_PARTS);
    let elements = element_counts.iter().zip(UNKEPT_ELEMENTS);
    Ok(parts
        .chain(elements)
        .filter(|(count, _)| **count > 0)
        .map(|(count, (_, what))| format!("{count} {what}"))
        .collect())
}

/// Counts the bytes read through it.
struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Counts `<name` and `<prefix:name` openings of each element in an XML
/// stream, reading it in chunks so a large sheet never sits in memory whole.
fn count_elements(xml: &mut impl Read, counts: &mut [usize]) -> std::io::Result<()> {
    const CHUNK: usize = 64 * 1024;
    let longest = UNKEPT_ELEMENTS
        .iter()
        .map(|(tag, _)| tag.len() + 1)
        .max()
        .unwrap_or(0);
    let mut buffer = Vec::with_capacity(CHUNK + longest);
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = xml.read(&mut chunk)?;
        buffer.extend_from_slice(&chunk[..n]);
        // Only count matches that start before the tail kept for the next round.
        let keep = if n == 0 { 0 } else { longest.min(buffer.len()) };
        let limit = buffer.len() - keep;
        for (count, (tag, _)) in counts.iter_mut().zip(UNKEPT_ELEMENTS) {
            *count += find_all(&buffer, tag.as_bytes())
                .filter(|&at| at <= limit && at > 0 && matches!(buffer[at - 1], b'<' | b':'))
                .filter(|&at| at - 1 < limit)
                .count();
        }
        if n == 0 {
            return Ok(());
        }
        buffer.drain(..limit);
    }
}

fn find_all<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    haystack
        .windows(needle.len())
        .enumerate()
        .filter(move |(_, window)| *window == needle)
        .map(|(at, _)| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_elements_across_chunk_borders() {
        let mut xml = String::from("<worksheet>");
        xml.push_str(&" ".repeat(64 * 1024 - 15));
        xml.push_str(
            "<mergeCells><mergeCell ref=\"A1:B1\"/><x:mergeCell ref=\"A2:B2\"/></mergeCells>",
        );
        xml.push_str("<hyperlinks><hyperlink ref=\"A1\"/></hyperlinks>");
        let mut counts = vec![0; UNKEPT_ELEMENTS.len()];
        count_elements(&mut xml.as_bytes(), &mut counts).unwrap();
        assert_eq!(counts[0], 2, "merged ranges");
        assert_eq!(counts[1], 1, "hyperlinks");
    }
}
