//! Group commit: the edits waiting for one spreadsheet are applied to its
//! workbook in arrival order and written with a single rewrite; each request
//! is answered only once the rewrite that holds its edit is durable.
//!
//! An edit whose request is invalid answers at once and changes nothing, so
//! it never fails the others. When the batch cannot be written (a refusal,
//! an I/O error), every edit that succeeded in memory gets that error and
//! nothing of the batch is kept.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::oneshot;

use super::atomic::replace_atomically;
use super::cache::{FileIdentity, Kept};
use super::{Edit, Store, StoreError};
use crate::calc::{self, Calculator};
use crate::model::{SpreadsheetId, Workbook};
use crate::xlsx::Rewrite;

/// An edit waiting in a queue, its result type erased.
pub trait PendingEdit: Send {
    /// Applies the edit. An invalid request answers here and reports no
    /// change; a valid one answers later, through [`Applied::answer`].
    fn apply(self: Box<Self>, workbook: &mut Workbook) -> Applied;
    /// Answers without applying (the commit could not even start).
    fn reject(self: Box<Self>, error: StoreError);
}

/// What applying an edit did, and how to answer once the commit is done.
pub struct Applied {
    changed: bool,
    answer: Box<dyn FnOnce(Result<(), StoreError>) + Send>,
}

/// A request's edit function and the channel its answer goes back on.
pub struct EditRequest<F, T, E> {
    pub f: F,
    pub reply: oneshot::Sender<Result<T, E>>,
}

impl<F, T, E> PendingEdit for EditRequest<F, T, E>
where
    F: FnOnce(&mut Workbook) -> Result<Edit<T>, E> + Send + 'static,
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    fn apply(self: Box<Self>, workbook: &mut Workbook) -> Applied {
        let EditRequest { f, reply } = *self;
        match f(workbook) {
            Err(error) => {
                let _ = reply.send(Err(error));
                Applied {
                    changed: false,
                    answer: Box::new(|_| {}),
                }
            }
            Ok(Edit { value, changed }) => Applied {
                changed,
                answer: Box::new(move |committed| {
                    let _ = reply.send(committed.map(|()| value).map_err(E::from));
                }),
            },
        }
    }

    fn reject(self: Box<Self>, error: StoreError) {
        let _ = self.reply.send(Err(error.into()));
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
        }
    }
}

impl Store {
    /// Commits a batch: takes the cross-process lock (until `deadline`),
    /// applies every edit, writes once if any changed, answers all.
    pub(super) fn commit(
        &self,
        id: SpreadsheetId,
        deadline: Instant,
        batch: Vec<Box<dyn PendingEdit>>,
    ) {
        let prepared = self
            .lock_across_processes(id, deadline)
            .and_then(|lock| Ok((lock, self.load(id)?)));
        let (_across_processes, (identity, shared)) = match prepared {
            Ok(prepared) => prepared,
            Err(error) => {
                for edit in batch {
                    edit.reject(error.duplicate());
                }
                return;
            }
        };
        if !shared.unkept.is_empty() {
            if !self.inner.limits.allow_lossy_writes {
                return self.commit_refusing_changes(&shared, batch);
            }
            tracing::warn!(
                spreadsheet = %id,
                lost = %shared.unkept.join(", "),
                "rewriting a workbook that loses parts (--allow-lossy-writes)"
            );
        }
        let Kept {
            rewrite,
            calculator,
        } = self.cache().take(id, &shared);
        // A kept rewrite can only save the workbook again if the batch
        // appends rows, which takes the workbook as it was to compare with:
        // a copy (a few milliseconds for 10,000 rows, where formatting them
        // again takes tens). The calculator needs none: the edits record
        // the cells they set.
        let before = rewrite.as_ref().map(|_| shared.clone());
        let has_formulas = calculator.is_some() || shared.has_formulas();
        let mut workbook = Arc::unwrap_or_clone(shared);
        let mut calculator = match calculator {
            None if has_formulas => Calculator::build(&mut workbook),
            kept => kept,
        };
        let mut changed = false;
        tracing::debug!(spreadsheet = %id, edits = batch.len(), "committing a batch");
        let mut answers = Vec::with_capacity(batch.len());
        for edit in batch {
            let applied = edit.apply(&mut workbook);
            changed |= applied.changed;
            answers.push(applied.answer);
        }
        let result = if changed {
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
            let appends = before.as_deref().is_some_and(|b| workbook.appends_to(b));
            // After a batch that did more than append, the next commit
            // rewrites in full without the copy, and only the one after
            // that copies again: a spreadsheet that is mostly updated pays
            // for the copy on every other write.
            let keep = appends || rewrite.is_none();
            let rewrite = rewrite.filter(|_| appends);
            tracing::debug!(spreadsheet = %id, new_rows_only = rewrite.is_some(), "saving");
            self.persist(id, &workbook, rewrite)
                .map(|(identity, rewrite)| {
                    let kept = Kept {
                        rewrite: keep.then_some(rewrite),
                        calculator,
                    };
                    self.remember(id, identity, workbook, kept)
                })
        } else {
            workbook.take_edits();
            let kept = Kept {
                rewrite,
                calculator,
            };
            self.remember(id, identity, workbook, kept);
            Ok(())
        };
        for answer in answers {
            answer(match &result {
                Ok(()) => Ok(()),
                Err(error) => Err(error.duplicate()),
            });
        }
        // Freed once the requests are answered: freeing 100,000 rows takes
        // milliseconds.
        drop(before);
    }

    /// A workbook with parts a rewrite would lose accepts no change: each
    /// edit runs on its own copy, and those that would change it are refused.
    fn commit_refusing_changes(&self, workbook: &Workbook, batch: Vec<Box<dyn PendingEdit>>) {
        let reason = format!(
            "the workbook has {}, which a rewrite would remove \
             (an operator may allow it with --allow-lossy-writes)",
            workbook.unkept.join(" and ")
        );
        for edit in batch {
            let applied = edit.apply(&mut workbook.clone());
            (applied.answer)(if applied.changed {
                Err(StoreError::Conflict(reason.clone()))
            } else {
                Ok(())
            });
        }
    }

    /// Writes the workbook atomically, saving `rewrite` again when the
    /// workbook appends to what it last saved; returns the new file's
    /// identity and the rewrite that wrote it.
    fn persist(
        &self,
        id: SpreadsheetId,
        workbook: &Workbook,
        rewrite: Option<Rewrite>,
    ) -> Result<(FileIdentity, Rewrite), StoreError> {
        let max_cells = self.inner.limits.max_cells;
        if workbook.cell_slots() > max_cells {
            return Err(StoreError::Conflict(format!(
                "the write would grow the workbook past {max_cells} cells, the configured limit"
            )));
        }
        let temp_dir = self
            .inner
            .limits
            .temp_dir
            .as_deref()
            .unwrap_or(&self.inner.dir);
        let mut rewrite = match rewrite {
            Some(rewrite) => rewrite,
            None => unpanicked(|| Rewrite::begin_in(workbook, Some(temp_dir)))??,
        };
        let written = replace_atomically(&self.path(id), &id.to_string(), |out| {
            Ok(unpanicked(|| rewrite.save(workbook, out))??)
        })?;
        Ok((FileIdentity::of(&written), rewrite))
    }
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
