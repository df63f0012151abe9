//! The children of `<worksheet>` in one table: their order in the schema,
//! who writes each on a rewrite, and which of the carried ones point at
//! the sheet's cells. Reading ([`super::carry`]), the merge
//! ([`super::merge`]) and the row moves ([`super::shift`]) go by it.

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

/// One child of `<worksheet>`.
#[derive(Debug)]
pub struct SheetChild {
    /// Its local name.
    pub name: &'static str,
    pub written_by: WrittenBy,
    /// Whether it points at the sheet's cells (a range, an anchor, a
    /// formula), so that it moves when rows move.
    pub points_at_cells: bool,
}

const fn written(name: &'static str) -> SheetChild {
    SheetChild {
        name,
        written_by: WrittenBy::Model,
        points_at_cells: false,
    }
}

const fn carried(name: &'static str) -> SheetChild {
    SheetChild {
        name,
        written_by: WrittenBy::Carried,
        points_at_cells: false,
    }
}

const fn anchored(name: &'static str) -> SheetChild {
    SheetChild {
        name,
        written_by: WrittenBy::Carried,
        points_at_cells: true,
    }
}

/// Every child of `<worksheet>`, in the order the schema (`CT_Worksheet`)
/// requires: an entry's index is its place. A child not listed here is
/// carried, and put back after the listed one that preceded it.
pub const SHEET_CHILDREN: &[SheetChild] = &[
    carried("sheetPr"),
    written("dimension"),
    // The selection and the pane.
    anchored("sheetViews"),
    carried("sheetFormatPr"),
    written("cols"),
    written("sheetData"),
    carried("sheetCalcPr"),
    carried("sheetProtection"),
    anchored("protectedRanges"),
    anchored("scenarios"),
    SheetChild {
        name: "autoFilter",
        written_by: WrittenBy::ModelWhenEmpty,
        points_at_cells: true,
    },
    anchored("sortState"),
    anchored("dataConsolidate"),
    anchored("customSheetViews"),
    written("mergeCells"),
    carried("phoneticPr"),
    anchored("conditionalFormatting"),
    anchored("dataValidations"),
    written("hyperlinks"),
    carried("printOptions"),
    carried("pageMargins"),
    carried("pageSetup"),
    carried("headerFooter"),
    anchored("rowBreaks"),
    carried("colBreaks"),
    carried("customProperties"),
    anchored("cellWatches"),
    anchored("ignoredErrors"),
    anchored("smartTags"),
    anchored("drawing"),
    anchored("legacyDrawing"),
    carried("legacyDrawingHF"),
    carried("drawingHF"),
    carried("picture"),
    anchored("oleObjects"),
    anchored("controls"),
    carried("webPublishItems"),
    carried("tableParts"),
    anchored("extLst"),
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

/// Whether the child `name` points at the sheet's cells; an unknown
/// child may.
pub fn points_at_cells(name: &str) -> bool {
    child(name).is_none_or(|child| child.points_at_cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_child_is_listed_once() {
        for (i, child) in SHEET_CHILDREN.iter().enumerate() {
            assert_eq!(position(child.name), Some(i), "{}", child.name);
        }
    }

    #[test]
    fn what_points_at_cells_is_carried() {
        for child in SHEET_CHILDREN.iter().filter(|c| c.points_at_cells) {
            assert_ne!(child.written_by, WrittenBy::Model, "{}", child.name);
        }
        assert!(points_at_cells("conditionalFormatting"));
        assert!(!points_at_cells("pageMargins"));
        assert!(points_at_cells("someFutureChild"));
    }
}
