//! XML helpers every part reader and the merge share: attributes by local
//! name, streaming over elements and text, and copying elements as text.
//!
//! A leaf: it knows XML, not the parts of a package.

use std::borrow::Cow;
use std::io::BufRead;

use quick_xml::events::{BytesRef, BytesStart, BytesText, Event};
use quick_xml::{Reader, Writer, XmlVersion};

use super::ReadError;
use crate::model::carried::Element;

/// Where `needle` first occurs in `haystack` (the writer's parts are
/// searched as bytes, at memory speed).
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// Where `needle` last occurs in `haystack`.
pub fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::rfind(haystack, needle)
}

/// A part that the XML parser refuses, as a [`ReadError`].
pub fn xml_error(error: impl std::fmt::Display) -> ReadError {
    ReadError(format!("a part of the package is not valid XML: {error}"))
}

/// `text` escaped for an attribute value or character data.
pub fn escape(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

/// `text` with each `_xHHHH_` escape (the form the xlsx format gives a
/// character XML cannot hold, and `_x005F_` an underscore that would
/// start one) read as its character, as readers of cell text do.
pub fn unescaped_x(text: &str) -> Cow<'_, str> {
    if !text.contains("_x") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("_x") {
        out.push_str(&rest[..at]);
        let escape = (rest.get(at + 2..at + 7))
            .filter(|e| e.ends_with('_') && e.as_bytes()[..4].iter().all(u8::is_ascii_hexdigit));
        let decoded = escape
            .and_then(|e| u32::from_str_radix(&e[..4], 16).ok())
            .and_then(char::from_u32);
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[at + 7..];
            }
            None => {
                out.push_str("_x");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The value of an attribute by local name (`r:id` is `id`), entities
/// resolved; a malformed attribute before it is an error, said as the
/// parser says it.
pub fn attribute<'a>(element: &'a BytesStart, name: &str) -> Result<Option<Cow<'a, str>>, String> {
    for attribute in element.attributes() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        if attribute.key.local_name().as_ref() == name {
            return attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map(Some)
                .map_err(|e| e.to_string());
        }
    }
    Ok(None)
}

/// The value of an attribute by local name; a malformed attribute is
/// taken as missing (layout is read leniently, values never depend on it).
pub fn attr(element: &BytesStart<'_>, name: &str) -> Option<String> {
    attribute(element, name).ok().flatten().map(Cow::into_owned)
}

/// Every attribute of an element: its name as written (with its prefix)
/// and its value, unescaped; leniently, as [`attr`].
pub fn all_attributes(element: &BytesStart<'_>) -> Vec<(String, String)> {
    element
        .attributes()
        .with_checks(false)
        .flatten()
        .filter_map(|attribute| {
            let value = attribute.normalized_value(XmlVersion::Implicit1_0).ok()?;
            Some((attribute.key.as_ref().to_owned(), value.into_owned()))
        })
        .collect()
}

/// The values of `names` in one pass over the element's attributes, for
/// elements there is one of per cell; leniently, as [`attr`].
pub fn attrs<'a, const N: usize>(
    element: &'a BytesStart<'_>,
    names: [&str; N],
) -> [Option<Cow<'a, str>>; N] {
    let mut values = [const { None }; N];
    for attribute in element.attributes().with_checks(false).flatten() {
        let key = attribute.key.local_name();
        if let Some(i) = names.iter().position(|name| *name == key.as_ref()) {
            values[i] = attribute.normalized_value(XmlVersion::Implicit1_0).ok();
        }
    }
    values
}

/// Whether an attribute value is true: `1` or `true`.
pub fn is_true(value: &str) -> bool {
    matches!(value.trim(), "1" | "true")
}

/// A boolean attribute: `1` or `true`; leniently, as [`attr`].
pub fn flag(element: &BytesStart<'_>, name: &str) -> bool {
    attr(element, name).is_some_and(|v| is_true(&v))
}

/// The value of an attribute of the start tag `xml` begins with.
pub fn first_attribute(xml: &[u8], name: &str) -> Option<String> {
    let mut reader = Reader::from_reader(xml);
    match reader.read_event() {
        Ok(Event::Start(e) | Event::Empty(e)) => attr(&e, name),
        _ => None,
    }
}

/// Character data as the parser gives it: text, or an entity or character
/// reference standing alone.
pub enum Text<'a> {
    Chars(&'a BytesText<'a>),
    Reference(&'a BytesRef<'a>),
}

impl Text<'_> {
    /// The text with entities resolved; an unknown entity is no text.
    pub fn decode(&self) -> Cow<'_, str> {
        match self {
            Text::Chars(text) => text.xml10_content(),
            Text::Reference(reference) => match reference.resolve_char_ref() {
                Ok(Some(c)) => Cow::Owned(c.to_string()),
                _ => quick_xml::escape::resolve_predefined_entity(&reference.xml10_content())
                    .unwrap_or("")
                    .into(),
            },
        }
    }
}

/// What [`for_each_node`] shows of an XML stream.
pub enum Node<'a> {
    /// A start (or empty) element.
    Element(&'a BytesStart<'a>),
    /// Character data, decoded (entities resolved) only when asked for:
    /// most text of a sheet is cell values, which the scan skips.
    Text(Text<'a>),
}

/// Calls `visit` with every start (or empty) element of an XML stream.
pub fn for_each_element(
    xml: impl BufRead,
    mut visit: impl FnMut(&BytesStart<'_>) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    for_each_node(xml, |node| match node {
        Node::Element(element) => visit(element),
        Node::Text(_) => Ok(()),
    })
}

