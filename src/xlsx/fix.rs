//! Cells rust_xlsxwriter cannot write as the model holds them, and the pass
//! that puts them right in the sheet XML it wrote.
//!
//! The writer types a formula's cached result by its text (`"1"` becomes a
//! number, `"TRUE"` a boolean), writes an empty result where a formula has
//! none, writes no cell for text of no characters, and has no ISO 8601 date
//! cells (`t="d"`). Each such cell is written as the writer can and noted
//! here; [`apply`] then replaces its element in the sheet XML.

use std::collections::BTreeMap;

use rust_xlsxwriter::utility::row_col_to_cell;

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
}

/// The fixes of one sheet, by (row, column): in the order the writer
/// writes cells.
pub(super) type Fixes = BTreeMap<(u32, u16), Fix>;

/// The formula the writer is given for a cell it cannot write, so that it
/// writes an element (with the cell's format) for [`apply`] to replace.
pub(super) const PLACEHOLDER: &str = "\"\"";

/// `xml`, a sheet part rust_xlsxwriter wrote, with the element of every
/// cell in `fixes` rewritten. The writer writes rows in order and each
/// row's cells from left to right, so each cell's `<row r="…"` and then its
/// `<c r="…"` are found forward from the last fixed cell; a cell not found
/// is left as written.
pub(super) fn apply(xml: &[u8], fixes: &Fixes) -> Vec<u8> {
    let mut out = Vec::with_capacity(xml.len() + fixes.len() * 16);
    let mut at = find(xml, b"<sheetData").unwrap_or(0);
    out.extend_from_slice(&xml[..at]);
    let mut in_row = None;
    for (&(row, column), fix) in fixes {
        if in_row != Some(row) {
            let row_start = format!("<row r=\"{}\"", row + 1);
            let Some(row_at) = find(&xml[at..], row_start.as_bytes()) else {
                continue;
            };
            out.extend_from_slice(&xml[at..at + row_at]);
            at += row_at;
            in_row = Some(row);
        }
        let row_at = at;
        let cell_start = format!("<c r=\"{}\"", row_col_to_cell(row, column));
        let Some(start) = find(&xml[row_at..], cell_start.as_bytes()).map(|i| row_at + i) else {
            continue;
        };
        let Some(end) = element_end(&xml[start..]).map(|i| start + i) else {
            continue;
        };
        out.extend_from_slice(&xml[at..start]);
        out.extend_from_slice(&fixed(&xml[start..end], fix));
        at = end;
    }
    out.extend_from_slice(&xml[at..]);
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
    let tag = element[2..tag_end]
        .strip_suffix(b"/")
        .unwrap_or(&element[2..tag_end]);
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
    };
    let mut out = b"<c".to_vec();
    for (name, quoted) in attributes(tag) {
        if name != b"t" {
            out.push(b' ');
            out.extend_from_slice(name);
            out.push(b'=');
            out.extend_from_slice(quoted);
        }
    }
    if !kind.is_empty() {
        out.extend_from_slice(format!(" t=\"{kind}\"").as_bytes());
    }
    out.push(b'>');
    out.extend_from_slice(&content);
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
/// characters the format cannot hold as such are written `_xHHHH_`.
fn value(text: &str) -> Vec<u8> {
    let mut out = String::with_capacity(text.len() + 7);
    out.push_str("<v>");
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if u32::from(c) < 0x20 => out.push_str(&format!("_x{:04X}_", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push_str("</v>");
    out.into_bytes()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixes(list: &[((u32, u16), Fix)]) -> Fixes {
        list.iter().cloned().collect()
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
}
