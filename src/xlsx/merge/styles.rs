//! The styles part: the file's own, whole, with the cell formats the
//! writer's cells need beyond the file's added at the end.
//!
//! Every record of the file stays as the file has it — fonts with their
//! scripts, fills, borders with their diagonals, number formats, alignment,
//! protection, named styles, differential formats — so a cell the write did
//! not touch looks exactly as it did, whatever the writer can express. The
//! writer's cells name the file's formats through stand-ins
//! ([`crate::xlsx::stand_in`]), which already carry the file's indexes; a
//! stand-in past the file's formats becomes a copy of the file's format it
//! names, with the number format it names if any.

use std::collections::HashMap;

use crate::xlsx::WriteError;
use crate::xlsx::stand_in;
use crate::xlsx::xml::{capture_children, escape, first_attribute};

/// The styles part of a rewrite: the file's (`file`, whose cell formats
/// the model holds `formats` of) with the formats the writer's part
/// (`written`) adds, when the file's is carried; the writer's otherwise.
pub(super) fn styles_part(
    written: Vec<u8>,
    file: Option<&[u8]>,
    formats: usize,
) -> Result<Vec<u8>, WriteError> {
    match file {
        Some(file) => with_added_formats(file, formats, &written),
        None => Ok(written),
    }
}

/// The file's styles part with a cell format for each stand-in of the
/// writer's part past the file's own formats.
///
/// Every write comes here, and most add nothing: when each of the writer's
/// formats is the stand-in registered at its own index (only the file's
/// formats, `0..formats`, are registered so), the file's part stands
/// without being read.
fn with_added_formats(file: &[u8], formats: usize, written: &[u8]) -> Result<Vec<u8>, WriteError> {
    let written_codes = number_formats(written)?;
    let named: Vec<Option<(u32, Option<&str>)>> = children(written, "cellXfs")?
        .iter()
        .map(|xf| {
            first_attribute(xf.as_bytes(), "numFmtId")
                .and_then(|id| written_codes.get(&id))
                .and_then(|code| stand_in::named_by(code))
        })
        .collect();
    let registered = |(index, named): (usize, &Option<(u32, Option<&str>)>)| {
        index < formats && *named == Some((index as u32, None))
    };
    if named.iter().enumerate().skip(1).all(registered) {
        return Ok(file.to_vec());
    }
    let own = children(file, "cellXfs")?;
    let mut ids = NumberFormatIds::in_part(file)?;
    let mut added = Vec::new();
    for (index, named) in named.into_iter().enumerate().skip(1) {
        match named {
            Some((base, None)) if base as usize == index && index < own.len() => {}
            // A format the writer met later: a number format put in, or the
            // file's format 0 named outright.
            Some((base, code)) if index >= own.len() && (code.is_some() || base == 0) => {
                let record = own.get(base as usize).or(own.first());
                let record = record.ok_or_else(|| mismatch(index))?;
                added.push(match code {
                    Some(code) => with_number_format(record, ids.id_of(code))?,
                    None => record.clone(),
                });
            }
            _ => return Err(mismatch(index)),
        }
    }
    let prefix = root_prefix(file);
    let xml = append_children(file.to_vec(), &prefix, "numFmts", &ids.added(&prefix));
    Ok(append_children(xml, &prefix, "cellXfs", &added))
}

/// The writer's cell format `index` is none the stand-ins account for: a
/// fault of sheetd, said so rather than written wrong.
fn mismatch(index: usize) -> WriteError {
    WriteError::Refused(format!(
        "sheetd could not match the writer's cell format {index} to one of the workbook's"
    ))
}

fn children(xml: &[u8], list: &str) -> Result<Vec<String>, WriteError> {
    capture_children(xml, Some(list)).map_err(|error| {
        WriteError::Refused(format!("the styles part could not be read again: {error}"))
    })
}

/// The number formats a styles part defines: code by id.
fn number_formats(xml: &[u8]) -> Result<HashMap<String, String>, WriteError> {
    Ok(children(xml, "numFmts")?
        .iter()
        .filter_map(|format| {
            let id = first_attribute(format.as_bytes(), "numFmtId")?;
            Some((id, first_attribute(format.as_bytes(), "formatCode")?))
        })
        .collect())
}

/// The ids of the file's number formats by code, and those added for
/// codes it lacks.
struct NumberFormatIds {
    by_code: HashMap<String, u32>,
    next: u32,
    added: Vec<(u32, String)>,
}

