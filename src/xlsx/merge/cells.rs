//! A worksheet part read in pieces: what precedes its cells, the cells a
//! piece at a time (each piece ending where a row does), then what follows
//! them. A sheet's cells are nearly all of its part; the merge passes them
//! on without holding them whole.

use std::io::Read;

use crate::xlsx::xml::{find, rfind};

/// About how much of the cells a piece holds.
const PIECE: usize = 1 << 18;

const CELLS_END: &[u8] = b"</sheetData>";
const ROW_END: &[u8] = b"</row>";

pub(in crate::xlsx) struct Pieces<R> {
    reader: R,
    /// About how much of the cells a piece holds.
    piece: usize,
    /// Read and not yet given out.
    buffer: Vec<u8>,
    /// How much of `buffer` was searched for the end of the cells and of
    /// rows: a row of many megabytes (one cell's rich text) is read in
    /// many fills, each searched once, not with all before it again.
    searched: usize,
    /// Where the last row ends in the part searched.
    row_end: Option<usize>,
    /// The reader has nothing more.
    ended: bool,
    /// What follows the cells, once reached.
    tail: Option<Vec<u8>>,
}

impl<R: Read> Pieces<R> {
    pub(in crate::xlsx) fn new(reader: R) -> Pieces<R> {
        Pieces::sized(reader, PIECE)
    }

    /// Pieces of about `piece` bytes.
    pub(in crate::xlsx) fn sized(reader: R, piece: usize) -> Pieces<R> {
        Pieces {
            reader,
            piece: piece.max(1),
            buffer: Vec::new(),
            searched: 0,
            row_end: None,
            ended: false,
            tail: None,
        }
    }

