//! Group commit: the edits waiting for one spreadsheet are applied to its
//! workbook in arrival order and written with a single rewrite; each request
//! is answered only once the rewrite that holds its edit is durable.
//!
//! An edit whose request is invalid answers with its own error and changes
//! nothing, so it never fails the others. Edits can be applied again:
//!
//! - When the file on disk changed since it was read (a spreadsheet app
//!   saved it during the rewrite), the rewrite is not renamed over it: the
//!   new file is read and the batch applied to it again.
//! - When the writer refuses a batch of several edits, each edit is
//!   committed on its own, so only the one that cannot be written fails.
//!
//! An I/O error fails the whole batch and nothing of it is kept.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::oneshot;

use super::atomic::Prepared;
use super::blocks::Hashes;
use super::cache::{FileIdentity, Kept};
use super::keys::{Answer, Claimed, Key};
use super::lock::remove_lock_file;
use super::{Current, Edit, Precondition, Store, StoreError, Version, Versioned};
use crate::calc::{self, Calculator};
use crate::model::workbook::MAX_SHEETS;
use crate::model::{Formulas, RowsChanged, SpreadsheetId, Workbook};
use crate::xlsx::Rewrite;

/// How often a batch is applied again to a file saved by another program
/// during its rewrite, before its requests get 503.
const MAX_ATTEMPTS: usize = 3;

/// An edit waiting in a queue, its result type erased.
pub trait PendingEdit: Send {
    /// Applies the edit to the workbook standing at `current`; returns
    /// whether it changed the workbook. An invalid request, or one whose
    /// precondition does not hold at `current`, changes nothing and keeps
    /// its error for [`PendingEdit::answer`]. May be called again, on a
    /// workbook read again.
    fn apply(&mut self, workbook: &mut Workbook, current: Current) -> bool;
    /// Answers the request: with the error of its last application if it
    /// had one, else with `committed` (and its value, with the version of
    /// the file committed, when that is `Ok`).
    fn answer(self: Box<Self>, committed: Result<Version, StoreError>);
    /// The answer to remember under the request's idempotency key, if it
    /// has one and its last application succeeded.
    fn record(&self, spreadsheet: SpreadsheetId) -> Option<(Key, Answer)>;
}

/// A request's edit function, the result of its last application and the
/// channel its answer goes back on.
pub struct EditRequest<F, T, E> {
    pub f: F,
    pub reply: oneshot::Sender<Result<Versioned<T>, E>>,
    pub applied: Option<Result<T, E>>,
    /// The request's idempotency key, held until the edit is answered.
    pub key: Option<Claimed>,
    /// What the workbook must be for the edit to run (`If-Match`, …).
    pub precondition: Option<Precondition>,
}

impl<F, T, E> PendingEdit for EditRequest<F, T, E>
where
    F: FnMut(&mut Workbook) -> Result<Edit<T>, E> + Send + 'static,
    T: serde::Serialize + Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    fn record(&self, spreadsheet: SpreadsheetId) -> Option<(Key, Answer)> {
        let key = self.key.as_ref()?.key().clone();
        let Some(Ok(value)) = &self.applied else {
            return None;
        };
        let answer = Answer {
            spreadsheet: spreadsheet.to_string(),
            value: serde_json::to_value(value).ok()?,
            etag: None,
        };
        Some((key, answer))
    }

    fn apply(&mut self, workbook: &mut Workbook, current: Current) -> bool {
        if let Some(precondition) = &self.precondition
            && !precondition.holds(current)
        {
            self.applied = Some(Err(E::from(StoreError::PreconditionFailed)));
            return false;
        }
        let (changed, applied) = match (self.f)(workbook) {
            Ok(Edit { value, changed }) => (changed, Ok(value)),
            Err(error) => (false, Err(error)),
        };
        self.applied = Some(applied);
        changed
    }

    fn answer(self: Box<Self>, committed: Result<Version, StoreError>) {
        let answer = match self.applied {
            Some(Err(own)) => Err(own),
            Some(Ok(value)) => committed
                .map(|version| Versioned { value, version })
                .map_err(E::from),
            None => Err(E::from(committed.err().unwrap_or_else(|| {
                StoreError::Job("the edit was never applied".into())
            }))),
        };
        let _ = self.reply.send(answer);
    }
}

