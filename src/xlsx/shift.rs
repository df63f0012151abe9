//! What a workbook carries beyond the model, moved with rows (§11.2).
//!
//! The model moves its own cells, formulas, names and layout when rows are
//! deleted or inserted, and records each move ([`Edited::moves`]). Before
//! the workbook is written, [`carried_rows_moved`] moves the rest the same
//! way, with the one rule of [`RowMove`] and [`rows_moved`]:
//! - on the sheet itself: conditional formats and data validations (their
//!   ranges, x14 ones too), sparklines, ignored errors, protected ranges,
//!   manual page breaks, a carried autofilter and sort, the selection and
//!   the pane; notes and threaded comments with their boxes, drawing
//!   anchors (images, shapes, charts, form controls) and pivot tables'
//!   places, in the parts the sheet leads to;
//! - everywhere: the formulas inside those elements (rules, list sources,
//!   sparkline sources, form control links) that name the sheet, chart
//!   series and categories, and pivot caches' sources.
//!
//! A range that loses all its rows goes with its element, as does a note
//! on a deleted row.
//!
//! [`Edited::moves`]: crate::model::Edited::moves

use std::sync::Arc;

use super::WriteError;
use super::opc::{is_kind, target_part};
use super::package::range_ref;
use super::sheet_children;
use super::tree::{self, Element, Node};
use crate::model::Workbook;
use crate::model::carried::{CarriedSheet, CarriedXml, Part};
use crate::model::formula::{
    LAST_ROW, RowMove, SheetRows, range_moved, ranges_moved, ranges_moved_with_row_above,
    rows_moved, same_sheet, shifted,
};

/// Moves what every sheet carries, and the parts that point at its cells,
/// with the row moves its edits recorded. Refused (naming it) when a
/// formula there cannot be adjusted: a 3D reference spanning the sheet.
pub fn carried_rows_moved(workbook: &mut Workbook) -> Result<(), WriteError> {
    for index in 0..workbook.sheets.len() {
        let moves = workbook.sheets[index].edited.moves.clone();
        for rows in &moves {
            sheet_rows_moved(workbook, index, rows)?;
        }
    }
    Ok(())
}

/// Moves what is carried for one row move of sheet `index`.
fn sheet_rows_moved(
    workbook: &mut Workbook,
    index: usize,
    rows: &RowMove,
) -> Result<(), WriteError> {
    let names: Vec<String> = workbook
        .sheet_order()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let order: Vec<&str> = names.iter().map(String::as_str).collect();
    let target = workbook.sheets[index].name.clone();
    let moved = SheetRows {
        sheet: &target,
        order: &order,
        rows,
    };
    for (s, sheet) in workbook.sheets.iter_mut().enumerate() {
        if sheet.carried.xml.elements.is_empty() {
            continue;
        }
        let mover = Mover {
            home: &sheet.name,
            own: s == index,
            moved: &moved,
            anchor_shift: 0,
        };
        let carried = Arc::make_mut(&mut sheet.carried);
        elements_moved(&mut carried.xml, &mover)?;
    }
    let parts = sheet_parts(&workbook.sheets[index].carried);
    let carried = Arc::make_mut(&mut workbook.carried);
    let own = Mover {
        home: &target,
        own: true,
        moved: &moved,
        anchor_shift: 0,
    };
    let anywhere = Mover {
        home: "",
        own: false,
        moved: &moved,
        anchor_shift: 0,
    };
    // The built-in names (print areas and titles) the workbook part
    // carries as the file wrote them; the model moves the others.
    elements_moved(&mut carried.workbook, &anywhere)?;
    for part in &mut carried.parts {
        let mover = if parts.contains(&part.name) {
            &own
        } else if mentions_cells(&part.name) {
            &anywhere
        } else {
            continue;
        };
        part_moved(part, mover)?;
    }
    Ok(())
}

/// The parts a sheet's relationships lead to that point at its cells:
/// drawings, notes and their boxes, threaded comments, pivot tables, form
/// controls' properties.
fn sheet_parts(sheet: &CarriedSheet) -> Vec<String> {
    const KINDS: &[&str] = &[
        "drawing",
        "vmlDrawing",
        "comments",
        "threadedComment",
        "pivotTable",
        "ctrlProp",
    ];
    // The writer writes worksheets under `xl/worksheets/`, as the file
    // had them: relative targets resolve from there.
    sheet
        .xml
        .relationships
        .iter()
        .filter(|r| KINDS.iter().any(|kind| is_kind(r, kind)))
        .filter_map(|r| target_part("xl/worksheets/sheet.xml", r))
        .collect()
}

