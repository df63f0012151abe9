//! The merge's two packages: the one rust_xlsxwriter produced, read part by
//! part, and the merged one, written at the writer's compression level.

use std::collections::HashSet;
use std::io::{Cursor, Read, Seek, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::xlsx::WriteError;

/// The package the writer produced, which the merge reads from.
pub(super) struct Source<'a> {
    pub(super) archive: ZipArchive<Cursor<&'a [u8]>>,
    /// The names of its parts.
    pub(super) produced: &'a HashSet<&'a str>,
}

impl Source<'_> {
    /// A part, inflated.
    pub(super) fn read(&mut self, name: &str) -> Result<Vec<u8>, WriteError> {
        read(&mut self.archive, name)
    }

    /// A part, to inflate as it is read.
    pub(super) fn open(&mut self, name: &str) -> Result<impl Read + '_, WriteError> {
        self.archive.by_name(name).map_err(zip_error)
    }

    /// Copies a part to `zip` as compressed.
    pub(super) fn copy<W: Write + Seek>(
        &mut self,
        name: &str,
        zip: &mut ZipWriter<W>,
    ) -> Result<(), WriteError> {
        let file = self.archive.by_name(name).map_err(zip_error)?;
        zip.raw_copy_file(file).map_err(zip_error)
    }
}

pub(in crate::xlsx) fn zip_error(error: impl std::fmt::Display) -> WriteError {
    WriteError::Io(std::io::Error::other(error.to_string()))
}

/// The part `name` of `archive`, inflated.
pub(in crate::xlsx) fn read<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    name: &str,
) -> Result<Vec<u8>, WriteError> {
    let mut bytes = Vec::new();
    archive
        .by_name(name)
        .map_err(zip_error)?
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

pub(super) fn put<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    name: &str,
    bytes: &[u8],
) -> Result<(), WriteError> {
    start(zip, name)?;
    zip.write_all(bytes)?;
    Ok(())
}

/// Begins the part `name` in `zip`, for what is written to `zip` next.
pub(super) fn start<W: Write + Seek>(zip: &mut ZipWriter<W>, name: &str) -> Result<(), WriteError> {
    // The writer's own level: see `Rewrite::begin`.
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(2));
    zip.start_file(name, options).map_err(zip_error)
}
