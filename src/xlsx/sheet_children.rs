//! The children of `<worksheet>` in one table: their order in the schema,
//! who writes each on a rewrite, and which of the carried ones point at
//! the sheet's cells. Reading ([`super::carry`]) and the merge
//! ([`super::merge`]) both go by it.

/// Who writes a child of `<worksheet>` on a rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrittenBy {
    /// rust_xlsxwriter, from the model: the file's element is not kept.
    Model,
    /// The model's while the element is empty (`<autoFilter ref="A1:C9"/>`);
    /// carried when it has content (an autofilter's criteria).
    ModelWhenEmpty,
    /// Nobody: the file's element is carried as it was.
    Carried,
}

/// A carried child that points at cells, which deleting rows would move
/// without rewriting it.
#[derive(Debug)]
pub struct Anchored {
    /// What it is, said for a user after a count: "2 conditional format(s)".
    pub what: &'static str,
    /// Where a message lists it among the others (the order messages have
    /// always had, which is not the schema's).
    pub listed: u8,
}

/// One child of `<worksheet>`.
#[derive(Debug)]
pub struct SheetChild {
    /// Its local name.
    pub name: &'static str,
    pub written_by: WrittenBy,
    /// Set when it points at cells.
    pub anchored: Option<Anchored>,
}

const fn written(name: &'static str) -> SheetChild {
    SheetChild {
        name,
        written_by: WrittenBy::Model,
        anchored: None,
    }
}

const fn carried(name: &'static str) -> SheetChild {
    SheetChild {
        name,
        written_by: WrittenBy::Carried,
        anchored: None,
    }
}

const fn anchored(name: &'static str, listed: u8, what: &'static str) -> SheetChild {
    SheetChild {
        name,
        written_by: WrittenBy::Carried,
        anchored: Some(Anchored { what, listed }),
    }
}

/// Every child of `<worksheet>`, in the order the schema (`CT_Worksheet`)
/// requires: an entry's index is its place. A child not listed here is
/// carried, and put back after the listed one that preceded it.
pub const SHEET_CHILDREN: &[SheetChild] = &[
    carried("sheetPr"),
    written("dimension"),
    carried("sheetViews"),
    carried("sheetFormatPr"),
    written("cols"),
    written("sheetData"),
    carried("sheetCalcPr"),
    carried("sheetProtection"),
    anchored("protectedRanges", 6, "protected range list(s)"),
    anchored("scenarios", 11, "scenario list(s)"),
    SheetChild {
        name: "autoFilter",
        written_by: WrittenBy::ModelWhenEmpty,
        anchored: Some(Anchored {
            what: "autofilter(s) with criteria",
            listed: 9,
        }),
    },
    anchored("sortState", 10, "sort setting(s)"),
    anchored("dataConsolidate", 12, "consolidation setting(s)"),
    anchored("customSheetViews", 13, "custom view list(s)"),
    written("mergeCells"),
    carried("phoneticPr"),
    anchored("conditionalFormatting", 0, "conditional format(s)"),
    anchored("dataValidations", 1, "data validation list(s)"),
    written("hyperlinks"),
    carried("printOptions"),
    carried("pageMargins"),
    carried("pageSetup"),
    carried("headerFooter"),
    anchored("rowBreaks", 7, "manual page break list(s)"),
    carried("colBreaks"),
    carried("customProperties"),
    anchored("cellWatches", 14, "cell watch list(s)"),
    anchored("ignoredErrors", 8, "ignored-error list(s)"),
    anchored("smartTags", 15, "smart tag list(s)"),
    anchored("drawing", 2, "drawing(s) (images, shapes or charts)"),
    anchored("legacyDrawing", 3, "note or form control drawing(s)"),
    carried("legacyDrawingHF"),
    carried("drawingHF"),
    carried("picture"),
    anchored("oleObjects", 4, "embedded object list(s)"),
    anchored("controls", 5, "form control list(s)"),
    carried("webPublishItems"),
    carried("tableParts"),
    anchored(
        "extLst",
        16,
        "extension list(s) (sparklines, newer conditional formats or validations)",
    ),
];

/// The entry of the child `name`, if the schema has it.
fn child(name: &str) -> Option<&'static SheetChild> {
    SHEET_CHILDREN.iter().find(|child| child.name == name)
}

/// The place of the child `name` in the schema's order.
pub fn position(name: &str) -> Option<usize> {
    SHEET_CHILDREN.iter().position(|child| child.name == name)
}

/// Who writes the child `name`; an unknown child is carried.
pub fn written_by(name: &str) -> WrittenBy {
    child(name).map_or(WrittenBy::Carried, |child| child.written_by)
}

/// The children that point at cells, each with what it is for a user, in
/// the order messages list them.
pub fn anchored_children() -> Vec<(&'static str, &'static str)> {
    let mut found: Vec<(u8, &'static str, &'static str)> = SHEET_CHILDREN
        .iter()
        .filter_map(|child| {
            let anchored = child.anchored.as_ref()?;
            Some((anchored.listed, child.name, anchored.what))
        })
        .collect();
    found.sort_by_key(|(listed, ..)| *listed);
    found
        .into_iter()
        .map(|(_, name, what)| (name, what))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_child_is_listed_once() {
        for (i, child) in SHEET_CHILDREN.iter().enumerate() {
            assert_eq!(position(child.name), Some(i), "{}", child.name);
        }
        let mut listed: Vec<u8> = SHEET_CHILDREN
            .iter()
            .filter_map(|child| Some(child.anchored.as_ref()?.listed))
            .collect();
        listed.sort();
        let expected: Vec<u8> = (0..listed.len() as u8).collect();
        assert_eq!(listed, expected);
    }
}
