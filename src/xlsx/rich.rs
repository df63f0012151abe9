//! Rich text: strings formatted in parts, read as their runs, each with its
//! font, from the shared strings (`<si>`) and from inline strings (`<is>`);
//! and plain strings spelled otherwise than the writer spells them.

use std::io::BufRead;

use quick_xml::events::{BytesEnd, BytesStart, Event};
use quick_xml::{Reader, Writer};

use super::ReadError;
use super::styles::{Palette, read_font_property};
use super::xml::{Text, attr, deeper, xml_error};
use crate::model::format::Font;
use crate::model::layout::{RichText, Spelling, TextRun};

/// The most runs a string may be formatted in: a cell holds at most
/// 32,767 characters, and a run shows at least one. Each run read takes a
/// few hundred bytes: a string of three million runs (90 KB zipped) took
/// a gigabyte.
const MAX_RUNS: usize = 32_767;

/// Collects the runs of one string from its XML events.
pub struct RunReader {
    /// The string's content as XML, element names without their prefix.
    xml: Writer<Vec<u8>>,
    /// How deep inside the string's content [`RunReader::record`] is.
    depth: usize,
    /// The runs (`<r>`), and the texts beside them (a `<t>` of the string's
    /// own, which shows in the cell's font) as runs without a font.
    runs: Vec<TextRun>,
    /// Whether the string has a run (`<r>`): without one it is plain.
    has_runs: bool,
    in_run: bool,
    in_properties: bool,
    in_text: bool,
    /// The current `<t>`'s text, and whether it has `xml:space="preserve"`:
    /// a run's text is what readers make of it, its outer white space
    /// trimmed unless preserved.
    text: String,
    text_preserved: bool,
    /// Inside a phonetic run (`<rPh>`), whose text is no part of the string.
    in_phonetic: bool,
    /// The text of a string without runs, as it stands in its `<t>`.
    plain: String,
    /// Whether that `<t>` has `xml:space="preserve"`.
    preserve: bool,
}

impl Default for RunReader {
    fn default() -> RunReader {
        RunReader {
            xml: Writer::new(Vec::new()),
            depth: 0,
            runs: Vec::new(),
            has_runs: false,
            in_run: false,
            in_properties: false,
            in_text: false,
            text: String::new(),
            text_preserved: false,
            in_phonetic: false,
            plain: String::new(),
            preserve: false,
        }
    }
}