impl StoreError {
    /// The same error again, for answering every request of a batch.
    fn duplicate(&self) -> StoreError {
        match self {
            StoreError::NotFound => StoreError::NotFound,
            StoreError::Conflict(why) => StoreError::Conflict(why.clone()),
            StoreError::Unreadable(why) => StoreError::Unreadable(why.clone()),
            StoreError::Io(e) => StoreError::Io(std::io::Error::new(e.kind(), e.to_string())),
            StoreError::Job(why) => StoreError::Job(why.clone()),
            StoreError::NotRegular => StoreError::NotRegular,
            StoreError::Busy => StoreError::Busy,
            StoreError::Moved => StoreError::Moved,
            StoreError::KeyInUse => StoreError::KeyInUse,
            StoreError::TooManyParses => StoreError::TooManyParses,
            StoreError::PreconditionFailed => StoreError::PreconditionFailed,
        }
    }
}

/// How one attempt at committing a batch ended.
enum Attempt {
    /// Every edit gets this.
    Done(Result<Version, StoreError>),
    /// Each edit gets its own.
    Each(Vec<Result<Version, StoreError>>),
    /// The file changed on disk since it was read; nothing was written.
    Moved,
    /// The writer refused the workbook the edits made; `changed` says
    /// which of them changed it; the file is still at `version`.
    Refused {
        error: StoreError,
        changed: Vec<bool>,
        version: Version,
    },
}

impl Store {
    /// Commits a batch: takes the cross-process lock (until `deadline`),
    /// applies every edit, writes once if any changed, answers all.
    pub(super) fn commit(
        &self,
        id: SpreadsheetId,
        deadline: Instant,
        mut batch: Vec<Box<dyn PendingEdit>>,
    ) {
        let results = match self.lock_across_processes(id, deadline) {
            Ok(_across_processes) => {
                let results = self.commit_locked(id, &mut batch);
                // Removed meanwhile: no lock file stays.
                let gone = results
                    .iter()
                    .any(|r| matches!(r, Err(StoreError::NotFound)));
                if gone && let Err(error) = remove_lock_file(&self.inner.dir, id) {
                    tracing::warn!(spreadsheet = %id, %error, "lock file not removed");
                }
                results
            }
            Err(error) => batch_results(batch.len(), &Err(error)),
        };
        for (edit, result) in batch.into_iter().zip(results) {
            edit.answer(result);
        }
    }

    /// The result of each edit of the batch, committed under the locks.
    fn commit_locked(
        &self,
        id: SpreadsheetId,
        batch: &mut [Box<dyn PendingEdit>],
    ) -> Vec<Result<Version, StoreError>> {
        let count = batch.len();
        let all = |result: Result<Version, StoreError>| batch_results(count, &result);
        for _ in 0..MAX_ATTEMPTS {
            match self.attempt(id, batch) {
                Attempt::Done(result) => return all(result),
                Attempt::Each(results) => return results,
                Attempt::Moved => {
                    tracing::info!(spreadsheet = %id, "the file was saved by another program during the write: applying the batch to the saved file");
                }
                Attempt::Refused { error, changed, .. }
                    if changed.iter().filter(|&&c| c).count() > 1 =>
                {
                    tracing::warn!(spreadsheet = %id, %error, "the writer refused a batch: committing its edits one by one");
                    return batch
                        .iter_mut()
                        .map(|edit| match self.attempt(id, std::slice::from_mut(edit)) {
                            Attempt::Done(result) => result,
                            Attempt::Each(mut results) => results
                                .pop()
                                .unwrap_or(Err(StoreError::Job("no edit was committed".into()))),
                            Attempt::Moved => Err(StoreError::Busy),
                            Attempt::Refused { error, .. } => Err(error),
                        })
                        .collect();
                }
                // One edit changed the workbook: it alone is refused.
                Attempt::Refused {
                    error,
                    changed,
                    version,
                } => {
                    return changed
                        .into_iter()
                        .map(|c| {
                            if c {
                                Err(error.duplicate())
                            } else {
                                Ok(version)
                            }
                        })
                        .collect();
                }
            }
        }
        all(Err(StoreError::Busy))
    }

