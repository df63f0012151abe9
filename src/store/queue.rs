//! The write queue of each spreadsheet, for group commit.
//!
//! A write request joins its spreadsheet's queue (refused when `limit`
//! requests are already in it) and leaves its edit there. Whoever then holds
//! the queue's committer lock takes every edit waiting and commits them with
//! one rewrite; edits that arrive meanwhile wait for the next commit.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::commit::PendingEdit;
use super::locked;
use crate::model::SpreadsheetId;

/// One queue per spreadsheet, made on first use and dropped once no
/// request is in it, so ids that are asked for once leave nothing behind.
#[derive(Default)]
pub struct Queues {
    map: Arc<Mutex<HashMap<SpreadsheetId, Arc<Queue>>>>,
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
    /// Woken whenever an edit is left in `pending`.
    arrival: Notify,
}

/// A request's place in its spreadsheet's queue; dropping it makes room.
pub struct Place(Arc<Queue>, Leave);

/// What the last request to leave a queue needs to drop it.
struct Leave {
    id: SpreadsheetId,
    map: Arc<Mutex<HashMap<SpreadsheetId, Arc<Queue>>>>,
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) != 1 {
            return;
        }
        let mut map = locked(&self.1.map);
        // Still empty with the map locked (nobody joined meanwhile), only
        // the map and this place hold the queue, and no commit holds or
        // waits for its committer lock.
        let idle = self.0.in_flight.load(Ordering::SeqCst) == 0
            && Arc::strong_count(&self.0) == 2
            && Arc::strong_count(&self.0.committer) == 1;
        if idle && map.get(&self.1.id).is_some_and(|q| Arc::ptr_eq(q, &self.0)) {
            map.remove(&self.1.id);
        }
    }
}

impl Queues {
    /// A place in the spreadsheet's queue, unless `limit` requests are in it.
    pub fn join(&self, id: SpreadsheetId, limit: usize) -> Option<Place> {
        let queue = locked(&self.map).entry(id).or_default().clone();
        let ahead = queue.in_flight.fetch_add(1, Ordering::SeqCst);
        // Dropped at once when the queue is full: it leaves as it came.
        let place = Place(
            queue,
            Leave {
                id,
                map: self.map.clone(),
            },
        );
        (ahead < limit).then_some(place)
    }

    /// How many spreadsheets have a queue now.
    #[cfg(test)]
    fn len(&self) -> usize {
        locked(&self.map).len()
    }
}

impl Place {
    /// Leaves an edit for the next commit; the ticket can withdraw it.
    pub fn push(&self, edit: Box<dyn PendingEdit>) -> u64 {
        let ticket = self.0.next_ticket.fetch_add(1, Ordering::SeqCst);
        locked(&self.0.pending).push((ticket, edit));
        self.0.arrival.notify_waiters();
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

    /// Waits until `expected` edits wait for a commit, until no edit has
    /// arrived for `gap`, or until `until`, whichever comes first.
    pub async fn gather(&self, expected: usize, gap: Duration, until: Instant) {
        loop {
            // Registered before the count is read, so that no arrival
            // between the two goes unnoticed.
            let arrival = self.0.arrival.notified();
            tokio::pin!(arrival);
            arrival.as_mut().enable();
            if locked(&self.0.pending).len() >= expected {
                return;
            }
            let wake = until.min(Instant::now() + gap);
            if tokio::time::timeout_at(wake, arrival).await.is_err() {
                return;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Workbook;
    use crate::store::StoreError;

    /// An edit that is never applied: these tests only count them.
    struct Waiting;

    impl PendingEdit for Waiting {
        fn apply(&mut self, _: &mut Workbook, _: crate::store::Current) -> bool {
            unreachable!("the queue tests commit nothing")
        }
        fn answer(self: Box<Self>, _: Result<crate::store::Version, StoreError>) {}
        fn record(&self, _: SpreadsheetId) -> Option<(crate::store::Key, crate::store::Answer)> {
            None
        }
    }

    const GAP: Duration = Duration::from_millis(2);
    const DELAY: Duration = Duration::from_millis(10);

    /// Two places in one queue: the committer's, and the one `arrivals`
    /// leaves edits through.
    fn places() -> (Place, Place) {
        let (queues, id) = (Queues::default(), SpreadsheetId::new_random());
        let place = || queues.join(id, 100).expect("room");
        (place(), place())
    }

    /// Runs `gather` for `expected` edits while `count` arrive from another
    /// task, one each millisecond; returns how long it waited and how many
    /// edits then wait.
    async fn gather_while_arriving(count: usize, expected: usize) -> (Duration, usize) {
        let (place, other) = places();
        tokio::spawn(async move {
            for _ in 0..count {
                tokio::time::sleep(Duration::from_millis(1)).await;
                other.push(Box::new(Waiting));
            }
        });
        let start = Instant::now();
        place.gather(expected, GAP, start + DELAY).await;
        (start.elapsed(), place.take_all().len())
    }

    #[tokio::test(start_paused = true)]
    async fn gather_ends_as_soon_as_the_expected_edits_wait() {
        let waited = gather_while_arriving(3, 3).await;
        assert_eq!(waited, (Duration::from_millis(3), 3));
    }

    #[tokio::test(start_paused = true)]
    async fn gather_ends_when_no_edit_arrives_for_the_gap() {
        // The last edit comes at 2 ms; nothing follows for 2 ms more.
        let waited = gather_while_arriving(2, 5).await;
        assert_eq!(waited, (Duration::from_millis(4), 2));
    }

    #[tokio::test(start_paused = true)]
    async fn gather_ends_at_the_deadline_while_edits_keep_coming() {
        let (waited, edits) = gather_while_arriving(50, 100).await;
        assert_eq!(waited, DELAY);
        // The tenth edit arrives at the deadline itself, on either side.
        assert!((9..=10).contains(&edits), "{edits} edits");
    }

    #[test]
    fn a_queue_is_dropped_when_its_last_request_leaves() {
        let queues = Queues::default();
        let (a, b) = (SpreadsheetId::new_random(), SpreadsheetId::new_random());
        let first = queues.join(a, 2).expect("room");
        let second = queues.join(a, 2).expect("room");
        assert!(queues.join(a, 2).is_none(), "full");
        let other = queues.join(b, 2).expect("room");
        assert_eq!(queues.len(), 2);
        drop(first);
        assert_eq!(queues.len(), 2, "a request is still in it");
        drop((second, other));
        assert_eq!(queues.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn gather_does_not_wait_when_the_edits_are_there() {
        let (place, _) = places();
        place.push(Box::new(Waiting));
        place.push(Box::new(Waiting));
        let start = Instant::now();
        place.gather(2, GAP, start + DELAY).await;
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