/// Whether a workbook part may name any sheet's cells in its formulas:
/// charts and pivot caches.
fn mentions_cells(part: &str) -> bool {
    part.starts_with("xl/charts/chart") || part.starts_with("xl/pivotCache/pivotCacheDefinition")
}

/// Moves a part's carried elements; those left pointing at nothing go.
fn elements_moved(carried: &mut CarriedXml, mover: &Mover<'_>) -> Result<(), WriteError> {
    let mut kept = Vec::with_capacity(carried.elements.len());
    for mut element in std::mem::take(&mut carried.elements) {
        if !sheet_children::points_at_cells(&element.name) {
            kept.push(element);
            continue;
        }
        within_bound(element.xml.as_bytes(), &format!("<{}>", element.name))?;
        let mut nodes = tree::parse(element.xml.as_bytes()).map_err(unrewritable)?;
        let before = nodes.len();
        mover.nodes(&mut nodes)?;
        if nodes.len() < before {
            continue;
        }
        element.xml = String::from_utf8_lossy(&tree::write(&nodes)).into_owned();
        kept.push(element);
    }
    carried.elements = kept;
    Ok(())
}

/// The most XML one part or carried element may hold for rows to move in
/// it: read into a tree, XML takes about 13 times its size in memory (a
/// drawing of 466 MiB, 11 MB zipped, took 6.2 GB). 32 MiB holds some
/// 30,000 notes' boxes (VML, the most verbose).
const MAX_MOVED_XML: usize = 32 << 20;

/// Refused when `xml`, what `what` names, is past [`MAX_MOVED_XML`].
fn within_bound(xml: &[u8], what: &str) -> Result<(), WriteError> {
    match xml.len() > MAX_MOVED_XML {
        true => Err(WriteError::Refused(format!(
            "rows cannot move: {what} holds {} MiB of XML that points at cells, \
             more than the {} MiB sheetd moves rows in",
            xml.len().div_ceil(1 << 20),
            MAX_MOVED_XML >> 20
        ))),
        false => Ok(()),
    }
}

/// Moves what a carried part points at.
fn part_moved(part: &mut Part, mover: &Mover<'_>) -> Result<(), WriteError> {
    within_bound(&part.bytes, &part.name)?;
    let mut nodes = match part.name.ends_with(".vml") {
        true => tree::parse(&well_formed_vml(&part.bytes)),
        false => tree::parse(&part.bytes),
    }
    .map_err(unrewritable)?;
    mover.nodes(&mut nodes)?;
    part.bytes = Arc::from(tree::write(&nodes));
    Ok(())
}

/// VML as XML: the line breaks some writers put in a note's text box as
/// HTML (`<br>`, never closed) closed, which spreadsheet apps read alike.
fn well_formed_vml(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest
        .windows(4)
        .position(|w| w.eq_ignore_ascii_case(b"<br>"))
    {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(b"<br/>");
        rest = &rest[at + 4..];
    }
    out.extend_from_slice(rest);
    out
}

fn unrewritable(error: super::ReadError) -> WriteError {
    WriteError::Refused(format!("a part the rows' move rewrites is no XML: {error}"))
}

/// Moves the elements of one part or sheet, home to `home`.
struct Mover<'a> {
    /// The sheet the elements belong to ("" for a chart or pivot cache,
    /// whose references all name their sheet).
    home: &'a str,
    /// Whether the elements sit on the sheet whose rows move, so that
    /// their ranges and anchors move too (else only their formulas).
    own: bool,
    moved: &'a SheetRows<'a>,
    /// Rows to copy a rule's formulas down by before they move: a
    /// conditional format's or validation's formulas are written as in the
    /// first cell of its range, and when that cell's row is deleted the
    /// rule's cell becomes the first one left (as in a spreadsheet app,
    /// `$B10>5` on A10:D15 stays `$B10>5` on A10:D14 once row 10 goes).
    anchor_shift: i64,
}

