//! Parsed workbooks kept in memory, each with the identity of the file it
//! came from, so a request never re-reads a file that has not changed.
//!
//! Bounded by an estimate of the bytes the workbooks take: when a new entry
//! would pass the bound, the least recently used entries are dropped first.

use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use super::StoreError;
use super::blocks::Hashes;
use crate::calc::Calculator;
use crate::model::{Formulas, SpreadsheetId, Workbook};
use crate::xlsx::Rewrite;

/// Tells whether a file changed since it was parsed: a rename gives a new
/// inode, an edit in place a new length or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    len: u64,
    modified_ns: i128,
}

impl FileIdentity {
    pub fn of(meta: &Metadata) -> FileIdentity {
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        let modified = ns(meta.mtime(), meta.mtime_nsec());
        let status = ns(meta.ctime(), meta.ctime_nsec());
        // A file copied in with its old date kept (`cp -p`, an unpacked
        // backup) changed when it was put in place, its status change
        // time: later than any date a client read before, where its
        // modification time would let a write through over it. A file
        // sheetd writes is renamed milliseconds after its last write.
        let modified_ns = match status > modified + 2_000_000_000 {
            true => status,
            false => modified,
        };
        FileIdentity {
            device: meta.dev(),
            inode: meta.ino(),
            len: meta.len(),
            modified_ns,
        }
    }

    /// When the file's content last changed, as far as the file system
    /// tells (see [`FileIdentity::of`]): its `Last-Modified`.
    pub fn modified(&self) -> std::time::SystemTime {
        let since = std::time::Duration::from_nanos(u64::try_from(self.modified_ns).unwrap_or(0));
        std::time::UNIX_EPOCH + since
    }

    /// The whole seconds since the epoch the file was last modified at (0
    /// before it), as [`super::version::whole_seconds`] counts.
    pub fn modified_second(&self) -> u64 {
        u64::try_from(self.modified_ns.div_euclid(1_000_000_000)).unwrap_or(0)
    }
}

/// The most temporary files the kept rewrites hold open together: one per
/// sheet, each with the sheet's XML (about 7 times the size of the xlsx).
/// The least recently used workbooks give theirs up first.
const MAX_KEPT_FILES: usize = 64;

pub struct Entry {
    identity: FileIdentity,
    workbook: Arc<Workbook>,
    /// The rewrite that saved `workbook`, kept to save it again once rows
    /// are appended; dropped with the entry.
    rewrite: Option<Rewrite>,
    /// What the next file's hash may reuse of the last one's: it holds the
    /// rewrite's chunks, and goes with the rewrite.
    hashes: Option<Hashes>,
    /// The formula engine in step with `workbook`, once a write built it.
    calculator: Option<Calculator>,
    /// What `workbook`'s formulas are, once a write found out.
    formulas: Option<Formulas>,
    bytes: usize,
    last_used: u64,
}

/// What a commit takes back from the cache to save the workbook again.
#[derive(Default)]
pub struct Kept {
    pub rewrite: Option<Rewrite>,
    /// What the next file's hash may reuse of the file `rewrite` wrote.
    pub hashes: Option<Hashes>,
    pub calculator: Option<Calculator>,
    /// What the workbook's formulas are, when known (finding out takes a
    /// look at every cell).
    pub formulas: Option<Formulas>,
}

/// The cache; the store keeps it behind a mutex.
pub struct Cache {
    entries: HashMap<SpreadsheetId, Entry>,
    /// Files that are no readable workbook, with why: a hostile file costs
    /// one parse per version, not one per request.
    refused: HashMap<SpreadsheetId, (FileIdentity, String)>,
    max_bytes: usize,
    bytes: usize,
    clock: u64,
}

impl Kept {
    #[cfg(test)]
    fn rewritten(rewrite: Rewrite) -> Kept {
        Kept {
            rewrite: Some(rewrite),
            ..Kept::default()
        }
    }
}

impl Cache {
    pub fn new(max_bytes: usize) -> Cache {
        Cache {
            entries: HashMap::new(),
            refused: HashMap::new(),
            max_bytes,
            bytes: 0,
            clock: 0,
        }
    }

