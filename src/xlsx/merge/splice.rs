//! Putting carried elements back into a part the writer wrote: the part
//! cut at its root's children, the carried ones interleaved in schema
//! order, their relationship ids and format ids renumbered.

use std::collections::{HashMap, HashSet};

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, Writer};

use crate::model::carried::{CarriedXml, Element};
use crate::xlsx::WriteError;
use crate::xlsx::opc::is_relationships_ns;
use crate::xlsx::xml::{all_attributes, find};

pub(super) fn xml_error(error: impl std::fmt::Display) -> WriteError {
    WriteError::Refused(format!("a carried part is not valid XML: {error}"))
}

/// A part's XML cut into its root's start tag, the root's children and
/// what follows them.
pub(super) struct Parts<'a> {
    pub(super) before: &'a [u8],
    pub(super) root: BytesStart<'static>,
    pub(super) children: Vec<(String, Vec<u8>)>,
    pub(super) after: &'a [u8],
}

/// Cuts `xml` into [`Parts`]; `xml` is the writer's, so well formed.
pub(super) fn cut(xml: &[u8]) -> Result<Parts<'_>, WriteError> {
    let mut reader = Reader::from_reader(xml);
    let mut depth = 0usize;
    let mut before = &xml[..0];
    let mut root = None;
    let mut children = Vec::new();
    let mut child_start = 0usize;
    let mut child_name = String::new();
    loop {
        let start = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(xml_error)?;
        let end = reader.buffer_position() as usize;
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                match depth {
                    0 => {
                        before = &xml[..start];
                        root = Some(e.to_owned());
                    }
                    1 => {
                        child_start = start;
                        child_name = e.local_name().as_ref().to_owned();
                    }
                    _ => {}
                }
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                } else if depth == 1 {
                    children.push((
                        std::mem::take(&mut child_name),
                        xml[child_start..end].to_vec(),
                    ));
                }
            }
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                match depth {
                    1 => children.push((
                        std::mem::take(&mut child_name),
                        xml[child_start..end].to_vec(),
                    )),
                    0 => {
                        return Ok(Parts {
                            before,
                            root: root.ok_or_else(|| xml_error("no root element"))?,
                            children,
                            after: &xml[start..],
                        });
                    }
                    _ => {}
                }
            }
            Event::Eof => return Err(xml_error("the root element is not closed")),
            _ => {}
        }
    }
}

/// A part's XML put back together from its [`Parts`], with `children` for
/// the root's children and the declarations of `root_attributes` the root
/// lacks.
pub(super) fn reassemble(
    parts: &Parts<'_>,
    root_attributes: &[(String, String)],
    children: &[u8],
) -> Vec<u8> {
    [
        parts.before,
        &with_namespaces(&parts.root, root_attributes),
        children,
        parts.after,
    ]
    .concat()
}

/// The root start tag with the carried part's namespace declarations it
/// lacks (a prefix the writer binds already keeps the writer's binding).
fn with_namespaces(root: &BytesStart<'_>, carried: &[(String, String)]) -> Vec<u8> {
    let mut merged = root.to_owned();
    let present: HashSet<String> = root
        .attributes()
        .with_checks(false)
        .flatten()
        .map(|a| a.key.as_ref().to_owned())
        .collect();
    for (key, value) in carried {
        if !present.contains(key) {
            merged.push_attribute((key.as_str(), value.as_str()));
        }
    }
    let mut out = Writer::new(Vec::new());
    let _ = out.write_event(Event::Start(merged));
    out.into_inner()
}

/// The place of `name` in a schema's `order` of children.
pub(super) fn place(order: &[&str], name: &str) -> Option<usize> {
    order.iter().position(|known| *known == name)
}

/// Puts carried elements among the writer's children, in schema order
/// (`position` gives a known child's place); a carried element replaces
/// the writer's of the same name. Known names go by their place, unknown
/// carried ones right after the known element that preceded them.
pub(super) fn interleave(
    position: impl Fn(&str) -> Option<usize>,
    written: Vec<(String, Vec<u8>)>,
    carried: Vec<(String, Vec<u8>)>,
) -> Vec<u8> {
    let carried_names: HashSet<&str> = carried.iter().map(|(n, _)| n.as_str()).collect();
    let mut keyed: Vec<((usize, u8, usize), Vec<u8>)> = Vec::new();
    let mut last = 0;
    for (name, bytes) in &written {
        last = position(name).unwrap_or(last);
        if !carried_names.contains(name.as_str()) {
            keyed.push(((last, 0, keyed.len()), bytes.clone()));
        }
    }
    let mut last = 0;
    for (i, (name, bytes)) in carried.into_iter().enumerate() {
        let key = match position(&name) {
            Some(at) => {
                last = at;
                (at, 1, i)
            }
            None => (last, 2, i),
        };
        keyed.push((key, bytes));
    }
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().flat_map(|(_, bytes)| bytes).collect()
}

