//! A file's [`Tag`] hashed on two threads: BLAKE3 is a tree over 1 KiB
//! chunks, so the file is cut into blocks of a power of two of chunks,
//! each block is hashed on its own wherever its bytes are (the writer
//! hashes every other block, the thread that copies the bytes into the
//! file the others), and the hash of the whole is made from the blocks'
//! chaining values as BLAKE3's tree joins them.

use blake3::Hasher;
use blake3::hazmat::{
    ChainingValue, HasherExt, Mode, left_subtree_len, merge_subtrees_non_root, merge_subtrees_root,
};

use super::version::Tag;

/// The bytes of a block: 1,024 chunks, a subtree of the file's tree.
pub const BLOCK: u64 = 1 << 20;

/// Which blocks a thread hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    Even,
    Odd,
    All,
}

impl Share {
    fn takes(self, block: u64) -> bool {
        match self {
            Share::Even => block.is_multiple_of(2),
            Share::Odd => !block.is_multiple_of(2),
            Share::All => true,
        }
    }
}

/// The blocks of a file one thread hashed.
#[derive(Default)]
pub struct Blocks {
    /// The chaining values of the blocks done, with their indices.
    done: Vec<(u64, ChainingValue)>,
    /// The block being hashed, not full yet.
    open: Option<(u64, Hasher)>,
    /// The first block's hasher once done: the hash of a file of one
    /// block is its root.
    first: Option<Hasher>,
}

impl Blocks {
    /// Hashes those of `bytes`, found at `at` in the file, whose blocks
    /// are in `share`.
    pub fn update(&mut self, share: Share, mut at: u64, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let block = at / BLOCK;
            let room = (block + 1) * BLOCK - at;
            let (piece, rest) = bytes.split_at(bytes.len().min(room as usize));
            if share.takes(block) {
                self.hash(block, piece, piece.len() as u64 == room);
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
                self.close();
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
            self.done.push((block, hasher.finalize_non_root()));
            if block == 0 {
                self.first = Some(hasher);
            }
        }
    }

    /// Takes over what `other` hashed: from now on this hashes its blocks
    /// too (the block it left open included).
    pub fn absorb(&mut self, mut other: Blocks) {
        self.done.append(&mut other.done);
        self.first = self.first.take().or(other.first);
        if let Some(open) = other.open {
            self.close();
            self.open = Some(open);
        }
    }

    /// The tag of the `len` bytes these blocks hold, if they hold them
    /// all.
    pub fn tag(mut self, len: u64) -> Option<Tag> {
        self.close();
        if len <= BLOCK {
            let first = self.first.unwrap_or_default();
            return (first.count() == len).then(|| Tag::from(first));
        }
        self.done.sort_unstable_by_key(|&(block, _)| block);
        let whole = (self.done.iter().enumerate()).all(|(i, &(block, _))| block == i as u64);
        if !whole || self.done.len() as u64 != len.div_ceil(BLOCK) {
            return None;
        }
        let values: Vec<ChainingValue> = self.done.into_iter().map(|(_, cv)| cv).collect();
        let left = left_subtree_len(len);
        let hash = merge_subtrees_root(
            &subtree(&values, 0, left),
            &subtree(&values, left, len - left),
            Mode::Hash,
        );
        Some(Tag::from(hash))
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

    fn bytes(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    /// The tag of `input` hashed in `pieces` of that size, the blocks
    /// shared between two `Blocks` until `handover`, then all taken by
    /// the first.
    fn shared(input: &[u8], piece: usize, handover: usize) -> Option<Tag> {
        let (mut even, mut odd) = (Blocks::default(), Blocks::default());
        let mut at = 0;
        for chunk in input[..handover].chunks(piece) {
            even.update(Share::Even, at, chunk);
            odd.update(Share::Odd, at, chunk);
            at += chunk.len() as u64;
        }
        even.absorb(odd);
        for chunk in input[handover..].chunks(piece) {
            even.update(Share::All, at, chunk);
            at += chunk.len() as u64;
        }
        even.tag(input.len() as u64)
    }

    #[test]
    fn blocks_hashed_apart_give_the_hash_of_the_whole() {
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
            4 * block,
            5 * block + 1024,
            7 * block - 3,
        ] {
            let input = bytes(len);
            let whole = Tag::of(&input);
            for piece in [1000, 256 * 1024, block + 13] {
                for handover in [len, len / 2, 0] {
                    assert_eq!(
                        shared(&input, piece, handover),
                        Some(whole),
                        "{len} bytes in pieces of {piece}, handed over at {handover}"
                    );
                }
            }
        }
    }

    #[test]
    fn blocks_missing_give_no_tag() {
        let input = bytes(3 * BLOCK as usize + 5);
        let mut even = Blocks::default();
        even.update(Share::Even, 0, &input);
        assert_eq!(even.tag(input.len() as u64), None);
        let mut short = Blocks::default();
        short.update(Share::All, 0, &input[..100]);
        assert_eq!(short.tag(101), None);
    }
}
