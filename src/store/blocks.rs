//! A file's [`Tag`] hashed as it is written, block by block, reusing what
//! the last file written for the same workbook hashed. BLAKE3 is a tree
//! over 1 KiB chunks: the file is cut into blocks of a power of two of
//! chunks, each block's chaining value depends only on its bytes and its
//! place, and the hash of the whole is made from the blocks' values as
//! BLAKE3's tree joins them. A block made only of bytes the writer shared
//! ([`Blocks::shared`]: a kept chunk of rows) at the place where the last
//! file had them has the value it had there, and is not hashed again: an
//! append or an update near the end of a 1M-row sheet hashes two or three
//! of its 256 blocks.

use std::sync::Arc;

use blake3::Hasher;
use blake3::hazmat::{
    ChainingValue, HasherExt, Mode, left_subtree_len, merge_subtrees_non_root, merge_subtrees_root,
};

use super::version::Tag;

/// The bytes of a block: 256 chunks, a subtree of the file's tree, and
/// as much as BLAKE3 hashes 16 chunks at a time on. A file of 64 MB has
/// 256 blocks.
pub const BLOCK: u64 = 256 << 10;

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

/// The blocks of a file being written, hashed as its bytes come. The
/// writer tells first where each of its bytes comes from ([`Blocks::owned`],
/// [`Blocks::shared`]), then gives them in order ([`Blocks::update`]), a
/// block at a time where it can: a whole block whose bytes were all shared
/// at the place where the last file had them takes the value it had
/// there; the others are hashed, each in one piece when given so.
pub struct Blocks {
    last: Hashes,
    /// The values of the blocks done, in order.
    values: Vec<ChainingValue>,
    /// The block being hashed, begun and not full yet.
    open: Option<(u64, Hasher)>,
    /// The first block's hasher: the hash of a file of one block is its
    /// root.
    first: Option<Hasher>,
    /// By block: whether a byte of it is not as the last file had it.
    changed: Vec<bool>,
    shared: Vec<(u64, Arc<[u8]>)>,
    /// How many blocks were hashed (the others were the last file's).
    hashed: usize,
}

impl Blocks {
    /// Hashes a file that follows the one `last` describes.
    pub fn after(last: Hashes) -> Blocks {
        Blocks {
            last,
            values: Vec::new(),
            open: None,
            first: None,
            changed: Vec::new(),
            shared: Vec::new(),
            hashed: 0,
        }
    }

    /// The `len` bytes at `at` are the writer's own.
    pub fn owned(&mut self, at: u64, len: usize) {
        self.mark_changed(at, len);
    }

    /// `bytes`, at `at`, are shared by the writer, which keeps them.
    pub fn shared(&mut self, at: u64, bytes: &Arc<[u8]>) {
        if !self.last.had(at, bytes) {
            self.mark_changed(at, bytes.len());
        }
        self.shared.push((at, bytes.clone()));
    }

    /// Notes that the blocks the `len` bytes at `at` fall in changed.
    fn mark_changed(&mut self, at: u64, len: usize) {
        if len == 0 {
            return;
        }
        let (first, last) = (at / BLOCK, (at + len as u64 - 1) / BLOCK);
        if self.changed.len() <= last as usize {
            self.changed.resize(last as usize + 1, false);
        }
        self.changed[first as usize..=last as usize].fill(true);
    }

