//! A workbook's last save, kept so that the next one costs what changed
//! rather than what the sheets hold.
//!
//! Nearly all of a package is its sheets' rows. After a save, each sheet's
//! rows are kept compressed in chunks of consecutive rows, each chunk a
//! deflate segment of its own (see [`deflate`]). The next save writes
//! through rust_xlsxwriter only the rows of the chunks that changed — the
//! chunk a cell was updated in, the last chunk when rows are appended —
//! in a small package of its own, the *window*, which has every other
//! part whole: styles, workbook, carried parts, and each sheet's part with
//! what precedes and follows its rows. The new package is the window's,
//! each sheet's rows being the kept chunks with the changed ones
//! replaced: unchanged chunks are copied as they are compressed, and their
//! CRC-32s are combined, not computed again.
//!
//! The window's cells point at formats by the index the writer gives them,
//! which is the order in which it first met them: the window's writer is
//! given the formats in the order the last save's writer met them (see
//! `Formats::replay` in [`super::write`]). What it then writes for the
//! styles must be what the last save wrote, or the kept cells' indices
//! could point elsewhere: when it is not, [`Saved::resave`] writes
//! nothing and the workbook is rewritten whole.

mod deflate;
mod moved;
mod zip_out;

use std::io::{Cursor, Read};
use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem;
use zip::ZipArchive;

use self::deflate::{Deflater, Segment, Sum};
use self::moved::Moved;
pub use self::zip_out::KeptWrite;
use self::zip_out::{PackageOut, dos_time};
use super::WriteError;
use super::fix::range_name;
use super::merge::{Pieces, read_part, sheet_index, zip_error};
use super::package::range_ref;
use crate::model::RowsChanged;
use crate::model::layout;

/// About how many bytes of a sheet's XML rows a chunk holds: a change
/// costs compressing up to twice this much again (a fraction of a
/// millisecond), and the rows compress about 2.5 % less well than in one
/// stream (measured on 100k rows; chunks of 256 KiB lost under 1 %, but an
/// update cost four times as much).
pub(super) const CHUNK_BYTES: usize = 1 << 16;

const STYLES: &str = "xl/styles.xml";

/// The last save of a workbook, its sheets' rows in compressed chunks.
pub(super) struct Saved {
    /// By sheet, in the workbook's order.
    sheets: Vec<SavedSheet>,
    /// The styles part written, inflated.
    styles: Vec<u8>,
    chunk_bytes: usize,
    /// Whether rows that move may lean on the row before (see [`moved`]);
    /// when not, each says its number.
    lean: bool,
}

/// One sheet's rows as last saved.
#[derive(Default)]
struct SavedSheet {
    /// In row order; each holds the rows from its `first_row` to the next
    /// chunk's (the first chunk's from row 0, the last's to the end).
    chunks: Vec<Chunk>,
    /// The `ref` of the part's `<dimension>`.
    dimension: Option<layout::Range>,
    /// The sums of the chunks' rows from the first chunk to each, as far
    /// as they were summed: a save sums again only from the first chunk
    /// it replaced (an append, only the last).
    sums: Vec<Sum>,
}

struct Chunk {
    first_row: u32,
    /// The number of the last row it holds (0-based; 0 for none).
    last_row: u32,
    /// The rows (0-based, in order) with a formula that may name other
    /// rows: when rows move, these are written again (see [`moved`]).
    formulas: Vec<u32>,
    numbering: Numbering,
    segment: Segment,
}

/// How a chunk's rows carry their numbers. The writer numbers every row
/// it writes, in its `r` and each of its cells'. A row that only moved is
/// kept without them where it can be (see [`moved`]): it *leans* on the
/// row before it, whose number it follows, as every reader counts rows
/// and cells that do not say where they are. A chunk whose rows all lean
/// moves with the rows above it without being written again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Numbering {
    /// The number (0-based) its first row has when that row leans on the
    /// row before it, the last of the chunk before: the chunk stays right
    /// only while that row is numbered one less.
    leans_from: Option<u32>,
    /// Whether some row says its number: moving the chunk writes it again.
    numbered: bool,
    /// Whether its last row is an element with content, which a row after
    /// it can lean on (a reader that counts rows skips an empty `<row/>`).
    open_end: bool,
}

