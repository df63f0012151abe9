//! Writing: [`Workbook`] → xlsx bytes, with rust_xlsxwriter.
//!
//! rust_xlsxwriter cannot edit a file, so every write rebuilds the whole
//! workbook from the model: every sheet with its name, order, visibility,
//! values, types and formulas (with their cached results), its cell formats
//! and its layout (defined names are carried, see [`super::merge`]). A
//! save in part ([`super::chunked`]) makes the same file, the rows a batch
//! did not change taken from the last save as they were compressed.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::{Cursor, Seek, Write};
use std::path::{Path, PathBuf};

use rust_xlsxwriter::{DocProperties, Format, Formula as XlsxFormula, Worksheet, XlsxError};

use super::chunked::{CHUNK_BYTES, KeptWrite, Saved};
use super::fix::{Fix, Fixes, FormulaFix, PLACEHOLDER, has_outer_space};
use super::stand_in::{self, stand_in};
use super::styles::{to_format, xlsx_color};
use super::{WriteError, to_1904};
use crate::model::format::{CellFormat, DateParts, Font, written_code};
use crate::model::layout::{Layout, PrintSetup};
use crate::model::value::format_number;
use crate::model::workbook::DocumentProperties;
use crate::model::{Cell, RowsChanged, Sheet, Visibility, Workbook};

/// rust_xlsxwriter formats for the workbook's cell formats, built once each:
/// stand-ins for the file's own formats when its styles part is carried
/// ([`stand_in`]), or the formats' settings otherwise (a workbook made
/// through the API).
struct Formats {
    cell_formats: Vec<CellFormat>,
    /// Whether the cell formats are the file's, written back as its records.
    file_records: bool,
    /// Whether each cell format is the default one (needs no format).
    plain: Vec<bool>,
    /// What each cell format shows of a date-like value.
    dated: Vec<DateParts>,
    /// Each cell format as built, by id: looked up for most formatted cells.
    built: Vec<Option<Format>>,
    /// Cell formats with a date format added, for date values in cells
    /// whose format does not show dates (values inserted through the API).
    built_with_date: HashMap<(u32, &'static str), Format>,
    /// The file's format 0 named outright, for its cells under a formatted
    /// row or column.
    named_default: Format,
    /// The writer's format 0, for writer calls that want a format: any
    /// other would be a format of its own, with the writer's default font.
    default: Format,
    /// Each format given to the writer, in the order it was first given:
    /// the order in which the writer numbers them (see [`Formats::replay`]).
    order: Vec<Built>,
}

/// A format [`Formats`] built, named by what it was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Built {
    /// The cell format of this id.
    Plain(u32),
    /// The cell format of this id with this date format.
    Dated(u32, &'static str),
    /// The file's format 0 named outright.
    NamedDefault,
}

impl Formats {
    fn new(cell_formats: &[CellFormat], file_records: bool, default_format: Format) -> Formats {
        let default = CellFormat::default();
        // A file's format that looks like the default in the model may
        // hold what the model does not (protection, a font's script).
        let plain = |(id, format): (usize, &CellFormat)| match file_records {
            true => id == 0,
            false => *format == default,
        };
        Formats {
            cell_formats: cell_formats.to_vec(),
            file_records,
            plain: cell_formats.iter().enumerate().map(plain).collect(),
            dated: cell_formats.iter().map(CellFormat::date_parts).collect(),
            built: vec![None; cell_formats.len()],
            built_with_date: HashMap::new(),
            named_default: stand_in(0, None),
            default: default_format,
            order: Vec::new(),
        }
    }

    /// Builds the formats `order` names and registers them with `book` in
    /// that order, before any cell is written: a writer numbers its
    /// formats in the order it meets them, so this writer's cells point at
    /// each format by the same index as the cells of the writer that met
    /// them in this order (see [`super::chunked`]).
    fn replay(&mut self, order: &[Built], book: &mut rust_xlsxwriter::Workbook) {
        for &built in order {
            let format = match built {
                Built::Plain(id) => self.built_format(id, None),
                Built::Dated(id, code) => self.built_format(id, Some(code)),
                Built::NamedDefault => Some(self.named_default()),
            };
            if let Some(format) = format {
                book.register_format(format);
            }
        }
    }

    /// Whether [`Cells::write_rows`] writes any cell of `row`: one with a value,
    /// with a cell format that is not the default, or an empty cell the
    /// file has without a format under a formatted row or column.
    fn writes_any(&self, sheet: &Sheet, row: usize) -> bool {
        let ids = sheet.layout.formats.get(row).map_or(&[][..], Vec::as_slice);
        sheet.row(row).iter().any(|cell| *cell != Cell::Empty)
            || ids.iter().any(|&id| !self.is_plain(id))
            || sheet
                .layout
                .unformatted_columns(row as u32)
                .next()
                .is_some()
    }

    /// Whether the format of id `id` is written as the writer's default
    /// format: id 0, whatever it holds (the workbook's default font is the
    /// writer's), and formats equal to the default (ids past the table,
    /// which the reader does not make, count as such).
    fn is_plain(&self, id: u32) -> bool {
        id == 0 || self.plain.get(id as usize).copied().unwrap_or(true)
    }

    /// [`Formats::of`] for a cell under a formatted row or column
    /// (`covered`): a cell of the file's format 0 gets it named outright,
    /// where the writer would give a cell without a format the row's or
    /// the column's.
    fn of_at(&mut self, id: u32, cell: &Cell, covered: bool, kept: bool) -> Option<&Format> {
        if covered && self.file_records && self.of(id, cell, kept).is_none() {
            return Some(self.named_default());
        }
        self.of(id, cell, kept)
    }

    /// The file's format 0 named outright, noted in the order the first
    /// time.
    fn named_default(&mut self) -> &Format {
        if !self.order.contains(&Built::NamedDefault) {
            self.order.push(Built::NamedDefault);
        }
        &self.named_default
    }

    /// The format to write `cell` with, when it needs one: its cell format,
    /// with a date format added when the value is a date the cell format
    /// would not show as one, and a number format when the value is a
    /// number the cell format would show as a date (a number written into
    /// a date column reads back as that number, §9: the reader takes every
    /// number in a date format for a date). `kept`: the file has the cell
    /// with this value in this format ([`Layout::misfits`]).
    fn of(&mut self, id: u32, cell: &Cell, kept: bool) -> Option<&Format> {
        let index = id as usize;
        let shows = self.dated.get(index).copied().unwrap_or_default();
        let exact = (self.cell_formats.get(index)).is_some_and(CellFormat::is_date_time_code);
        self.built_format(id, written_code(cell, shows, exact, kept))
    }

    /// The format of cell format `id` (none for a plain one without a date
    /// format), with the date format `date` when given; built and noted in
    /// the order the first time.
    fn built_format(&mut self, id: u32, date: Option<&'static str>) -> Option<&Format> {
        let index = id as usize;
        // Ids past the table (which the reader does not make) count as plain.
        let index = match self.plain.get(index) {
            Some(false) => index,
            _ => 0,
        };
        let file_records = self.file_records;
        let cell_formats = &self.cell_formats;
        let build = |code: Option<&str>| {
            if file_records {
                return stand_in(index as u32, code);
            }
            let mut format = cell_formats.get(index).cloned().unwrap_or_default();
            if let Some(code) = code {
                format.num_format = Some(code.to_owned());
            }
            to_format(&format)
        };
        let order = &mut self.order;
        match date {
            None if index == 0 => None,
            None => Some(self.built[index].get_or_insert_with(|| {
                order.push(Built::Plain(index as u32));
                build(None)
            })),
            Some(code) => Some(
                self.built_with_date
                    .entry((index as u32, code))
                    .or_insert_with(|| {
                        order.push(Built::Dated(index as u32, code));
                        build(Some(code))
                    }),
            ),
        }
    }
}

/// The zip compression level of every rewrite. Level 2 of 9 saves in
/// about 0.6 of the time of the default level 6, for files about 1.1 times
/// as large (rust_xlsxwriter's own figures): the rewrite is on every
/// write's path.
pub(super) const COMPRESSION_LEVEL: u8 = 2;

/// Whether [`super::merge`] has anything to add to the writer's package:
/// parts or elements the workbook carries, or hyperlinks.
fn carries_anything(workbook: &Workbook) -> bool {
    !workbook.carried.is_empty()
        || workbook.sheets.iter().any(|s| {
            !s.carried.is_empty() || !s.layout.links.is_empty() || !s.layout.merges.is_empty()
        })
}

fn saving(error: XlsxError) -> WriteError {
    match error {
        XlsxError::IoError(io) => WriteError::Io(io),
        other => unwritable(other),
    }
}

/// A date cell (or a formula's cached date) counted from the file's day
/// zero: the model's dates count from 1900, a 1904 workbook's 1,462 days
/// later (1,461 before 1900/03/01); a time of day alone stays as it is.
fn in_file_dates(cell: &Cell, date1904: bool) -> Cow<'_, Cell> {
    if !date1904 {
        return Cow::Borrowed(cell);
    }
    match cell {
        // A time of day: both systems count it alike.
        Cell::DateTime(serial) | Cell::Timestamp(serial) if *serial < 1.0 => Cow::Borrowed(cell),
        Cell::DateTime(serial) => Cow::Owned(Cell::DateTime(to_1904(*serial))),
        Cell::Timestamp(serial) => Cow::Owned(Cell::Timestamp(to_1904(*serial))),
        Cell::Formula(f) if matches!(f.cached, Cell::DateTime(_) | Cell::Timestamp(_)) => {
            let mut f = f.clone();
            f.cached = in_file_dates(&f.cached, true).into_owned();
            Cow::Owned(Cell::Formula(f))
        }
        _ => Cow::Borrowed(cell),
    }
}

/// Writes the whole workbook to `out`.
pub fn write_workbook<W: KeptWrite + Seek + Send>(
    workbook: &Workbook,
    out: W,
) -> Result<(), WriteError> {
    Rewrite::begin(workbook)?.save(workbook, out)
}

/// Whether a sheet is written in row order, in rust_xlsxwriter's
/// constant-memory mode: what the writer places over ranges of cells needs
/// its ordinary mode, and the streamed rows leave out their outline level.
/// Rows with settings of their own (a height, a format, hidden) must come
/// before the last row with cells: the writer writes the settings of the
/// row it holds at a save twice (a repeated XML row, which the format does
/// not allow), and writes those of rows below it at the first save, after
/// which it would refuse rows appended above them.
fn in_row_order(sheet: &Sheet, formats: &Formats) -> bool {
    let layout = &sheet.layout;
    let settings_above_last_cells = match layout.rows.keys().next_back() {
        None => true,
        Some(&last_with_settings) => (0..sheet.extent())
            .rev()
            .find(|&row| formats.writes_any(sheet, row))
            .is_some_and(|last_with_cells| (last_with_settings as usize) < last_with_cells),
    };
    layout.array_formulas.is_empty()
        && layout.rows.values().all(|row| row.outline_level == 0)
        && settings_above_last_cells
}