impl RunReader {
    /// Copies an event inside the string (`<si>` or `<is>`, whose own end
    /// is left out) to its XML, text and references as they stand; refused
    /// once its elements nest more than
    /// [`MAX_DEPTH`](super::xml::MAX_DEPTH) levels deep.
    pub fn record(&mut self, event: &Event<'_>) -> Result<(), ReadError> {
        let local = |e: &BytesStart<'_>| {
            let mut copy = BytesStart::new(e.local_name().as_ref().to_owned());
            copy.extend_attributes(e.attributes().flatten());
            copy
        };
        let copied = match event {
            Event::Start(e) => {
                self.depth = deeper(self.depth)?;
                Event::Start(local(e))
            }
            Event::Empty(e) => Event::Empty(local(e)),
            Event::End(e) if self.depth > 0 => {
                self.depth -= 1;
                let name = e.local_name().as_ref().to_owned();
                Event::End(BytesEnd::new(name))
            }
            Event::Text(_) | Event::GeneralRef(_) | Event::CData(_) => event.borrow(),
            _ => return Ok(()),
        };
        // Writing into memory does not fail.
        let _ = self.xml.write_event(copied);
        Ok(())
    }

    /// Refused once the string has more than [`MAX_RUNS`] runs.
    pub fn start(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        if self.runs.len() > MAX_RUNS {
            return Err(ReadError(format!(
                "the workbook is too large: a string is formatted in more than \
                 {MAX_RUNS} runs, more than a cell has characters"
            )));
        }
        match element.local_name().as_ref() {
            "r" => {
                self.runs.push(TextRun::default());
                self.has_runs = true;
                self.in_run = true;
            }
            "rPr" if self.in_run => {
                if let Some(run) = self.runs.last_mut() {
                    run.font = Some(Font::default());
                }
                self.in_properties = true;
            }
            "t" => {
                self.in_text = true;
                self.text_preserved = attr(element, "space").is_some_and(|v| v == "preserve");
                self.text.clear();
                if !self.in_run && !self.in_phonetic {
                    self.preserve = attr(element, "space").is_some_and(|v| v == "preserve");
                    self.runs.push(TextRun::default());
                }
            }
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
        Ok(())
    }

    pub fn text(&mut self, text: &Text<'_>) {
        if !self.in_text || self.in_phonetic {
            return;
        }
        let text = text.decode();
        if !self.in_run {
            self.plain.push_str(&text);
        }
        self.text.push_str(&text);
    }

    pub fn end(&mut self, name: &str) {
        match name {
            "t" => {
                self.in_text = false;
                if self.in_phonetic {
                    return;
                }
                let text = match self.text_preserved {
                    true => &self.text[..],
                    false => self.text.trim_matches([' ', '\t', '\r', '\n']),
                };
                if let Some(run) = self.runs.last_mut() {
                    run.text.push_str(text);
                }
            }
            "rPr" => self.in_properties = false,
            "r" => self.in_run = false,
            "rPh" => self.in_phonetic = false,
            _ => {}
        }
    }

    /// The runs and the string's XML, when the string had runs.
    pub fn finish(self) -> Option<RichText> {
        self.has_runs.then(|| RichText {
            runs: self.runs,
            xml: String::from_utf8_lossy(&self.xml.into_inner()).into_owned(),
        })
    }

    /// The spelling of a string without runs, when it may be one the
    /// writer would not write (see [`may_be_respelled`]); its `text` is
    /// left for the reader of the values to fill in.
    pub fn spelling(&self) -> Option<Spelling> {
        (!self.has_runs && may_be_respelled(&self.plain, self.preserve)).then(|| Spelling {
            text: String::new(),
            xml: self.plain.clone(),
            preserve: self.preserve,
            in_value: false,
        })
    }
}

/// The spelling of a text constant the file holds in a `<v>` (a `t="str"`
/// cell without a formula), when it may be one the writer would not
/// write; its `text` is left for the reader of the values to fill in.
pub fn value_spelling(xml: String, preserve: bool) -> Option<Spelling> {
    may_be_respelled(&xml, preserve).then_some(Spelling {
        text: String::new(),
        xml,
        preserve,
        in_value: true,
    })
}

/// Whether the writer may spell a string otherwise than `xml` (a `<t>`'s
/// text, entities resolved) does: when it holds an `_x` escape or a
/// character the writer escapes, or outer spaces that readers trim (no
/// `preserve`). A cheap test on every plain string; the few it lets through
/// are compared with the writer's spelling once their text is known.
fn may_be_respelled(xml: &str, preserve: bool) -> bool {
    let outer_space = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    xml.contains("_x")
        || xml.contains("_X")
        || xml
            .chars()
            .any(|c| (c < ' ' && c != '\t' && c != '\n') || c == '\u{FFFE}' || c == '\u{FFFF}')
        || (!preserve && (xml.starts_with(outer_space) || xml.ends_with(outer_space)))
}

/// Every string of the shared strings part that has runs or may be
/// respelled.
#[derive(Debug, Default)]
pub struct SharedStrings {
    /// The strings with runs, by their index in the part.
    pub rich: Vec<(u32, RichText)>,
    /// The plain strings that may be respelled, by their index.
    pub spelled: Vec<(u32, Spelling)>,
}

