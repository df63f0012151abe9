//! Locks that serialize the writes of one spreadsheet.
//!
//! Inside one process each spreadsheet has a queue: an async mutex that
//! writers take in turn without blocking a runtime thread, and a count of
//! the requests in it, so that a full queue can be refused (503) instead of
//! growing without bound. Between processes sharing a data directory an
//! advisory lock on a sibling lock file does the same; the lock cannot sit
//! on the workbook itself, because every write renames a new file (a new
//! inode) over it.

use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OwnedMutexGuard;

use crate::model::SpreadsheetId;

/// The directory, inside the data directory, that holds the lock files.
pub const LOCK_DIR: &str = ".sheetd-locks";

/// One queue per spreadsheet, made on first use.
#[derive(Default)]
pub struct Locks {
    map: Mutex<HashMap<SpreadsheetId, Arc<Queue>>>,
}

/// The writers of one spreadsheet.
#[derive(Default)]
struct Queue {
    mutex: Arc<tokio::sync::Mutex<()>>,
    /// Requests holding or waiting for `mutex`.
    in_flight: AtomicUsize,
}

/// A request's place in a queue; dropping it makes room for another.
pub struct Place(Arc<Queue>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The in-process turn of a request: its place, and the queue's lock.
pub struct Turn {
    _guard: OwnedMutexGuard<()>,
    _place: Place,
}

impl Locks {
    /// A place in the spreadsheet's queue, unless `limit` requests are in it.
    pub fn join(&self, id: SpreadsheetId, limit: usize) -> Option<Place> {
        let queue = {
            let mut map = self
                .map
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            map.entry(id).or_default().clone()
        };
        if queue.in_flight.fetch_add(1, Ordering::SeqCst) >= limit {
            queue.in_flight.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Place(queue))
    }
}

impl Place {
    /// Waits for the queue's lock until `deadline`; `None` when it passed.
    pub async fn turn_until(self, deadline: Instant) -> Option<Turn> {
        let mutex = self.0.mutex.clone();
        let guard = tokio::time::timeout_at(deadline.into(), mutex.lock_owned())
            .await
            .ok()?;
        Some(Turn {
            _guard: guard,
            _place: self,
        })
    }
}

fn lock_path(data_dir: &Path, id: &str) -> PathBuf {
    data_dir.join(LOCK_DIR).join(format!("{id}.lock"))
}

fn open_lock_file(data_dir: &Path, id: &str) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path(data_dir, id))
}

/// Blocks until this process holds the spreadsheet's cross-process lock,
/// giving up (`None`) at `deadline`; the lock is released when the returned
/// file is dropped. The lock is polled: the standard library has no timed
/// wait for it.
pub fn lock_exclusive_until(
    data_dir: &Path,
    id: SpreadsheetId,
    deadline: Instant,
) -> std::io::Result<Option<File>> {
    let file = open_lock_file(data_dir, &id.to_string())?;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(file)),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// The lock if nobody holds it now, else `None`.
pub fn try_lock_exclusive(data_dir: &Path, id: &str) -> std::io::Result<Option<File>> {
    let file = open_lock_file(data_dir, id)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}
