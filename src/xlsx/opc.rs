//! The package's own parts (Open Packaging Conventions): relationships
//! (`_rels/*.rels`) and content types (`[Content_Types].xml`), read and,
//! for what a rewrite carries, written.

use std::collections::{HashMap, HashSet};

use super::ReadError;
use super::xml::{attr, escape, for_each_element};
use crate::model::carried::{Carried, Relationship};

/// The relationships namespace, which `r:id` attributes belong to.
pub const RELATIONSHIPS_NS: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
/// The same namespace in the strict form of the format.
pub const STRICT_RELATIONSHIPS_NS: &str = "http://purl.oclc.org/ooxml/officeDocument/relationships";

/// Whether a namespace URI is the relationships namespace, in either form.
pub fn is_relationships_ns(uri: &str) -> bool {
    uri == RELATIONSHIPS_NS || uri == STRICT_RELATIONSHIPS_NS
}

/// A part's relationships as its `.rels` part states them.
pub fn read_relationships(xml: &[u8]) -> Result<Vec<Relationship>, ReadError> {
    let mut found = Vec::new();
    for_each_element(xml, |e| {
        if e.local_name().as_ref() != "Relationship" {
            return Ok(());
        }
        let [id, kind, target, mode] = ["Id", "Type", "Target", "TargetMode"].map(|n| attr(e, n));
        if let (Some(id), Some(kind), Some(target)) = (id, kind, target) {
            found.push(Relationship {
                id,
                kind,
                target,
                external: mode.is_some_and(|m| m == "External"),
            });
        }
        Ok(())
    })?;
    Ok(found)
}

/// The `.rels` part of `part`.
pub fn rels_name(part: &str) -> String {
    match part.rsplit_once('/') {
        Some((dir, file)) => format!("{dir}/_rels/{file}.rels"),
        None => format!("_rels/{part}.rels"),
    }
}

/// The relationships part of `part`, found as the package finds parts:
/// ignoring case (`Sheet1.xml` may have `_rels/sheet1.xml.rels`).
pub fn rels_of<'a>(parts: &'a HashMap<String, Vec<u8>>, part: &str) -> Option<&'a Vec<u8>> {
    let name = rels_name(part);
    parts.get(&name).or_else(|| {
        parts
            .iter()
            .find(|(other, _)| other.eq_ignore_ascii_case(&name))
            .map(|(_, bytes)| bytes)
    })
}

/// Whether a relationship is of the kind named by the last path segment
/// of its type (`worksheet`), whichever form of the format states it: the
/// strict form spells some in camel case (`extendedProperties`).
pub fn is_kind(relationship: &Relationship, kind: &str) -> bool {
    let last = relationship.kind.rsplit('/').next().unwrap_or_default();
    let plain = |text: &str| text.replace('-', "").to_ascii_lowercase();
    plain(last) == plain(kind)
}

/// The part a relationship of `source` leads to (none for a URL).
pub fn target_part(source: &str, relationship: &Relationship) -> Option<String> {
    if relationship.external {
        return None;
    }
    let dir = source.rsplit_once('/').map_or("", |(dir, _)| dir);
    Some(resolve_part(dir, &relationship.target))
}

/// The relationships of `part`: where each id leads, internal targets
/// resolved to part names (`../tables/table1.xml` from `xl/worksheets/` is
/// `xl/tables/table1.xml`), outside addresses as they are.
pub fn relationships(
    parts: &HashMap<String, Vec<u8>>,
    part: &str,
) -> Result<HashMap<String, String>, ReadError> {
    let Some(xml) = rels_of(parts, part) else {
        return Ok(HashMap::new());
    };
    Ok(read_relationships(xml)?
        .into_iter()
        .map(|relationship| {
            let target =
                target_part(part, &relationship).unwrap_or_else(|| relationship.target.clone());
            (relationship.id, target)
        })
        .collect())
}

