//! Replacing a file so that a crash leaves the old or the new one, never a
//! torn one: temp file in the same directory, fsync, rename, fsync directory.

use std::fs::{File, Metadata};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};

use super::StoreError;
use super::blocks::{BLOCK, Blocks, Hashes};
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
    /// What the next version's hash may reuse of this one's.
    hashes: Option<Hashes>,
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
        Prepared::write_after(target, owner, Hashes::default(), write)
    }

    /// [`Prepared::write`], for a version that follows the one `last`
    /// describes: the blocks `write` wrote as they were there are not
    /// hashed again.
    pub fn write_after(
        target: &'a Path,
        owner: &str,
        last: Hashes,
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
        let hashed = std::thread::scope(|scope| {
            let mut out = Output::new(temp.as_file(), scope, last);
            write(&mut out)?;
            Ok::<_, StoreError>(out.finish()?)
        })?;
        temp.as_file().sync_all()?;
        let written = temp.as_file().metadata()?;
        // A writer that seeks back into what it wrote (rust_xlsxwriter's
        // zip) has its file hashed read back from the page cache.
        let (tag, hashes) = match hashed {
            Some((tag, hashes)) => (tag, Some(hashes)),
            None => {
                let mut file = temp.as_file();
                file.seek(SeekFrom::Start(0))?;
                (Tag::read(file)?, None)
            }
        };
        Ok(Prepared {
            target,
            temp,
            written,
            tag,
            hashes,
        })
    }

    /// What the next version's hash may reuse of this one's, when it was
    /// hashed as it was written.
    pub fn take_hashes(&mut self) -> Option<Hashes> {
        self.hashes.take()
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

/// Where a new version is written: the temp file, through a buffer. Each
/// full buffer is written and sent on to the disk ([`put`]) on a thread
/// beside the writer, while the writer hashes what it writes ([`Blocks`]):
/// only the blocks of the file not as the last file written for the
/// workbook had them, as the bytes come. Writing a 64 MB file into the
/// page cache takes this host's thread 30 to 40 ms, the longest part of a
/// write at 1M rows; the writer meanwhile copies and hashes. Once the
/// writer moves back or ahead in the file (the zip crate does, to finish
/// each entry's header: a whole rewrite) it puts its buffers itself, and
/// the file is hashed once written.
pub struct Output<'f> {
    file: &'f File,
    buffer: Vec<u8>,
    sink: Sink<'f>,
    /// The file hashed as it is written, while its bytes come in order.
    hashed: Option<Blocks>,
    /// Where the file is, before the buffer's bytes.
    position: u64,
}

/// Where full buffers go.
enum Sink<'f> {
    /// To a thread that writes them in the order they are sent; buffers
    /// done with come back to be filled again.
    Beside {
        buffers: SyncSender<Vec<u8>>,
        done: Receiver<Vec<u8>>,
        thread: ScopedJoinHandle<'f, std::io::Result<()>>,
    },
    /// Written here (no thread could be started, or the writer seeks).
    Here,
}

/// A buffer full is a block of the file, hashed in one piece or taken
/// from the last file's.
const OUTPUT_BUFFER: usize = BLOCK as usize;
/// Buffers on their way to the thread: when it falls behind, the writer
/// waits.
const BUFFERS_QUEUED: usize = 4;

impl<'f> Output<'f> {
    /// An output to `file` for a file that follows the one `last`
    /// describes.
    fn new<'env>(file: &'f File, scope: &'f Scope<'f, 'env>, last: Hashes) -> Output<'f> {
        let (buffers, queued) = sync_channel::<Vec<u8>>(BUFFERS_QUEUED);
        let (give_back, done) = sync_channel(BUFFERS_QUEUED);
        let started = std::thread::Builder::new()
            .name("sheetd-write".into())
            .spawn_scoped(scope, move || {
                let mut written = 0;
                for mut buffer in queued {
                    put(file, written, &buffer)?;
                    written += buffer.len() as u64;
                    buffer.clear();
                    let _ = give_back.try_send(buffer);
                }
                Ok(())
            });
        let sink = match started {
            Ok(thread) => Sink::Beside {
                buffers,
                done,
                thread,
            },
            Err(_) => Sink::Here,
        };
        Output {
            file,
            buffer: Vec::with_capacity(OUTPUT_BUFFER),
            sink,
            hashed: Some(Blocks::after(last)),
            position: 0,
        }
    }

