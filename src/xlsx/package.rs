//! The parts of an xlsx package that calamine does not expose: each sheet's
//! layout (cell formats, row and column settings, merges, hyperlinks,
//! panes, tables, tab colour), the workbook's defined names and active
//! sheet, what a rewrite carries as it was (see [`super::carry`]), and the
//! little a rewrite would lose (see
//! [`Workbook::unkept`](crate::model::Workbook::unkept)).
//!
//! One pass over the zip reads them all. It also bounds the package: every
//! part is unpacked once here and counted while inflating, so a zip bomb is
//! stopped after [`MAX_UNPACKED_BYTES`] of work whatever its headers claim.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek};

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::carry::{
    self, SheetCapture, WorkbookCapture, carries_sheet_element, carries_workbook_element,
};
use super::opc::{ContentTypes, MainParts, part_name, relationships};
use super::read::TEXT_BYTES_PER_CELL;
use super::rich::{RunReader, SharedStrings, rich_shared_strings, value_spelling};
use super::styles::{Palette, Styles, parse_styles, read_color};
use super::xml::{
    Capture, ChildCopier, Node, Text, all_attributes, attr, attrs, deeper, escape, flag,
    for_each_node, root_attributes, unescaped_x, xml_error,
};
use super::{ReadError, unreadable};
use crate::model::carried::{Carried, CarriedSheet, Element};
use crate::model::format::{CellFormat, Color, Font};
use crate::model::formula::shifted;
use crate::model::layout::{
    ArrayFormula, ColumnProps, DataTable, FileFormula, Layout, Link, LinkTarget, Range, RowProps,
    Table, TableColumn,
};
use crate::model::workbook::{DefinedName, DocumentProperties, MAX_COLUMNS, MAX_ROWS};

/// The most bytes the parts of one package may unpack to.
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;

/// The most bytes of sheet XML a workbook may carry beyond the model
/// (conditional formats, validations, extensions…): a write copies them
/// a few times over, and nine million conditional formats (3.5 MB zipped)
/// asked for gigabytes.
pub const MAX_CARRIED_BYTES: usize = 128 << 20;
/// The most parts one package may have.
const MAX_PARTS: usize = 10_000;

/// What the package holds besides cell values.
#[derive(Debug, Default)]
pub struct Package {
    /// What a rewrite would lose, described for a user.
    pub unkept: Vec<String>,
    pub formats: Vec<CellFormat>,
    pub default_font: Font,
    pub names: Vec<DefinedName>,
    /// The index (among all sheets of `<sheets>`) of the active sheet.
    pub active_tab: usize,
    /// Each worksheet's layout by sheet name.
    pub layouts: HashMap<String, Layout>,
    pub carried: Carried,
    /// What each worksheet carries, by sheet name.
    pub carried_sheets: HashMap<String, CarriedSheet>,
    /// Formulas of shared-formula cells that calamine reads wrong, by sheet
    /// name: row, column, formula (see `SheetScan::shared_formula`).
    pub shared_formulas: HashMap<String, Vec<(u32, u16, String)>>,
    /// Whether a shared-string cell gives its index with spaces around it
    /// (`<v>2 </v>`), which calamine reads as index 0 (see
    /// `super::repair`).
    pub spaced_string_index: bool,
    pub properties: DocumentProperties,
}

/// Reads everything but the cell values. `max_cells` bounds the formatted
/// cells and rows kept, as it bounds the values.
pub fn read_package<R: Read + Seek>(reader: R, max_cells: usize) -> Result<Package, ReadError> {
    let Unpacked {
        main,
        parts,
        damaged,
        mut sheets,
        rich_strings,
    } = unpack(reader, max_cells)?;
    let mut package = Package::default();
    // A rewrite cannot carry what it cannot read: writes are refused.
    package.unkept.extend(
        damaged
            .into_iter()
            .map(|part| format!("a damaged part ({part}, whose zip entry does not inflate)")),
    );
    if let Some(xml) = main.styles.as_ref().and_then(|name| parts.get(name)) {
        let Styles {
            formats,
            default_font,
        } = parse_styles(xml).map_err(unreadable)?;
        package.formats = formats;
        package.default_font = default_font;
    }
    for part in ["docProps/core.xml", "docProps/app.xml"] {
        if let Some(xml) = parts.get(part) {
            read_properties(xml, &mut package.properties)?;
        }
    }
    let Some(workbook_xml) = parts.get(&main.workbook) else {
        return Ok(package);
    };
    let book = parse_workbook_xml(workbook_xml)?;
    package.active_tab = book.active_tab;
    package.names = book.names;
    let book_rels = relationships(&parts, &main.workbook)?;
    let mut captures = Vec::new();
    for (sheet_name, rel_id) in &book.sheets {
        let Some(part) = book_rels.get(rel_id) else {
            continue;
        };
        // Found as the package finds parts: ignoring case.
        let Some((part, scan)) = sheets
            .keys()
            .find(|name| name.eq_ignore_ascii_case(part))
            .cloned()
            .and_then(|name| sheets.remove_entry(&name))
        else {
            continue;
        };
        let part = &part;
        let mut layout = sheet_layout(scan.layout, scan.links, scan.table_ids, &parts, part)?;
        for (row, column, index) in scan.shared_strings {
            if let Ok(at) = rich_strings.rich.binary_search_by_key(&index, |(i, _)| *i) {
                layout
                    .rich_text
                    .insert((row, column), rich_strings.rich[at].1.clone());
            }
            if let Ok(at) = rich_strings
                .spelled
                .binary_search_by_key(&index, |(i, _)| *i)
            {
                layout
                    .spelled
                    .insert((row, column), rich_strings.spelled[at].1.clone());
            }
        }
        package.layouts.insert(sheet_name.clone(), layout);
        package.spaced_string_index |= scan.spaced_string_index;
        if !scan.shared_formulas.is_empty() {
            package
                .shared_formulas
                .insert(sheet_name.clone(), scan.shared_formulas);
        }
        captures.push(SheetCapture {
            part: part.clone(),
            sheet_name: sheet_name.clone(),
            root_attributes: scan.root_attributes,
            elements: scan.carried,
            columns: scan.columns,
        });
    }
    let content_types = match parts.get("[Content_Types].xml") {
        Some(xml) => ContentTypes::parse(xml)?,
        None => ContentTypes::default(),
    };
    (package.carried, package.carried_sheets) =
        carry::collect(&parts, &main, &content_types, book.capture, captures)?;
    Ok(package)
}

/// A sheet's layout completed from its relationships: where its
/// hyperlinks lead, and its tables.
fn sheet_layout(
    mut layout: Layout,
    links: Vec<(Link, Option<String>)>,
    table_ids: Vec<String>,
    parts: &HashMap<String, Vec<u8>>,
    part: &str,
) -> Result<Layout, ReadError> {
    let rels = relationships(parts, part)?;
    for (link, rel_id) in links {
        let target = match (rel_id.and_then(|id| rels.get(&id)), link.target) {
            (Some(url), _) => LinkTarget::Url(url.clone()),
            (None, target) => target,
        };
        layout.links.push(Link { target, ..link });
    }
    for rel_id in table_ids {
        let Some((target, xml)) = rels
            .get(&rel_id)
            .and_then(|target| Some((target, parts.get(target)?)))
        else {
            continue;
        };
        let mut table = parse_table(xml)?;
        table.part = Some(target.clone());
        layout.tables.push(table);
    }
    Ok(layout)
}

/// The package unpacked: worksheets scanned as they inflate, the shared
/// strings with runs read, every other part kept whole, each under its
/// part name (see [`part_name`]).
struct Unpacked {
    main: MainParts,
    parts: HashMap<String, Vec<u8>>,
    /// Parts whose zip entries do not inflate (a bad checksum, cut short).
    damaged: Vec<String>,
    sheets: HashMap<String, SheetXml>,
    /// By index, ascending.
    rich_strings: SharedStrings,
}