/// A workbook's rewrite, kept to save it again after the next batch.
///
/// rust_xlsxwriter formats each row's XML as the row is written; saving
/// compresses that XML into the file. When every sheet is written in row
/// order the formatted rows wait in a temporary file, and the writer can
/// take more rows and save again: so the first save after rows were
/// appended writes only the new rows ([`Rewrite::save`]). That save, or
/// the first one when the rewrite is [keeping
/// chunks](Rewrite::keeping_chunks), keeps the sheets' rows compressed in
/// chunks ([`super::chunked`]), and every later save writes only the
/// chunks that changed, through a small writer of its own
/// ([`Rewrite::save_changed`]).
pub struct Rewrite {
    stage: Stage,
    /// Each sheet's extent at the last save.
    extents: Vec<usize>,
    temp_dir: Option<PathBuf>,
    /// About how many bytes of XML rows a kept chunk holds.
    chunk_bytes: usize,
    /// Whether the first save keeps the rows in chunks.
    chunk_first: bool,
    /// Whether rows that move may be saved without their numbers.
    lean: bool,
}

enum Stage {
    /// rust_xlsxwriter holds every row written so far.
    Writer(Box<Writer>),
    /// The last save, kept in chunks, and the order in which its writers
    /// met the formats.
    Chunked(Saved, Vec<Built>),
}

/// rust_xlsxwriter, with every sheet begun and the rows written so far.
struct Writer {
    book: rust_xlsxwriter::Workbook,
    formats: Formats,
    /// How many rows of each sheet are written.
    written: Vec<usize>,
    resumable: bool,
    /// Per sheet, whether its carried elements are what the writer writes
    /// (see [`super::merge::merge`]).
    plain_sheets: Vec<Option<bool>>,
    /// Per sheet, the cells written so far that the writer gets wrong.
    fixes: Vec<Fixes>,
}

impl Rewrite {
    /// Writes every sheet of `workbook`; [`Rewrite::save`] saves them.
    /// The writer's temporary files go to the system's temp directory.
    pub fn begin(workbook: &Workbook) -> Result<Rewrite, WriteError> {
        Rewrite::begin_in(workbook, None)
    }

    /// [`Rewrite::begin`], with the writer's temporary files (one per sheet
    /// written in row order, removed from the directory at once) in
    /// `temp_dir` when given.
    pub fn begin_in(workbook: &Workbook, temp_dir: Option<&Path>) -> Result<Rewrite, WriteError> {
        Ok(Rewrite {
            stage: Stage::Writer(Box::new(Writer::begin(workbook, temp_dir, &[])?)),
            extents: vec![0; workbook.sheets.len()],
            temp_dir: temp_dir.map(Path::to_path_buf),
            chunk_bytes: CHUNK_BYTES,
            chunk_first: false,
            lean: true,
        })
    }

    /// Makes the first save keep the rows in chunks (when every sheet is
    /// written in row order), for saves in part after any change in
    /// place: it costs that save about as much again as compressing the
    /// sheets, which a workbook whose rows move at every write (deletes)
    /// would pay each time for nothing.
    pub fn keeping_chunks(mut self, keep: bool) -> Rewrite {
        self.chunk_first = keep;
        self
    }

    /// Makes every row a save writes say its number, also the rows that
    /// moved, which otherwise lean on the row before where they can (see
    /// `chunked::moved`): for readers that cannot count rows.
    pub fn numbering_every_row(mut self, every: bool) -> Rewrite {
        self.lean = !every;
        self
    }

    /// Keeps saves in chunks of about `bytes` of XML rows, rather than
    /// 64 KiB: tests and tools make many chunks of small sheets.
    pub fn with_chunks_of(mut self, bytes: usize) -> Rewrite {
        self.chunk_bytes = bytes;
        self
    }

    /// Whether this rewrite can save the workbook again after a batch that
    /// `changed` these rows: in chunks any change (when rows moved, if the
    /// window writes at most a quarter of a sheet's rows, see
    /// [`Saved::takes`]); the
    /// writer, rows appended (when every sheet is written in row order,
    /// see `in_row_order`; in memory, the writer would hold every cell of
    /// the workbook once more).
    pub fn takes(&self, workbook: &Workbook, changed: &[RowsChanged]) -> bool {
        match &self.stage {
            Stage::Chunked(saved, _) => {
                let extents: Vec<usize> = workbook.sheets.iter().map(Sheet::extent).collect();
                saved.takes(&extents, changed)
            }
            Stage::Writer(writer) => {
                writer.resumable
                    && (changed.iter().zip(&workbook.sheets)).all(|(c, sheet)| {
                        c.rows.is_empty() && c.moved_from().is_none() && sheet.extent() >= c.extent
                    })
            }
        }
    }

    /// The temporary files this rewrite holds open: one per sheet while
    /// the writer holds the rows.
    pub fn files(&self) -> usize {
        match &self.stage {
            Stage::Writer(writer) => writer.written.len(),
            Stage::Chunked(..) => 0,
        }
    }

    /// Whether this rewrite can be saved again after rows are appended:
    /// every sheet is written in row order (see `in_row_order`), or the
    /// last save is kept in chunks.
    pub fn resumable(&self) -> bool {
        match &self.stage {
            Stage::Writer(writer) => writer.resumable,
            Stage::Chunked(..) => true,
        }
    }

    /// The bytes this rewrite holds in memory beyond the workbook: the
    /// chunks of its last save.
    pub fn bytes(&self) -> usize {
        match &self.stage {
            Stage::Writer(_) => 0,
            Stage::Chunked(saved, _) => saved.bytes(),
        }
    }

    /// Saves `workbook` to `out`: the one begun with, or one that [appends
    /// to](Workbook::appends_to) the one last saved.
    pub fn save<W: KeptWrite + Seek + Send>(
        &mut self,
        workbook: &Workbook,
        out: W,
    ) -> Result<(), WriteError> {
        let unchanged: Vec<RowsChanged> = (self.extents.iter())
            .map(|&extent| RowsChanged {
                extent,
                ..RowsChanged::default()
            })
            .collect();
        self.save_changed(workbook, &unchanged, out)
    }

    /// Saves `workbook` to `out`, which is the workbook last saved but for
    /// the rows `changed` names ([`Workbook::changed_in_place`]), which
    /// this rewrite [takes](Rewrite::takes).
    pub fn save_changed<W: KeptWrite + Seek + Send>(
        &mut self,
        workbook: &Workbook,
        changed: &[RowsChanged],
        out: W,
    ) -> Result<(), WriteError> {
        self.save_in_part(workbook, changed, out)?;
        self.extents = workbook.sheets.iter().map(Sheet::extent).collect();
        Ok(())
    }

    fn save_in_part<W: KeptWrite + Seek + Send>(
        &mut self,
        workbook: &Workbook,
        changed: &[RowsChanged],
        mut out: W,
    ) -> Result<(), WriteError> {
        let saved = match &mut self.stage {
            Stage::Writer(writer)
                if writer.written.iter().all(|&w| w == 0)
                    && !(self.chunk_first && writer.resumable) =>
            {
                writer.write_below(workbook)?;
                return writer.finish(workbook, out);
            }
            Stage::Writer(writer) => {
                writer.write_below(workbook)?;
                let mut package = Cursor::new(Vec::new());
                writer.finish(workbook, &mut package)?;
                let sheets = workbook.sheets.len();
                let package = package.get_ref();
                if let Some(saved) =
                    Saved::adopt(package, sheets, self.chunk_bytes, self.lean, out)?
                {
                    let order = std::mem::take(&mut writer.formats.order);
                    self.stage = Stage::Chunked(saved, order);
                }
                return Ok(());
            }
            Stage::Chunked(saved, order) => (saved, order),
        };
        let (saved, order) = saved;
        let extents: Vec<usize> = workbook.sheets.iter().map(Sheet::extent).collect();
        let dirty = saved.dirty(&extents, changed);
        let temp_dir = self.temp_dir.as_deref();
        let mut window = Writer::begin(workbook, temp_dir, order)?;
        if window.resumable {
            for (index, dirty) in dirty.iter().enumerate() {
                window.write_rows(workbook, index, &dirty.rows)?;
            }
            let mut package = Cursor::new(Vec::new());
            window.finish(workbook, &mut package)?;
            if saved.resave(package.get_ref(), &dirty, &mut out)? {
                *order = window.formats.order;
                return Ok(());
            }
        }
        // The window cannot stand for the last save: rewritten whole.
        let (chunk_bytes, lean) = (self.chunk_bytes, self.lean);
        *self = (Rewrite::begin_in(workbook, temp_dir)?)
            .keeping_chunks(true)
            .with_chunks_of(chunk_bytes)
            .numbering_every_row(!lean);
        self.save(workbook, out)
    }
}

impl Writer {
    /// Begins every sheet of `workbook` with its layout, the formats
    /// `order` names registered first (see [`Formats::replay`]).
    fn begin(
        workbook: &Workbook,
        temp_dir: Option<&Path>,
        order: &[Built],
    ) -> Result<Writer, WriteError> {
        let mut book = rust_xlsxwriter::Workbook::new();
        if let Some(dir) = temp_dir {
            book.set_tempdir(dir).map_err(unwritable)?;
        }
        // Level 2 of 9 saves in about 0.6 of the time of the default level 6,
        // for files about 1.1 times as large (rust_xlsxwriter's own figures):
        // the rewrite is on every write's path.
        book.set_zip_compression_level(COMPRESSION_LEVEL);
        let (row_pixels, default) = set_default_font(&mut book, &workbook.default_font);
        let file_records = workbook.carried.styles.is_some();
        if file_records {
            stand_in::register(&mut book, workbook.formats.len());
        }
        let mut formats = Formats::new(&workbook.formats, file_records, default);
        formats.replay(order, &mut book);
        let mut resumable = true;
        let mut fixes = Vec::with_capacity(workbook.sheets.len());
        let active = match workbook.sheets.get(workbook.active_sheet) {
            Some(sheet) if sheet.visibility == Visibility::Visible => Some(workbook.active_sheet),
            _ => workbook
                .sheets
                .iter()
                .position(|s| s.visibility == Visibility::Visible),
        };
        for (index, sheet) in workbook.sheets.iter().enumerate() {
            let streamed = in_row_order(sheet, &formats);
            resumable &= streamed;
            let worksheet = if streamed {
                book.add_worksheet_with_constant_memory()
                    .map_err(unwritable)?
            } else {
                book.add_worksheet()
            };
            worksheet
                .set_name(&sheet.name)
                .map_err(|_| bad_sheet_name(&sheet.name))?;
            // A formula with no cached result keeps none (rather than 0).
            worksheet.set_formula_result_default("");
            match sheet.visibility {
                Visibility::Visible => {}
                Visibility::Hidden => {
                    worksheet.set_hidden(true);
                }
                Visibility::VeryHidden => {
                    worksheet.set_very_hidden(true);
                }
            }
            if Some(index) == active {
                worksheet.set_active(true);
            }
            write_layout(worksheet, &sheet.layout, &mut formats).map_err(unwritable)?;
            fixes.push(Fixes {
                rows: row_fixes(&sheet.layout, &formats, row_pixels),
                ..Fixes::default()
            });
        }
        Ok(Writer {
            book,
            formats,
            written: vec![0; workbook.sheets.len()],
            resumable,
            plain_sheets: Vec::new(),
            fixes,
        })
    }

