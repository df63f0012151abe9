//! Fidelity inventory of an .xlsx package, feature by feature.
//!
//! [`inventory`] lists, per feature and scope (`"workbook"` or a sheet's
//! name), a canonical fingerprint of every instance of the feature, and
//! [`compare`] tells, per feature, whether a rewrite of the package kept all
//! of them.
//!
//! A fingerprint is a canonical serialization of the XML that carries the
//! feature: element and attribute names by local name (prefixes and
//! namespace declarations dropped), attributes sorted, whitespace-only text
//! between elements ignored, numbers rounded to two decimals, markup
//! compatibility and revision-tracking attributes dropped, and what a
//! faithful rewrite renumbers replaced by what it refers to: a relationship
//! id by its type and target (content type, or address of an external
//! target), a differential-format index by the format itself. Part names
//! never appear in a fingerprint.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{Cursor, Read};

use quick_xml::XmlVersion;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

/// Parts that unpack to more bytes than this are skipped.
const MAX_PART_BYTES: u64 = 64 << 20;
/// Only the first this many entries of the zip are looked at.
const MAX_PARTS: usize = 10_000;
/// Deeper XML is refused: serialization recurses over the tree.
const MAX_DEPTH: usize = 256;
/// A reason given by [`compare`] is cut to this many characters.
const MAX_REASON_CHARS: usize = 200;
/// The scope of the features that belong to the whole workbook.
const WORKBOOK: &str = "workbook";

/// Namespaces of relationship-id attributes (transitional and strict).
const RELATIONSHIP_NAMESPACES: [&str; 2] = [
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "http://purl.oclc.org/ooxml/officeDocument/relationships",
];
/// Namespace of `mc:Ignorable` and its kin, which carry no content.
const MARKUP_COMPATIBILITY: &str = "http://schemas.openxmlformats.org/markup-compatibility/2006";

/// Worksheet children inventoried as one instance per occurrence.
const WHOLE_SHEET_ELEMENTS: &[&str] = &[
    "sheetPr",
    "sheetFormatPr",
    "sheetProtection",
    "scenarios",
    "autoFilter",
    "sortState",
    "dataConsolidate",
    "customSheetViews",
    "conditionalFormatting",
    "printOptions",
    "pageMargins",
    "pageSetup",
    "headerFooter",
    "rowBreaks",
    "colBreaks",
    "ignoredErrors",
    "drawing",
    "legacyDrawing",
    "legacyDrawingHF",
    "picture",
    "oleObjects",
    "controls",
];

/// Worksheet children inventoried as one instance per child element.
const LIST_SHEET_ELEMENTS: &[&str] = &[
    "protectedRanges",
    "mergeCells",
    "dataValidations",
    "hyperlinks",
    "extLst",
];

/// Package features counted by the parts directly in a folder: feature,
/// what is counted, folder (lower case), required file-name ending.
const COUNTED_PARTS: &[(&str, &str, &str, &str)] = &[
    ("printer settings", "parts", "xl/printersettings/", ""),
    ("pivot tables", "parts", "xl/pivottables/", ".xml"),
    ("slicers", "slicer parts", "xl/slicers/", ".xml"),
    ("slicers", "slicer cache parts", "xl/slicercaches/", ".xml"),
    ("embeddings", "parts", "xl/embeddings/", ""),
    ("ctrlProps", "parts", "xl/ctrlprops/", ".xml"),
    ("threaded comments", "parts", "xl/threadedcomments/", ".xml"),
    ("persons", "parts", "xl/persons/", ".xml"),
];

/// Per feature name, per scope (`"workbook"` or the sheet's name, never a
/// part name), the sorted canonical fingerprints of the feature's instances.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Inventory {
    pub features: BTreeMap<(&'static str, String), Vec<String>>,
}

impl Inventory {
    /// Records one instance of `feature` in `scope`.
    fn add(&mut self, feature: &'static str, scope: &str, fingerprint: String) {
        self.features
            .entry((feature, scope.to_owned()))
            .or_default()
            .push(fingerprint);
    }
}

/// The features of the package `xlsx`; an error when it is not a zip or
/// has no readable workbook part. Unreadable or oversized parts are skipped.
pub fn inventory(xlsx: &[u8]) -> Result<Inventory, String> {
    let mut package = Package::open(xlsx)?;
    let workbook = Workbook::read(&mut package)?;
    let mut inventory = Inventory::default();
    workbook_features(&mut inventory, &workbook);
    for sheet in &workbook.sheets {
        sheet_features(&mut inventory, &mut package, &workbook, sheet);
    }
    package_features(&mut inventory, &mut package, &workbook);
    for fingerprints in inventory.features.values_mut() {
        fingerprints.sort();
    }
    Ok(inventory)
}