/// The shared strings that have runs or may be respelled.
pub fn rich_shared_strings(xml: impl BufRead) -> Result<SharedStrings, ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut found = SharedStrings::default();
    let mut index = 0u32;
    let mut string: Option<RunReader> = None;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(xml_error)?;
        if let Some(string) = &mut string {
            string.record(&event)?;
        }
        match event {
            Event::Start(e) if e.local_name().as_ref() == "si" => {
                string = Some(RunReader::default());
            }
            Event::Empty(e) if e.local_name().as_ref() == "si" => index += 1,
            Event::Start(e) => {
                if let Some(string) = &mut string {
                    string.start(&e)?;
                }
            }
            // An empty element (`<t/>`) starts and ends: no text follows.
            Event::Empty(e) => {
                if let Some(string) = &mut string {
                    string.start(&e)?;
                    string.end(e.local_name().as_ref());
                }
            }
            Event::End(e) if e.local_name().as_ref() == "si" => {
                if let Some(string) = string.take() {
                    if let Some(spelling) = string.spelling() {
                        found.spelled.push((index, spelling));
                    }
                    if let Some(runs) = string.finish() {
                        found.rich.push((index, runs));
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_strings_that_may_be_respelled_are_kept_as_spelled() {
        let xml = concat!(
            r#"<sst><si><t>plain</t></si><si><t>City </t></si>"#,
            r#"<si><t xml:space="preserve">World </t></si><si><t>a_x000d_b</t></si>"#,
            r#"<si><t>line&#13;x</t></si><si><r><t>run_x000d_</t></r></si>"#,
            "<si>\n  <t/>\n</si><si><t>last </t></si></sst>",
        );
        let strings = rich_shared_strings(xml.as_bytes()).expect("read");
        let spelled: Vec<(u32, &str, bool)> = strings
            .spelled
            .iter()
            .map(|(i, s)| (*i, s.xml.as_str(), s.preserve))
            .collect();
        assert_eq!(
            spelled,
            [
                (1, "City ", false),
                (3, "a_x000d_b", false),
                (4, "line\rx", false),
                (7, "last ", false)
            ]
        );
        assert_eq!(strings.rich.len(), 1, "runs are kept as runs");
    }

    #[test]
    fn text_beside_runs_is_a_run_in_the_cells_font() {
        let xml = r#"<sst><si><t>Before</t><r><rPr><b/></rPr><t>Hierarchy</t></r><t>!</t><rPh><t>x</t></rPh></si></sst>"#;
        let strings = rich_shared_strings(xml.as_bytes()).expect("read");
        let runs: Vec<(&str, bool)> = strings.rich[0]
            .1
            .runs
            .iter()
            .map(|run| (run.text.as_str(), run.font.as_ref().is_some_and(|f| f.bold)))
            .collect();
        assert_eq!(runs, [("Before", false), ("Hierarchy", true), ("!", false)]);
        assert!(strings.spelled.is_empty());
    }

    #[test]
    fn a_string_of_more_runs_than_a_cell_has_characters_is_refused() {
        let string = |runs: usize| {
            let run = "<r><rPr><b/></rPr><t>x</t></r>".repeat(runs);
            format!("<sst><si>{run}</si></sst>")
        };
        let strings = rich_shared_strings(string(MAX_RUNS).as_bytes()).expect("read");
        assert_eq!(strings.rich[0].1.runs.len(), MAX_RUNS);
        let error = rich_shared_strings(string(MAX_RUNS + 1).as_bytes()).expect_err("refused");
        assert!(error.0.contains("more than 32767 runs"), "{}", error.0);
    }

    #[test]
    fn a_string_nested_past_the_bound_is_refused() {
        use crate::xlsx::xml::MAX_DEPTH;
        let nested = |depth: usize| {
            let (open, close) = ("<x:b>".repeat(depth), "</x:b>".repeat(depth));
            format!(r#"<sst xmlns:x="y"><si><t>a</t>{open}{close}</si></sst>"#)
        };
        assert!(rich_shared_strings(nested(MAX_DEPTH).as_bytes()).is_ok());
        let error = rich_shared_strings(nested(100_000).as_bytes()).expect_err("refused");
        assert!(error.0.contains("levels deep"), "{}", error.0);
    }

    #[test]
    fn a_runs_text_is_what_readers_read_its_outer_spaces_trimmed_unless_preserved() {
        let xml = r#"<x:sst xmlns:x="main"><x:si><x:r><x:rPr><x:b/></x:rPr><x:t> red </x:t></x:r><x:r><x:t xml:space="preserve"> kept </x:t></x:r></x:si></x:sst>"#;
        let strings = rich_shared_strings(xml.as_bytes()).expect("read");
        let rich = &strings.rich[0].1;
        let texts: Vec<&str> = rich.runs.iter().map(|run| run.text.as_str()).collect();
        assert_eq!(texts, ["red", " kept "]);
        assert!(
            rich.xml.contains("<t> red </t>"),
            "written as the file has it: {}",
            rich.xml
        );
    }
}
