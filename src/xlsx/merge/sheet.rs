//! A worksheet part: the writer's, with the sheet's carried elements put
//! back in schema order, its merged ranges and hyperlinks, its original
//! columns and its fixes; and the ranges of its carried tables and
//! autofilter.

use std::collections::HashMap;
use std::io::{Seek, Write};

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, Writer};
use rust_xlsxwriter::utility::cell_range;
use zip::ZipWriter;

use super::cells::Pieces;
use super::source::{Source, put, start};
use super::splice::{cut, interleave, reassemble, rebind, relationship_prefixes, with_attributes};
use crate::model::Sheet;
use crate::model::carried::{CarriedXml, Relationship};
use crate::model::layout::{Link, LinkTarget, Range};
use crate::xlsx::WriteError;
use crate::xlsx::fix::{self, Fixer, Fixes};
use crate::xlsx::opc::{EMPTY_RELATIONSHIPS, add_relationships, rels_name};
use crate::xlsx::package::range_ref;
use crate::xlsx::sheet_children;
use crate::xlsx::xml::{attr, escape, find, first_attribute};

/// Writes to `zip` the writer's worksheet part `name` of `sheet` with what
/// the sheet carries put in, its merged ranges, its hyperlinks and its
/// `fixes`, and the relationships part that needs. `plain` remembers
/// whether what the sheet carries is what the writer writes anyway (see
/// [`super::merge`]). The cells, nearly all of the part, go from the
/// writer's part to `zip` a piece at a time (see [`Pieces`]).
pub(super) fn sheet_part<W: Write + Seek>(
    source: &mut Source<'_>,
    zip: &mut ZipWriter<W>,
    name: &str,
    sheet: &Sheet,
    fixes: Option<&Fixes>,
    plain: &mut Option<bool>,
) -> Result<(), WriteError> {
    let links = &sheet.layout.links;
    if sheet.carried.is_empty() && links.is_empty() && sheet.layout.merges.is_empty() {
        return match fixes {
            Some(fixes) => fixed_part(source, zip, name, fixes),
            None => source.copy(name, zip),
        };
    }
    let rels_part = rels_name(name);
    let relationships = [
        &sheet.carried.xml.relationships[..],
        &link_relationships(links),
    ]
    .concat();
    let mut renamed = HashMap::new();
    if !relationships.is_empty() {
        let rels_xml = match source.produced.contains(rels_part.as_str()) {
            true => source.read(&rels_part)?,
            false => EMPTY_RELATIONSHIPS.as_bytes().to_vec(),
        };
        let (rels, ids) = add_relationships(&rels_xml, &relationships, name, source.produced);
        renamed = ids;
        put(zip, &rels_part, &rels)?;
    } else if source.produced.contains(rels_part.as_str()) {
        source.copy(&rels_part, zip)?;
    }
    if *plain == Some(true) && fixes.is_none() {
        return source.copy(name, zip);
    }
    let splice = |skeleton: &[u8]| -> Result<Vec<u8>, WriteError> {
        let spliced = splice_sheet(
            skeleton,
            &sheet.carried.xml,
            &renamed,
            [
                merged_cells(&sheet.layout.merges),
                hyperlinks(links, &renamed),
            ],
        )?;
        Ok(with_original_columns(
            spliced,
            sheet.carried.columns.as_deref(),
        ))
    };
    let mut pieces = Pieces::new(source.open(name)?);
    let Some(head) = pieces.head()? else {
        // No cells: the part is small.
        let written = pieces.rest()?;
        let spliced = splice(&written)?;
        let same = spliced == written;
        *plain = Some(same && relationships.is_empty());
        return match (same, fixes) {
            (true, None) => source.copy(name, zip),
            (_, Some(fixes)) => {
                start(zip, name)?;
                Ok(fix::apply_to(&spliced, fixes, zip)?)
            }
            (false, None) => put(zip, name, &spliced),
        };
    };
    // What precedes the cells does not depend on what follows them.
    let head_alone = splice(&[&head[..], SKELETON_DATA, ROOT_END].concat())?;
    let spliced_head = before_cells(&head_alone);
    let may_be_same = fixes.is_none() && *plain != Some(false) && spliced_head == head;
    if may_be_same {
        // Most of a sheet is its cells: when what it carries is what the
        // writer wrote anyway, the part is copied as compressed. Whether
        // it is takes what follows the cells.
        while pieces.next_piece()?.is_some() {}
        let tail = pieces.tail();
        let skeleton = [&head[..], SKELETON_DATA, &tail].concat();
        if splice(&skeleton)? == skeleton {
            *plain = Some(relationships.is_empty());
            return source.copy(name, zip);
        }
        pieces = Pieces::new(source.open(name)?);
        pieces.head()?;
    }
    start(zip, name)?;
    zip.write_all(spliced_head)?;
    let mut fixer = fixes.map(Fixer::new);
    while let Some((piece, last)) = pieces.next_piece()? {
        match &mut fixer {
            Some(fixer) => fixer.feed(&piece, last, zip)?,
            None => zip.write_all(&piece)?,
        }
    }
    let tail = pieces.tail();
    let skeleton = [&head[..], SKELETON_DATA, &tail].concat();
    let spliced = splice(&skeleton)?;
    debug_assert_eq!(before_cells(&spliced), spliced_head);
    let after_cells =
        find(&spliced, SKELETON_DATA).map_or(&[][..], |at| &spliced[at + SKELETON_DATA.len()..]);
    zip.write_all(after_cells)?;
    *plain = Some(spliced == skeleton && relationships.is_empty());
    Ok(())
}