/// For each feature of `before`: kept when `after` has the same fingerprints
/// in every scope where `before` has the feature, else lost, with the first
/// difference as the reason (empty for kept features).
pub fn compare(before: &Inventory, after: &Inventory) -> Vec<(&'static str, bool, String)> {
    let mut verdicts: Vec<(&'static str, bool, String)> = Vec::new();
    // Keys sort by feature first: the scopes of a feature are consecutive.
    for ((feature, scope), fingerprints) in &before.features {
        let after = after.features.get(&(*feature, scope.clone()));
        let grown = match after {
            Some(after) if GROWING.contains(feature) => Some(with_growth(fingerprints, after)),
            _ => None,
        };
        let reason = difference(scope, grown.as_deref().unwrap_or(fingerprints), after);
        match verdicts.last_mut() {
            Some(last) if last.0 == *feature => {
                if let (true, Some(reason)) = (last.1, reason) {
                    *last = (feature, false, reason);
                }
            }
            _ => verdicts.push((feature, reason.is_none(), reason.unwrap_or_default())),
        }
    }
    verdicts
}

/// Features whose ranges grow to take the inserted row in, as in a
/// spreadsheet app when someone types under a table: a fingerprint whose
/// ranges all end one row further down after the write counts as kept.
const GROWING: &[&str] = &["tableParts", "autoFilter", "definedNames"];

/// `before` (sorted) with each fingerprint that `after` holds grown (see
/// [`grown`]) replaced by its grown form, sorted again.
fn with_growth(before: &[String], after: &[String]) -> Vec<String> {
    let mut out: Vec<String> = before
        .iter()
        .map(|fingerprint| {
            let grown = grown(fingerprint);
            match after.binary_search(&grown) {
                Ok(_) => grown,
                Err(_) => fingerprint.clone(),
            }
        })
        .collect();
    out.sort();
    out
}

/// `text` with every cell range (`A1:C7`, `$A$1:$C$7`) one row longer.
fn grown(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 4);
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':'
            && let Some(end_digits) = cell_after(bytes, i + 1)
            && cell_before(bytes, i)
        {
            let digits_start = (i + 1..end_digits)
                .rev()
                .take_while(|&j| bytes[j].is_ascii_digit())
                .last()
                .unwrap_or(end_digits);
            if let Ok(row) = text[digits_start..end_digits].parse::<u64>() {
                out.push_str(&text[copied..digits_start]);
                out.push_str(&(row + 1).to_string());
                copied = end_digits;
                i = end_digits;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// The end of a cell reference (`$C$7`, `C7`) starting at `start`.
fn cell_after(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    if bytes.get(i) == Some(&b'$') {
        i += 1;
    }
    let letters = bytes[i.min(bytes.len())..]
        .iter()
        .take_while(|b| b.is_ascii_uppercase())
        .count();
    i += letters;
    if bytes.get(i) == Some(&b'$') {
        i += 1;
    }
    let digits = bytes[i.min(bytes.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    (letters > 0 && digits > 0).then_some(i + digits)
}

/// Whether a cell reference ends just before `end`.
fn cell_before(bytes: &[u8], end: usize) -> bool {
    let digits = bytes[..end]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let mut i = end - digits;
    if i > 0 && bytes[i - 1] == b'$' {
        i -= 1;
    }
    digits > 0 && i > 0 && bytes[i - 1].is_ascii_uppercase()
}

/// Why the fingerprints of a scope differ after the rewrite, or `None`
/// when they are equal.
fn difference(scope: &str, before: &[String], after: Option<&Vec<String>>) -> Option<String> {
    let reason = match after {
        None => format!("{scope}: absent, had {}", before.first()?),
        Some(after) if after == before => return None,
        Some(after) => match first_difference(before, after)? {
            Difference::Lost(fingerprint) => format!("{scope}: lost {fingerprint}"),
            Difference::Added(fingerprint) => format!("{scope}: added {fingerprint}"),
        },
    };
    Some(reason.chars().take(MAX_REASON_CHARS).collect())
}

/// The first way two sorted fingerprint lists differ.
enum Difference<'a> {
    /// A fingerprint of the first list the second lacks.
    Lost(&'a str),
    /// A fingerprint the second list has beyond the first's.
    Added(&'a str),
}

/// The first fingerprint of `before` missing from `after` (both sorted), or
/// failing that the first one `after` has in excess.
fn first_difference<'a>(before: &'a [String], after: &'a [String]) -> Option<Difference<'a>> {
    let (mut i, mut j) = (0, 0);
    let mut added = None;
    while let Some(had) = before.get(i) {
        match after.get(j).map(|has| has.cmp(had)) {
            Some(Ordering::Equal) => (i, j) = (i + 1, j + 1),
            Some(Ordering::Less) => {
                added.get_or_insert(after[j].as_str());
                j += 1;
            }
            _ => return Some(Difference::Lost(had)),
        }
    }
    added
        .or(after.get(j).map(String::as_str))
        .map(Difference::Added)
}

// ---------------------------------------------------------------------------
// Workbook-level features

/// What the inventory needs of the workbook part.
struct Workbook {
    root: Element,
    relationships: Vec<Relationship>,
    /// Relationship ids of the workbook part, described by target.
    descriptions: BTreeMap<String, String>,
    /// Every `<sheet>` of `<sheets>`, in order (`localSheetId` indexes it).
    sheets: Vec<Sheet>,
    styles: Styles,
}

/// A `<sheet>` of the workbook.
struct Sheet {
    name: String,
    /// `visible`, `hidden` or `veryHidden`.
    state: String,
    /// The last segment of its relationship type: `worksheet`, `chartsheet`…
    kind: String,
    /// Its part, when the relationship resolves to one inside the package.
    part: Option<String>,
}

impl Workbook {
    /// Reads the workbook part the package relationships name (or
    /// `xl/workbook.xml`), its relationships and the styles part.
    fn read(package: &mut Package) -> Result<Workbook, String> {
        let root_relationships = package.relationships("");
        let part = related_part(&root_relationships, "officeDocument")
            .unwrap_or("xl/workbook.xml")
            .to_owned();
        let root = package.xml(&part)?;
        let relationships = package.relationships(&part);
        let descriptions = package.describe(&relationships);
        let sheets = root
            .child("sheets")
            .into_iter()
            .flat_map(Element::elements)
            .filter(|sheet| sheet.name == "sheet")
            .map(|sheet| read_sheet(sheet, &relationships))
            .collect();
        let styles_part = related_part(&relationships, "styles").unwrap_or("xl/styles.xml");
        let styles = package
            .xml(styles_part)
            .map(|styles| Styles::read(&styles))
            .unwrap_or_default();
        Ok(Workbook {
            root,
            relationships,
            descriptions,
            sheets,
            styles,
        })
    }

    /// The name of the sheet a `localSheetId` designates.
    fn sheet_name(&self, index: &str) -> Option<&str> {
        let index: usize = index.trim().parse().ok()?;
        self.sheets.get(index).map(|sheet| sheet.name.as_str())
    }
}

/// A `<sheet>` element with its relationship resolved.
fn read_sheet(sheet: &Element, relationships: &[Relationship]) -> Sheet {
    let relationship = sheet
        .relationship_attr("id")
        .and_then(|id| relationships.iter().find(|r| r.id == id));
    Sheet {
        name: sheet.attr("name").unwrap_or_default().to_owned(),
        state: sheet.attr("state").unwrap_or("visible").to_owned(),
        kind: relationship.map_or_else(String::new, |r| r.kind.clone()),
        part: relationship.and_then(|r| r.part()).map(str::to_owned),
    }
}

/// The features of `xl/workbook.xml` (`calcPr` is not one).
fn workbook_features(inventory: &mut Inventory, workbook: &Workbook) {
    let context = Context {
        relationships: &workbook.descriptions,
        dxfs: &workbook.styles.dxfs,
    };
    for sheet in &workbook.sheets {
        let fingerprint = format!("{:?} {} {}", sheet.name, sheet.state, sheet.kind);
        inventory.add("sheets", WORKBOOK, fingerprint);
    }
    for child in top_level(&workbook.root)
        .into_iter()
        .filter(|child| !child.is_empty())
    {
        match child.name.as_str() {
            "workbookPr" => {
                let properties =
                    child.without("workbookPr", &["defaultThemeVersion", "filterPrivacy"]);
                if !properties.is_empty() {
                    inventory.add("workbookPr", WORKBOOK, context.canonical(&properties));
                }
            }
            "workbookProtection" => {
                inventory.add("workbookProtection", WORKBOOK, context.canonical(child));
            }
            "bookViews" => {
                let window = ["xWindow", "yWindow", "windowWidth", "windowHeight"];
                let views = child.without("workbookView", &window);
                inventory.add("bookViews", WORKBOOK, context.canonical(&views));
            }
            "definedNames" => {
                for name in child.elements().filter(|e| e.name == "definedName") {
                    let name = with_sheet_name(name, workbook);
                    inventory.add("definedNames", WORKBOOK, context.canonical(&name));
                }
            }
            "externalReferences" => {
                add_count(
                    inventory,
                    "externalReferences",
                    "references",
                    child.elements().count(),
                );
            }
            "pivotCaches" => {
                add_count(inventory, "pivotCaches", "caches", child.elements().count());
            }
            "extLst" => {
                for ext in child.elements() {
                    inventory.add("workbook extLst", WORKBOOK, context.canonical(ext));
                }
            }
            _ => {}
        }
    }
}

/// A `<definedName>` whose `localSheetId` is replaced by the sheet's name.
fn with_sheet_name(name: &Element, workbook: &Workbook) -> Element {
    let mut name = name.clone();
    for attribute in &mut name.attributes {
        if attribute.namespace.is_empty() && attribute.name == "localSheetId" {
            attribute.value = match workbook.sheet_name(&attribute.value) {
                Some(sheet) => format!("sheet {sheet}"),
                None => "missing sheet".to_owned(),
            };
        }
    }
    name
}

/// Records a counted feature in the workbook scope, when there is any:
/// `<count> <what>`.
fn add_count(inventory: &mut Inventory, feature: &'static str, what: &str, count: usize) {
    if count > 0 {
        inventory.add(feature, WORKBOOK, format!("{count} {what}"));
    }
}

// ---------------------------------------------------------------------------
// Sheet-level features

/// The features of one sheet: a worksheet's XML, rows, drawing and notes,
/// or a chart sheet's name and charts.
fn sheet_features(
    inventory: &mut Inventory,
    package: &mut Package,
    workbook: &Workbook,
    sheet: &Sheet,
) {
    let Some(part) = sheet.part.as_deref().filter(|part| package.contains(part)) else {
        return;
    };
    match sheet.kind.as_str() {
        "worksheet" => {
            let Ok(root) = package.xml_rows(part) else {
                return;
            };
            let relationships = package.relationships(part);
            let context = Context {
                relationships: &package.describe(&relationships),
                dxfs: &workbook.styles.dxfs,
            };
            worksheet_features(
                inventory,
                package,
                &sheet.name,
                &root,
                &context,
                &relationships,
            );
            drawing_features(inventory, package, &sheet.name, &relationships);
            note_features(inventory, package, &sheet.name, &relationships);
        }
        "chartsheet" => {
            inventory.add("chart sheets", WORKBOOK, sheet.name.clone());
            let relationships = package.relationships(part);
            drawing_features(inventory, package, &sheet.name, &relationships);
        }
        _ => {}
    }
}

/// The features of a worksheet's top-level elements.
fn worksheet_features(
    inventory: &mut Inventory,
    package: &mut Package,
    scope: &str,
    root: &Element,
    context: &Context,
    relationships: &[Relationship],
) {
    for child in top_level(root)
        .into_iter()
        .filter(|child| !child.is_empty())
    {
        match child.name.as_str() {
            "sheetData" => row_features(inventory, scope, child),
            "sheetViews" => {
                let views = child.without("sheetView", &["tabSelected"]);
                inventory.add("sheetViews", scope, context.canonical(&views));
            }
            "cols" => {
                for range in column_ranges(child, context) {
                    inventory.add("cols", scope, range);
                }
            }
            "tableParts" => {
                for table in child.elements() {
                    let fingerprint = table_fingerprint(package, table, relationships, context);
                    inventory.add("tableParts", scope, fingerprint);
                }
            }
            name => {
                if let Some(feature) = LIST_SHEET_ELEMENTS.iter().find(|f| **f == name) {
                    for item in child.elements().filter(|item| !item.is_empty()) {
                        inventory.add(feature, scope, context.canonical(item));
                    }
                } else if let Some(feature) = WHOLE_SHEET_ELEMENTS.iter().find(|f| **f == name) {
                    inventory.add(feature, scope, context.canonical(child));
                }
            }
        }
    }
}

/// The row-level features of `<sheetData>`, from the rows' attributes
/// only (cells are not inventoried): collapsed outlines, row formats,
/// custom heights, hidden rows and outline levels.
fn row_features(inventory: &mut Inventory, scope: &str, sheet_data: &Element) {
    let mut previous = 0u64;
    for row in sheet_data.elements().filter(|e| e.name == "row") {
        // A row without `r` follows the previous one.
        let number = row
            .attr("r")
            .and_then(|r| r.trim().parse().ok())
            .unwrap_or(previous + 1);
        previous = number;
        if is_true(row.attr("collapsed")) {
            inventory.add("outline collapse", scope, number.to_string());
        }
        if is_true(row.attr("customFormat")) {
            inventory.add("row formats", scope, number.to_string());
        }
        if is_true(row.attr("customHeight")) {
            let height = row.attr("ht").map_or_else(String::new, canonical_value);
            inventory.add("row heights", scope, format!("{number} {height}"));
        }
        if is_true(row.attr("hidden")) {
            inventory.add("hidden rows", scope, number.to_string());
        }
        if let Some(level) = row.attr("outlineLevel").filter(|level| level.trim() != "0") {
            inventory.add("row outline levels", scope, format!("{number} {level}"));
        }
    }
}

/// Whether an XML boolean attribute is set.
pub(crate) fn is_true(value: Option<&str>) -> bool {
    matches!(value.map(str::trim), Some("1" | "true"))
}

/// The column definitions of `<cols>` without their style index (which a
/// rewrite renumbers), adjacent ranges with equal settings merged so that
/// splitting or joining ranges does not matter: `min-max settings` each.
fn column_ranges(cols: &Element, context: &Context) -> Vec<String> {
    let mut ranges: Vec<(u32, u32, String)> = cols
        .elements()
        .filter(|col| col.name == "col")
        .filter_map(|col| {
            let min = col.attr("min")?.trim().parse().ok()?;
            let max = col.attr("max")?.trim().parse().ok()?;
            let settings = col.without("col", &["min", "max", "style"]);
            Some((min, max, context.canonical(&settings)))
        })
        .collect();
    ranges.sort();
    let mut merged: Vec<(u32, u32, String)> = Vec::with_capacity(ranges.len());
    for (min, max, settings) in ranges {
        match merged.last_mut() {
            Some(last) if last.1.checked_add(1) == Some(min) && last.2 == settings => last.1 = max,
            _ => merged.push((min, max, settings)),
        }
    }
    merged
        .into_iter()
        .map(|(min, max, settings)| format!("{min}-{max} {settings}"))
        .collect()
}

/// A `<tablePart>` fingerprinted by the table part it refers to (its
/// `id`, unique across the workbook and renumbered by rewrites, dropped).
fn table_fingerprint(
    package: &mut Package,
    table_part: &Element,
    relationships: &[Relationship],
    context: &Context,
) -> String {
    let Some(part) = table_part
        .relationship_attr("id")
        .and_then(|id| target_part(relationships, id))
    else {
        return "unresolved table".to_owned();
    };
    let Ok(table) = package.xml(part) else {
        return "unreadable table".to_owned();
    };
    let descriptions = package.describe_part(part);
    let context = Context {
        relationships: &descriptions,
        dxfs: context.dxfs,
    };
    context.canonical(&table.without("table", &["id"]))
}

/// The charts, images and shapes anchored on the drawings of a sheet.
fn drawing_features(
    inventory: &mut Inventory,
    package: &mut Package,
    scope: &str,
    relationships: &[Relationship],
) {
    for part in parts_of_kind(relationships, "drawing") {
        let Ok(drawing) = package.xml(part) else {
            continue;
        };
        let drawing_relationships = package.relationships(part);
        for anchor in drawing.descendants() {
            if !matches!(
                anchor.name.as_str(),
                "twoCellAnchor" | "oneCellAnchor" | "absoluteAnchor"
            ) {
                continue;
            }
            let position = anchor_position(anchor);
            let (feature, summary) = match anchored_object(anchor) {
                Some(Anchored::Chart(chart)) => (
                    "charts",
                    chart_summary(package, &drawing_relationships, chart),
                ),
                Some(Anchored::Image(picture)) => (
                    "images",
                    image_summary(package, &drawing_relationships, picture),
                ),
                Some(Anchored::Shape(shape)) => ("shapes", shape_summary(shape)),
                None => continue,
            };
            inventory.add(feature, scope, format!("{position} {summary}"));
        }
    }
}

/// Where an anchor puts its object: its `from`, `to`, `pos` and `ext`.
fn anchor_position(anchor: &Element) -> String {
    anchor
        .elements()
        .filter(|e| matches!(e.name.as_str(), "from" | "to" | "pos" | "ext"))
        .map(|e| Context::NONE.canonical(e))
        .collect()
}

/// What a drawing anchor holds, by the element that describes it.
enum Anchored<'a> {
    /// A chart frame's `<c:chart r:id>`.
    Chart(&'a Element),
    /// A `<pic>`.
    Image(&'a Element),
    /// An `<sp>`, `<cxnSp>` or `<grpSp>`.
    Shape(&'a Element),
}

/// The first chart, picture or shape an anchor holds.
fn anchored_object(anchor: &Element) -> Option<Anchored<'_>> {
    anchor
        .descendants()
        .into_iter()
        .find_map(|e| match e.name.as_str() {
            "chart" if e.relationship_attr("id").is_some() => Some(Anchored::Chart(e)),
            "pic" => Some(Anchored::Image(e)),
            "sp" | "cxnSp" | "grpSp" => Some(Anchored::Shape(e)),
            _ => None,
        })
}

/// A chart by the chart types of its plot area and its formula references
/// (series values, categories, titles), in order.
fn chart_summary(package: &mut Package, relationships: &[Relationship], chart: &Element) -> String {
    let Some(part) = chart
        .relationship_attr("id")
        .and_then(|id| target_part(relationships, id))
    else {
        return "unresolved chart".to_owned();
    };
    let Ok(root) = package.xml(part) else {
        return "unreadable chart".to_owned();
    };
    let mut types = Vec::new();
    let mut references = Vec::new();
    for element in root.descendants() {
        match element.name.as_str() {
            "plotArea" => types.extend(
                element
                    .elements()
                    .filter(|e| e.name.ends_with("Chart"))
                    .map(|e| e.name.clone()),
            ),
            // chartex: the chart type is the series' layout.
            "series" => types.extend(element.attr("layoutId").map(str::to_owned)),
            "f" => references.push(element.text()),
            _ => {}
        }
    }
    format!("chart {types:?} refs {references:?}")
}

/// A picture by the content type, size and digest of its image.
fn image_summary(
    package: &mut Package,
    relationships: &[Relationship],
    picture: &Element,
) -> String {
    let Some(blip) = picture.descendants().into_iter().find(|e| e.name == "blip") else {
        return "image without blip".to_owned();
    };
    let id = blip
        .relationship_attr("embed")
        .or_else(|| blip.relationship_attr("link"));
    let Some(relationship) = id.and_then(|id| relationships.iter().find(|r| r.id == id)) else {
        return "unresolved image".to_owned();
    };
    match &relationship.target {
        Target::External(address) => format!("linked image {address}"),
        Target::Part(part) => {
            let content_type = package.content_type(part).unwrap_or("?").to_owned();
            let digest = package.digest(part).unwrap_or_else(|| "missing".to_owned());
            format!("image {content_type} {digest}")
        }
    }
}

/// A shape by its preset geometry and its text.
fn shape_summary(shape: &Element) -> String {
    let geometry = shape
        .descendants()
        .into_iter()
        .find(|e| e.name == "prstGeom")
        .and_then(|e| e.attr("prst"))
        .unwrap_or("custom");
    format!("shape {geometry} {:?}", shape.text())
}

/// The notes (legacy comments) of a sheet: each comment's cell, author and
/// text.
fn note_features(
    inventory: &mut Inventory,
    package: &mut Package,
    scope: &str,
    relationships: &[Relationship],
) {
    for part in parts_of_kind(relationships, "comments") {
        let Ok(comments) = package.xml(part) else {
            continue;
        };
        let authors: Vec<String> = comments
            .child("authors")
            .into_iter()
            .flat_map(Element::elements)
            .map(Element::text)
            .collect();
        for comment in comments
            .child("commentList")
            .into_iter()
            .flat_map(Element::elements)
        {
            let author = comment
                .attr("authorId")
                .and_then(|id| authors.get(id.trim().parse::<usize>().ok()?))
                .map_or("", String::as_str);
            let text = comment.child("text").map(Element::text).unwrap_or_default();
            let cell = comment.attr("ref").unwrap_or_default();
            inventory.add("notes", scope, format!("{cell} {author:?} {text:?}"));
        }
    }
}

// ---------------------------------------------------------------------------
// Package-level features

/// The styles the inventory needs.
#[derive(Default)]
struct Styles {
    /// Canonical forms of the differential formats (`<dxfs>`), by index.
    dxfs: Vec<String>,
    /// The first `<font>` of `<fonts>`: the workbook's default font.
    default_font: Option<String>,
    /// The names of the `<cellStyles>`.
    cell_styles: Vec<String>,
}

impl Styles {
    fn read(root: &Element) -> Styles {
        let children = |name| root.child(name).into_iter().flat_map(Element::elements);
        Styles {
            // A format's number-format id is renumbered; its code is kept.
            dxfs: children("dxfs")
                .map(|dxf| Context::NONE.canonical(&dxf.without("numFmt", &["numFmtId"])))
                .collect(),
            default_font: children("fonts")
                .next()
                .map(|font| Context::NONE.canonical(font)),
            cell_styles: children("cellStyles")
                .filter_map(|style| style.attr("name"))
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// The features carried by parts of the package rather than by the
/// workbook or sheet XML.
fn package_features(inventory: &mut Inventory, package: &mut Package, workbook: &Workbook) {
    let styles = &workbook.styles;
    if let Some(font) = &styles.default_font {
        inventory.add("default font", WORKBOOK, font.clone());
    }
    for style in &styles.cell_styles {
        inventory.add("cell styles", WORKBOOK, style.clone());
    }
    let theme = related_part(&workbook.relationships, "theme").unwrap_or("xl/theme/theme1.xml");
    if let Ok(theme) = package.xml(theme) {
        for scheme in theme.descendants() {
            if matches!(scheme.name.as_str(), "clrScheme" | "fontScheme") {
                inventory.add("theme", WORKBOOK, Context::NONE.canonical(scheme));
            }
        }
    }
    custom_properties(inventory, package);
    let vba = related_part(&workbook.relationships, "vbaProject").unwrap_or("xl/vbaProject.bin");
    if let Some(digest) = package.digest(vba) {
        inventory.add("vba", WORKBOOK, digest);
    }
    for (feature, what, folder, ending) in COUNTED_PARTS {
        add_count(
            inventory,
            feature,
            what,
            package.parts_in(folder, ending).count(),
        );
    }
    let custom_xml = package.parts_in("customxml/", ".xml").filter(|part| {
        part.strip_prefix("customxml/item")
            .and_then(|rest| rest.strip_suffix(".xml"))
            .is_some_and(is_digits)
    });
    add_count(inventory, "custom xml", "item parts", custom_xml.count());
    let links: Vec<String> = package
        .parts_in("xl/externallinks/", ".xml")
        .map(str::to_owned)
        .collect();
    for link in links {
        if let Ok(root) = package.xml(&link) {
            let descriptions = package.describe_part(&link);
            let context = Context {
                relationships: &descriptions,
                dxfs: &[],
            };
            inventory.add("external links", WORKBOOK, context.canonical(&root));
        }
    }
    let metadata =
        related_part(&workbook.relationships, "sheetMetadata").unwrap_or("xl/metadata.xml");
    if let Ok(metadata) = package.xml(metadata) {
        inventory.add("metadata", WORKBOOK, Context::NONE.canonical(&metadata));
    }
}

/// The custom document properties: each property's name and value.
fn custom_properties(inventory: &mut Inventory, package: &mut Package) {
    let root_relationships = package.relationships("");
    let part =
        related_part(&root_relationships, "custom-properties").unwrap_or("docprops/custom.xml");
    let Ok(properties) = package.xml(part) else {
        return;
    };
    for property in properties.elements().filter(|e| e.name == "property") {
        let name = property.attr("name").unwrap_or_default();
        let value: String = property
            .elements()
            .map(|v| Context::NONE.canonical(v))
            .collect();
        inventory.add("custom properties", WORKBOOK, format!("{name:?} {value}"));
    }
}

// ---------------------------------------------------------------------------
// The package: parts, content types, relationships

/// A zip package, its parts looked up by normalized name (lower case, no
/// leading slash: part names are case-insensitive).
pub(crate) struct Package<'a> {
    archive: zip::ZipArchive<Cursor<&'a [u8]>>,
    /// Normalized part name → index in the archive.
    parts: BTreeMap<String, usize>,
    content_types: ContentTypes,
}

/// The `[Content_Types].xml` of a package.
#[derive(Default)]
struct ContentTypes {
    /// By normalized part name.
    overrides: HashMap<String, String>,
    /// By lower-case extension.
    defaults: HashMap<String, String>,
}

/// One relationship of a part.
pub(crate) struct Relationship {
    pub(crate) id: String,
    /// The last path segment of its type: `worksheet`, `drawing`, `hyperlink`…
    pub(crate) kind: String,
    target: Target,
}

pub(crate) enum Target {
    /// A normalized part name.
    Part(String),
    /// An address outside the package.
    External(String),
}

impl Relationship {
    /// The part it targets, when inside the package.
    pub(crate) fn part(&self) -> Option<&str> {
        match &self.target {
            Target::Part(part) => Some(part),
            Target::External(_) => None,
        }
    }
}

impl<'a> Package<'a> {
    /// Opens the zip and reads its content types; at most [`MAX_PARTS`]
    /// entries are considered.
    pub(crate) fn open(xlsx: &'a [u8]) -> Result<Package<'a>, String> {
        let archive = zip::ZipArchive::new(Cursor::new(xlsx))
            .map_err(|error| format!("not a zip package: {error}"))?;
        let parts = (0..archive.len().min(MAX_PARTS))
            .filter_map(|index| {
                let name = archive.name_for_index(index)?.ok()?;
                (!name.ends_with('/')).then(|| (part_name(&name), index))
            })
            .collect();
        let mut package = Package {
            archive,
            parts,
            content_types: ContentTypes::default(),
        };
        if let Ok(types) = package.xml("[content_types].xml") {
            package.content_types = ContentTypes::read(&types);
        }
        Ok(package)
    }

    /// Whether the package has the part (a normalized name).
    fn contains(&self, part: &str) -> bool {
        self.parts.contains_key(part)
    }

    /// The unpacked bytes of a part, refused beyond [`MAX_PART_BYTES`].
    pub(crate) fn bytes(&mut self, part: &str) -> Result<Vec<u8>, String> {
        let index = *self
            .parts
            .get(part)
            .ok_or_else(|| format!("{part}: missing"))?;
        let entry = self
            .archive
            .by_index(index)
            .map_err(|error| format!("{part}: {error}"))?;
        let mut bytes = Vec::new();
        entry
            .take(MAX_PART_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| format!("{part}: {error}"))?;
        if bytes.len() as u64 > MAX_PART_BYTES {
            return Err(format!("{part}: larger than {} MiB", MAX_PART_BYTES >> 20));
        }
        Ok(bytes)
    }

    /// The XML tree of a part.
    pub(crate) fn xml(&mut self, part: &str) -> Result<Element, String> {
        parse(&self.bytes(part)?, None).map_err(|error| format!("{part}: {error}"))
    }

    /// The XML tree of a worksheet, its rows without their cells.
    fn xml_rows(&mut self, part: &str) -> Result<Element, String> {
        parse(&self.bytes(part)?, Some("sheetData")).map_err(|error| format!("{part}: {error}"))
    }

    /// The size and FNV-1a digest of a part, or `None` when unreadable.
    fn digest(&mut self, part: &str) -> Option<String> {
        let bytes = self.bytes(part).ok()?;
        Some(format!("{} bytes fnv {:016x}", bytes.len(), fnv1a(&bytes)))
    }

    /// The content type of a part: its override, else its extension's
    /// default.
    fn content_type(&self, part: &str) -> Option<&str> {
        let types = &self.content_types;
        let extension = part.rsplit_once('.').map_or("", |(_, extension)| extension);
        types
            .overrides
            .get(part)
            .or_else(|| types.defaults.get(extension))
            .map(String::as_str)
    }

    /// The parts directly in `folder` whose names end with `ending`.
    fn parts_in<'s>(&'s self, folder: &'s str, ending: &'s str) -> impl Iterator<Item = &'s str> {
        self.parts.keys().map(String::as_str).filter(move |part| {
            part.strip_prefix(folder)
                .is_some_and(|file| !file.contains('/') && file.ends_with(ending))
        })
    }

    /// The relationships of `source` (`""` for the package's own), targets
    /// resolved to normalized part names; none when its rels part is
    /// missing or malformed.
    pub(crate) fn relationships(&mut self, source: &str) -> Vec<Relationship> {
        let Ok(rels) = self.xml(&rels_part(source)) else {
            return Vec::new();
        };
        rels.elements()
            .filter(|e| e.name == "Relationship")
            .filter_map(|relationship| {
                let target = relationship.attr("Target")?;
                let external = relationship.attr("TargetMode") == Some("External");
                Some(Relationship {
                    id: relationship.attr("Id")?.to_owned(),
                    kind: relationship.attr("Type")?.rsplit('/').next()?.to_owned(),
                    target: if external {
                        Target::External(target.to_owned())
                    } else {
                        Target::Part(resolve(source, target))
                    },
                })
            })
            .collect()
    }

    /// The relationships of `part`, [described](Self::describe).
    fn describe_part(&mut self, part: &str) -> BTreeMap<String, String> {
        let relationships = self.relationships(part);
        self.describe(&relationships)
    }

    /// Each relationship id described by its target, for [`Context`]: the
    /// relationship's kind and the target's content type, or its address
    /// when outside the package.
    fn describe(&self, relationships: &[Relationship]) -> BTreeMap<String, String> {
        relationships
            .iter()
            .map(|relationship| {
                let target = match &relationship.target {
                    Target::External(address) => address.clone(),
                    Target::Part(part) if !self.contains(part) => "missing part".to_owned(),
                    Target::Part(part) => self.content_type(part).unwrap_or("?").to_owned(),
                };
                (
                    relationship.id.clone(),
                    format!("{} {target}", relationship.kind),
                )
            })
            .collect()
    }
}

impl ContentTypes {
    fn read(root: &Element) -> ContentTypes {
        let mut types = ContentTypes::default();
        for entry in root.elements() {
            let Some(content_type) = entry.attr("ContentType") else {
                continue;
            };
            match (
                entry.name.as_str(),
                entry.attr("PartName"),
                entry.attr("Extension"),
            ) {
                ("Override", Some(part), _) => {
                    types
                        .overrides
                        .insert(part_name(part), content_type.to_owned());
                }
                ("Default", _, Some(extension)) => {
                    types
                        .defaults
                        .insert(extension.to_lowercase(), content_type.to_owned());
                }
                _ => {}
            }
        }
        types
    }
}

/// A part name normalized for lookup: lower case, `/` separated, no
/// leading slash.
fn part_name(name: &str) -> String {
    name.replace('\\', "/")
        .trim_start_matches('/')
        .to_lowercase()
}

/// The rels part holding the relationships of `source`.
fn rels_part(source: &str) -> String {
    match source.rsplit_once('/') {
        Some((folder, file)) => format!("{folder}/_rels/{file}.rels"),
        None => format!("_rels/{source}.rels"),
    }
}

/// The normalized part name a relationship target designates: absolute
/// (`/xl/worksheets/sheet1.xml`) or relative to the source's folder
/// (`worksheets/sheet1.xml`, `../drawings/drawing1.xml`).
fn resolve(source: &str, target: &str) -> String {
    let target = target.split('#').next().unwrap_or_default();
    if target.starts_with('/') {
        return part_name(target);
    }
    let folder = source.rsplit_once('/').map_or("", |(folder, _)| folder);
    let mut segments: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    for segment in target.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            segment => segments.push(segment),
        }
    }
    part_name(&segments.join("/"))
}

/// The first part targeted by a relationship of `kind`.
pub(crate) fn related_part<'r>(relationships: &'r [Relationship], kind: &str) -> Option<&'r str> {
    relationships
        .iter()
        .filter(|r| r.kind == kind)
        .find_map(Relationship::part)
}

/// The parts targeted by the relationships of `kind`.
fn parts_of_kind<'r>(
    relationships: &'r [Relationship],
    kind: &'r str,
) -> impl Iterator<Item = &'r str> {
    relationships
        .iter()
        .filter(move |r| r.kind == kind)
        .filter_map(Relationship::part)
}

/// The part the relationship `id` targets.
fn target_part<'r>(relationships: &'r [Relationship], id: &str) -> Option<&'r str> {
    relationships.iter().find(|r| r.id == id)?.part()
}

