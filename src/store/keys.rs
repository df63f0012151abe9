//! Idempotency keys: a write sent again with the same `Idempotency-Key`
//! within the window gets the first answer, and is not applied again.
//!
//! The answers are kept in memory and in a journal file in the data
//! directory (`.sheetd-keys`, one JSON object per line), so they survive a
//! restart. A write's record is written, and made durable, *before* the
//! rename that commits the write, marked pending with the identity of the
//! new file; once the rename is done a "done" line follows. While pending,
//! a request with the key hears "in progress"; if the rename does not
//! happen the record is dropped. After a crash between the two lines, the
//! record counts only if the workbook on disk is the file it names: so a
//! retry neither loses nor repeats the write, whether the crash, or a
//! failed directory sync, came before or after the rename.
//!
//! The keys are those of this process: two processes sharing a data
//! directory each answer only the keys they recorded or read at start-up.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::atomic::replace_atomically;
use super::cache::FileIdentity;
use super::{StoreError, locked};

/// The journal's name in the data directory.
pub const JOURNAL: &str = ".sheetd-keys";

/// Most keys remembered at once; past it the oldest are forgotten first.
const MAX_KEYS: usize = 100_000;

/// A key as a request gave it, with what identifies that request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub key: String,
    /// A hash of the request's method, path, query and body: a retry is
    /// the same key with the same request; the same key with another
    /// request is another request (it is run, not answered as the first).
    pub fingerprint: u64,
}

impl Key {
    /// What the key is remembered by: the key and its request.
    fn id(&self) -> String {
        id_of(&self.key, self.fingerprint)
    }
}

fn id_of(key: &str, fingerprint: u64) -> String {
    format!("{key}\u{1f}{fingerprint:x}")
}

/// What a key's first request was answered.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub spreadsheet: String,
    /// The edit's value (a count, a new id), as the handler renders it.
    pub value: Value,
    /// The `ETag` of the workbook the write left, when it is known (older
    /// journals have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
}

impl Answer {
    /// The same answer, given by a write that left the file tagged `tag`.
    pub fn with_etag(self, tag: super::Tag) -> Answer {
        Answer {
            etag: Some(tag.to_string()),
            ..self
        }
    }
}

/// What to do with a request that carries a key.
pub enum Claim {
    /// The first request with this key: go on, holding the claim until the
    /// write is answered or dropped.
    First(Claimed),
    /// A request with this key was answered: answer the same.
    Answered(Answer),
    /// A request with this key is being handled now.
    InProgress,
}

/// A key claimed by its first request. The write that carries it holds it
/// until it is answered, or dropped unanswered: then the key is free again.
pub struct Claimed {
    keys: Arc<Keys>,
    key: Key,
}

impl Claimed {
    pub fn key(&self) -> &Key {
        &self.key
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        self.keys.release(&self.key);
    }
}

/// A line of the journal: an answer recorded.
#[derive(Serialize, Deserialize)]
struct Record {
    key: String,
    /// Fingerprint, as hex (JSON numbers lose 64-bit integers).
    fingerprint: String,
    /// Seconds since 1970 when the answer was given.
    at: u64,
    answer: Answer,
    /// The new file's identity, until its rename is done.
    pending: Option<FileIdentity>,
}

/// A line of the journal: the rename of a recorded key's write is done.
/// (Two types rather than an untagged enum: serde's untagged enums cannot
/// read the identity's 128-bit integer.)
#[derive(Serialize, Deserialize)]
struct Done {
    done: String,
}

struct Entry {
    /// The key as the request gave it.
    key: String,
    fingerprint: u64,
    at: u64,
    answer: Answer,
    /// The identity of the file whose rename is awaited.
    pending: Option<FileIdentity>,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Keys whose first request is being handled.
    claimed: std::collections::HashSet<String>,
    /// Lines in the journal file, to compact it when it has grown.
    lines: usize,
}