/// A sheet part that carries nothing, with its `fixes`.
fn fixed_part<W: Write + Seek>(
    source: &mut Source<'_>,
    zip: &mut ZipWriter<W>,
    name: &str,
    fixes: &Fixes,
) -> Result<(), WriteError> {
    let mut pieces = Pieces::new(source.open(name)?);
    let Some(head) = pieces.head()? else {
        let written = pieces.rest()?;
        start(zip, name)?;
        return Ok(fix::apply_to(&written, fixes, zip)?);
    };
    start(zip, name)?;
    zip.write_all(&head)?;
    let mut fixer = Fixer::new(fixes);
    while let Some((piece, last)) = pieces.next_piece()? {
        fixer.feed(&piece, last, zip)?;
    }
    zip.write_all(&pieces.tail())?;
    Ok(())
}

/// What stands for the cells while the rest of a sheet's part is spliced.
const SKELETON_DATA: &[u8] = b"<sheetData/>";

/// The end of the writer's worksheet part.
const ROOT_END: &[u8] = b"</worksheet>";

/// What precedes the cells' stand-in in a spliced skeleton.
fn before_cells(spliced: &[u8]) -> &[u8] {
    find(spliced, SKELETON_DATA).map_or(spliced, |at| &spliced[..at])
}

/// The id a sheet's link at `index` has among the relationships the merge
/// adds, before they are numbered.
fn link_id(index: usize) -> String {
    format!("link{index}")
}

/// A relationship for each link that leads outside the workbook.
fn link_relationships(links: &[Link]) -> Vec<Relationship> {
    links
        .iter()
        .enumerate()
        .filter_map(|(index, link)| match &link.target {
            LinkTarget::Url(url) => Some(Relationship {
                id: link_id(index),
                kind: HYPERLINK.to_owned(),
                target: url.clone(),
                external: true,
            }),
            LinkTarget::Location(_) => None,
        })
        .collect()
}