/// 64-bit FNV-1a: a stable digest of a part's bytes.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

// ---------------------------------------------------------------------------
// XML trees and their canonical form

/// An XML element, names reduced to their local part.
#[derive(Debug, Default, Clone)]
pub(crate) struct Element {
    pub(crate) name: String,
    /// Without namespace declarations.
    pub(crate) attributes: Vec<Attribute>,
    pub(crate) children: Vec<Node>,
}

#[derive(Debug, Clone)]
pub(crate) struct Attribute {
    /// The namespace its prefix is bound to, empty when unprefixed.
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// Entities resolved, whitespace normalized.
    pub(crate) value: String,
}

#[derive(Debug, Clone)]
pub(crate) enum Node {
    Element(Element),
    /// Character data, entities resolved, adjacent pieces joined.
    Text(String),
}

impl Element {
    /// An unprefixed attribute's value.
    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| a.namespace.is_empty() && a.name == name)
            .map(|a| a.value.as_str())
    }

    /// The value of a relationship-id attribute (`r:id`, `r:embed`…).
    pub(crate) fn relationship_attr(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| a.name == name && is_relationship_namespace(&a.namespace))
            .map(|a| a.value.as_str())
    }

    /// The child elements.
    pub(crate) fn elements(&self) -> impl DoubleEndedIterator<Item = &Element> {
        self.children.iter().filter_map(|child| match child {
            Node::Element(element) => Some(element),
            Node::Text(_) => None,
        })
    }

    /// The first child element named `name`.
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.elements().find(|e| e.name == name)
    }

    /// Every element below this one, in document order.
    fn descendants(&self) -> Vec<&Element> {
        let mut found = Vec::new();
        let mut pending: Vec<&Element> = self.elements().rev().collect();
        while let Some(element) = pending.pop() {
            found.push(element);
            pending.extend(element.elements().rev());
        }
        found
    }

    /// The concatenated character data below this element.
    pub(crate) fn text(&self) -> String {
        let mut text = String::new();
        self.write_text(&mut text);
        text
    }

    fn write_text(&self, out: &mut String) {
        for child in &self.children {
            match child {
                Node::Element(element) => element.write_text(out),
                Node::Text(text) => out.push_str(text),
            }
        }
    }

    /// Whether it has neither attributes (but noise) nor content: such an
    /// element says nothing a rewrite could lose.
    fn is_empty(&self) -> bool {
        self.attributes.iter().all(is_noise)
            && self.elements().next().is_none()
            && self.text().trim().is_empty()
    }

    /// A copy where the elements named `element` (this one included) lack
    /// the attributes named in `attributes`.
    fn without(&self, element: &str, attributes: &[&str]) -> Element {
        let mut copy = self.clone();
        copy.remove_attributes(element, attributes);
        copy
    }

    fn remove_attributes(&mut self, element: &str, attributes: &[&str]) {
        if self.name == element {
            self.attributes
                .retain(|a| !attributes.contains(&a.name.as_str()));
        }
        for child in &mut self.children {
            if let Node::Element(child) = child {
                child.remove_attributes(element, attributes);
            }
        }
    }
}

