//! A file's [`Tag`] hashed as it is written, block by block, reusing what
//! the last file written for the same workbook hashed. BLAKE3 is a tree
//! over 1 KiB chunks: the file is cut into blocks of a power of two of
//! chunks, each block's chaining value depends only on its bytes and its
//! place, and the hash of the whole is made from the blocks' values as
//! BLAKE3's tree joins them. A block made only of bytes the writer shared
//! ([`Blocks::shared`]: a kept chunk of rows) at the place where the last
//! file had them has the value it had there, and is not hashed again: an
//! append or an update near the end of a 1M-row sheet hashes two or three
//! of its 64 blocks.

use std::ops::Range;
use std::sync::Arc;

use blake3::Hasher;
use blake3::hazmat::{
    ChainingValue, HasherExt, Mode, left_subtree_len, merge_subtrees_non_root, merge_subtrees_root,
};

use super::version::Tag;

/// The bytes of a block: 1,024 chunks, a subtree of the file's tree.
pub const BLOCK: u64 = 1 << 20;

/// What the hash of a file written remembers for the next file: each
/// block's chaining value, and which shared bytes were where. It holds
/// those bytes (shared, not copied) so that bytes found at an address it
/// knows are those it hashed: an allocation alive cannot have been freed
/// and filled with other bytes.
#[derive(Default)]
pub struct Hashes {
    len: u64,
    values: Vec<ChainingValue>,
    /// The shared pieces, by their place in the file.
    shared: Vec<(u64, Arc<[u8]>)>,
    /// How many of the blocks were hashed, the others taken from the file
    /// before.
    hashed: usize,
}

impl Hashes {
    /// How many blocks of the file were hashed, the others taken from the
    /// file before.
    pub fn hashed(&self) -> usize {
        self.hashed
    }

    /// Whether the file these describe had `bytes` at `at`.
    fn had(&self, at: u64, bytes: &Arc<[u8]>) -> bool {
        let index = self.shared.partition_point(|(start, _)| *start < at);
        self.shared
            .get(index)
            .is_some_and(|(start, kept)| *start == at && Arc::ptr_eq(kept, bytes))
    }

    /// The value of block `block`, if the file these describe held it
    /// whole.
    fn value(&self, block: u64) -> Option<ChainingValue> {
        ((block + 1) * BLOCK <= self.len)
            .then(|| self.values.get(block as usize).copied())
            .flatten()
    }
}

/// The blocks of a file being written, hashed as its bytes come.
pub struct Blocks {
    last: Hashes,
    /// The values of the blocks done, in order.
    values: Vec<ChainingValue>,
    open: Open,
    /// The first block's hasher: the hash of a file of one block is its
    /// root.
    first: Option<Hasher>,
    shared: Vec<(u64, Arc<[u8]>)>,
    /// How many blocks were hashed (the others were the last file's).
    hashed: usize,
}

/// The block being written.
enum Open {
    /// Every byte so far is shared and where the last file had it: the
    /// pieces, not hashed yet.
    Same(Vec<(Arc<[u8]>, Range<usize>)>),
    Hashing(Box<Hasher>),
}

impl Blocks {
    /// Hashes a file that follows the one `last` describes.
    pub fn after(last: Hashes) -> Blocks {
        Blocks {
            last,
            values: Vec::new(),
            open: Open::Same(Vec::new()),
            first: None,
            shared: Vec::new(),
            hashed: 0,
        }
    }

    /// `bytes`, found at `at` in the file, which follows the bytes given
    /// before.
    pub fn update(&mut self, at: u64, bytes: &[u8]) {
        self.pieces(at, bytes.len(), |blocks, block, range| {
            blocks.hasher(block).update(&bytes[range]);
        });
    }