    /// The workbook parsed from the file with this identity, if cached, or
    /// why that file was refused, if it was.
    pub fn get(
        &mut self,
        id: SpreadsheetId,
        identity: FileIdentity,
    ) -> Result<Option<Arc<Workbook>>, StoreError> {
        if let Some((refused, why)) = self.refused.get(&id)
            && *refused == identity
        {
            return Err(StoreError::Unreadable(why.clone()));
        }
        self.clock += 1;
        let Some(entry) = self.entries.get_mut(&id).filter(|e| e.identity == identity) else {
            return Ok(None);
        };
        entry.last_used = self.clock;
        Ok(Some(entry.workbook.clone()))
    }

    /// Remembers that the file with `identity` is no readable workbook. One
    /// entry per spreadsheet, a few bytes each.
    pub fn refuse(&mut self, id: SpreadsheetId, identity: FileIdentity, why: &str) {
        self.refused.insert(id, (identity, why.to_owned()));
    }

    /// Removes the entry of `id`, which a commit is about to replace, and
    /// gives back the rewrite and the calculator kept with it if the entry
    /// holds `workbook` (the version the commit starts from).
    pub fn take(&mut self, id: SpreadsheetId, workbook: &Arc<Workbook>) -> Kept {
        match self.remove(id) {
            Some(entry) if Arc::ptr_eq(&entry.workbook, workbook) => Kept {
                rewrite: entry.rewrite,
                hashes: entry.hashes,
                calculator: entry.calculator,
                formulas: entry.formulas,
            },
            _ => Kept::default(),
        }
    }

    /// Keeps `workbook` as the content of the file with `identity`, with
    /// the rewrite that saved it, if any and if it can be saved again, and
    /// the calculator in step with it.
    pub fn insert(
        &mut self,
        id: SpreadsheetId,
        identity: FileIdentity,
        workbook: Arc<Workbook>,
        kept: Kept,
    ) {
        let cells = workbook.cell_slots();
        self.insert_counted(id, identity, (workbook, cells), kept);
    }

    /// [`Cache::insert`] for a workbook whose [cell
    /// slots](Workbook::cell_slots) were counted: `cells`.
    pub fn insert_counted(
        &mut self,
        id: SpreadsheetId,
        identity: FileIdentity,
        (workbook, cells): (Arc<Workbook>, usize),
        kept: Kept,
    ) {
        self.remove(id);
        let Kept {
            rewrite,
            hashes,
            calculator,
            formulas,
        } = kept;
        // The workbook's cells and carried parts, the engine's cells, and
        // the last save's compressed rows.
        let bytes = workbook.estimated_bytes(cells)
            + calculator.as_ref().map_or(0, |c| c.bytes(cells))
            + rewrite.as_ref().map_or(0, Rewrite::bytes);
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
        let rewrite = rewrite.filter(|r| r.resumable() && r.files() <= MAX_KEPT_FILES);
        let hashes = hashes.filter(|_| rewrite.is_some());
        if let Some(rewrite) = &rewrite {
            self.keep_rewrites(MAX_KEPT_FILES - rewrite.files());
        }
        self.clock += 1;
        self.bytes += bytes;
        let last_used = self.clock;
        self.entries.insert(
            id,
            Entry {
                identity,
                workbook,
                rewrite,
                hashes,
                calculator,
                formulas,
                bytes,
                last_used,
            },
        );
    }

    /// Drops the rewrites of the least recently used workbooks until the
    /// others hold at most `max_files` temporary files.
    fn keep_rewrites(&mut self, max_files: usize) {
        let mut kept: Vec<(u64, SpreadsheetId, usize)> = self
            .entries
            .iter()
            .filter_map(|(id, e)| Some((e.last_used, *id, e.rewrite.as_ref()?.files())))
            .collect();
        kept.sort_unstable_by_key(|(last_used, _, _)| *last_used);
        let mut files: usize = kept.iter().map(|(_, _, files)| files).sum();
        for (_, id, held) in kept {
            if files <= max_files {
                break;
            }
            if let Some(entry) = self.entries.get_mut(&id) {
                entry.rewrite = None;
                entry.hashes = None;
                files -= held;
            }
        }
    }