impl Mover<'_> {
    /// Moves each element of `nodes`, dropping those that point at
    /// nothing left.
    fn nodes(&self, nodes: &mut Vec<Node>) -> Result<(), WriteError> {
        let mut failed = None;
        nodes.retain_mut(|node| match node {
            Node::Element(element) => match self.element(element) {
                Ok(keep) => keep,
                Err(error) => {
                    failed.get_or_insert(error);
                    true
                }
            },
            Node::Other(_) => true,
        });
        failed.map_or(Ok(()), Err)
    }

    /// Moves one element and its children; whether it stays.
    fn element(&self, element: &mut Element) -> Result<bool, WriteError> {
        let rows = self.moved.rows;
        let name = element.name().to_owned();
        let anchor_shift = match name.as_str() {
            "conditionalFormatting" | "dataValidation" if self.own => self.anchor_shift(element),
            _ => self.anchor_shift,
        };
        match name.as_str() {
            // The guard moves the ranges; the arm drops what has none left.
            "conditionalFormatting"
            | "dataValidation"
            | "ignoredError"
            | "protectedRange"
            | "sparkline"
                if self.own && !self.sqref_moved(element) =>
            {
                return Ok(false);
            }
            "autoFilter" | "sortState" | "sortCondition" | "location" if self.own => {
                if let Some(range) = element.attr("ref") {
                    match range_moved(&range, rows) {
                        Some(new) => element.set_attr("ref", &new),
                        None => return Ok(false),
                    }
                }
            }
            "comment" | "threadedComment" | "cellWatch" if self.own => {
                let key = if name == "cellWatch" { "r" } else { "ref" };
                if let Some(cell) = element.attr(key) {
                    match range_moved(&cell, rows) {
                        Some(new) => element.set_attr(key, &new),
                        None => return Ok(false),
                    }
                }
            }
            "brk" if self.own && element.attr("id").is_some() => {
                return Ok(self.page_break_moved(element));
            }
            "selection" if self.own => self.selection_moved(element),
            "pane" if self.own => {
                if let Some(cell) = element.attr("topLeftCell") {
                    element.set_attr("topLeftCell", &self.cell_kept(&cell));
                }
            }
            "twoCellAnchor" | "oneCellAnchor" | "anchor" if self.own => {
                anchor_moved(element, rows);
            }
            // The guard moves the shape; the arm drops a note on a deleted row.
            "shape" if self.own && !self.vml_shape_moved(element) => return Ok(false),
            "worksheetSource" => {
                let ours = element
                    .attr("sheet")
                    .is_some_and(|sheet| same_sheet(&sheet, self.moved.sheet));
                if let (true, Some(range)) = (ours, element.attr("ref")) {
                    // A source whose rows all go keeps its place, as the
                    // cache keeps its records until it is refreshed.
                    if let Some(new) = range_moved(&range, rows) {
                        element.set_attr("ref", &new);
                    }
                }
            }
            "definedName"
                if !element
                    .attr("name")
                    .is_some_and(|n| n.starts_with("_xlnm.")) =>
            {
                return Ok(true);
            }
            "formula" | "formula1" | "formula2" | "f" | "FmlaLink" | "FmlaRange"
            | "definedName" => {
                let text = element.text();
                let new = self.formula(&text)?;
                if new != text {
                    element.set_text(&new);
                }
                return Ok(true);
            }
            "cfvo" => {
                if let Some(value) = element.attr("val") {
                    let new = self.formula(&value)?;
                    if new != value {
                        element.set_attr("val", &new);
                    }
                }
            }
            _ => {}
        }
        for name in ["fmlaLink", "fmlaRange", "fmlaTxbx"] {
            if let Some(value) = element.attr(name) {
                let new = self.formula(&value)?;
                if new != value {
                    element.set_attr(name, &new);
                }
            }
        }
        let before = element.elements().count();
        let inner = Mover {
            anchor_shift,
            ..*self
        };
        inner.nodes(&mut element.children)?;
        let after = element.elements().count();
        Ok(self.container_kept(element, before, after))
    }

    /// How far a rule's formulas are copied down before they move (see
    /// [`Mover::anchor_shift`]): from the first cell of its first range to
    /// the first row of that range left, when that cell's row is deleted.
    fn anchor_shift(&self, element: &Element) -> i64 {
        let ranges = element
            .attr("sqref")
            .or_else(|| element.child("sqref").map(Element::text));
        let first = ranges
            .as_deref()
            .and_then(|r| r.split_ascii_whitespace().next());
        let Some(range) = first.and_then(range_ref) else {
            return 0;
        };
        let top = range.first_row + 1;
        let RowMove::Deleted(deleted) = self.moved.rows else {
            return 0;
        };
        // The deleted rows from `top` on that follow each other.
        let from = deleted.partition_point(|&d| d < top);
        let run = deleted[from..]
            .iter()
            .zip(top..)
            .take_while(|(d, row)| *d == row)
            .count() as u32;
        match run {
            0 => 0,
            run if top + run <= range.last_row + 1 => i64::from(run),
            _ => 0,
        }
    }

    /// A formula of the element, moved.
    fn formula(&self, text: &str) -> Result<String, WriteError> {
        let copied;
        let text = match self.anchor_shift {
            0 => text,
            by => {
                copied = shifted(text, by, 0);
                &copied
            }
        };
        rows_moved(text, self.home, self.moved).map_err(|why| {
            WriteError::Refused(format!(
                "a formula on sheet {:?} ({text}) cannot be adjusted: {why}",
                self.home
            ))
        })
    }

    /// Moves an element's ranges: its `sqref` attribute, or an `xm:sqref`
    /// child (x14 elements); whether any is left.
    fn sqref_moved(&self, element: &mut Element) -> bool {
        let rows = self.moved.rows;
        // Rows inserted take the formats and validations of the row above.
        let moved = match element.name() {
            "conditionalFormatting" | "dataValidation" => ranges_moved_with_row_above,
            _ => ranges_moved,
        };
        if let Some(ranges) = element.attr("sqref") {
            return match moved(&ranges, rows) {
                Some(new) => {
                    element.set_attr("sqref", &new);
                    true
                }
                None => false,
            };
        }
        match element.child_mut("sqref") {
            Some(child) => match moved(&child.text(), rows) {
                Some(new) => {
                    child.set_text(&new);
                    true
                }
                None => false,
            },
            None => true,
        }
    }

    /// A manual page break (`<brk id>`: the break above the 0-based row
    /// `id`, which starts a page) moved with the row that starts the page;
    /// whether it stays (it goes with that row).
    fn page_break_moved(&self, element: &mut Element) -> bool {
        let Some(id) = element
            .attr("id")
            .and_then(|id| id.parse::<u32>().ok())
            .filter(|&id| id < LAST_ROW)
        else {
            return true;
        };
        match self.moved.rows.row(id + 1) {
            Some(row) => {
                element.set_attr("id", &(row - 1).to_string());
                true
            }
            None => false,
        }
    }

    /// The selection's cells, moved; a selection on deleted rows stays
    /// where the rows below came up to.
    fn selection_moved(&self, element: &mut Element) {
        let active = element.attr("activeCell").map(|c| self.cell_kept(&c));
        if let Some(active) = &active {
            element.set_attr("activeCell", active);
        }
        if let Some(ranges) = element.attr("sqref") {
            let new = ranges_moved(&ranges, self.moved.rows)
                .or_else(|| active.clone())
                .unwrap_or(ranges);
            element.set_attr("sqref", &new);
        }
    }

    /// A cell moved with its row; a cell of a deleted row becomes the cell
    /// that takes its place.
    fn cell_kept(&self, cell: &str) -> String {
        if let Some(new) = range_moved(cell, self.moved.rows) {
            return new;
        }
        let column: String = cell.chars().take_while(|c| !c.is_ascii_digit()).collect();
        let row: u32 = cell[column.len()..].parse().unwrap_or(1);
        format!("{column}{}", row_kept(row, self.moved.rows))
    }

    /// A VML shape: a note's box moves with its cell, and goes with a
    /// deleted row; a form control's box moves as a drawing's anchor does.
    /// Whether it stays.
    fn vml_shape_moved(&self, shape: &mut Element) -> bool {
        let rows = self.moved.rows;
        let Some(data) = shape.child_mut("ClientData") else {
            return true;
        };
        let note = data.attr("ObjectType").is_some_and(|t| t == "Note");
        let cell_row = data
            .child("Row")
            .and_then(|r| r.text().trim().parse::<u32>().ok());
        let shift = match (note, cell_row) {
            (true, Some(row)) => match rows.row(row + 1) {
                Some(new) => {
                    if let Some(element) = data.child_mut("Row") {
                        element.set_text(&(new - 1).to_string());
                    }
                    Some(i64::from(new) - i64::from(row + 1))
                }
                None => return false,
            },
            _ => None,
        };
        if let Some(anchor) = data.child_mut("Anchor") {
            let mut values: Vec<String> = anchor
                .text()
                .split(',')
                .map(|v| v.trim().to_owned())
                .collect();
            if values.len() == 8 {
                for at in [2, 6] {
                    if let Some(row) = values[at].parse::<u32>().ok().filter(|&r| r < LAST_ROW) {
                        let new = match shift {
                            Some(by) => u32::try_from(i64::from(row) + by).unwrap_or(0),
                            None => row_kept(row + 1, rows) - 1,
                        };
                        values[at] = new.to_string();
                    }
                }
                anchor.set_text(&values.join(", "));
            }
        }
        true
    }

    /// Whether a container stays once its children moved: a list whose
    /// every member went goes too, and a list's count follows its members.
    fn container_kept(&self, element: &mut Element, before: usize, after: usize) -> bool {
        if after == before {
            return true;
        }
        match element.name() {
            // A sparkline group without sparklines is no valid group.
            "sparklineGroup" => element.child("sparklines").is_some(),
            "commentList" => true,
            "dataValidations"
            | "rowBreaks"
            | "colBreaks"
            | "ignoredErrors"
            | "protectedRanges"
            | "sparklines"
            | "sparklineGroups"
            | "conditionalFormattings"
            | "cellWatches"
            | "ext"
            | "extLst" => {
                for count in ["count", "manualBreakCount"] {
                    if element.attr(count).is_some() {
                        element.set_attr(count, &after.to_string());
                    }
                }
                after > 0
            }
            _ => true,
        }
    }
}