    /// `bytes` shared by the writer, found at `at` in the file, which
    /// follows the bytes given before.
    pub fn shared(&mut self, at: u64, bytes: &Arc<[u8]>) {
        let same = self.last.had(at, bytes);
        self.shared.push((at, bytes.clone()));
        self.pieces(at, bytes.len(), |blocks, block, range| {
            match &mut blocks.open {
                Open::Same(pieces) if same => pieces.push((bytes.clone(), range)),
                _ => {
                    blocks.hasher(block).update(&bytes[range]);
                }
            }
        });
    }

    /// Calls `each` with the block and the range of each piece of the
    /// `len` bytes at `at` that falls in one block, and ends each block
    /// they fill.
    fn pieces(
        &mut self,
        mut at: u64,
        len: usize,
        mut each: impl FnMut(&mut Blocks, u64, Range<usize>),
    ) {
        let mut start = 0;
        while start < len {
            let room = BLOCK - at % BLOCK;
            let end = len.min(start + room as usize);
            each(self, at / BLOCK, start..end);
            at += (end - start) as u64;
            if at.is_multiple_of(BLOCK) {
                self.close(at / BLOCK - 1, true);
            }
            start = end;
        }
    }

    /// The hasher of the open block, `block`, once the pieces kept
    /// unhashed are hashed.
    fn hasher(&mut self, block: u64) -> &mut Hasher {
        if let Open::Same(pieces) = &self.open {
            let mut hasher = Hasher::new();
            hasher.set_input_offset(block * BLOCK);
            for (bytes, range) in pieces {
                hasher.update(&bytes[range.clone()]);
            }
            self.open = Open::Hashing(Box::new(hasher));
        }
        match &mut self.open {
            Open::Hashing(hasher) => hasher,
            Open::Same(_) => unreachable!("the block is being hashed"),
        }
    }

    /// Ends block `block`, `whole` when it is full: its value is the last
    /// file's when it is as the last file had it, else what was hashed.
    /// The first block is always hashed (a file of one block has its root
    /// for a hash), and a block cut short too.
    fn close(&mut self, block: u64, whole: bool) {
        let reused = match &self.open {
            Open::Same(_) if block > 0 && whole => self.last.value(block),
            _ => None,
        };
        let value = match reused {
            Some(value) => value,
            None => {
                self.hashed += 1;
                let hasher = self.hasher(block);
                let value = hasher.finalize_non_root();
                if block == 0 {
                    let first = Hasher::clone(hasher);
                    self.first = Some(first);
                }
                value
            }
        };
        self.values.push(value);
        self.open = Open::Same(Vec::new());
    }

    /// The tag of the `len` bytes given, and what the next file written
    /// for the workbook may reuse of them.
    pub fn finish(mut self, len: u64) -> (Tag, Hashes) {
        if !len.is_multiple_of(BLOCK) {
            self.close(len / BLOCK, false);
        }
        let tag = if len == 0 {
            Tag::of(&[])
        } else if len <= BLOCK {
            Tag::from(self.first.take().unwrap_or_default())
        } else {
            let left = left_subtree_len(len);
            Tag::from(merge_subtrees_root(
                &subtree(&self.values, 0, left),
                &subtree(&self.values, left, len - left),
                Mode::Hash,
            ))
        };
        let hashes = Hashes {
            len,
            values: self.values,
            shared: self.shared,
            hashed: self.hashed,
        };
        (tag, hashes)
    }
}

