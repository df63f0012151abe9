//! Reading what a rewrite carries: the elements of the workbook and sheet
//! parts that the writer does not produce, and the package parts they (and
//! the package) refer to, transitively. [`super::merge`] puts them back.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use quick_xml::events::Event;

use super::ReadError;
use super::merge::places_workbook_child;
use super::opc::{
    ContentTypes, MainParts, is_kind, read_relationships, rels_name, rels_of, target_part,
};
use super::package::range_ref;
use super::sheet_children::{self, WrittenBy};
use super::xml::{attr, capture_children, first_attribute, flag, for_each_element};
use crate::model::carried::{
    Carried, CarriedSheet, CarriedXml, Element, OtherSheet, Part, Pivot, Relationship,
};

/// Children of `<workbook>` the writer produces from the model; the others
/// are carried, and replace the writer's when it writes them too.
const WRITTEN_WORKBOOK_ELEMENTS: &[&str] = &["fileVersion", "sheets", "definedNames", "calcPr"];

/// Where the writer puts the workbook part.
const WRITER_WORKBOOK: &str = "xl/workbook.xml";
/// A worksheet part where the writer puts them (only its folder matters).
const WRITER_SHEET: &str = "xl/worksheets/sheet1.xml";

/// Where the writer puts the theme part.
const WRITER_THEME: &str = "xl/theme/theme1.xml";

/// Relationship types (by their last path segment) of parts the writer
/// produces, or that a rewrite must drop: the calculation chain lists
/// formula cells, which a write changes, and spreadsheet apps rebuild it.
const WRITTEN_RELATIONSHIPS: &[&str] = &[
    "officeDocument",
    "core-properties",
    "extended-properties",
    "worksheet",
    "theme",
    "styles",
    "sharedStrings",
    "calcChain",
    "hyperlink",
];

/// Whether the child `name` of `<worksheet>` is carried; `empty` tells an
/// element without content (`<autoFilter ref="A1:C9"/>`).
pub fn carries_sheet_element(name: &str, empty: bool) -> bool {
    match sheet_children::written_by(name) {
        WrittenBy::Model => false,
        WrittenBy::ModelWhenEmpty => !empty,
        WrittenBy::Carried => true,
    }
}

/// Whether the child `name` of `<workbook>` is carried.
pub fn carries_workbook_element(name: &str) -> bool {
    !WRITTEN_WORKBOOK_ELEMENTS.contains(&name)
}

/// Whether a relationship of the package, the workbook or a sheet leads to
/// something carried.
fn is_carried(relationship: &Relationship) -> bool {
    !WRITTEN_RELATIONSHIPS
        .iter()
        .any(|kind| is_kind(relationship, kind))
}

/// The carried relationships of a part and its elements, to be written
/// for the writer's part `written` (see [`anchored`]).
fn carried_xml(
    parts: &HashMap<String, Vec<u8>>,
    part: &str,
    written: &str,
    root_attributes: Vec<(String, String)>,
    elements: Vec<Element>,
) -> Result<CarriedXml, ReadError> {
    let relationships = match rels_of(parts, part) {
        Some(xml) => read_relationships(xml)?
            .into_iter()
            .filter(is_carried)
            .map(|relationship| anchored(relationship, part, written))
            .collect(),
        None => Vec::new(),
    };
    Ok(CarriedXml {
        root_attributes,
        elements,
        relationships,
    })
}

/// One worksheet's carried elements, as the scan captured them.
pub struct SheetCapture {
    pub part: String,
    pub sheet_name: String,
    pub root_attributes: Vec<(String, String)>,
    pub elements: Vec<Element>,
    pub columns: Option<String>,
}

/// The workbook part's carried elements, as its parse captured them.
pub struct WorkbookCapture {
    pub root_attributes: Vec<(String, String)>,
    pub elements: Vec<Element>,
    /// Every `<sheet>` entry, in order.
    pub sheets: Vec<Element>,
}

