//! Writing what a rewrite carries: the package rust_xlsxwriter produced,
//! with every carried part added whole, each carried element put back into
//! its workbook or sheet part at the place the schema gives it, and the
//! relationships, content types, differential formats and theme they need.
//!
//! Relationship ids of carried parts are renumbered after the writer's own,
//! and the carried elements' references follow.

use std::collections::{HashMap, HashSet};
use std::io::{Cursor, Read, Seek, Write};

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, Writer};
use rust_xlsxwriter::utility::cell_range;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::WriteError;
use super::fix::{self, Fixes};
use super::opc::{
    EMPTY_RELATIONSHIPS, add_relationships, is_relationships_ns, rels_name, with_carried_types,
};
use super::xml::{all_attributes, attr, capture_children, escape, find, first_attribute, rfind};
use crate::model::carried::{Carried, CarriedXml, CellStyles, Element, OtherSheet, Relationship};
use crate::model::layout::{Link, LinkTarget, Range};
use crate::model::workbook::DefinedName;
use crate::model::{Sheet, Workbook};

/// Children of `<worksheet>` in the order the schema requires.
const SHEET_ORDER: &[&str] = &[
    "sheetPr",
    "dimension",
    "sheetViews",
    "sheetFormatPr",
    "cols",
    "sheetData",
    "sheetCalcPr",
    "sheetProtection",
    "protectedRanges",
    "scenarios",
    "autoFilter",
    "sortState",
    "dataConsolidate",
    "customSheetViews",
    "mergeCells",
    "phoneticPr",
    "conditionalFormatting",
    "dataValidations",
    "hyperlinks",
    "printOptions",
    "pageMargins",
    "pageSetup",
    "headerFooter",
    "rowBreaks",
    "colBreaks",
    "customProperties",
    "cellWatches",
    "ignoredErrors",
    "smartTags",
    "drawing",
    "legacyDrawing",
    "legacyDrawingHF",
    "drawingHF",
    "picture",
    "oleObjects",
    "controls",
    "webPublishItems",
    "tableParts",
    "extLst",
];

/// The defined name of a sheet's autofilter range.
const FILTER_NAME: &str = "_xlnm._FilterDatabase";

