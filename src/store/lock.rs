//! Locks that serialize the writes of one spreadsheet.
//!
//! Inside one process a `tokio::sync::Mutex` per spreadsheet queues writers
//! without blocking a runtime thread. Between processes sharing a data
//! directory an advisory lock on a sibling lock file does the same; the lock
//! cannot sit on the workbook itself, because every write renames a new file
//! (a new inode) over it.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::model::SpreadsheetId;

/// The directory, inside the data directory, that holds the lock files.
pub const LOCK_DIR: &str = ".sheetd-locks";

/// One async mutex per spreadsheet, made on first use.
#[derive(Default)]
pub struct Locks {
    map: Mutex<HashMap<SpreadsheetId, Arc<tokio::sync::Mutex<()>>>>,
}

impl Locks {
    pub fn of(&self, id: SpreadsheetId) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        map.entry(id).or_default().clone()
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

/// Blocks until this process holds the spreadsheet's cross-process lock; it
/// is released when the returned file is dropped.
pub fn lock_exclusive(data_dir: &Path, id: SpreadsheetId) -> std::io::Result<File> {
    let file = open_lock_file(data_dir, &id.to_string())?;
    file.lock()?;
    Ok(file)
}

/// The lock if nobody holds it now, else `None`.
pub fn try_lock_exclusive(data_dir: &Path, id: &str) -> std::io::Result<Option<File>> {
    let file = open_lock_file(data_dir, id)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}