/// Collects what the package carries. `parts` holds every part but the
/// worksheets and shared strings; `content_types` is the parsed
/// `[Content_Types].xml` (overrides by part name, defaults by extension).
pub fn collect(
    parts: &HashMap<String, Vec<u8>>,
    main: &MainParts,
    content_types: &ContentTypes,
    workbook: WorkbookCapture,
    sheets: Vec<SheetCapture>,
) -> Result<(Carried, HashMap<String, CarriedSheet>), ReadError> {
    let book = main.workbook.as_str();
    let mut carried = Carried {
        workbook: carried_xml(
            parts,
            book,
            WRITER_WORKBOOK,
            workbook.root_attributes,
            workbook.elements,
        )?,
        ..Carried::default()
    };
    carried.other_sheets = other_sheets(
        parts,
        book,
        workbook.sheets,
        &carried.workbook.relationships,
    );
    let defaults = writer_defaults();
    let styles = main.styles.as_ref().and_then(|name| parts.get(name));
    let fonts = match styles {
        Some(styles) => capture_children(styles, Some("fonts"))?,
        None => Vec::new(),
    };
    // The writer writes a styles part with no cell formats as the file has
    // it; one without a cell format or a font (a "minimal" package) has
    // nothing the writer's cells could point at.
    carried.styles = match styles {
        Some(styles)
            if *styles != defaults.styles
                && !fonts.is_empty()
                && !capture_children(styles, Some("cellXfs"))?.is_empty() =>
        {
            Some(Arc::from(styles.as_slice()))
        }
        _ => None,
    };
    // The writer's defaults hold for its default font: another font changes
    // the default row height it writes, for one.
    let plain_font = styles.is_none() || fonts.first() == defaults.font.as_ref();
    let writer_like = |element: &Element| plain_font && defaults.is_default(element);
    let workbook_elements = &mut carried.workbook.elements;
    drop_writer_like(workbook_elements, writer_like, |name| {
        name == "definedName" || places_workbook_child(name)
    });
    carried.date1904 = carried
        .workbook
        .elements
        .iter()
        .any(|e| e.name == "workbookPr" && declares_1904(&e.xml));
    carried.package = match parts.get("_rels/.rels") {
        Some(xml) => read_relationships(xml)?
            .into_iter()
            .filter(is_carried)
            .collect(),
        None => Vec::new(),
    };
    let workbook_type = content_types.overrides.get(book);
    carried.workbook_content_type = workbook_type
        .filter(|t| {
            !t.starts_with("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main")
        })
        .cloned();
    let theme = theme_name(parts, book)?.filter(|name| parts[name] != defaults.theme);
    carried.theme = theme.as_ref().map(|name| Arc::from(parts[name].as_slice()));

    // The parts reached from carried relationships, transitively.
    let mut wanted: Vec<String> = Vec::new();
    let mut reach = |source: &str, relationships: &[Relationship]| {
        wanted.extend(relationships.iter().filter_map(|r| target_part(source, r)));
    };
    reach("", &carried.package);
    reach(WRITER_WORKBOOK, &carried.workbook.relationships);
    // The theme's own parts (a picture fill), under the writer's theme name.
    let theme_rels = theme
        .as_ref()
        .and_then(|name| Some((name, rels_of(parts, name)?)));
    if let Some((name, rels)) = theme_rels {
        reach(name, &read_relationships(rels)?);
        let mut rels_part = part(content_types, rels_name(name), rels);
        rels_part.name = rels_name(WRITER_THEME);
        carried.parts.push(rels_part);
    }
    let mut by_sheet = HashMap::new();
    for mut sheet in sheets {
        drop_writer_like(&mut sheet.elements, writer_like, |name| {
            sheet_children::position(name).is_some()
        });
        let xml = carried_xml(
            parts,
            &sheet.part,
            WRITER_SHEET,
            sheet.root_attributes,
            sheet.elements,
        )?;
        reach(&sheet.part, &xml.relationships);
        let pivots = pivots(parts, &sheet.part, &xml.relationships)?;
        let sheet_carried = CarriedSheet {
            xml,
            columns: sheet.columns,
            pivots,
        };
        by_sheet.insert(sheet.sheet_name, sheet_carried);
    }
    let mut seen = BTreeSet::new();
    while let Some(name) = wanted.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(bytes) = parts.get(&name) else {
            continue;
        };
        if let Some(rels) = rels_of(parts, &name) {
            let relationships = read_relationships(rels)?;
            wanted.extend(relationships.iter().filter_map(|r| target_part(&name, r)));
            if seen.insert(rels_name(&name)) {
                carried
                    .parts
                    .push(part(content_types, rels_name(&name), rels));
            }
        }
        carried.parts.push(part(content_types, name, bytes));
    }
    carried.defaults = needed_defaults(content_types, &carried.parts);
    Ok((carried, by_sheet))
}