impl Numbering {
    /// How `rows` (each with its 0-based number) are numbered.
    fn of(rows: &[(u32, &[u8])]) -> Numbering {
        Numbering {
            leans_from: (rows.first()).and_then(|&(number, xml)| leans(xml).then_some(number)),
            numbered: rows.iter().any(|&(_, xml)| !leans(xml)),
            open_end: rows.last().is_some_and(|&(_, xml)| has_content(xml)),
        }
    }
}

impl Chunk {
    /// The chunk of the rows `raw`, the first numbered `first_row` (or,
    /// for the first chunk of a sheet, 0), after the row numbered
    /// `before` (0-based) if any: the number a first row that leans has.
    fn of(
        first_row: u32,
        raw: &[u8],
        before: Option<u32>,
        deflater: &mut Deflater,
    ) -> std::io::Result<Chunk> {
        let rows = each_row(raw, before);
        Ok(Chunk {
            first_row,
            last_row: rows.last().map_or(0, |&(number, _)| number),
            formulas: formula_rows(&rows),
            numbering: Numbering::of(&rows),
            segment: deflater.segment(raw)?,
        })
    }

    /// This chunk's rows and then `next`'s, as one chunk; `next` may not
    /// lean on this one's last row unless it is numbered one less.
    fn joined(self, next: Chunk) -> std::io::Result<Chunk> {
        let (first, then) = (self.numbering, next.numbering);
        if then
            .leans_from
            .is_some_and(|n| !first.open_end || n != self.last_row + 1)
        {
            return Err(std::io::Error::other(
                "chunks joined where a row leans on another",
            ));
        }
        let mut raw = self.segment.inflate()?;
        raw.extend_from_slice(&next.segment.inflate()?);
        let mut formulas = self.formulas;
        formulas.extend(next.formulas);
        Ok(Chunk {
            first_row: self.first_row,
            last_row: next.last_row,
            formulas,
            numbering: Numbering {
                leans_from: first.leans_from,
                numbered: first.numbered || then.numbered,
                open_end: then.open_end,
            },
            segment: Deflater::new().segment(&raw)?,
        })
    }
}

impl SavedSheet {
    /// The chunk row `row` (0-based) belongs to.
    fn chunk_of(&self, row: u32) -> usize {
        let after = self.chunks.partition_point(|c| c.first_row <= row);
        after.saturating_sub(1)
    }

    /// The rows chunk `index` holds: from its first (row 0 for the first
    /// chunk) to the next chunk's (the end of the sheet for the last).
    fn span(&self, index: usize) -> Range<u32> {
        let start = match index {
            0 => 0,
            _ => self.chunks[index].first_row,
        };
        let end = (self.chunks.get(index + 1)).map_or(u32::MAX, |c| c.first_row);
        start..end
    }

    /// Whether rows appended after a batch that `changed` these rows (whose
    /// `dirty` chunks are rewritten anyway) go into a chunk of their own
    /// rather than into the last: when the last chunk is not rewritten and
    /// already holds `chunk_bytes`, and every row it holds is above them
    /// (asked only when no row moved). An append then compresses its rows
    /// and at most a chunk, whatever the size of the last chunk.
    fn takes_tail(&self, changed: &RowsChanged, dirty: &[usize], chunk_bytes: usize) -> bool {
        let Some(last) = self.chunks.last() else {
            return false;
        };
        dirty.last() != Some(&(self.chunks.len() - 1))
            && last.segment.len as usize >= chunk_bytes
            && (last.last_row as usize) < changed.extent
    }
}

/// Which rows of a sheet the next save writes: the chunks that changed.
pub(super) struct Dirty {
    /// The chunks rewritten, in order; none when the sheet had no rows
    /// kept (then all its rows are written).
    chunks: Vec<usize>,
    /// The first row of a chunk added after the last, for rows appended
    /// below every row kept.
    tail: Option<u32>,
    /// After rows moved: the chunks from the first that moved are made
    /// again from the rows kept and the window's (see [`moved`]).
    moved: Option<Moved>,
    /// The rows the window writes: those of `chunks`, the new chunk's and
    /// those `moved` takes from the window, in order.
    pub(super) rows: Vec<Range<usize>>,
}

