//! Replacing a file so that a crash leaves the old or the new one, never a
//! torn one: temp file in the same directory, fsync, rename, fsync directory.

use std::fs::{File, Metadata};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::StoreError;
use super::cache::FileIdentity;
use super::version::Tag;

/// Every temp file starts with this, followed by the spreadsheet id and `-`,
/// so start-up can find the leftovers of a crash and whose they were.
pub const TEMP_PREFIX: &str = ".sheetd-tmp-";

/// Writes a new version of `target` with `write` and swaps it in atomically.
/// `owner` names the temp file (see [`TEMP_PREFIX`]). Returns the metadata
/// of the file written, taken before the rename (which keeps its inode and
/// times), so it describes that file even if another one replaces it next.
pub fn replace_atomically(
    target: &Path,
    owner: &str,
    write: impl FnOnce(&mut Output<'_>) -> Result<(), StoreError>,
) -> Result<Metadata, StoreError> {
    let written = Prepared::write(target, owner, write)?.rename()?;
    sync_dir(directory(target))?;
    Ok(written)
}

/// A new version of a file, written and synced beside it, not yet renamed
/// over it; dropped, it is removed.
pub struct Prepared<'a> {
    target: &'a Path,
    temp: tempfile::NamedTempFile,
    written: Metadata,
    tag: Tag,
}

fn directory(target: &Path) -> &Path {
    target.parent().expect("a data file lives in a directory")
}

impl<'a> Prepared<'a> {
    /// Writes the new version of `target` with `write` to a temp file in
    /// its directory and syncs it.
    pub fn write(
        target: &'a Path,
        owner: &str,
        write: impl FnOnce(&mut Output<'_>) -> Result<(), StoreError>,
    ) -> Result<Prepared<'a>, StoreError> {
        let temp = tempfile::Builder::new()
            .prefix(&format!("{TEMP_PREFIX}{owner}-"))
            .suffix(".xlsx")
            .tempfile_in(directory(target))?;
        // tempfile creates files readable by the owner only; a workbook keeps
        // the permissions it had, so people who could open it still can.
        let permissions = match std::fs::metadata(target) {
            Ok(meta) => meta.permissions(),
            Err(_) => std::fs::Permissions::from_mode(0o644),
        };
        temp.as_file().set_permissions(permissions)?;
        let hashed = {
            let hashed = Hashed {
                file: temp.as_file(),
                hasher: Some(blake3::Hasher::new()),
                position: 0,
            };
            let mut out = BufWriter::with_capacity(OUTPUT_BUFFER, hashed);
            write(&mut out)?;
            let hashed = out.into_inner().map_err(|e| e.into_error())?;
            hashed.hasher.map(Tag::from)
        };
        temp.as_file().sync_all()?;
        let written = temp.as_file().metadata()?;
        // A writer that seeks back into what it wrote (rust_xlsxwriter's
        // zip) has its file hashed read back from the page cache.
        let tag = match hashed {
            Some(tag) => tag,
            None => {
                let mut file = temp.as_file();
                file.seek(SeekFrom::Start(0))?;
                Tag::read(file)?
            }
        };
        Ok(Prepared {
            target,
            temp,
            written,
            tag,
        })
    }

    /// The identity the file will have once renamed into place.
    pub fn identity(&self) -> FileIdentity {
        FileIdentity::of(&self.written)
    }

    /// The tag of the new version's bytes.
    pub fn tag(&self) -> Tag {
        self.tag
    }

    /// [`StoreError::Moved`] unless the file in place still has the identity
    /// `expected`: another program replaced or changed it since it was read.
    /// (A save that lands in the microseconds between this check and the
    /// rename is still overwritten: POSIX has no rename that compares first.)
    pub fn check(&self, expected: FileIdentity) -> Result<(), StoreError> {
        let in_place = std::fs::symlink_metadata(self.target)
            .ok()
            .map(|meta| FileIdentity::of(&meta));
        if in_place == Some(expected) {
            Ok(())
        } else {
            Err(StoreError::Moved)
        }
    }

    /// Renames the new version over the file; the caller syncs the
    /// directory ([`sync_dir`]) to make it durable.
    pub fn rename(self) -> Result<Metadata, StoreError> {
        // tempfile's `persist` renames; it syncs neither the file nor the directory.
        self.temp
            .persist(self.target)
            .map_err(|e| StoreError::Io(e.error))?;
        Ok(self.written)
    }
}

/// Where a new version is written: the temp file, through a buffer large
/// enough for the hash to take many of BLAKE3's 1 KiB chunks at once.
pub type Output<'f> = BufWriter<Hashed<'f>>;

const OUTPUT_BUFFER: usize = 256 * 1024;

/// The temp file, hashed on the way in while it is written in order.
pub struct Hashed<'f> {
    file: &'f File,
    /// The hash of the bytes written so far; `None` once the writer moved
    /// back or ahead.
    hasher: Option<blake3::Hasher>,
    position: u64,
}

impl Write for Hashed<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.file.write(buf)?;
        if let Some(hasher) = &mut self.hasher {
            hasher.update(&buf[..written]);
        }
        self.position += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for Hashed<'_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let position = self.file.seek(to)?;
        if position != self.position {
            self.hasher = None;
            self.position = position;
        }
        Ok(position)
    }
}

/// Makes a rename or removal in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_returned_is_that_of_the_file_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("book.xlsx");
        std::fs::write(&target, b"old").unwrap();
        let written = replace_atomically(&target, "owner", |out| {
            out.write_all(b"new contents").map_err(StoreError::from)
        })
        .unwrap();
        let in_place = std::fs::metadata(&target).unwrap();
        assert_eq!(FileIdentity::of(&written), FileIdentity::of(&in_place));
        assert_eq!(std::fs::read(&target).unwrap(), b"new contents");
    }

    #[test]
    fn the_tag_is_the_hash_of_the_bytes_written_in_order_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("book.xlsx");
        let in_order = Prepared::write(&target, "owner", |out| {
            out.write_all(b"head ")?;
            // Asking where it is moves nothing.
            assert_eq!(out.stream_position()?, 5);
            out.write_all(b"and tail").map_err(StoreError::from)
        })
        .unwrap();
        assert_eq!(in_order.tag(), Tag::of(b"head and tail"));
        let patched = Prepared::write(&target, "owner", |out| {
            out.write_all(b"head XXX tail")?;
            out.seek(SeekFrom::Start(5))?;
            out.write_all(b"and")?;
            out.seek(SeekFrom::End(0))?;
            Ok(())
        })
        .unwrap();
        assert_eq!(patched.tag(), Tag::of(b"head and tail"));
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("book.xlsx");
        std::fs::write(&target, b"read").unwrap();
        let read = FileIdentity::of(&std::fs::metadata(&target).unwrap());
        let prepared = Prepared::write(&target, "owner", |out| {
            // Another program saves while this write runs.
            let saved = dir.path().join("saved.tmp");
            std::fs::write(&saved, b"saved by an app").unwrap();
            std::fs::rename(&saved, &target).unwrap();
            out.write_all(b"ours").map_err(StoreError::from)
        })
        .unwrap();
        let error = prepared.check(read).unwrap_err();
        assert!(matches!(error, StoreError::Moved), "{error}");
        drop(prepared);
        assert_eq!(std::fs::read(&target).unwrap(), b"saved by an app");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp file left");
    }
}
