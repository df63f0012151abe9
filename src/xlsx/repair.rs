//! Worksheets that calamine refuses but spreadsheet apps open, put right
//! so that calamine can read them: a cell reference without a row or a
//! column (`<c r="A">`, `<c r="0">`, as some generators write) gets the
//! place the cells before it give, as a cell without a reference does, and
//! a row numbered 0 the number after the row before; a
//! shared-string cell whose index lies past the table is an empty cell;
//! a `<dimension>` that names no cells (`ref="1:4"`) goes (it is only a
//! hint). Only a package calamine refused for one of these reasons is
//! repaired ([`repairable`]), so a well-formed file costs nothing more.
//!
//! One more is read otherwise than apps read it, without an error: a
//! shared-string index with spaces around it (`<v>2 </v>`), which calamine
//! takes for index 0 and LibreOffice for the string it names. The package
//! scan tells it (`Package::spaced_string_index`), and the repair writes
//! the index without its spaces.
//!
//! The repaired package is read for its values only; the package scan
//! (`super::package`) reads the file as it is, and tolerates the same.

use std::io::{Cursor, Read, Write};

use calamine::XlsxError;
use quick_xml::events::{BytesStart, BytesText, Event};
use quick_xml::{Reader, Writer};
use zip::write::SimpleFileOptions;
use zip::{ZipArchive, ZipWriter};

use super::opc::{MainParts, part_name};
use super::xml::{all_attributes, attr};
use super::{ReadError, unreadable};

/// Whether calamine refused a worksheet for a reason [`repaired`] puts right.
pub fn repairable(error: &XlsxError) -> bool {
    match error {
        XlsxError::RangeWithoutRowComponent | XlsxError::RangeWithoutColumnComponent => true,
        XlsxError::Unexpected(text) => text.contains("string index not found"),
        _ => false,
    }
}

/// The package with its worksheets repaired; every other part copied as
/// it is. `bytes` has passed the size checks of the package reader.
pub fn repaired(bytes: &[u8]) -> Result<Vec<u8>, ReadError> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(unreadable)?;
    let names = (0..archive.len())
        .map(|i| {
            let entry = archive.by_index_raw(i).map_err(unreadable)?;
            Ok(part_name(&entry.name().map_err(unreadable)?))
        })
        .collect::<Result<Vec<String>, ReadError>>()?;
    let read = |archive: &mut ZipArchive<_>, wanted: &str| {
        let index = names.iter().position(|name| name == wanted)?;
        let mut bytes = Vec::new();
        archive.by_index(index).ok()?.read_to_end(&mut bytes).ok()?;
        Some(bytes)
    };
    let main = MainParts::find(&names, |wanted| read(&mut archive, wanted));
    let strings = main
        .shared_strings
        .as_deref()
        .and_then(|name| read(&mut archive, name))
        .map_or(Ok(0), |xml| count_strings(&xml))?;
    let mut out = ZipWriter::new(Cursor::new(Vec::new()));
    for (index, name) in names.iter().enumerate() {
        if !main.worksheets.contains(name) {
            let entry = archive.by_index_raw(index).map_err(unreadable)?;
            out.raw_copy_file(entry).map_err(unreadable)?;
            continue;
        }
        let mut entry = archive.by_index(index).map_err(unreadable)?;
        let raw_name = entry.name().map_err(unreadable)?.into_owned();
        let mut xml = Vec::new();
        entry.read_to_end(&mut xml).map_err(unreadable)?;
        out.start_file(raw_name, SimpleFileOptions::default())
            .map_err(unreadable)?;
        out.write_all(&repaired_sheet(&xml, strings)?)
            .map_err(unreadable)?;
    }
    Ok(out.finish().map_err(unreadable)?.into_inner())
}

/// The number of shared strings (`<si>` elements) of a shared-strings part.
fn count_strings(xml: &[u8]) -> Result<usize, ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut count = 0;
    loop {
        match reader.read_event().map_err(unreadable)? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "si" => count += 1,
            Event::Eof => return Ok(count),
            _ => {}
        }
    }
}