    /// Hashes `bytes`, found at `at`, which follow the bytes given before
    /// and whose origin was told.
    pub fn update(&mut self, mut at: u64, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let block = at / BLOCK;
            let room = BLOCK - at % BLOCK;
            let (piece, rest) = bytes.split_at(bytes.len().min(room as usize));
            let whole = piece.len() as u64 == BLOCK;
            let unchanged = !self.changed.get(block as usize).copied().unwrap_or(false);
            match self.last.value(block) {
                Some(value) if whole && unchanged && block > 0 => self.values.push(value),
                _ => self.hash(block, piece, piece.len() as u64 == room),
            }
            at += piece.len() as u64;
            bytes = rest;
        }
    }

    /// Adds `piece` to block `block`; `full` when it ends the block.
    fn hash(&mut self, block: u64, piece: &[u8], full: bool) {
        let hasher = match &mut self.open {
            Some((open, hasher)) if *open == block => hasher,
            _ => {
                let mut hasher = Hasher::new();
                hasher.set_input_offset(block * BLOCK);
                &mut self.open.insert((block, hasher)).1
            }
        };
        hasher.update(piece);
        if full {
            self.close();
        }
    }

    /// Ends the open block, if any.
    fn close(&mut self) {
        if let Some((block, hasher)) = self.open.take() {
            self.values.push(hasher.finalize_non_root());
            self.hashed += 1;
            if block == 0 {
                self.first = Some(hasher);
            }
        }
    }

    /// The tag of the `len` bytes given, and what the next file written
    /// for the workbook may reuse of them.
    pub fn finish(mut self, len: u64) -> (Tag, Hashes) {
        self.close();
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

    /// Hashes `pieces` after `last`, given `given` bytes at a time: the
    /// tag, what it remembers, how many blocks it hashed, and the bytes.
    fn write(last: Hashes, pieces: &[Piece], given: usize) -> (Tag, Hashes, usize, Vec<u8>) {
        let mut blocks = Blocks::after(last);
        let mut file = Vec::new();
        for piece in pieces {
            let at = file.len() as u64;
            match piece {
                Piece::Owned(bytes) => {
                    blocks.owned(at, bytes.len());
                    file.extend(bytes);
                }
                Piece::Shared(bytes) => {
                    blocks.shared(at, bytes);
                    file.extend(bytes.iter());
                }
            }
        }
        // Given as a writer hands its buffers on, `given` bytes at a time.
        for (index, buffer) in file.chunks(given).enumerate() {
            blocks.update((index * given) as u64, buffer);
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
                let (tag, _, _, file) = write(Hashes::default(), &pieces, piece);
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

    /// Hashes the package of `chunks` after `last` as a writer gives it,
    /// a block at a time, and checks its tag: what it remembers, how many
    /// blocks it hashed, and its length.
    fn saved(last: Hashes, chunks: &[Arc<[u8]>], head: &[u8]) -> (Hashes, usize, usize) {
        let pieces = package(chunks, head, b"tail");
        let (tag, hashes, hashed, file) = write(last, &pieces, BLOCK as usize);
        assert_eq!(tag, Tag::of(&file));
        (hashes, hashed, file.len())
    }

    #[test]
    fn blocks_as_the_last_file_had_them_are_not_hashed_again() {
        let chunks: Vec<Arc<[u8]>> = (0..800).map(|i| bytes(10_000, i).into()).collect();
        let blocks = |len: usize| len.div_ceil(BLOCK as usize);
        let (hashes, hashed, len) = saved(Hashes::default(), &chunks, b"head");
        assert_eq!(hashed, blocks(len), "every block, the first time");

        // An append: the last chunk replaced by a longer one; the first
        // block's header changes too.
        let mut appended = chunks.clone();
        appended[799] = bytes(10_500, 799).into();
        let (hashes, hashed, _) = saved(hashes, &appended, b"HEAD");
        assert_eq!(hashed, 2, "the first block and the last");

        // An update in the middle: the chunk's bytes change, and every
        // block from it on (whose bytes moved) is hashed again.
        let mut updated = appended.clone();
        updated[400] = bytes(10_001, 12345).into();
        let (hashes, hashed, len) = saved(hashes, &updated, b"HEAD");
        let middle = (4 + 400 * 10_000) / BLOCK as usize;
        assert_eq!(
            hashed,
            1 + blocks(len) - middle,
            "the first block, and the blocks from the middle on"
        );

        // Other bytes of the same length at the same place are hashed:
        // they are not the ones the last file had.
        let mut same_length = updated.clone();
        same_length[200] = bytes(10_000, 777).into();
        let (_, hashed, _) = saved(hashes, &same_length, b"HEAD");
        assert_eq!(hashed, 3, "the first block, the block changed and the last");
    }
}