    /// Writes each sheet's rows below those written so far.
    fn write_below(&mut self, workbook: &Workbook) -> Result<(), WriteError> {
        for (index, sheet) in workbook.sheets.iter().enumerate() {
            let rows = self.written[index]..sheet.extent();
            self.write_rows(workbook, index, &[rows])?;
        }
        Ok(())
    }

    /// Writes `rows` (ranges in order) of sheet `index`, and what spans
    /// the rows.
    fn write_rows(
        &mut self,
        workbook: &Workbook,
        index: usize,
        rows: &[std::ops::Range<usize>],
    ) -> Result<(), WriteError> {
        let sheet = &workbook.sheets[index];
        let worksheet = self.book.worksheet_from_index(index).map_err(unwritable)?;
        let mut cells = Cells {
            worksheet,
            sheet,
            formats: &mut self.formats,
            fixes: &mut self.fixes[index],
            date1904: workbook.carried.date1904,
            formatted_columns: formatted_columns(&sheet.layout),
        };
        for range in rows {
            cells.write_rows(range.clone()).map_err(unwritable)?;
        }
        cells.write_spans().map_err(unwritable)?;
        self.written[index] = sheet.extent();
        Ok(())
    }

    /// Saves the rows written to `out`, with what the workbook carries.
    fn finish<W: Write + Seek + Send>(
        &mut self,
        workbook: &Workbook,
        out: W,
    ) -> Result<(), WriteError> {
        // Set at each save: the properties carry the time of the save.
        self.book
            .set_properties(&document_properties(&workbook.properties));
        let fixed = self.fixes.iter().any(|fixes| !fixes.is_empty());
        if !carries_anything(workbook) && !fixed {
            return self.book.save_to_writer(out).map_err(saving);
        }
        let written = self.book.save_to_buffer().map_err(saving)?;
        super::merge::merge(&written, workbook, &self.fixes, &mut self.plain_sheets, out)
    }
}

/// Which columns of `layout` have a format other than the default, by
/// column.
fn formatted_columns(layout: &Layout) -> Vec<bool> {
    let mut formatted = Vec::new();
    for columns in layout.columns.iter().filter(|c| c.format != 0) {
        let last = usize::from(columns.last);
        if formatted.len() <= last {
            formatted.resize(last + 1, false);
        }
        formatted[usize::from(columns.first)..=last].fill(true);
    }
    formatted
}

/// The writer's default row height in pixels, with Calibri 11.
const DEFAULT_ROW_PIXELS: u32 = 20;

/// Makes `font` the workbook's default, the font of every cell without one
/// of its own. rust_xlsxwriter wants the default row height and column width
/// in pixels with it; they follow from the font size as in Excel (a 10 pt
/// font gives 17 px rows; columns of 8.43 characters are 64 px for the
/// common fonts). Fonts it cannot size keep its default, Calibri 11.
/// Returns the default row height the writer took, in pixels, and its
/// default format (its format 0).
fn set_default_font(book: &mut rust_xlsxwriter::Workbook, font: &Font) -> (u32, Format) {
    let plain = (DEFAULT_ROW_PIXELS, Format::new());
    let (Some(name), Some(size)) = (&font.name, font.size) else {
        return plain;
    };
    if name == "Calibri" && size == 11.0 {
        return plain;
    }
    let row_pixels = (size * 4.0 / 3.0 * 1.275).round() as u32;
    let format = Format::new().set_font_name(name).set_font_size(size);
    match book.set_default_format(&format, row_pixels, 64) {
        Ok(_) => (row_pixels, format),
        Err(error) => {
            tracing::debug!(%error, font = %name, size, "default font not kept");
            plain
        }
    }
}

/// The row attributes the writer would write otherwise than the model
/// holds them (see [`super::fix`]): heights, which it rounds to whole
/// pixels and leaves out where they equal its default (`row_pixels`), a
/// row format that is the default format, which it leaves out, and
/// collapsed outlines, which it has no setting for.
fn row_fixes(
    layout: &Layout,
    formats: &Formats,
    row_pixels: u32,
) -> BTreeMap<u32, Vec<(&'static str, String)>> {
    let mut fixes = BTreeMap::new();
    for (&row, props) in &layout.rows {
        let mut attributes = Vec::new();
        if props.format.is_some_and(|id| formats.is_plain(id)) {
            attributes.push(("s", "0".to_owned()));
            attributes.push(("customFormat", "1".to_owned()));
        }
        if let Some(height) = props.height {
            let pixels = (height * 4.0 / 3.0).round();
            if pixels * 0.75 != height || pixels as u32 == row_pixels || props.height_fitted {
                attributes.push(("ht", format_number(height)));
                if !props.height_fitted {
                    attributes.push(("customHeight", "1".to_owned()));
                }
            }
        }
        if props.collapsed {
            attributes.push(("collapsed", "1".to_owned()));
        }
        if !attributes.is_empty() {
            fixes.insert(row, attributes);
        }
    }
    fixes
}

/// The workbook's document properties as the writer takes them.
fn document_properties(properties: &DocumentProperties) -> DocProperties {
    type Setter = fn(DocProperties, &str) -> DocProperties;
    let setters: [(&Option<String>, Setter); 9] = [
        (&properties.title, |p, v| p.set_title(v)),
        (&properties.subject, |p, v| p.set_subject(v)),
        (&properties.author, |p, v| p.set_author(v)),
        (&properties.keywords, |p, v| p.set_keywords(v)),
        (&properties.comment, |p, v| p.set_comment(v)),
        (&properties.category, |p, v| p.set_category(v)),
        (&properties.status, |p, v| p.set_status(v)),
        (&properties.company, |p, v| p.set_company(v)),
        (&properties.manager, |p, v| p.set_manager(v)),
    ];
    setters
        .into_iter()
        .fold(DocProperties::new(), |out, (value, set)| match value {
            Some(value) => set(out, value),
            None => out,
        })
}

/// The cells of one sheet as they are written: through the writer, and
/// noted in `fixes` where it cannot write them as the model holds them.
struct Cells<'a> {
    worksheet: &'a mut Worksheet,
    sheet: &'a Sheet,
    formats: &'a mut Formats,
    fixes: &'a mut Fixes,
    date1904: bool,
    /// Which columns have a format of their own, by column.
    formatted_columns: Vec<bool>,
}

impl Cells<'_> {
    /// Whether the cell at `row`, `column` is under a row or a column with
    /// a format the writer gives cells written without one.
    fn covered(&self, row: u32, column: u16) -> bool {
        let layout = &self.sheet.layout;
        layout
            .rows
            .get(&row)
            .is_some_and(|props| props.format.is_some_and(|id| id != 0))
            || self
                .formatted_columns
                .get(usize::from(column))
                .copied()
                .unwrap_or(false)
    }

    /// Every cell with a value or a format of its own, in the given rows.
    fn write_rows(&mut self, rows: std::ops::Range<usize>) -> Result<(), XlsxError> {
        let sheet = self.sheet;
        let layout = &sheet.layout;
        for row in rows {
            let cells = sheet.row(row);
            let ids = layout.formats.get(row).map_or(&[][..], Vec::as_slice);
            // A data table without a cached value is an empty cell.
            let formulas = layout
                .formulas
                .range((row as u32, 0)..=(row as u32, u16::MAX));
            let past_formulas = formulas.last().map_or(0, |(&(_, c), _)| usize::from(c) + 1);
            let past_unformatted = layout
                .unformatted_columns(row as u32)
                .next_back()
                .map_or(0, |c| usize::from(c) + 1);
            let end = cells.len().max(ids.len()).max(past_formulas);
            for column in 0..end.max(past_unformatted) {
                let cell = cells.get(column).unwrap_or(&Cell::Empty);
                let id = ids.get(column).copied().unwrap_or(0);
                // No cell in the file: it shows its row's or column's format.
                let key = (row as u32, column as u16);
                if id == 0
                    && *cell == Cell::Empty
                    && !layout.formulas.contains_key(&key)
                    && !layout.unformatted_cells.contains(&key)
                {
                    continue;
                }
                self.write_cell(row as u32, column as u16, cell, id)?;
            }
        }
        Ok(())
    }

    /// One cell, with the cell format of id `id`.
    fn write_cell(&mut self, row: u32, column: u16, cell: &Cell, id: u32) -> Result<(), XlsxError> {
        let covered = self.covered(row, column);
        let kept = self.sheet.layout.misfits.get(&(row, column)) == Some(cell);
        let format = self.formats.of_at(id, cell, covered, kept);
        let iso = self.sheet.layout.iso_dates.get(&(row, column));
        let fix = match (iso.map(|iso| (super::read::iso_cell(iso), iso)), cell) {
            (Some((read, iso)), Cell::Formula(f)) if read == f.cached => {
                Some(Fix::IsoResult(iso.clone()))
            }
            (Some((read, iso)), _) if read == *cell => Some(Fix::IsoDate(iso.clone())),
            _ => None,
        };
        let formula = file_formula(&self.sheet.layout, row, column, cell);
        let cell = in_file_dates(cell, self.date1904);
        let layout = &self.sheet.layout;
        let (spelled, rich) = match cell.as_ref() {
            Cell::Text(text) => (
                layout.spelling(row, column, text),
                layout.runs(row, column, text),
            ),
            _ => (None, None),
        };
        let fix = match (&formula, cell.as_ref()) {
            // A data table's cached text is a formula's text result.
            (Some(_), Cell::Text(text)) => Some(Fix::TextResult(text.clone())),
            // It is written as a formula, which has an element.
            (Some(_), Cell::Empty) => Some(Fix::NoResult),
            _ => fix
                .or_else(|| rich.map(|rich| Fix::Rich(rich.xml.clone())))
                .or_else(|| spelled.cloned().map(Fix::Spelled))
                .or_else(|| fix_for(&cell)),
        };
        let placeholder = match (&fix, &formula, cell.as_ref()) {
            (Some(fix), _, _) if fix.replaces_value() => Some(XlsxFormula::new(PLACEHOLDER)),
            (_, Some(_), Cell::Formula(f)) => {
                Some(XlsxFormula::new(PLACEHOLDER).set_result(cached_result(&f.cached)))
            }
            (_, Some(_), Cell::Empty) => Some(XlsxFormula::new(PLACEHOLDER)),
            _ => None,
        };
        match (placeholder, format) {
            (Some(placeholder), Some(format)) => {
                self.worksheet
                    .write_formula_with_format(row, column, placeholder, format)?;
            }
            (Some(placeholder), None) => {
                self.worksheet.write_formula(row, column, placeholder)?;
            }
            (None, _) => write_value(self.worksheet, row, column, &cell, format)?,
        }
        match fix {
            Some(fix) => self.fixes.cells.insert((row, column), fix),
            None => self.fixes.cells.remove(&(row, column)),
        };
        match formula {
            Some(formula) => self.fixes.formulas.insert((row, column), formula),
            None => self.fixes.formulas.remove(&(row, column)),
        };
        Ok(())
    }

    /// What spans the rows, written after them and again at each save:
    /// array formulas (over their cells) and the autofilter (which grows
    /// with appended rows).
    fn write_spans(&mut self) -> Result<(), XlsxError> {
        let sheet = self.sheet;
        let layout = &sheet.layout;
        for array in &layout.array_formulas {
            let range = &array.range;
            let (row, column) = (range.first_row as usize, range.first_column as usize);
            let Some(cell @ Cell::Formula(_)) = sheet.row(row).get(column) else {
                continue;
            };
            let cell = in_file_dates(cell, self.date1904);
            let Cell::Formula(f) = cell.as_ref() else {
                continue;
            };
            // The writer is given a placeholder of the formula's kind, and
            // the fix writes its text: the writer would rewrite some texts
            // and make an array that calls a function added after 2007 a
            // dynamic one.
            let placeholder = XlsxFormula::new(PLACEHOLDER).set_result(cached_result(&f.cached));
            let covered = self.covered(range.first_row, range.first_column);
            let format = self
                .formats
                .of_at(layout.format(row, column), &f.cached, covered, true)
                .cloned()
                .unwrap_or_else(|| self.formats.default.clone());
            let (first_row, first_column) = (range.first_row, range.first_column);
            let (last_row, last_column) = (range.last_row, range.last_column);
            let write = match array.dynamic {
                true => Worksheet::write_dynamic_array_formula_with_format,
                false => Worksheet::write_array_formula_with_format,
            };
            write(
                self.worksheet,
                first_row,
                first_column,
                last_row,
                last_column,
                placeholder,
                &format,
            )?;
            let anchor = (first_row, first_column);
            match fix_for(&cell) {
                Some(fix) => self.fixes.cells.insert(anchor, fix),
                None => self.fixes.cells.remove(&anchor),
            };
            let formula = FormulaFix::array(&f.expr, *range, array.dynamic);
            self.fixes.formulas.insert(anchor, formula);
            // The writer fills the rest of the range with zeros; in the file
            // each of those cells holds its own cached result, which the
            // model read as a plain value, or none.
            for other_row in range.first_row..=range.last_row {
                for other_column in range.first_column..=range.last_column {
                    if (other_row, other_column) == (range.first_row, range.first_column) {
                        continue;
                    }
                    let (r, c) = (other_row as usize, usize::from(other_column));
                    let cell = sheet.row(r).get(c).unwrap_or(&Cell::Empty);
                    self.write_cell(other_row, other_column, cell, layout.format(r, c))?;
                    if *cell == Cell::Empty {
                        self.fixes
                            .cells
                            .insert((other_row, other_column), Fix::NoResult);
                    }
                }
            }
        }
        if let Some(range) = layout.autofilter {
            self.worksheet.autofilter(
                range.first_row,
                range.first_column,
                range.last_row,
                range.last_column,
            )?;
        }
        Ok(())
    }
}