fn unpack<R: Read + Seek>(reader: R, max_cells: usize) -> Result<Unpacked, ReadError> {
    let mut archive = open_archive(reader)?;
    let names = part_names(&archive)?;
    let main = MainParts::find(&names, |wanted| small_part(&mut archive, &names, wanted));
    let mut unpacked = Unpacked {
        main,
        parts: HashMap::new(),
        damaged: Vec::new(),
        sheets: HashMap::new(),
        rich_strings: SharedStrings::default(),
    };
    let mut budget = Budget {
        cells: max_cells,
        ..Budget::default()
    };
    for (i, name) in names.into_iter().enumerate() {
        let Ok(entry) = archive.by_index(i) else {
            unpacked.damaged.push(name);
            continue;
        };
        // Never read more than the budget left, whatever the headers say.
        let left = MAX_UNPACKED_BYTES - budget.unpacked;
        let mut part = CountingReader {
            inner: entry.take(left + 1),
            count: 0,
        };
        if unpacked.main.worksheets.contains(&name) {
            let scan = scan_sheet(BufReader::new(&mut part), &mut budget);
            unpacked.sheets.insert(name, scan?);
        } else if unpacked.main.shared_strings.as_ref() == Some(&name) {
            unpacked.rich_strings = rich_shared_strings(BufReader::new(&mut part))?;
        } else {
            let mut bytes = Vec::new();
            match part.read_to_end(&mut bytes) {
                Ok(_) => {
                    unpacked.parts.insert(name, bytes);
                }
                // Spreadsheet apps open a package with a damaged part they
                // do not need; a rewrite could not carry it (see `read_package`).
                Err(_) => unpacked.damaged.push(name),
            }
        }
        budget.unpacked += part.count;
        if budget.unpacked > MAX_UNPACKED_BYTES {
            return Err(too_large());
        }
    }
    Ok(unpacked)
}

/// The package as a zip archive, refused when it has too many parts.
fn open_archive<R: Read + Seek>(reader: R) -> Result<zip::ZipArchive<R>, ReadError> {
    let archive = zip::ZipArchive::new(reader).map_err(|_| damaged())?;
    if archive.len() > MAX_PARTS {
        return Err(ReadError(format!(
            "the package has more than {MAX_PARTS} parts"
        )));
    }
    Ok(archive)
}

/// A zip archive that cannot be read whole, said in the user's terms (the
/// zip library's words name its internals).
fn damaged() -> ReadError {
    ReadError("the file is a damaged or cut-short zip archive".into())
}

fn too_large() -> ReadError {
    ReadError(format!(
        "the package unpacks to more than {} MiB",
        MAX_UNPACKED_BYTES >> 20
    ))
}

/// Inflates every part and discards it, to refuse a package with too many
/// parts, one that unpacks past [`MAX_UNPACKED_BYTES`], or one whose shared
/// strings number more than `max_strings`, before any parser reads it.
/// calamine holds a cell's whole text in memory, so a bomb of one long text
/// would cost gigabytes before [`read_package`], beside it, could stop it;
/// and it holds each shared string as its own allocation (about 56 bytes
/// even for one character), so 60 million one-letter strings, 2.4 MB
/// zipped and within the unpacked budget, would cost over 3 GB.
pub fn check_size<R: Read + Seek>(reader: R, max_strings: usize) -> Result<(), ReadError> {
    let mut archive = open_archive(reader)?;
    let mut unpacked = 0;
    for i in 0..archive.len() {
        // An entry whose header cannot be read is read by no parser.
        let Ok(entry) = archive.by_index(i) else {
            continue;
        };
        let name = entry
            .name()
            .map(|n| n.to_ascii_lowercase())
            .unwrap_or_default();
        // What is counted, and what a part with too many is refused for.
        let counter = if name.ends_with("sharedstrings.xml") {
            Some((
                ElementCounter::new(Some(b"si"), max_strings),
                format!("more than {max_strings} shared strings"),
            ))
        } else if name.ends_with("styles.xml") {
            Some((
                ElementCounter::new(None, MAX_STYLE_ELEMENTS),
                format!("styles of more than {MAX_STYLE_ELEMENTS} elements"),
            ))
        } else {
            None
        };
        // Never read more than the budget left, whatever the headers say.
        let mut part = CountingReader {
            inner: entry.take(MAX_UNPACKED_BYTES - unpacked + 1),
            count: 0,
        };
        let read = match counter {
            Some((mut counter, too_many)) => {
                let read = std::io::copy(&mut part, &mut counter);
                if counter.over() {
                    return Err(ReadError(format!(
                        "the workbook holds {too_many}, the most this server parses"
                    )));
                }
                read
            }
            None => std::io::copy(&mut part, &mut std::io::sink()),
        };
        // An entry that does not inflate is counted as far as it does: the
        // parsers that need it fail on it, the others never read it. One
        // that inflates past the size its header declares is a bomb's
        // trick, refused as such.
        match read {
            Err(error) if lies_about_its_size(&error) => return Err(damaged()),
            _ => unpacked += part.count,
        }
        if unpacked > MAX_UNPACKED_BYTES {
            return Err(too_large());
        }
    }
    Ok(())
}

/// Whether an entry failed to inflate because it grew past the size its
/// header declares (the zip library says so only in its message).
fn lies_about_its_size(error: &std::io::Error) -> bool {
    error.to_string().contains("larger than its declared")
}

/// The most elements a styles part may hold: sheetd keeps at most
/// [`super::styles::MAX_ENTRIES`] of each kind, but calamine reads every
/// `<xf>` first (180 million of them, 1.3 MB zipped, asked it for 10 GB).
const MAX_STYLE_ELEMENTS: usize = 2_000_000;

/// Counts the elements of the XML written through it (those named `only`,
/// with or without a namespace prefix, such as the shared strings' `<si>`,
/// or else every one), and fails the write once there are more than its
/// limit.
struct ElementCounter {
    only: Option<&'static [u8]>,
    count: usize,
    limit: usize,
    /// The name of the start tag being read (a tag split between writes
    /// still counts), its length `None` outside tags and in closing tags.
    name: [u8; MAX_NAME],
    name_len: Option<usize>,
}

/// Longer element names are not `si` and need not be kept.
const MAX_NAME: usize = 32;

impl ElementCounter {
    fn new(only: Option<&'static [u8]>, limit: usize) -> ElementCounter {
        ElementCounter {
            only,
            count: 0,
            limit,
            name: [0; MAX_NAME],
            name_len: None,
        }
    }

    fn over(&self) -> bool {
        self.count > self.limit
    }
}