impl Saved {
    /// Writes `package`, the package a whole save made, to `out` with each
    /// sheet's rows compressed in chunks, and keeps the chunks. `sheets`
    /// is the number of the workbook's sheets. `None`, with the package
    /// written as it is, when a part is too large for a package without
    /// zip64 (4 GiB, which only rust_xlsxwriter's own writer goes past).
    pub(super) fn adopt<W: KeptWrite>(
        package: &[u8],
        sheets: usize,
        chunk_bytes: usize,
        lean: bool,
        mut out: W,
    ) -> Result<Option<Saved>, WriteError> {
        let mut archive = ZipArchive::new(Cursor::new(package)).map_err(zip_error)?;
        if too_large(&mut archive)? {
            out.write_all(package)?;
            return Ok(None);
        }
        let mut saved = Saved {
            sheets: (0..sheets).map(|_| SavedSheet::default()).collect(),
            styles: read_part(&mut archive, STYLES)?,
            chunk_bytes,
            lean,
        };
        let mut out = PackageOut::new(out);
        let mut deflater = Deflater::new();
        for index in 0..archive.len() {
            let name = name_at(&archive, index)?;
            let Some(sheet) = sheet_index(&name).filter(|&s| s < sheets) else {
                out.copy(archive.by_index_raw(index).map_err(zip_error)?)?;
                continue;
            };
            let file = archive.by_index(index).map_err(zip_error)?;
            let time = dos_time(&file);
            let mut pieces = Pieces::sized(file, chunk_bytes);
            let (head, tail) = match pieces.head()? {
                None => around_rows(&pieces.rest()?)
                    .map(|(head, _, tail)| (head.to_vec(), tail.to_vec()))
                    .ok_or_else(|| no_rows_element(&name))?,
                Some(head) => {
                    let chunks = &mut saved.sheets[sheet].chunks;
                    while let Some((piece, last)) = pieces.next_piece()? {
                        let rows = piece.strip_prefix(DATA_START).unwrap_or(&piece);
                        let rows = match last {
                            true => rows.strip_suffix(DATA_END).unwrap_or(rows),
                            false => rows,
                        };
                        let first_row = match chunks.is_empty() {
                            true => 0,
                            false => first_row(rows).unwrap_or(u32::MAX),
                        };
                        if !rows.is_empty() {
                            chunks.push(Chunk::of(first_row, rows, None, &mut deflater)?);
                        }
                    }
                    (head, pieces.tail())
                }
            };
            let kept = &mut saved.sheets[sheet];
            kept.dimension = dimension(&head);
            kept.write_part(&mut out, &name, time, &head, &tail)?;
        }
        out.finish()?;
        Ok(Some(saved))
    }

    /// Whether the next save can be made in part after a batch that
    /// `changed` these rows, sheets of `extents` rows now. When rows moved,
    /// the rows [`Moved`] has the window write must be at most a quarter
    /// of the sheet's. (The window writes its rows through the writer,
    /// compresses them twice and holds them inflated: beyond a quarter, a
    /// whole rewrite costs less time and memory.)
    pub(super) fn takes(&self, extents: &[usize], changed: &[RowsChanged]) -> bool {
        let mut sheets = self.sheets.iter().zip(extents).zip(changed);
        sheets.all(|((saved, &extent), changed)| match changed.moved_from() {
            None => true,
            Some(_) => Moved::plan(saved, changed, self.lean).is_some_and(|plan| {
                let written = plan.window.len() + extent.saturating_sub(plan.window_from as usize);
                written * 4 <= extent
            }),
        })
    }

    /// The rows each sheet of `workbook` needs written for the next save,
    /// given the rows `changed` since this one.
    pub(super) fn dirty(&self, extents: &[usize], changed: &[RowsChanged]) -> Vec<Dirty> {
        let sheets = self.sheets.iter().zip(extents).zip(changed);
        sheets
            .map(|((saved, &extent), changed)| {
                if saved.chunks.is_empty() {
                    return Dirty {
                        chunks: Vec::new(),
                        tail: None,
                        moved: None,
                        rows: std::iter::once(0..extent).collect(),
                    };
                }
                let moved = Moved::plan(saved, changed, self.lean);
                let mut chunks: Vec<usize> =
                    changed.rows.iter().map(|&r| saved.chunk_of(r)).collect();
                let last = saved.chunks.len() - 1;
                // Rows moved: the chunks from the first that moved are made again.
                if let Some(moved) = &moved {
                    chunks.retain(|&c| c < moved.from_chunk);
                }
                chunks.sort_unstable();
                chunks.dedup();
                let mut tail = None;
                if extent != changed.extent && moved.is_none() {
                    match saved.takes_tail(changed, &chunks, self.chunk_bytes) {
                        true => tail = Some(changed.extent as u32),
                        false if chunks.last() != Some(&last) => chunks.push(last),
                        false => {}
                    }
                }
                let spans = chunks.iter().map(|&c| saved.span(c));
                let spans = spans.chain(tail.map(|first| first..u32::MAX));
                let window = (moved.iter()).flat_map(|m| {
                    m.window
                        .iter()
                        .map(|&r| r..r + 1)
                        .chain(std::iter::once(m.window_from..u32::MAX))
                });
                let rows = spans
                    .chain(window)
                    .map(|span| (span.start as usize).min(extent)..(span.end as usize).min(extent))
                    .filter(|rows| !rows.is_empty())
                    .collect();
                Dirty {
                    chunks,
                    tail,
                    moved,
                    rows,
                }
            })
            .collect()
    }

