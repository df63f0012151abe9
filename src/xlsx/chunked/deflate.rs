//! Deflate segments that can be joined: each is compressed on its own and
//! ends byte-aligned (a sync flush), without the final block, so any run
//! of them followed by [`END`] is one deflate stream, and the run's CRC-32
//! is combined from theirs without reading the bytes again.

use std::sync::Arc;

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};

/// The empty final block that ends a stream of joined segments.
pub(super) const END: [u8; 2] = [0x03, 0x00];

/// Some bytes, compressed as a segment. The compressed bytes are shared:
/// a chunk kept as it was compressed when its rows moved (see
/// [`super::moved`]) is not copied.
#[derive(Debug, Clone)]
pub(super) struct Segment {
    pub(super) deflated: Arc<[u8]>,
    /// CRC-32 and length of the bytes before compression.
    pub(super) crc: u32,
    pub(super) len: u64,
}

impl Segment {
    /// `raw` compressed at the rewrite's level.
    pub(super) fn of(raw: &[u8]) -> std::io::Result<Segment> {
        Deflater::new().segment(raw)
    }

    /// The bytes compressed.
    pub(super) fn inflate(&self) -> std::io::Result<Vec<u8>> {
        let mut raw = Vec::with_capacity(self.len as usize);
        let mut inflater = Decompress::new(false);
        while (raw.len() as u64) < self.len {
            let read = inflater.total_in() as usize;
            let before = raw.len();
            inflater
                .decompress_vec(&self.deflated[read..], &mut raw, FlushDecompress::Sync)
                .map_err(std::io::Error::other)?;
            if raw.len() == before {
                break;
            }
        }
        match raw.len() as u64 == self.len && crc32fast::hash(&raw) == self.crc {
            true => Ok(raw),
            false => Err(std::io::Error::other(
                "a kept chunk does not inflate to what was compressed",
            )),
        }
    }
}

/// A compressor at the rewrite's level, used again for segment after
/// segment: making one allocates and clears a few hundred KiB of tables.
pub(super) struct Deflater(Compress);

impl Deflater {
    pub(super) fn new() -> Deflater {
        let level = u32::from(crate::xlsx::write::COMPRESSION_LEVEL);
        Deflater(Compress::new(Compression::new(level), false))
    }

    /// `raw` compressed as a segment.
    pub(super) fn segment(&mut self, raw: &[u8]) -> std::io::Result<Segment> {
        let compress = &mut self.0;
        compress.reset();
        let mut deflated = Vec::with_capacity(raw.len() / 4 + 64);
        loop {
            if deflated.capacity() - deflated.len() < 64 {
                deflated.reserve(deflated.capacity().max(1024));
            }
            let read = compress.total_in() as usize;
            compress
                .compress_vec(&raw[read..], &mut deflated, FlushCompress::Sync)
                .map_err(std::io::Error::other)?;
            // Flushed once the input is taken and the output had room left.
            if compress.total_in() as usize == raw.len() && deflated.len() < deflated.capacity() {
                break;
            }
        }
        Ok(Segment {
            deflated: deflated.into(),
            crc: crc32fast::hash(raw),
            len: raw.len() as u64,
        })
    }
}

/// The CRC-32 and length of some bytes before compression, which sum up
/// as the bytes are joined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Sum {
    pub(super) crc: u32,
    pub(super) len: u64,
}

impl Sum {
    /// The sum of these bytes followed by `next`'s.
    pub(super) fn then(self, next: Sum) -> Sum {
        let mut crc = crc32fast::Hasher::new_with_initial_len(self.crc, self.len);
        crc.combine(&crc32fast::Hasher::new_with_initial_len(next.crc, next.len));
        Sum {
            crc: crc.finalize(),
            len: self.len + next.len,
        }
    }

    /// The sum of `segments` joined.
    pub(super) fn of<'a>(segments: impl IntoIterator<Item = &'a Segment>) -> Sum {
        (segments.into_iter()).fold(Sum::default(), |sum, s| sum.then(s.sum()))
    }
}

impl Segment {
    pub(super) fn sum(&self) -> Sum {
        Sum {
            crc: self.crc,
            len: self.len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn joined_segments_inflate_to_the_joined_bytes() {
        let parts: Vec<Vec<u8>> = vec![
            b"<row r=\"1\"><c r=\"A1\"><v>1</v></c></row>".repeat(500),
            Vec::new(),
            (0..=255u8).cycle().take(70_000).collect(),
            b"</sheetData></worksheet>".to_vec(),
        ];
        let segments: Vec<Segment> = parts.iter().map(|p| Segment::of(p).unwrap()).collect();
        let mut stream: Vec<u8> = segments
            .iter()
            .flat_map(|s| s.deflated.iter().copied())
            .collect();
        stream.extend(END);
        let mut inflated = Vec::new();
        flate2::read::DeflateDecoder::new(&stream[..])
            .read_to_end(&mut inflated)
            .unwrap();
        let whole = parts.concat();
        assert_eq!(inflated, whole);
        let sum = Sum::of(&segments);
        assert_eq!(
            (sum.crc, sum.len),
            (crc32fast::hash(&whole), whole.len() as u64)
        );
        let (first, rest) = segments.split_at(2);
        assert_eq!(Sum::of(first).then(Sum::of(rest)), sum);
        // Each inflates on its own; one damaged does not pass for another.
        for (segment, part) in segments.iter().zip(&parts) {
            assert_eq!(&segment.inflate().unwrap(), part);
        }
        let mut damaged = segments[0].clone();
        damaged.crc ^= 1;
        assert!(damaged.inflate().is_err());
    }
}