/// The formula element a cell must have as its file has it, where the
/// writer would write it otherwise: a formula whose text it would
/// rewrite (see [`super::future`]) or a data table's first cell, while
/// the cell holds what was read from it.
fn file_formula(layout: &Layout, row: u32, column: u16, cell: &Cell) -> Option<FormulaFix> {
    match cell {
        Cell::Formula(f) => layout
            .file_formula(row, column, &f.expr)
            .map(FormulaFix::plain),
        value => layout
            .data_table(row, column, value)
            .map(FormulaFix::data_table),
    }
}

/// What the writer would write otherwise than `cell` holds it (see
/// [`super::fix`]).
fn fix_for(cell: &Cell) -> Option<Fix> {
    match cell {
        Cell::Text(text) if text.is_empty() => Some(Fix::EmptyText),
        Cell::Error(text) => Some(Fix::Error(text.clone())),
        Cell::Formula(f) => match &f.cached {
            Cell::Empty => Some(Fix::NoResult),
            Cell::Text(text) if !typed_as_text(text) || has_outer_space(text) => {
                Some(Fix::TextResult(text.clone()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The writer's formula of exactly the text `expr`. rust_xlsxwriter takes
/// off a leading `{`, then a leading `=`, then a trailing `}` (the way
/// array formulas are typed in an app), which would turn an array
/// constant `{1,2;3,4}` into `1,2;3,4` (an error in every app), so the
/// text goes to it wrapped in the three it takes off.
fn exact_formula(expr: &str) -> XlsxFormula {
    XlsxFormula::new(format!("{{={expr}}}"))
}

/// Whether rust_xlsxwriter writes a formula's cached result `text` as
/// text: it types the result by its shape, taking what parses as a number
/// for a number, `TRUE`/`FALSE` for a boolean and an error literal for an
/// error.
fn typed_as_text(text: &str) -> bool {
    text.parse::<f64>().is_err()
        && !matches!(
            text,
            "TRUE"
                | "FALSE"
                | "#DIV/0!"
                | "#N/A"
                | "#NAME?"
                | "#NULL!"
                | "#NUM!"
                | "#REF!"
                | "#VALUE!"
                | "#GETTING_DATA"
        )
}

/// What surrounds the cells: columns, rows, merges, panes (tables and
/// hyperlinks are written by [`super::merge`]; the autofilter is among the
/// spans, see [`Cells::write_spans`]). Written before the cells, so the
/// cells' own values and formats win where the writer fills cells in (a
/// merged range).
fn write_layout(
    worksheet: &mut Worksheet,
    layout: &Layout,
    formats: &mut Formats,
) -> Result<(), XlsxError> {
    for column in &layout.columns {
        let (first, last) = (column.first, column.last);
        if let Some(width) = column.width {
            // The pixel width that rust_xlsxwriter turns back into this
            // stored width (it stores pixels × 256 / 7, rounded down).
            worksheet.set_column_range_width_pixels(first, last, (width * 7.0).round() as u32)?;
        }
        if let Some(format) = formats.of(column.format, &Cell::Empty, true) {
            worksheet.set_column_range_format(first, last, format)?;
        }
        if column.hidden {
            worksheet.set_column_range_hidden(first, last)?;
        }
    }
    for (&row, props) in &layout.rows {
        if let Some(height) = props.height {
            worksheet.set_row_height(row, height)?;
        }
        if let Some(format) = props
            .format
            .and_then(|id| formats.of(id, &Cell::Empty, true))
        {
            worksheet.set_row_format(row, format)?;
        }
        if props.hidden {
            worksheet.set_row_hidden(row)?;
        }
    }
    write_outline(worksheet, layout)?;
    if let Some((rows, columns)) = layout.freeze {
        worksheet.set_freeze_panes(rows, columns)?;
    }
    if let Some(color) = layout.tab_color.and_then(xlsx_color) {
        worksheet.set_tab_color(color);
    }
    write_print_setup(worksheet, &layout.print);
    Ok(())
}

/// Grouped rows and columns: rust_xlsxwriter nests a group one level
/// deeper each time a range is grouped again, so each level is written as
/// the runs of rows (or columns) at that level or deeper.
fn write_outline(worksheet: &mut Worksheet, layout: &Layout) -> Result<(), XlsxError> {
    let rows: Vec<(u32, u32, u8)> = layout
        .rows
        .iter()
        .filter(|(_, props)| props.outline_level > 0)
        .map(|(&row, props)| (row, row, props.outline_level))
        .collect();
    for (first, last) in outline_runs(&rows) {
        worksheet.group_rows(first, last)?;
    }
    let columns: Vec<(u32, u32, u8)> = layout
        .columns
        .iter()
        .filter(|c| c.outline_level > 0)
        .map(|c| (u32::from(c.first), u32::from(c.last), c.outline_level))
        .collect();
    for (first, last) in outline_runs(&columns) {
        worksheet.group_columns(first as u16, last as u16)?;
    }
    Ok(())
}

/// For each level from 1 up, the maximal runs of adjacent spans (sorted
/// `(first, last, level)`) at that level or deeper.
fn outline_runs(spans: &[(u32, u32, u8)]) -> Vec<(u32, u32)> {
    let deepest = spans.iter().map(|s| s.2).max().unwrap_or(0);
    let mut runs = Vec::new();
    for level in 1..=deepest {
        let mut run: Option<(u32, u32)> = None;
        for &(first, last, _) in spans.iter().filter(|s| s.2 >= level) {
            run = match run {
                Some((start, end)) if first == end + 1 => Some((start, last)),
                Some(done) => {
                    runs.push(done);
                    Some((first, last))
                }
                None => Some((first, last)),
            };
        }
        runs.extend(run);
    }
    runs
}

fn write_print_setup(worksheet: &mut Worksheet, print: &PrintSetup) {
    if print.landscape {
        worksheet.set_landscape();
    }
    if let Some(size) = print.paper_size {
        worksheet.set_paper_size(size);
    }
    if let Some(scale) = print.scale {
        worksheet.set_print_scale(scale);
    }
    if let Some((wide, tall)) = print.fit_to_pages {
        worksheet.set_print_fit_to_pages(wide, tall);
    }
    if let Some([left, right, top, bottom, header, footer]) = print.margins {
        worksheet.set_margins(left, right, top, bottom, header, footer);
    }
    if let Some(header) = &print.header {
        worksheet.set_header(header);
    }
    if let Some(footer) = &print.footer {
        worksheet.set_footer(footer);
    }
    worksheet.set_print_center_horizontally(print.center_horizontally);
    worksheet.set_print_center_vertically(print.center_vertically);
    worksheet.set_print_gridlines(print.gridlines);
}

/// The refusal of a sheet name the writer will not write: the reader takes
/// names that spreadsheet apps refuse, from hand-edited files.
fn bad_sheet_name(name: &str) -> WriteError {
    WriteError::Refused(format!(
        "the sheet name {name:?} is not allowed in an \
         .xlsx file (31 characters at most, none of [ ] : * ? / \\, no quote at either \
         end, each name once); rename the sheet in a spreadsheet app"
    ))
}

/// A writer refusal, said in the user's terms: the writer's own message
/// names its calls and, for temporary files, paths (§9), so it goes to the
/// log and the client hears what in the workbook blocks the write.
fn unwritable(error: XlsxError) -> WriteError {
    let why: &str = match &error {
        XlsxError::IoError(_) | XlsxError::TempFileError(..) | XlsxError::ZipError(_) => {
            return WriteError::Io(std::io::Error::other(error.to_string()));
        }
        XlsxError::SheetnameCannotBeBlank(_)
        | XlsxError::SheetnameLengthExceeded(_)
        | XlsxError::SheetnameReused(_)
        | XlsxError::SheetnameContainsInvalidCharacter(_)
        | XlsxError::SheetnameStartsOrEndsWithApostrophe(_) => {
            "a sheet name is not allowed in an .xlsx file"
        }
        XlsxError::MaxStringLengthExceeded => {
            "a text of the workbook is longer than 32767 UTF-16 code units"
        }
        XlsxError::RowColumnLimitError => {
            "the workbook reaches past the last row or column of the .xlsx format"
        }
        XlsxError::MergeRangeSingleCell | XlsxError::MergeRangeOverlaps(..) => {
            "a merged range of the workbook cannot be written back"
        }
        _ => "a part of the workbook cannot be written back",
    };
    tracing::warn!(error = %error, "the writer refused a workbook");
    WriteError::Refused(why.into())
}

/// A cell's value as the writer takes it, with `format` when it has one.
fn write_value(
    worksheet: &mut Worksheet,
    row: u32,
    column: u16,
    cell: &Cell,
    format: Option<&Format>,
) -> Result<(), XlsxError> {
    if let Cell::Formula(f) = cell {
        let formula = exact_formula(&f.expr).set_result(cached_result(&f.cached));
        match format {
            Some(format) => worksheet.write_formula_with_format(row, column, formula, format)?,
            None => worksheet.write_formula(row, column, formula)?,
        };
        return Ok(());
    }
    match (cell, format) {
        (
            Cell::Number(n) | Cell::DateTime(n) | Cell::Timestamp(n) | Cell::Duration(n),
            Some(format),
        ) => {
            worksheet.write_number_with_format(row, column, *n, format)?;
        }
        (Cell::Number(n) | Cell::DateTime(n) | Cell::Timestamp(n) | Cell::Duration(n), None) => {
            worksheet.write_number(row, column, *n)?;
        }
        (Cell::Text(text), Some(format)) if !text.is_empty() => {
            worksheet.write_string_with_format(row, column, text, format)?;
        }
        (Cell::Text(text), None) if !text.is_empty() => {
            worksheet.write_string(row, column, text)?;
        }
        (Cell::Bool(b), Some(format)) => {
            worksheet.write_boolean_with_format(row, column, *b, format)?;
        }
        (Cell::Bool(b), None) => {
            worksheet.write_boolean(row, column, *b)?;
        }
        // Empty, or empty text: only a format of its own is written.
        (_, Some(format)) => {
            worksheet.write_blank(row, column, format)?;
        }
        (_, None) => {}
    }
    Ok(())
}

/// The cached result as the writer wants it: text it types by its shape
/// (a number, `TRUE`/`FALSE`, an error literal, else a string).
fn cached_result(cell: &Cell) -> String {
    match cell {
        Cell::Number(n) => format_number(*n),
        Cell::DateTime(serial) | Cell::Timestamp(serial) | Cell::Duration(serial) => {
            serial.to_string()
        }
        Cell::Bool(true) => "TRUE".into(),
        Cell::Bool(false) => "FALSE".into(),
        Cell::Text(text) | Cell::Error(text) => text.clone(),
        Cell::Empty | Cell::Formula(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::model::layout::{ArrayFormula, Range, RowProps};
    use crate::model::request::{DeleteRows, InsertRows};
    use crate::xlsx::{read_workbook, with_row_numbers};

    /// Two sheets with formatted cells, dates and an autofilter.
    fn workbook() -> Workbook {
        let text = |s: &str| Cell::Text(s.into());
        let mut people = Sheet::new(
            "People",
            vec![
                vec![text("name"), text("born"), text("score")],
                vec![text("Ann"), Cell::DateTime(31_000.0), Cell::Number(1.5)],
            ],
        );
        people.layout.formats = vec![vec![1, 0, 0], vec![0, 0, 1]];
        people.layout.autofilter = Some(Range {
            first_row: 0,
            first_column: 0,
            last_row: 1,
            last_column: 2,
        });
        let mut bold = CellFormat::default();
        bold.font.bold = true;
        Workbook {
            sheets: vec![people, Sheet::new("Log", vec![vec![text("event")]])],
            formats: vec![CellFormat::default(), bold],
            ..Workbook::default()
        }
    }

    fn insert(workbook: &mut Workbook, sheet: usize, body: serde_json::Value) {
        let request =
            InsertRows::from_json(body.to_string().as_bytes(), usize::MAX).expect("a valid body");
        let region = crate::model::header::Region::default();
        workbook.sheets[sheet]
            .insert(&region, request)
            .expect("inserted");
    }

    fn read_back(out: Cursor<Vec<u8>>) -> Workbook {
        read_workbook(&out.into_inner(), usize::MAX).expect("the written workbook reads")
    }

    /// What `write_workbook` makes of `workbook`, read back.
    fn written_whole(workbook: &Workbook) -> Workbook {
        let mut out = Cursor::new(Vec::new());
        write_workbook(workbook, &mut out).expect("written");
        read_back(out)
    }

    #[test]
    fn every_cell_of_an_array_formula_keeps_its_cached_result() {
        let text = |s: &str| Cell::Text(s.into());
        let formula = Cell::Formula(Box::new(crate::model::value::Formula::new(
            "UPPER(A1:A2)",
            text("ONE"),
        )));
        let mut sheet = Sheet::new(
            "Data",
            vec![vec![text("one"), formula], vec![text("two"), text("TWO")]],
        );
        sheet.layout.array_formulas.push(ArrayFormula {
            range: Range {
                first_row: 0,
                first_column: 1,
                last_row: 1,
                last_column: 1,
            },
            dynamic: false,
        });
        let workbook = Workbook {
            sheets: vec![sheet],
            ..Workbook::default()
        };
        let mut out = Cursor::new(Vec::new());
        write_workbook(&workbook, &mut out).expect("written");
        let mut xlsx: calamine::Xlsx<_> =
            calamine::Reader::new(Cursor::new(out.into_inner())).expect("opens");
        let values = calamine::Reader::worksheet_range(&mut xlsx, "Data").expect("a sheet");
        assert_eq!(
            values.get_value((1, 1)),
            Some(&calamine::Data::String("TWO".into())),
            "the second cell of the range keeps its result, not 0"
        );
    }

    #[test]
    fn a_rewrite_saved_again_after_appends_holds_the_new_rows() {
        let mut workbook = workbook();
        let mut rewrite = Rewrite::begin(&workbook).expect("begun");
        assert!(rewrite.resumable());
        rewrite
            .save(&workbook, Cursor::new(Vec::new()))
            .expect("saved");

        let before = workbook.clone();
        let rows = serde_json::json!({"data": [
            {"name": "Bo", "born": "1990-01-02", "score": 2},
            {"name": "Cy", "score": 3},
        ]});
        insert(&mut workbook, 0, rows);
        insert(
            &mut workbook,
            1,
            serde_json::json!({"data": [{"event": "x"}]}),
        );
        assert!(workbook.appends_to(&before));
        let mut out = Cursor::new(Vec::new());
        rewrite.save(&workbook, &mut out).expect("saved again");
        let saved = read_back(out);

        assert_eq!(saved, written_whole(&workbook));
        let people = &saved.sheets[0];
        assert_eq!(people.row(1)[0], Cell::Text("Ann".into()));
        assert_eq!(people.row(3)[0], Cell::Text("Cy".into()));
        assert_eq!(people.layout.autofilter.map(|r| r.last_row), Some(3));
        assert_ne!(people.layout.format(3, 2), 0, "formats copied down");
        assert_eq!(saved.sheets[1].row(1), [Cell::Text("x".into())]);

        // And once more, with nothing appended.
        let mut out = Cursor::new(Vec::new());
        rewrite
            .save(&workbook, &mut out)
            .expect("saved a third time");
        assert_eq!(read_back(out), saved);
    }

    /// Row settings: a height of its own.
    fn tall() -> RowProps {
        RowProps {
            height: Some(30.0),
            ..RowProps::default()
        }
    }

    /// The XML of the first sheet of a written workbook.
    fn sheet_xml(bytes: &[u8]) -> String {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
        let mut xml = String::new();
        let mut part = zip.by_name("xl/worksheets/sheet1.xml").expect("sheet 1");
        std::io::Read::read_to_string(&mut part, &mut xml).expect("UTF-8");
        xml
    }

    #[test]
    fn a_last_row_with_settings_is_written_once() {
        let mut workbook = workbook();
        workbook.sheets[0].layout.rows.insert(1, tall());
        let mut out = Cursor::new(Vec::new());
        write_workbook(&workbook, &mut out).expect("written");
        let xml = sheet_xml(out.get_ref());
        assert_eq!(xml.matches("<row r=\"2\"").count(), 1, "{xml}");
        assert_eq!(read_back(out).sheets[0].layout.rows[&1].height, Some(30.0));
    }

    #[test]
    fn rows_with_settings_at_or_below_the_last_cells_are_not_saved_again() {
        // The writer would write the tall row at the first save, after
        // which it ignores writes to rows above it: appended rows would be
        // lost.
        let mut workbook = workbook();
        for row in [9, 1] {
            workbook.sheets[0].layout.rows = [(row, tall())].into();
            assert!(
                !Rewrite::begin(&workbook).expect("begun").resumable(),
                "{row}"
            );
        }
        // Above the last row with cells, it is written with the rows.
        workbook.sheets[0].layout.rows = [(0, tall())].into();
        assert!(Rewrite::begin(&workbook).expect("begun").resumable());
    }

    /// A cell of a generated sheet.
    fn any_cell() -> impl proptest::strategy::Strategy<Value = Cell> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Cell::Empty),
            (-1e6..1e6f64).prop_map(Cell::Number),
            "[a-z <&]{0,6}".prop_map(Cell::Text),
            any::<bool>().prop_map(Cell::Bool),
            (1.0..50_000.0f64).prop_map(|d| Cell::DateTime(d.floor())),
        ]
    }

    /// Rows of 0 to 4 cells, each with a format id of 0 to 2.
    fn any_rows(
        rows: std::ops::Range<usize>,
    ) -> impl proptest::strategy::Strategy<Value = Vec<Vec<(Cell, u32)>>> {
        use proptest::prelude::*;
        prop::collection::vec(prop::collection::vec((any_cell(), 0..3u32), 0..4), rows)
    }

    /// [`generated`] with `rows` rows holding their own 0-based number, in
    /// column A, of the default format.
    fn numbered(rows: u32, tall_rows: &std::collections::BTreeSet<u32>) -> Workbook {
        let base: Vec<Vec<(Cell, u32)>> = (0..rows)
            .map(|row| vec![(Cell::Number(f64::from(row)), 0)])
            .collect();
        generated(&base, tall_rows)
    }

    /// [`workbook`] with the rows `base` (cells and format ids) in its
    /// first sheet, and the rows `tall_rows` of a height of their own.
    fn generated(
        base: &[Vec<(Cell, u32)>],
        tall_rows: &std::collections::BTreeSet<u32>,
    ) -> Workbook {
        let mut workbook = workbook();
        let sheet = &mut workbook.sheets[0];
        for row in base {
            sheet
                .rows
                .push(row.iter().map(|(cell, _)| cell.clone()).collect());
            sheet
                .layout
                .formats
                .push(row.iter().map(|(_, id)| *id).collect());
        }
        sheet.layout.rows = tall_rows.iter().map(|&row| (row, tall())).collect();
        workbook
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Saving the kept writer again after appends writes the same sheet
        /// XML, byte for byte, as a rewrite of the whole workbook.
        #[test]
        fn a_kept_writer_writes_what_a_whole_rewrite_writes(
            base in any_rows(0..8),
            more in any_rows(1..5),
            tall_rows in proptest::collection::btree_set(0..12u32, 0..3),
            filtered in proptest::bool::ANY,
        ) {
            let mut workbook = generated(&base, &tall_rows);
            let sheet = &mut workbook.sheets[0];
            if !filtered {
                sheet.layout.autofilter = None;
            }
            workbook.formats.push(CellFormat {
                num_format: Some("0.00".into()),
                ..CellFormat::default()
            });
            let mut rewrite = Rewrite::begin(&workbook).expect("begun");
            rewrite.save(&workbook, Cursor::new(Vec::new())).expect("saved");
            if !rewrite.resumable() {
                return Ok(());
            }

            let before = workbook.clone();
            let sheet = &mut workbook.sheets[0];
            let first = sheet.extent();
            for row in &more {
                sheet.rows.push(row.iter().map(|(cell, _)| cell.clone()).collect());
            }
            sheet.layout.rows_appended(first, more.len());
            proptest::prop_assert!(workbook.appends_to(&before));
            let mut kept = Cursor::new(Vec::new());
            rewrite.save(&workbook, &mut kept).expect("saved again");
            let mut whole = Cursor::new(Vec::new());
            write_workbook(&workbook, &mut whole).expect("written");
            proptest::prop_assert_eq!(sheet_xml(kept.get_ref()), sheet_xml(whole.get_ref()));
        }
    }

    /// Every part of a package but its properties (which hold the time of
    /// the save), its styles and its sheets, inflated.
    fn parts_apart_from_cells(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a package");
        let names: Vec<String> = archive
            .file_names()
            .map(|n| n.unwrap().into_owned())
            .collect();
        names
            .into_iter()
            .filter(|name| {
                !["docProps/core.xml", "xl/styles.xml"].contains(&name.as_str())
                    && !name.starts_with("xl/worksheets/sheet")
            })
            .map(|name| {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut archive.by_name(&name).unwrap(), &mut bytes)
                    .unwrap();
                (name, bytes)
            })
            .collect()
    }

    /// Every cell of a workbook read back, with the cell format it shows
    /// (a save may hold formats no cell uses, in another order).
    fn cells_as_shown(bytes: Vec<u8>) -> Vec<(usize, usize, usize, Cell, CellFormat)> {
        let workbook = read_back(Cursor::new(bytes));
        let mut cells = Vec::new();
        for (index, sheet) in workbook.sheets.iter().enumerate() {
            for row in 0..sheet.extent() {
                let width = sheet
                    .row(row)
                    .len()
                    .max(sheet.layout.formats.get(row).map_or(0, Vec::len));
                for column in 0..width {
                    let cell = sheet.row(row).get(column).cloned().unwrap_or(Cell::Empty);
                    let format =
                        workbook.formats[sheet.layout.format(row, column) as usize].clone();
                    cells.push((index, row, column, cell, format));
                }
            }
        }
        cells
    }

    /// The rows of a sheet's dimension, from its part.
    fn dimension_of(bytes: &[u8]) -> String {
        let xml = sheet_xml(bytes);
        let start = xml.find("<dimension ref=\"").expect("a dimension") + 16;
        xml[start..start + xml[start..].find('"').unwrap()].to_owned()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Saves that rewrite only the chunks of rows that changed write
        /// what a rewrite of the whole workbook writes, batch after batch
        /// of updates, appends, deletes and inserts between rows.
        #[test]
        fn saves_in_chunks_write_what_a_whole_rewrite_writes(
            base in any_rows(1..30),
            batches in proptest::collection::vec(
                (
                    proptest::collection::vec((0..40usize, 0..4usize, any_cell()), 0..4),
                    any_rows(0..4),
                    proptest::option::of(0..40usize),
                    proptest::option::of(0..40usize),
                ),
                1..5,
            ),
            tall_rows in proptest::collection::btree_set(0..12u32, 0..3),
            chunk_bytes in 1..400usize,
            chunk_first in proptest::bool::ANY,
        ) {
            let mut workbook = generated(&base, &tall_rows);
            let mut rewrite = Rewrite::begin(&workbook)
                .expect("begun")
                .with_chunks_of(chunk_bytes)
                .keeping_chunks(chunk_first);
            rewrite.save(&workbook, Cursor::new(Vec::new())).expect("saved");
            if !rewrite.resumable() {
                return Ok(());
            }
            if !chunk_first {
                // The first save after an append keeps the rows in chunks.
                let first = workbook.sheets[0].extent();
                workbook.sheets[0].rows.push(vec![Cell::Text("appended".into())]);
                workbook.sheets[0].layout.rows_appended(first, 1);
                rewrite.save(&workbook, Cursor::new(Vec::new())).expect("saved again");
            }
            proptest::prop_assert_eq!(rewrite.files(), 0, "kept in chunks");
            for (updates, appended, deleted, inserted_before) in &batches {
                workbook.take_edits();
                let outline = workbook.outline();
                let sheet = &mut workbook.sheets[0];
                for (row, column, cell) in updates {
                    let row = row % sheet.rows.len();
                    let cells = &mut sheet.rows[row];
                    if cells.len() <= *column {
                        cells.resize(column + 1, Cell::Empty);
                    }
                    cells[*column] = cell.clone();
                    sheet.edited.cells.push((row as u32, *column as u32));
                }
                let first = sheet.extent();
                for row in appended {
                    let at = sheet.rows.len() as u32;
                    sheet.edited.cells.extend((0..row.len() as u32).map(|c| (at, c)));
                    sheet.rows.push(row.iter().map(|(cell, _)| cell.clone()).collect());
                }
                sheet.layout.rows_appended(first, appended.len());
                if let Some(deleted) = deleted {
                    // A data row (the header is row 1), as the API deletes it.
                    let data_rows = workbook.sheets[0].rows.len().saturating_sub(1).max(1);
                    let number = 2 + deleted % data_rows;
                    let body = format!(r#"{{"type": "row", "row": {number}}}"#);
                    let request = DeleteRows::from_json(body.as_bytes()).expect("a delete");
                    let source = workbook.source("People", None).expect("the sheet");
                    let _ = workbook.delete_rows(&source, &request);
                }
                if let Some(before) = inserted_before {
                    // Before a data row or the row after the last, as the API
                    // inserts between rows.
                    let data_rows = workbook.sheets[0].rows.len().saturating_sub(1) + 1;
                    let before = 2 + before % data_rows;
                    let body = br#"{"data": [{"name": "inserted"}, {"name": 2}]}"#;
                    let request = InsertRows::from_json(body, 10).expect("an insert");
                    let source = workbook.source("People", None).expect("the sheet");
                    let _ = workbook.insert_before(&source, request, before as u64);
                }
                let logs = workbook.take_edits();
                let changed = workbook.changed_in_place(&outline, &[&logs]);
                let mut in_part = Cursor::new(Vec::new());
                if let Some(changed) = changed.filter(|c| rewrite.takes(&workbook, c)) {
                    rewrite.save_changed(&workbook, &changed, &mut in_part).expect("saved in part");
                } else {
                    // After a save that met a new format (see `Saved::resave`),
                    // or rows moved from high up: as the commit does.
                    rewrite = Rewrite::begin(&workbook)
                        .expect("begun")
                        .with_chunks_of(chunk_bytes)
                        .keeping_chunks(true);
                    rewrite.save(&workbook, &mut in_part).expect("saved whole");
                }
                let mut whole = Cursor::new(Vec::new());
                write_workbook(&workbook, &mut whole).expect("written");
                proptest::prop_assert_eq!(
                    parts_apart_from_cells(in_part.get_ref()),
                    parts_apart_from_cells(whole.get_ref())
                );
                // The dimension takes in every cell; it may name more when
                // cells at its edge were emptied.
                let (kept, exact) = (dimension_of(in_part.get_ref()), dimension_of(whole.get_ref()));
                let (kept, exact) = (
                    crate::xlsx::package::range_ref(&kept).unwrap(),
                    crate::xlsx::package::range_ref(&exact).unwrap(),
                );
                proptest::prop_assert!(
                    kept.first_row <= exact.first_row && kept.last_row >= exact.last_row
                        && kept.first_column <= exact.first_column
                        && kept.last_column >= exact.last_column,
                    "{:?} does not hold {:?}", kept, exact
                );
                proptest::prop_assert_eq!(
                    cells_as_shown(in_part.into_inner()),
                    cells_as_shown(whole.into_inner())
                );
            }
        }
    }

    /// A sheet part without its dimension.
    fn without_dimension(xml: String) -> String {
        match xml.find("<dimension ") {
            Some(start) => {
                let end = start + xml[start..].find("/>").expect("an empty element") + 2;
                format!("{}{}", &xml[..start], &xml[end..])
            }
            None => xml,
        }
    }

    #[test]
    fn the_last_row_saved_in_part_above_a_row_with_a_height_is_written_once() {
        let mut workbook = numbered(10, &[4, 6].into());
        let mut rewrite = saved_in_chunks_of(&workbook, 1);
        // The update's chunk is row 5 alone: the writer holds it at the
        // save, with heights of its own and below it (row 7).
        workbook.sheets[0].rows[4][0] = Cell::Number(40.0);
        let changed = first_sheet_changed(workbook.sheets.iter().map(Sheet::extent), &[4]);
        let mut in_part = Cursor::new(Vec::new());
        rewrite
            .save_changed(&workbook, &changed, &mut in_part)
            .expect("saved in part");
        let xml = sheet_xml(in_part.get_ref());
        assert_eq!(xml.matches("<row r=\"5\"").count(), 1, "{xml}");
        let mut whole = Cursor::new(Vec::new());
        write_workbook(&workbook, &mut whole).expect("written");
        assert_eq!(
            without_dimension(xml),
            without_dimension(sheet_xml(whole.get_ref()))
        );
    }

    #[test]
    fn rows_appended_below_a_full_last_chunk_are_compressed_in_a_chunk_of_their_own() {
        let mut workbook = numbered(30, &Default::default());
        // A row's XML is about 40 bytes: a chunk of one is under 100 bytes,
        // the last chunk of the first save over it.
        let mut rewrite = saved_in_chunks_of(&workbook, 100);
        let chunks = |rewrite: &Rewrite| chunked(rewrite).chunk_rows(0);
        let first = chunks(&rewrite);
        assert!(first.len() > 1, "{first:?}");
        let append = |workbook: &mut Workbook, rewrite: &mut Rewrite, value: f64| {
            let changed = first_sheet_changed(workbook.sheets.iter().map(Sheet::extent), &[]);
            let sheet = &mut workbook.sheets[0];
            let at = sheet.extent();
            sheet.rows.push(vec![Cell::Number(value)]);
            sheet.layout.rows_appended(at, 1);
            saved_in_part_as_whole(rewrite, workbook, &changed, "an append");
        };
        let row = workbook.sheets[0].extent() as u32;
        append(&mut workbook, &mut rewrite, 30.0);
        assert_eq!(chunks(&rewrite), [&first[..], &[(row, row)]].concat());
        // That chunk is small: the next append is compressed with it.
        append(&mut workbook, &mut rewrite, 31.0);
        assert_eq!(chunks(&rewrite), [&first[..], &[(row, row + 1)]].concat());
    }

    #[test]
    fn rows_moved_on_several_threads_leave_no_short_chunk_where_runs_meet() {
        let mut workbook = numbered(300, &Default::default());
        let mut rewrite = saved_in_chunks_of(&workbook, 100);
        delete_saved_in_part(&mut workbook, &mut rewrite, 3);

        assert_chunks_above_the_last_hold(&rewrite, 100);
    }

    /// Deletes data row `number` (1-based, as the API numbers rows) of the
    /// first sheet and saves in part what that changed, checking it
    /// against a whole rewrite.
    fn delete_saved_in_part(workbook: &mut Workbook, rewrite: &mut Rewrite, number: u32) {
        workbook.take_edits();
        let outline = workbook.outline();
        let body = format!(r#"{{"type": "row", "row": {number}}}"#);
        let request = DeleteRows::from_json(body.as_bytes()).expect("a delete");
        let source = workbook.source("People", None).expect("the sheet");
        assert_eq!(workbook.delete_rows(&source, &request).expect("deleted"), 1);
        let logs = workbook.take_edits();
        let changed = workbook
            .changed_in_place(&outline, &[&logs])
            .expect("in place");
        assert!(rewrite.takes(workbook, &changed), "saved in part");
        saved_in_part_as_whole(rewrite, workbook, &changed, "a delete");
    }

    #[test]
    fn rows_that_moved_once_move_again_as_they_were_compressed() {
        let mut workbook = numbered(300, &Default::default());
        let mut rewrite = saved_in_chunks_of(&workbook, 100);
        delete_saved_in_part(&mut workbook, &mut rewrite, 20);
        let before = chunked(&rewrite).chunk_bytes_kept(0);
        // The rows below row 20 moved: they lean on the rows before them.
        delete_saved_in_part(&mut workbook, &mut rewrite, 150);
        let after = chunked(&rewrite).chunk_bytes_kept(0);
        let kept = (after.iter())
            .filter(|bytes| before.iter().any(|b| std::sync::Arc::ptr_eq(b, bytes)))
            .count();
        // All but the chunk of the row deleted and the one where the first
        // save's second thread began (its first row says its number).
        assert!(kept + 2 >= after.len(), "{kept} of {}", after.len());
        let read = read_back(Cursor::new(part_bytes(&mut rewrite, &workbook)));
        // Below the header and Ann's row, the rows held 0 to 299: rows 20
        // and 150 held 17 and, once row 20 was gone, 148.
        let numbers: Vec<Cell> = (2..read.sheets[0].extent())
            .map(|row| read.sheets[0].row(row)[0].clone())
            .collect();
        let expected: Vec<Cell> = (0..300)
            .filter(|&n| n != 17 && n != 148)
            .map(|n| Cell::Number(f64::from(n)))
            .collect();
        assert_eq!(numbers, expected);
    }

    #[test]
    fn deletes_in_one_place_leave_no_small_chunks_behind() {
        let mut workbook = numbered(300, &Default::default());
        let mut rewrite = saved_in_chunks_of(&workbook, 100);
        for _ in 0..40 {
            delete_saved_in_part(&mut workbook, &mut rewrite, 50);
        }
        // Chunks kept as they were compressed are at least half the size
        // asked for; the chunk the deletes cut through is written again
        // with the next.
        assert_chunks_above_the_last_hold(&rewrite, 50);
    }

    #[test]
    fn a_row_emptied_under_rows_that_lean_on_it_saves_the_sheet_whole() {
        let mut workbook = numbered(300, &Default::default());
        let mut rewrite = saved_in_chunks_of(&workbook, 100);
        delete_saved_in_part(&mut workbook, &mut rewrite, 3);
        // The last row of a chunk whose next chunk leans on it, emptied:
        // the window no longer writes it.
        let rows = chunked(&rewrite).chunk_rows(0);
        let last = rows[rows.len() / 2].1;
        workbook.take_edits();
        workbook.sheets[0].rows[last as usize] = vec![Cell::Empty];
        let changed = first_sheet_changed(workbook.sheets.iter().map(Sheet::extent), &[last]);
        let (in_part, _) = saved_in_part_as_whole(&mut rewrite, &workbook, &changed, "an update");
        // Below the header and Ann's row, the rows held 0 on; with row 3
        // gone, each holds its own 0-based number less one.
        let read = read_back(Cursor::new(in_part));
        assert_eq!(read.sheets[0].row(last as usize), [Cell::Empty; 0]);
        assert_eq!(
            read.sheets[0].row(last as usize + 1)[0],
            Cell::Number(f64::from(last))
        );
    }

    /// What `rewrite` saves of `workbook` when nothing changed.
    fn part_bytes(rewrite: &mut Rewrite, workbook: &Workbook) -> Vec<u8> {
        let changed = first_sheet_changed(workbook.sheets.iter().map(Sheet::extent), &[]);
        let mut out = Cursor::new(Vec::new());
        rewrite
            .save_changed(workbook, &changed, &mut out)
            .expect("saved");
        out.into_inner()
    }

    /// Asserts that every chunk of the first sheet but the last holds at
    /// least `bytes` of XML.
    fn assert_chunks_above_the_last_hold(rewrite: &Rewrite, bytes: u64) {
        let sizes = chunked(rewrite).chunk_sizes(0);
        let (_, above_last) = sizes.split_last().expect("chunks");
        assert!(above_last.iter().all(|&size| size >= bytes), "{sizes:?}");
    }

    /// The chunks `rewrite` keeps its last save's rows in.
    fn chunked(rewrite: &Rewrite) -> &Saved {
        match &rewrite.stage {
            Stage::Chunked(saved, _) => saved,
            Stage::Writer(_) => panic!("rows kept in chunks"),
        }
    }

    /// A rewrite of `workbook` saved once, its rows kept in chunks of about
    /// `bytes` of XML.
    fn saved_in_chunks_of(workbook: &Workbook, bytes: usize) -> Rewrite {
        let mut rewrite = Rewrite::begin(workbook)
            .expect("begun")
            .with_chunks_of(bytes)
            .keeping_chunks(true);
        rewrite
            .save(workbook, Cursor::new(Vec::new()))
            .expect("saved");
        rewrite
    }

    /// What a batch that changed `rows` of the first sheet, and moved
    /// none, changed in sheets of `extents` rows before.
    fn first_sheet_changed(
        extents: impl IntoIterator<Item = usize>,
        rows: &[u32],
    ) -> Vec<RowsChanged> {
        (extents.into_iter().enumerate())
            .map(|(index, extent)| RowsChanged {
                extent,
                rows: if index == 0 {
                    rows.to_vec()
                } else {
                    Vec::new()
                },
                ..RowsChanged::default()
            })
            .collect()
    }

    /// Saves `workbook` in part with `rewrite` (after a batch that
    /// `changed` it) and whole, asserts that every part but the time, the
    /// styles and the sheets' dimensions is the same, and gives both.
    fn saved_in_part_as_whole(
        rewrite: &mut Rewrite,
        workbook: &Workbook,
        changed: &[RowsChanged],
        what: &str,
    ) -> (Vec<u8>, Vec<u8>) {
        let mut in_part = Cursor::new(Vec::new());
        rewrite
            .save_changed(workbook, changed, &mut in_part)
            .expect("saved in part");
        let mut whole = Cursor::new(Vec::new());
        write_workbook(workbook, &mut whole).expect("written");
        let (in_part, whole) = (in_part.into_inner(), whole.into_inner());
        assert_eq!(
            parts_apart_from_cells(&in_part),
            parts_apart_from_cells(&whole),
            "{what}"
        );
        for index in 0..workbook.sheets.len() {
            let name = format!("xl/worksheets/sheet{}.xml", index + 1);
            // Rows that only moved may lean on the row before (see
            // `chunked::moved`): numbered again, they are the writer's.
            assert_eq!(
                without_dimension(
                    String::from_utf8(with_row_numbers(part(&in_part, &name).as_bytes())).unwrap()
                ),
                without_dimension(part(&whole, &name)),
                "{what} {name}"
            );
        }
        (in_part, whole)
    }

    #[test]
    fn saves_in_chunks_of_files_that_carry_what_the_writer_does_not_write_are_whole_rewrites() {
        let (mut tried, mut deleted) = (0, 0);
        for producer in ["openpyxl", "libreoffice"] {
            let dir = format!(
                "{}/fixtures/fidelity/{producer}",
                env!("CARGO_MANIFEST_DIR")
            );
            for entry in std::fs::read_dir(&dir).expect("fixtures") {
                let path = entry.expect("an entry").path();
                if path.extension().is_none_or(|e| e != "xlsx") {
                    continue;
                }
                let bytes = std::fs::read(&path).expect("a fixture");
                let mut workbook = read_workbook(&bytes, usize::MAX).expect("readable");
                let mut rewrite = Rewrite::begin(&workbook)
                    .expect("begun")
                    .with_chunks_of(64)
                    .keeping_chunks(true);
                rewrite
                    .save(&workbook, Cursor::new(Vec::new()))
                    .expect("saved");
                if rewrite.files() > 0 {
                    continue; // Not written in row order (merged ranges, arrays, groups).
                }
                tried += 1;
                let extents: Vec<usize> = workbook.sheets.iter().map(Sheet::extent).collect();
                let sheet = &mut workbook.sheets[0];
                let middle = sheet.rows.len() / 2;
                let mut rows = Vec::new();
                if let Some(cells) = sheet.rows.get_mut(middle) {
                    cells.resize(cells.len().max(1), Cell::Empty);
                    cells[0] = Cell::Text("changed".into());
                    rows.push(middle as u32);
                }
                let first = sheet.extent();
                // Below the last row with a value: a row with only formats
                // may be there already, and is changed.
                if sheet.rows.len() < first {
                    rows.push(sheet.rows.len() as u32);
                }
                sheet
                    .rows
                    .push(vec![Cell::Number(7.0), Cell::Text("appended".into())]);
                sheet.layout.rows_appended(first, 1);
                let changed = first_sheet_changed(extents, &rows);
                assert!(rewrite.takes(&workbook, &changed));
                let (in_part, whole) =
                    saved_in_part_as_whole(&mut rewrite, &workbook, &changed, &format!("{path:?}"));
                assert_eq!(rewrite.files(), 0, "{path:?} saved in part");
                assert_eq!(cells_as_shown(in_part), cells_as_shown(whole), "{path:?}");

                // Then a delete of the middle data row, as the API makes it.
                workbook.take_edits();
                let outline = workbook.outline();
                let name = workbook.sheets[0].name.clone();
                let number = 2 + workbook.sheets[0].rows.len() / 2;
                let body = format!(r#"{{"type": "row", "row": {number}}}"#);
                let request = DeleteRows::from_json(body.as_bytes()).expect("a delete");
                let source = workbook.source(&name, None).expect("the sheet");
                if workbook.delete_rows(&source, &request).is_err()
                    || crate::xlsx::carried_rows_moved(&mut workbook).is_err()
                {
                    continue;
                }
                let logs = workbook.take_edits();
                let Some(changed) = workbook.changed_in_place(&outline, &[&logs]) else {
                    continue;
                };
                deleted += 1;
                let what = format!("{path:?} after a delete");
                saved_in_part_as_whole(&mut rewrite, &workbook, &changed, &what);
            }
        }
        assert!(tried >= 20, "{tried} fixtures saved in part");
        assert!(deleted >= 10, "{deleted} deletes saved in part");
    }

    /// A one-sheet package whose `<sheetData>` is `cells`.
    fn package_with_cells(cells: &str) -> Vec<u8> {
        package_with(cells, "")
    }

    /// A package whose first sheet has `cells` for its rows, followed by
    /// the elements `after_cells`.
    fn package_with(cells: &str, after_cells: &str) -> Vec<u8> {
        let mut book = rust_xlsxwriter::Workbook::new();
        book.add_worksheet().write(0, 0, 1).expect("written");
        let bytes = book.save_to_buffer().expect("saved");
        repackaged(bytes, |name, xml| {
            if name == "xl/worksheets/sheet1.xml" {
                let start = xml.find("<sheetData").expect("sheet data");
                let end = xml.find("</sheetData>").expect("its end") + 12;
                let sheet_data = format!("<sheetData>{cells}</sheetData>{after_cells}");
                xml.replace_range(start..end, &sheet_data);
            }
        })
    }

    /// The package `bytes` with each part's XML changed by `change`.
    fn repackaged(bytes: Vec<u8>, mut change: impl FnMut(&str, &mut String)) -> Vec<u8> {
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for i in 0..archive.len() {
            let mut part = archive.by_index(i).expect("a part");
            let name = part.name().expect("a name").into_owned();
            let mut xml = String::new();
            std::io::Read::read_to_string(&mut part, &mut xml).expect("UTF-8");
            change(&name, &mut xml);
            out.start_file(name, zip::write::SimpleFileOptions::default())
                .expect("started");
            std::io::Write::write_all(&mut out, xml.as_bytes()).expect("written");
        }
        out.finish().expect("finished").into_inner()
    }

    /// The `<c>` element of `reference` in a sheet's XML.
    fn cell_xml<'a>(xml: &'a str, reference: &str) -> &'a str {
        let start = xml
            .find(&format!("<c r=\"{reference}\""))
            .unwrap_or_else(|| panic!("{reference} in {xml}"));
        let end = xml[start..]
            .find("</c>")
            .map_or(xml.len(), |i| start + i + 4);
        &xml[start..end]
    }

    /// The part `name` of the package `bytes`, inflated.
    fn part(bytes: &[u8], name: &str) -> String {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
        let mut xml = String::new();
        let mut part = zip.by_name(name).expect("the part");
        std::io::Read::read_to_string(&mut part, &mut xml).expect("UTF-8");
        xml
    }

    #[test]
    fn a_date_in_an_east_asian_builtin_format_keeps_it() {
        let package = package_with(r#"<row r="1"><c r="A1" s="1"><v>45000</v></c></row>"#, "");
        // Its styles given a second cell format: the zh-CN date of id 31,
        // which no numFmt spells out.
        let package = repackaged(package, |name, xml| {
            if name == "xl/styles.xml" {
                let end = xml.find("</cellXfs>").expect("cell formats");
                xml.insert_str(end, r#"<xf numFmtId="31" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>"#);
                *xml = xml.replacen(r#"<cellXfs count="1">"#, r#"<cellXfs count="2">"#, 1);
            }
        });
        let workbook = read_workbook(&package, usize::MAX).expect("reads");
        assert!(
            matches!(workbook.sheets[0].row(0)[0], Cell::DateTime(_)),
            "read as a date"
        );
        let mut out = Cursor::new(Vec::new());
        write_workbook(&workbook, &mut out).expect("written");
        let xml = sheet_xml(out.get_ref());
        let cell = cell_xml(&xml, "A1");
        let style: usize = cell
            .split("s=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|s| s.parse().ok())
            .expect("a cell format");
        let styles = part(out.get_ref(), "xl/styles.xml");
        let xfs = &styles[styles.find("<cellXfs").expect("cell formats")..];
        let xf = xfs.split("<xf ").nth(style + 1).expect("the cell's format");
        assert!(xf.starts_with(r#"numFmtId="31""#), "{cell} has {xf}");
    }

    #[test]
    fn a_long_sheet_that_carries_elements_is_merged_in_pieces() {
        let validation = r#"<dataValidations count="1"><dataValidation type="whole" sqref="B1:B5"><formula1>0</formula1></dataValidation></dataValidations>"#;
        for spaced in [false, true] {
            let rows: String = (1..=15_000)
                .map(|n| match spaced {
                    // A text result with an outer space: a fix on every row.
                    true => format!(
                        r#"<row r="{n}"><c r="A{n}" t="str"><f>"x "</f><v>x </v></c><c r="B{n}"><v>{n}</v></c></row>"#
                    ),
                    false => format!(r#"<row r="{n}"><c r="B{n}"><v>{n}</v></c></row>"#),
                })
                .collect();
            let package = package_with(&rows, validation);
            let workbook = read_workbook(&package, usize::MAX).expect("reads");
            let mut out = Cursor::new(Vec::new());
            write_workbook(&workbook, &mut out).expect("written");
            let xml = sheet_xml(out.get_ref());
            assert!(xml.len() > 2 << 18, "more than two pieces of cells");
            assert!(xml.contains(validation), "the carried element kept");
            assert!(xml.ends_with("</worksheet>"));
            if spaced {
                let fixed = r#"<v xml:space="preserve">x </v>"#;
                assert_eq!(xml.matches(fixed).count(), 15_000, "every row fixed");
            }
            assert_eq!(read_back(out).sheets[0].rows, workbook.sheets[0].rows);
        }
    }

    #[test]
    fn values_and_formula_texts_are_written_as_the_file_has_them() {
        let cells = concat!(
            r#"<row r="1"><c r="A1" t="e"><v>#NULL!</v></c>"#,
            r#"<c r="B1" t="e"><f>1/0</f><v>#DIV/0!</v></c>"#,
            r#"<c r="C1"><f t="array" ref="C1:D2">{1,2;3,4}</f><v>1</v></c>"#,
            r#"<c r="D1"><v>2</v></c>"#,
            r#"<c r="E1" t="str"><f>"World "</f><v>World </v></c></row>"#,
            r#"<row r="2"><c r="A2" t="inlineStr"><is><t>City </t></is></c>"#,
            r#"<c r="B2" t="inlineStr"><is><t>a_x000d_b _x005F_x0041_</t></is></c>"#,
            r#"<c r="C2"><v>3</v></c><c r="D2"><v>4</v></c>"#,
            r#"<c r="E2"><f>B2 +&#10;  B3</f><v>0</v></c></row>"#,
        );
        let workbook = read_workbook(&package_with_cells(cells), usize::MAX).expect("reads");
        let sheet = &workbook.sheets[0];
        assert_eq!(sheet.row(0)[0], Cell::Error("#NULL!".into()));
        assert_eq!(sheet.row(1)[0], Cell::Text("City".into()), "calamine trims");
        assert_eq!(sheet.row(1)[1], Cell::Text("a\rb _x0041_".into()));

        let mut out = Cursor::new(Vec::new());
        write_workbook(&workbook, &mut out).expect("written");
        let xml = sheet_xml(out.get_ref());
        assert_eq!(cell_xml(&xml, "A1"), r#"<c r="A1" t="e"><v>#NULL!</v></c>"#);
        assert_eq!(
            cell_xml(&xml, "B1"),
            r#"<c r="B1" t="e"><f>1/0</f><v>#DIV/0!</v></c>"#
        );
        assert!(
            cell_xml(&xml, "C1").contains(r#"<f t="array" ref="C1:D2">{1,2;3,4}</f>"#),
            "{xml}"
        );
        assert_eq!(
            cell_xml(&xml, "E1"),
            r#"<c r="E1" t="str"><f>"World "</f><v xml:space="preserve">World </v></c>"#
        );
        assert_eq!(
            cell_xml(&xml, "A2"),
            r#"<c r="A2" t="inlineStr"><is><t>City </t></is></c>"#
        );
        assert_eq!(
            cell_xml(&xml, "B2"),
            r#"<c r="B2" t="inlineStr"><is><t>a_x000d_b _x005F_x0041_</t></is></c>"#
        );
        assert!(cell_xml(&xml, "E2").contains("<f>B2 +\n  B3</f>"), "{xml}");
        assert_eq!(read_back(out).sheets[0].rows, sheet.rows);
    }

    #[test]
    fn a_changed_text_is_written_as_the_writer_spells_it() {
        let cells = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>a_x000d_b</t></is></c></row>"#;
        let mut workbook = read_workbook(&package_with_cells(cells), usize::MAX).expect("reads");
        workbook.sheets[0].rows[0][0] = Cell::Text("a\rc".into());
        let mut out = Cursor::new(Vec::new());
        write_workbook(&workbook, &mut out).expect("written");
        let xml = sheet_xml(out.get_ref());
        assert!(cell_xml(&xml, "A1").contains("a_x000D_c"), "{xml}");
        assert_eq!(
            read_back(out).sheets[0].rows[0][0],
            Cell::Text("a\rc".into())
        );
    }

    #[test]
    fn sheets_with_merged_cells_are_saved_again() {
        // The merge step writes merged ranges: the writer holds none.
        let mut merged = workbook();
        merged.sheets[1].layout.merges.push(Range {
            last_column: 1,
            ..Range::cell(0, 0)
        });
        assert!(Rewrite::begin(&merged).expect("begun").resumable());
    }
}