    /// Writes to `out` the package `window` (written with the rows
    /// [`Saved::dirty`] gave for `dirty`, and the formats in the order the
    /// last save met them), each sheet's rows made of the kept chunks with
    /// the window's in place of those it rewrote, and keeps the chunks of
    /// this save. False, with nothing written, when the window's styles
    /// are not the last save's (or its sheets not the last save's).
    pub(super) fn resave<W: KeptWrite>(
        &mut self,
        window: &[u8],
        dirty: &[Dirty],
        out: W,
    ) -> Result<bool, WriteError> {
        let mut archive = ZipArchive::new(Cursor::new(window)).map_err(zip_error)?;
        if dirty.len() != self.sheets.len() || read_part(&mut archive, STYLES)? != self.styles {
            return Ok(false);
        }
        let rows: u64 = (self.sheets.iter().flat_map(|s| &s.chunks))
            .map(|c| c.segment.deflated.len() as u64 + c.segment.len)
            .sum();
        if rows + window.len() as u64 >= u64::from(u32::MAX) {
            return Ok(false);
        }
        // Every sheet's new chunks are made before anything is written or
        // kept, so that a kept row not as expected leaves this save whole.
        let mut parts = Vec::new();
        for index in 0..archive.len() {
            let name = name_at(&archive, index)?;
            let Some(sheet) = sheet_index(&name).filter(|&s| s < self.sheets.len()) else {
                continue;
            };
            let mut file = archive.by_index(index).map_err(zip_error)?;
            let time = dos_time(&file);
            let mut xml = Vec::with_capacity(file.size() as usize);
            file.read_to_end(&mut xml)?;
            let (head, rows, _) = around_rows(&xml).ok_or_else(|| no_rows_element(&name))?;
            let saved = &self.sheets[sheet];
            let written = dimension(head);
            let kept = match &dirty[sheet].moved {
                Some(moved) => moved.dimension(saved.dimension),
                None => saved.dimension,
            };
            let dimension = match (saved.chunks.is_empty(), rows) {
                // The window wrote every row.
                (true, _) => written,
                // The window wrote no rows: its dimension names none.
                (false, []) => kept,
                (false, _) => union(kept, written),
            };
            let splices = saved.splices(&dirty[sheet], &each_row(rows, None), self.chunk_bytes)?;
            let Some(splices) = splices.filter(|splices| saved.leans_hold(splices)) else {
                return Ok(false);
            };
            parts.push((index, sheet, time, xml, dimension, splices));
        }
        let mut parts = parts.into_iter().peekable();
        let mut out = PackageOut::new(out);
        for index in 0..archive.len() {
            let Some((_, sheet, time, xml, dimension, splices)) = parts.next_if(|p| p.0 == index)
            else {
                out.copy(archive.by_index_raw(index).map_err(zip_error)?)?;
                continue;
            };
            let name = name_at(&archive, index)?;
            let (head, _, tail) = around_rows(&xml).ok_or_else(|| no_rows_element(&name))?;
            let saved = &mut self.sheets[sheet];
            saved.dimension = dimension;
            saved.apply(splices);
            let head = with_dimension(head, saved.dimension);
            saved.write_part(&mut out, &name, time, &head, tail)?;
        }
        out.finish()?;
        Ok(true)
    }