/// The `<hyperlinks>` element of a sheet's links, each on the range the
/// model gives it, with the file's other attributes; `renamed` holds the
/// relationship ids of the links that lead outside.
/// The sheet's `<mergeCells>`, written here rather than by the writer:
/// rust_xlsxwriter paints the first cell's format over every cell of a
/// merged range (and writes each of them, a million for a merged column),
/// where each cell keeps its own in the file.
fn merged_cells(merges: &[Range]) -> Option<Vec<u8>> {
    if merges.is_empty() {
        return None;
    }
    let mut out = format!("<mergeCells count=\"{}\">", merges.len());
    for r in merges {
        let range = cell_range(r.first_row, r.first_column, r.last_row, r.last_column);
        out.push_str(&format!("<mergeCell ref=\"{range}\"/>"));
    }
    out.push_str("</mergeCells>");
    Some(out.into_bytes())
}

fn hyperlinks(links: &[Link], renamed: &HashMap<String, String>) -> Option<Vec<u8>> {
    if links.is_empty() {
        return None;
    }
    let mut out = String::from("<hyperlinks>");
    for (index, link) in links.iter().enumerate() {
        let r = link.range;
        let range = cell_range(r.first_row, r.first_column, r.last_row, r.last_column);
        out.push_str(&format!("<hyperlink ref=\"{range}\""));
        let mut attribute = |name: &str, value: &str| {
            out.push_str(&format!(" {name}=\"{}\"", escape(value)));
        };
        match &link.target {
            LinkTarget::Url(_) => {
                if let Some(id) = renamed.get(&link_id(index)) {
                    attribute("r:id", id);
                }
            }
            LinkTarget::Location(place) if !place.is_empty() => attribute("location", place),
            LinkTarget::Location(_) => {}
        }
        if let Some(tip) = &link.tooltip {
            attribute("tooltip", tip);
        }
        for (name, value) in &link.attributes {
            let placed = name == "location" && matches!(link.target, LinkTarget::Location(_));
            if !placed {
                attribute(name, value);
            }
        }
        out.push_str("/>");
    }
    out.push_str("</hyperlinks>");
    Some(out.into_bytes())
}

/// The relationship type of a hyperlink that leads outside the workbook.
const HYPERLINK: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink";

/// The sheet XML with its columns as the file had them: each original
/// `<col>` with the format id the writer gave that column (the writer
/// rounds widths to whole pixels, 15.78 becoming 15.71, and drops what the
/// model does not keep, such as best fit and collapsed groups).
fn with_original_columns(xml: Vec<u8>, original: Option<&str>) -> Vec<u8> {
    let Some(original) = original else {
        return xml;
    };
    // The columns come before the cells: search only there.
    let Some(cells) = find(&xml, b"<sheetData") else {
        return xml;
    };
    let (start, end, styles) = match (
        find(&xml[..cells], b"<cols>"),
        find(&xml[..cells], b"</cols>"),
    ) {
        (Some(start), Some(end)) => {
            let end = end + b"</cols>".len();
            (start, end, column_styles(&xml[start..end]))
        }
        _ => (cells, cells, Vec::new()),
    };
    let mut reader = Reader::from_str(original);
    let mut out = Writer::new(Vec::new());
    loop {
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(Event::Empty(col)) if col.local_name().as_ref() == "col" => {
                Event::Empty(with_style(&col, &styles))
            }
            Ok(other) => other,
        };
        if out.write_event(event).is_err() {
            return xml;
        }
    }
    [&xml[..start], &out.into_inner(), &xml[end..]].concat()
}

/// The writer's columns: first, last and format id of each `<col>`.
fn column_styles(cols: &[u8]) -> Vec<(u32, u32, String)> {
    let mut reader = Reader::from_reader(cols);
    let mut found = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Empty(col) | Event::Start(col)) if col.local_name().as_ref() == "col" => {
                let number = |name| attr(&col, name).and_then(|v| v.parse().ok());
                if let (Some(min), Some(max), Some(style)) =
                    (number("min"), number("max"), attr(&col, "style"))
                {
                    found.push((min, max, style));
                }
            }
            Ok(Event::Eof) | Err(_) => return found,
            _ => {}
        }
    }
}

