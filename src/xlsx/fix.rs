//! Cells rust_xlsxwriter cannot write as the model holds them, and the pass
//! that puts them right in the sheet XML it wrote.
//!
//! The writer types a formula's cached result by its text (`"1"` becomes a
//! number, `"TRUE"` a boolean), writes an empty result where a formula has
//! none and a text result's outer spaces without `xml:space="preserve"`,
//! writes no cell for text of no characters, spells text its own way (see
//! [`writer_spelling`]), and has no ISO 8601 date cells (`t="d"`) nor
//! error constants (`t="e"` without a formula); it rounds row heights to whole pixels and leaves out
//! those equal to its default, and has no collapsed row outlines. It
//! rewrites formulas that call functions Excel added after 2007 (see
//! [`super::future`]), and has no data tables. Each such cell is written as
//! the writer can and noted here, with the attributes such rows must have
//! and the `<f>` such formula cells must have; [`apply`] then puts them
//! right in the sheet XML.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use rust_xlsxwriter::utility::row_col_to_cell;

use super::xml::find;
use crate::model::layout::{DataTable, Range, Spelling};

/// What a cell's element must become.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fix {
    /// Text of no characters (written by the writer as a placeholder
    /// formula, which always has an element).
    EmptyText,
    /// A formula's cached text result, kept as text whatever it looks like.
    TextResult(String),
    /// A formula without a cached result, or a cell of an array formula's
    /// range without one (which the writer fills with 0).
    NoResult,
    /// A date the file held as ISO 8601 text (written by the writer as a
    /// placeholder formula).
    IsoDate(String),
    /// A formula's cached date, which the file held as ISO 8601 text.
    IsoResult(String),
    /// An error constant such as `#N/A`, a value of its own (written by the
    /// writer as a placeholder formula).
    Error(String),
    /// Text as its file spells it (written by the writer as a placeholder
    /// formula), as an inline string: the shared strings are the writer's.
    Spelled(Spelling),
    /// Text formatted in parts (written by the writer as a placeholder
    /// formula), as an inline string with the runs as the file has them:
    /// the writer would spell out every run's font.
    Rich(String),
}

impl Fix {
    /// Whether the cell is written as a [`PLACEHOLDER`] for the fix to
    /// replace, rather than as its value.
    pub fn replaces_value(&self) -> bool {
        matches!(
            self,
            Fix::EmptyText | Fix::IsoDate(_) | Fix::Error(_) | Fix::Spelled(_) | Fix::Rich(_)
        )
    }
}

/// The formula element a cell must have, as its file has it (the writer
/// is given a [`PLACEHOLDER`] for it).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FormulaFix {
    /// The whole `<f>` element, as XML.
    element: String,
    /// Whether the cell is a dynamic array's first cell: `cm="1"`, which
    /// points at the writer's cell metadata for dynamic arrays (written
    /// when it is asked for a dynamic array formula).
    dynamic: bool,
}

impl FormulaFix {
    /// A plain formula of exactly the text `text`.
    pub fn plain(text: &str) -> FormulaFix {
        FormulaFix {
            element: format!("<f>{}</f>", escape_text(text)),
            dynamic: false,
        }
    }

    /// An array formula of exactly the text `text` over `range`: a dynamic
    /// array or a legacy one.
    pub fn array(text: &str, range: Range, dynamic: bool) -> FormulaFix {
        FormulaFix {
            element: format!(
                "<f t=\"array\" ref=\"{}\">{}</f>",
                range_name(range),
                escape_text(text)
            ),
            dynamic,
        }
    }

    /// A data table's first cell, as the file has it.
    pub fn data_table(table: &DataTable) -> FormulaFix {
        let mut element = format!(
            "<f t=\"dataTable\" ref=\"{}\"{}",
            range_name(table.range),
            table.attributes
        );
        for (name, input) in ["r1", "r2"].iter().zip(table.inputs) {
            if let Some((row, column)) = input {
                element.push_str(&format!(" {name}=\"{}\"", row_col_to_cell(row, column)));
            }
        }
        element.push_str("/>");
        FormulaFix {
            element,
            dynamic: false,
        }
    }
}