    /// The first and last row of each chunk of sheet `sheet`.
    #[cfg(test)]
    pub(super) fn chunk_rows(&self, sheet: usize) -> Vec<(u32, u32)> {
        let chunks = &self.sheets[sheet].chunks;
        chunks.iter().map(|c| (c.first_row, c.last_row)).collect()
    }

    /// The bytes of XML each chunk of sheet `sheet` holds.
    #[cfg(test)]
    pub(super) fn chunk_sizes(&self, sheet: usize) -> Vec<u64> {
        let chunks = &self.sheets[sheet].chunks;
        chunks.iter().map(|c| c.segment.len).collect()
    }

    /// The compressed bytes of each chunk of sheet `sheet`.
    #[cfg(test)]
    pub(super) fn chunk_bytes_kept(&self, sheet: usize) -> Vec<std::sync::Arc<[u8]>> {
        let chunks = &self.sheets[sheet].chunks;
        chunks.iter().map(|c| c.segment.deflated.clone()).collect()
    }

    /// The bytes this save holds.
    pub(super) fn bytes(&self) -> usize {
        let chunks = self.sheets.iter().flat_map(|s| &s.chunks);
        let chunk = |c: &Chunk| c.segment.deflated.len() + c.formulas.len() * size_of::<u32>();
        self.styles.len() + chunks.map(chunk).sum::<usize>()
    }
}

impl SavedSheet {
    /// Writes the sheet's part `name` to `out`: `head`, the rows kept and
    /// `tail`.
    fn write_part<W: KeptWrite>(
        &mut self,
        out: &mut PackageOut<W>,
        name: &str,
        time: (u16, u16),
        head: &[u8],
        tail: &[u8],
    ) -> std::io::Result<()> {
        let (open, close) = data_element(&self.chunks, head, tail)?;
        let sum = open.sum().then(self.rows_sum()).then(close.sum());
        let parts: Vec<&Segment> = [&open]
            .into_iter()
            .chain(self.chunks.iter().map(|c| &c.segment))
            .chain([&close])
            .collect();
        out.deflated(name, time, &parts, sum)
    }

    /// The sum of every chunk's rows, summing those not summed yet.
    fn rows_sum(&mut self) -> Sum {
        let mut sum = self.sums.last().copied().unwrap_or_default();
        for chunk in &self.chunks[self.sums.len()..] {
            sum = sum.then(chunk.segment.sum());
            self.sums.push(sum);
        }
        sum
    }

    /// What takes the place of the `dirty` chunks: the window's `rows` in
    /// their spans (rows outside them the window wrote only for its own
    /// sake), its appended rows after the last, and the chunks from the
    /// first whose rows moved made again; each as the chunks (in chunks of
    /// about `chunk_bytes`) that replace a run of the kept ones, back to
    /// front. `None` when a kept row is not as expected.
    fn splices(
        &self,
        dirty: &Dirty,
        rows: &[(u32, &[u8])],
        chunk_bytes: usize,
    ) -> std::io::Result<Option<Vec<Splice>>> {
        let len = self.chunks.len();
        let spans: Vec<(Range<usize>, Range<u32>)> = match self.chunks.is_empty() {
            true => vec![(0..0, 0..u32::MAX)],
            false => (dirty.chunks.iter().map(|&c| (c..c + 1, self.span(c))))
                .chain(dirty.tail.map(|first| (len..len, first..u32::MAX)))
                .collect(),
        };
        // The writer writes rows in order: each span's are found by halving.
        debug_assert!(rows.windows(2).all(|pair| pair[0].0 < pair[1].0));
        let mut splices = Vec::with_capacity(spans.len() + 1);
        for (replaced, span) in spans {
            let first = rows.partition_point(|(row, _)| *row < span.start);
            let end = rows.partition_point(|(row, _)| *row < span.end);
            let chunks = in_chunks(&rows[first..end], span.start, chunk_bytes)?;
            splices.push((replaced, chunks));
        }
        if let Some(moved) = &dirty.moved {
            match moved.chunks(self, rows, chunk_bytes)? {
                Some(chunks) => splices.push((moved.from_chunk..len, chunks)),
                None => return Ok(None),
            }
        }
        splices.reverse();
        Ok(Some(splices))
    }

