//! Rich text: strings formatted in parts, read as their runs, each with its
//! font, from the shared strings (`<si>`) and from inline strings (`<is>`).

use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::ReadError;
use super::styles::{Palette, read_font_property};
use super::xml::{Text, xml_error};
use crate::model::format::Font;
use crate::model::layout::TextRun;

/// Collects the runs of one string from its XML events.
#[derive(Default)]
pub struct RunReader {
    runs: Vec<TextRun>,
    in_run: bool,
    in_properties: bool,
    in_text: bool,
    /// Inside a phonetic run (`<rPh>`), whose text is no part of the string.
    in_phonetic: bool,
}

impl RunReader {
    pub fn start(&mut self, element: &BytesStart<'_>) {
        match element.local_name().as_ref() {
            "r" => {
                self.runs.push(TextRun::default());
                self.in_run = true;
            }
            "rPr" if self.in_run => {
                if let Some(run) = self.runs.last_mut() {
                    run.font = Some(Font::default());
                }
                self.in_properties = true;
            }
            "t" => self.in_text = true,
            "rPh" => self.in_phonetic = true,
            property if self.in_properties => {
                let property = if property == "rFont" {
                    "name"
                } else {
                    property
                };
                if let Some(font) = self.runs.last_mut().and_then(|r| r.font.as_mut()) {
                    // A malformed property is taken as missing, as in a cell's font.
                    let _ = read_font_property(font, property, element, &Palette::default());
                }
            }
            _ => {}
        }
    }

    pub fn text(&mut self, text: &Text<'_>) {
        if self.in_text
            && self.in_run
            && !self.in_phonetic
            && let Some(run) = self.runs.last_mut()
        {
            run.text.push_str(&text.decode());
        }
    }

    pub fn end(&mut self, name: &str) {
        match name {
            "t" => self.in_text = false,
            "rPr" => self.in_properties = false,
            "r" => self.in_run = false,
            "rPh" => self.in_phonetic = false,
            _ => {}
        }
    }

    /// The runs, when the string had any.
    pub fn finish(self) -> Option<Vec<TextRun>> {
        (!self.runs.is_empty()).then_some(self.runs)
    }
}

/// The shared strings that have runs, by their index in the part.
pub fn rich_shared_strings(xml: impl BufRead) -> Result<Vec<(u32, Vec<TextRun>)>, ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut found = Vec::new();
    let mut index = 0u32;
    let mut string: Option<RunReader> = None;
    loop {
        match reader.read_event_into(&mut buf).map_err(xml_error)? {
            Event::Start(e) if e.local_name().as_ref() == "si" => {
                string = Some(RunReader::default());
            }
            Event::Empty(e) if e.local_name().as_ref() == "si" => index += 1,
            Event::Start(e) | Event::Empty(e) => {
                if let Some(string) = &mut string {
                    string.start(&e);
                }
            }
            Event::End(e) if e.local_name().as_ref() == "si" => {
                if let Some(runs) = string.take().and_then(RunReader::finish) {
                    found.push((index, runs));
                }
                index += 1;
            }
            Event::End(e) => {
                if let Some(string) = &mut string {
                    string.end(e.local_name().as_ref());
                }
            }
            Event::Text(text) => {
                if let Some(string) = &mut string {
                    string.text(&Text::Chars(&text));
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(string) = &mut string {
                    string.text(&Text::Reference(&reference));
                }
            }
            Event::Eof => return Ok(found),
            _ => {}
        }
        buf.clear();
    }
}