/// Drops from `elements` (in the file's order) those `writer_like`, which
/// the writer writes exactly so anyway; but keeps one directly followed by
/// an element the schema does not place (`placed` is false for it: an
/// extension's, such as Excel's `mc:AlternateContent` after
/// `workbookPr`), which the merge puts after the carried element before it.
fn drop_writer_like(
    elements: &mut Vec<Element>,
    writer_like: impl Fn(&Element) -> bool,
    placed: impl Fn(&str) -> bool,
) {
    let anchors: Vec<bool> = (0..elements.len())
        .map(|i| elements.get(i + 1).is_some_and(|next| !placed(&next.name)))
        .collect();
    let mut anchors = anchors.into_iter();
    elements.retain(|e| anchors.next().unwrap_or(false) || !writer_like(e));
}

/// What rust_xlsxwriter writes for a workbook without settings of its own.
/// An element or part the file has exactly so needs no carrying: the writer
/// writes it anyway. So a workbook that sheetd or rust_xlsxwriter wrote, or
/// one that a spreadsheet app left at its defaults, is saved without a
/// merge, as fast as before there was one.
struct WriterDefaults {
    /// Children of `<worksheet>` and `<workbook>`, as XML text.
    elements: HashSet<String>,
    theme: Vec<u8>,
    /// The styles part of a workbook without cell formats.
    styles: Vec<u8>,
    font: Option<String>,
}

impl WriterDefaults {
    fn is_default(&self, element: &Element) -> bool {
        self.elements.contains(&element.xml)
    }
}

fn writer_defaults() -> &'static WriterDefaults {
    static DEFAULTS: OnceLock<WriterDefaults> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        // Two sheets: the first is the active one, marked as selected.
        let mut book = rust_xlsxwriter::Workbook::new();
        book.add_worksheet();
        book.add_worksheet();
        let bytes = book.save_to_buffer().unwrap_or_default();
        let part = |name: &str| -> Vec<u8> {
            let mut bytes_of = Vec::new();
            if let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(&bytes))
                && let Ok(mut file) = zip.by_name(name)
            {
                let _ = std::io::Read::read_to_end(&mut file, &mut bytes_of);
            }
            bytes_of
        };
        let mut elements = HashSet::new();
        for name in [
            "xl/worksheets/sheet1.xml",
            "xl/worksheets/sheet2.xml",
            "xl/workbook.xml",
        ] {
            elements.extend(capture_children(&part(name), None).unwrap_or_default());
        }
        let styles = part("xl/styles.xml");
        WriterDefaults {
            elements,
            theme: part("xl/theme/theme1.xml"),
            styles: styles.clone(),
            font: capture_children(&styles, Some("fonts"))
                .ok()
                .and_then(|fonts| fonts.into_iter().next()),
        }
    })
}

/// The pivot tables of a sheet, from the parts its relationships lead to:
/// each one's name and the cells its body takes (`<location ref>`).
fn pivots(
    parts: &HashMap<String, Vec<u8>>,
    sheet_part: &str,
    relationships: &[Relationship],
) -> Result<Vec<Pivot>, ReadError> {
    let mut found = Vec::new();
    for relationship in relationships.iter().filter(|r| is_kind(r, "pivotTable")) {
        let Some(xml) = target_part(sheet_part, relationship).and_then(|p| parts.get(&p)) else {
            continue;
        };
        let mut name = String::new();
        let mut range = None;
        for_each_element(xml.as_slice(), |e| {
            match e.local_name().as_ref() {
                "pivotTableDefinition" => name = attr(e, "name").unwrap_or_default(),
                "location" => range = attr(e, "ref").and_then(|r| range_ref(&r)),
                _ => {}
            }
            Ok(())
        })?;
        if let Some(range) = range {
            found.push(Pivot { name, range });
        }
    }
    Ok(found)
}

