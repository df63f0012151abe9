//! What a file holds beyond the model, kept to be written back as it was.
//!
//! A workbook carries charts, images, notes, conditional formats, printer
//! settings, extension lists and whatever else sheetd does not model. The
//! xlsx layer reads them as package parts and XML elements and puts them
//! back, unchanged, around what the writer produces; the model only holds
//! them. When rows move, the xlsx layer moves what points at the moved
//! cells (it knows the format); the model keeps only what decides whether
//! a move is allowed at all: where the pivot tables are
//! ([`CarriedSheet::pivots`]).

use std::sync::Arc;

use super::layout::Range;

/// A package relationship as the file states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relationship {
    pub id: String,
    /// The relationship type, a URI.
    pub kind: String,
    /// As written in the file: relative to the source part, absolute
    /// (`/xl/...`), or a URL when `external`.
    pub target: String,
    pub external: bool,
}

/// One element of a workbook or sheet part, as XML text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// The local name (`conditionalFormatting`), which fixes its place.
    pub name: String,
    /// The element, its attributes and everything inside it.
    pub xml: String,
}

/// A sheet that is no worksheet (a chart sheet), which the model does not
/// hold but whose name is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherSheet {
    /// Its place among all the workbook's sheets.
    pub position: usize,
    pub name: String,
    /// Its `<sheet>` entry in the workbook part.
    pub entry: Element,
}

/// The elements of one part (`xl/workbook.xml` or a worksheet) that are
/// carried, with what they need around them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CarriedXml {
    /// The namespace declarations (and `mc:Ignorable`) of the part's root
    /// element, which the carried elements may use.
    pub root_attributes: Vec<(String, String)>,
    pub elements: Vec<Element>,
    /// The part's relationships to carried parts, by the ids the elements use.
    pub relationships: Vec<Relationship>,
}

impl CarriedXml {
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty() && self.relationships.is_empty()
    }
}

/// What one worksheet carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CarriedSheet {
    pub xml: CarriedXml,
    /// The sheet's `<cols>` as the file had it. The writer writes columns
    /// from the model; their attributes come from here (exact widths, best
    /// fit, collapsed groups), their format ids from the writer.
    pub columns: Option<String>,
    /// The pivot tables on the sheet, which a row move may not cut
    /// through (§11.2).
    pub pivots: Vec<Pivot>,
}

/// A pivot table: its name and the cells its body takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pivot {
    pub name: String,
    pub range: Range,
}

impl CarriedSheet {
    pub fn is_empty(&self) -> bool {
        self.xml.is_empty() && self.columns.is_none()
    }
}

/// A package part carried whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its name in the package: `xl/charts/chart1.xml`.
    pub name: String,
    /// Its `Override` content type, when `[Content_Types].xml` gives one.
    pub content_type: Option<String>,
    pub bytes: Arc<[u8]>,
}

/// What the whole workbook carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Carried {
    /// Parts the writer does not produce, reached from carried
    /// relationships (and theirs, and so on).
    pub parts: Vec<Part>,
    /// `Default` content types (by extension) the carried parts need.
    pub defaults: Vec<(String, String)>,
    /// Relationships of the package itself (`_rels/.rels`) to carried parts:
    /// custom properties, a thumbnail.
    pub package: Vec<Relationship>,
    /// Elements and relationships of `xl/workbook.xml`.
    pub workbook: CarriedXml,
    /// The workbook part's content type when it is not a plain workbook's
    /// (a macro-enabled or template workbook).
    pub workbook_content_type: Option<String>,
    /// The theme part, written instead of the writer's default theme.
    pub theme: Option<Arc<[u8]>>,
    /// The file's styles part, written back whole: every cell format,
    /// font, fill, border, number format, named style and differential
    /// format stays the record the file has, and the writer's cells point
    /// at them by the file's own ids (see `xlsx::merge::styles`). `None`
    /// when the file has no styles part with a cell format and a font.
    pub styles: Option<Arc<[u8]>>,
    /// Sheets that are no worksheets (chart sheets, dialog sheets), which
    /// the model does not hold, in the workbook's order. Their parts are
    /// carried.
    pub other_sheets: Vec<OtherSheet>,
    /// The file counts dates from 1904 (a setting Excel for Mac once made
    /// the default); the model's dates count from 1900 either way.
    pub date1904: bool,
}

impl Carried {
    /// Whether there is nothing to carry: the writer's package is the file.
    /// The workbook part's namespaces matter only with elements to carry.
    pub fn is_empty(&self) -> bool {
        let Carried { workbook, .. } = self;
        workbook.is_empty()
            && *self
                == Carried {
                    workbook: workbook.clone(),
                    ..Carried::default()
                }
    }

    /// The bytes the carried parts hold in memory.
    pub fn part_bytes(&self) -> usize {
        self.parts.iter().map(|p| p.bytes.len()).sum::<usize>()
            + self.theme.as_ref().map_or(0, |t| t.len())
            + self.styles.as_ref().map_or(0, |s| s.len())
    }
}
