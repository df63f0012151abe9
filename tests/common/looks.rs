//! What a person sees of each cell, read from the package alone: the
//! oracle of "every cell keeps its look" (issue 26), used by
//! tests/looks.rs.
//!
//! [`looks`] gives, for every cell element of every worksheet, its style
//! resolved through `cellXfs` (a cell without `s` takes format 0) — the
//! number format's code (built-in ids resolved), the font, fill and border
//! records, alignment and protection — and, for text in runs, each run's
//! properties and text; and for every `<col>` its resolved style. Records
//! are compared as canonical text: attributes and children sorted, so a
//! record written with another order reads the same (and `true` reads as
//! `1`), while any setting that differs shows.
#![allow(dead_code)] // each test binary uses a different part of `common`

use std::collections::{BTreeMap, HashMap};

use super::elements::{Node, Package, cell};

/// Place (`Data!B2`, `Data!col 7`) → what it looks like.
pub type Looks = BTreeMap<String, String>;

/// The looks of every cell and column of the package `bytes`.
pub fn looks(bytes: &[u8]) -> Looks {
    let package = Package::open(bytes);
    let workbook_part = package.workbook_part();
    let workbook = package.xml(&workbook_part).expect("the workbook part");
    let styles = package
        .rel_targets(&workbook_part, "styles")
        .first()
        .and_then(|part| package.xml(part))
        .map(|root| Styles::read(&root))
        .unwrap_or_default();
    let strings: Vec<Node> = package
        .rel_targets(&workbook_part, "sharedStrings")
        .first()
        .and_then(|part| package.xml(part))
        .map(|root| root.children_named("si").cloned().collect())
        .unwrap_or_default();
    let mut looks = Looks::new();
    for (name, part) in package.sheets(&workbook_part, &workbook) {
        let Some(root) = package.xml(&part) else {
            continue;
        };
        for column in root.descendants("col") {
            let style = styles.look(column.attr("style"));
            let span = format!(
                "{}-{}",
                column.attr("min").unwrap_or(""),
                column.attr("max").unwrap_or("")
            );
            looks.insert(format!("{name}!col {span}"), style);
        }
        for (index, row) in root.descendants("row").into_iter().enumerate() {
            let number = row.attr("r").map_or(index + 1, |r| r.parse().unwrap_or(0));
            for (position, c) in row.children_named("c").enumerate() {
                let place = c
                    .attr("r")
                    .map_or_else(|| cell(position as u32, number as u32 - 1), str::to_owned);
                let mut look = styles.look(c.attr("s"));
                let runs = match c.attr("t") {
                    Some("s") => c
                        .child("v")
                        .and_then(|v| v.text.trim().parse::<usize>().ok())
                        .and_then(|i| strings.get(i)),
                    Some("inlineStr") => c.child("is"),
                    _ => None,
                };
                if let Some(runs) = runs.map(runs_of).filter(|r| !r.is_empty()) {
                    look.push_str(&format!(" | runs {runs}"));
                }
                looks.insert(format!("{name}!{place}"), look);
            }
        }
    }
    looks
}

/// The runs of a string item (`<si>` or `<is>`): each run's properties
/// and text; empty for plain text.
fn runs_of(item: &Node) -> String {
    item.children_named("r")
        .map(|run| {
            let properties = run.child("rPr").map_or_else(String::new, canonical);
            let text = run.child("t").map_or("", |t| t.text.as_str());
            format!("[{properties}]{text:?}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The records of a styles part a cell format points into.
#[derive(Default)]
struct Styles {
    number_formats: HashMap<String, String>,
    fonts: Vec<String>,
    fills: Vec<String>,
    borders: Vec<String>,
    formats: Vec<Node>,
}

impl Styles {
    fn read(root: &Node) -> Styles {
        let list = |name: &str| -> Vec<Node> {
            root.child(name)
                .map(|list| list.children.clone())
                .unwrap_or_default()
        };
        let canonical_list = |name: &str| list(name).iter().map(canonical).collect();
        Styles {
            number_formats: list("numFmts")
                .iter()
                .filter_map(|f| {
                    Some((
                        f.attr("numFmtId")?.to_owned(),
                        f.attr("formatCode")?.to_owned(),
                    ))
                })
                .collect(),
            fonts: canonical_list("fonts"),
            fills: canonical_list("fills"),
            borders: canonical_list("borders"),
            formats: list("cellXfs"),
        }
    }

    /// What the cell format of index `s` (0 when absent) shows.
    fn look(&self, s: Option<&str>) -> String {
        let index: usize = s.and_then(|s| s.parse().ok()).unwrap_or(0);
        let Some(xf) = self.formats.get(index) else {
            return format!("no format {index}");
        };
        let record = |list: &[String], attribute: &str| {
            let id: usize = xf.attr(attribute).and_then(|i| i.parse().ok()).unwrap_or(0);
            list.get(id).cloned().unwrap_or_default()
        };
        let number_format = xf.attr("numFmtId").unwrap_or("0");
        let code = self
            .number_formats
            .get(number_format)
            .cloned()
            .or_else(|| {
                number_format
                    .parse()
                    .ok()
                    .and_then(built_in)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| format!("built-in {number_format}"));
        let child = |name: &str| xf.child(name).map_or_else(String::new, canonical);
        format!(
            "format {code:?} font {} fill {} border {} {} {}",
            record(&self.fonts, "fontId"),
            record(&self.fills, "fillId"),
            record(&self.borders, "borderId"),
            child("alignment"),
            child("protection"),
        )
    }
}

/// An element as text with its attributes and children sorted, and the
/// booleans `true` and `false` written `1` and `0`.
fn canonical(node: &Node) -> String {
    let mut attributes: Vec<(String, String)> = node
        .attrs
        .iter()
        .map(|(key, value)| {
            let value = match value.as_str() {
                "true" => "1",
                "false" => "0",
                other => other,
            };
            (key.clone(), value.to_owned())
        })
        .collect();
    attributes.sort();
    let mut children: Vec<String> = node.children.iter().map(canonical).collect();
    children.sort();
    let attributes: Vec<String> = attributes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "<{} {}>{}",
        node.name,
        attributes.join(" "),
        children.concat()
    )
}

/// The codes of the built-in number formats a file names by id only.
fn built_in(id: u32) -> Option<&'static str> {
    Some(match id {
        0 => "General",
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        9 => "0%",
        10 => "0.00%",
        11 => "0.00E+00",
        12 => "# ?/?",
        13 => "# ??/??",
        14 => "mm-dd-yy",
        15 => "d-mmm-yy",
        16 => "d-mmm",
        17 => "mmm-yy",
        18 => "h:mm AM/PM",
        19 => "h:mm:ss AM/PM",
        20 => "h:mm",
        21 => "h:mm:ss",
        22 => "m/d/yy h:mm",
        37 => "#,##0_);(#,##0)",
        38 => "#,##0_);[Red](#,##0)",
        39 => "#,##0.00_);(#,##0.00)",
        40 => "#,##0.00_);[Red](#,##0.00)",
        45 => "mm:ss",
        46 => "[h]:mm:ss",
        47 => "mmss.0",
        48 => "##0.0E+0",
        49 => "@",
        _ => return None,
    })
}