impl std::io::Write for ElementCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &byte in buf {
            match (self.name_len, byte) {
                (_, b'<') => self.name_len = Some(0),
                // `</…>`, `<?…>` and `<!…>` open no element.
                (Some(0), b'/' | b'?' | b'!') => self.name_len = None,
                (Some(len), b'>' | b'/' | b' ' | b'\t' | b'\r' | b'\n') => {
                    // `<si>`, `<si …>`, `<x:si>`.
                    let name = &self.name[..len];
                    let counted = match self.only {
                        Some(only) => {
                            name == only
                                || (name.ends_with(only)
                                    && name.len() > only.len()
                                    && name[name.len() - only.len() - 1] == b':')
                        }
                        None => len > 0,
                    };
                    self.count += usize::from(counted);
                    self.name_len = None;
                }
                (Some(len), _) if len < MAX_NAME => {
                    self.name[len] = byte;
                    self.name_len = Some(len + 1);
                }
                // A longer name is none of `only`'s; it is an element.
                (Some(_), _) => {
                    self.count += usize::from(self.only.is_none());
                    self.name_len = None;
                }
                (None, _) => {}
            }
        }
        if self.over() {
            return Err(std::io::Error::other("too many elements"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Counts the bytes read through it.
struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// What the package may still cost.
#[derive(Default)]
struct Budget {
    unpacked: u64,
    /// Formatted cells and row settings left to keep.
    cells: usize,
    /// Bytes of sheet XML carried so far: at most [`MAX_CARRIED_BYTES`].
    carried: usize,
}

impl Budget {
    fn carry(&mut self, bytes: usize) -> Result<(), ReadError> {
        self.carried += bytes;
        if self.carried > MAX_CARRIED_BYTES {
            return Err(ReadError(format!(
                "the workbook is too large: its sheets carry more than {} MiB of XML \
                 beyond their cells",
                MAX_CARRIED_BYTES >> 20
            )));
        }
        Ok(())
    }

    fn spend(&mut self, cells: usize) -> Result<(), ReadError> {
        self.cells = self.cells.checked_sub(cells).ok_or_else(|| {
            ReadError("the workbook is too large: it formats too many cells".into())
        })?;
        Ok(())
    }
}

/// One worksheet's XML, scanned.
#[derive(Default)]
struct SheetXml {
    layout: Layout,
    /// Hyperlinks, each with its relationship id when it leads outside.
    links: Vec<(Link, Option<String>)>,
    table_ids: Vec<String>,
    /// The root's namespace declarations, for the carried elements.
    root_attributes: Vec<(String, String)>,
    /// Children of `<worksheet>` the writer does not produce.
    carried: Vec<Element>,
    /// The `<cols>` element, as XML text.
    columns: Option<String>,
    /// Every cell holding a shared string: row, column, string index.
    shared_strings: Vec<(u32, u16, u32)>,
    /// The formulas of the cells of a shared formula whose first cell is
    /// not its range's top-left corner, which calamine moves from the
    /// corner instead: row, column, formula.
    shared_formulas: Vec<(u32, u16, String)>,
    /// Whether a shared-string index has spaces around it.
    spaced_string_index: bool,
}

/// The first cell of a shared formula (`<f t="shared" ref="…" si="…">`),
/// which holds its text.
struct SharedFormula {
    row: u32,
    column: u16,
    /// Whether the cell is its range's top-left corner (the usual case).
    at_corner: bool,
    text: String,
}

/// Streams one worksheet's XML: keeps its layout, and copies the elements
/// a rewrite carries.
fn scan_sheet(xml: impl BufRead, budget: &mut Budget) -> Result<SheetXml, ReadError> {
    let mut scan = SheetScan {
        budget,
        sheet: SheetXml::default(),
        row: 0,
        next_column: 0,
        rows_seen: 0,
        heading: None,
        value: Value::Other,
        cell_metadata: false,
        inline: None,
        shared: HashMap::new(),
        in_shared: None,
        row_formatted: false,
        formatted_columns: Vec::new(),
        columns_set: 0,
        default_height: DEFAULT_ROW_HEIGHT,
        row_cells: false,
    };
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut copier = ChildCopier::default();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(xml_error)?;
        let wanted = |name: &str, empty| name == "cols" || carries_sheet_element(name, empty);
        if let Some(element) = copier.push(&event, depth, wanted)? {
            scan.budget.carry(element.xml.len())?;
            scan.sheet.keep(element);
        }
        if let Some(inline) = &mut scan.inline {
            inline.record(&event)?;
        }
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                if depth == 0 {
                    scan.sheet.root_attributes = root_attributes(e);
                }
                scan.element(e)?;
                match event {
                    Event::Start(_) => depth = deeper(depth)?,
                    // An empty element (`<t/>`) starts and ends.
                    _ => scan.end(e.local_name().as_ref()),
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                scan.end(e.local_name().as_ref());
                // The sheet ends with its root, as calamine reads it: what
                // follows is not read, so a damaged end of the entry (a bad
                // checksum is only seen there) does not stop the read.
                if depth == 0 {
                    return Ok(scan.sheet);
                }
            }
            Event::Text(text) => scan.text(Text::Chars(text)),
            Event::GeneralRef(reference) => scan.text(Text::Reference(reference)),
            Event::Eof => return Ok(scan.sheet),
            _ => {}
        }
        buf.clear();
    }
}

impl SheetXml {
    /// Files a copied element: the columns apart, the rest carried.
    fn keep(&mut self, element: Element) {
        if element.name == "cols" {
            self.columns = Some(element.xml);
        } else {
            self.carried.push(element);
        }
    }
}

/// Whether the text being read is the header's or the footer's.
#[derive(Clone, Copy)]
enum Heading {
    Header,
    Footer,
}

/// The default row height of a sheet whose file does not say it: Excel's
/// with Calibri 11, in points.
const DEFAULT_ROW_HEIGHT: f64 = 15.0;

/// The state of [`scan_sheet`].
struct SheetScan<'a> {
    budget: &'a mut Budget,
    sheet: SheetXml,
    /// The current row (0-based).
    row: u32,
    /// The column after the last cell seen.
    next_column: u16,
    rows_seen: u32,
    heading: Option<Heading>,
    /// The kind of the current cell's value.
    value: Value,
    /// Whether the current cell points at cell metadata (`cm`): a dynamic
    /// array's first cell.
    cell_metadata: bool,
    /// The runs of the inline string being read.
    inline: Option<RunReader>,
    /// Shared formulas by their `si`, and the one whose text is being read.
    shared: HashMap<String, SharedFormula>,
    in_shared: Option<String>,
    /// Whether the current row has a format of its own.
    row_formatted: bool,
    /// The sheet's default row height (`sheetFormatPr` comes before the
    /// rows), in points.
    default_height: f64,
    /// Whether the current row has a cell.
    row_cells: bool,
    /// Whether each column has a format of its own (`<cols>` comes
    /// before the cells).
    formatted_columns: Vec<bool>,
    /// The columns the `<col>` runs kept so far set, each of which the
    /// writer sets on its own: at most [`MAX_COLUMNS_SET`].
    columns_set: usize,
}

/// The most columns a sheet's `<col>` runs may set, counted run by run: a
/// sheet has 16,384 columns, and a run sets each at most once. 14 million
/// runs of every column (2.6 MB zipped) kept the writer busy for minutes.
const MAX_COLUMNS_SET: usize = 4 * MAX_COLUMNS;

/// What the current cell's text is.
#[derive(Clone, PartialEq)]
enum Value {
    Other,
    /// A shared string, before its `<v>` (the index) is read.
    Shared,
    /// Inside the `<v>` of a shared string.
    SharedIndex,
    /// A `t="str"` cell: a formula's text result, or a text constant
    /// when no `<f>` comes before its `<v>`.
    Str,
    /// Inside the `<v>` of a text constant of a `t="str"` cell: its text,
    /// and whether the `<v>` has `xml:space="preserve"`.
    StrText(String, bool),
}