/// Calls `visit` with every start element and every piece of text.
pub fn for_each_node(
    xml: impl BufRead,
    mut visit: impl FnMut(Node<'_>) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf).map_err(xml_error)? {
            Event::Start(e) | Event::Empty(e) => visit(Node::Element(&e))?,
            Event::Text(text) => visit(Node::Text(Text::Chars(&text)))?,
            Event::GeneralRef(reference) => visit(Node::Text(Text::Reference(&reference)))?,
            Event::Eof => return Ok(()),
            _ => {}
        }
        buf.clear();
    }
}

/// How deep the elements of a part may nest. Parts nest a dozen levels;
/// the reader keeps each open element's name, and a tree is walked
/// recursively: ten million levels (160 KB zipped) took seconds and
/// hundreds of megabytes.
pub const MAX_DEPTH: usize = 256;

/// One level deeper than `depth`, the elements open around a start tag:
/// refused past [`MAX_DEPTH`].
pub fn deeper(depth: usize) -> Result<usize, ReadError> {
    match depth < MAX_DEPTH {
        true => Ok(depth + 1),
        false => Err(ReadError(format!(
            "elements nest more than {MAX_DEPTH} levels deep"
        ))),
    }
}

/// Copies an element's events, start to end, into XML text.
pub struct Capture {
    name: String,
    depth: usize,
    out: Writer<Vec<u8>>,
}

impl Default for Capture {
    fn default() -> Capture {
        Capture {
            name: String::new(),
            depth: 0,
            out: Writer::new(Vec::new()),
        }
    }
}

impl Capture {
    /// Takes the next event, the element's own start (or empty) tag first;
    /// gives the element once it is complete.
    pub fn push(&mut self, event: &Event<'_>) -> Result<Option<Element>, ReadError> {
        if let (Event::Start(e) | Event::Empty(e), 0) = (event, self.depth) {
            self.name = e.local_name().as_ref().to_owned();
        }
        self.out
            .write_event(event.borrow())
            .map_err(|e| ReadError(format!("copying XML: {e}")))?;
        match event {
            Event::Start(_) => self.depth += 1,
            Event::End(_) => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        if self.depth > 0 {
            return Ok(None);
        }
        let xml = String::from_utf8_lossy(self.out.get_ref()).into_owned();
        self.out.get_mut().clear();
        Ok(Some(Element {
            name: std::mem::take(&mut self.name),
            xml,
        }))
    }
}

/// Copies the children of a part's root element that a test picks, from
/// the events of the whole part.
#[derive(Default)]
pub struct ChildCopier {
    open: Option<Capture>,
}

impl ChildCopier {
    /// Takes the next event, met at `depth` (0 is the root's own tag);
    /// `wanted` picks children by local name and whether they are empty.
    /// Gives a copied child once it is complete.
    pub fn push(
        &mut self,
        event: &Event<'_>,
        depth: usize,
        wanted: impl Fn(&str, bool) -> bool,
    ) -> Result<Option<Element>, ReadError> {
        if let Some(open) = &mut self.open {
            let element = open.push(event)?;
            if element.is_some() {
                self.open = None;
            }
            return Ok(element);
        }
        if let (Event::Start(e) | Event::Empty(e), 1) = (event, depth)
            && wanted(e.local_name().as_ref(), matches!(event, Event::Empty(_)))
        {
            let mut open = Capture::default();
            let element = open.push(event)?;
            if element.is_none() {
                self.open = Some(open);
            }
            return Ok(element);
        }
        Ok(None)
    }
}

/// The children of the first `parent` element of a part (of its root
/// element when `None`), as XML text.
pub fn capture_children(xml: &[u8], parent: Option<&str>) -> Result<Vec<String>, ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut inside = false;
    let mut capture: Option<Capture> = None;
    let mut found = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(xml_error)?;
        match (&event, inside, &mut capture) {
            (Event::Eof, ..) => return Ok(found),
            (_, true, Some(open)) => {
                if let Some(element) = open.push(&event)? {
                    found.push(element.xml);
                    capture = None;
                }
            }
            (Event::Start(_) | Event::Empty(_), true, None) => {
                let mut open = Capture::default();
                match open.push(&event)? {
                    Some(element) => found.push(element.xml),
                    None => capture = Some(open),
                }
            }
            (Event::End(_), true, None) => return Ok(found),
            (Event::Start(e), false, _) => {
                inside = parent.is_none_or(|parent| e.local_name().as_ref() == parent);
            }
            _ => {}
        }
        buf.clear();
    }
}

/// The namespace declarations and `mc:Ignorable` of a part's root element.
pub fn root_attributes(root: &BytesStart<'_>) -> Vec<(String, String)> {
    all_attributes(root)
        .into_iter()
        .filter(|(key, _)| {
            key == "xmlns" || key.starts_with("xmlns:") || key.ends_with(":Ignorable")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::unescaped_x;

    #[test]
    fn escapes_are_read_as_their_characters() {
        let cases = [
            ("Unit_x000a_Price", "Unit\nPrice"),
            ("Tab_x0009_", "Tab\t"),
            ("_x005F_x0041_", "_x0041_"),
            ("plain", "plain"),
            ("_x12_ and _xZZZZ_ and _x", "_x12_ and _xZZZZ_ and _x"),
            ("_x00e9__x00E9_", "\u{e9}\u{e9}"),
            ("_x+041_ _x\u{e9}12_", "_x+041_ _x\u{e9}12_"),
        ];
        for (text, read) in cases {
            assert_eq!(unescaped_x(text), read, "{text}");
        }
    }
}