/// A relative part reference resolved against the directory of its source.
pub fn resolve_part(dir: &str, target: &str) -> String {
    if let Some(absolute) = target.strip_prefix('/') {
        return absolute.to_owned();
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for piece in target.split('/') {
        match piece {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// A zip entry's name as a part name: some producers write `\\` between
/// folders (`xl\\workbook.xml`) or a leading `/`, which spreadsheet apps
/// and calamine read as the usual part name.
pub fn part_name(entry: &str) -> String {
    entry.replace('\\', "/").trim_start_matches('/').to_owned()
}

/// Where a package keeps the parts every workbook has, found as
/// spreadsheet apps find them: the workbook through the package's
/// relationships, its styles, shared strings and worksheets through the
/// workbook's. Most files use the names Excel gives them
/// (`xl/workbook.xml`, `xl/styles.xml`), but the format does not ask for
/// them: a minimal package keeps `workbook.xml` at its root, other
/// producers write `xl/custom1-workbook.xml` or `xl/worksheets/sheet.xml`.
#[derive(Debug, Clone, PartialEq)]
pub struct MainParts {
    pub workbook: String,
    pub styles: Option<String>,
    pub shared_strings: Option<String>,
    /// Every worksheet part the workbook relates to.
    pub worksheets: Vec<String>,
}

/// Where Excel puts the workbook part, assumed when the package's own
/// relationships do not say.
const USUAL_WORKBOOK: &str = "xl/workbook.xml";

impl MainParts {
    /// Finds the main parts of a package whose parts `read` gives by name
    /// (matched ignoring case, as `names` lists them); a relationships
    /// part that is missing or unreadable leaves Excel's usual names.
    pub fn find(names: &[String], mut read: impl FnMut(&str) -> Option<Vec<u8>>) -> MainParts {
        let existing = |wanted: &str| {
            names
                .iter()
                .find(|name| name.eq_ignore_ascii_case(wanted))
                .cloned()
        };
        let mut related = |source: &str, kind: &str| -> Option<Vec<String>> {
            let xml = read(&existing(&rels_name(source))?)?;
            let relationships = read_relationships(&xml).ok()?;
            Some(
                relationships
                    .iter()
                    .filter(|r| is_kind(r, kind))
                    .filter_map(|r| existing(&target_part(source, r)?))
                    .collect(),
            )
        };
        let workbook = related("", "officeDocument")
            .and_then(|found| found.into_iter().next())
            .unwrap_or_else(|| existing(USUAL_WORKBOOK).unwrap_or_else(|| USUAL_WORKBOOK.into()));
        let first = |found: Option<Vec<String>>| found.and_then(|f| f.into_iter().next());
        let styles = first(related(&workbook, "styles"));
        let shared_strings = first(related(&workbook, "sharedStrings"));
        let worksheets = related(&workbook, "worksheet").unwrap_or_default();
        MainParts {
            workbook,
            styles,
            shared_strings,
            worksheets,
        }
    }
}

/// `[Content_Types].xml`, parsed.
#[derive(Debug, Default)]
pub struct ContentTypes {
    /// By part name, without the leading `/`.
    pub overrides: HashMap<String, String>,
    /// By extension, lower case.
    pub defaults: HashMap<String, String>,
}

impl ContentTypes {
    pub fn parse(xml: &[u8]) -> Result<ContentTypes, ReadError> {
        let mut types = ContentTypes::default();
        for_each_element(xml, |e| {
            let kind = attr(e, "ContentType");
            match (e.local_name().as_ref(), kind) {
                ("Override", Some(kind)) => {
                    if let Some(part) = attr(e, "PartName") {
                        let part = part.trim_start_matches('/').to_owned();
                        types.overrides.insert(part, kind);
                    }
                }
                ("Default", Some(kind)) => {
                    if let Some(ext) = attr(e, "Extension") {
                        types.defaults.insert(ext.to_ascii_lowercase(), kind);
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok(types)
    }
}

/// The default content type of a plain workbook part, which a carried one
/// (macro-enabled, template) replaces.
const PLAIN_WORKBOOK_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml";

/// `[Content_Types].xml` with the carried parts' types.
pub fn with_carried_types(xml: &[u8], carried: &Carried) -> Vec<u8> {
    let mut text = String::from_utf8_lossy(xml).into_owned();
    if let Some(kind) = &carried.workbook_content_type {
        text = text.replace(PLAIN_WORKBOOK_TYPE, &escape(kind));
    }
    let mut added = String::new();
    for (extension, kind) in &carried.defaults {
        let declared = format!("Extension=\"{}\"", escape(extension));
        if !text
            .to_ascii_lowercase()
            .contains(&declared.to_ascii_lowercase())
        {
            added.push_str(&format!(
                "<Default {declared} ContentType=\"{}\"/>",
                escape(kind)
            ));
        }
    }
    for part in &carried.parts {
        if let Some(kind) = &part.content_type {
            added.push_str(&format!(
                "<Override PartName=\"/{}\" ContentType=\"{}\"/>",
                escape(&part.name),
                escape(kind)
            ));
        }
    }
    insert_before_last(&text, "</Types>", &added).into_bytes()
}

/// `text` with `insert` before the last `closing`.
fn insert_before_last(text: &str, closing: &str, insert: &str) -> String {
    match text.rfind(closing) {
        Some(at) => format!("{}{insert}{}", &text[..at], &text[at..]),
        None => text.to_owned(),
    }
}

/// An empty relationships part, for a sheet the writer gave none.
pub const EMPTY_RELATIONSHIPS: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"></Relationships>";

/// The relationships part of `source` with `carried` added under new ids,
/// after the part's own, except those leading to a part the writer
/// `produced`; the new ids by the carried ones.
pub fn add_relationships(
    xml: &[u8],
    carried: &[Relationship],
    source: &str,
    produced: &HashSet<&str>,
) -> (Vec<u8>, HashMap<String, String>) {
    let text = String::from_utf8_lossy(xml);
    let taken: HashSet<String> = read_relationships(xml)
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.id)
        .collect();
    let mut next = taken.len() + 1;
    let mut renamed = HashMap::new();
    let mut added = String::new();
    for relationship in carried {
        if target_part(source, relationship).is_some_and(|t| produced.contains(t.as_str())) {
            continue;
        }
        let id = loop {
            let id = format!("rId{next}");
            next += 1;
            if !taken.contains(&id) {
                break id;
            }
        };
        added.push_str(&format!(
            "<Relationship Id=\"{id}\" Type=\"{}\" Target=\"{}\"{}/>",
            escape(&relationship.kind),
            escape(&relationship.target),
            if relationship.external {
                " TargetMode=\"External\""
            } else {
                ""
            }
        ));
        renamed.insert(relationship.id.clone(), id);
    }
    let merged = insert_before_last(&text, "</Relationships>", &added);
    (merged.into_bytes(), renamed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_part_names() {
        assert_eq!(
            resolve_part("xl/worksheets", "../tables/table1.xml"),
            "xl/tables/table1.xml"
        );
        assert_eq!(
            resolve_part("xl", "worksheets/sheet1.xml"),
            "xl/worksheets/sheet1.xml"
        );
        assert_eq!(
            resolve_part("xl", "/xl/worksheets/sheet2.xml"),
            "xl/worksheets/sheet2.xml"
        );
    }
}