fn is_relationship_namespace(namespace: &str) -> bool {
    RELATIONSHIP_NAMESPACES.contains(&namespace)
}

/// The child elements of a root, `mc:AlternateContent` replaced by the
/// content of its first choice (or its fallback, without choices).
fn top_level(root: &Element) -> Vec<&Element> {
    let mut found = Vec::new();
    for child in root.elements() {
        if child.name == "AlternateContent" {
            let chosen = child.child("Choice").or_else(|| child.child("Fallback"));
            found.extend(chosen.into_iter().flat_map(Element::elements));
        } else {
            found.push(child);
        }
    }
    found
}

/// Parses XML into a tree. Children of an element named `leaf` are kept
/// without their content (`sheetData`: rows without cells).
pub(crate) fn parse(xml: &[u8], leaf: Option<&str>) -> Result<Element, String> {
    let utf8 = from_utf16(xml);
    let mut reader = NsReader::from_reader(utf8.as_ref().map_or(xml, String::as_bytes));
    let mut buf = Vec::new();
    // The document node, then the open elements.
    let mut open = vec![Element::default()];
    // Depth inside an element whose content is skipped.
    let mut skipping = 0usize;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| e.to_string())?;
        if skipping > 0 {
            match event {
                Event::Start(_) => skipping += 1,
                Event::End(_) => skipping -= 1,
                Event::Eof => return Err("unexpected end".to_owned()),
                _ => {}
            }
            buf.clear();
            continue;
        }
        match event {
            Event::Start(start) => {
                let element = start_element(&reader, &start)?;
                let in_leaf =
                    open.len() > 1 && open.last().is_some_and(|p| Some(p.name.as_str()) == leaf);
                if in_leaf {
                    append(&mut open, Node::Element(element));
                    skipping = 1;
                } else if open.len() > MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH} elements"));
                } else {
                    open.push(element);
                }
            }
            Event::Empty(start) => {
                let element = start_element(&reader, &start)?;
                append(&mut open, Node::Element(element));
            }
            Event::End(_) => {
                let Some(element) = open.pop().filter(|_| !open.is_empty()) else {
                    return Err("unbalanced end tag".to_owned());
                };
                append(&mut open, Node::Element(element));
            }
            Event::Text(text) => append_text(&mut open, &text.xml10_content()),
            Event::CData(data) => append_text(&mut open, &data.xml10_content()),
            Event::GeneralRef(reference) => append_text(&mut open, &reference_text(&reference)),
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    let document = match open.pop() {
        Some(document) if open.is_empty() => document,
        _ => return Err("unclosed element".to_owned()),
    };
    document
        .children
        .into_iter()
        .find_map(|node| match node {
            Node::Element(root) => Some(root),
            Node::Text(_) => None,
        })
        .ok_or_else(|| "no root element".to_owned())
}

