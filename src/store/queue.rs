//! The write queue of each spreadsheet, for group commit.
//!
//! A write request joins its spreadsheet's queue (refused when `limit`
//! requests are already in it) and leaves its edit there. Whoever then holds
//! the queue's committer lock takes every edit waiting and commits them with
//! one rewrite; edits that arrive meanwhile wait for the next commit.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::commit::PendingEdit;
use crate::model::SpreadsheetId;

/// One queue per spreadsheet, made on first use.
#[derive(Default)]
pub struct Queues {
    map: Mutex<HashMap<SpreadsheetId, Arc<Queue>>>,
}

#[derive(Default)]
struct Queue {
    /// Held while a batch of this spreadsheet is being committed.
    committer: Arc<tokio::sync::Mutex<()>>,
    /// Edits waiting for a commit, in arrival order, by ticket.
    pending: Mutex<Vec<(u64, Box<dyn PendingEdit>)>>,
    next_ticket: AtomicU64,
    /// Requests in the queue: waiting, or being committed.
    in_flight: AtomicUsize,
    /// The number of edits the last commit took.
    last_batch: AtomicUsize,
}

/// A request's place in its spreadsheet's queue; dropping it makes room.
pub struct Place(Arc<Queue>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Queues {
    /// A place in the spreadsheet's queue, unless `limit` requests are in it.
    pub fn join(&self, id: SpreadsheetId, limit: usize) -> Option<Place> {
        let queue = locked(&self.map).entry(id).or_default().clone();
        if queue.in_flight.fetch_add(1, Ordering::SeqCst) >= limit {
            queue.in_flight.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Place(queue))
    }
}

impl Place {
    /// Leaves an edit for the next commit; the ticket can withdraw it.
    pub fn push(&self, edit: Box<dyn PendingEdit>) -> u64 {
        let ticket = self.0.next_ticket.fetch_add(1, Ordering::SeqCst);
        locked(&self.0.pending).push((ticket, edit));
        ticket
    }

    /// Takes the edit back if no commit has taken it yet.
    pub fn withdraw(&self, ticket: u64) -> Option<Box<dyn PendingEdit>> {
        let mut pending = locked(&self.0.pending);
        let at = pending.iter().position(|(t, _)| *t == ticket)?;
        Some(pending.remove(at).1)
    }

    /// Every edit waiting, in arrival order.
    pub fn take_all(&self) -> Vec<Box<dyn PendingEdit>> {
        let batch: Vec<_> = locked(&self.0.pending)
            .drain(..)
            .map(|(_, edit)| edit)
            .collect();
        if !batch.is_empty() {
            self.0.last_batch.store(batch.len(), Ordering::Relaxed);
        }
        batch
    }

    /// How many edits wait for a commit.
    pub fn waiting(&self) -> usize {
        locked(&self.0.pending).len()
    }

    /// How many edits the spreadsheet's last commit took.
    pub fn last_batch(&self) -> usize {
        self.0.last_batch.load(Ordering::Relaxed)
    }

    /// The lock a committer holds.
    pub fn committer(&self) -> Arc<tokio::sync::Mutex<()>> {
        self.0.committer.clone()
    }
}