    /// Whether, once the `splices` are made, each chunk whose first row
    /// leans on the row before follows a chunk that ends with that row,
    /// with content. A window that no longer writes a row a kept chunk
    /// leans on (a row whose cells were all emptied) fails this, and the
    /// save is made whole.
    fn leans_hold(&self, splices: &[Splice]) -> bool {
        let mut order: Vec<&Splice> = splices.iter().collect();
        order.sort_unstable_by_key(|(replaced, _)| replaced.start);
        let mut sequence: Vec<&Chunk> = Vec::with_capacity(self.chunks.len());
        let mut at = 0;
        for (replaced, chunks) in order {
            sequence.extend(&self.chunks[at..replaced.start]);
            sequence.extend(chunks);
            at = replaced.end;
        }
        sequence.extend(&self.chunks[at..]);
        let mut before: Option<&Chunk> = None;
        sequence.into_iter().all(|chunk| {
            let holds = match (chunk.numbering.leans_from, before) {
                (None, _) => true,
                (Some(first), None) => first == 0,
                (Some(first), Some(before)) => {
                    before.numbering.open_end && before.last_row + 1 == first
                }
            };
            before = Some(chunk);
            holds
        })
    }

    /// Makes the `splices` (back to front, so that the indices before stay
    /// as they were).
    fn apply(&mut self, splices: Vec<Splice>) {
        let first = splices.iter().map(|(replaced, _)| replaced.start).min();
        self.sums.truncate(first.unwrap_or(self.sums.len()));
        for (replaced, chunks) in splices {
            self.chunks.splice(replaced, chunks);
        }
        if let Some(first) = self.chunks.first_mut() {
            first.first_row = 0;
        }
    }
}

/// Kept chunks, by index, and the chunks that replace them.
type Splice = (Range<usize>, Vec<Chunk>);

/// `rows` (each with its 0-based number) compressed in chunks of about
/// `chunk_bytes` (from once to twice that, the last taking in what is
/// left, so that rewriting a chunk leaves no small ones behind), the first
/// one starting at `first_row`; none for no rows.
fn in_chunks(
    rows: &[(u32, &[u8])],
    first_row: u32,
    chunk_bytes: usize,
) -> std::io::Result<Vec<Chunk>> {
    let mut chunks = Vec::new();
    let mut deflater = Deflater::new();
    let mut left: usize = rows.iter().map(|r| r.1.len()).sum();
    let mut start = 0;
    while start < rows.len() {
        let mut end = start;
        let mut bytes = 0;
        let take_all = left < 2 * chunk_bytes;
        while end < rows.len() && (end == start || take_all || bytes < chunk_bytes) {
            bytes += rows[end].1.len();
            end += 1;
        }
        left -= bytes;
        let raw: Vec<u8> = rows[start..end]
            .iter()
            .flat_map(|r| r.1.iter().copied())
            .collect();
        let first = match chunks.is_empty() {
            true => first_row,
            false => rows[start].0,
        };
        chunks.push(Chunk::of(first, &raw, None, &mut deflater)?);
        start = end;
    }
    Ok(chunks)
}

const DATA_START: &[u8] = b"<sheetData>";
const DATA_END: &[u8] = b"</sheetData>";
const DATA_EMPTY: &[u8] = b"<sheetData/>";

/// What comes before the rows (`head` and the opening of `<sheetData>`)
/// and after them (its end and `tail`), as segments: `<sheetData/>` when
/// there are no rows.
fn data_element(chunks: &[Chunk], head: &[u8], tail: &[u8]) -> std::io::Result<(Segment, Segment)> {
    let (open, close) = match chunks.is_empty() {
        true => (DATA_EMPTY, &b""[..]),
        false => (DATA_START, DATA_END),
    };
    Ok((
        Segment::of(&[head, open].concat())?,
        Segment::of(&[close, tail].concat())?,
    ))
}

/// A sheet part's XML cut around its rows: what precedes `<sheetData`,
/// the rows, what follows the element.
fn around_rows(xml: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let start = memmem::find(xml, b"<sheetData")?;
    let open_end = start + xml[start..].iter().position(|&b| b == b'>')? + 1;
    if xml[..open_end].ends_with(b"/>") {
        return Some((&xml[..start], &[], &xml[open_end..]));
    }
    let close = open_end + memmem::rfind(&xml[open_end..], DATA_END)?;
    Some((
        &xml[..start],
        &xml[open_end..close],
        &xml[close + DATA_END.len()..],
    ))
}