    /// Reads the workbook, applies every edit, writes once if any changed.
    fn attempt(&self, id: SpreadsheetId, batch: &mut [Box<dyn PendingEdit>]) -> Attempt {
        let (identity, version, shared) = match self.load_versioned(id) {
            Ok(loaded) => loaded,
            Err(error) => return Attempt::Done(Err(error)),
        };
        // The writer holds a temporary file open per sheet.
        if shared.sheet_count() > MAX_SHEETS {
            let reason =
                format!("the workbook has more than {MAX_SHEETS} sheets, the most sheetd rewrites");
            return Attempt::Each(refuse_changes(&shared, version, &reason, batch));
        }
        if !shared.unkept.is_empty() {
            if !self.inner.limits.allow_lossy_writes {
                let reason = format!(
                    "the workbook has {}, which a rewrite would remove \
                     (an operator may allow it with --allow-lossy-writes)",
                    shared.unkept.join(" and ")
                );
                return Attempt::Each(refuse_changes(&shared, version, &reason, batch));
            }
            tracing::warn!(
                spreadsheet = %id,
                lost = %shared.unkept.join(", "),
                "rewriting a workbook that loses parts (--allow-lossy-writes)"
            );
        }
        let Kept {
            rewrite,
            hashes,
            calculator,
            formulas,
        } = self.cache().take(id, &shared);
        // A kept rewrite can only save the workbook again in part if the
        // batch changed cells, or moved rows, and not what is written with
        // every cell (a kept writer: if it appended rows). The
        // edits and the recalculation log the cells they change, so what
        // the workbook was is needed without its cells: its outline.
        // (Debug builds check the answer against a whole copy.)
        let before = rewrite.as_ref().map(|_| shared.outline());
        let whole = rewrite
            .as_ref()
            .filter(|_| cfg!(debug_assertions))
            .map(|_| shared.clone());
        let formulas = formulas.unwrap_or_else(|| shared.formulas());
        let has_formulas = calculator.is_some() || formulas.any;
        let mut workbook = Arc::unwrap_or_clone(shared);
        let mut calculator = match calculator {
            None if has_formulas => Calculator::build(&mut workbook),
            kept => kept,
        };
        tracing::debug!(spreadsheet = %id, edits = batch.len(), "committing a batch");
        // Each edit's precondition is checked against the workbook as the
        // edits before it left it: once one changed it, it is a version no
        // request has seen, so of several edits sent with the same
        // `If-Match` only the first goes on.
        let mut current = Current::File(version);
        workbook.row_formulas_absent = !formulas.naming_rows;
        let changes: Vec<bool> = batch
            .iter_mut()
            .map(|edit| {
                let changed = edit.apply(&mut workbook, current);
                if changed {
                    current = Current::Changed;
                    workbook.row_formulas_absent = false;
                }
                changed
            })
            .collect();
        workbook.row_formulas_absent = false;
        let changed = changes.iter().filter(|&&c| c).count();
        let formulas = workbook.formulas_after_edits(Formulas {
            any: has_formulas,
            ..formulas
        });
        // A workbook without formulas has no engine: the formulas the batch
        // wrote into it (§11.4) get one, so that they are computed.
        if changed > 0 && calculator.is_none() && !has_formulas && formulas.any {
            calculator = Calculator::build_for_written(&mut workbook);
        }
        let has_formulas = formulas.any;
        debug_assert!(
            {
                let found = workbook.formulas();
                (formulas.any || !found.any) && (formulas.naming_rows || !found.naming_rows)
            },
            "a formula the log missed"
        );
        let records: Vec<_> = batch.iter().filter_map(|edit| edit.record(id)).collect();
        if changed == 0 {
            // Answered with the file as it is: its tag is the answer's.
            let records: Vec<_> = records
                .into_iter()
                .map(|(key, answer)| (key, answer.with_etag(version.tag)))
                .collect();
            if let Err(error) = self.inner.keys.record(&records, None) {
                tracing::error!(spreadsheet = %id, %error, "idempotency keys not recorded");
            }
            workbook.take_edits();
            let kept = Kept {
                rewrite,
                hashes,
                calculator,
                formulas: Some(formulas),
            };
            self.remember(id, identity, workbook, kept);
            return Attempt::Done(Ok(version));
        }
        // What the file carries beyond the model follows the rows that
        // moved; a formula there that cannot follow refuses the batch.
        if let Err(error) = crate::xlsx::carried_rows_moved(&mut workbook) {
            return Attempt::Refused {
                error: error.into(),
                changed: changes,
                version,
            };
        }
        // Once rewritten, the file no longer holds what the rewrite lost.
        workbook.unkept.clear();
        let edits = workbook.take_edits();
        match calculator
            .as_mut()
            .map(|c| c.recalculate(&mut workbook, &edits))
        {
            Some(Ok(done)) => {
                tracing::debug!(spreadsheet = %id, updated = done.updated, stale = done.stale, "recalculated");
            }
            Some(Err(failed)) => {
                tracing::error!(spreadsheet = %id, "{failed}: the formulas that read the changed cells are marked stale");
                calculator = None;
            }
            None if has_formulas => calc::mark_readers_stale(&mut workbook, &edits),
            None => {}
        }
        let recalculated = workbook.take_edits();
        let changed = before
            .as_ref()
            .and_then(|b| workbook.changed_in_place(b, &[&edits, &recalculated]));
        debug_assert!(
            changed
                .as_ref()
                .is_none_or(|c| whole.is_some_and(|w| workbook.changed_only_in(&w, c))),
            "the logs missed a change"
        );
        // A whole rewrite keeps its rows in chunks for the next save, but
        // not when the last save's chunks could not take a batch that moved
        // rows (the window would have written most of them): a run of such
        // deletes would pay for chunks it cannot use.
        let moved = edits.iter().any(|e| !e.moves.is_empty());
        let keep_chunks = !moved || rewrite.is_none();
        let rewrite = rewrite
            .zip(changed)
            .filter(|(rewrite, changed)| rewrite.takes(&workbook, changed));
        tracing::debug!(spreadsheet = %id, in_part = rewrite.is_some(), "saving");
        let cells = workbook.cell_slots();
        let saved = self.persist(
            id,
            identity,
            (&workbook, cells),
            (rewrite, hashes.unwrap_or_default()),
            keep_chunks,
            records,
        );
        match saved {
            Ok((identity, written, rewrite, hashes)) => {
                let kept = Kept {
                    rewrite: Some(rewrite),
                    hashes,
                    calculator,
                    formulas: Some(formulas),
                };
                self.remember_counted(id, identity, (workbook, cells), kept);
                Attempt::Done(Ok(written))
            }
            Err(StoreError::Moved) => Attempt::Moved,
            Err(error @ StoreError::Conflict(_)) => Attempt::Refused {
                error,
                changed: changes,
                version,
            },
            Err(error) => Attempt::Done(Err(error)),
        }
    }

