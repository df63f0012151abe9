//! The workbook part: the writer's, with the file's carried elements and
//! defined names put back, and the entries of the sheets the model does
//! not hold (chart sheets) in their places.

use std::collections::{HashMap, HashSet};

use super::splice::{
    Parts, cut, interleave, place, reassemble, rebind, relationship_prefixes, replace_once,
    with_attributes, xml_error,
};
use crate::model::carried::{Carried, OtherSheet};
use crate::model::workbook::DefinedName;
use crate::xlsx::WriteError;
use crate::xlsx::xml::{capture_children, escape, first_attribute, rfind};

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

/// Whether the schema places a child of `<workbook>` named `name` (an
/// extension's element, `AlternateContent`, goes after the one before it).
pub(in crate::xlsx) fn places_child(name: &str) -> bool {
    place(WORKBOOK_ORDER, name).is_some()
}

/// The writer's workbook XML with the carried elements put in: carried
/// built-in names go inside `<definedNames>`, each with what the model's
/// name of the same name and scope refers to now (a delete adjusts it).
pub(super) fn splice_workbook(
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
    // By scope and name (case aside), the first of each: a file may carry
    // a million names, each looked up once.
    let mut by_name: HashMap<(Option<usize>, String), &DefinedName> = HashMap::new();
    for name in model_names {
        let key = (name.scope, name.name.to_ascii_lowercase());
        by_name.entry(key).or_insert(name);
    }
    for element in &carried.elements {
        let mut bytes = rebind(element, &prefixes, renamed)?;
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
        } else if let Some(adjusted) = with_model_text(&bytes, &by_name) {
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
        |name| place(WORKBOOK_ORDER, name),
        std::mem::take(&mut parts.children),
        elements,
    );
    // The file's namespaces matter only to the elements carried: without
    // any, the part is declared as the writer declares it, whether or not
    // anything else sent the package through here.
    let root = match carried.is_empty() {
        true => &[][..],
        false => &carried.root_attributes[..],
    };
    Ok(reassemble(&parts, root, &children))
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
                let entry = rebind(&other.entry, prefixes, renamed)?;
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
fn with_model_text(
    xml: &[u8],
    model_names: &HashMap<(Option<usize>, String), &DefinedName>,
) -> Option<Vec<u8>> {
    let open = start_tag(xml);
    if open.ends_with(b"/>") {
        return None;
    }
    let name = first_attribute(xml, "name")?.to_ascii_lowercase();
    let scope = first_attribute(xml, "localSheetId").and_then(|id| id.parse::<usize>().ok());
    let model = model_names.get(&(scope, name))?;
    let inner = inner_text(xml);
    let text = quick_xml::escape::unescape(std::str::from_utf8(inner).ok()?).ok()?;
    if text == model.refers_to {
        return None;
    }
    let close = &xml[open.len() + inner.len()..];
    Some([open, escape(&model.refers_to).as_bytes(), close].concat())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::carried::{CarriedXml, Element};

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

    #[test]
    fn a_workbook_part_that_carries_nothing_declares_what_the_writer_declares() {
        // Whether the package goes through here depends on more than the
        // workbook part (a cell needing a fix): the part must come out as
        // the writer wrote it either way.
        let written = format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="{MAIN}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets><calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>"#
        );
        let carried = Carried {
            workbook: CarriedXml {
                root_attributes: vec![("xmlns:x".into(), MAIN.into())],
                ..CarriedXml::default()
            },
            ..Carried::default()
        };
        let out = splice_workbook(written.as_bytes(), &carried, &[], &HashMap::new()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), written);
    }
}