/// Each `<row>` element of `rows` (nothing comes between them) with its
/// 0-based number: its own, or for a row that leans, the number after the
/// row before it (the first row's, after `before`). A row the writer
/// wrote twice is taken once, as first written: rust_xlsxwriter's
/// constant-memory mode writes again, empty, the row it holds at a save
/// when that row has settings of its own, which a window whose rows end
/// above the sheet's last meets.
fn each_row(rows: &[u8], before: Option<u32>) -> Vec<(u32, &[u8])> {
    let mut each = row_elements(rows, before);
    each.dedup_by_key(|&mut (row, _)| row);
    each
}

/// Every `<row>` element of `rows`, as [`each_row`] numbers them, a row
/// written twice twice.
fn row_elements(rows: &[u8], before: Option<u32>) -> Vec<(u32, &[u8])> {
    static START: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(ROW_START));
    let starts: Vec<usize> = (START.find_iter(rows))
        .filter(|&at| matches!(rows.get(at + ROW_START.len()), Some(b' ' | b'>' | b'/')))
        .collect();
    let ends = starts.iter().skip(1).copied().chain([rows.len()]);
    let mut last = before;
    (starts.iter().zip(ends))
        .map(|(&start, end)| {
            let xml = &rows[start..end];
            let row = match xml.strip_prefix(ROW) {
                Some(digits) => row_number(digits),
                None => last.map_or(0, |last| last.saturating_add(1)),
            };
            last = Some(row);
            (row, xml)
        })
        .collect()
}

const ROW_START: &[u8] = b"<row";
const ROW: &[u8] = b"<row r=\"";
const CELL: &[u8] = b"<c r=\"";

/// Whether a `<row>` element leans on the row before it: it does not say
/// its number.
fn leans(row: &[u8]) -> bool {
    !row.starts_with(ROW)
}

/// Whether a `<row>` element has content, rather than being empty.
fn has_content(row: &[u8]) -> bool {
    row.trim_ascii_end().ends_with(b"</row>")
}

/// The rows (0-based, in order) of `rows` with a formula that may name
/// other rows: an `<f>` element with a digit in it (a cell reference has
/// one; `TRUE()` or `SUM(A:A)` have none, and keep their text when rows
/// move). Other elements starting `<f` in a row are taken for formulas
/// too, which costs only time.
fn formula_rows(rows: &[(u32, &[u8])]) -> Vec<u32> {
    (rows.iter())
        .filter(|(_, xml)| names_cells(xml))
        .map(|&(row, _)| row)
        .collect()
}

/// Whether a row holds a formula with a digit in it.
fn names_cells(row: &[u8]) -> bool {
    static OPEN: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"<f"));
    static CLOSE: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"</f>"));
    let mut from = 0;
    while let Some(at) = OPEN.find(&row[from..]).map(|at| from + at) {
        let end = match memchr::memchr(b'>', &row[at..]) {
            Some(close) if row[at + close - 1] == b'/' => at + close,
            Some(close) => CLOSE
                .find(&row[at + close..])
                .map_or(row.len(), |e| at + close + e),
            None => row.len(),
        };
        if row[at..end].iter().any(u8::is_ascii_digit) {
            return true;
        }
        from = end.max(at + 2);
    }
    false
}

/// A sheet part's XML with each row that leans on the row before (see
/// [`moved`]) saying its number, as the writer writes it: how a save in
/// part is compared with a whole rewrite, byte for byte.
pub fn with_row_numbers(xml: &[u8]) -> Vec<u8> {
    // Rows that are there are a piece of `xml` (no rows are `&[]`).
    let Some((_, rows, _)) = around_rows(xml).filter(|(_, rows, _)| !rows.is_empty()) else {
        return xml.to_vec();
    };
    let start = rows.as_ptr() as usize - xml.as_ptr() as usize;
    let elements = row_elements(rows, None);
    // Whatever comes before the first row, as it is.
    let first = elements.first().map_or(rows.len(), |(_, row)| {
        row.as_ptr() as usize - rows.as_ptr() as usize
    });
    let mut out = xml[..start + first].to_vec();
    for (number, row) in elements {
        let mark = out.len();
        if !(leans(row) && moved::number(row, number.saturating_add(1), &mut out)) {
            out.truncate(mark);
            out.extend_from_slice(row);
        }
    }
    out.extend_from_slice(&xml[start + rows.len()..]);
    out
}