/// A carried element with its relationship ids renamed.
pub(super) fn rebind(
    element: &Element,
    rel_prefixes: &HashSet<String>,
    renamed: &HashMap<String, String>,
) -> Result<Vec<u8>, WriteError> {
    let mut reader = Reader::from_str(&element.xml);
    let mut out = Writer::new(Vec::new());
    loop {
        let event = reader.read_event().map_err(xml_error)?;
        let event = match event {
            Event::Eof => break,
            Event::Start(e) => Event::Start(rebind_attributes(&e, rel_prefixes, renamed)),
            Event::Empty(e) => Event::Empty(rebind_attributes(&e, rel_prefixes, renamed)),
            other => other,
        };
        out.write_event(event).map_err(xml_error)?;
    }
    Ok(out.into_inner())
}

fn rebind_attributes(
    element: &BytesStart<'_>,
    rel_prefixes: &HashSet<String>,
    renamed: &HashMap<String, String>,
) -> BytesStart<'static> {
    // The relationships prefix may be declared on the element itself.
    let mut rel_prefixes = rel_prefixes.clone();
    let all = all_attributes(element);
    for (key, uri) in &all {
        if let Some(prefix) = key.strip_prefix("xmlns:")
            && is_relationships_ns(uri)
        {
            rel_prefixes.insert(prefix.to_owned());
        }
    }
    let mut changed = false;
    let mut attributes = Vec::new();
    for (key, value) in all {
        let prefix = key.split_once(':').map(|(p, _)| p);
        let new = if prefix.is_some_and(|p| rel_prefixes.contains(p)) {
            renamed.get(&value).cloned()
        } else {
            None
        };
        changed |= new.as_ref().is_some_and(|n| *n != value);
        attributes.push((key, new.unwrap_or(value)));
    }
    if !changed {
        // Byte for byte as read.
        return element.to_owned();
    }
    let mut rebound = BytesStart::new(element.name().as_ref().to_owned());
    for (key, value) in &attributes {
        rebound.push_attribute((key.as_str(), value.as_str()));
    }
    rebound
}

/// The prefixes a part's root binds to the relationships namespace.
pub(super) fn relationship_prefixes(xml: &CarriedXml) -> HashSet<String> {
    xml.root_attributes
        .iter()
        .filter(|(_, uri)| is_relationships_ns(uri))
        .filter_map(|(key, _)| key.strip_prefix("xmlns:").map(str::to_owned))
        .collect()
}

/// `xml` with the attributes of every element that `map` gives a new value
/// for (by local name) changed.
pub(super) fn with_attributes(
    xml: &[u8],
    mut map: impl FnMut(&str, &str) -> Option<String>,
) -> Result<Vec<u8>, WriteError> {
    let mut reader = Reader::from_reader(xml);
    let mut out = Writer::new(Vec::new());
    let mut rewrite = |element: &BytesStart<'_>| {
        let mut tag = BytesStart::new(element.name().as_ref().to_owned());
        for (key, value) in all_attributes(element) {
            let local = key.rsplit(':').next().unwrap_or(&key);
            let value = map(local, &value).unwrap_or(value);
            tag.push_attribute((key.as_str(), value.as_str()));
        }
        tag
    };
    loop {
        let event = match reader.read_event().map_err(xml_error)? {
            Event::Eof => break,
            Event::Start(e) => Event::Start(rewrite(&e)),
            Event::Empty(e) => Event::Empty(rewrite(&e)),
            other => other,
        };
        out.write_event(event).map_err(xml_error)?;
    }
    Ok(out.into_inner())
}

pub(super) fn replace_once(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    match find(bytes, from) {
        Some(at) => [&bytes[..at], to, &bytes[at + from.len()..]].concat(),
        None => bytes.to_vec(),
    }
}