/// Children of `<workbook>` in the order the schema requires.
const WORKBOOK_ORDER: &[&str] = &[
    "fileVersion",
    "fileSharing",
    "workbookPr",
    "workbookProtection",
    "bookViews",
    "sheets",
    "functionGroups",
    "externalReferences",
    "definedNames",
    "calcPr",
    "oleSize",
    "customWorkbookViews",
    "pivotCaches",
    "smartTagPr",
    "smartTagTypes",
    "webPublishing",
    "fileRecoveryPr",
    "webPublishObjects",
    "extLst",
];

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
        dxf_offset: 0,
    };
    // Read once: its differential formats are counted before any sheet
    // is written, and it is written with the carried ones added.
    let mut styles = match produced.contains("xl/styles.xml") {
        true => Some(source.read("xl/styles.xml")?),
        false => None,
    };
    source.dxf_offset = styles
        .as_deref()
        .map_or(0, |xml| count_children(xml, "dxfs"));
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
            "xl/styles.xml" => {
                let xml = match styles.take() {
                    Some(xml) => xml,
                    None => source.read(name)?,
                };
                let xml = append_children(xml, "dxfs", &carried.dxfs);
                let xml = with_cell_styles(xml, carried.cell_styles.as_ref())?;
                let xml = declare(xml, &carried.styles_namespaces)?;
                Some(with_default_font(xml, carried.default_font.as_deref()))
            }
            "xl/theme/theme1.xml" => carried.theme.as_deref().map(<[u8]>::to_vec),
            _ => match sheet_index(name).and_then(|i| Some((i, workbook.sheets.get(i)?))) {
                Some((index, sheet)) => {
                    let fixes = fixes.get(index).filter(|f| !f.is_empty());
                    sheet_part(&mut source, &mut zip, name, sheet, fixes, &mut plain[index])?
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
    let tables: HashMap<&str, Range> = workbook
        .sheets
        .iter()
        .flat_map(|sheet| &sheet.layout.tables)
        .filter_map(|table| Some((table.part.as_deref()?, table.range)))
        .collect();
    for part in &carried.parts {
        if produced.contains(part.name.as_str()) {
            continue;
        }
        match tables.get(part.name.as_str()) {
            Some(range) => put(
                &mut zip,
                &part.name,
                &with_range(&part.bytes, *range, source.dxf_offset)?,
            )?,
            None => put(&mut zip, &part.name, &part.bytes)?,
        }
    }
    zip.finish().map_err(zip_error)?;
    Ok(())
}

/// A carried table part or autofilter with the range the model gives it
/// now (its first `ref`; the ranges inside it, an autofilter's and a
/// sort's, move with its first and last rows), and its differential
/// formats numbered after the writer's.
fn with_range(xml: &[u8], range: Range, dxf_offset: usize) -> Result<Vec<u8>, WriteError> {
    // The range in the file, read from the first `ref`: the table's or
    // autofilter's own.
    let mut was: Option<Range> = None;
    with_attributes(xml, |key, value| {
        if key == "ref" {
            let moved = match (was, super::package::range_ref(value)) {
                (None, Some(old)) => {
                    was = Some(old);
                    range
                }
                (Some(table), Some(inner)) => Range {
                    first_row: (inner.first_row + range.first_row).saturating_sub(table.first_row),
                    last_row: (inner.last_row + range.last_row).saturating_sub(table.last_row),
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
        } else if key.ends_with("DxfId") && dxf_offset > 0 {
            plus(value, dxf_offset)
        } else {
            None
        }
    })
}

/// The package the writer produced, which the merge reads from.
struct Source<'a> {
    archive: ZipArchive<Cursor<&'a [u8]>>,
    /// The names of its parts.
    produced: &'a HashSet<&'a str>,
    /// How many differential formats its styles part has: the carried ones
    /// are numbered after them.
    dxf_offset: usize,
}

impl Source<'_> {
    /// A part, inflated.
    fn read(&mut self, name: &str) -> Result<Vec<u8>, WriteError> {
        read(&mut self.archive, name)
    }

    /// Copies a part to `zip` as compressed.
    fn copy<W: Write + Seek>(
        &mut self,
        name: &str,
        zip: &mut ZipWriter<W>,
    ) -> Result<(), WriteError> {
        let file = self.archive.by_name(name).map_err(zip_error)?;
        zip.raw_copy_file(file).map_err(zip_error)
    }
}

/// The writer's worksheet part `name` of `sheet` with what the sheet
/// carries put in, its hyperlinks and its `fixes` (its relationships part,
/// which that needs, is written to `zip` here); `None` when the writer's
/// part stands as written. `plain` remembers whether what the sheet carries
/// is what the writer writes anyway (see [`merge`]).
fn sheet_part<W: Write + Seek>(
    source: &mut Source<'_>,
    zip: &mut ZipWriter<W>,
    name: &str,
    sheet: &Sheet,
    fixes: Option<&Fixes>,
    plain: &mut Option<bool>,
) -> Result<Option<Vec<u8>>, WriteError> {
    let links = &sheet.layout.links;
    if sheet.carried.is_empty() && links.is_empty() {
        return match fixes {
            Some(fixes) => Ok(Some(fix::apply(&source.read(name)?, fixes))),
            None => Ok(None),
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
        return Ok(None);
    }
    let written = source.read(name)?;
    let xml = splice_sheet(
        &written,
        &sheet.carried.xml,
        &renamed,
        source.dxf_offset,
        hyperlinks(links, &renamed),
    )?;
    let xml = with_original_columns(xml, sheet.carried.columns.as_deref());
    // Most of a sheet is its cells: when what it carries is what the writer
    // wrote anyway, the part is copied as compressed.
    let same = xml == written;
    *plain = Some(same && relationships.is_empty());
    Ok(match fixes {
        Some(fixes) => Some(fix::apply(&xml, fixes)),
        None => (!same).then_some(xml),
    })
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

/// The model index of a worksheet part the writer produced
/// (`xl/worksheets/sheet3.xml` is the third sheet).
fn sheet_index(name: &str) -> Option<usize> {
    let number: usize = name
        .strip_prefix("xl/worksheets/sheet")?
        .strip_suffix(".xml")?
        .parse()
        .ok()?;
    number.checked_sub(1)
}

fn zip_error(error: impl std::fmt::Display) -> WriteError {
    WriteError::Io(std::io::Error::other(error.to_string()))
}

fn xml_error(error: impl std::fmt::Display) -> WriteError {
    WriteError::Refused(format!("a carried part is not valid XML: {error}"))
}

fn read<R: Read + Seek>(archive: &mut ZipArchive<R>, name: &str) -> Result<Vec<u8>, WriteError> {
    let mut bytes = Vec::new();
    archive
        .by_name(name)
        .map_err(zip_error)?
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn put<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    name: &str,
    bytes: &[u8],
) -> Result<(), WriteError> {
    // The writer's own level: see `Rewrite::begin`.
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(2));
    zip.start_file(name, options).map_err(zip_error)?;
    zip.write_all(bytes)?;
    Ok(())
}

/// How many children the first `list` element of `xml` has.
fn count_children(xml: &[u8], list: &str) -> usize {
    capture_children(xml, Some(list)).map_or(0, |children| children.len())
}

/// Where a list element of the styles part goes when the writer wrote
/// none: before the first of these that is there (the schema's order).
fn followers(list: &str) -> &'static [&'static str] {
    match list {
        "numFmts" => &["<fonts", "</styleSheet>"],
        _ => &["<tableStyles", "<colors", "<extLst", "</styleSheet>"],
    }
}

/// The styles part `xml` with `items` added at the end of its first `list`
/// element (`<dxfs>`, `<fonts>`…), whose `count` follows.
fn append_children(xml: Vec<u8>, list: &str, items: &[String]) -> Vec<u8> {
    if items.is_empty() {
        return xml;
    }
    let count = count_children(&xml, list) + items.len();
    let text = String::from_utf8_lossy(&xml).into_owned();
    let joined = items.concat();
    let block = format!("<{list} count=\"{count}\">");
    let open = format!("<{list}");
    let start = text.match_indices(&open).map(|(i, _)| i).find(|&i| {
        matches!(
            text.as_bytes().get(i + open.len()),
            Some(b' ' | b'>' | b'/')
        )
    });
    if let Some(start) = start {
        let Some(end_of_tag) = text[start..].find('>').map(|i| start + i) else {
            return xml;
        };
        let rest = &text[end_of_tag + 1..];
        let merged = if text[..end_of_tag].ends_with('/') {
            format!("{}{block}{joined}</{list}>{rest}", &text[..start])
        } else {
            let inner_end = rest.find(&format!("</{list}>")).unwrap_or(0);
            format!(
                "{}{block}{}{joined}{}",
                &text[..start],
                &rest[..inner_end],
                &rest[inner_end..]
            )
        };
        return merged.into_bytes();
    }
    let at = followers(list)
        .iter()
        .find_map(|tag| text.find(tag))
        .unwrap_or(text.len());
    format!("{}{block}{joined}</{list}>{}", &text[..at], &text[at..]).into_bytes()
}

/// The styles part `xml` the writer wrote with the file's named cell
/// styles added: their style formats, and the fonts, fills, borders and
/// number formats those use, appended to the writer's and renumbered. The
/// file's style of format 0 (Normal, under whatever name the file gives
/// it) takes the place of the writer's Normal.
fn with_cell_styles(xml: Vec<u8>, styles: Option<&CellStyles>) -> Result<Vec<u8>, WriteError> {
    let Some(styles) = styles else {
        return Ok(xml);
    };
    let offset = |list| count_children(&xml, list);
    let (fonts, fills, borders) = (offset("fonts"), offset("fills"), offset("borders"));
    // Style format 0 is the writer's; the file's others follow its own.
    let formats = offset("cellStyleXfs").saturating_sub(1);
    let mut next_id = capture_children(&xml, Some("numFmts"))
        .unwrap_or_default()
        .iter()
        .filter_map(|f| {
            first_attribute(f.as_bytes(), "numFmtId")?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0)
        .max(163);
    let mut num_ids = HashMap::new();
    let num_formats = styles
        .num_formats
        .iter()
        .map(|format| {
            text_with_attributes(format, |name, value| {
                (name == "numFmtId").then(|| {
                    next_id += 1;
                    num_ids.insert(value.to_owned(), next_id.to_string());
                    next_id.to_string()
                })
            })
        })
        .collect::<Result<Vec<String>, WriteError>>()?;
    let style_formats = styles
        .formats
        .iter()
        .skip(1)
        .map(|format| {
            text_with_attributes(format, |name, value| match name {
                "fontId" => plus(value, fonts),
                "fillId" => plus(value, fills),
                "borderId" => plus(value, borders),
                "numFmtId" => num_ids.get(value).cloned(),
                _ => None,
            })
        })
        .collect::<Result<Vec<String>, WriteError>>()?;
    let mut normal = None;
    let mut named = Vec::new();
    for style in &styles.styles {
        match first_attribute(style.as_bytes(), "xfId").as_deref() {
            Some("0") => normal = Some(style.clone()),
            _ => named.push(text_with_attributes(style, |name, value| {
                (name == "xfId").then(|| plus(value, formats)).flatten()
            })?),
        }
    }
    let mut xml = xml;
    if let Some(normal) = normal {
        let text = String::from_utf8_lossy(&xml).into_owned();
        if let Some(start) = text.find("<cellStyle ")
            && let Some(end) = text[start..].find("/>")
        {
            xml = [&text[..start], &normal, &text[start + end + 2..]]
                .concat()
                .into_bytes();
        }
    }
    let xml = append_children(xml, "numFmts", &num_formats);
    let xml = append_children(xml, "fonts", &styles.fonts);
    let xml = append_children(xml, "fills", &styles.fills);
    let xml = append_children(xml, "borders", &styles.borders);
    let xml = append_children(xml, "cellStyleXfs", &style_formats);
    Ok(append_children(xml, "cellStyles", &named))
}

/// [`with_attributes`] for an element held as text.
fn text_with_attributes(
    xml: &str,
    map: impl FnMut(&str, &str) -> Option<String>,
) -> Result<String, WriteError> {
    Ok(String::from_utf8_lossy(&with_attributes(xml.as_bytes(), map)?).into_owned())
}

/// The number `value` (an id) plus `by`; `None` when it is no number.
fn plus(value: &str, by: usize) -> Option<String> {
    value.parse::<usize>().ok().map(|id| (id + by).to_string())
}

/// The styles part with its first font (the workbook's default) as the
/// file had it: the writer's is made from the model, which keeps its name
/// and size but not every setting.
fn with_default_font(xml: Vec<u8>, font: Option<&str>) -> Vec<u8> {
    let Some(font) = font else {
        return xml;
    };
    let Some(fonts) = find(&xml, b"<fonts") else {
        return xml;
    };
    let first = find(&xml[fonts..], b"<font>")
        .or_else(|| find(&xml[fonts..], b"<font "))
        .map(|at| fonts + at);
    let Some(start) = first else {
        return xml;
    };
    let Some(end) = find(&xml[start..], b"</font>").map(|at| start + at + b"</font>".len()) else {
        return xml;
    };
    [&xml[..start], font.as_bytes(), &xml[end..]].concat()
}

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

/// A part's XML put back together from its [`Parts`], with `children` for
/// the root's children and the declarations of `root_attributes` the root
/// lacks.
fn reassemble(parts: &Parts<'_>, root_attributes: &[(String, String)], children: &[u8]) -> Vec<u8> {
    [
        parts.before,
        &with_namespaces(&parts.root, root_attributes),
        children,
        parts.after,
    ]
    .concat()
}

/// `xml` with the namespace declarations of `root_attributes` its root
/// lacks.
fn declare(xml: Vec<u8>, root_attributes: &[(String, String)]) -> Result<Vec<u8>, WriteError> {
    if root_attributes.is_empty() {
        return Ok(xml);
    }
    let parts = cut(&xml)?;
    let children: Vec<u8> = parts
        .children
        .iter()
        .flat_map(|(_, bytes)| bytes.clone())
        .collect();
    Ok(reassemble(&parts, root_attributes, &children))
}

/// A part's XML cut into its root's start tag, the root's children and
/// what follows them.
struct Parts<'a> {
    before: &'a [u8],
    root: BytesStart<'static>,
    children: Vec<(String, Vec<u8>)>,
    after: &'a [u8],
}

/// Cuts `xml` into [`Parts`]; `xml` is the writer's, so well formed.
fn cut(xml: &[u8]) -> Result<Parts<'_>, WriteError> {
    let mut reader = Reader::from_reader(xml);
    let mut depth = 0usize;
    let mut before = &xml[..0];
    let mut root = None;
    let mut children = Vec::new();
    let mut child_start = 0usize;
    let mut child_name = String::new();
    loop {
        let start = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(xml_error)?;
        let end = reader.buffer_position() as usize;
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                match depth {
                    0 => {
                        before = &xml[..start];
                        root = Some(e.to_owned());
                    }
                    1 => {
                        child_start = start;
                        child_name = e.local_name().as_ref().to_owned();
                    }
                    _ => {}
                }
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                } else if depth == 1 {
                    children.push((
                        std::mem::take(&mut child_name),
                        xml[child_start..end].to_vec(),
                    ));
                }
            }
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                match depth {
                    1 => children.push((
                        std::mem::take(&mut child_name),
                        xml[child_start..end].to_vec(),
                    )),
                    0 => {
                        return Ok(Parts {
                            before,
                            root: root.ok_or_else(|| xml_error("no root element"))?,
                            children,
                            after: &xml[start..],
                        });
                    }
                    _ => {}
                }
            }
            Event::Eof => return Err(xml_error("the root element is not closed")),
            _ => {}
        }
    }
}