/// `A1:B2`, or `A1` for a range of one cell.
pub(super) fn range_name(range: Range) -> String {
    let first = row_col_to_cell(range.first_row, range.first_column);
    match (range.first_row, range.first_column) == (range.last_row, range.last_column) {
        true => first,
        false => format!(
            "{first}:{}",
            row_col_to_cell(range.last_row, range.last_column)
        ),
    }
}

/// `text` escaped as XML character data, as the writer escapes a formula:
/// `&`, `<` and `>` only.
fn escape_text(text: &str) -> Cow<'_, str> {
    quick_xml::escape::partial_escape(text)
}

/// What one sheet's XML must have that the writer does not write.
#[derive(Debug, Clone, Default)]
pub(super) struct Fixes {
    /// Cells, by (row, column).
    pub cells: BTreeMap<(u32, u16), Fix>,
    /// The formula elements of cells, by (row, column): applied after
    /// `cells`.
    pub formulas: BTreeMap<(u32, u16), FormulaFix>,
    /// Attributes a row's `<row>` must have, by row: a row the writer did
    /// not write at all is added with them. With `ht` they say whether the
    /// height is `customHeight` as well: the writer's is dropped.
    pub rows: BTreeMap<u32, Vec<(&'static str, String)>>,
}

impl Fixes {
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty() && self.formulas.is_empty() && self.rows.is_empty()
    }
}

/// The formula the writer is given for a cell it cannot write, so that it
/// writes an element (with the cell's format) for [`apply`] to replace.
pub(super) const PLACEHOLDER: &str = "\"\"";

/// `xml`, a sheet part rust_xlsxwriter wrote, with `fixes` applied.
#[cfg(test)]
fn apply(xml: &[u8], fixes: &Fixes) -> Vec<u8> {
    let mut out = Vec::with_capacity(xml.len() + fixes.cells.len() * 16);
    apply_to(xml, fixes, &mut out).expect("a Vec takes every write");
    out
}

/// Writes `xml`, a sheet part rust_xlsxwriter wrote, to `out` with `fixes`
/// applied.
pub(super) fn apply_to(xml: &[u8], fixes: &Fixes, out: &mut impl Write) -> std::io::Result<()> {
    let opened;
    let xml = match find(xml, b"<sheetData/>") {
        Some(at) if !fixes.rows.is_empty() => {
            opened = [&xml[..at], b"<sheetData></sheetData>", &xml[at + 12..]].concat();
            &opened[..]
        }
        _ => xml,
    };
    Fixer::new(fixes).feed(xml, true, out)
}

/// [`apply_to`] over a sheet's cells given in pieces, so that they are
/// never held whole: each piece ends where a row does, and the last one
/// with `</sheetData>`. The writer writes rows in order and each row's
/// cells from left to right, so each row is found forward from the last
/// one fixed, and each cell inside its row; a cell not found is left as
/// written.
pub(super) struct Fixer<'a> {
    fixes: &'a Fixes,
    /// The rows with fixes, in order, and how many are done.
    rows: Vec<u32>,
    done: usize,
}