/// The number (0-based) of the first `<row>` of `rows`, written whole (so
/// every row says its number).
fn first_row(rows: &[u8]) -> Option<u32> {
    memmem::find(rows, ROW).map(|start| row_number(&rows[start + ROW.len()..]))
}

/// The 0-based number of the row whose `r` attribute's value `digits`
/// begins with.
fn row_number(digits: &[u8]) -> u32 {
    let length = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    let number: Option<u32> = std::str::from_utf8(&digits[..length])
        .ok()
        .and_then(|n| n.parse().ok());
    number.unwrap_or(1).saturating_sub(1)
}

/// The range of a sheet part's `<dimension>`, found in `head`.
fn dimension(head: &[u8]) -> Option<layout::Range> {
    let (start, end) = dimension_ref(head)?;
    range_ref(std::str::from_utf8(&head[start..end]).ok()?)
}

/// Where the value of `<dimension ref="…">` is in `head`.
fn dimension_ref(head: &[u8]) -> Option<(usize, usize)> {
    const REF: &[u8] = b"<dimension ref=\"";
    let start = memmem::find(head, REF)? + REF.len();
    let end = start + memchr::memchr(b'"', &head[start..])?;
    Some((start, end))
}

/// `head` with its dimension's `ref` naming `range`.
fn with_dimension(head: &[u8], range: Option<layout::Range>) -> Vec<u8> {
    match (dimension_ref(head), range) {
        (Some((start, end)), Some(range)) => {
            [&head[..start], range_name(range).as_bytes(), &head[end..]].concat()
        }
        _ => head.to_vec(),
    }
}

/// The smallest range holding both.
fn union(a: Option<layout::Range>, b: Option<layout::Range>) -> Option<layout::Range> {
    match (a, b) {
        (Some(a), Some(b)) => Some(layout::Range {
            first_row: a.first_row.min(b.first_row),
            first_column: a.first_column.min(b.first_column),
            last_row: a.last_row.max(b.last_row),
            last_column: a.last_column.max(b.last_column),
        }),
        (a, b) => a.or(b),
    }
}

/// Whether a part of the package, or the package with the sheets' rows
/// compressed again, could pass what a package without zip64 holds.
fn too_large(archive: &mut ZipArchive<Cursor<&[u8]>>) -> Result<bool, WriteError> {
    let mut total = 0u64;
    for index in 0..archive.len() {
        let file = archive.by_index_raw(index).map_err(zip_error)?;
        total += file.size() + file.compressed_size();
    }
    Ok(total >= u64::from(u32::MAX))
}

fn name_at(archive: &ZipArchive<Cursor<&[u8]>>, index: usize) -> Result<String, WriteError> {
    match archive.name_for_index(index) {
        Some(name) => Ok(name.map_err(zip_error)?.into_owned()),
        None => Err(zip_error(zip::result::ZipError::FileNotFound)),
    }
}

fn no_rows_element(name: &str) -> WriteError {
    WriteError::Io(std::io::Error::other(format!("{name} has no <sheetData>")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_that_lean_are_numbered_again_and_nothing_else_changes() {
        let xml = concat!(
            r#"<worksheet><sheetData><row r="2"><c r="A2"><v>1</v></c></row>"#,
            r#"<row><c><v>2</v></c><c t="s"><v>0</v></c></row>"#,
            r#"<row r="3" ht="30" customHeight="1"/>"#,
            r#"<row r="9"><c r="B9"><v>9</v></c></row><row><c><v>10</v></c></row>"#,
            r#"</sheetData></worksheet>"#
        );
        // The row that leans after row 2 is row 3, and after row 9 row 10;
        // a row given twice stays twice, for the comparison to see it.
        assert_eq!(
            String::from_utf8(with_row_numbers(xml.as_bytes())).unwrap(),
            concat!(
                r#"<worksheet><sheetData><row r="2"><c r="A2"><v>1</v></c></row>"#,
                r#"<row r="3"><c r="A3"><v>2</v></c><c r="B3" t="s"><v>0</v></c></row>"#,
                r#"<row r="3" ht="30" customHeight="1"/>"#,
                r#"<row r="9"><c r="B9"><v>9</v></c></row><row r="10"><c r="A10"><v>10</v></c></row>"#,
                r#"</sheetData></worksheet>"#
            )
        );
        let empty = b"<worksheet><sheetData/></worksheet>";
        assert_eq!(with_row_numbers(empty), empty);
    }
}