/// The chaining value of the subtree of `len` bytes at `start`, made of
/// the blocks' `values`.
fn subtree(values: &[ChainingValue], start: u64, len: u64) -> ChainingValue {
    if len <= BLOCK {
        return values[(start / BLOCK) as usize];
    }
    let left = left_subtree_len(len);
    merge_subtrees_non_root(
        &subtree(values, start, left),
        &subtree(values, start + left, len - left),
        Mode::Hash,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(len: usize, seed: usize) -> Vec<u8> {
        (0..len).map(|i| ((i + seed) * 31 % 251) as u8).collect()
    }

    /// A piece of a file: owned by the writer, or shared.
    #[derive(Clone)]
    enum Piece {
        Owned(Vec<u8>),
        Shared(Arc<[u8]>),
    }

    /// Hashes `pieces` after `last`: the tag, what it remembers, how many
    /// blocks it hashed, and the bytes.
    fn write(last: Hashes, pieces: &[Piece]) -> (Tag, Hashes, usize, Vec<u8>) {
        let mut blocks = Blocks::after(last);
        let mut file = Vec::new();
        for piece in pieces {
            let at = file.len() as u64;
            match piece {
                Piece::Owned(bytes) => {
                    blocks.update(at, bytes);
                    file.extend(bytes);
                }
                Piece::Shared(bytes) => {
                    blocks.shared(at, bytes);
                    file.extend(bytes.iter());
                }
            }
        }
        let (tag, hashes) = blocks.finish(file.len() as u64);
        let hashed = hashes.hashed();
        (tag, hashes, hashed, file)
    }

    #[test]
    fn blocks_hashed_as_they_come_give_the_hash_of_the_whole() {
        let block = BLOCK as usize;
        for len in [
            0,
            1,
            1024,
            block - 1,
            block,
            block + 1,
            2 * block,
            3 * block + 77,
            5 * block + 1024,
            7 * block - 3,
        ] {
            let input = bytes(len, 0);
            for piece in [1000, 256 * 1024, block + 13] {
                let pieces: Vec<Piece> = (input.chunks(piece))
                    .enumerate()
                    .map(|(i, c)| match i % 2 {
                        0 => Piece::Owned(c.to_vec()),
                        _ => Piece::Shared(c.into()),
                    })
                    .collect();
                let (tag, _, _, file) = write(Hashes::default(), &pieces);
                assert_eq!(file, input);
                assert_eq!(tag, Tag::of(&input), "{len} bytes in pieces of {piece}");
            }
        }
    }

    /// A file as a save in part writes it: a header of its own, kept
    /// chunks of 10 KB, and a tail of its own.
    fn package(chunks: &[Arc<[u8]>], head: &[u8], tail: &[u8]) -> Vec<Piece> {
        let middle = chunks.iter().cloned().map(Piece::Shared);
        [Piece::Owned(head.to_vec())]
            .into_iter()
            .chain(middle)
            .chain([Piece::Owned(tail.to_vec())])
            .collect()
    }

    #[test]
    fn blocks_as_the_last_file_had_them_are_not_hashed_again() {
        let chunks: Vec<Arc<[u8]>> = (0..800).map(|i| bytes(10_000, i).into()).collect();
        let (tag, hashes, hashed, file) =
            write(Hashes::default(), &package(&chunks, b"head", b"tail"));
        assert_eq!(tag, Tag::of(&file));
        assert_eq!(hashed, 8, "8 MB: every block, the first time");

        // An append: the last chunk replaced by a longer one, a new tail.
        let mut appended = chunks.clone();
        appended[799] = bytes(10_500, 799).into();
        let (tag, hashes, hashed, file) =
            write(hashes, &package(&appended, b"HEAD", b"a new tail"));
        assert_eq!(tag, Tag::of(&file));
        assert_eq!(hashed, 2, "the first block and the last");

        // An update in the middle: the chunk's bytes change, and every
        // block from it on (whose bytes moved) is hashed again.
        let mut updated = appended.clone();
        updated[400] = bytes(10_001, 12345).into();
        let (tag, hashes, hashed, file) = write(hashes, &package(&updated, b"HEAD", b"a new tail"));
        assert_eq!(tag, Tag::of(&file));
        assert_eq!(
            hashed,
            1 + 5,
            "the first block, and the blocks from the middle on"
        );

        // Other bytes of the same length at the same place are hashed:
        // they are not the ones the last file had.
        let mut same_length = updated.clone();
        same_length[200] = bytes(10_000, 777).into();
        let (tag, _, hashed, file) = write(hashes, &package(&same_length, b"HEAD", b"a new tail"));
        assert_eq!(tag, Tag::of(&file));
        assert_eq!(hashed, 3, "the first block, the block changed and the last");
    }
}
