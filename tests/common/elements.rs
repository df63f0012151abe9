//! A comparable summary of everything in an .xlsx that points at cells:
//! the oracle of contract 11.2 ("rows move, and everything moves with
//! them"), used by tests/moves.rs.
//!
//! [`summarize`] reads the package with `zip` and `quick-xml` and returns,
//! per sheet and kind (`"Data/merges"`, `"Report/chart_series"`,
//! `"workbook/defined_names"`), a sorted list of one-line descriptions.
//! Only representation is normalized, never meaning:
//! - formulas: a leading `=` and surrounding whitespace dropped, letters
//!   outside string literals uppercased, quotes around a sheet name that
//!   needs none dropped (`'Data'!A1` is `Data!A1`), `Data!#REF!` is
//!   `#REF!` (a deleted reference names no cell); `$` is kept;
//! - a sqref's ranges sorted (`A10 D12:D14` is `D12:D14 A10`);
//! - attributes at their schema default written out or not (a data
//!   validation's `operator` is `between` when absent; a selection's `pane`
//!   is `topLeft`), and a data validation's `formula2` where the rule has
//!   no second operand (LibreOffice writes `<formula2>0</formula2>` on
//!   every rule);
//! - a picture or chart that moves but does not size with its cells
//!   (`oneCellAnchor`, or `editAs="oneCell"`) is described by its `from`
//!   cell only: its `to` is derived from its size.
//!
//! Differences that are real (LibreOffice drops or rewrites an element on
//! a plain re-save) are not normalized away: tests/moves.rs lists them.
#![allow(dead_code)] // each test binary uses a different part of `common`

use std::collections::{BTreeMap, HashMap};
use std::io::{Cursor, Read};

use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};

/// Kind key (`"<sheet>/<kind>"` or `"workbook/<kind>"`) → sorted
/// descriptions.
pub type Summary = BTreeMap<String, Vec<String>>;

/// An XML element: local name, attributes by local name, children, and its
/// own text (entities resolved).
#[derive(Debug, Default, Clone)]
pub struct Node {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    pub text: String,
}

impl Node {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// Every element named `name` below this one, in document order.
    pub fn descendants(&self, name: &str) -> Vec<&Node> {
        let mut found = Vec::new();
        self.collect(name, &mut found);
        found
    }

    fn collect<'a>(&'a self, name: &str, found: &mut Vec<&'a Node>) {
        for child in &self.children {
            if child.name == name {
                found.push(child);
            }
            child.collect(name, found);
        }
    }

    /// The text of this element and all below it.
    pub fn all_text(&self) -> String {
        let mut text = self.text.clone();
        for child in &self.children {
            text.push_str(&child.all_text());
        }
        text
    }
}

/// Parses XML into a tree of local names. Lenient: an end tag closes the
/// innermost open element of its name (VML has unclosed `<br>`s), one
/// without an open element is ignored, and a malformed document gives what
/// was read up to the error.
pub fn parse(xml: &[u8]) -> Node {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().check_end_names = false;
    let mut stack = vec![Node::default()];
    let mut buf = Vec::new();
    while let Ok(event) = reader.read_event_into(&mut buf) {
        let empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let node = Node {
                    name: e.local_name().as_ref().to_owned(),
                    attrs: e
                        .attributes()
                        .with_checks(false)
                        .flatten()
                        .filter_map(|a| {
                            let value = a.normalized_value(XmlVersion::Implicit1_0).ok()?;
                            let key = a.key.local_name().as_ref().to_owned();
                            Some((key, value.into_owned()))
                        })
                        .collect(),
                    ..Node::default()
                };
                if empty {
                    stack.last_mut().expect("root").children.push(node);
                } else {
                    stack.push(node);
                }
            }
            Event::End(e) => {
                let name = e.local_name().as_ref().to_owned();
                if let Some(at) = stack
                    .iter()
                    .rposition(|n| n.name == name)
                    .filter(|&at| at > 0)
                {
                    while stack.len() > at {
                        let node = stack.pop().expect("open element");
                        stack.last_mut().expect("root").children.push(node);
                    }
                }
            }
            Event::Text(text) => {
                let text = text.xml10_content();
                stack.last_mut().expect("root").text.push_str(&text);
            }
            Event::CData(text) => {
                let text = text.into_inner().into_owned();
                stack.last_mut().expect("root").text.push_str(&text);
            }
            Event::GeneralRef(reference) => {
                let text = match reference.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => quick_xml::escape::resolve_predefined_entity(&reference.xml10_content())
                        .unwrap_or("")
                        .to_owned(),
                };
                stack.last_mut().expect("root").text.push_str(&text);
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    while stack.len() > 1 {
        let node = stack.pop().expect("open element");
        stack.last_mut().expect("root").children.push(node);
    }
    stack.pop().expect("root")
}