/// The row (1-based) that sits where row `row` was once rows moved: its
/// own place, or for a deleted row the place the rows below came up to.
fn row_kept(row: u32, rows: &RowMove) -> u32 {
    match rows {
        RowMove::Deleted(deleted) => {
            let above = deleted.partition_point(|&d| d < row) as u32;
            (row - above).max(1)
        }
        RowMove::Inserted { .. } => rows.row(row).unwrap_or(row),
    }
}

/// How an object anchored to cells follows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follows {
    /// Moved and sized: each corner goes with its row.
    MoveAndSize,
    /// Moved, not sized: the far corner moves as the near one.
    Move,
    /// Left where it is.
    Stay,
}

impl Follows {
    /// As a drawing's anchor says: `editAs` of a two-cell anchor, a one-cell
    /// anchor, or the `moveWithCells`/`sizeWithCells` of an embedded
    /// object's or form control's `<anchor>`.
    fn of(anchor: &Element) -> Follows {
        let yes = |name: &str| {
            anchor
                .attr(name)
                .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
        };
        match (anchor.name(), anchor.attr("editAs").as_deref()) {
            ("anchor", _) => match (yes("moveWithCells"), yes("sizeWithCells")) {
                (false, _) => Follows::Stay,
                (true, false) => Follows::Move,
                (true, true) => Follows::MoveAndSize,
            },
            ("oneCellAnchor", _) | (_, Some("oneCell")) => Follows::Move,
            (_, Some("absolute")) => Follows::Stay,
            _ => Follows::MoveAndSize,
        }
    }
}