fn part(content_types: &ContentTypes, name: String, bytes: &[u8]) -> Part {
    Part {
        content_type: content_types.overrides.get(&name).cloned(),
        name,
        bytes: Arc::from(bytes),
    }
}

/// The defaults (by extension) of the carried parts that have no override.
fn needed_defaults(content_types: &ContentTypes, parts: &[Part]) -> Vec<(String, String)> {
    let extensions: BTreeSet<String> = parts
        .iter()
        .filter(|p| p.content_type.is_none())
        .filter_map(|p| {
            p.name
                .rsplit_once('.')
                .map(|(_, ext)| ext.to_ascii_lowercase())
        })
        .collect();
    extensions
        .into_iter()
        .filter_map(|ext| {
            let kind = content_types.defaults.get(&ext)?;
            Some((ext, kind.clone()))
        })
        .collect()
}

/// A carried relationship of the file's part `part` as the writer's part
/// `written` must state it: a relative target that would lead elsewhere
/// from the writer's folder (the file kept its workbook at the package's
/// root, say) becomes the absolute name of the part it leads to, which
/// the carried part keeps.
fn anchored(mut relationship: Relationship, part: &str, written: &str) -> Relationship {
    if let Some(target) = target_part(part, &relationship)
        && target_part(written, &relationship).as_ref() != Some(&target)
    {
        relationship.target = format!("/{target}");
    }
    relationship
}

/// The name of the workbook's theme part, found through the workbook's
/// relationships.
fn theme_name(parts: &HashMap<String, Vec<u8>>, book: &str) -> Result<Option<String>, ReadError> {
    let Some(rels) = rels_of(parts, book) else {
        return Ok(None);
    };
    Ok(read_relationships(rels)?
        .into_iter()
        .find(|r| is_kind(r, "theme"))
        .and_then(|r| target_part(book, &r))
        .filter(|name| parts.contains_key(name)))
}

/// Whether a `workbookPr` element sets the 1904 date system.
fn declares_1904(xml: &str) -> bool {
    let mut reader = quick_xml::Reader::from_str(xml);
    match reader.read_event() {
        Ok(Event::Start(e) | Event::Empty(e)) => flag(&e, "date1904"),
        _ => false,
    }
}

/// The entries of the sheets that are no worksheets, with their positions,
/// when their relationship is carried and leads to a part the package has.
fn other_sheets(
    parts: &HashMap<String, Vec<u8>>,
    book: &str,
    entries: Vec<Element>,
    relationships: &[Relationship],
) -> Vec<OtherSheet> {
    entries
        .into_iter()
        .enumerate()
        .filter(|(_, entry)| {
            // `attr` matches local names: this is the entry's `r:id`.
            let id = first_attribute(entry.xml.as_bytes(), "id");
            relationships
                .iter()
                .find(|r| Some(&r.id) == id.as_ref())
                .and_then(|r| target_part(book, r))
                .is_some_and(|part| parts.contains_key(&part))
        })
        .map(|(position, entry)| OtherSheet {
            position,
            name: first_attribute(entry.xml.as_bytes(), "name").unwrap_or_default(),
            entry,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(target: &str) -> Relationship {
        Relationship {
            id: "rId1".into(),
            kind: "http://schemas.openxmlformats.org/officeDocument/2006/relationships/chartsheet"
                .into(),
            target: target.into(),
            external: false,
        }
    }

    #[test]
    fn a_carried_target_leads_where_it_led_from_the_writers_part() {
        // The file's workbook at the package's root: from the writer's
        // `xl/workbook.xml` the relative target would miss the part.
        let moved = anchored(
            to("chartsheets/sheet1.xml"),
            "workbook.xml",
            WRITER_WORKBOOK,
        );
        assert_eq!(moved.target, "/chartsheets/sheet1.xml");
        // Where the writer's part is where the file's was, nothing changes.
        let kept = anchored(
            to("../drawings/d1.xml"),
            "xl/worksheets/sheet.xml",
            WRITER_SHEET,
        );
        assert_eq!(kept.target, "../drawings/d1.xml");
    }
}