/// An original `<col>` with the writer's format id for its first column
/// in place of the file's own.
fn with_style(col: &BytesStart<'_>, styles: &[(u32, u32, String)]) -> BytesStart<'static> {
    let first: Option<u32> = attr(col, "min").and_then(|m| m.parse().ok());
    let style = first.and_then(|first| {
        styles
            .iter()
            .find(|(min, max, _)| (*min..=*max).contains(&first))
            .map(|(_, _, style)| style.as_str())
    });
    let mut rebuilt = BytesStart::new(col.name().as_ref().to_owned());
    for attribute in col.attributes().with_checks(false).flatten() {
        if attribute.key.local_name().as_ref() != "style" {
            rebuilt.push_attribute(attribute);
        }
    }
    if let Some(style) = style {
        rebuilt.push_attribute(("style", style));
    }
    rebuilt
}

/// The writer's sheet XML, its cells left out (`<sheetData/>` in their
/// place), with the carried elements put in.
fn splice_sheet(
    skeleton: &[u8],
    carried: &CarriedXml,
    renamed: &HashMap<String, String>,
    [merges, hyperlinks]: [Option<Vec<u8>>; 2],
) -> Result<Vec<u8>, WriteError> {
    let mut parts = cut(skeleton)?;
    let prefixes = relationship_prefixes(carried);
    let written_filter = parts
        .children
        .iter()
        .find(|(name, _)| name == "autoFilter")
        .and_then(|(_, bytes)| first_attribute(bytes, "ref"))
        .and_then(|range| range_ref(&range));
    let mut elements = Vec::new();
    for element in &carried.elements {
        let mut bytes = rebind(element, &prefixes, renamed)?;
        if let (true, Some(range)) = (element.name == "autoFilter", written_filter) {
            // The model grows the range with inserted rows; a sort inside
            // moves with it.
            bytes = with_range(&bytes, range, None)?;
        }
        elements.push((element.name.clone(), bytes));
    }
    elements.extend(merges.map(|merges| ("mergeCells".to_owned(), merges)));
    elements.extend(hyperlinks.map(|links| ("hyperlinks".to_owned(), links)));
    let children = interleave(
        sheet_children::position,
        std::mem::take(&mut parts.children),
        elements,
    );
    Ok(reassemble(&parts, &carried.root_attributes, &children))
}

/// A carried table part or autofilter with the range the model gives it
/// now (its first `ref`; the ranges inside it, an autofilter's and a
/// sort's, move with its first and last rows), and its differential
/// formats numbered after the writer's. `totals`: for a table, whether the
/// model still gives it a totals row (a delete of that row takes it away,
/// and the table's autofilter then reaches its last row).
pub(super) fn with_range(
    xml: &[u8],
    range: Range,
    totals: Option<bool>,
) -> Result<Vec<u8>, WriteError> {
    // The range in the file, read from the first `ref`: the table's or
    // autofilter's own.
    let mut was: Option<Range> = None;
    let mut totals_dropped = false;
    with_attributes(xml, |key, value| {
        if key == "ref" {
            let moved = match (was, range_ref(value)) {
                (None, Some(old)) => {
                    was = Some(old);
                    range
                }
                (Some(table), Some(inner)) => Range {
                    first_row: (inner.first_row + range.first_row).saturating_sub(table.first_row),
                    last_row: match totals_dropped {
                        true => range.last_row,
                        false => (inner.last_row + range.last_row).saturating_sub(table.last_row),
                    },
                    ..inner
                },
                _ => return None,
            };
            Some(cell_range(
                moved.first_row,
                moved.first_column,
                moved.last_row,
                moved.last_column,
            ))
        } else if key == "totalsRowCount" && totals == Some(false) && value != "0" {
            totals_dropped = true;
            Some("0".to_owned())
        } else {
            None
        }
    })
}