/// Moves a drawing's anchor as [`Follows::of`] says: an object over
/// deleted rows shrinks when it is sized with its cells.
fn anchor_moved(element: &mut Element, rows: &RowMove) {
    let follows = Follows::of(element);
    if follows == Follows::Stay {
        return;
    }
    let corner_row = |element: &Element, name: &str| {
        element
            .child(name)
            .and_then(|c| c.child("row"))
            .and_then(|r| r.text().trim().parse::<u32>().ok())
            .filter(|&row| row < LAST_ROW)
    };
    let (Some(from), to) = (corner_row(element, "from"), corner_row(element, "to")) else {
        return;
    };
    let new_from = corner_moved(from, rows);
    set_corner(element, "from", new_from);
    let Some(to) = to else {
        return;
    };
    let new_to = match follows {
        Follows::Move => {
            let by = i64::from(new_from.0) - i64::from(from);
            (
                u32::try_from(i64::from(to) + by).unwrap_or(new_from.0),
                false,
            )
        }
        _ => corner_moved(to, rows),
    };
    set_corner(element, "to", new_to);
}

/// A corner's new 0-based row, and whether its row was deleted (its
/// offset inside the row is then lost).
fn corner_moved(row: u32, rows: &RowMove) -> (u32, bool) {
    match rows.row(row + 1) {
        Some(new) => (new - 1, false),
        None => (row_kept(row + 1, rows) - 1, true),
    }
}

