//! Reading: xlsx bytes → [`Workbook`], with calamine.
//!
//! This is the one place that knows calamine's ranges are offset: cells get
//! their absolute sheet position here, so nobody else does that arithmetic.
//! It also lists the parts of the package that a rewrite would not carry over
//! (see [`Workbook::unkept`]), so that a write can refuse instead of losing them.

use std::io::{Cursor, Read, Seek};

use calamine::{Data, Range, Reader, SheetType, SheetVisible, Xlsx};

use super::StoreError;
use crate::model::value::{DateParse, DateSyntax, Formula, parse_date};
use crate::model::{Cell, Sheet, Visibility, Workbook};

/// Days between the 1904 and the 1900 date systems' day zero.
const DAYS_1900_TO_1904: f64 = 1462.0;

/// Parses a whole workbook. Any failure means "no readable workbook".
pub fn parse_workbook(bytes: &[u8]) -> Result<Workbook, StoreError> {
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
    };
    if !xlsx.defined_names().is_empty() {
        workbook
            .unkept
            .push(format!("{} defined name(s)", xlsx.defined_names().len()));
    }
    for meta in xlsx.sheets_metadata().to_vec() {
        if meta.typ != SheetType::WorkSheet {
            workbook
                .unkept
                .push(format!("the {:?} sheet {:?}", meta.typ, meta.name));
            continue;
        }
        let values = xlsx.worksheet_range(&meta.name).map_err(unreadable)?;
        let formulas = xlsx.worksheet_formula(&meta.name).map_err(unreadable)?;
        let mut sheet = Sheet::new(meta.name, cells_of(&values, &formulas, date_offset));
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

/// The grid of a sheet, rows and columns absolute, formulas with their results.
fn cells_of(values: &Range<Data>, formulas: &Range<String>, date_offset: f64) -> Vec<Vec<Cell>> {
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    let mut put = |row: u32, column: u32, cell: Cell| {
        let (row, column) = (row as usize, column as usize);
        if rows.len() <= row {
            rows.resize_with(row + 1, Vec::new);
        }
        let cells = &mut rows[row];
        if cells.len() <= column {
            cells.resize_with(column + 1, Cell::default);
        }
        cells[column] = cell;
    };
    if let Some((row0, col0)) = values.start() {
        for (r, row) in values.rows().enumerate() {
            for (c, data) in row.iter().enumerate() {
                let cell = cell_of(data, date_offset);
                if !cell.is_blank() {
                    put(row0 + r as u32, col0 + c as u32, cell);
                }
            }
        }
    }
    if let Some((row0, col0)) = formulas.start() {
        for (r, row) in formulas.rows().enumerate() {
            for (c, expr) in row.iter().enumerate() {
                if expr.is_empty() {
                    continue;
                }
                let (row, column) = (row0 + r as u32, col0 + c as u32);
                let cached = values
                    .get_value((row, column))
                    .map_or(Cell::Empty, |data| cell_of(data, date_offset));
                let formula = Formula {
                    expr: expr.clone(),
                    cached,
                };
                put(row, column, Cell::Formula(Box::new(formula)));
            }
        }
    }
    rows
}

fn cell_of(data: &Data, date_offset: f64) -> Cell {
    match data {
        Data::Empty => Cell::Empty,
        Data::Int(i) => Cell::Number(*i as f64),
        Data::Float(f) => Cell::Number(*f),
        Data::String(s) if s.is_empty() => Cell::Empty,
        Data::String(s) => Cell::Text(s.clone()),
        Data::Bool(b) => Cell::Bool(*b),
        Data::DateTime(dt) if dt.is_duration() => Cell::Duration(dt.as_f64()),
        Data::DateTime(dt) => Cell::DateTime(dt.as_f64() + date_offset),
        // `t="d"` cells hold ISO 8601 text; keep them as dates when they are.
        Data::DateTimeIso(iso) => {
            match parse_date(iso.get(..19).unwrap_or(iso), DateSyntax::Filter) {
                DateParse::Valid(serial, _) => Cell::DateTime(serial),
                _ => Cell::Text(iso.clone()),
            }
        }
        Data::DurationIso(iso) => Cell::Text(iso.clone()),
        Data::Error(error) => Cell::Error(error.to_string()),
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

/// Describes every part of the package that a rewrite would not keep.
fn unkept_parts<R: Read + Seek>(reader: R) -> Result<Vec<String>, StoreError> {
    let mut archive = zip::ZipArchive::new(reader).map_err(unreadable)?;
    let mut part_counts = vec![0usize; UNKEPT_PARTS.len()];
    let mut element_counts = vec![0usize; UNKEPT_ELEMENTS.len()];
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(unreadable)?;
        let name = entry.name().map_err(unreadable)?.into_owned();
        for (count, (prefix, _)) in part_counts.iter_mut().zip(UNKEPT_PARTS) {
            if name.starts_with(prefix) && !name.ends_with(".rels") {
                *count += 1;
            }
        }
        if name.starts_with("xl/worksheets/") && name.ends_with(".xml") {
            count_elements(&mut entry, &mut element_counts).map_err(unreadable)?;
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