    /// Writes the workbook, of `cells` cell slots, atomically, saving
    /// `rewrite` again with the rows that changed since it last saved when
    /// given (else rewriting it whole, its rows kept in chunks for the next
    /// save when `keep_chunks`), hashing again only the blocks not as
    /// `last` (the last file's hashes) has them; returns the new file's
    /// identity and version, the rewrite that wrote it and its hashes. The file must still be the
    /// one with identity `read` when the new one is renamed over it
    /// ([`StoreError::Moved`] otherwise); the idempotency keys' answers
    /// (`records`) are made durable before the rename.
    fn persist(
        &self,
        id: SpreadsheetId,
        read: FileIdentity,
        (workbook, cells): (&Workbook, usize),
        (rewrite, last): (Option<(Rewrite, Vec<RowsChanged>)>, Hashes),
        keep_chunks: bool,
        records: Vec<(Key, Answer)>,
    ) -> Result<(FileIdentity, Version, Rewrite, Option<Hashes>), StoreError> {
        let max_cells = self.inner.limits.max_cells;
        if cells > max_cells {
            return Err(StoreError::Conflict(format!(
                "the write would grow the workbook past {max_cells} cells, the configured limit"
            )));
        }
        let (mut rewrite, changed) = match rewrite {
            Some((rewrite, changed)) => (rewrite, Some(changed)),
            None => (
                self.begin_rewrite(workbook)?.keeping_chunks(keep_chunks),
                None,
            ),
        };
        let path = self.path(id);
        let mut prepared = Prepared::write_after(&path, &id.to_string(), last, |out| {
            Ok(unpanicked(|| match &changed {
                Some(changed) => rewrite.save_changed(workbook, changed, out),
                None => rewrite.save(workbook, out),
            })??)
        })?;
        let hashes = prepared.take_hashes();
        if let Some(hashes) = &hashes {
            tracing::debug!(spreadsheet = %id, blocks_hashed = hashes.hashed(), "written");
        }
        let (written, tag) = self.land(id, prepared, Some(read), &records)?;
        let version = self.written(id, &written, tag);
        Ok((FileIdentity::of(&written), version, rewrite, hashes))
    }
}