/// The keys of a data directory.
pub struct Keys {
    path: PathBuf,
    window: Duration,
    state: Mutex<State>,
    /// Held while the journal file is appended to or replaced.
    file: Mutex<()>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Keys {
    /// Loads the journal of `dir`, keeping the records still in the window
    /// and, of those whose rename was not marked done, the ones whose file
    /// is in place (`identity_of` gives a spreadsheet's file identity now).
    /// A line torn by a crash, or otherwise unreadable, is skipped.
    pub fn open(
        dir: &Path,
        window: Duration,
        identity_of: impl Fn(&str) -> Option<FileIdentity>,
    ) -> Result<Keys, StoreError> {
        let keys = Keys {
            path: dir.join(JOURNAL),
            window,
            state: Mutex::new(State::default()),
            file: Mutex::new(()),
        };
        let text = match fs::read(&keys.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut entries = HashMap::new();
        for line in text.split(|&b| b == b'\n') {
            if let Ok(record) = serde_json::from_slice::<Record>(line) {
                let Ok(fingerprint) = u64::from_str_radix(&record.fingerprint, 16) else {
                    continue;
                };
                let entry = Entry {
                    key: record.key.clone(),
                    fingerprint,
                    at: record.at,
                    answer: record.answer,
                    pending: record.pending,
                };
                entries.insert(id_of(&record.key, fingerprint), entry);
            } else if let Ok(Done { done }) = serde_json::from_slice::<Done>(line)
                && let Some(entry) = entries.get_mut(&done)
            {
                entry.pending = None;
            }
        }
        let oldest = now().saturating_sub(window.as_secs());
        entries.retain(|_, entry: &mut Entry| {
            let landed = entry
                .pending
                .is_none_or(|written| identity_of(&entry.answer.spreadsheet) == Some(written));
            entry.pending = None;
            entry.at >= oldest && landed
        });
        locked(&keys.state).entries = entries;
        keys.compact()?;
        Ok(keys)
    }

    /// What to do with a request carrying `key`.
    pub fn claim(self: &Arc<Self>, key: Key) -> Claim {
        let mut state = locked(&self.state);
        let oldest = now().saturating_sub(self.window.as_secs());
        let id = key.id();
        if let Some(entry) = state.entries.get(&id)
            && entry.at >= oldest
        {
            return if entry.pending.is_some() {
                Claim::InProgress
            } else {
                Claim::Answered(entry.answer.clone())
            };
        }
        if !state.claimed.insert(id) {
            return Claim::InProgress;
        }
        Claim::First(Claimed {
            keys: self.clone(),
            key,
        })
    }

    /// Ends a claim: its write was answered (and recorded, if it landed)
    /// or dropped.
    fn release(&self, key: &Key) {
        locked(&self.state).claimed.remove(&key.id());
    }

    /// Forgets an answered key, so that its request runs again (its
    /// workbook was removed since).
    pub fn forget(&self, key: &Key) {
        locked(&self.state).entries.remove(&key.id());
    }

    /// Records the answers of a write before the rename that commits it,
    /// durably: `written` is the new file's identity, or `None` when the
    /// write changed nothing and there is no rename to wait for. Until
    /// [`Keys::landed`] (or [`Keys::unrecord`]), the keys are in progress.
    pub fn record(
        &self,
        answers: &[(Key, Answer)],
        written: Option<FileIdentity>,
    ) -> Result<(), StoreError> {
        if answers.is_empty() {
            return Ok(());
        }
        let at = now();
        let lines = answers.iter().map(|(key, answer)| Record {
            key: key.key.clone(),
            fingerprint: format!("{:x}", key.fingerprint),
            at,
            answer: answer.clone(),
            pending: written,
        });
        self.append(lines)?;
        let mut state = locked(&self.state);
        for (key, answer) in answers {
            let entry = Entry {
                key: key.key.clone(),
                fingerprint: key.fingerprint,
                at,
                answer: answer.clone(),
                pending: written,
            };
            state.entries.insert(key.id(), entry);
        }
        self.forget_oldest(&mut state);
        Ok(())
    }

    /// Marks the keys of a write whose rename is done; their answers count
    /// from now on, also after a restart.
    pub fn landed(&self, keys: &[Key]) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        {
            let mut state = locked(&self.state);
            for key in keys {
                if let Some(entry) = state.entries.get_mut(&key.id()) {
                    entry.pending = None;
                }
            }
        }
        self.append(keys.iter().map(|key| Done { done: key.id() }))?;
        let compact = {
            let state = locked(&self.state);
            state.lines > 2 * state.entries.len() + 1000
        };
        if compact { self.compact() } else { Ok(()) }
    }

    /// Forgets the records of a write whose rename did not happen; the
    /// requests keep their claims (the commit may try again).
    pub fn unrecord(&self, keys: &[Key]) {
        let mut state = locked(&self.state);
        for key in keys {
            state.entries.remove(&key.id());
        }
    }

    /// Appends `lines` to the journal and syncs it.
    fn append<L: Serialize>(&self, lines: impl Iterator<Item = L>) -> Result<(), StoreError> {
        let mut text = String::new();
        let mut count = 0;
        for line in lines {
            text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::other)?);
            text.push('\n');
            count += 1;
        }
        let _file = locked(&self.file);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()?;
        locked(&self.state).lines += count;
        Ok(())
    }

    /// Past [`MAX_KEYS`], forgets the oldest answered keys down to nine
    /// tenths of it: the scan of every key runs once per tenth of the cap,
    /// not at every write.
    fn forget_oldest(&self, state: &mut State) {
        if state.entries.len() <= MAX_KEYS {
            return;
        }
        let over = state.entries.len() - (MAX_KEYS - MAX_KEYS / 10);
        let mut oldest: Vec<_> = state
            .entries
            .iter()
            .filter(|(_, e)| e.pending.is_none())
            .map(|(k, e)| (e.at, k.clone()))
            .collect();
        let over = over.min(oldest.len());
        if over < oldest.len() {
            oldest.select_nth_unstable(over);
        }
        for (_, key) in oldest.into_iter().take(over) {
            state.entries.remove(&key);
        }
    }

    /// Rewrites the journal with the answers in memory and replaces the old
    /// one atomically; with none, removes it (a data directory that never
    /// saw a key keeps no file).
    fn compact(&self) -> Result<(), StoreError> {
        let _file = locked(&self.file);
        let text = {
            let mut state = locked(&self.state);
            let oldest = now().saturating_sub(self.window.as_secs());
            state
                .entries
                .retain(|_, e| e.at >= oldest || e.pending.is_some());
            state.lines = state.entries.len();
            let mut text = String::new();
            for entry in state.entries.values() {
                let line = Record {
                    key: entry.key.clone(),
                    fingerprint: format!("{:x}", entry.fingerprint),
                    at: entry.at,
                    answer: entry.answer.clone(),
                    pending: entry.pending,
                };
                text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::other)?);
                text.push('\n');
            }
            text
        };
        if text.is_empty() {
            return Ok(super::remove_if_present(&self.path)?);
        }
        replace_atomically(&self.path, "keys", |out| {
            out.write_all(text.as_bytes()).map_err(StoreError::from)
        })?;
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
            etag: None,
        }
    }

    const DAY: Duration = Duration::from_secs(86_400);

    fn open(dir: &Path, identity_of: impl Fn(&str) -> Option<FileIdentity>) -> Arc<Keys> {
        Arc::new(Keys::open(dir, DAY, identity_of).unwrap())
    }

    #[test]
    fn a_key_is_claimed_once_then_answered_with_its_first_answer() {
        let dir = tempfile::tempdir().unwrap();
        let keys = open(dir.path(), |_| None);
        let claimed = keys.claim(key("k", 1));
        assert!(matches!(claimed, Claim::First(_)));
        assert!(matches!(keys.claim(key("k", 1)), Claim::InProgress));
        keys.record(&[(key("k", 1), answer(3))], None).unwrap();
        drop(claimed);
        assert!(matches!(keys.claim(key("k", 1)), Claim::Answered(a) if a == answer(3)));
        // The same key with another request is another request.
        assert!(matches!(keys.claim(key("k", 2)), Claim::First(_)));
        // A claim dropped unanswered (a failed request) can be claimed again.
        drop(keys.claim(key("j", 1)));
        assert!(matches!(keys.claim(key("j", 1)), Claim::First(_)));
    }

    #[test]
    fn past_the_cap_the_oldest_keys_are_forgotten_a_tenth_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let keys = open(dir.path(), |_| None);
        let first: Vec<_> = (0..MAX_KEYS)
            .map(|i| (key(&format!("k{i}"), 1), answer(1)))
            .collect();
        keys.record(&first, None).unwrap();
        assert_eq!(locked(&keys.state).entries.len(), MAX_KEYS);
        // Older than the next key (records of one second tie on `at`).
        for entry in locked(&keys.state).entries.values_mut() {
            entry.at -= 1;
        }
        keys.record(&[(key("new", 1), answer(2))], None).unwrap();
        assert_eq!(locked(&keys.state).entries.len(), MAX_KEYS - MAX_KEYS / 10);
        assert!(matches!(keys.claim(key("new", 1)), Claim::Answered(a) if a == answer(2)));
    }

    #[test]
    fn a_pending_answer_is_in_progress_until_its_rename_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let keys = open(dir.path(), |_| None);
        let written = FileIdentity::of(&fs::metadata(dir.path()).unwrap());
        let claimed = keys.claim(key("k", 1));
        keys.record(&[(key("k", 1), answer(1))], Some(written))
            .unwrap();
        drop(claimed);
        assert!(matches!(keys.claim(key("k", 1)), Claim::InProgress));
        keys.landed(&[key("k", 1)]).unwrap();
        assert!(matches!(keys.claim(key("k", 1)), Claim::Answered(_)));
        // A rename that did not happen: the record goes, the key runs again.
        let claimed = keys.claim(key("j", 1));
        keys.record(&[(key("j", 1), answer(2))], Some(written))
            .unwrap();
        keys.unrecord(&[key("j", 1)]);
        assert!(
            matches!(keys.claim(key("j", 1)), Claim::InProgress),
            "still claimed"
        );
        drop(claimed);
        assert!(matches!(keys.claim(key("j", 1)), Claim::First(_)));
    }

    #[test]
    fn answers_survive_a_restart_and_pending_ones_count_only_if_their_file_is_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("book");
        fs::write(&file, b"new").unwrap();
        let in_place = FileIdentity::of(&fs::metadata(&file).unwrap());
        let elsewhere = FileIdentity::of(&fs::metadata(dir.path()).unwrap());
        {
            let keys = open(dir.path(), |_| None);
            for (k, written) in [("no rename", None), ("done", Some(elsewhere))] {
                keys.record(&[(key(k, 1), answer(1))], written).unwrap();
                keys.landed(&[key(k, 1)]).unwrap();
            }
            // A crash before the "done" line of these two.
            keys.record(&[(key("landed", 1), answer(2))], Some(in_place))
                .unwrap();
            keys.record(&[(key("lost", 1), answer(3))], Some(elsewhere))
                .unwrap();
        }
        let keys = open(dir.path(), |_| Some(in_place));
        for k in ["no rename", "done"] {
            assert!(matches!(keys.claim(key(k, 1)), Claim::Answered(a) if a == answer(1)));
        }
        assert!(matches!(keys.claim(key("landed", 1)), Claim::Answered(a) if a == answer(2)));
        assert!(matches!(keys.claim(key("lost", 1)), Claim::First(_)));
    }

    #[test]
    fn a_torn_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        open(dir.path(), |_| None)
            .record(&[(key("a", 1), answer(1))], None)
            .unwrap();
        let mut journal = fs::read(dir.path().join(JOURNAL)).unwrap();
        journal.extend_from_slice(b"{\"key\": \"b\", \xff\n");
        fs::write(dir.path().join(JOURNAL), journal).unwrap();
        let keys = open(dir.path(), |_| None);
        assert!(matches!(keys.claim(key("a", 1)), Claim::Answered(_)));
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
        let keys = Arc::new(Keys::open(dir.path(), Duration::from_secs(3_600), |_| None).unwrap());
        assert!(matches!(keys.claim(key("old", 1)), Claim::First(_)));
        assert!(matches!(keys.claim(key("new", 1)), Claim::Answered(_)));
    }

    #[test]
    fn fingerprints_tell_parts_apart() {
        assert_ne!(fingerprint(&[b"ab", b"c"]), fingerprint(&[b"a", b"bc"]));
        assert_eq!(fingerprint(&[b"x"]), fingerprint(&[b"x"]));
    }
}
