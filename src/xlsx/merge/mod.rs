//! Writing what a rewrite carries: the package rust_xlsxwriter produced,
//! with every carried part added whole, each carried element put back into
//! its workbook or sheet part at the place the schema gives it, and the
//! relationships, content types, differential formats and theme they need.
//!
//! Relationship ids of carried parts are renumbered after the writer's own,
//! and the carried elements' references follow.

mod cells;
mod sheet;
mod source;
mod splice;
mod styles;
mod workbook;

pub(super) use workbook::places_child as places_workbook_child;

use std::collections::{HashMap, HashSet};
use std::io::{Cursor, Seek, Write};

use zip::{ZipArchive, ZipWriter};

pub(super) use self::cells::Pieces;
use self::sheet::{sheet_part, with_range};
use self::source::{Source, put};
pub(super) use self::source::{read as read_part, zip_error};
use self::styles::styles_part;
use self::workbook::splice_workbook;
use super::WriteError;
use super::fix::Fixes;
use super::opc::{add_relationships, with_carried_types};
use crate::model::Workbook;
use crate::model::layout::Range;

/// Writes the writer's package `written` to `out` with what `workbook`
/// carries put back, and each sheet's `fixes` applied.
///
/// `plain` remembers, per sheet, whether what the sheet carries turned out
/// to be what the writer writes anyway (a file that sheetd or rust_xlsxwriter
/// wrote): such a sheet is then copied as compressed, without inflating it
/// again at the next save of the same rewrite.
pub fn merge<W: Write + Seek>(
    written: &[u8],
    workbook: &Workbook,
    fixes: &[Fixes],
    plain: &mut Vec<Option<bool>>,
    out: W,
) -> Result<(), WriteError> {
    plain.resize(workbook.sheets.len(), None);
    let archive = ZipArchive::new(Cursor::new(written)).map_err(zip_error)?;
    let mut zip = ZipWriter::new(out);
    let names = archive
        .file_names()
        .map(|name| name.map(|n| n.into_owned()))
        .collect::<Result<Vec<String>, _>>()
        .map_err(zip_error)?;
    let carried = &workbook.carried;
    // A carried part under a name the writer produced has the same role
    // (the strict form's document properties, dynamic-array metadata): the
    // writer's stands, and relationships to the carried one are dropped.
    let produced: HashSet<&str> = names.iter().map(String::as_str).collect();
    let mut source = Source {
        archive,
        produced: &produced,
    };
    for name in &names {
        let changed = match name.as_str() {
            "[Content_Types].xml" => Some(with_carried_types(&source.read(name)?, carried)),
            "_rels/.rels" => {
                let xml = source.read(name)?;
                Some(add_relationships(&xml, &carried.package, "", &produced).0)
            }
            // Written with the workbook part.
            "xl/_rels/workbook.xml.rels" => continue,
            "xl/workbook.xml" => {
                let rels_xml = source.read("xl/_rels/workbook.xml.rels")?;
                let (rels, renamed) = add_relationships(
                    &rels_xml,
                    &carried.workbook.relationships,
                    "xl/workbook.xml",
                    &produced,
                );
                let xml = splice_workbook(&source.read(name)?, carried, &workbook.names, &renamed)?;
                put(&mut zip, "xl/_rels/workbook.xml.rels", &rels)?;
                Some(xml)
            }
            "xl/styles.xml" => Some(styles_part(
                source.read(name)?,
                carried.styles.as_deref(),
                workbook.formats.len(),
            )?),
            "xl/theme/theme1.xml" => carried.theme.as_deref().map(<[u8]>::to_vec),
            _ => match sheet_index(name).and_then(|i| Some((i, workbook.sheets.get(i)?))) {
                Some((index, sheet)) => {
                    let fixes = fixes.get(index).filter(|f| !f.is_empty());
                    sheet_part(&mut source, &mut zip, name, sheet, fixes, &mut plain[index])?;
                    continue;
                }
                None if is_sheet_rels_with_carried(name, workbook) => continue,
                None => None,
            },
        };
        match changed {
            Some(bytes) => put(&mut zip, name, &bytes)?,
            None => source.copy(name, &mut zip)?,
        }
    }
    let tables: HashMap<&str, (Range, bool)> = workbook
        .sheets
        .iter()
        .flat_map(|sheet| &sheet.layout.tables)
        .filter_map(|table| Some((table.part.as_deref()?, (table.range, table.totals_row))))
        .collect();
    for part in &carried.parts {
        if produced.contains(part.name.as_str()) {
            continue;
        }
        match tables.get(part.name.as_str()) {
            Some(&(range, totals)) => put(
                &mut zip,
                &part.name,
                &with_range(&part.bytes, range, Some(totals))?,
            )?,
            None => put(&mut zip, &part.name, &part.bytes)?,
        }
    }
    zip.finish().map_err(zip_error)?;
    Ok(())
}

/// Whether `name` is the relationships part of a sheet that carries
/// something: that part is written with the sheet.
fn is_sheet_rels_with_carried(name: &str, workbook: &Workbook) -> bool {
    let Some(sheet) = name
        .strip_prefix("xl/worksheets/_rels/")
        .and_then(|rest| rest.strip_suffix(".rels"))
        .and_then(|part| sheet_index(&format!("xl/worksheets/{part}")))
    else {
        return false;
    };
    workbook
        .sheets
        .get(sheet)
        .is_some_and(|s| !s.carried.is_empty() || !s.layout.links.is_empty())
}

/// The model index of a worksheet part the writer produced
/// (`xl/worksheets/sheet3.xml` is the third sheet).
pub(super) fn sheet_index(name: &str) -> Option<usize> {
    let number: usize = name
        .strip_prefix("xl/worksheets/sheet")?
        .strip_suffix(".xml")?
        .parse()
        .ok()?;
    number.checked_sub(1)
}