/// The root start tag with the carried part's namespace declarations it
/// lacks (a prefix the writer binds already keeps the writer's binding).
fn with_namespaces(root: &BytesStart<'_>, carried: &[(String, String)]) -> Vec<u8> {
    let mut merged = root.to_owned();
    let present: HashSet<String> = root
        .attributes()
        .with_checks(false)
        .flatten()
        .map(|a| a.key.as_ref().to_owned())
        .collect();
    for (key, value) in carried {
        if !present.contains(key) {
            merged.push_attribute((key.as_str(), value.as_str()));
        }
    }
    let mut out = Writer::new(Vec::new());
    let _ = out.write_event(Event::Start(merged));
    out.into_inner()
}

/// Orders children by the schema: known names by their place, unknown
/// carried ones right after the known element that preceded them.
fn place(order: &[&str], name: &str) -> Option<usize> {
    order.iter().position(|known| *known == name)
}

/// Puts carried elements among the writer's children, in schema order;
/// a carried element replaces the writer's of the same name.
fn interleave(
    order: &[&str],
    written: Vec<(String, Vec<u8>)>,
    carried: Vec<(String, Vec<u8>)>,
) -> Vec<u8> {
    let carried_names: HashSet<&str> = carried.iter().map(|(n, _)| n.as_str()).collect();
    let mut keyed: Vec<((usize, u8, usize), Vec<u8>)> = Vec::new();
    let mut last = 0;
    for (name, bytes) in &written {
        last = place(order, name).unwrap_or(last);
        if !carried_names.contains(name.as_str()) {
            keyed.push(((last, 0, keyed.len()), bytes.clone()));
        }
    }
    let mut last = 0;
    for (i, (name, bytes)) in carried.into_iter().enumerate() {
        let key = match place(order, &name) {
            Some(at) => {
                last = at;
                (at, 1, i)
            }
            None => (last, 2, i),
        };
        keyed.push((key, bytes));
    }
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().flat_map(|(_, bytes)| bytes).collect()
}

