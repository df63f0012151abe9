//! The styles part: the writer's, with the file's differential formats,
//! named cell styles and default font added.

use std::collections::HashMap;

use super::splice::{declare, plus, text_with_attributes};
use crate::model::carried::{Carried, CellStyles};
use crate::xlsx::WriteError;
use crate::xlsx::xml::{capture_children, find, first_attribute};

/// The writer's styles part `xml` with what `carried` keeps of the file's.
pub(super) fn with_carried_styles(xml: Vec<u8>, carried: &Carried) -> Result<Vec<u8>, WriteError> {
    let xml = append_children(xml, "dxfs", &carried.dxfs);
    let xml = with_cell_styles(xml, carried.cell_styles.as_ref())?;
    let xml = declare(xml, &carried.styles_namespaces)?;
    Ok(with_default_font(xml, carried.default_font.as_deref()))
}

/// How many children the first `list` element of `xml` has.
pub(super) fn count_children(xml: &[u8], list: &str) -> usize {
    capture_children(xml, Some(list)).map_or(0, |children| children.len())
}

/// Where a list element of the styles part goes when the writer wrote
/// none: before the first of these that is there (the schema's order).
fn followers(list: &str) -> &'static [&'static str] {
    match list {
        "numFmts" => &["<fonts", "</styleSheet>"],
        _ => &["<tableStyles", "<colors", "<extLst", "</styleSheet>"],
    }
}

/// The styles part `xml` with `items` added at the end of its first `list`
/// element (`<dxfs>`, `<fonts>`…), whose `count` follows.
fn append_children(xml: Vec<u8>, list: &str, items: &[String]) -> Vec<u8> {
    if items.is_empty() {
        return xml;
    }
    let count = count_children(&xml, list) + items.len();
    let text = String::from_utf8_lossy(&xml).into_owned();
    let joined = items.concat();
    let block = format!("<{list} count=\"{count}\">");
    let open = format!("<{list}");
    let start = text.match_indices(&open).map(|(i, _)| i).find(|&i| {
        matches!(
            text.as_bytes().get(i + open.len()),
            Some(b' ' | b'>' | b'/')
        )
    });
    if let Some(start) = start {
        let Some(end_of_tag) = text[start..].find('>').map(|i| start + i) else {
            return xml;
        };
        let rest = &text[end_of_tag + 1..];
        let merged = if text[..end_of_tag].ends_with('/') {
            format!("{}{block}{joined}</{list}>{rest}", &text[..start])
        } else {
            let inner_end = rest.find(&format!("</{list}>")).unwrap_or(0);
            format!(
                "{}{block}{}{joined}{}",
                &text[..start],
                &rest[..inner_end],
                &rest[inner_end..]
            )
        };
        return merged.into_bytes();
    }
    let at = followers(list)
        .iter()
        .find_map(|tag| text.find(tag))
        .unwrap_or(text.len());
    format!("{}{block}{joined}</{list}>{}", &text[..at], &text[at..]).into_bytes()
}

/// The styles part `xml` the writer wrote with the file's named cell
/// styles added: their style formats, and the fonts, fills, borders and
/// number formats those use, appended to the writer's and renumbered. The
/// file's style of format 0 (Normal, under whatever name the file gives
/// it) takes the place of the writer's Normal.
fn with_cell_styles(xml: Vec<u8>, styles: Option<&CellStyles>) -> Result<Vec<u8>, WriteError> {
    let Some(styles) = styles else {
        return Ok(xml);
    };
    let offset = |list| count_children(&xml, list);
    let (fonts, fills, borders) = (offset("fonts"), offset("fills"), offset("borders"));
    // Style format 0 is the writer's; the file's others follow its own.
    let formats = offset("cellStyleXfs").saturating_sub(1);
    let mut next_id = capture_children(&xml, Some("numFmts"))
        .unwrap_or_default()
        .iter()
        .filter_map(|f| {
            first_attribute(f.as_bytes(), "numFmtId")?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0)
        .max(163);
    let mut num_ids = HashMap::new();
    let num_formats = styles
        .num_formats
        .iter()
        .map(|format| {
            text_with_attributes(format, |name, value| {
                (name == "numFmtId").then(|| {
                    next_id += 1;
                    num_ids.insert(value.to_owned(), next_id.to_string());
                    next_id.to_string()
                })
            })
        })
        .collect::<Result<Vec<String>, WriteError>>()?;
    let style_formats = styles
        .formats
        .iter()
        .skip(1)
        .map(|format| {
            text_with_attributes(format, |name, value| match name {
                "fontId" => plus(value, fonts),
                "fillId" => plus(value, fills),
                "borderId" => plus(value, borders),
                "numFmtId" => num_ids.get(value).cloned(),
                _ => None,
            })
        })
        .collect::<Result<Vec<String>, WriteError>>()?;
    let mut normal = None;
    let mut named = Vec::new();
    for style in &styles.styles {
        match first_attribute(style.as_bytes(), "xfId").as_deref() {
            Some("0") => normal = Some(style.clone()),
            _ => named.push(text_with_attributes(style, |name, value| {
                (name == "xfId").then(|| plus(value, formats)).flatten()
            })?),
        }
    }
    let mut xml = xml;
    if let Some(normal) = normal {
        let text = String::from_utf8_lossy(&xml).into_owned();
        if let Some(start) = text.find("<cellStyle ")
            && let Some(end) = text[start..].find("/>")
        {
            xml = [&text[..start], &normal, &text[start + end + 2..]]
                .concat()
                .into_bytes();
        }
    }
    let xml = append_children(xml, "numFmts", &num_formats);
    let xml = append_children(xml, "fonts", &styles.fonts);
    let xml = append_children(xml, "fills", &styles.fills);
    let xml = append_children(xml, "borders", &styles.borders);
    let xml = append_children(xml, "cellStyleXfs", &style_formats);
    Ok(append_children(xml, "cellStyles", &named))
}

/// The styles part with its first font (the workbook's default) as the
/// file had it: the writer's is made from the model, which keeps its name
/// and size but not every setting.
fn with_default_font(xml: Vec<u8>, font: Option<&str>) -> Vec<u8> {
    let Some(font) = font else {
        return xml;
    };
    let Some(fonts) = find(&xml, b"<fonts") else {
        return xml;
    };
    let first = find(&xml[fonts..], b"<font>")
        .or_else(|| find(&xml[fonts..], b"<font "))
        .map(|at| fonts + at);
    let Some(start) = first else {
        return xml;
    };
    let Some(end) = find(&xml[start..], b"</font>").map(|at| start + at + b"</font>".len()) else {
        return xml;
    };
    [&xml[..start], font.as_bytes(), &xml[end..]].concat()
}