impl SheetScan<'_> {
    fn text(&mut self, text: Text<'_>) {
        if let Some(inline) = &mut self.inline {
            inline.text(&text);
            return;
        }
        if let Some(first) = self
            .in_shared
            .as_ref()
            .and_then(|si| self.shared.get_mut(si))
        {
            first.text.push_str(&text.decode());
            return;
        }
        if let Value::StrText(value, _) = &mut self.value {
            value.push_str(&text.decode());
            return;
        }
        if self.value == Value::SharedIndex {
            let text = text.decode();
            if let Ok(index) = text.trim().parse() {
                self.sheet.spaced_string_index |= text.trim().len() != text.len();
                let column = self.next_column.saturating_sub(1);
                self.sheet.shared_strings.push((self.row, column, index));
            }
            self.value = Value::Other;
            return;
        }
        let print = &mut self.sheet.layout.print;
        let target = match self.heading {
            Some(Heading::Header) => &mut print.header,
            Some(Heading::Footer) => &mut print.footer,
            None => return,
        };
        target.get_or_insert_default().push_str(&text.decode());
    }

    fn end(&mut self, name: &str) {
        match name {
            "row" => self.row_ended(),
            "f" => self.in_shared = None,
            "v" => {
                let Value::StrText(xml, preserve) =
                    std::mem::replace(&mut self.value, Value::Other)
                else {
                    return;
                };
                let column = self.next_column.saturating_sub(1);
                if let Some(spelling) = value_spelling(xml, preserve) {
                    self.sheet
                        .layout
                        .spelled
                        .insert((self.row, column), spelling);
                }
            }
            "is" => {
                let Some(inline) = self.inline.take() else {
                    return;
                };
                let column = self.next_column.saturating_sub(1);
                if let Some(spelling) = inline.spelling() {
                    self.sheet
                        .layout
                        .spelled
                        .insert((self.row, column), spelling);
                }
                if let Some(runs) = inline.finish() {
                    self.sheet.layout.rich_text.insert((self.row, column), runs);
                }
            }
            _ => {
                if let Some(inline) = &mut self.inline {
                    inline.end(name);
                }
            }
        }
    }

    fn element(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        self.heading = None;
        if let Some(inline) = &mut self.inline {
            return inline.start(element);
        }
        match element.local_name().as_ref() {
            "row" => self.row(element)?,
            "c" => self.cell(element)?,
            "col" => self.column(element)?,
            "mergeCell" => {
                if let Some(range) = attr(element, "ref").and_then(|r| range_ref(&r)) {
                    self.budget.spend(1)?;
                    self.sheet.layout.merges.push(range);
                }
            }
            "hyperlink" => self.hyperlink(element)?,
            "autoFilter" => {
                self.sheet.layout.autofilter = attr(element, "ref").and_then(|r| range_ref(&r))
            }
            "tablePart" => self.sheet.table_ids.extend(attr(element, "id")),
            "sheetFormatPr" => {
                self.default_height =
                    number(element, "defaultRowHeight").unwrap_or(DEFAULT_ROW_HEIGHT);
            }
            "pane" => self.pane(element),
            "tabColor" => self.sheet.layout.tab_color = color(element),
            "pageSetUpPr" if flag(element, "fitToPage") => {
                self.sheet.layout.print.fit_to_pages.get_or_insert((1, 1));
            }
            "pageSetup" => self.page_setup(element),
            "pageMargins" => {
                let inches = ["left", "right", "top", "bottom", "header", "footer"]
                    .map(|side| number(element, side));
                if let [Some(l), Some(r), Some(t), Some(b), Some(h), Some(f)] = inches {
                    self.sheet.layout.print.margins = Some([l, r, t, b, h, f]);
                }
            }
            "printOptions" => {
                self.sheet.layout.print.center_horizontally = flag(element, "horizontalCentered");
                self.sheet.layout.print.center_vertically = flag(element, "verticalCentered");
                self.sheet.layout.print.gridlines = flag(element, "gridLines");
            }
            "v" if self.value == Value::Shared => self.value = Value::SharedIndex,
            "v" if self.value == Value::Str => {
                let preserve = attr(element, "space").is_some_and(|v| v == "preserve");
                self.value = Value::StrText(String::new(), preserve);
            }
            "f" => self.formula(element)?,
            "is" => self.inline = Some(RunReader::default()),
            "oddHeader" => self.heading = Some(Heading::Header),
            "oddFooter" => self.heading = Some(Heading::Footer),
            _ => {}
        }
        Ok(())
    }

    /// An `<f>`: the cell holds a formula (its `t="str"` value is the
    /// formula's result); an array formula's range, a data table, a
    /// shared formula.
    fn formula(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        if self.value == Value::Str {
            self.value = Value::Other;
        }
        match attr(element, "t").as_deref() {
            Some("array") => {
                if let Some(range) = attr(element, "ref").and_then(|r| range_ref(&r)) {
                    self.sheet.layout.array_formulas.push(ArrayFormula {
                        range,
                        dynamic: self.cell_metadata,
                    });
                }
            }
            Some("dataTable") => self.data_table(element)?,
            Some("shared") => self.shared_formula(element)?,
            _ => {}
        }
        Ok(())
    }

    /// An `<f t="shared">`: the first cell of a shared formula (with its
    /// range), or another cell of it, whose formula is the first's moved
    /// by their distance when the first is not the range's corner.
    fn shared_formula(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        let Some(si) = attr(element, "si") else {
            return Ok(());
        };
        let column = self.next_column.saturating_sub(1);
        if let Some(range) = attr(element, "ref").and_then(|r| range_ref(&r)) {
            let first = SharedFormula {
                row: self.row,
                column,
                at_corner: (range.first_row, range.first_column) == (self.row, column),
                text: String::new(),
            };
            self.shared.insert(si.clone(), first);
            self.in_shared = Some(si);
            return Ok(());
        }
        if let Some(first) = self.shared.get(&si).filter(|first| !first.at_corner) {
            let rows = i64::from(self.row) - i64::from(first.row);
            let columns = i64::from(column) - i64::from(first.column);
            let formula = shifted(&first.text, rows, columns);
            self.budget.spend(1 + formula.len() / TEXT_BYTES_PER_CELL)?;
            self.sheet.shared_formulas.push((self.row, column, formula));
        }
        Ok(())
    }

    /// An `<f t="dataTable">`, kept with the current cell: the value
    /// read from the cell is added with the values (`super::read`).
    fn data_table(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        let Some(table) = data_table(element) else {
            return Ok(());
        };
        self.budget.spend(1)?;
        let column = self.next_column.saturating_sub(1);
        self.sheet
            .layout
            .formulas
            .insert((self.row, column), FileFormula::DataTable(table));
        Ok(())
    }

    /// A `<row>`: where the cells that follow are, and its settings.
    fn row(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        self.row = match attr(element, "r").and_then(|r| r.parse::<u32>().ok()) {
            Some(r) if (1..=MAX_ROWS as u32).contains(&r) => r - 1,
            _ => self.rows_seen,
        };
        self.rows_seen = self.row + 1;
        self.next_column = 0;
        let custom = flag(element, "customHeight");
        // A height without `customHeight` is one the app fitted to the
        // row's content; kept where it is not the sheet's default (Excel
        // writes it only then, LibreOffice on every row).
        let height = number(element, "ht").filter(|&h| custom || h != self.default_height);
        let props = RowProps {
            height,
            height_fitted: height.is_some() && !custom,
            hidden: flag(element, "hidden"),
            format: flag(element, "customFormat").then(|| index(element, "s").unwrap_or(0)),
            outline_level: outline_level(element),
            collapsed: flag(element, "collapsed"),
        };
        self.row_formatted = props.format.is_some_and(|id| id != 0);
        self.row_cells = false;
        if props != RowProps::default() {
            self.budget.spend(1)?;
            self.sheet.layout.rows.insert(self.row, props);
        }
        Ok(())
    }

    /// The end of a `<row>`: a height fitted to a row with no cell and no
    /// format of its own is the app's fit of nothing, no setting to keep
    /// (a row with one at or below a sheet's last cells would cost its
    /// writes the save in part).
    fn row_ended(&mut self) {
        if self.row_cells {
            return;
        }
        let rows = &mut self.sheet.layout.rows;
        let Some(props) = rows.get_mut(&self.row) else {
            return;
        };
        if props.height_fitted && props.format.is_none() {
            props.height = None;
            props.height_fitted = false;
            if *props == RowProps::default() {
                rows.remove(&self.row);
            }
        }
    }

    /// A cell `<c>`: its format.
    fn cell(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        self.row_cells = true;
        // The one element there is one of per cell: read its attributes in
        // a single pass.
        let [reference, style, kind, metadata] = attrs(element, ["r", "s", "t", "cm"]);
        self.cell_metadata = metadata.is_some();
        self.value = match kind.as_deref() {
            Some("s") => Value::Shared,
            Some("str") => Value::Str,
            _ => Value::Other,
        };
        let column = match reference.and_then(|r| cell_ref(&r)) {
            Some((r, c)) => {
                self.row = r;
                c
            }
            None => self.next_column,
        };
        self.next_column = column.saturating_add(1);
        let format = style.and_then(|s| s.parse().ok()).unwrap_or(0);
        if usize::from(column) >= MAX_COLUMNS {
            return Ok(());
        }
        if format == 0 {
            return self.unformatted_cell(column);
        }
        let formats = &mut self.sheet.layout.formats;
        let row = self.row as usize;
        if formats.len() <= row {
            self.budget.spend(row + 1 - formats.len())?;
            formats.resize_with(row + 1, Vec::new);
        }
        let cells = &mut formats[row];
        let column = usize::from(column);
        if cells.len() <= column {
            self.budget.spend(column + 1 - cells.len())?;
            cells.resize(column + 1, 0);
        }
        cells[column] = format;
        Ok(())
    }

    /// A cell of the default format: kept under a formatted row or column,
    /// where no cell would show their format.
    fn unformatted_cell(&mut self, column: u16) -> Result<(), ReadError> {
        let covered = self.row_formatted
            || self
                .formatted_columns
                .get(usize::from(column))
                .copied()
                .unwrap_or(false);
        if covered {
            self.budget.spend(1)?;
            self.sheet
                .layout
                .unformatted_cells
                .insert((self.row, column));
        }
        Ok(())
    }

    /// A `<col>`: the settings of a run of columns.
    fn column(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        let (Some(first), Some(last)) = (index(element, "min"), index(element, "max")) else {
            return Ok(());
        };
        let last = last.min(MAX_COLUMNS as u32);
        if first == 0 || first > last {
            return Ok(());
        }
        let props = ColumnProps {
            first: (first - 1) as u16,
            last: (last - 1) as u16,
            width: flag(element, "customWidth")
                .then(|| number(element, "width"))
                .flatten(),
            hidden: flag(element, "hidden"),
            format: index(element, "style").unwrap_or(0),
            outline_level: outline_level(element),
        };
        if props.format != 0 {
            let (first, last) = (usize::from(props.first), usize::from(props.last));
            if self.formatted_columns.len() <= last {
                self.formatted_columns.resize(last + 1, false);
            }
            self.formatted_columns[first..=last].fill(true);
        }
        if props.width.is_some() || props.hidden || props.format != 0 || props.outline_level > 0 {
            self.columns_set += (last - first + 1) as usize;
            if self.columns_set > MAX_COLUMNS_SET {
                return Err(ReadError(format!(
                    "the workbook is too large: a sheet sets the width or format of more \
                     than {MAX_COLUMNS_SET} columns, in runs that overlap"
                )));
            }
            self.sheet.layout.columns.push(props);
        }
        Ok(())
    }

    fn hyperlink(&mut self, element: &BytesStart<'_>) -> Result<(), ReadError> {
        let Some(at) = attr(element, "ref").and_then(|r| range_ref(&r)) else {
            return Ok(());
        };
        // A link, kept with its texts, takes as much as a few cells.
        self.budget.spend(4)?;
        let location = attr(element, "location").unwrap_or_default();
        // Kept as the file wrote them: those the model has no field for,
        // without a prefix (a prefixed one, such as a revision id, needs a
        // namespace the written sheet does not declare).
        let attributes = all_attributes(element)
            .into_iter()
            .filter(|(key, _)| !matches!(key.as_str(), "ref" | "tooltip") && !key.contains(':'))
            .collect();
        let link = Link {
            range: at,
            target: LinkTarget::Location(location),
            tooltip: attr(element, "tooltip"),
            attributes,
        };
        self.sheet.links.push((link, attr(element, "id")));
        Ok(())
    }

    /// A `<pane>`: frozen rows and columns.
    fn pane(&mut self, element: &BytesStart<'_>) {
        if !attr(element, "state").is_some_and(|s| s.starts_with("frozen")) {
            return;
        }
        let rows = number(element, "ySplit").unwrap_or(0.0);
        let columns = number(element, "xSplit").unwrap_or(0.0);
        if (0.0..MAX_ROWS as f64).contains(&rows) && (0.0..MAX_COLUMNS as f64).contains(&columns) {
            self.sheet.layout.freeze = Some((rows as u32, columns as u16));
        }
    }

    fn page_setup(&mut self, element: &BytesStart<'_>) {
        let print = &mut self.sheet.layout.print;
        print.landscape = attr(element, "orientation").is_some_and(|o| o == "landscape");
        print.paper_size = index(element, "paperSize").and_then(|p| u8::try_from(p).ok());
        print.scale = index(element, "scale")
            .and_then(|s| u16::try_from(s).ok())
            .filter(|s| *s != 100);
        if let Some(fit) = &mut print.fit_to_pages {
            let pages = |name| index(element, name).and_then(|p| u16::try_from(p).ok());
            *fit = (
                pages("fitToWidth").unwrap_or(1),
                pages("fitToHeight").unwrap_or(1),
            );
        }
    }
}