impl<'a> Fixer<'a> {
    pub(super) fn new(fixes: &'a Fixes) -> Fixer<'a> {
        let rows: BTreeSet<u32> = fixes
            .rows
            .keys()
            .copied()
            .chain(fixes.cells.keys().map(|&(row, _)| row))
            .chain(fixes.formulas.keys().map(|&(row, _)| row))
            .collect();
        Fixer {
            fixes,
            rows: rows.into_iter().collect(),
            done: 0,
        }
    }

    /// Writes `piece`, the next piece of the sheet (`last` when nothing
    /// follows it), to `out` with the fixes of the rows it holds.
    pub(super) fn feed(
        &mut self,
        piece: &[u8],
        last: bool,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let fixes = self.fixes;
        let mut at = find(piece, b"<sheetData").unwrap_or(0);
        out.write_all(&piece[..at])?;
        while let Some(&row) = self.rows.get(self.done) {
            let attributes = fixes.rows.get(&row).map_or(&[][..], Vec::as_slice);
            let start = match find_row(piece, at, row) {
                RowAt::Found(start) => start,
                // Not in this piece, and no row after it either: a later
                // piece may hold it.
                RowAt::Before(position) if position == piece.len() && !last => break,
                RowAt::Before(position) => {
                    if !attributes.is_empty() {
                        out.write_all(&piece[at..position])?;
                        at = position;
                        let number = (row + 1).to_string();
                        let tag = format!("<row r=\"{number}\"/>");
                        out.write_all(&start_tag(tag.as_bytes(), &[], attributes))?;
                    }
                    self.done += 1;
                    continue;
                }
            };
            out.write_all(&piece[at..start])?;
            let Some(tag_end) = piece[start..].iter().position(|&b| b == b'>') else {
                at = start;
                self.done = self.rows.len();
                break;
            };
            let tag = &piece[start..start + tag_end + 1];
            // A fix that gives a row its height gives its `customHeight`
            // too, or none (a height the app fitted).
            let drop: &[&[u8]] = match attributes.iter().any(|(name, _)| *name == "ht") {
                true => &[b"customHeight"],
                false => &[],
            };
            out.write_all(&start_tag(tag, drop, attributes))?;
            at = start + tag.len();
            let row_end = match tag.ends_with(b"/>") {
                true => at,
                false => find(&piece[at..], b"</row>").map_or(piece.len(), |i| at + i),
            };
            at = fix_cells(&piece[..row_end], at, row, fixes, out)?;
            self.done += 1;
        }
        out.write_all(&piece[at..])
    }
}

/// Writes the cells of row `row` from `at` to the end of `row_xml` with
/// their fixes, up to the last one fixed; gives where the rest begins.
fn fix_cells(
    row_xml: &[u8],
    mut at: usize,
    row: u32,
    fixes: &Fixes,
    out: &mut impl Write,
) -> std::io::Result<usize> {
    let in_row = (row, 0)..=(row, u16::MAX);
    let columns: BTreeSet<u16> = (fixes.cells.range(in_row.clone()).map(|(&(_, c), _)| c))
        .chain(fixes.formulas.range(in_row).map(|(&(_, c), _)| c))
        .collect();
    for column in columns {
        let needle = format!("<c r=\"{}\"", row_col_to_cell(row, column));
        let Some(start) = find(&row_xml[at..], needle.as_bytes()).map(|i| at + i) else {
            continue;
        };
        let Some(end) = element_end(&row_xml[start..]).map(|i| start + i) else {
            continue;
        };
        out.write_all(&row_xml[at..start])?;
        let mut element = Cow::Borrowed(&row_xml[start..end]);
        if let Some(fix) = fixes.cells.get(&(row, column)) {
            element = Cow::Owned(fixed(&element, fix));
        }
        if let Some(formula) = fixes.formulas.get(&(row, column)) {
            element = Cow::Owned(with_formula(&element, formula));
        }
        out.write_all(&element)?;
        at = end;
    }
    Ok(at)
}

/// Where a row is in a sheet's XML.
enum RowAt {
    /// Its `<row` starts here.
    Found(usize),
    /// The writer did not write it; it belongs here.
    Before(usize),
}

/// The row (0-based) `row` in `xml`, looked for from `from` on.
fn find_row(xml: &[u8], from: usize, row: u32) -> RowAt {
    let wanted = u64::from(row) + 1;
    let mut search = from;
    while let Some(start) = find(&xml[search..], b"<row r=\"").map(|i| search + i) {
        let digits = &xml[start + 8..];
        let length = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        let number: u64 = std::str::from_utf8(&digits[..length])
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if number == wanted {
            return RowAt::Found(start);
        }
        if number > wanted {
            return RowAt::Before(start);
        }
        search = start + 8;
    }
    RowAt::Before(find(&xml[from..], b"</sheetData>").map_or(xml.len(), |i| from + i))
}

/// The start tag `tag` (`<name …>` or `<name …/>`, as the writer writes
/// them) without the attributes named in `drop` and those of `set`, then
/// with `set` added.
fn start_tag(tag: &[u8], drop: &[&[u8]], set: &[(&str, String)]) -> Vec<u8> {
    if drop.is_empty() && set.is_empty() {
        return tag.to_vec();
    }
    let empty = tag.ends_with(b"/>");
    let inside = &tag[1..tag.len() - if empty { 2 } else { 1 }];
    let name_end = inside
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(inside.len());
    let mut out = vec![b'<'];
    out.extend_from_slice(&inside[..name_end]);
    for (name, quoted) in attributes(&inside[name_end..]) {
        if !drop.contains(&name) && !set.iter().any(|(n, _)| n.as_bytes() == name) {
            out.push(b' ');
            out.extend_from_slice(name);
            out.push(b'=');
            out.extend_from_slice(quoted);
        }
    }
    for (name, value) in set {
        out.extend_from_slice(format!(" {name}=\"{value}\"").as_bytes());
    }
    out.extend_from_slice(if empty { b"/>" } else { b">" });
    out
}

/// The length of the `<c>` element at the start of `xml`.
fn element_end(xml: &[u8]) -> Option<usize> {
    let tag_end = xml.iter().position(|&b| b == b'>')?;
    if xml[..tag_end].ends_with(b"/") {
        return Some(tag_end + 1);
    }
    find(xml, b"</c>").map(|i| i + 4)
}

/// A cell element as the writer wrote it, rewritten by `fix`: its
/// attributes but `t` kept, its formula kept for formula fixes.
fn fixed(element: &[u8], fix: &Fix) -> Vec<u8> {
    let tag_end = element.iter().position(|&b| b == b'>').unwrap_or(0);
    let formula = match (find(element, b"<f"), find(element, b"</f>")) {
        (Some(start), Some(end)) if end > start => &element[start..end + 4],
        _ => &[],
    };
    let (kind, content) = match fix {
        Fix::EmptyText => ("inlineStr", b"<is><t></t></is>".to_vec()),
        Fix::IsoDate(iso) => ("d", value(iso)),
        Fix::TextResult(text) => ("str", [formula, &value(text)].concat()),
        Fix::IsoResult(iso) => ("d", [formula, &value(iso)].concat()),
        Fix::NoResult => ("", formula.to_vec()),
        Fix::Error(error) => ("e", value(error)),
        Fix::Spelled(spelling) if spelling.in_value => ("str", spelled_value(spelling)),
        Fix::Spelled(spelling) => ("inlineStr", inline_string(spelling)),
        Fix::Rich(xml) => ("inlineStr", format!("<is>{xml}</is>").into_bytes()),
    };
    // The start tag, opened (`<c …>`) whatever the writer wrote.
    let tag = [
        element[..tag_end]
            .strip_suffix(b"/")
            .unwrap_or(&element[..tag_end]),
        b">",
    ]
    .concat();
    let kind: Vec<(&str, String)> = match kind {
        "" => Vec::new(),
        kind => vec![("t", kind.to_owned())],
    };
    let mut out = start_tag(&tag, &[b"t"], &kind);
    out.extend_from_slice(&content);
    out.extend_from_slice(b"</c>");
    out
}

/// A cell element with `formula` for its `<f>` (in place of the one it
/// has, else first) and its `cm` as `formula` says.
fn with_formula(element: &[u8], formula: &FormulaFix) -> Vec<u8> {
    let tag_end = element.iter().position(|&b| b == b'>').unwrap_or(0);
    let tag = &element[..tag_end];
    let (tag, content) = match tag.strip_suffix(b"/") {
        Some(tag) => (tag, &b""[..]),
        None => (tag, &element[tag_end + 1..element.len().saturating_sub(4)]),
    };
    let (before, after) = match find(content, b"<f") {
        Some(start) => {
            let end = match find(&content[start..], b"</f>") {
                Some(close) => start + close + 4,
                None => find(&content[start..], b"/>").map_or(content.len(), |i| start + i + 2),
            };
            (&content[..start], &content[end..])
        }
        None => (&b""[..], content),
    };
    let metadata = match formula.dynamic {
        true => vec![("cm", "1".to_owned())],
        false => Vec::new(),
    };
    let mut out = start_tag(&[tag, b">"].concat(), &[b"cm"], &metadata);
    out.extend_from_slice(before);
    out.extend_from_slice(formula.element.as_bytes());
    out.extend_from_slice(after);
    out.extend_from_slice(b"</c>");
    out
}

/// The attributes of a start tag's inside as the writer writes them
/// (`name="value"`, separated by spaces; values escaped, so without `"`):
/// each name with its quoted value.
fn attributes(tag: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut rest = tag;
    while let Some(eq) = rest.iter().position(|&b| b == b'=') {
        let name = rest[..eq].trim_ascii();
        let after = &rest[eq + 1..];
        let Some(close) = after.iter().skip(1).position(|&b| b == b'"') else {
            break;
        };
        out.push((name, &after[..close + 2]));
        rest = &after[close + 2..];
    }
    out
}

/// A `<v>` element holding `text`, escaped as XML text; control
/// characters the format cannot hold as such are written `_xHHHH_`, and
/// so is a carriage return, which an XML reader would read as a line feed
/// (as Excel writes `CHAR(13)`'s result). Outer
/// spaces are marked kept (`xml:space="preserve"`, as Excel and
/// LibreOffice write them), or apps trim them.
fn value(text: &str) -> Vec<u8> {
    let mut out = String::with_capacity(text.len() + 7);
    out.push_str(match has_outer_space(text) {
        true => "<v xml:space=\"preserve\">",
        false => "<v>",
    });
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' => out.push(c),
            c if u32::from(c) < 0x20 => out.push_str(&format!("_x{:04X}_", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push_str("</v>");
    out.into_bytes()
}

/// Whether `text` starts or ends with white space, which a reader trims
/// unless the element says `xml:space="preserve"`.
pub(super) fn has_outer_space(text: &str) -> bool {
    let space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    text.starts_with(space) || text.ends_with(space)
}

/// A `<v>` spelled as `spelling` has it (a text constant the file holds
/// so), escaped as [`inline_string`]'s text is.
fn spelled_value(spelling: &Spelling) -> Vec<u8> {
    let open = match spelling.preserve {
        true => "<v xml:space=\"preserve\">",
        false => "<v>",
    };
    format!("{open}{}</v>", as_xml_text(&spelling.xml)).into_bytes()
}

/// An inline string (`<is>`) spelled as `spelling` has it: its text
/// escaped as XML only ([`as_xml_text`]), its `_xHHHH_` escapes untouched.
fn inline_string(spelling: &Spelling) -> Vec<u8> {
    let open = match spelling.preserve {
        true => "<is><t xml:space=\"preserve\">",
        false => "<is><t>",
    };
    format!("{open}{}</t></is>", as_xml_text(&spelling.xml)).into_bytes()
}

/// `text` escaped as XML text: markup characters as entities, characters
/// XML cannot hold as they are (such as a carriage return) as references.
fn as_xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' => out.push(c),
            c if u32::from(c) < 0x20 => out.push_str(&format!("&#{};", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// How rust_xlsxwriter spells a string: control characters but tab and
/// line feed, and U+FFFE and U+FFFF, as `_xHHHH_` (in capitals; a literal
/// `_x…_` is left as it stands, so it reads back as the character it
/// names), with `xml:space="preserve"` when the text starts or ends with a
/// space, a tab or a line feed.
pub(super) fn writer_spelling(text: &str) -> (Cow<'_, str>, bool) {
    let escaped =
        |c: char| (c < ' ' && c != '\t' && c != '\n') || c == '\u{FFFE}' || c == '\u{FFFF}';
    let spelled = match text.contains(escaped) {
        false => Cow::Borrowed(text),
        true => Cow::Owned(
            text.chars()
                .map(|c| match escaped(c) {
                    true => format!("_x{:04X}_", u32::from(c)),
                    false => c.to_string(),
                })
                .collect(),
        ),
    };
    let whitespace = |c: char| matches!(c, ' ' | '\t' | '\n');
    let preserve = text.starts_with(whitespace) || text.ends_with(whitespace);
    (spelled, preserve)
}

/// Whether the writer would spell `text` otherwise than `spelling` does.
pub(super) fn respelled(text: &str, spelling: &Spelling) -> bool {
    let (xml, preserve) = writer_spelling(text);
    xml != spelling.xml || preserve != spelling.preserve
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixes(list: &[((u32, u16), Fix)]) -> Fixes {
        Fixes {
            cells: list.iter().cloned().collect(),
            ..Fixes::default()
        }
    }

    #[test]
    fn a_text_result_that_looks_like_a_number_stays_text() {
        let xml = br#"<worksheet><sheetData><row r="1"><c r="A1" s="2"><f>"0"&amp;B1</f><v>01</v></c><c r="B1"><v>1</v></c></row></sheetData></worksheet>"#;
        let out = apply(xml, &fixes(&[((0, 0), Fix::TextResult("01".into()))]));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"<worksheet><sheetData><row r="1"><c r="A1" s="2" t="str"><f>"0"&amp;B1</f><v>01</v></c><c r="B1"><v>1</v></c></row></sheetData></worksheet>"#
        );
    }

    #[test]
    fn a_carriage_return_in_a_text_result_stays_one() {
        let xml =
            br#"<sheetData><row r="1"><c r="A1"><f>CHAR(13)</f><v>0</v></c></row></sheetData>"#;
        let out = apply(xml, &fixes(&[((0, 0), Fix::TextResult("\r".into()))]));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"<sheetData><row r="1"><c r="A1" t="str"><f>CHAR(13)</f><v xml:space="preserve">_x000D_</v></c></row></sheetData>"#
        );
    }

    #[test]
    fn each_fix_rewrites_only_its_own_cell() {
        let xml = br#"<sheetData><row r="1"><c r="A1" t="str"><f>""</f><v></v></c><c r="A10"/></row><row r="10"><c r="A10" s="1" t="str"><f>""</f><v></v></c><c r="AB10" t="str"><f>SUM(A1)</f><v></v></c><c r="AC10" t="b"><f>X</f><v>1</v></c></row></sheetData>"#;
        let out = apply(
            xml,
            &fixes(&[
                ((0, 0), Fix::EmptyText),
                ((9, 0), Fix::IsoDate("2024-01-15T10:00:00".into())),
                ((9, 27), Fix::NoResult),
                ((9, 28), Fix::TextResult("TRUE & <x>".into())),
            ]),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t></t></is></c><c r="A10"/></row><row r="10"><c r="A10" s="1" t="d"><v>2024-01-15T10:00:00</v></c><c r="AB10"><f>SUM(A1)</f></c><c r="AC10" t="str"><f>X</f><v>TRUE &amp; &lt;x&gt;</v></c></row></sheetData>"#
        );
    }

    #[test]
    fn error_constants_spellings_and_spaced_results_are_written_as_the_file_had_them() {
        let xml = br#"<sheetData><row r="1"><c r="A1" s="3" t="str"><f>""</f><v></v></c><c r="B1" t="str"><f>""</f><v></v></c><c r="C1" t="str"><f>""</f><v></v></c><c r="D1" t="str"><f>A1</f><v>World </v></c></row></sheetData>"#;
        let spelling = |xml: &str, preserve| Spelling {
            text: String::new(),
            xml: xml.into(),
            preserve,
            in_value: false,
        };
        let out = apply(
            xml,
            &fixes(&[
                ((0, 0), Fix::Error("#NULL!".into())),
                ((0, 1), Fix::Spelled(spelling("a_x000d_\r<b>", false))),
                ((0, 2), Fix::Spelled(spelling(" lead", true))),
                ((0, 3), Fix::TextResult("World ".into())),
            ]),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"<sheetData><row r="1"><c r="A1" s="3" t="e"><v>#NULL!</v></c><c r="B1" t="inlineStr"><is><t>a_x000d_&#13;&lt;b&gt;</t></is></c><c r="C1" t="inlineStr"><is><t xml:space="preserve"> lead</t></is></c><c r="D1" t="str"><f>A1</f><v xml:space="preserve">World </v></c></row></sheetData>"#
        );
    }

    #[test]
    fn a_text_constant_the_file_holds_in_a_value_is_written_so() {
        let xml = br#"<sheetData><row r="1"><c r="A1" s="2" t="str"><f>""</f><v></v></c></row></sheetData>"#;
        let spelling = Spelling {
            text: "City & Co ".into(),
            xml: "City & Co ".into(),
            preserve: false,
            in_value: true,
        };
        let out = apply(xml, &fixes(&[((0, 0), Fix::Spelled(spelling))]));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"<sheetData><row r="1"><c r="A1" s="2" t="str"><v>City &amp; Co </v></c></row></sheetData>"#
        );
    }

    #[test]
    fn the_writer_spells_control_characters_as_escapes_and_keeps_literal_ones() {
        let spelled = |text: &str| {
            let (xml, preserve) = writer_spelling(text);
            (xml.into_owned(), preserve)
        };
        assert_eq!(spelled("a\rb"), ("a_x000D_b".into(), false));
        assert_eq!(spelled("_x0041_ "), ("_x0041_ ".into(), true));
        assert_eq!(spelled("\tx"), ("\tx".into(), true));
        let file = |xml: &str, preserve| Spelling {
            text: String::new(),
            xml: xml.into(),
            preserve,
            in_value: false,
        };
        assert!(!respelled("a\rb", &file("a_x000D_b", false)));
        assert!(respelled("a\rb", &file("a_x000d_b", false)));
        assert!(respelled("_x0041_", &file("_x005F_x0041_", false)));
        assert!(respelled("City", &file("City ", false)));
        assert!(!respelled("City ", &file("City ", true)));
    }

    #[test]
    fn formula_cells_get_the_formula_element_and_kind_their_file_has() {
        let xml = br#"<sheetData><row r="2"><c r="A2" t="str"><f>""</f><v>x</v></c><c r="B2" cm="1" s="1"><f t="array" ref="B2:B3">""</f><v>1</v></c><c r="C2"><f t="array" ref="C2:C3">""</f><v>2</v></c><c r="D2" t="str"><f>""</f><v></v></c><c r="E2"><v>7</v></c></row></sheetData>"#;
        let range = |first_row, last_row, column| Range {
            first_row,
            first_column: column,
            last_row,
            last_column: column,
        };
        let table = DataTable {
            range: range(1, 3, 3),
            inputs: [Some((0, 0)), None],
            attributes: r#" dt2D="0" ca="1""#.into(),
            value: crate::model::Cell::Empty,
        };
        let fixes = Fixes {
            cells: fixes(&[
                ((1, 0), Fix::TextResult("x".into())),
                ((1, 3), Fix::NoResult),
            ])
            .cells,
            formulas: [
                ((1, 0), FormulaFix::plain("_xlfn.XLOOKUP(A1,B:B,C:C)&\"<\"")),
                ((1, 1), FormulaFix::array("B2:B3*2", range(1, 2, 1), false)),
                ((1, 2), FormulaFix::array("SORT(A:A)", range(1, 2, 2), true)),
                ((1, 3), FormulaFix::data_table(&table)),
                ((1, 4), FormulaFix::data_table(&table)),
            ]
            .into_iter()
            .collect(),
            rows: BTreeMap::new(),
        };
        assert_eq!(
            String::from_utf8(apply(xml, &fixes)).unwrap(),
            r#"<sheetData><row r="2"><c r="A2" t="str"><f>_xlfn.XLOOKUP(A1,B:B,C:C)&amp;"&lt;"</f><v>x</v></c><c r="B2" s="1"><f t="array" ref="B2:B3">B2:B3*2</f><v>1</v></c><c r="C2" cm="1"><f t="array" ref="C2:C3">SORT(A:A)</f><v>2</v></c><c r="D2"><f t="dataTable" ref="D2:D4" dt2D="0" ca="1" r1="A1"/></c><c r="E2"><f t="dataTable" ref="D2:D4" dt2D="0" ca="1" r1="A1"/><v>7</v></c></row></sheetData>"#
        );
    }

    #[test]
    fn a_cell_the_writer_did_not_write_is_skipped() {
        let xml =
            br#"<sheetData><row r="2"><c r="B2" t="str"><f>A1</f><v></v></c></row></sheetData>"#;
        let out = apply(
            xml,
            &fixes(&[((0, 0), Fix::EmptyText), ((1, 1), Fix::NoResult)]),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"<sheetData><row r="2"><c r="B2"><f>A1</f></c></row></sheetData>"#
        );
    }

    #[test]
    fn rows_get_their_attributes_and_missing_rows_are_added() {
        let height = |h: &str| vec![("ht", h.to_owned()), ("customHeight", "1".to_owned())];
        let fixes = Fixes {
            cells: fixes(&[((3, 1), Fix::NoResult)]).cells,
            formulas: BTreeMap::new(),
            rows: [
                (1, height("20")),
                (2, height("15")),
                (3, height("7.5")),
                (9, height("30")),
            ]
            .into_iter()
            .collect(),
        };
        let xml = br#"<sheetData><row r="2" spans="1:2" ht="20.25" customHeight="1"><c r="A2"><v>1</v></c></row><row r="4"><c r="B4" t="str"><f>A2</f><v></v></c></row></sheetData>"#;
        assert_eq!(
            String::from_utf8(apply(xml, &fixes)).unwrap(),
            r#"<sheetData><row r="2" spans="1:2" ht="20" customHeight="1"><c r="A2"><v>1</v></c></row><row r="3" ht="15" customHeight="1"/><row r="4" ht="7.5" customHeight="1"><c r="B4"><f>A2</f></c></row><row r="10" ht="30" customHeight="1"/></sheetData>"#
        );
        let fixes = Fixes {
            rows: [(0, height("15"))].into_iter().collect(),
            ..Fixes::default()
        };
        assert_eq!(
            String::from_utf8(apply(b"<worksheet><sheetData/></worksheet>", &fixes)).unwrap(),
            r#"<worksheet><sheetData><row r="1" ht="15" customHeight="1"/></sheetData></worksheet>"#
        );
    }

    #[test]
    fn cells_fixed_in_pieces_come_out_as_fixed_whole() {
        let height = |h: &str| vec![("ht", h.to_owned()), ("customHeight", "1".to_owned())];
        let fixes = Fixes {
            cells: fixes(&[
                ((1, 0), Fix::TextResult("01".into())),
                ((3, 1), Fix::NoResult),
                ((6, 0), Fix::NoResult),
            ])
            .cells,
            formulas: BTreeMap::new(),
            // Row 3 is missing between pieces; rows 8 and 10 after the last.
            rows: [(2, height("15")), (7, height("9")), (9, height("30"))]
                .into_iter()
                .collect(),
        };
        let xml = br#"<sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="2"><c r="A2" t="str"><f>B2</f><v>1</v></c></row><row r="4"><c r="B4" t="str"><f>A2</f><v></v></c></row><row r="5" ht="3" customHeight="1"/><row r="6"><c r="A6"><v>6</v></c></row><row r="7"><c r="A7" t="str"><f>A6</f><v></v></c></row></sheetData>"#;
        let whole = apply(xml, &fixes);
        // Every way of cutting the cells where rows end.
        let ends: Vec<usize> = (0..xml.len())
            .filter(|&i| xml[..i].ends_with(b"</row>") || xml[..i].ends_with(b"/>"))
            .collect();
        for cuts in 0u32..(1 << ends.len()) {
            let mut pieces = Vec::new();
            let mut from = 0;
            for (bit, &end) in ends.iter().enumerate() {
                if cuts & (1 << bit) != 0 {
                    pieces.push(&xml[from..end]);
                    from = end;
                }
            }
            pieces.push(&xml[from..]);
            let mut fixer = Fixer::new(&fixes);
            let mut out = Vec::new();
            for (index, piece) in pieces.iter().enumerate() {
                let last = index + 1 == pieces.len();
                fixer.feed(piece, last, &mut out).unwrap();
            }
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(whole.clone()).unwrap(),
                "cut at {cuts:b}"
            );
        }
    }
}