impl NumberFormatIds {
    fn in_part(file: &[u8]) -> Result<NumberFormatIds, WriteError> {
        let mut by_code = HashMap::from([("General".to_owned(), 0)]);
        let mut last = 163;
        for (id, code) in number_formats(file)? {
            let Ok(id) = id.parse::<u32>() else { continue };
            last = last.max(id);
            by_code.entry(code).or_insert(id);
        }
        Ok(NumberFormatIds {
            by_code,
            next: last + 1,
            added: Vec::new(),
        })
    }

    /// The id of the number format `code`: the file's, or a new one.
    fn id_of(&mut self, code: &str) -> u32 {
        if let Some(&id) = self.by_code.get(code) {
            return id;
        }
        let id = self.next;
        self.next += 1;
        self.by_code.insert(code.to_owned(), id);
        self.added.push((id, code.to_owned()));
        id
    }

    /// The `<numFmt>` elements of the added number formats.
    fn added(&self, prefix: &str) -> Vec<String> {
        self.added
            .iter()
            .map(|(id, code)| {
                format!(
                    "<{prefix}numFmt numFmtId=\"{id}\" formatCode=\"{}\"/>",
                    escape(code)
                )
            })
            .collect()
    }
}

/// A `<xf>` record of the file with the number format `id` in place of
/// its own.
fn with_number_format(record: &str, id: u32) -> Result<String, WriteError> {
    let end = record.find('>').ok_or_else(|| mismatch(0))?;
    let (tag, rest) = record.split_at(end);
    let (tag, closing) = match tag.strip_suffix('/') {
        Some(tag) => (tag, "/"),
        None => (tag, ""),
    };
    let tag = with_attribute(tag, "numFmtId", &id.to_string());
    let tag = with_attribute(&tag, "applyNumberFormat", "1");
    Ok(format!("{tag}{closing}{rest}"))
}

/// A start tag's text (without its closing `>`) with the attribute `name`
/// set to `value`, added when missing.
fn with_attribute(tag: &str, name: &str, value: &str) -> String {
    let key = format!(" {name}=");
    match tag.find(&key) {
        Some(at) => {
            let start = at + key.len();
            let quote = &tag[start..start + 1];
            let end = tag[start + 1..]
                .find(quote)
                .map_or(tag.len(), |i| start + 1 + i + 1);
            format!("{}\"{value}\"{}", &tag[..start], &tag[end..])
        }
        None => format!("{tag} {name}=\"{value}\""),
    }
}

/// The prefix (with its colon) the part's root element is written with:
/// `"x:"` for `<x:styleSheet>`, empty for a default namespace.
fn root_prefix(xml: &[u8]) -> String {
    let text = String::from_utf8_lossy(&xml[..xml.len().min(4096)]);
    text.match_indices('<')
        .map(|(i, _)| &text[i + 1..])
        .find(|tag| !tag.starts_with('?') && !tag.starts_with('!'))
        .and_then(|tag| {
            let name = tag.split([' ', '>', '/', '\t', '\r', '\n']).next()?;
            Some(match name.split_once(':') {
                Some((prefix, _)) => format!("{prefix}:"),
                None => String::new(),
            })
        })
        .unwrap_or_default()
}

/// Where a list element of the styles part goes when the file has none:
/// before the first of these that is there (the schema's order).
fn followers(list: &str) -> &'static [&'static str] {
    match list {
        "numFmts" => &["fonts", "fills", "borders", "cellStyleXfs", "cellXfs"],
        _ => &["cellStyles", "dxfs", "tableStyles", "colors", "extLst"],
    }
}

/// The styles part `xml` with `items` added at the end of its `list`
/// element (`<cellXfs>`, `<numFmts>`), whose `count` follows; the element
/// is made, in schema order, when the part has none.
fn append_children(xml: Vec<u8>, prefix: &str, list: &str, items: &[String]) -> Vec<u8> {
    if items.is_empty() {
        return xml;
    }
    let text = String::from_utf8_lossy(&xml).into_owned();
    let name = format!("{prefix}{list}");
    let joined = items.concat();
    let Some(start) = start_of(&text, &name) else {
        let count = items.len();
        let block = format!("<{name} count=\"{count}\">{joined}</{name}>");
        let at = followers(list)
            .iter()
            .find_map(|follower| start_of(&text, &format!("{prefix}{follower}")))
            .or_else(|| text.rfind(&format!("</{prefix}styleSheet")))
            .unwrap_or(text.len());
        return [&text[..at], &block, &text[at..]].concat().into_bytes();
    };
    let Some(tag_end) = text[start..].find('>').map(|i| start + i) else {
        return xml;
    };
    let empty = text[..tag_end].ends_with('/');
    let tag = &text[start..if empty { tag_end - 1 } else { tag_end }];
    let count = capture_children(&xml, Some(list)).map_or(0, |c| c.len()) + items.len();
    let tag = with_attribute(tag, "count", &count.to_string());
    let after = &text[tag_end + 1..];
    let merged = if empty {
        format!("{}{tag}>{joined}</{name}>{after}", &text[..start])
    } else {
        let close = after.find(&format!("</{name}>")).unwrap_or(0);
        format!(
            "{}{tag}>{}{joined}{}",
            &text[..start],
            &after[..close],
            &after[close..]
        )
    };
    merged.into_bytes()
}