/// The text of a UTF-16 part (told by its byte-order mark, or by its
/// first character `<`), or `None` when it is not UTF-16.
pub(crate) fn from_utf16(xml: &[u8]) -> Option<String> {
    let (big_endian, body) = match xml {
        [0xFE, 0xFF, body @ ..] => (true, body),
        [0xFF, 0xFE, body @ ..] => (false, body),
        [0, b'<', ..] => (true, xml),
        [b'<', 0, ..] => (false, xml),
        _ => return None,
    };
    let units: Vec<u16> = body
        .chunks_exact(2)
        .map(|pair| {
            let pair = [pair[0], pair[1]];
            if big_endian {
                u16::from_be_bytes(pair)
            } else {
                u16::from_le_bytes(pair)
            }
        })
        .collect();
    String::from_utf16(&units).ok()
}

/// An element from a start tag: local names, namespaces of prefixed
/// attributes resolved, namespace declarations dropped.
fn start_element<R>(reader: &NsReader<R>, start: &BytesStart) -> Result<Element, String> {
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        if attribute.key.as_namespace_binding().is_some() {
            continue;
        }
        let (namespace, name) = reader.resolver().resolve_attribute(attribute.key);
        let namespace = match namespace {
            ResolveResult::Bound(namespace) => namespace.as_ref().to_owned(),
            ResolveResult::Unbound | ResolveResult::Unknown(_) => String::new(),
        };
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        attributes.push(Attribute {
            namespace,
            name: name.as_ref().to_owned(),
            value: value.into_owned(),
        });
    }
    Ok(Element {
        name: start.local_name().as_ref().to_owned(),
        attributes,
        children: Vec::new(),
    })
}