impl Store {
    /// Begins a rewrite of `workbook`, the writer's temporary files in
    /// `--temp-dir` (the data directory when not given), a panic inside the
    /// writer an I/O error.
    fn begin_rewrite(&self, workbook: &Workbook) -> Result<Rewrite, StoreError> {
        let limits = &self.inner.limits;
        let temp_dir = limits.temp_dir.as_deref().unwrap_or(&self.inner.dir);
        let rewrite = unpanicked(|| Rewrite::begin_in(workbook, Some(temp_dir)))??;
        Ok(rewrite.numbering_every_row(limits.number_every_row))
    }

    /// Writes `workbook` whole to `out`, as a commit's rewrite does: every
    /// file the store writes goes through the same writer, temp directory
    /// and panic guard.
    pub(super) fn write_whole<W: crate::xlsx::KeptWrite + std::io::Seek + Send>(
        &self,
        workbook: &Workbook,
        out: W,
    ) -> Result<(), StoreError> {
        let mut rewrite = self.begin_rewrite(workbook)?;
        Ok(unpanicked(|| rewrite.save(workbook, out))??)
    }
}

/// The same result for each of `count` edits.
fn batch_results(
    count: usize,
    result: &Result<Version, StoreError>,
) -> Vec<Result<Version, StoreError>> {
    (0..count)
        .map(|_| match result {
            Ok(version) => Ok(*version),
            Err(error) => Err(error.duplicate()),
        })
        .collect()
}

/// A workbook that cannot be rewritten (it has parts a rewrite would lose,
/// or too many sheets) accepts no change: each edit runs on its own copy,
/// and those that would change it are refused for `reason`.
fn refuse_changes(
    workbook: &Workbook,
    version: Version,
    reason: &str,
    batch: &mut [Box<dyn PendingEdit>],
) -> Vec<Result<Version, StoreError>> {
    batch
        .iter_mut()
        .map(|edit| {
            if edit.apply(&mut workbook.clone(), Current::File(version)) {
                Err(StoreError::Conflict(reason.to_owned()))
            } else {
                Ok(version)
            }
        })
        .collect()
}