/// A carried element with its relationship ids renamed and, for
/// conditional formats, its differential format ids moved past the
/// writer's.
fn rebind(
    element: &Element,
    rel_prefixes: &HashSet<String>,
    renamed: &HashMap<String, String>,
    dxf_offset: usize,
) -> Result<Vec<u8>, WriteError> {
    let mut reader = Reader::from_str(&element.xml);
    let mut out = Writer::new(Vec::new());
    loop {
        let event = reader.read_event().map_err(xml_error)?;
        let event = match event {
            Event::Eof => break,
            Event::Start(e) => {
                Event::Start(rebind_attributes(&e, rel_prefixes, renamed, dxf_offset))
            }
            Event::Empty(e) => {
                Event::Empty(rebind_attributes(&e, rel_prefixes, renamed, dxf_offset))
            }
            other => other,
        };
        out.write_event(event).map_err(xml_error)?;
    }
    Ok(out.into_inner())
}

fn rebind_attributes(
    element: &BytesStart<'_>,
    rel_prefixes: &HashSet<String>,
    renamed: &HashMap<String, String>,
    dxf_offset: usize,
) -> BytesStart<'static> {
    let is_rule = element.local_name().as_ref() == "cfRule";
    // The relationships prefix may be declared on the element itself.
    let mut rel_prefixes = rel_prefixes.clone();
    let all = all_attributes(element);
    for (key, uri) in &all {
        if let Some(prefix) = key.strip_prefix("xmlns:")
            && is_relationships_ns(uri)
        {
            rel_prefixes.insert(prefix.to_owned());
        }
    }
    let mut changed = false;
    let mut attributes = Vec::new();
    for (key, value) in all {
        let prefix = key.split_once(':').map(|(p, _)| p);
        let new = if prefix.is_some_and(|p| rel_prefixes.contains(p)) {
            renamed.get(&value).cloned()
        } else if is_rule && key == "dxfId" && dxf_offset > 0 {
            plus(&value, dxf_offset)
        } else {
            None
        };
        changed |= new.as_ref().is_some_and(|n| *n != value);
        attributes.push((key, new.unwrap_or(value)));
    }
    if !changed {
        // Byte for byte as read.
        return element.to_owned();
    }
    let mut rebound = BytesStart::new(element.name().as_ref().to_owned());
    for (key, value) in &attributes {
        rebound.push_attribute((key.as_str(), value.as_str()));
    }
    rebound
}