/// One worksheet's XML, repaired (see the module's comment); `strings` is
/// the size of the shared-strings table.
fn repaired_sheet(xml: &[u8], strings: usize) -> Result<Vec<u8>, ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut out = Writer::new(Vec::with_capacity(xml.len()));
    // 1-based row of the cells read, and 0-based column of the next cell.
    let (mut row, mut column) = (0u32, 0u32);
    let mut shared_cell = false;
    // Inside a `<v>` of a shared-string cell: its events wait until the
    // index is known to be in the table.
    let mut held: Option<Vec<Event<'static>>> = None;
    // Inside a `<dimension>` being dropped.
    let mut dropping = false;
    loop {
        let event = reader.read_event().map_err(unreadable)?.into_owned();
        if let Some(events) = &mut held {
            let done = matches!(&event, Event::End(e) if e.local_name().as_ref() == "v");
            events.push(event);
            if done {
                let events = held.take().unwrap_or_default();
                if in_table(&events, strings) {
                    for event in trimmed(events) {
                        out.write_event(event).map_err(unreadable)?;
                    }
                }
            }
            continue;
        }
        match &event {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                "row" => {
                    let given = attr(e, "r");
                    row = given
                        .as_deref()
                        .and_then(|r| r.parse().ok())
                        .filter(|r| *r > 0)
                        .unwrap_or(row + 1);
                    column = 0;
                    if given.is_some_and(|r| r != row.to_string()) {
                        let fixed = with_attribute(e, "r", &row.to_string());
                        let fixed = match &event {
                            Event::Empty(_) => Event::Empty(fixed),
                            _ => Event::Start(fixed),
                        };
                        out.write_event(fixed).map_err(unreadable)?;
                        continue;
                    }
                }
                "c" => {
                    shared_cell = attr(e, "t").as_deref() == Some("s");
                    let (fixed, at) = placed(e, row, column);
                    column = at + 1;
                    let fixed = match &event {
                        Event::Empty(_) => Event::Empty(fixed),
                        _ => Event::Start(fixed),
                    };
                    out.write_event(fixed).map_err(unreadable)?;
                    continue;
                }
                "v" if shared_cell && matches!(event, Event::Start(_)) => {
                    held = Some(vec![event]);
                    continue;
                }
                "dimension" if attr(e, "ref").is_some_and(|r| !names_cells(&r)) => {
                    dropping = matches!(event, Event::Start(_));
                    continue;
                }
                _ => {}
            },
            Event::End(e) if dropping => {
                dropping = e.local_name().as_ref() != "dimension";
                continue;
            }
            _ if dropping => continue,
            _ => {}
        }
        out.write_event(event).map_err(unreadable)?;
    }
    Ok(out.into_inner())
}

/// A cell's start tag with a whole reference, and its 0-based column: a
/// reference without a row takes the current row, one without a column
/// the column after the cell before, in the current row (its digits are
/// no row: the cell is inside its `<row>`, as the package scan and
/// ExcelDataReader, whose `fillreport.xlsx` numbers its cells `r="0"`,
/// `r="1"`…, read it); a whole one is kept.
fn placed(cell: &BytesStart<'_>, row: u32, next_column: u32) -> (BytesStart<'static>, u32) {
    let reference = attr(cell, "r");
    let (letters, digits) = reference.as_deref().map_or(("", ""), |r| {
        let r = r.trim_start_matches('$');
        let split = r
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(r.len());
        (&r[..split], r[split..].trim_start_matches('$'))
    });
    let column = column_number(letters).unwrap_or(next_column);
    let whole = !letters.is_empty() && digits.parse::<u32>().is_ok_and(|r| r > 0);
    if reference.is_none() || whole {
        return (cell.to_owned(), column);
    }
    let row = match letters.is_empty() {
        true => row.max(1),
        false => digits
            .parse::<u32>()
            .ok()
            .filter(|r| *r > 0)
            .unwrap_or(row.max(1)),
    };
    let reference = format!("{}{row}", column_letters(column));
    (with_attribute(cell, "r", &reference), column)
}