fn number(element: &BytesStart<'_>, name: &str) -> Option<f64> {
    attr(element, name)
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite())
}

fn index(element: &BytesStart<'_>, name: &str) -> Option<u32> {
    attr(element, name).and_then(|v| v.parse::<u32>().ok())
}

/// An `outlineLevel` attribute: 0 to 7.
fn outline_level(element: &BytesStart<'_>) -> u8 {
    index(element, "outlineLevel").map_or(0, |level| level.min(7) as u8)
}

/// A colour element's colour, read as styles.xml's are (with the default
/// palette for `indexed` colours).
fn color(element: &BytesStart<'_>) -> Option<Color> {
    read_color(element, &Palette::default()).ok().flatten()
}

/// `B2` (or `$B$2`) → 0-based (row, column).
fn cell_ref(text: &str) -> Option<(u32, u16)> {
    let text = if text.contains('$') {
        Cow::Owned(text.replace('$', ""))
    } else {
        Cow::Borrowed(text)
    };
    let split = text.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = text.split_at(split);
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    let mut column = 0u32;
    for c in letters.chars() {
        if !c.is_ascii_alphabetic() {
            return None;
        }
        column = column * 26 + (c.to_ascii_uppercase() as u32 - 'A' as u32 + 1);
    }
    let row: u32 = digits.parse().ok()?;
    if row == 0 || row > MAX_ROWS as u32 || column == 0 || column > MAX_COLUMNS as u32 {
        return None;
    }
    Some((row - 1, (column - 1) as u16))
}

/// `A1:D5` or `A1` → a range.
pub(super) fn range_ref(text: &str) -> Option<Range> {
    let (first, last) = text.split_once(':').unwrap_or((text, text));
    let (first_row, first_column) = cell_ref(first)?;
    let (last_row, last_column) = cell_ref(last)?;
    (first_row <= last_row && first_column <= last_column).then_some(Range {
        first_row,
        first_column,
        last_row,
        last_column,
    })
}

/// A data table's `<f t="dataTable">`: its range, its input cells and its
/// other attributes; `None` without a range, or with an input that is no
/// cell reference.
fn data_table(element: &BytesStart<'_>) -> Option<DataTable> {
    let mut range = None;
    let mut inputs = [None, None];
    let mut attributes = String::new();
    for (name, value) in all_attributes(element) {
        match name.as_str() {
            "t" => {}
            "ref" => range = range_ref(&value),
            "r1" => inputs[0] = Some(cell_ref(&value)?),
            "r2" => inputs[1] = Some(cell_ref(&value)?),
            _ => attributes.push_str(&format!(" {name}=\"{}\"", escape(&value))),
        }
    }
    Some(DataTable {
        range: range?,
        inputs,
        attributes,
        value: crate::model::Cell::Empty,
    })
}

