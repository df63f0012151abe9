//! XML as a small tree of owned events: for the parts and elements a row
//! move rewrites, where a child may have to go (a note on a deleted row)
//! and a parent must then be told (a count). Written back event by event,
//! so what the tree does not touch comes out as it came in.

use std::borrow::Cow;

use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, BytesText, Event};
use quick_xml::name::QName;
use quick_xml::{Reader, Writer};

use super::ReadError;
use super::xml::{Text, attr, deeper, xml_error};

/// A node: an element with its children, or any other event (text, a
/// comment, the declaration).
#[derive(Debug, Clone)]
pub enum Node {
    Element(Element),
    Other(Event<'static>),
}

/// An element, its start tag and its children.
#[derive(Debug, Clone)]
pub struct Element {
    pub start: BytesStart<'static>,
    pub children: Vec<Node>,
    /// Written as `<a/>` (when it has no children).
    pub empty: bool,
}

impl Element {
    /// Its name without a prefix: `sqref` for `xm:sqref`.
    pub fn name(&self) -> &str {
        self.start.local_name().into_inner()
    }

    /// The value of the attribute whose local name is `name`.
    pub fn attr(&self, name: &str) -> Option<String> {
        attr(&self.start, name)
    }

    /// Sets the attribute whose local name is `name`, in its place; the
    /// others keep their text as written.
    pub fn set_attr(&mut self, name: &str, value: &str) {
        let attributes: Vec<(String, String)> = self
            .start
            .attributes()
            .with_checks(false)
            .flatten()
            .map(|a| {
                let key = a.key.as_ref().to_owned();
                match a.key.local_name().as_ref() == name {
                    true => (key, escaped(value)),
                    false => (key, a.value.into_owned()),
                }
            })
            .collect();
        self.start.clear_attributes();
        for (key, value) in &attributes {
            self.start.push_attribute(Attribute {
                key: QName(key),
                value: Cow::Borrowed(value),
            });
        }
    }

    /// The text inside the element, decoded.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for child in &self.children {
            match child {
                Node::Other(Event::Text(chars)) => text.push_str(&Text::Chars(chars).decode()),
                Node::Other(Event::GeneralRef(reference)) => {
                    text.push_str(&Text::Reference(reference).decode());
                }
                Node::Other(Event::CData(data)) => {
                    text.push_str(data.as_ref());
                }
                _ => {}
            }
        }
        text
    }

    /// Replaces the element's content with `text`.
    pub fn set_text(&mut self, text: &str) {
        self.children = vec![Node::Other(Event::Text(BytesText::new(text).into_owned()))];
        self.empty = false;
    }

    /// The child elements.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|node| match node {
            Node::Element(element) => Some(element),
            Node::Other(_) => None,
        })
    }

    /// The child elements, to change.
    pub fn elements_mut(&mut self) -> impl Iterator<Item = &mut Element> {
        self.children.iter_mut().filter_map(|node| match node {
            Node::Element(element) => Some(element),
            Node::Other(_) => None,
        })
    }

    /// The first child element named `name` (local name).
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.elements().find(|e| e.name() == name)
    }

    /// The first child element named `name` (local name), to change.
    pub fn child_mut(&mut self, name: &str) -> Option<&mut Element> {
        self.elements_mut().find(|e| e.name() == name)
    }
}

/// An attribute value as XML writes it.
fn escaped(value: &str) -> String {
    quick_xml::escape::escape(value).into_owned()
}

/// The nodes of an XML text: the declaration, the root element and
/// whatever lies around them.
pub fn parse(xml: &[u8]) -> Result<Vec<Node>, ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    // The open elements, innermost last, each with the children so far.
    let mut open: Vec<Element> = Vec::new();
    let mut top: Vec<Node> = Vec::new();
    let push = |node: Node, open: &mut Vec<Element>, top: &mut Vec<Node>| match open.last_mut() {
        Some(parent) => parent.children.push(node),
        None => top.push(node),
    };
    loop {
        let event = reader.read_event_into(&mut buf).map_err(xml_error)?;
        match event {
            Event::Eof => break,
            Event::Start(start) => {
                deeper(open.len())?;
                open.push(Element {
                    start: start.into_owned(),
                    children: Vec::new(),
                    empty: false,
                });
            }
            Event::Empty(start) => {
                let element = Element {
                    start: start.into_owned(),
                    children: Vec::new(),
                    empty: true,
                };
                push(Node::Element(element), &mut open, &mut top);
            }
            Event::End(_) => {
                let Some(element) = open.pop() else {
                    return Err(ReadError("an end tag without its start".into()));
                };
                push(Node::Element(element), &mut open, &mut top);
            }
            other => push(Node::Other(other.into_owned()), &mut open, &mut top),
        }
        buf.clear();
    }
    if !open.is_empty() {
        return Err(ReadError("an element is not closed".into()));
    }
    Ok(top)
}

/// The XML text of `nodes`.
pub fn write(nodes: &[Node]) -> Vec<u8> {
    let mut writer = Writer::new(Vec::new());
    for node in nodes {
        write_node(&mut writer, node);
    }
    writer.into_inner()
}

fn write_node(writer: &mut Writer<Vec<u8>>, node: &Node) {
    // Writing into memory cannot fail.
    match node {
        Node::Other(event) => {
            let _ = writer.write_event(event.borrow());
        }
        Node::Element(element) if element.empty && element.children.is_empty() => {
            let _ = writer.write_event(Event::Empty(element.start.borrow()));
        }
        Node::Element(element) => {
            let _ = writer.write_event(Event::Start(element.start.borrow()));
            for child in &element.children {
                write_node(writer, child);
            }
            let _ = writer.write_event(Event::End(element.start.to_end()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_changed_comes_out_as_it_came_in() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<x:comments xmlns:x="urn:x"><x:a b="1 &amp; 2"/><c>A &lt; B<!-- note --></c></x:comments>"#;
        let nodes = parse(xml.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(write(&nodes)).unwrap(), xml);
    }

    #[test]
    fn elements_nested_too_deep_are_refused() {
        use crate::xlsx::xml::MAX_DEPTH;
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(parse(deep.as_bytes()).is_err());
        let fine = "<a>".repeat(MAX_DEPTH) + &"</a>".repeat(MAX_DEPTH);
        assert!(parse(fine.as_bytes()).is_ok());
    }

    #[test]
    fn attributes_and_text_are_set_in_place() {
        let nodes = parse(br#"<r><f a="1" x:sqref="A1" z="2">B1&amp;C1</f></r>"#).unwrap();
        let Node::Element(mut root) = nodes[0].clone() else {
            panic!("no root");
        };
        let f = root.child_mut("f").unwrap();
        assert_eq!(f.text(), "B1&C1");
        assert_eq!(f.attr("sqref").as_deref(), Some("A1"));
        f.set_attr("sqref", "A2 <B3>");
        f.set_text("B2<C2");
        assert_eq!(
            String::from_utf8(write(&[Node::Element(root)])).unwrap(),
            r#"<r><f a="1" x:sqref="A2 &lt;B3&gt;" z="2">B2&lt;C2</f></r>"#
        );
    }
}
