//! Idempotency keys: a write sent again with the same `Idempotency-Key`
//! within the window gets the first answer, and is not applied again.
//!
//! The answers are kept in memory and in a journal file in the data
//! directory (`.sheetd-keys`, one JSON object per line), so they survive a
//! restart. A write's record is written, and made durable, *before* the
//! rename that commits the write, marked "pending" with the identity of the
//! new file; once the rename is done it is marked done. After a crash
//! between the two, the record counts only if the workbook on disk is the
//! file it names: so a retry neither loses nor repeats the write, whether
//! the crash, or a failed directory sync, came before or after the rename.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StoreError;
use super::cache::FileIdentity;

/// The journal's name in the data directory.
pub const JOURNAL: &str = ".sheetd-keys";

/// Most keys remembered at once; past it the oldest are forgotten first.
const MAX_KEYS: usize = 100_000;

/// A key as a request gave it, with what identifies that request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub key: String,
    /// A hash of the request's method, path and body: the same key with
    /// another request is a client error, not a retry.
    pub fingerprint: u64,
}

/// What a key's first request was answered.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub spreadsheet: String,
    /// The edit's value (a count, a new id), as the handler renders it.
    pub value: Value,
}

/// What to do with a request that carries a key.
#[derive(Debug)]
pub enum Claim {
    /// The first request with this key: go on; the claim is released when
    /// the request ends, answered or not.
    First,
    /// A request with this key was answered: answer the same.
    Answered(Answer),
    /// A request with this key is being handled now.
    InProgress,
    /// The key was used for another request.
    Mismatch,
}

/// One line of the journal.
#[derive(Serialize, Deserialize)]
struct Line {
    key: String,
    /// Fingerprint, as hex (JSON numbers lose 64-bit integers).
    fingerprint: String,
    /// Seconds since 1970 when the answer was given.
    at: u64,
    answer: Answer,
    /// The new file's identity, for a record written before its rename;
    /// `None` once done.
    pending: Option<FileIdentity>,
}

struct Entry {
    fingerprint: u64,
    at: u64,
    answer: Answer,
    pending: Option<FileIdentity>,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Keys whose first request is being handled.
    claimed: HashMap<String, u64>,
    /// Lines in the journal file, to compact it when it has grown.
    lines: usize,
}

