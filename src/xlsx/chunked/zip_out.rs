//! A package written entry by entry from bytes already compressed: parts
//! copied as they are from another package, and parts given as joined
//! deflate segments. (The zip crate compresses what it is given, or copies
//! from another archive, but does not take compressed bytes otherwise.)

use std::io::{self, Cursor, Read, Write};
use std::sync::Arc;

use zip::read::ZipFile;

use super::deflate::{END, Segment, Sum};

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const END_OF_CENTRAL: u32 = 0x0605_4b50;
const DEFLATED: u16 = 8;
/// Version 2.0, which deflate needs.
const VERSION: u16 = 20;
/// General purpose flag bit 11: the name is UTF-8.
const UTF8: u16 = 1 << 11;

/// Where a package is written. The chunks of rows a save keeps for the
/// next are handed over shared ([`KeptWrite::write_kept`]), so that an
/// output that can keep them without a copy, and know them again at the
/// next save, does; any other output copies them as it copies other bytes.
pub trait KeptWrite: Write {
    /// Writes `bytes`, which the save keeps.
    fn write_kept(&mut self, bytes: &Arc<[u8]>) -> io::Result<()> {
        self.write_all(bytes)
    }
}

impl<W: KeptWrite + ?Sized> KeptWrite for &mut W {
    fn write_kept(&mut self, bytes: &Arc<[u8]>) -> io::Result<()> {
        (**self).write_kept(bytes)
    }
}

impl KeptWrite for Cursor<Vec<u8>> {}

/// One entry's fields, shared by its local and central headers.
struct Header<'a> {
    name: &'a str,
    method: u16,
    time: u16,
    date: u16,
    crc: u32,
    compressed: u64,
    size: u64,
}

/// A package being written to `out`; [`PackageOut::finish`] ends it.
pub(super) struct PackageOut<W> {
    out: W,
    offset: u64,
    central: Vec<u8>,
    entries: u16,
}

impl<W: KeptWrite> PackageOut<W> {
    pub(super) fn new(out: W) -> PackageOut<W> {
        PackageOut {
            out,
            offset: 0,
            central: Vec::new(),
            entries: 0,
        }
    }

    /// Copies `file`, opened raw, as it is compressed.
    pub(super) fn copy<R: Read>(&mut self, mut file: ZipFile<'_, R>) -> io::Result<()> {
        let (time, date) = dos_time(&file);
        let name = file.name().map_err(io::Error::other)?.into_owned();
        let mut compressed = Vec::with_capacity(file.compressed_size() as usize);
        file.read_to_end(&mut compressed)?;
        let header = Header {
            name: &name,
            method: method_id(&file)?,
            time,
            date,
            crc: file.crc32(),
            compressed: compressed.len() as u64,
            size: file.size(),
        };
        self.entry(&header)?;
        self.out.write_all(&compressed)
    }

    /// An entry named `name` whose data is `segments` joined, which sum
    /// up to `sum` (the caller may know it without going through them),
    /// with the MS-DOS `time` and date of [`dos_time`].
    pub(super) fn deflated(
        &mut self,
        name: &str,
        (time, date): (u16, u16),
        segments: &[&Segment],
        sum: Sum,
    ) -> io::Result<()> {
        debug_assert_eq!(sum, Sum::of(segments.iter().copied()), "the sum of {name}");
        let compressed =
            (segments.iter().map(|s| s.deflated.len() as u64)).sum::<u64>() + END.len() as u64;
        let (crc, size) = (sum.crc, sum.len);
        let header = Header {
            name,
            method: DEFLATED,
            time,
            date,
            crc,
            compressed,
            size,
        };
        self.entry(&header)?;
        for segment in segments {
            self.out.write_kept(&segment.deflated)?;
        }
        self.out.write_all(&END)
    }

    /// Writes the local header of an entry, whose data the caller writes
    /// next, and notes its central one.
    fn entry(&mut self, header: &Header<'_>) -> io::Result<()> {
        let too_large = || io::Error::other("a part is too large for a package without zip64");
        let compressed = u32::try_from(header.compressed).map_err(|_| too_large())?;
        let size = u32::try_from(header.size).map_err(|_| too_large())?;
        let offset = u32::try_from(self.offset).map_err(|_| too_large())?;
        self.entries = self.entries.checked_add(1).ok_or_else(too_large)?;
        let flags = if header.name.is_ascii() { 0 } else { UTF8 };
        let name = header.name.as_bytes();
        let name_len = u16::try_from(name.len()).map_err(|_| too_large())?;
        let common = |bytes: &mut Vec<u8>| {
            bytes.extend(VERSION.to_le_bytes());
            bytes.extend(flags.to_le_bytes());
            bytes.extend(header.method.to_le_bytes());
            bytes.extend(header.time.to_le_bytes());
            bytes.extend(header.date.to_le_bytes());
            bytes.extend(header.crc.to_le_bytes());
            bytes.extend(compressed.to_le_bytes());
            bytes.extend(size.to_le_bytes());
            bytes.extend(name_len.to_le_bytes());
            bytes.extend(0u16.to_le_bytes()); // no extra field
        };
        let mut local = Vec::with_capacity(30 + name.len());
        local.extend(LOCAL.to_le_bytes());
        common(&mut local);
        local.extend(name);
        let central = &mut self.central;
        central.extend(CENTRAL.to_le_bytes());
        central.extend(VERSION.to_le_bytes()); // made by
        common(central);
        central.extend([0; 8]); // comment length, disk, internal and external attributes
        central.extend([0; 2]);
        central.extend(offset.to_le_bytes());
        central.extend(name);
        self.out.write_all(&local)?;
        self.offset += local.len() as u64 + header.compressed;
        Ok(())
    }

    /// Writes the central directory; gives back the output.
    pub(super) fn finish(mut self) -> io::Result<W> {
        let too_large = || io::Error::other("the package is too large without zip64");
        let size = u32::try_from(self.central.len()).map_err(|_| too_large())?;
        let offset = u32::try_from(self.offset).map_err(|_| too_large())?;
        let mut end = Vec::with_capacity(22);
        end.extend(END_OF_CENTRAL.to_le_bytes());
        end.extend([0; 4]); // this disk, the directory's disk
        end.extend(self.entries.to_le_bytes());
        end.extend(self.entries.to_le_bytes());
        end.extend(size.to_le_bytes());
        end.extend(offset.to_le_bytes());
        end.extend([0; 2]); // no comment
        self.out.write_all(&self.central)?;
        self.out.write_all(&end)?;
        Ok(self.out)
    }
}

/// The MS-DOS time and date of an entry.
pub(super) fn dos_time<R: Read>(file: &ZipFile<'_, R>) -> (u16, u16) {
    let time = file.last_modified().unwrap_or_default();
    (time.timepart(), time.datepart())
}

/// The method number of an entry copied: stored or deflated, the two the
/// package's writers use.
fn method_id<R: Read>(file: &ZipFile<'_, R>) -> io::Result<u16> {
    match file.compression() {
        zip::CompressionMethod::Stored => Ok(0),
        zip::CompressionMethod::Deflated => Ok(DEFLATED),
        other => Err(io::Error::other(format!("a part compressed by {other:?}"))),
    }
}