    /// Writes what is buffered; gives the tag of the file and what the
    /// next may reuse of its hash, if the writer wrote its bytes in order.
    fn finish(mut self) -> std::io::Result<Option<(Tag, Hashes)>> {
        self.flush_buffer()?;
        self.write_here()?;
        Ok(self.hashed.map(|hashed| hashed.finish(self.position)))
    }

    /// Copies `bytes`, whose origin the hash was told, into the buffer,
    /// handing each full buffer on.
    fn copy(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let room = OUTPUT_BUFFER - self.buffer.len();
            let (taken, rest) = bytes.split_at(bytes.len().min(room));
            self.buffer.extend_from_slice(taken);
            if self.buffer.len() == OUTPUT_BUFFER {
                self.flush_buffer()?;
            }
            bytes = rest;
        }
        Ok(())
    }

    /// Waits for the thread to write what it was sent, and writes here
    /// from now on.
    fn write_here(&mut self) -> std::io::Result<()> {
        if let Sink::Beside {
            buffers, thread, ..
        } = std::mem::replace(&mut self.sink, Sink::Here)
        {
            drop(buffers);
            thread
                .join()
                .map_err(|_| std::io::Error::other("the thread writing the file panicked"))??;
        }
        Ok(())
    }

    /// Hashes the buffer and writes it to the file.
    fn flush_buffer(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let at = self.position;
        if let Some(hashed) = &mut self.hashed {
            hashed.update(at, &self.buffer);
        }
        self.position += self.buffer.len() as u64;
        match &mut self.sink {
            Sink::Beside { buffers, done, .. } => {
                let spare = done
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(OUTPUT_BUFFER));
                let full = std::mem::replace(&mut self.buffer, spare);
                if buffers.send(full).is_err() {
                    // The thread stopped at an error: it is the answer.
                    self.buffer.clear();
                    self.write_here()?;
                    return Err(std::io::Error::other("the file was not written"));
                }
            }
            Sink::Here => put(self.file, at, &self.buffer)?,
        }
        self.buffer.clear();
        Ok(())
    }
}

impl Write for Output<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Some(hashed) = &mut self.hashed {
            hashed.owned(self.position + self.buffer.len() as u64, bytes.len());
        }
        self.copy(bytes)?;
        Ok(bytes.len())
    }

    /// Hands the buffer on; the file has every byte once the output is
    /// finished.
    fn flush(&mut self) -> std::io::Result<()> {
        self.flush_buffer()
    }
}

/// Kept bytes are copied like others, but when the last file had them at
/// the same place, they are not hashed again.
impl crate::xlsx::KeptWrite for Output<'_> {
    fn write_kept(&mut self, bytes: &Arc<[u8]>) -> std::io::Result<()> {
        if let Some(hashed) = &mut self.hashed {
            hashed.shared(self.position + self.buffer.len() as u64, bytes);
        }
        self.copy(bytes)
    }
}

impl Seek for Output<'_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        // Asking where it is (the zip crate does at every entry) moves
        // nothing, and leaves the thread at work.
        let here = self.position + self.buffer.len() as u64;
        if to == SeekFrom::Current(0) || to == SeekFrom::Start(here) {
            return Ok(here);
        }
        self.flush_buffer()?;
        self.write_here()?;
        let position = self.file.seek(to)?;
        if position != self.position {
            self.hashed = None;
            self.position = position;
        }
        Ok(position)
    }
}

/// Writes `bytes` to `file` where it is, `at` from its start, and asks the
/// kernel to start writing them to the disk now, without waiting: the
/// sync that ends the write then waits for the last of them only, not for
/// the whole file (an update at 1M rows went from 103 to 70 ms, at 100k
/// rows from 15 to 11 ms). `DONTNEED` starts the writeback of dirty pages
/// and drops only the clean ones, which these are not yet; the hint
/// failing changes nothing but speed.
fn put(file: &File, at: u64, bytes: &[u8]) -> std::io::Result<()> {
    let mut out = file;
    out.write_all(bytes)?;
    if let Some(len) = std::num::NonZeroU64::new(bytes.len() as u64) {
        let _ = rustix::fs::fadvise(file, at, Some(len), rustix::fs::Advice::DontNeed);
    }
    Ok(())
}