/// Fills in the document properties a core or app properties part holds.
fn read_properties(xml: &[u8], properties: &mut DocumentProperties) -> Result<(), ReadError> {
    let mut field: Option<&'static str> = None;
    let mut values: Vec<(&'static str, String)> = Vec::new();
    for_each_node(xml, |node| {
        match node {
            Node::Element(element) => {
                let name = element.local_name();
                field = [
                    "title",
                    "subject",
                    "creator",
                    "keywords",
                    "description",
                    "category",
                    "contentStatus",
                    "Company",
                    "Manager",
                ]
                .into_iter()
                .find(|f| *f == name.as_ref());
            }
            Node::Text(text) => {
                if let Some(field) = field {
                    match values.last_mut() {
                        Some((last, value)) if *last == field => value.push_str(&text.decode()),
                        _ => values.push((field, text.decode().into_owned())),
                    }
                }
            }
        }
        Ok(())
    })?;
    for (field, value) in values {
        let value = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        let slot = match field {
            "title" => &mut properties.title,
            "subject" => &mut properties.subject,
            "creator" => &mut properties.author,
            "keywords" => &mut properties.keywords,
            "description" => &mut properties.comment,
            "category" => &mut properties.category,
            "contentStatus" => &mut properties.status,
            "Company" => &mut properties.company,
            _ => &mut properties.manager,
        };
        *slot = value;
    }
    Ok(())
}

/// The most of the workbook part or a relationships part that
/// [`sheet_names`] (and [`unpack`], to find the main parts) reads.
const MAX_WORKBOOK_XML: u64 = 16 << 20;

/// The names of a package's sheets (its tabs, chart sheets too), from
/// the workbook part alone: cheap next to a parse of the whole workbook.
pub fn sheet_names<R: Read + Seek>(reader: R) -> Result<Vec<String>, ReadError> {
    let mut archive = open_archive(reader)?;
    let names = part_names(&archive)?;
    let workbook =
        MainParts::find(&names, |wanted| small_part(&mut archive, &names, wanted)).workbook;
    let xml = small_part(&mut archive, &names, &workbook)
        .ok_or_else(|| ReadError(format!("the package has no workbook part ({workbook})")))?;
    let book = parse_workbook_xml(&xml)?;
    Ok(book.sheets.into_iter().map(|(name, _)| name).collect())
}

/// The archive's entries by index, as part names.
fn part_names<R: Read + Seek>(archive: &zip::ZipArchive<R>) -> Result<Vec<String>, ReadError> {
    archive
        .file_names()
        .map(|name| name.map(|name| part_name(&name)).map_err(unreadable))
        .collect()
}

/// The part `wanted` (of the archive's entries, named as `names` gives
/// them), read up to [`MAX_WORKBOOK_XML`]; `None` when it is missing or
/// cannot be read.
fn small_part<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    names: &[String],
    wanted: &str,
) -> Option<Vec<u8>> {
    let index = names.iter().position(|name| name == wanted)?;
    let entry = archive.by_index(index).ok()?;
    let mut bytes = Vec::new();
    entry.take(MAX_WORKBOOK_XML).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// What the workbook part says.
struct WorkbookXml {
    /// Every sheet (charts sheets too) in order: name and relationship id.
    sheets: Vec<(String, String)>,
    names: Vec<DefinedName>,
    active_tab: usize,
    /// What the writer does not produce: print areas and titles and other
    /// built-in names, and the children of `<workbook>` it does not write.
    capture: WorkbookCapture,
}

fn parse_workbook_xml(xml: &[u8]) -> Result<WorkbookXml, ReadError> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut book = WorkbookXml {
        sheets: Vec::new(),
        names: Vec::new(),
        active_tab: 0,
        capture: WorkbookCapture {
            root_attributes: Vec::new(),
            elements: Vec::new(),
            sheets: Vec::new(),
        },
    };
    // The defined name whose text is being read, and its XML.
    let mut name: Option<(DefinedName, Capture)> = None;
    let mut copier = ChildCopier::default();
    let mut depth = 0usize;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(xml_error)?;
        if let Some((_, xml)) = &mut name
            && let Some(element) = xml.push(&event)?
        {
            let (defined, _) = name.take().expect("a name is being read");
            keep_name(defined, element, &mut book);
        }
        let wanted = |name: &str, _| carries_workbook_element(name);
        if let Some(element) = copier.push(&event, depth, wanted)? {
            book.capture.elements.push(element);
        }
        match &event {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => {
                if depth == 0 {
                    book.capture.root_attributes = root_attributes(e);
                }
                match e.local_name().as_ref() {
                    "sheet" => {
                        if let (Some(sheet), Some(id)) = (attr(e, "name"), attr(e, "id")) {
                            book.sheets.push((sheet, id));
                        }
                        let mut entry = Capture::default();
                        if let Some(element) = entry.push(&event)? {
                            book.capture.sheets.push(element);
                        }
                    }
                    "workbookView" => {
                        book.active_tab = index(e, "activeTab").unwrap_or(0) as usize;
                    }
                    "definedName" => {
                        let defined = attr(e, "name").map(|n| DefinedName {
                            name: n,
                            scope: index(e, "localSheetId").map(|i| i as usize),
                            refers_to: String::new(),
                            hidden: flag(e, "hidden"),
                        });
                        let mut xml = Capture::default();
                        xml.push(&event)?;
                        name = defined.map(|d| (d, xml));
                    }
                    _ => {}
                }
                if matches!(event, Event::Start(_)) {
                    depth = deeper(depth)?;
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(text) => {
                if let Some((name, _)) = &mut name {
                    name.refers_to.push_str(&text.xml10_content());
                }
            }
            Event::GeneralRef(reference) => {
                if let Some((name, _)) = &mut name {
                    name.refers_to
                        .push_str(&Text::Reference(reference).decode());
                }
            }
            _ => {}
        }
        buf.clear();
    }
    Ok(book)
}

/// Files a defined name. Every name is carried as the file wrote it, with
/// what the writer has no setting for (`hidden`, `comment`, `function`);
/// the autofilter's own name (`_xlnm._FilterDatabase`) only for a sheet the
/// writer writes no autofilter for (see `merge`). The model keeps the names
/// a user gave, which tell the deletes that would break them.
fn keep_name(name: DefinedName, xml: Element, book: &mut WorkbookXml) {
    if !name.name.starts_with("_xlnm.") {
        book.names.push(name);
    }
    book.capture.elements.push(xml);
}

/// A table part (`xl/tables/tableN.xml`).
fn parse_table(xml: &[u8]) -> Result<Table, ReadError> {
    let mut table: Option<Table> = None;
    // Whether the text read is a column's calculated formula: from its
    // element's start to the next element's.
    let mut in_formula = false;
    for_each_node(xml, |node| {
        let element = match node {
            Node::Element(element) => element,
            Node::Text(text) => {
                let column = table.as_mut().and_then(|t| t.columns.last_mut());
                if let (true, Some(column)) = (in_formula, column) {
                    column
                        .calculated
                        .get_or_insert_default()
                        .push_str(&text.decode());
                }
                return Ok(());
            }
        };
        let name = element.local_name();
        // An array formula is not filled down: its column is left alone.
        in_formula = name.as_ref() == "calculatedColumnFormula" && !flag(element, "array");
        match (name.as_ref(), &mut table) {
            ("table", None) => {
                let range = attr(element, "ref").and_then(|r| range_ref(&r));
                let name = attr(element, "displayName").or_else(|| attr(element, "name"));
                if let (Some(range), Some(name)) = (range, name) {
                    table = Some(Table {
                        header_row: index(element, "headerRowCount") != Some(0),
                        totals_row: index(element, "totalsRowCount").unwrap_or(0) > 0,
                        ..Table::new(name, range)
                    });
                }
            }
            ("autoFilter", Some(table)) => table.autofilter = true,
            ("tableColumn", Some(table)) => table.columns.push(TableColumn {
                // Excel writes a line break in a column's name `_x000a_`.
                name: attr(element, "name")
                    .map(|name| unescaped_x(&name).into_owned())
                    .unwrap_or_default(),
                total_function: attr(element, "totalsRowFunction").filter(|f| f != "none"),
                total_label: attr(element, "totalsRowLabel"),
                calculated: None,
            }),
            ("tableStyleInfo", Some(table)) => {
                table.style = attr(element, "name");
                table.banded_rows = flag(element, "showRowStripes");
                table.banded_columns = flag(element, "showColumnStripes");
                table.first_column = flag(element, "showFirstColumn");
                table.last_column = flag(element, "showLastColumn");
            }
            _ => {}
        }
        Ok(())
    })?;
    let mut table = table.ok_or_else(|| ReadError("a table part has no table".into()))?;
    for column in &mut table.columns {
        column.calculated = column.calculated.take().map(|f| f.trim().to_owned());
        column.calculated.take_if(|f| f.is_empty());
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tables_columns_are_read_with_their_names_unescaped_and_calculated_formulas() {
        let xml = br#"<table xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" id="1" name="T" displayName="T" ref="A1:D3">
  <tableColumns count="4">
    <tableColumn id="1" name="Unit_x000a_Price"/>
    <tableColumn id="2" name="Qty"/>
    <tableColumn id="3" name="Amount">
      <calculatedColumnFormula>T[[#This Row],[Qty]]&amp;"x"</calculatedColumnFormula>
    </tableColumn>
    <tableColumn id="4" name="Spill"><calculatedColumnFormula array="1">T[Qty]*2</calculatedColumnFormula></tableColumn>
  </tableColumns>
</table>"#;
        let table = parse_table(xml).unwrap();
        let names: Vec<_> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Unit\nPrice", "Qty", "Amount", "Spill"]);
        let formulas: Vec<_> = table
            .columns
            .iter()
            .map(|c| c.calculated.as_deref())
            .collect();
        assert_eq!(
            formulas,
            [None, None, Some(r#"T[[#This Row],[Qty]]&"x""#), None]
        );
    }

    #[test]
    fn shared_strings_are_counted_with_prefixes_and_across_writes() {
        use std::io::Write;
        let xml = br#"<sst count="9"><si><t>a</t></si><x:si><x:t>b</x:t></x:si><si
            ><r><t>c</t></r></si><sic/><si/><x:sic>d</x:sic></sst>"#;
        let mut whole = ElementCounter::new(Some(b"si"), 100);
        whole.write_all(xml).unwrap();
        // `<sic/>` is not a string, nor is a closing tag; the empty `<si/>` is.
        assert_eq!(whole.count, 4);
        let mut bytewise = ElementCounter::new(Some(b"si"), 100);
        for byte in xml {
            bytewise.write_all(std::slice::from_ref(byte)).unwrap();
        }
        assert_eq!(bytewise.count, 4);
        let mut small = ElementCounter::new(Some(b"si"), 3);
        assert!(small.write_all(xml).is_err() && small.over());
    }

    /// A package of `parts` (name, XML), zipped.
    fn zipped(parts: &[(&str, &str)]) -> Vec<u8> {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, xml) in parts {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(xml.as_bytes()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    const RELS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
    const DOC: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    /// A minimal package, as calamine's `minimal_package.xlsx`: the
    /// workbook, its styles and its sheet at the package's root, with
    /// `separator` between folders of the entry names.
    fn minimal_package(separator: &str) -> Vec<u8> {
        let package_rels = format!(
            r#"<Relationships xmlns="{RELS}"><Relationship Id="rId1" Type="{DOC}/officeDocument" Target="book.xml"/></Relationships>"#
        );
        let book_rels = format!(
            r#"<Relationships xmlns="{RELS}"><Relationship Id="rId1" Type="{DOC}/worksheet" Target="data/sheet.xml"/><Relationship Id="rId2" Type="{DOC}/styles" Target="/look.xml"/></Relationships>"#
        );
        let book = format!(
            r#"<workbook xmlns:r="{DOC}"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>"#
        );
        let styles = r#"<styleSheet><fonts count="2"><font><sz val="11"/></font><font><b/><sz val="11"/></font></fonts>
            <cellXfs count="2"><xf fontId="0"/><xf fontId="1"/></cellXfs></styleSheet>"#;
        let sheet = r#"<worksheet><sheetData><row r="1"><c r="A1" s="1"><v>1</v></c></row></sheetData></worksheet>"#;
        let rels_of_book = ["_rels", "book.xml.rels"].join(separator);
        let sheet_name = ["data", "sheet.xml"].join(separator);
        let package_rels_name = ["_rels", ".rels"].join(separator);
        zipped(&[
            (&package_rels_name, &package_rels),
            ("book.xml", &book),
            (&rels_of_book, &book_rels),
            ("look.xml", styles),
            (&sheet_name, sheet),
        ])
    }

    #[test]
    fn main_parts_are_found_through_relationships() {
        for separator in ["/", "\\"] {
            let package = read_package(std::io::Cursor::new(minimal_package(separator)), 100)
                .unwrap_or_else(|e| panic!("{separator}: {e}"));
            assert_eq!(package.formats.len(), 2, "{separator}");
            assert!(package.formats[1].font.bold, "{separator}");
            assert_eq!(
                package.layouts["Data"].formats,
                vec![vec![1]],
                "{separator}"
            );
        }
        let names = sheet_names(std::io::Cursor::new(minimal_package("\\"))).unwrap();
        assert_eq!(names, ["Data"]);
    }

    #[test]
    fn cells_of_the_default_format_are_kept_under_formatted_rows_and_columns() {
        // B is a formatted column, row 3 a formatted row: A2 and C2 are
        // under neither, A3 holds a value, C3 has a format of its own.
        let xml = br#"<worksheet><cols><col min="2" max="2" style="1"/></cols><sheetData>
            <row r="2"><c r="A2"/><c r="B2"/><c r="C2" s="0"></c></row>
            <row r="3" s="1" customFormat="1"><c r="A3"><v>1</v></c><c r="B3" s="0"></c><c r="C3" s="1"/><c r="D3"/></row>
            </sheetData></worksheet>"#;
        let mut budget = Budget {
            cells: 100,
            ..Budget::default()
        };
        let scan = scan_sheet(&xml[..], &mut budget).expect("a sheet");
        assert_eq!(
            scan.layout.unformatted_cells,
            [(1, 1), (2, 0), (2, 1), (2, 3)].into()
        );
    }

    #[test]
    fn inline_strings_keep_text_beside_runs_and_nothing_after_an_empty_t() {
        let xml = br#"<worksheet><sheetData><row r="1">
            <c r="A1" t="inlineStr"><is><t>Before</t><r><rPr><b/></rPr><t>Hierarchy</t></r></is></c>
            <c r="B1" t="inlineStr"><is><t/>
              </is></c></row></sheetData></worksheet>"#;
        let mut budget = Budget {
            cells: 100,
            ..Budget::default()
        };
        let scan = scan_sheet(&xml[..], &mut budget).expect("a sheet");
        let runs: Vec<&str> = scan.layout.rich_text[&(0, 0)]
            .runs
            .iter()
            .map(|run| run.text.as_str())
            .collect();
        assert_eq!(runs, ["Before", "Hierarchy"]);
        assert!(scan.layout.spelled.is_empty(), "B1 is empty text");
    }

    #[test]
    fn a_sheet_is_read_up_to_its_end_tag() {
        /// What a zip entry with a wrong checksum gives after its data.
        struct BadChecksum;
        impl Read for BadChecksum {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("Invalid checksum"))
            }
        }
        let xml =
            br#"<worksheet><sheetData><row r="2"><c r="B2" s="1"/></row></sheetData></worksheet>"#;
        let mut budget = Budget {
            cells: 100,
            ..Budget::default()
        };
        let reader = BufReader::new(xml.chain(BadChecksum));
        let scan = scan_sheet(reader, &mut budget).expect("read up to </worksheet>");
        assert_eq!(scan.layout.formats, vec![vec![], vec![0, 1]]);
    }

    #[test]
    fn a_damaged_part_is_unkept_not_unreadable() {
        let mut bytes = minimal_package("/");
        // The styles part's checksum, in its local header and the directory.
        for (signature, crc_at, name_at) in [(b"PK\x03\x04", 14, 30), (b"PK\x01\x02", 16, 46)] {
            let at = (0..bytes.len() - name_at)
                .find(|&i| {
                    bytes[i..].starts_with(signature)
                        && bytes[i + name_at..].starts_with(b"look.xml")
                })
                .expect("entry header");
            bytes[at + crc_at] ^= 0xFF;
        }
        let package = read_package(std::io::Cursor::new(&bytes), 100).expect("readable");
        assert_eq!(package.unkept.len(), 1, "{:?}", package.unkept);
        assert!(
            package.unkept[0].contains("look.xml"),
            "{:?}",
            package.unkept
        );
        check_size(std::io::Cursor::new(&bytes), 10).expect("within bounds");
    }

    #[test]
    fn cell_and_range_references() {
        assert_eq!(cell_ref("A1"), Some((0, 0)));
        assert_eq!(cell_ref("$AB$12"), Some((11, 27)));
        assert_eq!(cell_ref("XFD1048576"), Some((1_048_575, 16_383)));
        assert_eq!(cell_ref("XFE1"), None);
        assert_eq!(cell_ref("A0"), None);
        assert_eq!(cell_ref("1A"), None);
        assert_eq!(
            range_ref("B2:C3"),
            Some(Range {
                first_row: 1,
                first_column: 1,
                last_row: 2,
                last_column: 2
            })
        );
        assert_eq!(range_ref("C3:B2"), None);
    }

    #[test]
    fn scans_a_sheet_layout() {
        let xml = br#"<worksheet xmlns:r="r"><sheetPr><tabColor rgb="FFFF0000"/></sheetPr>
            <sheetViews><sheetView><pane xSplit="1" ySplit="2" topLeftCell="B3" state="frozen"/></sheetView></sheetViews>
            <cols><col min="1" max="1" width="30" customWidth="1"/><col min="3" max="3" width="9" hidden="1"/><col min="4" max="1024" width="9"/></cols>
            <sheetData><row r="1"><c r="A1" s="2" t="s"><v>0</v></c><c s="3"/></row>
            <row r="3" ht="40" customHeight="1"/><row r="4" hidden="true"/></sheetData>
            <mergeCells><mergeCell ref="F2:G3"/></mergeCells>
            <conditionalFormatting sqref="B2"><cfRule type="top10"/></conditionalFormatting>
            <hyperlinks><hyperlink ref="F2" r:id="rId1" tooltip="Open &amp; see"/><hyperlink ref="F3" location="Report!A1"/></hyperlinks>
            </worksheet>"#;
        let mut budget = Budget {
            cells: 100,
            ..Budget::default()
        };
        let scan = scan_sheet(&xml[..], &mut budget).unwrap();
        let layout = &scan.layout;
        assert_eq!(layout.tab_color, Some(Color::Rgb(0xFF0000)));
        assert_eq!(layout.freeze, Some((2, 1)));
        assert_eq!(layout.formats, vec![vec![2, 3]]);
        assert_eq!(layout.columns.len(), 2);
        assert_eq!(layout.columns[0].width, Some(30.0));
        assert!(layout.columns[1].hidden);
        assert_eq!(layout.rows[&2].height, Some(40.0));
        assert!(layout.rows[&3].hidden);
        assert_eq!(layout.merges, vec![range_ref("F2:G3").unwrap()]);
        assert_eq!(scan.links.len(), 2);
        assert_eq!(scan.links[0].0.tooltip.as_deref(), Some("Open & see"));
        assert_eq!(scan.links[0].1.as_deref(), Some("rId1"));
        assert_eq!(
            scan.links[1].0.target,
            LinkTarget::Location("Report!A1".into())
        );
        let carried: Vec<&str> = scan.carried.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            carried,
            ["sheetPr", "sheetViews", "conditionalFormatting"],
            "what the writer does not produce is carried"
        );
        assert_eq!(
            scan.carried[2].xml,
            r#"<conditionalFormatting sqref="B2"><cfRule type="top10"/></conditionalFormatting>"#
        );
        assert_eq!(
            scan.root_attributes,
            [("xmlns:r".to_owned(), "r".to_owned())]
        );
    }

    #[test]
    fn formatted_cells_count_against_the_budget() {
        let xml = br#"<worksheet><sheetData><row r="1"><c r="XFD1" s="1"/></row></sheetData></worksheet>"#;
        let mut budget = Budget {
            cells: 1000,
            ..Budget::default()
        };
        assert!(matches!(
            scan_sheet(&xml[..], &mut budget),
            Err(ReadError(_))
        ));
    }

    /// What a sheet holds besides its cells counts against the budget too:
    /// each merge and each hyperlink (four cells); the columns `<col>`
    /// runs set and the XML carried are bounded. A few megabytes zipped of
    /// any of them asked for gigabytes or minutes.
    #[test]
    fn merges_links_columns_and_carried_elements_count_against_the_budget() {
        let sheet = |inside: &str, after: &str| {
            format!("<worksheet>{inside}<sheetData/>{after}</worksheet>")
        };
        let many = |element: &str| element.repeat(101);
        let cases = [
            sheet(
                "",
                &format!(
                    "<mergeCells>{}</mergeCells>",
                    many(r#"<mergeCell ref="A1:B2"/>"#)
                ),
            ),
            sheet(
                "",
                &format!(
                    "<hyperlinks>{}</hyperlinks>",
                    many(r#"<hyperlink ref="A1"/>"#)
                ),
            ),
        ];
        for xml in cases {
            let mut budget = Budget {
                cells: 100,
                ..Budget::default()
            };
            let scanned = scan_sheet(xml.as_bytes(), &mut budget);
            assert!(scanned.is_err(), "{xml:.80}");
            let mut budget = Budget {
                cells: 1000,
                ..Budget::default()
            };
            assert!(scan_sheet(xml.as_bytes(), &mut budget).is_ok(), "{xml:.80}");
        }
        let columns = |runs: usize| {
            let run = r#"<col min="1" max="16384" width="5" customWidth="1"/>"#;
            let xml = sheet(&format!("<cols>{}</cols>", run.repeat(runs)), "");
            let mut budget = Budget {
                cells: 1000,
                ..Budget::default()
            };
            scan_sheet(xml.as_bytes(), &mut budget).map(|_| ())
        };
        assert!(columns(4).is_ok());
        assert!(columns(5).is_err());
        let mut budget = Budget::default();
        let mut carried = || {
            let rule = r#"<conditionalFormatting sqref="A1"><cfRule type="expression" priority="1"><formula>1</formula></cfRule></conditionalFormatting>"#;
            let xml = sheet("", &rule.repeat(MAX_CARRIED_BYTES / rule.len() / 2 + 1));
            scan_sheet(xml.as_bytes(), &mut budget).map(|_| ())
        };
        assert!(carried().is_ok());
        assert!(carried().is_err(), "two sheets carry it all");
    }

    #[test]
    fn every_element_of_a_styles_part_is_counted() {
        use std::io::Write;
        let xml = br#"<?xml version="1.0"?><styleSheet><cellXfs count="2"><xf/><xf
            numFmtId="1"><alignment/></xf></cellXfs></styleSheet>"#;
        let mut all = ElementCounter::new(None, 100);
        all.write_all(xml).unwrap();
        assert_eq!(all.count, 5);
        let mut small = ElementCounter::new(None, 4);
        assert!(small.write_all(xml).is_err() && small.over());
    }

    #[test]
    fn defined_names_with_scope() {
        let xml = br#"<workbook><bookViews><workbookView activeTab="2"/></bookViews>
            <sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets>
            <definedNames><definedName name="Local" localSheetId="0">Data!$A$1</definedName>
            <definedName name="Quote">&quot;a&quot;&amp;"b"</definedName></definedNames></workbook>"#;
        let book = parse_workbook_xml(xml).unwrap();
        assert_eq!(book.active_tab, 2);
        assert_eq!(book.sheets, vec![("Data".to_owned(), "rId1".to_owned())]);
        assert_eq!(book.names[0].scope, Some(0));
        assert_eq!(book.names[0].refers_to, "Data!$A$1");
        assert_eq!(book.names[1].refers_to, "\"a\"&\"b\"");
    }
}