/// Where the first start tag of the element `name` begins.
fn start_of(text: &str, name: &str) -> Option<usize> {
    let open = format!("<{name}");
    text.match_indices(&open).map(|(i, _)| i).find(|&i| {
        matches!(
            text.as_bytes().get(i + open.len()),
            Some(b' ' | b'>' | b'/' | b'\t' | b'\r' | b'\n')
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"<?xml version="1.0"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="170" formatCode="0.0%"/></numFmts><fonts count="1"><font><vertAlign val="superscript"/><sz val="10"/><name val="Arial"/></font></fonts><fills count="1"><fill><patternFill/></fill></fills><borders count="1"><border diagonalUp="1"><diagonal style="thin"/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="170" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"><protection locked="0"/></xf></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>"#;

    /// A writer's part whose cell formats are `codes`' stand-ins.
    fn written(codes: &[&str]) -> Vec<u8> {
        let formats: String = codes
            .iter()
            .enumerate()
            .map(|(i, code)| format!(r#"<numFmt numFmtId="{}" formatCode="{code}"/>"#, 164 + i))
            .collect();
        let xfs: String = (0..codes.len())
            .map(|i| format!(r#"<xf numFmtId="{}" fontId="0"/>"#, 164 + i))
            .collect();
        format!(
            r#"<styleSheet><numFmts>{formats}</numFmts><cellXfs><xf numFmtId="0"/>{xfs}</cellXfs></styleSheet>"#
        )
        .into_bytes()
    }

    #[test]
    fn the_file_part_stands_when_the_writer_adds_nothing() {
        let out = with_added_formats(FILE.as_bytes(), 2, &written(&["sheetd-format:1"])).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), FILE);
    }

    #[test]
    fn a_stand_in_with_a_number_format_copies_the_file_format() {
        let codes = [
            "sheetd-format:1",
            "sheetd-format:1:yyyy/mm/dd",
            "sheetd-format:0:0.0%",
            "sheetd-format:0",
        ];
        let out =
            String::from_utf8(with_added_formats(FILE.as_bytes(), 2, &written(&codes)).unwrap())
                .unwrap();
        assert!(out.contains(r#"<numFmts count="2"><numFmt numFmtId="170" formatCode="0.0%"/><numFmt numFmtId="171" formatCode="yyyy/mm/dd"/></numFmts>"#), "{out}");
        assert!(out.contains(r#"<cellXfs count="5">"#), "{out}");
        assert!(out.contains(r#"<xf numFmtId="171" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"><protection locked="0"/></xf><xf numFmtId="170" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>"#), "{out}");
    }

    #[test]
    fn a_writer_format_no_stand_in_names_is_refused() {
        for codes in [
            &["0.00"][..],
            &["sheetd-format:2"],
            &["sheetd-format:1", "sheetd-format:2"],
        ] {
            assert!(
                with_added_formats(FILE.as_bytes(), 2, &written(codes)).is_err(),
                "{codes:?}"
            );
        }
    }

    #[test]
    fn a_prefixed_part_gets_prefixed_lists() {
        let file = r#"<x:styleSheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:fonts count="1"><x:font/></x:fonts><x:cellXfs count="1"><x:xf numFmtId="0" fontId="0"/></x:cellXfs></x:styleSheet>"#;
        let out = with_added_formats(
            file.as_bytes(),
            1,
            &written(&["sheetd-format:0:yyyy/mm/dd"]),
        )
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with(r#"<x:styleSheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:numFmts count="1"><x:numFmt numFmtId="164" formatCode="yyyy/mm/dd"/></x:numFmts><x:fonts"#), "{out}");
        assert!(out.contains(r#"<x:cellXfs count="2"><x:xf numFmtId="0" fontId="0"/><x:xf numFmtId="164" fontId="0" applyNumberFormat="1"/></x:cellXfs>"#), "{out}");
    }
}