    /// Reads a piece more (less only where the reader ends); false once
    /// the reader has ended.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.ended {
            return Ok(false);
        }
        let had = self.buffer.len();
        let read = (&mut self.reader)
            .take(self.piece as u64)
            .read_to_end(&mut self.buffer)?;
        debug_assert_eq!(self.buffer.len(), had + read);
        self.ended = read < self.piece;
        Ok(read > 0)
    }

    /// What precedes the cells (`<sheetData>` not included), when the part
    /// has cells to stream; `None` when it has none (`<sheetData/>`, or no
    /// such element), and then [`Pieces::rest`] gives the whole part.
    pub(in crate::xlsx) fn head(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        const OPEN: &[u8] = b"<sheetData";
        // Each fill is searched once, with the end of the one before: for
        // the tag, then, once it is found, for its end.
        let mut searched = 0;
        let mut tag: Option<usize> = None;
        loop {
            let from = searched;
            if tag.is_none() {
                searched = self.buffer.len().saturating_sub(OPEN.len() - 1);
                tag = find(&self.buffer[from..], OPEN).map(|at| from + at);
                searched = tag.unwrap_or(searched);
            }
            if let Some(start) = tag {
                let from = searched.max(start);
                searched = self.buffer.len();
                if let Some(end) = find(&self.buffer[from..], b">").map(|at| from + at) {
                    if self.buffer[..end].ends_with(b"/") {
                        return Ok(None);
                    }
                    return Ok(Some(self.buffer.drain(..start).collect()));
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// All that is left of the part.
    pub(in crate::xlsx) fn rest(mut self) -> std::io::Result<Vec<u8>> {
        self.reader.read_to_end(&mut self.buffer)?;
        Ok(self.buffer)
    }

    /// The next piece of the cells and whether it is the last (the one
    /// ending with `</sheetData>`); `None` after the last.
    pub(in crate::xlsx) fn next_piece(&mut self) -> std::io::Result<Option<(Vec<u8>, bool)>> {
        if self.tail.is_some() {
            return Ok(None);
        }
        loop {
            // What was searched before, but for a tag it may end in part.
            let from = self.searched.saturating_sub(CELLS_END.len() - 1);
            self.searched = self.buffer.len();
            if let Some(at) = find(&self.buffer[from..], CELLS_END) {
                let piece = self.buffer.drain(..from + at + CELLS_END.len()).collect();
                let mut tail = std::mem::take(&mut self.buffer);
                self.reader.read_to_end(&mut tail)?;
                self.tail = Some(tail);
                return Ok(Some((piece, true)));
            }
            if let Some(at) = rfind(&self.buffer[from..], ROW_END) {
                self.row_end = Some(from + at + ROW_END.len());
            }
            if self.buffer.len() >= self.piece
                && let Some(end) = self.row_end.take()
            {
                let piece = self.buffer.drain(..end).collect();
                self.searched -= end;
                return Ok(Some((piece, false)));
            }
            if !self.fill()? {
                // No end to the cells: what is left is all there is.
                self.tail = Some(Vec::new());
                return Ok(Some((std::mem::take(&mut self.buffer), true)));
            }
        }
    }

    /// What follows the cells, once [`Pieces::next_piece`] has given the
    /// last piece.
    pub(in crate::xlsx) fn tail(self) -> Vec<u8> {
        self.tail.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives at most `step` bytes at a time.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn sheet(rows: usize) -> Vec<u8> {
        let mut xml = String::from(r#"<worksheet><dimension ref="A1"/><sheetData>"#);
        for row in 1..=rows {
            xml.push_str(&format!(
                r#"<row r="{row}"><c r="A{row}"><v>{row}</v></c></row>"#
            ));
        }
        xml.push_str(r#"</sheetData><pageMargins left="0.7"/></worksheet>"#);
        xml.into_bytes()
    }

    #[test]
    fn the_cells_come_in_pieces_that_end_where_rows_do() {
        let xml = sheet(40_000);
        for step in [7, 4096, 1 << 20] {
            let mut pieces = Pieces::new(Trickle { bytes: &xml, step });
            let head = pieces.head().unwrap().expect("the sheet has cells");
            assert_eq!(head, br#"<worksheet><dimension ref="A1"/>"#);
            let mut cells = Vec::new();
            let mut count = 0;
            while let Some((piece, last)) = pieces.next_piece().unwrap() {
                count += 1;
                match last {
                    true => assert!(piece.ends_with(b"</sheetData>")),
                    false => assert!(piece.ends_with(b"</row>"), "step {step}"),
                }
                cells.extend_from_slice(&piece);
            }
            assert!(count > 1, "{} bytes of cells in one piece", cells.len());
            let tail = pieces.tail();
            assert_eq!(tail, br#"<pageMargins left="0.7"/></worksheet>"#);
            assert_eq!([head, cells, tail].concat(), xml, "step {step}");
        }
    }

    /// Fills smaller than a tag: each is searched once, with the end of
    /// the one before, and a tag cut between two is still found.
    #[test]
    fn tags_cut_between_fills_are_found() {
        let mut xml = sheet(300);
        let long_head = br#"<worksheet><cols><col min="1" max="2" width="9"/></cols>"#;
        xml.splice(..b"<worksheet>".len(), long_head.iter().copied());
        for piece in [1, 3, 7, 12, 64, 4096] {
            let mut pieces = Pieces::sized(&xml[..], piece);
            let head = pieces.head().unwrap().expect("the sheet has cells");
            assert!(head.ends_with(br#"<dimension ref="A1"/>"#), "piece {piece}");
            let mut cells = Vec::new();
            while let Some((piece, last)) = pieces.next_piece().unwrap() {
                let end: &[u8] = if last { CELLS_END } else { ROW_END };
                assert!(piece.ends_with(end), "{}", String::from_utf8_lossy(&piece));
                cells.extend_from_slice(&piece);
            }
            assert_eq!([head, cells, pieces.tail()].concat(), xml, "piece {piece}");
        }
    }

    #[test]
    fn a_part_without_cells_is_read_whole() {
        for xml in [
            &br#"<worksheet><sheetData/><pageMargins/></worksheet>"#[..],
            br#"<worksheet><pageMargins/></worksheet>"#,
        ] {
            for piece in [1, 5, 1 << 18] {
                let mut pieces = Pieces::sized(
                    Trickle {
                        bytes: xml,
                        step: 5,
                    },
                    piece,
                );
                assert_eq!(pieces.head().unwrap(), None, "piece {piece}");
                assert_eq!(pieces.rest().unwrap(), xml);
            }
        }
    }
}
