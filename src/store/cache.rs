//! Parsed workbooks kept in memory, each with the identity of the file it
//! came from, so a request never re-reads a file that has not changed.
//!
//! Bounded by an estimate of the bytes the workbooks take: when a new entry
//! would pass the bound, the least recently used entries are dropped first.

use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use crate::model::{SpreadsheetId, Workbook};

/// Tells whether a file changed since it was parsed: a rename gives a new
/// inode, an edit in place a new length or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    len: u64,
    modified_ns: i128,
}

impl FileIdentity {
    pub fn of(meta: &Metadata) -> FileIdentity {
        FileIdentity {
            device: meta.dev(),
            inode: meta.ino(),
            len: meta.len(),
            modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        }
    }
}

/// The estimated memory of one cell slot: the cell itself (32 bytes) and
/// an average share of text on the heap.
const BYTES_PER_CELL: usize = 48;

struct Entry {
    identity: FileIdentity,
    workbook: Arc<Workbook>,
    bytes: usize,
    last_used: u64,
}

/// The cache; the store keeps it behind a mutex.
pub struct Cache {
    entries: HashMap<SpreadsheetId, Entry>,
    max_bytes: usize,
    bytes: usize,
    clock: u64,
}

impl Cache {
    pub fn new(max_bytes: usize) -> Cache {
        Cache {
            entries: HashMap::new(),
            max_bytes,
            bytes: 0,
            clock: 0,
        }
    }

    /// The workbook parsed from the file with this identity, if cached.
    pub fn get(&mut self, id: SpreadsheetId, identity: FileIdentity) -> Option<Arc<Workbook>> {
        self.clock += 1;
        let entry = self
            .entries
            .get_mut(&id)
            .filter(|e| e.identity == identity)?;
        entry.last_used = self.clock;
        Some(entry.workbook.clone())
    }

    /// Keeps `workbook` as the parse of the file with `identity`.
    pub fn insert(&mut self, id: SpreadsheetId, identity: FileIdentity, workbook: Arc<Workbook>) {
        self.remove(id);
        let bytes = workbook.cell_slots() * BYTES_PER_CELL;
        while self.bytes + bytes > self.max_bytes {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(id, _)| *id)
            else {
                break;
            };
            self.remove(oldest);
        }
        self.clock += 1;
        self.bytes += bytes;
        let last_used = self.clock;
        self.entries.insert(
            id,
            Entry {
                identity,
                workbook,
                bytes,
                last_used,
            },
        );
    }

    pub fn remove(&mut self, id: SpreadsheetId) {
        if let Some(entry) = self.entries.remove(&id) {
            self.bytes -= entry.bytes;
        }
    }

    /// The estimated bytes held.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cell, Sheet};

    fn workbook(rows: usize) -> Arc<Workbook> {
        let sheet = Sheet::new("S", vec![vec![Cell::Number(1.0)]; rows]);
        Arc::new(Workbook {
            sheets: vec![sheet],
            ..Workbook::default()
        })
    }

    fn identity() -> FileIdentity {
        FileIdentity {
            device: 1,
            inode: 2,
            len: 3,
            modified_ns: 4,
        }
    }

    #[test]
    fn evicts_the_least_recently_used_past_the_bound() {
        let (a, b, c) = (
            SpreadsheetId::new_random(),
            SpreadsheetId::new_random(),
            SpreadsheetId::new_random(),
        );
        let mut cache = Cache::new(10 * BYTES_PER_CELL);
        cache.insert(a, identity(), workbook(4));
        cache.insert(b, identity(), workbook(4));
        assert!(cache.get(a, identity()).is_some());
        cache.insert(c, identity(), workbook(4));
        assert!(
            cache.get(b, identity()).is_none(),
            "b was least recently used"
        );
        assert!(cache.get(a, identity()).is_some());
        assert!(cache.get(c, identity()).is_some());
        assert_eq!(cache.bytes(), 8 * BYTES_PER_CELL);
    }

    #[test]
    fn a_changed_file_misses() {
        let id = SpreadsheetId::new_random();
        let mut cache = Cache::new(usize::MAX);
        cache.insert(id, identity(), workbook(1));
        let changed = FileIdentity {
            len: 99,
            ..identity()
        };
        assert!(cache.get(id, changed).is_none());
    }
}