/// Runs the writer, turning a panic inside it (rust_xlsxwriter panics when
/// its temp directory is full) into an I/O error: the batch is answered
/// 500, the file is left as it was, and the process goes on.
fn unpanicked<T>(write: impl FnOnce() -> T) -> Result<T, StoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(write)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        StoreError::Io(std::io::Error::other(format!(
            "the writer panicked: {what}"
        )))
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::{Cell, Sheet};

    /// Where an edit's answer comes back.
    type Answer<T> = oneshot::Receiver<Result<Versioned<T>, StoreError>>;

    /// An edit that puts `text` in column A of a new row, without the
    /// validation a request gets, so the writer sees what it is given.
    fn put(text: String) -> (Box<dyn PendingEdit>, Answer<usize>) {
        put_if(text, None)
    }

    /// [`put`], made only if `precondition` holds at its turn.
    fn put_if(
        text: String,
        precondition: Option<Precondition>,
    ) -> (Box<dyn PendingEdit>, Answer<usize>) {
        let (reply, answer) = oneshot::channel();
        let f = move |workbook: &mut Workbook| {
            let sheet = &mut workbook.sheets[0];
            sheet.rows.push(vec![Cell::Text(text.clone())]);
            Ok(Edit {
                value: sheet.rows.len(),
                changed: true,
            })
        };
        let edit = EditRequest {
            f,
            reply,
            applied: None,
            key: None,
            precondition,
        };
        (Box::new(edit), answer)
    }

    /// A store holding one workbook of one sheet with a header cell.
    fn store_with_one_sheet(dir: &std::path::Path) -> (Store, SpreadsheetId) {
        let limits = crate::Config::with_data_dir(dir).store_limits();
        let store = Store::open(dir, limits).unwrap();
        let id = SpreadsheetId::new_random();
        let workbook = Workbook {
            sheets: vec![Sheet {
                name: "S".into(),
                rows: vec![vec![Cell::Text("name".into())]],
                ..Sheet::default()
            }],
            ..Workbook::default()
        };
        store.create_from_model(id, &workbook).unwrap();
        (store, id)
    }

    /// The texts of column A of the stored workbook.
    fn column_a(store: &Store, id: SpreadsheetId) -> Vec<Cell> {
        let (_, saved) = store.load(id).unwrap();
        saved.sheets[0].rows.iter().map(|r| r[0].clone()).collect()
    }

    #[test]
    fn of_edits_in_one_batch_with_the_same_if_match_only_the_first_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store_with_one_sheet(dir.path());
        let (_, read, _) = store.load_versioned(id).unwrap();
        let if_match = Precondition {
            if_match: Some(crate::store::Tags::List(vec![crate::store::Named {
                weak: false,
                opaque: read.tag.to_string(),
            }])),
            ..Precondition::default()
        };
        // The second edit has no precondition; the third names the version
        // read before the batch, which the first edit changed.
        let (first, first_answer) = put_if("a".into(), Some(if_match.clone()));
        let (free, free_answer) = put("b".into());
        let (late, late_answer) = put_if("c".into(), Some(if_match));
        let deadline = Instant::now() + Duration::from_secs(10);
        store.commit(id, deadline, vec![first, free, late]);

        let made = first_answer.blocking_recv().unwrap().unwrap();
        assert_ne!(made.version.tag, read.tag);
        let free = free_answer.blocking_recv().unwrap().unwrap();
        assert_eq!(free.version, made.version, "one rewrite for the batch");
        let refused = late_answer.blocking_recv().unwrap().unwrap_err();
        assert!(
            matches!(refused, StoreError::PreconditionFailed),
            "{refused}"
        );
        assert_eq!(
            column_a(&store, id),
            ["name", "a", "b"].map(|t| Cell::Text(t.into())).to_vec()
        );
        let (_, on_disk, _) = store.load_versioned(id).unwrap();
        assert_eq!(on_disk.tag, made.version.tag);
    }

    #[test]
    fn an_edit_the_writer_refuses_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store_with_one_sheet(dir.path());

        // Three edits in one batch; the middle one is past the cell limit.
        let (first, first_answer) = put("a".into());
        let (bad, bad_answer) = put("x".repeat(40_000));
        let (last, last_answer) = put("b".into());
        let deadline = Instant::now() + Duration::from_secs(10);
        store.commit(id, deadline, vec![first, bad, last]);

        assert!(first_answer.blocking_recv().unwrap().is_ok());
        assert!(last_answer.blocking_recv().unwrap().is_ok());
        let refused = bad_answer.blocking_recv().unwrap().unwrap_err();
        assert!(matches!(refused, StoreError::Conflict(_)), "{refused}");
        assert_eq!(
            column_a(&store, id),
            ["name", "a", "b"].map(|t| Cell::Text(t.into())).to_vec()
        );
    }
}