/// The keys of a data directory.
pub struct Keys {
    path: PathBuf,
    window: Duration,
    state: Mutex<State>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Keys {
    /// Loads the journal of `dir`, keeping the records still in the window
    /// and, of the pending ones, those whose write is on disk
    /// (`identity_of` gives a spreadsheet's file identity now).
    pub fn open(
        dir: &Path,
        window: Duration,
        identity_of: impl Fn(&str) -> Option<FileIdentity>,
    ) -> Result<Keys, StoreError> {
        let keys = Keys {
            path: dir.join(JOURNAL),
            window,
            state: Mutex::new(State::default()),
        };
        let oldest = now().saturating_sub(window.as_secs());
        let mut state = State::default();
        match File::open(&keys.path) {
            Ok(file) => {
                for line in BufReader::new(file).lines() {
                    // A line torn by a crash ends the journal's useful part.
                    let Ok(line) = serde_json::from_str::<Line>(&line?) else {
                        break;
                    };
                    let Ok(fingerprint) = u64::from_str_radix(&line.fingerprint, 16) else {
                        continue;
                    };
                    state.entries.insert(
                        line.key,
                        Entry {
                            fingerprint,
                            at: line.at,
                            answer: line.answer,
                            pending: line.pending,
                        },
                    );
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        state.entries.retain(|_, entry| {
            entry.at >= oldest
                && entry
                    .pending
                    .is_none_or(|written| identity_of(&entry.answer.spreadsheet) == Some(written))
        });
        for entry in state.entries.values_mut() {
            entry.pending = None;
        }
        *keys.locked() = state;
        keys.compact()?;
        Ok(keys)
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What to do with a request carrying `key`.
    pub fn claim(&self, key: &Key) -> Claim {
        let mut state = self.locked();
        let oldest = now().saturating_sub(self.window.as_secs());
        if let Some(entry) = state.entries.get(&key.key)
            && entry.at >= oldest
        {
            return if entry.fingerprint != key.fingerprint {
                Claim::Mismatch
            } else {
                Claim::Answered(entry.answer.clone())
            };
        }
        match state.claimed.get(&key.key) {
            Some(&fingerprint) if fingerprint == key.fingerprint => Claim::InProgress,
            Some(_) => Claim::Mismatch,
            None => {
                state.claimed.insert(key.key.clone(), key.fingerprint);
                Claim::First
            }
        }
    }

    /// Ends a claim without an answer to remember (the request failed).
    pub fn release(&self, key: &Key) {
        self.locked().claimed.remove(&key.key);
    }

    /// Records the answers of a write, before the rename that commits it,
    /// durably: `written` is the new file's identity, or `None` when the
    /// write changed nothing and there is no rename to wait for.
    pub fn record(
        &self,
        answers: Vec<(Key, Answer)>,
        written: Option<FileIdentity>,
    ) -> Result<(), StoreError> {
        if answers.is_empty() {
            return Ok(());
        }
        let at = now();
        let mut text = String::new();
        for (key, answer) in &answers {
            let line = Line {
                key: key.key.clone(),
                fingerprint: format!("{:x}", key.fingerprint),
                at,
                answer: answer.clone(),
                pending: written,
            };
            text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()?;
        let mut state = self.locked();
        state.lines += answers.len();
        for (key, answer) in answers {
            state.claimed.remove(&key.key);
            state.entries.insert(
                key.key,
                Entry {
                    fingerprint: key.fingerprint,
                    at,
                    answer,
                    pending: None,
                },
            );
        }
        let over = state.entries.len().saturating_sub(MAX_KEYS);
        if over > 0 {
            let mut oldest: Vec<_> = state
                .entries
                .iter()
                .map(|(k, e)| (e.at, k.clone()))
                .collect();
            oldest.sort_unstable();
            for (_, key) in oldest.into_iter().take(over) {
                state.entries.remove(&key);
            }
        }
        let compact = state.lines > 2 * state.entries.len() + 1000;
        drop(state);
        if compact {
            self.compact()?;
        }
        Ok(())
    }

    /// Forgets the answers recorded for a write whose rename failed.
    pub fn unrecord(&self, keys: &[Key]) {
        let mut state = self.locked();
        for key in keys {
            state.entries.remove(&key.key);
            state.claimed.remove(&key.key);
        }
    }

    /// Rewrites the journal with the records in memory, all done, and
    /// replaces the old one atomically.
    fn compact(&self) -> Result<(), StoreError> {
        let mut state = self.locked();
        let oldest = now().saturating_sub(self.window.as_secs());
        state.entries.retain(|_, e| e.at >= oldest);
        if state.entries.is_empty() {
            // Nothing to remember: no file (a data directory that never
            // saw a key keeps none).
            state.lines = 0;
            return match fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
                _ => Ok(()),
            };
        }
        let mut text = String::new();
        for (key, entry) in &state.entries {
            let line = Line {
                key: key.clone(),
                fingerprint: format!("{:x}", entry.fingerprint),
                at: entry.at,
                answer: entry.answer.clone(),
                pending: None,
            };
            text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut temp = tempfile::Builder::new()
            .prefix(&format!("{JOURNAL}-"))
            .tempfile_in(dir)?;
        temp.write_all(text.as_bytes())?;
        temp.as_file().sync_all()?;
        temp.persist(&self.path)
            .map_err(|e| StoreError::Io(e.error))?;
        state.lines = state.entries.len();
        Ok(())
    }
}

/// FNV-1a, 64 bits: a stable hash of a request (not a secret; the same
/// client sends the same key), the same in every build and version.
pub fn fingerprint(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in *part {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        hash ^= 0xff;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str, fingerprint: u64) -> Key {
        Key {
            key: k.into(),
            fingerprint,
        }
    }

    fn answer(value: u64) -> Answer {
        Answer {
            spreadsheet: "s".into(),
            value: value.into(),
        }
    }

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn a_key_is_claimed_once_then_answered_with_its_first_answer() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keys::open(dir.path(), DAY, |_| None).unwrap();
        assert!(matches!(keys.claim(&key("k", 1)), Claim::First));
        assert!(matches!(keys.claim(&key("k", 1)), Claim::InProgress));
        assert!(matches!(keys.claim(&key("k", 2)), Claim::Mismatch));
        keys.record(vec![(key("k", 1), answer(3))], None).unwrap();
        assert!(matches!(keys.claim(&key("k", 1)), Claim::Answered(a) if a == answer(3)));
        assert!(matches!(keys.claim(&key("k", 2)), Claim::Mismatch));
        // A released claim (a failed request) can be claimed again.
        assert!(matches!(keys.claim(&key("j", 1)), Claim::First));
        keys.release(&key("j", 1));
        assert!(matches!(keys.claim(&key("j", 1)), Claim::First));
    }

    #[test]
    fn answers_survive_a_restart_and_pending_ones_count_only_if_their_file_is_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("book");
        fs::write(&file, b"new").unwrap();
        let written = FileIdentity::of(&fs::metadata(&file).unwrap());
        {
            let keys = Keys::open(dir.path(), DAY, |_| None).unwrap();
            keys.claim(&key("done", 1));
            keys.record(vec![(key("done", 1), answer(1))], None)
                .unwrap();
            keys.claim(&key("landed", 1));
            keys.record(vec![(key("landed", 1), answer(2))], Some(written))
                .unwrap();
            keys.claim(&key("lost", 1));
            let other = FileIdentity::of(&fs::metadata(dir.path()).unwrap());
            keys.record(vec![(key("lost", 1), answer(3))], Some(other))
                .unwrap();
        }
        let keys = Keys::open(dir.path(), DAY, |_| Some(written)).unwrap();
        assert!(matches!(keys.claim(&key("done", 1)), Claim::Answered(a) if a == answer(1)));
        assert!(matches!(keys.claim(&key("landed", 1)), Claim::Answered(a) if a == answer(2)));
        assert!(matches!(keys.claim(&key("lost", 1)), Claim::First));
    }

    #[test]
    fn answers_older_than_the_window_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let line = |key: &str, at: u64| {
            let answer = r#"{"spreadsheet": "s", "value": 1}"#;
            format!(
                r#"{{"key": "{key}", "fingerprint": "1", "at": {at}, "answer": {answer}, "pending": null}}"#
            )
        };
        let text = format!("{}\n{}\n", line("old", 1_000), line("new", now() - 60));
        fs::write(dir.path().join(JOURNAL), text).unwrap();
        let keys = Keys::open(dir.path(), Duration::from_secs(3_600), |_| None).unwrap();
        assert!(matches!(keys.claim(&key("old", 1)), Claim::First));
        assert!(matches!(keys.claim(&key("new", 1)), Claim::Answered(_)));
    }

    #[test]
    fn fingerprints_tell_parts_apart() {
        assert_ne!(fingerprint(&[b"ab", b"c"]), fingerprint(&[b"a", b"bc"]));
        assert_eq!(fingerprint(&[b"x"]), fingerprint(&[b"x"]));
    }
}
