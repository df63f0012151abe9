//! The advisory file locks that serialize the writes of one spreadsheet
//! between processes sharing a data directory (inside one process, the
//! spreadsheet's queue does it; see `queue`). The lock cannot sit on the
//! workbook itself, because every write renames a new file (a new inode)
//! over it, so each spreadsheet has a sibling lock file.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::model::SpreadsheetId;

/// The directory, inside the data directory, that holds the lock files.
pub const LOCK_DIR: &str = ".sheetd-locks";

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

/// Removes the spreadsheet's lock file, if there is one; the caller holds
/// the lock (or the workbook is gone and nobody does).
pub fn remove_lock_file(data_dir: &Path, id: SpreadsheetId) -> std::io::Result<()> {
    super::remove_if_present(&lock_path(data_dir, &id.to_string()))
}