/// The prefixes a part's root binds to the relationships namespace.
fn relationship_prefixes(xml: &CarriedXml) -> HashSet<String> {
    xml.root_attributes
        .iter()
        .filter(|(_, uri)| is_relationships_ns(uri))
        .filter_map(|(key, _)| key.strip_prefix("xmlns:").map(str::to_owned))
        .collect()
}

/// The writer's sheet XML with the carried elements put in. The cells
/// (`<sheetData>`, nearly all of the part) are copied as bytes, not parsed.
fn splice_sheet(
    xml: &[u8],
    carried: &CarriedXml,
    renamed: &HashMap<String, String>,
    dxf_offset: usize,
    hyperlinks: Option<Vec<u8>>,
) -> Result<Vec<u8>, WriteError> {
    let (head, data, tail) = split_sheet_data(xml);
    let skeleton = [head, b"<sheetData/>".as_slice(), tail].concat();
    let mut parts = cut(&skeleton)?;
    let prefixes = relationship_prefixes(carried);
    let written_filter = parts
        .children
        .iter()
        .find(|(name, _)| name == "autoFilter")
        .and_then(|(_, bytes)| first_attribute(bytes, "ref"))
        .and_then(|range| super::package::range_ref(&range));
    let mut elements = Vec::new();
    for element in &carried.elements {
        let mut bytes = rebind(element, &prefixes, renamed, dxf_offset)?;
        if let (true, Some(range)) = (element.name == "autoFilter", written_filter) {
            // The model grows the range with inserted rows; a sort inside
            // moves with it.
            bytes = with_range(&bytes, range, 0)?;
        }
        elements.push((element.name.clone(), bytes));
    }
    elements.extend(hyperlinks.map(|links| ("hyperlinks".to_owned(), links)));
    let mut children = interleave(SHEET_ORDER, std::mem::take(&mut parts.children), elements);
    if !data.is_empty() {
        children = replace_once(&children, b"<sheetData/>", data);
    }
    Ok(reassemble(&parts, &carried.root_attributes, &children))
}