/// Makes a rename or removal in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xlsx::KeptWrite;

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
    fn many_buffers_written_beside_arrive_whole_and_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("book.xlsx");
        // Pieces of odd sizes, some larger than a buffer, past the queue's
        // bound many times over.
        let pieces: Vec<Vec<u8>> = (0..400usize)
            .map(|i| {
                let len = (i * 7919) % (OUTPUT_BUFFER + OUTPUT_BUFFER / 3) + 1;
                (0..len).map(|j| (i + j) as u8).collect()
            })
            .collect();
        let whole = pieces.concat();
        let in_order = Prepared::write(&target, "owner", |out| {
            for piece in &pieces {
                out.write_all(piece)?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(in_order.tag(), Tag::of(&whole));
        assert_eq!(std::fs::read(in_order.temp.path()).unwrap(), whole);
        // A seek once many buffers went to the thread: the bytes land where
        // they were sent, and the tag is read back.
        let patched = Prepared::write(&target, "owner", |out| {
            out.write_all(&whole)?;
            out.seek(SeekFrom::Start(3))?;
            out.write_all(b"patch")?;
            out.seek(SeekFrom::End(0))?;
            out.write_all(b"tail")?;
            Ok(())
        })
        .unwrap();
        let mut expected = whole.clone();
        expected[3..8].copy_from_slice(b"patch");
        expected.extend(b"tail");
        assert_eq!(std::fs::read(patched.temp.path()).unwrap(), expected);
        assert_eq!(patched.tag(), Tag::of(&expected));
    }

    #[test]
    fn kept_bytes_written_again_where_they_were_are_not_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("book.xlsx");
        // About 6 MB of kept chunks between bytes of the writer's own.
        let chunks: Vec<Arc<[u8]>> = (0..300usize)
            .map(|i| vec![(i % 251) as u8; 20_000 + i].into())
            .collect();
        let write = |last: Hashes, chunks: &[Arc<[u8]>], tail: &[u8]| {
            let mut prepared = Prepared::write_after(&target, "owner", last, |out| {
                out.write_all(b"head")?;
                for chunk in chunks {
                    out.write_kept(chunk)?;
                }
                out.write_all(tail).map_err(StoreError::from)
            })
            .unwrap();
            let file = std::fs::read(prepared.temp.path()).unwrap();
            let kept = chunks.iter().flat_map(|chunk| chunk.iter().copied());
            let expected: Vec<u8> = b"head"
                .iter()
                .copied()
                .chain(kept)
                .chain(tail.iter().copied())
                .collect();
            assert_eq!(file, expected);
            assert_eq!(prepared.tag(), Tag::of(&file));
            prepared.take_hashes().expect("hashed as written")
        };
        let first = write(Hashes::default(), &chunks, b"tail");
        let len: usize = 8 + chunks.iter().map(|chunk| chunk.len()).sum::<usize>();
        let blocks = len.div_ceil(BLOCK as usize);
        assert_eq!(first.hashed(), blocks, "every block of the first file");
        let mut appended = chunks.clone();
        appended.push(vec![7; 5_000].into());
        let second = write(first, &appended, b"a longer tail");
        assert_eq!(second.hashed(), 2, "the first block and the last");
        // A byte more near the start moves every block after it.
        let mut inserted = appended.clone();
        inserted.insert(1, vec![9; 1].into());
        assert_eq!(write(second, &inserted, b"tail").hashed(), blocks);
    }

    #[test]
    fn asking_where_it_is_keeps_the_thread_at_work() {
        let file = tempfile::tempfile().unwrap();
        let bytes = vec![3; OUTPUT_BUFFER + 100];
        let tag = std::thread::scope(|scope| {
            let mut out = Output::new(&file, scope, Hashes::default());
            out.write_all(&bytes).unwrap();
            assert_eq!(out.stream_position().unwrap(), bytes.len() as u64);
            let at = out.seek(SeekFrom::Start(bytes.len() as u64)).unwrap();
            assert_eq!(at, bytes.len() as u64);
            assert!(matches!(out.sink, Sink::Beside { .. }));
            out.finish().unwrap().map(|(tag, _)| tag)
        });
        assert_eq!(tag, Some(Tag::of(&bytes)));
        assert_eq!(file.metadata().unwrap().len(), bytes.len() as u64);
    }

    #[test]
    fn a_failed_write_beside_is_the_writers_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read-only");
        std::fs::write(&path, b"").unwrap();
        let file = File::open(&path).unwrap();
        let failed = std::thread::scope(|scope| {
            let mut out = Output::new(&file, scope, Hashes::default());
            let written =
                (0..4 * BUFFERS_QUEUED).try_for_each(|_| out.write_all(&[7; OUTPUT_BUFFER]));
            written.and_then(|()| out.finish().map(drop))
        });
        assert!(failed.is_err());
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