    pub fn remove(&mut self, id: SpreadsheetId) -> Option<Entry> {
        self.refused.remove(&id);
        let entry = self.entries.remove(&id)?;
        self.bytes -= entry.bytes;
        Some(entry)
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
    use crate::model::sheet::BYTES_PER_CELL;
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
    fn carried_parts_count_against_the_bound() {
        let mut heavy = (*workbook(2)).clone();
        heavy.carried = Arc::new(crate::model::carried::Carried {
            parts: vec![crate::model::carried::Part {
                name: "xl/media/image1.png".into(),
                content_type: None,
                bytes: Arc::from(vec![0u8; 20 * BYTES_PER_CELL]),
            }],
            ..Default::default()
        });
        let mut cache = Cache::new(10 * BYTES_PER_CELL);
        let light = SpreadsheetId::new_random();
        cache.insert(light, identity(), workbook(2), Kept::default());
        cache.insert(
            SpreadsheetId::new_random(),
            identity(),
            Arc::new(heavy),
            Kept::default(),
        );
        assert!(
            cache.get(light, identity()).unwrap().is_none(),
            "the picture's bytes pushed the other workbook out"
        );
        assert_eq!(cache.bytes(), 22 * BYTES_PER_CELL);
    }

    #[test]
    fn evicts_the_least_recently_used_past_the_bound() {
        let (a, b, c) = (
            SpreadsheetId::new_random(),
            SpreadsheetId::new_random(),
            SpreadsheetId::new_random(),
        );
        let mut cache = Cache::new(10 * BYTES_PER_CELL);
        cache.insert(a, identity(), workbook(4), Kept::default());
        cache.insert(b, identity(), workbook(4), Kept::default());
        assert!(cache.get(a, identity()).unwrap().is_some());
        cache.insert(c, identity(), workbook(4), Kept::default());
        assert!(
            cache.get(b, identity()).unwrap().is_none(),
            "b was least recently used"
        );
        assert!(cache.get(a, identity()).unwrap().is_some());
        assert!(cache.get(c, identity()).unwrap().is_some());
        assert_eq!(cache.bytes(), 8 * BYTES_PER_CELL);
    }

    /// A workbook of `sheets` sheets of two rows, and a rewrite of it.
    fn rewritten(sheets: usize) -> (Arc<Workbook>, Rewrite) {
        let sheet = |i| Sheet::new(format!("S{i}"), vec![vec![Cell::Number(1.0)]; 2]);
        let workbook = Workbook {
            sheets: (0..sheets).map(sheet).collect(),
            ..Workbook::default()
        };
        let rewrite = Rewrite::begin(&workbook).expect("begun");
        (Arc::new(workbook), rewrite)
    }

    #[test]
    fn only_the_last_written_workbooks_keep_their_rewrite() {
        let mut cache = Cache::new(usize::MAX);
        // Two sheets each: one workbook too many for the files allowed.
        let kept: Vec<(SpreadsheetId, Arc<Workbook>)> = (0..=MAX_KEPT_FILES / 2)
            .map(|_| {
                let (id, (workbook, rewrite)) = (SpreadsheetId::new_random(), rewritten(2));
                cache.insert(id, identity(), workbook.clone(), Kept::rewritten(rewrite));
                (id, workbook)
            })
            .collect();
        let (oldest, rest) = kept.split_first().unwrap();
        assert!(
            cache.get(oldest.0, identity()).unwrap().is_some(),
            "the workbook stays"
        );
        assert!(cache.take(oldest.0, &oldest.1).rewrite.is_none());
        let ((id, workbook), rest) = rest.split_first().unwrap();
        let (equal, _) = rewritten(2);
        assert_eq!(equal, *workbook);
        assert!(
            cache.take(*id, &equal).rewrite.is_none(),
            "an equal workbook parsed again is another version"
        );
        for (id, workbook) in rest {
            assert!(cache.take(*id, workbook).rewrite.is_some());
        }
    }

    #[test]
    fn a_rewrite_with_more_files_than_allowed_is_not_kept() {
        let mut cache = Cache::new(usize::MAX);
        let (id, (workbook, rewrite)) =
            (SpreadsheetId::new_random(), rewritten(MAX_KEPT_FILES + 1));
        cache.insert(id, identity(), workbook.clone(), Kept::rewritten(rewrite));
        assert!(cache.get(id, identity()).unwrap().is_some());
        assert!(cache.take(id, &workbook).rewrite.is_none());
    }

    #[test]
    fn a_changed_file_misses() {
        let id = SpreadsheetId::new_random();
        let mut cache = Cache::new(usize::MAX);
        cache.insert(id, identity(), workbook(1), Kept::default());
        let changed = FileIdentity {
            len: 99,
            ..identity()
        };
        assert!(cache.get(id, changed).unwrap().is_none());
    }
}