/// Adds a node to the innermost open element.
fn append(open: &mut [Element], node: Node) {
    if let Some(parent) = open.last_mut() {
        parent.children.push(node);
    }
}

/// Adds text to the innermost open element, joined to text just before.
fn append_text(open: &mut [Element], text: &str) {
    let Some(parent) = open.last_mut() else {
        return;
    };
    match parent.children.last_mut() {
        Some(Node::Text(previous)) => previous.push_str(text),
        _ => parent.children.push(Node::Text(text.to_owned())),
    }
}

/// The text of a character or entity reference; an unknown entity is kept
/// as written.
fn reference_text(reference: &BytesRef) -> String {
    if let Ok(Some(character)) = reference.resolve_char_ref() {
        return character.to_string();
    }
    let name = reference.xml10_content();
    quick_xml::escape::resolve_predefined_entity(&name)
        .map_or_else(|| format!("&{name};"), str::to_owned)
}

/// What canonical values are resolved against.
struct Context<'c> {
    /// Relationship ids of the part being serialized, described by target.
    relationships: &'c BTreeMap<String, String>,
    /// Canonical differential formats, for `dxfId` and `…DxfId` attributes.
    dxfs: &'c [String],
}

/// The relationships of [`Context::NONE`].
static NO_RELATIONSHIPS: BTreeMap<String, String> = BTreeMap::new();

impl Context<'static> {
    /// Neither relationships nor differential formats.
    const NONE: Context<'static> = Context {
        relationships: &NO_RELATIONSHIPS,
        dxfs: &[],
    };
}

impl Context<'_> {
    /// The canonical serialization of an element and its subtree.
    fn canonical(&self, element: &Element) -> String {
        let mut out = String::new();
        self.write(element, &mut out);
        out
    }

    fn write(&self, element: &Element, out: &mut String) {
        let mut attributes: Vec<(&str, String)> = element
            .attributes
            .iter()
            .filter(|a| !is_noise(a))
            .map(|a| (a.name.as_str(), self.value(a)))
            .collect();
        attributes.sort();
        out.push('<');
        out.push_str(&element.name);
        for (name, value) in attributes {
            let _ = write!(out, " {name}={value:?}");
        }
        let mut children = element
            .children
            .iter()
            .filter(|child| !matches!(child, Node::Text(text) if text.trim().is_empty()))
            .peekable();
        if children.peek().is_none() {
            out.push_str("/>");
            return;
        }
        out.push('>');
        for child in children {
            match child {
                Node::Element(child) => self.write(child, out),
                Node::Text(text) => {
                    let _ = write!(out, "{text:?}");
                }
            }
        }
        let _ = write!(out, "</{}>", element.name);
    }

    /// An attribute's canonical value: a relationship id described by its
    /// target, a differential-format index by the format, a number rounded.
    fn value(&self, attribute: &Attribute) -> String {
        if is_relationship_namespace(&attribute.namespace) {
            return self
                .relationships
                .get(&attribute.value)
                .cloned()
                .unwrap_or_else(|| "unresolved relationship".to_owned());
        }
        if attribute.name == "dxfId" || attribute.name.ends_with("DxfId") {
            return attribute
                .value
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|index| self.dxfs.get(index))
                .cloned()
                .unwrap_or_else(|| "missing dxf".to_owned());
        }
        canonical_value(&attribute.value)
    }
}

/// Markup-compatibility and revision-tracking attributes (`mc:Ignorable`,
/// `xr:uid`…), which a rewrite may drop or regenerate.
fn is_noise(attribute: &Attribute) -> bool {
    let namespace = attribute.namespace.as_str();
    namespace == MARKUP_COMPATIBILITY
        || (namespace.starts_with("http://schemas.microsoft.com/office/spreadsheetml/")
            && namespace.contains("/revision"))
}

/// A value that is a number (or an XML boolean) rounded to two decimals,
/// any other value as it is. Only plain notation is a number: an integer,
/// or a decimal with a point and maybe an exponent, so that a colour such
/// as `0E2841` stays text.
fn canonical_value(value: &str) -> String {
    let text = value.trim();
    match text {
        "true" => "1.00".to_owned(),
        "false" => "0.00".to_owned(),
        _ if is_integer(text) => {
            // Exact, whatever its length: no rounding through f64.
            let negative = text.starts_with('-');
            match text.trim_start_matches(['+', '-']).trim_start_matches('0') {
                "" => "0.00".to_owned(),
                digits if negative => format!("-{digits}.00"),
                digits => format!("{digits}.00"),
            }
        }
        _ if is_decimal(text) => match text.parse::<f64>() {
            Ok(number) if number.is_finite() => match format!("{number:.2}") {
                negative_zero if negative_zero == "-0.00" => "0.00".to_owned(),
                rounded => rounded,
            },
            _ => value.to_owned(),
        },
        _ => value.to_owned(),
    }
}

/// Whether `text` is only ASCII digits, at least one.
fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `[+-]digits`
fn is_integer(text: &str) -> bool {
    is_digits(text.strip_prefix(['+', '-']).unwrap_or(text))
}