/// A start tag with the attribute `name` set to `value`.
fn with_attribute(element: &BytesStart<'_>, name: &str, value: &str) -> BytesStart<'static> {
    let mut fixed = BytesStart::new(element.name().as_ref().to_owned());
    for (key, old) in all_attributes(element) {
        let new = if key == name { value } else { old.as_str() };
        fixed.push_attribute((key.as_str(), new));
    }
    fixed
}

/// Whether the `<v>` events held back give a string index in the table.
fn in_table(events: &[Event<'_>], strings: usize) -> bool {
    index_text(events)
        .trim()
        .parse::<usize>()
        .map_or(true, |index| index < strings)
}

/// The text of the `<v>` events held back.
fn index_text(events: &[Event<'_>]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Text(text) => Some(text.xml10_content().into_owned()),
            _ => None,
        })
        .collect()
}

/// The `<v>` events held back, an index with spaces around it without
/// them; anything else as it is.
fn trimmed(events: Vec<Event<'static>>) -> Vec<Event<'static>> {
    let text = index_text(&events);
    let index = text.trim();
    let (Some(start), Some(end)) = (events.first(), events.last()) else {
        return events;
    };
    if index.len() == text.len() || index.parse::<usize>().is_err() {
        return events;
    }
    vec![
        start.clone(),
        Event::Text(BytesText::new(index).into_owned()),
        end.clone(),
    ]
}

/// Whether a `ref` names cells (`A1`, `A1:C3`), not whole rows or columns.
fn names_cells(reference: &str) -> bool {
    reference.split(':').all(|cell| {
        let letters = cell.trim_start_matches('$');
        let split = letters
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(0);
        split > 0
            && letters[split..]
                .trim_start_matches('$')
                .parse::<u32>()
                .is_ok()
    })
}

/// `A` → 0, `AB` → 27; `None` for no letters or past the grid.
fn column_number(letters: &str) -> Option<u32> {
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    let number = letters.bytes().fold(0u32, |n, b| {
        n * 26 + u32::from(b.to_ascii_uppercase() - b'A' + 1)
    });
    Some(number - 1)
}

/// 0 → `A`, 27 → `AB`.
fn column_letters(column: u32) -> String {
    let mut n = column + 1;
    let mut letters = Vec::new();
    while n > 0 {
        let rest = (n - 1) % 26;
        letters.push(b'A' + rest as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    String::from_utf8_lossy(&letters).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repair(xml: &str, strings: usize) -> String {
        String::from_utf8(repaired_sheet(xml.as_bytes(), strings).unwrap()).unwrap()
    }

    #[test]
    fn a_reference_without_a_row_or_column_takes_its_place_from_context() {
        let zero = r#"<sheetData><row r="0"><c r="A0"><v>1</v></c></row><row r="0"><c r="A0"><v>2</v></c></row></sheetData>"#;
        assert_eq!(
            repair(zero, 0),
            r#"<sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row></sheetData>"#
        );
        let xml = r#"<worksheet><dimension ref="1:4"/><sheetData><row r="3"><c r="A"><v>1</v></c><c r="7"><v>2</v></c><c><v>3</v></c><c r="E3"><v>4</v></c><c r="0"><v>5</v></c></row></sheetData></worksheet>"#;
        assert_eq!(
            repair(xml, 0),
            r#"<worksheet><sheetData><row r="3"><c r="A3"><v>1</v></c><c r="B3"><v>2</v></c><c><v>3</v></c><c r="E3"><v>4</v></c><c r="F3"><v>5</v></c></row></sheetData></worksheet>"#
        );
    }

    #[test]
    fn a_shared_string_past_the_table_is_an_empty_cell() {
        let xml = r#"<x:sheetData><x:row r="1"><x:c r="A1" t="s"><x:v>1</x:v></x:c><x:c r="B1" t="s"><x:v>2</x:v></x:c><x:c r="C1"><x:v>9</x:v></x:c></x:row></x:sheetData>"#;
        assert_eq!(
            repair(xml, 2),
            r#"<x:sheetData><x:row r="1"><x:c r="A1" t="s"><x:v>1</x:v></x:c><x:c r="B1" t="s"></x:c><x:c r="C1"><x:v>9</x:v></x:c></x:row></x:sheetData>"#
        );
    }

    #[test]
    fn a_shared_string_index_loses_the_spaces_around_it() {
        let xml = r#"<sheetData><row r="1"><c r="A1" t="s"><v>1 </v></c><c r="B1" t="s"><v> 0</v></c><c r="C1" t="s"><v> x </v></c><c r="D1"><v> 2 </v></c></row></sheetData>"#;
        assert_eq!(
            repair(xml, 2),
            r#"<sheetData><row r="1"><c r="A1" t="s"><v>1</v></c><c r="B1" t="s"><v>0</v></c><c r="C1" t="s"><v> x </v></c><c r="D1"><v> 2 </v></c></row></sheetData>"#
        );
    }

    #[test]
    fn column_letters_and_numbers() {
        for (letters, number) in [("A", 0), ("Z", 25), ("AA", 26), ("XFD", 16_383)] {
            assert_eq!(column_number(letters), Some(number));
            assert_eq!(column_letters(number), letters);
        }
    }
}