// ---------------------------------------------------------------------------
// Normalization

/// A formula as written in any part: see the module documentation.
pub fn formula(text: &str) -> String {
    let text = text.trim();
    let text = text.strip_prefix('=').unwrap_or(text).trim();
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '"' => {
                // A string literal, kept as written ("" is an escaped quote).
                out.push('"');
                i += 1;
                while i < chars.len() {
                    out.push(chars[i]);
                    if chars[i] == '"' {
                        if chars.get(i + 1) == Some(&'"') {
                            out.push('"');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            '\'' => {
                // A quoted sheet name ('' is an escaped quote).
                let mut name = String::new();
                i += 1;
                while i < chars.len() {
                    if chars[i] == '\'' {
                        if chars.get(i + 1) == Some(&'\'') {
                            name.push('\'');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    name.push(chars[i]);
                    i += 1;
                }
                i += 1;
                let name = name.to_uppercase();
                if needs_quotes(&name) {
                    out.push('\'');
                    out.push_str(&name.replace('\'', "''"));
                    out.push('\'');
                } else {
                    out.push_str(&name);
                }
            }
            c => {
                out.extend(c.to_uppercase());
                i += 1;
            }
        }
    }
    strip_sheet_of_ref_errors(&out)
}

/// `DATA!#REF!` is `#REF!`: a reference that was deleted names no cell,
/// whichever sheet it was on (Excel and sheetd keep the sheet name,
/// LibreOffice drops it).
fn strip_sheet_of_ref_errors(text: &str) -> String {
    let mut out = text.to_owned();
    while let Some(at) = out.find("!#REF!") {
        let start = out[..at]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '\''))
            .map_or(0, |i| i + 1);
        out.replace_range(start..at + 1, "");
    }
    out
}

/// Whether a sheet name must be quoted in a reference: anything but
/// letters, digits, `_` and `.`, a leading digit, or a name that reads as
/// a cell reference (`A1`, `R1C1`).
fn needs_quotes(name: &str) -> bool {
    let plain = name
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    if name.is_empty() || !plain || name.starts_with(|c: char| c.is_ascii_digit()) {
        return true;
    }
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let letters = name.chars().take_while(char::is_ascii_alphabetic).count();
    let a1 = (1..=3).contains(&letters) && letters < name.len() && digits(&name[letters..]);
    let r1c1 = name
        .strip_prefix('R')
        .and_then(|rest| rest.split_once('C'))
        .is_some_and(|(r, c)| digits(r) && digits(c));
    a1 || r1c1
}

/// A space-separated list of ranges, sorted, uppercased.
pub fn sqref(text: &str) -> String {
    let mut ranges: Vec<String> = text.split_whitespace().map(str::to_uppercase).collect();
    ranges.sort();
    ranges.join(" ")
}

/// The A1 name of a zero-based column and row.
pub fn cell(col: u32, row: u32) -> String {
    let mut letters = Vec::new();
    let mut n = col + 1;
    while n > 0 {
        let rem = (n - 1) % 26;
        letters.push(char::from(b'A' + rem as u8));
        n = (n - 1) / 26;
    }
    letters.reverse();
    format!("{}{}", letters.into_iter().collect::<String>(), row + 1)
}

// ---------------------------------------------------------------------------
// The package

/// An unzipped package: its parts by name.
pub struct Package {
    parts: HashMap<String, Vec<u8>>,
}

/// A relationship: its id, the last segment of its type, and the part it
/// targets (resolved to a package path), or `None` when external.
struct Rel {
    id: String,
    kind: String,
    target: Option<String>,
}

impl Package {
    pub fn open(bytes: &[u8]) -> Package {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("an xlsx is a zip");
        let mut parts = HashMap::new();
        for i in 0..zip.len() {
            let mut file = zip.by_index(i).expect("zip entry");
            let name = file
                .name()
                .expect("entry name")
                .trim_start_matches('/')
                .to_owned();
            let mut data = Vec::new();
            file.read_to_end(&mut data).expect("zip entry reads");
            parts.insert(name, data);
        }
        Package { parts }
    }

    /// The document element of a part.
    pub fn xml(&self, part: &str) -> Option<Node> {
        let root = parse(self.parts.get(part)?);
        root.children.into_iter().next()
    }

    fn rels(&self, part: &str) -> Vec<Rel> {
        let (dir, file) = part.rsplit_once('/').unwrap_or(("", part));
        let rels_part = if dir.is_empty() {
            format!("_rels/{file}.rels")
        } else {
            format!("{dir}/_rels/{file}.rels")
        };
        let Some(root) = self.xml(&rels_part) else {
            return Vec::new();
        };
        root.descendants("Relationship")
            .into_iter()
            .map(|r| {
                let external = r.attr("TargetMode") == Some("External");
                let target = r.attr("Target").unwrap_or("");
                Rel {
                    id: r.attr("Id").unwrap_or("").to_owned(),
                    kind: r
                        .attr("Type")
                        .unwrap_or("")
                        .rsplit('/')
                        .next()
                        .unwrap_or("")
                        .to_owned(),
                    target: (!external).then(|| resolve(dir, target)),
                }
            })
            .collect()
    }

    /// The workbook part, as the package's relationships name it.
    pub fn workbook_part(&self) -> String {
        self.rel_targets("", "officeDocument")
            .into_iter()
            .next()
            .unwrap_or_else(|| "xl/workbook.xml".to_owned())
    }

    /// Each sheet of the workbook part `workbook` (at `workbook_part`):
    /// its name and its part, in the workbook's order.
    pub fn sheets(&self, workbook_part: &str, workbook: &Node) -> Vec<(String, String)> {
        workbook
            .descendants("sheet")
            .into_iter()
            .filter_map(|sheet| {
                let part = self.rel_target(workbook_part, sheet.attr("id")?)?;
                Some((sheet.attr("name").unwrap_or("").to_owned(), part))
            })
            .collect()
    }

    pub fn rel_target(&self, part: &str, id: &str) -> Option<String> {
        self.rels(part)
            .into_iter()
            .find(|r| r.id == id)
            .and_then(|r| r.target)
    }

    pub fn rel_targets(&self, part: &str, kind: &str) -> Vec<String> {
        self.rels(part)
            .into_iter()
            .filter(|r| r.kind == kind)
            .filter_map(|r| r.target)
            .collect()
    }
}

/// A relationship target relative to `dir` (or absolute), as a package path.
fn resolve(dir: &str, target: &str) -> String {
    let mut segments: Vec<&str> = if let Some(absolute) = target.strip_prefix('/') {
        return normalize_path(absolute.split('/').collect());
    } else {
        dir.split('/').filter(|s| !s.is_empty()).collect()
    };
    segments.extend(target.split('/'));
    normalize_path(segments)
}

fn normalize_path(segments: Vec<&str>) -> String {
    let mut out: Vec<&str> = Vec::new();
    for segment in segments {
        match segment {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

// ---------------------------------------------------------------------------
// The summary

/// The summary of an .xlsx: see the module documentation.
pub fn summarize(bytes: &[u8]) -> Summary {
    let package = Package::open(bytes);
    let mut summary = Summary::new();
    let mut add = |key: String, line: String| summary.entry(key).or_default().push(line);

    let workbook_part = package.workbook_part();
    let workbook = package.xml(&workbook_part).expect("the workbook part");
    let sheets = package.sheets(&workbook_part, &workbook);

    // Defined names: print areas and titles under their sheet, the
    // autofilter's hidden database name under its sheet, the rest together.
    for name in workbook.descendants("definedName") {
        let label = name.attr("name").unwrap_or("");
        let scope = name
            .attr("localSheetId")
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| sheets.get(i))
            .map(|(n, _)| n.clone());
        let text = formula(&name.all_text());
        match (label.strip_prefix("_xlnm."), &scope) {
            (Some("_FilterDatabase"), Some(sheet)) => {
                add(format!("{sheet}/filter_database"), text);
            }
            (Some(builtin), Some(sheet)) => {
                add(format!("{sheet}/print"), format!("{builtin} = {text}"))
            }
            _ => {
                let scoped = scope.map(|s| format!(" (on {s})")).unwrap_or_default();
                add(
                    "workbook/defined_names".into(),
                    format!("{label}{scoped} = {text}"),
                );
            }
        }
    }

    // Pivot caches: the ranges pivot tables read.
    for cache in workbook.descendants("pivotCache") {
        let Some(part) = cache
            .attr("id")
            .and_then(|id| package.rel_target(&workbook_part, id))
        else {
            continue;
        };
        let Some(definition) = package.xml(&part) else {
            continue;
        };
        for source in definition.descendants("worksheetSource") {
            let line = match (
                source.attr("sheet"),
                source.attr("ref"),
                source.attr("name"),
            ) {
                (Some(sheet), Some(range), _) => format!("{} {}", formula(sheet), sqref(range)),
                (_, _, Some(name)) => format!("name {}", formula(name)),
                (_, Some(range), _) => sqref(range),
                _ => "?".into(),
            };
            add("workbook/pivot_sources".into(), line);
        }
    }

    for (name, part) in &sheets {
        let Some(sheet) = package.xml(part) else {
            continue;
        };
        sheet_summary(&package, name, part, &sheet, &mut add);
    }

    for lines in summary.values_mut() {
        lines.sort();
    }
    summary
}

fn sheet_summary(
    package: &Package,
    name: &str,
    part: &str,
    sheet: &Node,
    add: &mut impl FnMut(String, String),
) {
    let key = |kind: &str| format!("{name}/{kind}");

    for c in sheet.descendants("c") {
        let Some(f) = c.child("f") else { continue };
        let at = c.attr("r").unwrap_or("?");
        let text = formula(&f.text);
        let line = match f.attr("t") {
            Some("array") => format!("{at} {{{}}} = {text}", sqref(f.attr("ref").unwrap_or(""))),
            Some("shared") if text.is_empty() => {
                format!("{at} shared {}", f.attr("si").unwrap_or(""))
            }
            _ => format!("{at} = {text}"),
        };
        add(key("formulas"), line);
    }

    for merge in sheet.descendants("mergeCell") {
        add(key("merges"), sqref(merge.attr("ref").unwrap_or("")));
    }

    // Conditional formats, the main ones and the x14 ones (which carry
    // their sqref as an `xm:sqref` element).
    for cf in sheet.descendants("conditionalFormatting") {
        let x14 = cf.child("sqref").is_some();
        let range = cf
            .attr("sqref")
            .map(sqref)
            .or_else(|| cf.child("sqref").map(|s| sqref(&s.text)))
            .unwrap_or_default();
        for rule in cf.children_named("cfRule") {
            let kind = if x14 {
                "x14_conditional_formats"
            } else {
                "conditional_formats"
            };
            add(key(kind), format!("{range}: {}", cf_rule(rule)));
        }
    }

    for dv in sheet.descendants("dataValidation") {
        let range = dv
            .attr("sqref")
            .map(sqref)
            .or_else(|| dv.child("sqref").map(|s| sqref(&s.text)))
            .unwrap_or_default();
        let kind = dv.attr("type").unwrap_or("none");
        let operator = dv.attr("operator").unwrap_or("between");
        let operand = |n: &str| {
            dv.child(n).map(|f| {
                // x14 validations nest the formula in an xm:f.
                let text = f.child("f").map_or(f.text.as_str(), |x| x.text.as_str());
                formula(text)
            })
        };
        let mut formulas = vec![operand("formula1").unwrap_or_default()];
        let two_operands = matches!(operator, "between" | "notBetween")
            && !matches!(kind, "list" | "custom" | "none");
        if two_operands {
            formulas.push(operand("formula2").unwrap_or_default());
        }
        let operator = if matches!(kind, "list" | "custom" | "none") {
            String::new()
        } else {
            format!(" {operator}")
        };
        add(
            key("data_validations"),
            format!("{range}: {kind}{operator} [{}]", formulas.join(" ; ")),
        );
    }

    if let Some(filter) = sheet.child("autoFilter") {
        let columns: Vec<String> = filter
            .children_named("filterColumn")
            .map(|c| c.attr("colId").unwrap_or("?").to_owned())
            .collect();
        add(
            key("autofilter"),
            format!(
                "{} filtering columns [{}]",
                sqref(filter.attr("ref").unwrap_or("")),
                columns.join(",")
            ),
        );
    }

    let sheet_rels = package.rels(part);
    for link in sheet.descendants("hyperlink") {
        let target = match (link.attr("location"), link.attr("id")) {
            (Some(location), _) => formula(location),
            (None, Some(id)) if sheet_rels.iter().any(|r| r.id == id) => "external".into(),
            _ => "?".into(),
        };
        add(
            key("hyperlinks"),
            format!("{} -> {target}", sqref(link.attr("ref").unwrap_or(""))),
        );
    }

    if let Some(breaks) = sheet.child("rowBreaks") {
        for brk in breaks.children_named("brk") {
            add(key("row_breaks"), brk.attr("id").unwrap_or("?").to_owned());
        }
    }

    for view in sheet.descendants("sheetView") {
        if let Some(pane) = view.child("pane") {
            add(
                key("pane"),
                format!(
                    "{} xSplit={} ySplit={} topLeftCell={}",
                    pane.attr("state").unwrap_or("split"),
                    pane.attr("xSplit").unwrap_or("0"),
                    pane.attr("ySplit").unwrap_or("0"),
                    pane.attr("topLeftCell").unwrap_or("")
                ),
            );
        }
        for selection in view.children_named("selection") {
            add(
                key("selection"),
                format!(
                    "{} activeCell={} sqref={}",
                    selection.attr("pane").unwrap_or("topLeft"),
                    selection.attr("activeCell").unwrap_or(""),
                    sqref(selection.attr("sqref").unwrap_or(""))
                ),
            );
        }
    }

    for ignored in sheet.descendants("ignoredError") {
        let mut flags: Vec<&str> = ignored
            .attrs
            .iter()
            .filter(|(k, v)| k != "sqref" && matches!(v.as_str(), "1" | "true"))
            .map(|(k, _)| k.as_str())
            .collect();
        flags.sort_unstable();
        add(
            key("ignored_errors"),
            format!(
                "{}: {}",
                sqref(ignored.attr("sqref").unwrap_or("")),
                flags.join(",")
            ),
        );
    }

    for spark in sheet.descendants("sparkline") {
        let f = spark
            .child("f")
            .map(|f| formula(&f.text))
            .unwrap_or_default();
        let at = spark
            .child("sqref")
            .map(|s| sqref(&s.text))
            .unwrap_or_default();
        add(key("sparklines"), format!("{at} <- {f}"));
    }

    for table_part in package.rel_targets(part, "table") {
        let Some(table) = package.xml(&table_part) else {
            continue;
        };
        let filter = table
            .child("autoFilter")
            .and_then(|f| f.attr("ref"))
            .map(sqref)
            .unwrap_or_else(|| "none".into());
        add(
            key("tables"),
            format!(
                "{} {} autofilter {filter}",
                table.attr("displayName").unwrap_or("?"),
                sqref(table.attr("ref").unwrap_or(""))
            ),
        );
    }

    for pivot_part in package.rel_targets(part, "pivotTable") {
        let Some(pivot) = package.xml(&pivot_part) else {
            continue;
        };
        let location = pivot
            .child("location")
            .and_then(|l| l.attr("ref"))
            .unwrap_or("?");
        add(
            key("pivot_tables"),
            format!("{} {}", pivot.attr("name").unwrap_or("?"), sqref(location)),
        );
    }

    for comments_part in package.rel_targets(part, "comments") {
        let Some(comments) = package.xml(&comments_part) else {
            continue;
        };
        for comment in comments.descendants("comment") {
            let text = comment
                .child("text")
                .map(|t| t.all_text())
                .unwrap_or_default();
            add(
                key("notes"),
                format!("{}: {}", comment.attr("ref").unwrap_or("?"), text.trim()),
            );
        }
    }

    for vml_part in package.rel_targets(part, "vmlDrawing") {
        let Some(vml) = package.xml(&vml_part) else {
            continue;
        };
        for data in vml.descendants("ClientData") {
            if data.attr("ObjectType") != Some("Note") {
                continue;
            }
            let number = |n: &str| {
                data.child(n)
                    .and_then(|c| c.text.trim().parse::<u32>().ok())
            };
            let at = match (number("Column"), number("Row")) {
                (Some(col), Some(row)) => cell(col, row),
                _ => "?".into(),
            };
            add(key("note_boxes"), at.clone());
            if let Some(anchor) = data.child("Anchor") {
                // LeftColumn, LeftOffset, TopRow, TopOffset, RightColumn,
                // RightOffset, BottomRow, BottomOffset.
                let n: Vec<&str> = anchor.text.split(',').map(str::trim).collect();
                if n.len() == 8 {
                    add(
                        key("note_box_anchors"),
                        format!("{at}: rows {}..{}", n[2], n[6]),
                    );
                }
            }
        }
    }

    for drawing_part in package.rel_targets(part, "drawing") {
        let Some(drawing) = package.xml(&drawing_part) else {
            continue;
        };
        let anchors = drawing
            .children
            .iter()
            .filter(|a| a.name.ends_with("Anchor"));
        for anchor in anchors {
            let object = anchor
                .children
                .iter()
                .find_map(|c| match c.name.as_str() {
                    "pic" => Some("picture"),
                    "graphicFrame" => Some(if c.descendants("chart").is_empty() {
                        "frame"
                    } else {
                        "chart"
                    }),
                    "sp" => Some("shape"),
                    "cxnSp" => Some("connector"),
                    "grpSp" => Some("group"),
                    _ => None,
                })
                .unwrap_or("object");
            let marker = |n: &str| {
                anchor.child(n).and_then(|m| {
                    let col = m.child("col")?.text.trim().parse().ok()?;
                    let row = m.child("row")?.text.trim().parse().ok()?;
                    Some(cell(col, row))
                })
            };
            let sizes = anchor.name == "twoCellAnchor"
                && anchor.attr("editAs").is_none_or(|e| e == "twoCell");
            let line = match (anchor.name.as_str(), marker("from"), marker("to")) {
                ("absoluteAnchor", _, _) => format!("{object} absolute"),
                (_, Some(from), Some(to)) if sizes => format!("{object} {from}:{to}"),
                (_, Some(from), _) => format!("{object} at {from}"),
                _ => format!("{object} ?"),
            };
            add(key("drawing_anchors"), line);

            for chart in anchor.descendants("chart") {
                let Some(chart_part) = chart
                    .attr("id")
                    .and_then(|id| package.rel_target(&drawing_part, id))
                else {
                    continue;
                };
                let Some(chart_xml) = package.xml(&chart_part) else {
                    continue;
                };
                for f in chart_xml.descendants("f") {
                    add(key("chart_series"), formula(&f.text));
                }
            }
        }
    }
}

/// One conditional-format rule: its type, operator, formulas and the
/// formulas or numbers of its thresholds (`cfvo`).
fn cf_rule(rule: &Node) -> String {
    let mut line = rule.attr("type").unwrap_or("?").to_owned();
    if let Some(operator) = rule.attr("operator") {
        line.push(' ');
        line.push_str(operator);
    }
    let formulas: Vec<String> = rule
        .children
        .iter()
        .filter(|c| c.name == "formula" || c.name == "f")
        .map(|f| formula(&f.text))
        .collect();
    line.push_str(&format!(" [{}]", formulas.join(" ; ")));
    let thresholds: Vec<String> = rule
        .descendants("cfvo")
        .into_iter()
        .map(|v| {
            let kind = v.attr("type").unwrap_or("?");
            let value = v
                .child("f")
                .map(|f| f.text.as_str())
                .or_else(|| v.attr("val"))
                .filter(|_| matches!(kind, "num" | "formula" | "percent" | "percentile"));
            match value {
                Some(value) => format!("{kind} {}", formula(value)),
                None => kind.to_owned(),
            }
        })
        .collect();
    if !thresholds.is_empty() {
        line.push_str(&format!(" cfvo({})", thresholds.join(", ")));
    }
    line
}

/// The kinds in which two summaries differ, each with what only `expected`
/// has and what only `actual` has.
pub fn differences(
    expected: &Summary,
    actual: &Summary,
) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut keys: Vec<&String> = expected.keys().chain(actual.keys()).collect();
    keys.sort();
    keys.dedup();
    let empty = Vec::new();
    keys.into_iter()
        .filter_map(|key| {
            let e = expected.get(key).unwrap_or(&empty);
            let a = actual.get(key).unwrap_or(&empty);
            if e == a {
                return None;
            }
            let missing = e.iter().filter(|l| !a.contains(l)).cloned().collect();
            let extra = a.iter().filter(|l| !e.contains(l)).cloned().collect();
            Some((key.clone(), missing, extra))
        })
        .collect()
}