/// The writer's sheet XML as what precedes `<sheetData>`, the element
/// itself, and what follows; the middle is empty when there is none.
fn split_sheet_data(xml: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let Some(start) = find(xml, b"<sheetData") else {
        return (xml, &[], &[]);
    };
    let after_start = &xml[start..];
    if let Some(end) = after_start.iter().position(|b| *b == b'>')
        && after_start[..end].ends_with(b"/")
    {
        return (
            &xml[..start],
            &xml[start..start + end + 1],
            &xml[start + end + 1..],
        );
    }
    let closing = b"</sheetData>";
    match rfind(xml, closing) {
        Some(end) if end > start => {
            let end = end + closing.len();
            (&xml[..start], &xml[start..end], &xml[end..])
        }
        _ => (xml, &[], &[]),
    }
}

fn replace_once(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    match find(bytes, from) {
        Some(at) => [&bytes[..at], to, &bytes[at + from.len()..]].concat(),
        None => bytes.to_vec(),
    }
}

/// Puts the entries of the sheets the model does not hold (chart sheets)
/// back into the writer's `<sheets>` at their positions, each with its
/// relationship id renamed and a `sheetId` after the writer's, and moves
/// the sheet indexes the writer wrote (`activeTab`, `firstSheet`,
/// `localSheetId`) to the positions its sheets then have.
fn with_other_sheets(
    parts: &mut Parts<'_>,
    others: &[OtherSheet],
    prefixes: &HashSet<String>,
    renamed: &HashMap<String, String>,
) -> Result<(), WriteError> {
    let Some((_, sheets)) = parts.children.iter_mut().find(|(n, _)| n == "sheets") else {
        return Ok(());
    };
    let written = capture_children(sheets, Some("sheets")).map_err(|e| xml_error(e.0))?;
    let mut next_id = written
        .iter()
        .filter_map(|entry| {
            first_attribute(entry.as_bytes(), "sheetId")?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    let total = written.len() + others.len();
    let mut model = written.into_iter();
    let mut entries = Vec::new();
    // Where each of the writer's sheets ends up.
    let mut positions = Vec::new();
    for position in 0..total {
        match others.iter().find(|other| other.position == position) {
            Some(other) => {
                next_id += 1;
                let entry = rebind(&other.entry, prefixes, renamed, 0)?;
                let entry = with_attributes(&entry, |name, _| {
                    (name == "sheetId").then(|| next_id.to_string())
                })?;
                entries.push(String::from_utf8_lossy(&entry).into_owned());
            }
            None => {
                entries.extend(model.next());
                positions.push(position);
            }
        }
    }
    entries.extend(model);
    *sheets = [
        b"<sheets>".as_slice(),
        entries.concat().as_bytes(),
        b"</sheets>",
    ]
    .concat();
    let moved = |value: &str| {
        let index = value.parse::<usize>().ok()?;
        Some(positions.get(index).copied().unwrap_or(index).to_string())
    };
    for (name, bytes) in &mut parts.children {
        let indexes: &[&str] = match name.as_str() {
            "bookViews" => &["activeTab", "firstSheet"],
            "definedNames" => &["localSheetId"],
            _ => continue,
        };
        *bytes = with_attributes(bytes, |key, value| {
            indexes.contains(&key).then(|| moved(value)).flatten()
        })?;
    }
    Ok(())
}

/// `xml` with the attributes of every element that `map` gives a new value
/// for (by local name) changed.
fn with_attributes(
    xml: &[u8],
    mut map: impl FnMut(&str, &str) -> Option<String>,
) -> Result<Vec<u8>, WriteError> {
    let mut reader = Reader::from_reader(xml);
    let mut out = Writer::new(Vec::new());
    let mut rewrite = |element: &BytesStart<'_>| {
        let mut tag = BytesStart::new(element.name().as_ref().to_owned());
        for (key, value) in all_attributes(element) {
            let local = key.rsplit(':').next().unwrap_or(&key);
            let value = map(local, &value).unwrap_or(value);
            tag.push_attribute((key.as_str(), value.as_str()));
        }
        tag
    };
    loop {
        let event = match reader.read_event().map_err(xml_error)? {
            Event::Eof => break,
            Event::Start(e) => Event::Start(rewrite(&e)),
            Event::Empty(e) => Event::Empty(rewrite(&e)),
            other => other,
        };
        out.write_event(event).map_err(xml_error)?;
    }
    Ok(out.into_inner())
}

/// The sheet index (`localSheetId`) of a defined name (XML text) that is an
/// autofilter's name.
fn filter_sheet(xml: &[u8]) -> Option<String> {
    first_attribute(xml, "name")?
        .eq_ignore_ascii_case(FILTER_NAME)
        .then(|| first_attribute(xml, "localSheetId"))?
}

/// The start tag an element (XML text) begins with.
fn start_tag(xml: &[u8]) -> &[u8] {
    let end = xml
        .iter()
        .position(|&b| b == b'>')
        .map_or(xml.len(), |i| i + 1);
    &xml[..end]
}

/// What lies between an element's start tag and its end tag, as written.
fn inner_text(xml: &[u8]) -> &[u8] {
    let start = start_tag(xml).len();
    let end = rfind(xml, b"</")
        .filter(|&end| end >= start)
        .unwrap_or(start);
    &xml[start..end]
}

/// A carried `<definedName>` (XML text) with the model's text for it, when
/// the model's name of the same name and scope refers to something else.
fn with_model_text(xml: &[u8], model_names: &[DefinedName]) -> Option<Vec<u8>> {
    let open = start_tag(xml);
    if open.ends_with(b"/>") {
        return None;
    }
    let name = first_attribute(xml, "name")?;
    let scope = first_attribute(xml, "localSheetId").and_then(|id| id.parse::<usize>().ok());
    let model = model_names
        .iter()
        .find(|n| n.scope == scope && n.name.eq_ignore_ascii_case(&name))?;
    let inner = inner_text(xml);
    let text = quick_xml::escape::unescape(std::str::from_utf8(inner).ok()?).ok()?;
    if text == model.refers_to {
        return None;
    }
    let close = &xml[open.len() + inner.len()..];
    Some([open, escape(&model.refers_to).as_bytes(), close].concat())
}

/// The writer's workbook XML with the carried elements put in: carried
/// built-in names go inside `<definedNames>`, each with what the model's
/// name of the same name and scope refers to now (a delete adjusts it).
fn splice_workbook(
    xml: &[u8],
    book: &Carried,
    model_names: &[DefinedName],
    renamed: &HashMap<String, String>,
) -> Result<Vec<u8>, WriteError> {
    let carried = &book.workbook;
    let mut parts = cut(xml)?;
    let prefixes = relationship_prefixes(carried);
    if !book.other_sheets.is_empty() {
        with_other_sheets(&mut parts, &book.other_sheets, &prefixes, renamed)?;
    }
    let mut elements = Vec::new();
    let mut names = Vec::new();
    // The writer writes the name of each autofilter it writes, with the
    // range the model gives it: the file's name for that sheet comes back
    // with that range, and the writer's goes.
    let mut filter_ranges = HashMap::new();
    if let Some((_, written)) = parts
        .children
        .iter_mut()
        .find(|(name, _)| name == "definedNames")
    {
        for name in capture_children(written, Some("definedNames")).map_err(|e| xml_error(e.0))? {
            if let Some(sheet) = filter_sheet(name.as_bytes()) {
                *written = replace_once(written, name.as_bytes(), b"");
                filter_ranges.insert(sheet, name);
            }
        }
    }
    for element in &carried.elements {
        let mut bytes = rebind(element, &prefixes, renamed, 0)?;
        if element.name != "definedName" {
            elements.push((element.name.clone(), bytes));
            continue;
        }
        let open = start_tag(&bytes);
        if !open.ends_with(b"/>")
            && let Some(written) = filter_sheet(&bytes).and_then(|s| filter_ranges.remove(&s))
        {
            let name_end = open
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b == b'>')
                .unwrap_or(open.len());
            let close = [b"</", &open[1..name_end], b">"].concat();
            bytes = [open, inner_text(written.as_bytes()), &close].concat();
        } else if let Some(adjusted) = with_model_text(&bytes, model_names) {
            bytes = adjusted;
        }
        names.extend(bytes);
    }
    for written in filter_ranges.into_values() {
        names.extend(written.into_bytes());
    }
    if !names.is_empty() {
        match parts
            .children
            .iter_mut()
            .find(|(name, _)| name == "definedNames")
        {
            Some((_, bytes)) => {
                *bytes = replace_once(
                    bytes,
                    b"</definedNames>",
                    &[&names[..], b"</definedNames>"].concat(),
                )
            }
            None => parts.children.push((
                "definedNames".into(),
                [b"<definedNames>".as_slice(), &names, b"</definedNames>"].concat(),
            )),
        }
    }
    let children = interleave(
        WORKBOOK_ORDER,
        std::mem::take(&mut parts.children),
        elements,
    );
    Ok(reassemble(&parts, &carried.root_attributes, &children))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

    #[test]
    fn the_files_autofilter_name_comes_back_with_the_writers_range() {
        let written = format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="{MAIN}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets><definedNames><definedName name="_xlnm._FilterDatabase" localSheetId="0" hidden="1">Data!$A$1:$B$6</definedName></definedNames><calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>"#
        );
        let carried = CarriedXml {
            root_attributes: vec![("xmlns:x".into(), MAIN.into())],
            elements: vec![Element {
                name: "definedName".into(),
                xml: r#"<x:definedName name="_xlnm._FilterDatabase" localSheetId="0" comment="the file's">Data!$A$1:$B$5</x:definedName>"#.into(),
            }],
            relationships: Vec::new(),
        };
        let carried = Carried {
            workbook: carried,
            ..Carried::default()
        };
        let out = splice_workbook(written.as_bytes(), &carried, &[], &HashMap::new()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(r#"<x:definedName name="_xlnm._FilterDatabase" localSheetId="0" comment="the file's">Data!$A$1:$B$6</x:definedName>"#),
            "{text}"
        );
        assert_eq!(text.matches("_xlnm._FilterDatabase").count(), 1, "{text}");
        assert!(text.contains(r#"xmlns:x=""#), "{text}");
    }
}