/// `[+-]digits.digits[(e|E)[+-]digits]`, digits on at least one side of
/// the point.
fn is_decimal(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let Some((whole, fraction)) = mantissa.split_once('.') else {
        return false;
    };
    (is_digits(whole) || is_digits(fraction))
        && (whole.is_empty() || is_digits(whole))
        && (fraction.is_empty() || is_digits(fraction))
        && exponent.is_none_or(is_integer)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    const RELS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    /// What a writer names freely: part names and relationship ids, and
    /// whether its targets are absolute.
    struct Names {
        sheet: &'static str,
        sheet_id: &'static str,
        drawing: &'static str,
        drawing_id: &'static str,
        link_id: &'static str,
        chart: &'static str,
        chart_id: &'static str,
        absolute: bool,
    }

    const ORIGINAL: Names = Names {
        sheet: "sheet1",
        sheet_id: "rId1",
        drawing: "drawing1",
        drawing_id: "rId2",
        link_id: "rId3",
        chart: "chart1",
        chart_id: "rId1",
        absolute: false,
    };

    const RENAMED: Names = Names {
        sheet: "sheet3",
        sheet_id: "rId7",
        drawing: "drawing2",
        drawing_id: "rId9",
        link_id: "rId1",
        chart: "chart5",
        chart_id: "rId4",
        absolute: true,
    };

    /// A worksheet; `{link}` and `{drawing}` stand for relationship ids.
    const SHEET: &str = r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">
  <sheetViews><sheetView tabSelected="1" workbookViewId="0" zoomScale="120"/></sheetViews>
  <cols><col min="1" max="2" width="15.78" customWidth="1" style="3"/></cols>
  <sheetData>
    <row r="1"><c r="A1"><v>1</v></c></row>
    <row r="2" customFormat="1" s="2" collapsed="1"><c r="A2"/></row>
  </sheetData>
  <mergeCells count="1"><mergeCell ref="A1:B1"/></mergeCells>
  <conditionalFormatting sqref="A1:A9"><cfRule type="cellIs" dxfId="0" priority="1" operator="greaterThan"><formula>5</formula></cfRule></conditionalFormatting>
  <hyperlinks><hyperlink ref="A3" r:id="{link}"/></hyperlinks>
  <headerFooter/>
  <drawing r:id="{drawing}"/>
</worksheet>"#;

    /// [`SHEET`] as another writer could put it: other prefixes, attributes
    /// in another order, other whitespace, markup-compatibility and
    /// revision noise, a column range split in two.
    const PREFIXED_SHEET: &str = r#"<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:rel="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision" mc:Ignorable="xr"><x:sheetViews><x:sheetView zoomScale="120.0" workbookViewId="0"/></x:sheetViews><x:cols><x:col style="9" customWidth="true" width="15.780000000000001" max="1" min="1"/><x:col min="2" max="2" customWidth="1" width="15.78"/></x:cols><x:sheetData><x:row r="1"/><x:row collapsed="true" customFormat="1" r="2"/></x:sheetData><x:mergeCells><x:mergeCell ref="A1:B1"/></x:mergeCells><x:conditionalFormatting xr:uid="{00000000-0001-0000-0000-000000000000}" sqref="A1:A9"><x:cfRule operator="greaterThan" priority="1" dxfId="0" type="cellIs">
      <x:formula>5</x:formula>
    </x:cfRule></x:conditionalFormatting><x:hyperlinks><x:hyperlink rel:id="{link}" ref="A3"/></x:hyperlinks><x:drawing rel:id="{drawing}"/></x:worksheet>"#;

    const DRAWING: &str = r#"<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">
  <xdr:twoCellAnchor>
    <xdr:from><xdr:col>3</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>1</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>
    <xdr:to><xdr:col>9</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>15</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>
    <xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Chart 1"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>
      <a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart r:id="{chart}"/></a:graphicData></a:graphic>
    </xdr:graphicFrame><xdr:clientData/>
  </xdr:twoCellAnchor>
  <xdr:oneCellAnchor>
    <xdr:from><xdr:col>1</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>20</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>
    <xdr:ext cx="100" cy="100"/>
    <xdr:sp><xdr:spPr><a:prstGeom prst="rect"/></xdr:spPr><xdr:txBody><a:p><a:r><a:t>Note</a:t></a:r></a:p></xdr:txBody></xdr:sp><xdr:clientData/>
  </xdr:oneCellAnchor>
</xdr:wsDr>"#;

    const CHART: &str = r#"<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart><c:plotArea><c:layout/><c:barChart><c:barDir val="col"/><c:ser><c:idx val="0"/><c:val><c:numRef><c:f>Data!$B$1:$B$3</c:f></c:numRef></c:val></c:ser></c:barChart></c:plotArea></c:chart></c:chartSpace>"#;

    const THEME: &str = r#"<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Office Theme"><a:themeElements><a:clrScheme name="Office"><a:dk1><a:srgbClr val="1F1F1F"/></a:dk1></a:clrScheme><a:fontScheme name="Office"><a:majorFont><a:latin typeface="Calibri Light"/></a:majorFont></a:fontScheme></a:themeElements></a:theme>"#;

    const RED_TEXT: &str = r#"<dxf><font><color rgb="FF9C0006"/></font></dxf>"#;
    const YELLOW_FILL: &str =
        r#"<dxf><fill><patternFill><bgColor rgb="FFFFEB9C"/></patternFill></fill></dxf>"#;

    /// A one-sheet workbook with a chart, a shape, a hyperlink, a
    /// conditional format, styles and (optionally) a theme.
    struct Book {
        names: Names,
        sheet: String,
        dxfs: [&'static str; 2],
        theme: bool,
    }

    impl Book {
        fn new() -> Book {
            Book {
                names: ORIGINAL,
                sheet: SHEET.to_owned(),
                dxfs: [RED_TEXT, YELLOW_FILL],
                theme: true,
            }
        }

        fn renamed() -> Book {
            Book {
                names: RENAMED,
                ..Book::new()
            }
        }

        fn inventory(&self) -> Inventory {
            inventory(&self.zip()).expect("the book inventories")
        }

        fn zip(&self) -> Vec<u8> {
            let n = &self.names;
            // A target from `xl/` (workbook) or `xl/<folder>/` (sheet, drawing).
            let target = |from_folder: bool, path: &str| match (n.absolute, from_folder) {
                (true, _) => format!("/xl/{path}"),
                (false, true) => format!("../{path}"),
                (false, false) => path.to_owned(),
            };
            let sheet = format!("xl/worksheets/{}.xml", n.sheet);
            let drawing = format!("xl/drawings/{}.xml", n.drawing);
            let chart = format!("xl/charts/{}.xml", n.chart);
            let mut workbook_rels = vec![
                (
                    n.sheet_id,
                    "worksheet",
                    target(false, &format!("worksheets/{}.xml", n.sheet)),
                    false,
                ),
                ("rIdStyles", "styles", target(false, "styles.xml"), false),
            ];
            if self.theme {
                workbook_rels.push((
                    "rIdTheme",
                    "theme",
                    target(false, "theme/theme1.xml"),
                    false,
                ));
            }
            let mut parts = vec![
                (
                    "[Content_Types].xml".to_owned(),
                    content_types(&[&sheet, &drawing, &chart]),
                ),
                (
                    "_rels/.rels".to_owned(),
                    rels(&[(
                        "rId1",
                        "officeDocument",
                        "xl/workbook.xml".to_owned(),
                        false,
                    )]),
                ),
                ("xl/workbook.xml".to_owned(), workbook(n.sheet_id)),
                (
                    "xl/_rels/workbook.xml.rels".to_owned(),
                    rels(&workbook_rels),
                ),
                (
                    sheet.clone(),
                    self.sheet
                        .replace("{link}", n.link_id)
                        .replace("{drawing}", n.drawing_id),
                ),
                (
                    rels_part(&sheet),
                    rels(&[
                        (
                            n.link_id,
                            "hyperlink",
                            "https://example.com/a".to_owned(),
                            true,
                        ),
                        (
                            n.drawing_id,
                            "drawing",
                            target(true, &format!("drawings/{}.xml", n.drawing)),
                            false,
                        ),
                    ]),
                ),
                (drawing.clone(), DRAWING.replace("{chart}", n.chart_id)),
                (
                    rels_part(&drawing),
                    rels(&[(
                        n.chart_id,
                        "chart",
                        target(true, &format!("charts/{}.xml", n.chart)),
                        false,
                    )]),
                ),
                (chart, CHART.to_owned()),
                ("xl/styles.xml".to_owned(), styles(&self.dxfs)),
            ];
            if self.theme {
                parts.push(("xl/theme/theme1.xml".to_owned(), THEME.to_owned()));
            }
            zip(&parts)
        }
    }

    fn content_types(overrides: &[&str]) -> String {
        let mut xml = String::from(
            r#"<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>"#,
        );
        for part in overrides {
            let kind = part.split('/').nth(1).unwrap_or_default();
            let _ = write!(
                xml,
                r#"<Override PartName="/{part}" ContentType="application/{kind}+xml"/>"#
            );
        }
        xml + "</Types>"
    }

    fn rels(relationships: &[(&str, &str, String, bool)]) -> String {
        let mut xml = String::from(
            r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
        );
        for (id, kind, target, external) in relationships {
            let mode = if *external {
                r#" TargetMode="External""#
            } else {
                ""
            };
            let _ = write!(
                xml,
                r#"<Relationship Id="{id}" Type="{RELS}/{kind}" Target="{target}"{mode}/>"#
            );
        }
        xml + "</Relationships>"
    }

    fn workbook(sheet_id: &str) -> String {
        format!(
            r#"<workbook xmlns="{MAIN}" xmlns:r="{RELS}"><workbookPr date1904="1" defaultThemeVersion="124226"/><bookViews><workbookView xWindow="0" yWindow="0" windowWidth="1000" windowHeight="800"/></bookViews><sheets><sheet name="Data" sheetId="1" r:id="{sheet_id}"/></sheets><definedNames><definedName name="_xlnm.Print_Area" localSheetId="0">Data!$A$1:$B$2</definedName></definedNames><calcPr calcId="191029"/></workbook>"#
        )
    }

    fn styles(dxfs: &[&str]) -> String {
        format!(
            r#"<styleSheet xmlns="{MAIN}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><dxfs count="{}">{}</dxfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>"#,
            dxfs.len(),
            dxfs.concat()
        )
    }

    fn zip(parts: &[(String, String)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, content) in parts {
            zip.start_file(name.as_str(), zip::write::SimpleFileOptions::default())
                .expect("a zip entry");
            zip.write_all(content.as_bytes()).expect("a zip entry");
        }
        zip.finish().expect("a zip").into_inner()
    }

    /// The features `compare` finds lost.
    fn lost(before: &Inventory, after: &Inventory) -> Vec<&'static str> {
        compare(before, after)
            .into_iter()
            .filter(|(_, kept, _)| !kept)
            .map(|(feature, _, _)| feature)
            .collect()
    }

    fn fingerprints<'i>(
        inventory: &'i Inventory,
        feature: &'static str,
        scope: &str,
    ) -> &'i [String] {
        inventory
            .features
            .get(&(feature, scope.to_owned()))
            .map_or(&[], Vec::as_slice)
    }

    #[test]
    fn renamed_parts_and_renumbered_ids_compare_equal() {
        let original = Book::new().inventory();
        let renamed = Book::renamed().inventory();
        assert_eq!(original, renamed);
        assert!(
            compare(&original, &renamed)
                .iter()
                .all(|(_, kept, _)| *kept)
        );
    }

    #[test]
    fn the_book_has_its_features_fingerprinted_by_target() {
        let inventory = Book::new().inventory();
        let hyperlinks = fingerprints(&inventory, "hyperlinks", "Data");
        assert_eq!(
            hyperlinks,
            [r#"<hyperlink id="hyperlink https://example.com/a" ref="A3"/>"#]
        );
        let charts = fingerprints(&inventory, "charts", "Data");
        assert_eq!(charts.len(), 1);
        assert!(
            charts[0].contains(r#"chart ["barChart"] refs ["Data!$B$1:$B$3"]"#),
            "{charts:?}"
        );
        let shapes = fingerprints(&inventory, "shapes", "Data");
        assert!(
            shapes.len() == 1 && shapes[0].ends_with(r#"shape rect "Note""#),
            "{shapes:?}"
        );
        let formats = fingerprints(&inventory, "conditionalFormatting", "Data");
        assert!(
            formats[0].contains("FF9C0006"),
            "the dxf replaces its index: {formats:?}"
        );
        assert_eq!(
            fingerprints(&inventory, "cols", "Data"),
            [r#"1-2 <col customWidth="1.00" width="15.78"/>"#]
        );
        assert_eq!(fingerprints(&inventory, "outline collapse", "Data"), ["2"]);
        assert_eq!(fingerprints(&inventory, "row formats", "Data"), ["2"]);
        let names = fingerprints(&inventory, "definedNames", WORKBOOK);
        assert!(
            names[0].contains(r#"localSheetId="sheet Data""#),
            "{names:?}"
        );
        assert_eq!(
            fingerprints(&inventory, "workbookPr", WORKBOOK),
            [r#"<workbookPr date1904="1.00"/>"#]
        );
        assert_eq!(
            fingerprints(&inventory, "bookViews", WORKBOOK),
            ["<bookViews><workbookView/></bookViews>"]
        );
        assert!(
            fingerprints(&inventory, "headerFooter", "Data").is_empty(),
            "empty elements say nothing"
        );
        for ((feature, _), list) in &inventory.features {
            for fingerprint in list {
                assert!(
                    !fingerprint.contains("rId") && !fingerprint.contains("sheet1"),
                    "{feature}: {fingerprint}"
                );
            }
        }
    }

    #[test]
    fn prefixes_attribute_order_whitespace_and_noise_do_not_matter() {
        let plain = Book::new().inventory();
        let prefixed = Book {
            sheet: PREFIXED_SHEET.to_owned(),
            ..Book::renamed()
        }
        .inventory();
        assert_eq!(lost(&plain, &prefixed), Vec::<&str>::new());
        assert_eq!(plain, prefixed);
    }

    #[test]
    fn renumbered_differential_formats_compare_equal() {
        let original = Book::new().inventory();
        let reordered = Book {
            sheet: SHEET.replace(r#"dxfId="0""#, r#"dxfId="1""#),
            dxfs: [YELLOW_FILL, RED_TEXT],
            ..Book::new()
        }
        .inventory();
        assert_eq!(original, reordered);
        let restyled = Book {
            dxfs: [YELLOW_FILL, RED_TEXT],
            ..Book::new()
        }
        .inventory();
        assert_eq!(lost(&original, &restyled), ["conditionalFormatting"]);
    }

    #[test]
    fn a_dropped_conditional_format_is_lost() {
        let before = Book::new().inventory();
        let start = SHEET.find("<conditionalFormatting").expect("a format");
        let end = SHEET.find("<hyperlinks>").expect("hyperlinks");
        let after = Book {
            sheet: format!("{}{}", &SHEET[..start], &SHEET[end..]),
            ..Book::renamed()
        }
        .inventory();
        let verdicts = compare(&before, &after);
        let (_, kept, reason) = verdicts
            .iter()
            .find(|(feature, _, _)| *feature == "conditionalFormatting")
            .expect("a verdict on conditional formats");
        assert!(!kept);
        assert!(
            reason.starts_with("Data: absent, had <conditionalFormatting"),
            "{reason}"
        );
        assert!(reason.chars().count() <= MAX_REASON_CHARS);
        assert_eq!(lost(&before, &after), ["conditionalFormatting"]);
    }

    #[test]
    fn a_changed_column_width_is_lost_but_not_float_noise() {
        let before = Book::new().inventory();
        let noisy = Book {
            sheet: SHEET.replace("15.78", "15.780000000000001"),
            ..Book::new()
        };
        assert_eq!(lost(&before, &noisy.inventory()), Vec::<&str>::new());
        let narrower = Book {
            sheet: SHEET.replace("15.78", "15.71"),
            ..Book::new()
        };
        let verdicts = compare(&before, &narrower.inventory());
        let cols = verdicts.iter().find(|(feature, _, _)| *feature == "cols");
        assert_eq!(
            cols,
            Some(&(
                "cols",
                false,
                r#"Data: lost 1-2 <col customWidth="1.00" width="15.78"/>"#.to_owned()
            ))
        );
    }

    #[test]
    fn a_dropped_theme_is_lost() {
        let before = Book::new().inventory();
        let after = Book {
            theme: false,
            ..Book::new()
        }
        .inventory();
        assert_eq!(lost(&before, &after), ["theme"]);
    }

    #[test]
    fn added_instances_make_a_feature_unequal() {
        let before = Book::new().inventory();
        let after = Book {
            sheet: SHEET.replace(
                r#"<mergeCell ref="A1:B1"/>"#,
                r#"<mergeCell ref="A1:B1"/><mergeCell ref="C1:D1"/>"#,
            ),
            ..Book::new()
        }
        .inventory();
        let verdicts = compare(&before, &after);
        let merged = verdicts
            .iter()
            .find(|(feature, _, _)| *feature == "mergeCells");
        assert_eq!(
            merged,
            Some(&(
                "mergeCells",
                false,
                r#"Data: added <mergeCell ref="C1:D1"/>"#.to_owned()
            ))
        );
    }

    #[test]
    fn malformed_packages_are_refused_or_skipped_without_panicking() {
        assert!(inventory(b"not a zip").is_err());
        let book = Book::new().zip();
        for cut in (0..book.len()).step_by(97) {
            let _ = inventory(&book[..cut]);
        }
        let broken_workbook = zip(&[(
            "xl/workbook.xml".to_owned(),
            "<workbook><sheets>".to_owned(),
        )]);
        assert!(inventory(&broken_workbook).is_err());
        let broken_sheet = inventory(
            &Book {
                sheet: SHEET.replace("</sheetData>", ""),
                ..Book::new()
            }
            .zip(),
        )
        .expect("a workbook with an unreadable sheet");
        assert!(
            broken_sheet
                .features
                .keys()
                .all(|(_, scope)| scope == WORKBOOK)
        );
        assert!(!broken_sheet.features.is_empty());
        let deep = Book {
            sheet: format!(
                "<worksheet>{}{}</worksheet>",
                "<a>".repeat(100_000),
                "</a>".repeat(100_000)
            ),
            ..Book::new()
        };
        let deep = deep.inventory();
        assert!(deep.features.keys().all(|(_, scope)| scope == WORKBOOK));
    }

    #[test]
    fn numbers_are_rounded_to_two_decimals() {
        assert_eq!(
            canonical_value("15.780000000000001"),
            canonical_value("15.78")
        );
        assert_ne!(canonical_value("15.78"), canonical_value("15.71"));
        assert_eq!(canonical_value("true"), canonical_value("1"));
        assert_eq!(canonical_value("-0.001"), "0.00");
        assert_eq!(canonical_value("A1"), "A1");
        assert_eq!(canonical_value("NaN"), "NaN");
        assert_eq!(canonical_value("007"), canonical_value("7.0"));
        assert_eq!(canonical_value("1.5E-1"), canonical_value("0.15"));
        assert_eq!(canonical_value("-.5"), "-0.50");
        // Colours are text, however they look.
        assert_eq!(canonical_value("0E2841"), "0E2841");
        assert_ne!(canonical_value("000000"), canonical_value("0E2841"));
        // Long integers stay exact.
        assert_ne!(
            canonical_value("12345678901234567891"),
            canonical_value("12345678901234567890")
        );
    }

    #[test]
    fn targets_resolve_relative_and_absolute() {
        assert_eq!(
            resolve("xl/workbook.xml", "worksheets/Sheet1.xml"),
            "xl/worksheets/sheet1.xml"
        );
        assert_eq!(
            resolve("xl/workbook.xml", "/xl/worksheets/sheet1.xml"),
            "xl/worksheets/sheet1.xml"
        );
        assert_eq!(
            resolve("xl/worksheets/sheet1.xml", "../drawings/./drawing1.xml"),
            "xl/drawings/drawing1.xml"
        );
        assert_eq!(resolve("", "xl/workbook.xml"), "xl/workbook.xml");
        assert_eq!(rels_part(""), "_rels/.rels");
        assert_eq!(rels_part("xl/workbook.xml"), "xl/_rels/workbook.xml.rels");
    }

    /// Inventories every workbook (.xlsx, .xlsm) of the corpus (`CORPUS_DIR`, by default
    /// `target/corpus/files`), checks none panics and each compares equal
    /// to itself, and prints how many files have each feature.
    #[test]
    #[ignore = "reads the corpus (target/corpus/files)"]
    fn corpus() {
        let dir = std::env::var("CORPUS_DIR").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/target/corpus/files").to_owned()
        });
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("the corpus folder")
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| {
                path.extension().is_some_and(|e| {
                    e.eq_ignore_ascii_case("xlsx") || e.eq_ignore_ascii_case("xlsm")
                })
            })
            .collect();
        files.sort();
        let (mut read, mut refused, mut panicked) = (0, Vec::new(), Vec::new());
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for path in &files {
            let bytes = std::fs::read(path).expect("a corpus file");
            match std::panic::catch_unwind(|| inventory(&bytes)) {
                Err(_) => panicked.push(path.display().to_string()),
                Ok(Err(error)) => refused.push(format!("{}: {error}", path.display())),
                Ok(Ok(inventory)) => {
                    read += 1;
                    assert!(
                        compare(&inventory, &inventory)
                            .iter()
                            .all(|(_, kept, _)| *kept)
                    );
                    let mut features: Vec<&'static str> =
                        inventory.features.keys().map(|(f, _)| *f).collect();
                    features.dedup();
                    for feature in features {
                        *counts.entry(feature).or_default() += 1;
                    }
                }
            }
        }
        println!(
            "{} files: {read} inventoried, {} refused, {} panicked",
            files.len(),
            refused.len(),
            panicked.len()
        );
        for reason in &refused {
            println!("refused {reason}");
        }
        for (feature, count) in &counts {
            println!("{count:6} {feature}");
        }
        assert!(panicked.is_empty(), "panicked on {panicked:?}");
    }
}