/// Sets a corner's row (`<xdr:row>`), and zeroes its offset when its row
/// was deleted.
fn set_corner(anchor: &mut Element, name: &str, (row, deleted): (u32, bool)) {
    let Some(corner) = anchor.child_mut(name) else {
        return;
    };
    if let Some(element) = corner.child_mut("row") {
        element.set_text(&row.to_string());
    }
    if deleted && let Some(offset) = corner.child_mut("rowOff") {
        offset.set_text("0");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `xml`, an element or part of sheet `home` ("" for a chart), once
    /// rows of sheet `Data` moved; `None` when it goes.
    fn moved_from(xml: &str, rows: RowMove, home: &str) -> Result<Option<String>, WriteError> {
        let order = ["Data", "Report"];
        let moved = SheetRows {
            sheet: "Data",
            order: &order,
            rows: &rows,
        };
        let mover = Mover {
            home,
            own: home == "Data",
            moved: &moved,
            anchor_shift: 0,
        };
        let mut nodes = tree::parse(xml.as_bytes()).unwrap();
        mover.nodes(&mut nodes)?;
        Ok((!nodes.is_empty()).then(|| String::from_utf8(tree::write(&nodes)).unwrap()))
    }

    /// [`moved_from`] for an element of `Data` (`own`) or a chart.
    fn moved(xml: &str, rows: RowMove, own: bool) -> Option<String> {
        moved_from(xml, rows, if own { "Data" } else { "" }).unwrap()
    }

    fn deleted(rows: &[u32]) -> RowMove {
        RowMove::Deleted(rows.to_vec())
    }

    /// A part or element past the bound is refused, naming it, before it
    /// is read; one at the bound moves.
    #[test]
    fn rows_move_only_in_xml_within_the_bound() {
        let order = ["Data"];
        let rows = deleted(&[1]);
        let moved = SheetRows {
            sheet: "Data",
            order: &order,
            rows: &rows,
        };
        let mover = Mover {
            home: "Data",
            own: true,
            moved: &moved,
            anchor_shift: 0,
        };
        let anchor = "<xdr:from><xdr:col>0</xdr:col><xdr:row>5</xdr:row></xdr:from>";
        let drawing = |len: usize| {
            let open = r#"<xdr:wsDr xmlns:xdr="x"><xdr:oneCellAnchor>"#;
            let close = "</xdr:oneCellAnchor></xdr:wsDr>";
            let pad = " ".repeat(len - open.len() - anchor.len() - close.len());
            format!("{open}{anchor}{pad}{close}")
        };
        let part = |len: usize| Part {
            name: "xl/drawings/drawing1.xml".into(),
            content_type: None,
            bytes: Arc::from(drawing(len).into_bytes()),
        };
        let mut within = part(MAX_MOVED_XML);
        part_moved(&mut within, &mover).expect("moved");
        assert!(String::from_utf8_lossy(&within.bytes).contains("<xdr:row>4</xdr:row>"));
        let mut past = part(MAX_MOVED_XML + 1);
        let error = part_moved(&mut past, &mover).expect_err("refused");
        assert!(matches!(&error, WriteError::Refused(why)
            if why.contains("xl/drawings/drawing1.xml") && why.contains("32 MiB")));

        let mut carried = CarriedXml {
            elements: vec![crate::model::carried::Element {
                name: "dataValidations".into(),
                xml: format!(
                    r#"<dataValidations count="1">{}</dataValidations>"#,
                    " ".repeat(MAX_MOVED_XML)
                ),
            }],
            ..CarriedXml::default()
        };
        let error = elements_moved(&mut carried, &mover).expect_err("refused");
        assert!(matches!(&error, WriteError::Refused(why) if why.contains("<dataValidations>")));
    }

    #[test]
    fn a_rule_whose_first_row_goes_keeps_its_formula_for_the_next() {
        let rule = r#"<conditionalFormatting sqref="A10:D15"><cfRule type="expression" priority="1"><formula>$B10&gt;$J$20</formula></cfRule></conditionalFormatting>"#;
        assert_eq!(
            moved(rule, deleted(&[10]), true).unwrap(),
            r#"<conditionalFormatting sqref="A10:D14"><cfRule type="expression" priority="1"><formula>$B10&gt;$J$19</formula></cfRule></conditionalFormatting>"#
        );
        assert_eq!(moved(rule, deleted(&[10, 11, 12, 13, 14, 15]), true), None);
        let inserted = moved(
            rule,
            RowMove::Inserted {
                before: 3,
                count: 2,
            },
            true,
        )
        .unwrap();
        assert!(inserted.contains(r#"sqref="A12:D17""#), "{inserted}");
        assert!(inserted.contains("$B12&gt;$J$22"), "{inserted}");
    }

    #[test]
    fn validations_go_with_their_rows_and_the_count_follows() {
        let list = r#"<dataValidations count="2"><dataValidation type="list" sqref="A10"><formula1>$H$12:$H$15</formula1></dataValidation><dataValidation type="list" sqref="B2:B20"><formula1>Report!$A$1:$A$3</formula1></dataValidation></dataValidations>"#;
        assert_eq!(
            moved(list, deleted(&[10]), true).unwrap(),
            r#"<dataValidations count="1"><dataValidation type="list" sqref="B2:B19"><formula1>Report!$A$1:$A$3</formula1></dataValidation></dataValidations>"#
        );
    }

    #[test]
    fn elements_of_other_sheets_move_only_their_references_to_the_sheet() {
        let rule = r#"<dataValidation type="list" sqref="A10"><formula1>Data!$H$12:$H$15</formula1></dataValidation>"#;
        assert_eq!(
            moved_from(rule, deleted(&[10]), "Report").unwrap().unwrap(),
            r#"<dataValidation type="list" sqref="A10"><formula1>Data!$H$11:$H$14</formula1></dataValidation>"#
        );
    }

    #[test]
    fn notes_on_deleted_rows_go_and_the_others_move_with_their_boxes() {
        let comments = r#"<comments><commentList><comment ref="B10"><text>a</text></comment><comment ref="B12"><text>b</text></comment></commentList></comments>"#;
        assert_eq!(
            moved(comments, deleted(&[10]), true).unwrap(),
            r#"<comments><commentList><comment ref="B11"><text>b</text></comment></commentList></comments>"#
        );
        let vml = r#"<xml><v:shape><x:ClientData ObjectType="Note"><x:Anchor>2, 15, 8, 2, 4, 15, 12, 16</x:Anchor><x:Row>9</x:Row></x:ClientData></v:shape><v:shape><x:ClientData ObjectType="Note"><x:Anchor>2, 15, 10, 2, 4, 15, 14, 16</x:Anchor><x:Row>11</x:Row></x:ClientData></v:shape></xml>"#;
        assert_eq!(
            moved(vml, deleted(&[10]), true).unwrap(),
            r#"<xml><v:shape><x:ClientData ObjectType="Note"><x:Anchor>2, 15, 9, 2, 4, 15, 13, 16</x:Anchor><x:Row>10</x:Row></x:ClientData></v:shape></xml>"#
        );
    }

    #[test]
    fn drawings_shrink_grow_and_move_with_their_rows() {
        let anchor = |edit_as: &str, from: u32, to: u32| {
            format!(
                r#"<xdr:twoCellAnchor{edit_as}><xdr:from><xdr:col>5</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>{from}</xdr:row><xdr:rowOff>10</xdr:rowOff></xdr:from><xdr:to><xdr:col>7</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>{to}</xdr:row><xdr:rowOff>20</xdr:rowOff></xdr:to></xdr:twoCellAnchor>"#
            )
        };
        // Rows 8 to 12 (0-based 7 to 11); row 10 deleted, a row inserted.
        assert_eq!(
            moved(&anchor("", 7, 11), deleted(&[10]), true).unwrap(),
            anchor("", 7, 10)
        );
        let inserted = RowMove::Inserted {
            before: 10,
            count: 1,
        };
        assert_eq!(
            moved(&anchor("", 7, 11), inserted.clone(), true).unwrap(),
            anchor("", 7, 12)
        );
        assert_eq!(
            moved(&anchor("", 11, 12), inserted.clone(), true).unwrap(),
            anchor("", 12, 13)
        );
        // Moved, not sized; or left where it is.
        let one_cell = r#" editAs="oneCell""#;
        assert_eq!(
            moved(&anchor(one_cell, 3, 11), deleted(&[1]), true).unwrap(),
            anchor(one_cell, 2, 10)
        );
        let absolute = r#" editAs="absolute""#;
        assert_eq!(
            moved(&anchor(absolute, 3, 11), deleted(&[1]), true).unwrap(),
            anchor(absolute, 3, 11)
        );
        // An embedded object's or form control's anchor says it itself.
        let control = |attributes: &str, from: u32, to: u32| {
            format!(
                r#"<anchor{attributes}><from><xdr:row>{from}</xdr:row></from><to><xdr:row>{to}</xdr:row></to></anchor>"#
            )
        };
        let moves = r#" moveWithCells="1""#;
        assert_eq!(
            moved(&control(moves, 9, 12), deleted(&[1, 11]), true).unwrap(),
            control(moves, 8, 11)
        );
        assert_eq!(
            moved(&control("", 9, 12), deleted(&[1]), true).unwrap(),
            control("", 9, 12)
        );
    }

    #[test]
    fn charts_and_pivot_sources_follow_the_sheet_they_read() {
        let series = r#"<c:ser><c:val><c:numRef><c:f>Data!$B$2:$B$21</c:f></c:numRef></c:val><c:cat><c:f>Report!$A$2:$A$21</c:f></c:cat></c:ser>"#;
        assert_eq!(
            moved(series, deleted(&[10]), false).unwrap(),
            r#"<c:ser><c:val><c:numRef><c:f>Data!$B$2:$B$20</c:f></c:numRef></c:val><c:cat><c:f>Report!$A$2:$A$21</c:f></c:cat></c:ser>"#
        );
        let source = r#"<cacheSource type="worksheet"><worksheetSource ref="A1:D21" sheet="data"/></cacheSource>"#;
        assert_eq!(
            moved(
                source,
                RowMove::Inserted {
                    before: 5,
                    count: 3
                },
                false
            )
            .unwrap(),
            r#"<cacheSource type="worksheet"><worksheetSource ref="A1:D24" sheet="data"/></cacheSource>"#
        );
    }

    #[test]
    fn page_breaks_and_the_selection_follow_their_rows() {
        let breaks = r#"<rowBreaks count="2" manualBreakCount="2"><brk id="10" max="16383" man="1"/><brk id="15" max="16383" man="1"/></rowBreaks>"#;
        assert_eq!(
            moved(breaks, deleted(&[10]), true).unwrap(),
            r#"<rowBreaks count="2" manualBreakCount="2"><brk id="9" max="16383" man="1"/><brk id="14" max="16383" man="1"/></rowBreaks>"#
        );
        let view = r#"<sheetView><pane ySplit="1" topLeftCell="A2" state="frozen"/><selection activeCell="B10" sqref="B10"/></sheetView>"#;
        assert_eq!(
            moved(view, deleted(&[10]), true).unwrap(),
            r#"<sheetView><pane ySplit="1" topLeftCell="A2" state="frozen"/><selection activeCell="B10" sqref="B10"/></sheetView>"#
        );
    }

    #[test]
    fn a_sparkline_group_whose_sparklines_all_go_goes_with_them() {
        let groups = r#"<x14:sparklineGroups><x14:sparklineGroup><x14:colorSeries rgb="FF376092"/><x14:sparklines><x14:sparkline><xm:f>Data!B10:C10</xm:f><xm:sqref>G10</xm:sqref></x14:sparkline></x14:sparklines></x14:sparklineGroup></x14:sparklineGroups>"#;
        let ext = format!(r#"<extLst><ext uri="x">{groups}</ext></extLst>"#);
        assert_eq!(moved(&ext, deleted(&[10]), true), None);
    }

    #[test]
    fn html_line_breaks_in_note_boxes_are_read() {
        assert_eq!(
            well_formed_vml(b"<div><font>a<br>b<BR>c</font></div>"),
            b"<div><font>a<br/>b<br/>c</font></div>"
        );
    }

    #[test]
    fn a_3d_reference_across_the_sheet_is_refused() {
        let rule = r#"<dataValidation type="decimal" sqref="A2"><formula1>SUM(Data:Report!A1)</formula1></dataValidation>"#;
        let refused = moved_from(rule, deleted(&[10]), "Data").unwrap_err();
        assert!(refused.to_string().contains("Data:Report"), "{refused}");
    }
}
