//! Files: one `<id>.xlsx` per spreadsheet in the data directory.
//! Turning a workbook into bytes and back is the [`xlsx`](crate::xlsx)
//! layer's job; the store decides when, and makes it safe.
//!
//! The store hands out workbooks parsed into the model and takes edits back:
//! [`Store::edit`] runs a model function under the spreadsheet's locks and
//! persists the result atomically; [`Store::read`] serves a workbook without
//! locking (a rename swaps files whole, so a reader sees the old or the new
//! one). Parsed workbooks are cached and re-read when the file on disk
//! changes (device, inode, length or modification time differ).
//!
//! calamine and rust_xlsxwriter are synchronous and CPU-heavy, so all file
//! work runs in `spawn_blocking`; the async side only waits for locks.

mod atomic;
mod blocks;
mod cache;
mod commit;
mod discard;
mod keys;
mod lock;
mod queue;
mod version;
mod versions;

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::model::{SpreadsheetId, Workbook};
use crate::xlsx;
use atomic::{TEMP_PREFIX, replace_atomically, sync_dir};
use cache::{Cache, FileIdentity, Kept};
use commit::EditRequest;
use discard::Discard;
pub use keys::{Answer, Claim, Claimed, Key, fingerprint};
use lock::{LOCK_DIR, lock_exclusive_until, remove_lock_file, try_lock_exclusive};
use queue::Queues;
use tokio::sync::oneshot;
pub use version::{Current, Named, Precondition, Tag, Tags, Version, Versioned};
pub use versions::Kept as KeptVersion;

/// When the last commit of a spreadsheet took several edits, the next
/// committer waits until as many edits wait again, but no longer than
/// `MAX_COMMIT_DELAY`, and not once no edit has arrived for `ARRIVAL_GAP`
/// (a client answered by the last commit may not write again): a commit
/// delay, as databases have, long enough for answered clients to send their
/// next requests and short next to a rewrite.
const ARRIVAL_GAP: Duration = Duration::from_millis(2);
const MAX_COMMIT_DELAY: Duration = Duration::from_millis(10);

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No workbook has that id.
    #[error("no such spreadsheet")]
    NotFound,
    /// The write would lose or corrupt workbook content; the text says why.
    #[error("{0}")]
    Conflict(String),
    /// The stored (or uploaded) file is no readable workbook.
    #[error("not a readable workbook: {0}")]
    Unreadable(String),
    #[error("file system: {0}")]
    Io(#[from] std::io::Error),
    /// The spreadsheet's name in the data directory is a symbolic link or
    /// no regular file: it is neither followed nor replaced.
    #[error("not a regular file")]
    NotRegular,
    /// A blocking job panicked or was cancelled.
    #[error("background job failed: {0}")]
    Job(String),
    /// The spreadsheet's queue is full, or the wait for its turn ran out.
    #[error("too many requests for this spreadsheet")]
    Busy,
    /// The file changed on disk since the write read it; nothing was
    /// written (the commit then reads it again).
    #[error("the file was changed by another program during the write")]
    Moved,
    /// The wait for a turn to parse a workbook ran out.
    #[error("too many workbooks are being parsed")]
    TooManyParses,
    /// A request with the same idempotency key is being handled.
    #[error("a request with this idempotency key is in progress")]
    KeyInUse,
    /// The write's [`Precondition`] does not hold for the workbook as it
    /// stands when the write takes its turn; nothing was written.
    #[error("the workbook is not the version the write requires")]
    PreconditionFailed,
}

impl From<xlsx::ReadError> for StoreError {
    fn from(error: xlsx::ReadError) -> StoreError {
        StoreError::Unreadable(error.0)
    }
}

impl From<xlsx::WriteError> for StoreError {
    fn from(error: xlsx::WriteError) -> StoreError {
        match error {
            xlsx::WriteError::Refused(_) => StoreError::Conflict(error.to_string()),
            xlsx::WriteError::Io(io) => StoreError::Io(io),
        }
    }
}

/// What the store allows; `Config` documents each.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Rewrite workbooks with parts a rewrite would lose (they are lost).
    pub allow_lossy_writes: bool,
    /// Every row of a file written says its number, also rows that moved.
    pub number_every_row: bool,
    pub max_cells: usize,
    pub cache_bytes: usize,
    pub queue_limit: usize,
    pub queue_timeout: Duration,
    /// Most workbooks parsed at once.
    pub max_parses: usize,
    /// How long a write's idempotency key is remembered.
    pub idempotency_window: Duration,
    /// Where the writer keeps its temporary files; the data directory when
    /// not given.
    pub temp_dir: Option<PathBuf>,
    /// How many earlier versions of each workbook are kept (0: none).
    pub keep_versions: usize,
}

/// The result of an edit function: its answer, and whether it changed the
/// workbook (an unchanged workbook is not rewritten).
pub struct Edit<T> {
    pub value: T,
    pub changed: bool,
}

impl Edit<usize> {
    /// An edit whose answer is how many rows it changed.
    pub fn rows(count: usize) -> Edit<usize> {
        Edit {
            value: count,
            changed: count > 0,
        }
    }
}

/// A workbook of the data directory, as a listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub id: SpreadsheetId,
    /// Its sheets' names, as the workbook lists them (none if unreadable).
    pub sheets: Vec<String>,
    pub bytes: u64,
    pub modified: std::time::SystemTime,
    /// The tag of the file's bytes (none if it could not be read).
    pub tag: Option<Tag>,
}

/// Handle to the data directory; cheap to clone.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    limits: Limits,
    queues: Queues,
    cache: Mutex<Cache>,
    parses: Turns,
    keys: Arc<keys::Keys>,
    /// The tag of each file hashed, by its identity.
    tags: Mutex<version::Known>,
    /// Unlinks the versions dropped past `--keep-versions`.
    discard: Discard,
}

impl Store {
    /// Opens (and creates) the data directory, and removes the temp files a
    /// crash left behind.
    pub fn open(dir: impl Into<PathBuf>, limits: Limits) -> Result<Store, StoreError> {
        let dir = dir.into();
        fs::create_dir_all(dir.join(LOCK_DIR))?;
        remove_leftover_temp_files(&dir)?;
        remove_orphan_lock_files(&dir)?;
        versions::remove_orphans(&dir)?;
        let keys = Arc::new(keys::Keys::open(
            &dir,
            limits.idempotency_window,
            |spreadsheet| {
                let id = SpreadsheetId::parse(spreadsheet).ok()?;
                let meta = fs::symlink_metadata(dir.join(id.file_name())).ok()?;
                Some(FileIdentity::of(&meta))
            },
        )?);
        Ok(Store {
            inner: Arc::new(Inner {
                dir,
                queues: Queues::default(),
                cache: Mutex::new(Cache::new(limits.cache_bytes)),
                parses: Turns::new(limits.max_parses),
                keys,
                limits,
                tags: Mutex::default(),
                discard: Discard::start(),
            }),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    fn path(&self, id: SpreadsheetId) -> PathBuf {
        self.inner.dir.join(id.file_name())
    }

    /// Whether a workbook has this id: a regular file, not a link to one.
    pub fn exists(&self, id: SpreadsheetId) -> bool {
        fs::symlink_metadata(self.path(id)).is_ok_and(|meta| meta.file_type().is_file())
    }

    /// Whether the data directory has an entry of this id's name, of any
    /// kind: writes to an unknown id answer 404 before they queue or lock.
    fn named(&self, id: SpreadsheetId) -> bool {
        fs::symlink_metadata(self.path(id)).is_ok()
    }

    /// Opens the spreadsheet's file for reading, refusing a symbolic link
    /// (it could lead anywhere on the machine) and anything but a regular
    /// file (a FIFO would block the reader), with a log line for the operator.
    fn open_file(&self, id: SpreadsheetId) -> Result<File, StoreError> {
        use std::os::unix::fs::OpenOptionsExt;
        let opened = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(self.path(id));
        let file = match opened {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(StoreError::NotFound),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(not_regular(id)),
            Err(e) => return Err(e.into()),
        };
        if !file.metadata()?.file_type().is_file() {
            return Err(not_regular(id));
        }
        Ok(file)
    }

    /// The id of some workbook of the directory, if it holds any.
    pub fn any_id(&self) -> Option<SpreadsheetId> {
        fs::read_dir(&self.inner.dir)
            .ok()?
            .filter_map(Result::ok)
            .find_map(|entry| {
                let name = entry.file_name();
                let id = name.to_str()?.strip_suffix(".xlsx")?;
                SpreadsheetId::parse(id).ok()
            })
    }

    /// The workbooks of the directory, newest first (ties by id), `limit`
    /// of them from `offset`, and how many there are. Only regular files
    /// named `<uuid>.xlsx` that are `visible` count; only the page's files
    /// are opened.
    pub async fn list(
        &self,
        offset: usize,
        limit: usize,
        visible: impl Fn(SpreadsheetId) -> bool + Send + 'static,
    ) -> Result<(Vec<Listed>, usize), StoreError> {
        let store = self.clone();
        blocking(move || {
            let mut found = Vec::new();
            for entry in fs::read_dir(&store.inner.dir)? {
                let entry = entry?;
                let name = entry.file_name();
                let Some(id) = name
                    .to_str()
                    .and_then(|n| n.strip_suffix(".xlsx"))
                    .and_then(|n| SpreadsheetId::parse(n).ok())
                else {
                    continue;
                };
                // `DirEntry::metadata` does not follow links.
                let Ok(meta) = entry.metadata() else { continue };
                // Only the name `path(id)` serves (lower case).
                if !meta.file_type().is_file()
                    || name.to_str() != Some(id.file_name().as_str())
                    || !visible(id)
                {
                    continue;
                }
                let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                found.push((modified, id, meta.len()));
            }
            let total = found.len();
            found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let page = found
                .into_iter()
                .skip(offset)
                .take(limit)
                .map(|(modified, id, bytes)| {
                    let (sheets, tag) = store.listed_contents(id);
                    Listed {
                        id,
                        sheets,
                        bytes,
                        modified,
                        tag,
                    }
                })
                .collect();
            Ok((page, total))
        })
        .await
    }

    /// The names of a workbook's sheets (its tabs, chart sheets too), from
    /// the file's `xl/workbook.xml`, and the file's tag; none when it cannot
    /// be read. A file hashed before is not read whole again: a listing
    /// hashes only the files that changed since.
    fn listed_contents(&self, id: SpreadsheetId) -> (Vec<String>, Option<Tag>) {
        let Ok(mut file) = self.open_file(id) else {
            return (Vec::new(), None);
        };
        let Ok(meta) = file.metadata() else {
            return (Vec::new(), None);
        };
        let identity = FileIdentity::of(&meta);
        if let Some(tag) = self.known_tag(id, identity) {
            let names = xlsx::sheet_names(std::io::BufReader::new(file)).unwrap_or_default();
            return (names, Some(tag));
        }
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() {
            return (Vec::new(), None);
        }
        let tag = self.tagged(id, identity, &bytes);
        let names = xlsx::sheet_names(std::io::Cursor::new(&bytes)).unwrap_or_default();
        (names, Some(tag))
    }

    /// The ETag of the file of `id` as it stands now (what a write is
    /// about to change, for the audit log): the tag kept for the file's
    /// identity, else the file hashed once and its tag kept, as a read of
    /// it would. `None` when there is no such regular file.
    pub fn current_etag(&self, id: SpreadsheetId) -> Option<String> {
        self.tag_in_place(id).map(|tag| tag.to_string())
    }

    /// The tag of the regular file of `id` as it stands now: kept for its
    /// identity, else hashed (once) and kept.
    fn tag_in_place(&self, id: SpreadsheetId) -> Option<Tag> {
        let path = self.path(id);
        let meta = fs::symlink_metadata(&path).ok()?;
        if !meta.file_type().is_file() {
            return None;
        }
        let identity = FileIdentity::of(&meta);
        if let Some(tag) = self.known_tag(id, identity) {
            return Some(tag);
        }
        let bytes = fs::read(&path).ok()?;
        // Changed while it was read: no tag can be trusted for it.
        let read = fs::symlink_metadata(&path).ok()?;
        (FileIdentity::of(&read) == identity).then(|| self.tagged(id, identity, &bytes))
    }

    /// The tag of the file of `id` with `identity`, if it was hashed.
    fn known_tag(&self, id: SpreadsheetId, identity: FileIdentity) -> Option<Tag> {
        locked(&self.inner.tags).get(id, identity)
    }

    /// Hashes `bytes`, the file of `id` with `identity`, and keeps the tag.
    fn tagged(&self, id: SpreadsheetId, identity: FileIdentity, bytes: &[u8]) -> Tag {
        let tag = Tag::of(bytes);
        self.remember_tag(id, identity, tag);
        tag
    }

    /// The version of a file the store wrote as `tag`: kept for the reads
    /// that follow.
    fn written(&self, id: SpreadsheetId, written: &fs::Metadata, tag: Tag) -> Version {
        self.remember_tag(id, FileIdentity::of(written), tag);
        self.version(id, tag, written)
    }

    /// Keeps `tag` as the tag of the file of `id` with `identity`. The
    /// first file of `id` this process hashes is taken to share its whole
    /// second with the version before it when the newest version kept of
    /// it was modified in that second (a restart forgets the file before).
    fn remember_tag(&self, id: SpreadsheetId, identity: FileIdentity, tag: Tag) {
        let first = !locked(&self.inner.tags).knows(id);
        let shares_second = first
            && versions::list(&self.inner.dir, id)
                .ok()
                .and_then(|kept| kept.into_iter().find(|version| version.tag != tag))
                .is_some_and(|version| {
                    version::whole_seconds(version.modified) == identity.modified_second()
                });
        locked(&self.inner.tags).insert(id, identity, tag, shares_second);
    }

    /// The version of the file of `id` that `meta` describes, hashed as
    /// `tag` (and kept as such).
    fn version(&self, id: SpreadsheetId, tag: Tag, meta: &fs::Metadata) -> Version {
        let shares_second = locked(&self.inner.tags).shares_second(id, FileIdentity::of(meta));
        Version::new(tag, meta, shares_second)
    }

    /// The version of `file`, the file of `id` open with `meta`: its kept
    /// tag, or (for a file not hashed yet) hashed now from its start.
    fn version_of(
        &self,
        id: SpreadsheetId,
        file: &mut File,
        meta: &fs::Metadata,
    ) -> Result<Version, StoreError> {
        let identity = FileIdentity::of(meta);
        let tag = match self.known_tag(id, identity) {
            Some(tag) => tag,
            None => {
                std::io::Seek::rewind(file)?;
                let tag = Tag::read(&*file)?;
                self.remember_tag(id, identity, tag);
                tag
            }
        };
        Ok(self.version(id, tag, meta))
    }

    /// Where the workbook of `id` stands now, for a write's precondition.
    fn current(&self, id: SpreadsheetId) -> Result<Current, StoreError> {
        match self.open_file(id) {
            Ok(mut file) => {
                let meta = file.metadata()?;
                Ok(Current::File(self.version_of(id, &mut file, &meta)?))
            }
            Err(StoreError::NotFound) => Ok(Current::Absent),
            Err(error) => Err(error),
        }
    }

    /// Runs `f` on the current workbook, without taking any lock. `f` may
    /// keep the workbook (a clone of the `Arc`) to answer from it later.
    pub async fn read<T, F>(&self, id: SpreadsheetId, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Arc<Workbook>) -> T + Send + 'static,
        T: Send + 'static,
    {
        self.read_versioned(id, move |workbook, _| f(workbook))
            .await
    }

    /// Runs `f` on the current workbook and its file's version, without
    /// taking any lock (see [`Store::read`]).
    pub async fn read_versioned<T, F>(&self, id: SpreadsheetId, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Arc<Workbook>, &Version) -> T + Send + 'static,
        T: Send + 'static,
    {
        let store = self.clone();
        blocking(move || {
            let (_, version, workbook) = store.load_versioned(id)?;
            Ok(f(&workbook, &version))
        })
        .await
    }

    /// Runs `f` on the workbook under the spreadsheet's locks and, when it
    /// reports a change, persists the new workbook before returning. Edits
    /// that queue up while another is being written are committed together
    /// with one rewrite (see `commit`).
    ///
    /// `f` must leave the workbook untouched when it returns an error.
    ///
    /// With a claimed idempotency key ([`Store::claim`]), the edit's answer
    /// is remembered with the write that commits it; the edit holds the
    /// claim until it is answered, also when the request is dropped.
    pub async fn edit<T, E, F>(&self, id: SpreadsheetId, key: Option<Claimed>, f: F) -> Result<T, E>
    where
        F: FnMut(&mut Workbook) -> Result<Edit<T>, E> + Send + 'static,
        T: serde::Serialize + Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        Ok(self.edit_if(id, key, None, f).await?.value)
    }

    /// [`Store::edit`], run only if `precondition` holds when the edit
    /// takes its turn: after every edit queued before it, those of its own
    /// commit included (one that changed the workbook makes it a version
    /// no tag names). Otherwise `f` is not run and the answer is
    /// [`StoreError::PreconditionFailed`]. Answers with the version of the
    /// file the edit left: the new one, or the one read when nothing changed.
    pub async fn edit_if<T, E, F>(
        &self,
        id: SpreadsheetId,
        key: Option<Claimed>,
        precondition: Option<Precondition>,
        f: F,
    ) -> Result<Versioned<T>, E>
    where
        F: FnMut(&mut Workbook) -> Result<Edit<T>, E> + Send + 'static,
        T: serde::Serialize + Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        if !self.named(id) {
            return Err(StoreError::NotFound.into());
        }
        let (place, deadline) = self.join_queue(id)?;
        let (reply, mut answer) = oneshot::channel();
        let ticket = place.push(Box::new(EditRequest {
            f,
            reply,
            applied: None,
            key,
            precondition,
        }));
        // A request dropped while its edit waits (the client went away)
        // takes the edit back; once a committer has it, it is committed.
        let _withdraw_if_dropped = Withdraw(&place, ticket);
        let committer = place.committer();
        let lost = || StoreError::Job("the commit ended without an answer".into());
        // Either an earlier committer takes this edit along and answers it,
        // or this request gets the turn and commits what waits. Waiting for
        // the turn alone would let each waiter hold the lock for a batch of
        // whatever came in behind it, one small rewrite after another.
        let turn = tokio::select! {
            answered = &mut answer => return answered.map_err(|_| lost())?,
            turn = tokio::time::timeout_at(deadline.into(), committer.lock_owned()) => turn,
        };
        match turn {
            Ok(turn) => {
                // With concurrent writers, wait briefly for the clients the
                // last commit answered to send their next edits, so that
                // this rewrite takes all of them.
                let expected = place.last_batch();
                if expected > 1 {
                    let until = tokio::time::Instant::now() + MAX_COMMIT_DELAY;
                    place.gather(expected, ARRIVAL_GAP, until).await;
                }
                // Whatever waits now, this request's edit included unless an
                // earlier committer took it (and, holding the lock, finished).
                let batch = place.take_all();
                if !batch.is_empty() {
                    let store = self.clone();
                    // A blocking task runs to its end even if this request is
                    // dropped, so the batch is never abandoned half-way.
                    tokio::task::spawn_blocking(move || {
                        store.commit(id, deadline, batch);
                        drop(turn);
                    })
                    .await
                    .map_err(|e| StoreError::Job(e.to_string()))?;
                }
            }
            Err(_) => {
                if place.withdraw(ticket).is_some() {
                    return Err(StoreError::Busy.into());
                }
                // A committer has the edit already: wait for its answer.
            }
        }
        answer.await.map_err(|_| lost())?
    }

    /// What to do with a request that carries an idempotency key: go on
    /// with the claim, or answer as before. An answer about a workbook
    /// removed since is not given again: the request runs anew (an upload
    /// stores its workbook again, a row write finds no workbook).
    pub fn claim(&self, key: Key) -> Claim {
        match self.inner.keys.claim(key.clone()) {
            Claim::Answered(answer)
                if !SpreadsheetId::parse(&answer.spreadsheet).is_ok_and(|id| self.exists(id)) =>
            {
                self.inner.keys.forget(&key);
                self.inner.keys.claim(key)
            }
            claim => claim,
        }
    }

    /// Renames `prepared` over its file, if the file in place still has the
    /// identity `expected` (when given), once the answers of the write's
    /// idempotency keys are durable; see `keys` for why in this order.
    /// Returns the new file's metadata and tag; the answers remembered
    /// carry the tag.
    fn land(
        &self,
        id: SpreadsheetId,
        prepared: atomic::Prepared<'_>,
        expected: Option<FileIdentity>,
        records: &[(Key, Answer)],
    ) -> Result<(std::fs::Metadata, Tag), StoreError> {
        let keys: Vec<Key> = records.iter().map(|(key, _)| key.clone()).collect();
        let tag = prepared.tag();
        let records: Vec<(Key, Answer)> = records
            .iter()
            .map(|(key, answer)| (key.clone(), answer.clone().with_etag(tag)))
            .collect();
        self.inner
            .keys
            .record(&records, Some(prepared.identity()))?;
        let checked = expected.map_or(Ok(()), |expected| prepared.check(expected));
        let dropped = match checked {
            Ok(()) => self.keep_version(id),
            Err(_) => Vec::new(),
        };
        let renamed = checked.and_then(|()| prepared.rename());
        // Past the rename the write has landed: if the directory cannot be
        // synced the requests hear 500, and a retry with the same key gets
        // the answer recorded above instead of a second write.
        let synced = match &renamed {
            Ok(_) => sync_dir(&self.inner.dir),
            Err(_) => Ok(()),
        };
        // Unlinked only now: the sync would wait for an unlink under way.
        for path in dropped {
            self.inner.discard.later(path);
        }
        let written = match renamed {
            Ok(written) => written,
            Err(error) => {
                self.inner.keys.unrecord(&keys);
                return Err(error);
            }
        };
        self.inner.keys.landed(&keys)?;
        synced?;
        Ok((written, tag))
    }

    /// Links the file of `id` about to be replaced among its versions
    /// (`--keep-versions`); gives the versions dropped, to be discarded. A
    /// version that cannot be kept is logged; the write goes on.
    fn keep_version(&self, id: SpreadsheetId) -> Vec<PathBuf> {
        let limit = self.inner.limits.keep_versions;
        let kept = match limit {
            // Those an earlier run kept go.
            0 => versions::drop_all(&self.inner.dir, id),
            _ => match self.tag_in_place(id) {
                Some(tag) => versions::keep(&self.inner.dir, id, &self.path(id), tag, limit),
                None => return Vec::new(),
            },
        };
        kept.unwrap_or_else(|error| {
            tracing::error!(spreadsheet = %id, %error, "the replaced version was not kept");
            Vec::new()
        })
    }

    /// The versions kept of workbook `id`, newest first (404 without the
    /// workbook).
    pub async fn versions(&self, id: SpreadsheetId) -> Result<Vec<KeptVersion>, StoreError> {
        let store = self.clone();
        blocking(move || {
            if !store.named(id) {
                return Err(StoreError::NotFound);
            }
            Ok(versions::list(&store.inner.dir, id)?)
        })
        .await
    }

    /// The bytes of the version `tag` of workbook `id`, and the version
    /// (when its file was last written).
    pub async fn version_bytes(
        &self,
        id: SpreadsheetId,
        tag: Tag,
    ) -> Result<(Vec<u8>, Version), StoreError> {
        let store = self.clone();
        blocking(move || {
            if !store.named(id) {
                return Err(StoreError::NotFound);
            }
            let kept = versions::find(&store.inner.dir, id, tag)?.ok_or(StoreError::NotFound)?;
            let version = Version {
                tag,
                modified: kept.modified,
                shares_second: false,
            };
            Ok((fs::read(kept.path)?, version))
        })
        .await
    }

    /// A place in the spreadsheet's write queue (503 when it is full), and
    /// the moment the request stops waiting for its turn.
    fn join_queue(&self, id: SpreadsheetId) -> Result<(queue::Place, Instant), StoreError> {
        let limits = &self.inner.limits;
        let deadline = Instant::now() + limits.queue_timeout;
        let place = self
            .inner
            .queues
            .join(id, limits.queue_limit)
            .ok_or(StoreError::Busy)?;
        Ok((place, deadline))
    }

    /// The cross-process lock of the spreadsheet, waiting until `deadline`.
    fn lock_across_processes(
        &self,
        id: SpreadsheetId,
        deadline: Instant,
    ) -> Result<File, StoreError> {
        lock_exclusive_until(&self.inner.dir, id, deadline)?.ok_or(StoreError::Busy)
    }

    /// The workbook as it is on disk now, parsed once per file version.
    #[cfg(test)]
    fn load(&self, id: SpreadsheetId) -> Result<(FileIdentity, Arc<Workbook>), StoreError> {
        let (identity, _, workbook) = self.load_versioned(id)?;
        Ok((identity, workbook))
    }

    /// The workbook as it is on disk now, parsed (and its file hashed) once
    /// per file version, with the file's identity and version.
    fn load_versioned(
        &self,
        id: SpreadsheetId,
    ) -> Result<(FileIdentity, Version, Arc<Workbook>), StoreError> {
        let mut file = self.open_file(id)?;
        let meta = file.metadata()?;
        let identity = FileIdentity::of(&meta);
        let cached = |store: &Store, file: &mut File, workbook| {
            Ok((identity, store.version_of(id, file, &meta)?, workbook))
        };
        if let Some(workbook) = self.cache().get(id, identity)? {
            return cached(self, &mut file, workbook);
        }
        let _turn = self.parse_turn()?;
        // Another request may have parsed it while this one waited.
        if let Some(workbook) = self.cache().get(id, identity)? {
            return cached(self, &mut file, workbook);
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let version = self.version(id, self.tagged(id, identity, &bytes), &meta);
        let workbook = match xlsx::read_workbook(&bytes, self.inner.limits.max_cells) {
            Ok(workbook) => Arc::new(workbook),
            Err(error) => {
                // Not parsed again until the file changes.
                self.cache().refuse(id, identity, &error.0);
                return Err(error.into());
            }
        };
        self.cache()
            .insert(id, identity, workbook.clone(), Kept::default());
        Ok((identity, version, workbook))
    }

    /// A turn to parse a workbook: at most `max_parses` run at once, and a
    /// request waits for one no longer than the queue timeout (503 then).
    fn parse_turn(&self) -> Result<Turn<'_>, StoreError> {
        let deadline = Instant::now() + self.inner.limits.queue_timeout;
        self.inner
            .parses
            .take(deadline)
            .ok_or(StoreError::TooManyParses)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        locked(&self.inner.cache)
    }

    fn remember(&self, id: SpreadsheetId, identity: FileIdentity, workbook: Workbook, kept: Kept) {
        self.cache().insert(id, identity, Arc::new(workbook), kept);
    }

    /// [`Store::remember`] for a workbook whose cell slots were counted.
    fn remember_counted(
        &self,
        id: SpreadsheetId,
        identity: FileIdentity,
        (workbook, cells): (Workbook, usize),
        kept: Kept,
    ) {
        (self.cache()).insert_counted(id, identity, (Arc::new(workbook), cells), kept);
    }

    fn forget(&self, id: SpreadsheetId) {
        self.cache().remove(id);
    }

    /// Forgets everything about the workbook of `id`, which was removed.
    fn forget_all(&self, id: SpreadsheetId) {
        self.forget(id);
        locked(&self.inner.tags).remove(id);
    }

    /// Stores a new workbook under a new id; `bytes` must parse. With a
    /// claimed idempotency key, the new id is remembered before the file
    /// lands.
    pub async fn create(
        &self,
        bytes: impl AsRef<[u8]> + Send + 'static,
        key: Option<Claimed>,
    ) -> Result<Versioned<SpreadsheetId>, StoreError> {
        let store = self.clone();
        blocking(move || {
            let bytes = bytes.as_ref();
            let workbook = store.parse_upload(bytes)?;
            let (id, identity, version) = store.create_file(key, |out| {
                std::io::Write::write_all(out, bytes).map_err(StoreError::from)
            })?;
            // Parsed once: the first read finds it in the cache.
            store.remember(id, identity, workbook, Kept::default());
            Ok(Versioned { value: id, version })
        })
        .await
    }

    /// Writes `workbook` as a new workbook under a new id (§10.3).
    pub async fn create_workbook(
        &self,
        workbook: Workbook,
        key: Option<Claimed>,
    ) -> Result<Versioned<SpreadsheetId>, StoreError> {
        let store = self.clone();
        blocking(move || {
            let (id, _, version) =
                store.create_file(key, |out| store.write_whole(&workbook, out))?;
            Ok(Versioned { value: id, version })
        })
        .await
    }

    /// An upload's workbook, parsed in a parse turn (a 400 when it is none).
    fn parse_upload(&self, bytes: &[u8]) -> Result<Workbook, StoreError> {
        let _turn = self.parse_turn()?;
        Ok(xlsx::read_workbook(bytes, self.inner.limits.max_cells)?)
    }

    /// A new file under a new id, written by `write`; with a claimed key,
    /// the id is its answer. Returns the id, the file's identity and its
    /// version.
    fn create_file(
        &self,
        key: Option<Claimed>,
        write: impl FnOnce(&mut atomic::Output<'_>) -> Result<(), StoreError>,
    ) -> Result<(SpreadsheetId, FileIdentity, Version), StoreError> {
        let id = SpreadsheetId::new_random();
        let path = self.path(id);
        let prepared = atomic::Prepared::write(&path, &id.to_string(), write)?;
        let records = answers(key.as_ref(), id, serde_json::Value::String(id.to_string()));
        let (written, tag) = self.land(id, prepared, None, &records)?;
        let version = self.written(id, &written, tag);
        Ok((id, FileIdentity::of(&written), version))
    }

    /// Writes `workbook` under `id` unless a file with that id exists.
    pub fn create_from_model(
        &self,
        id: SpreadsheetId,
        workbook: &Workbook,
    ) -> Result<(), StoreError> {
        if self.named(id) {
            return Ok(());
        }
        replace_atomically(&self.path(id), &id.to_string(), |out| {
            self.write_whole(workbook, out)
        })?;
        Ok(())
    }

    /// The workbook's bytes as they are on disk, with their version; the
    /// bytes only if `wanted` says so of the version (a client that has
    /// them gets none: the file is not read).
    pub async fn download(
        &self,
        id: SpreadsheetId,
        wanted: impl FnOnce(&Version) -> bool + Send + 'static,
    ) -> Result<Versioned<Option<Vec<u8>>>, StoreError> {
        let store = self.clone();
        blocking(move || {
            let mut file = store.open_file(id)?;
            let meta = file.metadata()?;
            let identity = FileIdentity::of(&meta);
            let Some(tag) = store.known_tag(id, identity) else {
                // Not hashed yet: hashed from the bytes read for the answer.
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)?;
                let version = store.version(id, store.tagged(id, identity, &bytes), &meta);
                let value = wanted(&version).then_some(bytes);
                return Ok(Versioned { value, version });
            };
            let version = store.version(id, tag, &meta);
            if !wanted(&version) {
                return Ok(Versioned {
                    value: None,
                    version,
                });
            }
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(Versioned {
                value: Some(bytes),
                version,
            })
        })
        .await
    }

    /// Stores `bytes` (which must parse) as the workbook `id`, new or
    /// replacing the one there ([`Store::replace`]). Returns whether a
    /// workbook was replaced.
    pub async fn put<B: AsRef<[u8]> + Send + 'static>(
        &self,
        id: SpreadsheetId,
        bytes: B,
        key: Option<Claimed>,
        precondition: Option<Precondition>,
    ) -> Result<Versioned<bool>, StoreError> {
        let store = self.clone();
        let (bytes, workbook) = blocking(move || {
            let workbook = store.parse_upload(bytes.as_ref())?;
            Ok((bytes, workbook))
        })
        .await?;
        self.replace(id, key, precondition, Some(workbook), move |out| {
            std::io::Write::write_all(out, bytes.as_ref()).map_err(StoreError::from)
        })
        .await
    }

    /// Writes `workbook` as the workbook `id`, new or replacing the one
    /// there ([`Store::replace`]); returns whether one was replaced.
    pub async fn put_workbook(
        &self,
        id: SpreadsheetId,
        workbook: Workbook,
        key: Option<Claimed>,
        precondition: Option<Precondition>,
    ) -> Result<Versioned<bool>, StoreError> {
        let store = self.clone();
        self.replace(id, key, precondition, None, move |out| {
            store.write_whole(&workbook, out)
        })
        .await
    }

    /// Makes the file of `id` what `write` writes, after any write in
    /// flight has finished; the file is replaced whole, and the cache holds
    /// `parsed`, what the file parses to, if given. Returns whether a
    /// workbook was replaced, and the new file's version. A name that is
    /// no regular file is refused, never replaced; with a `precondition`
    /// that does not hold for the file in place, nothing is written.
    async fn replace(
        &self,
        id: SpreadsheetId,
        key: Option<Claimed>,
        precondition: Option<Precondition>,
        parsed: Option<Workbook>,
        write: impl FnOnce(&mut atomic::Output<'_>) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<Versioned<bool>, StoreError> {
        self.with_whole_turn(id, move |store| {
            let replaced = match fs::symlink_metadata(store.path(id)) {
                Ok(meta) if meta.file_type().is_file() => true,
                Ok(_) => return Err(not_regular(id)),
                Err(_) => false,
            };
            store.check(id, precondition.as_ref())?;
            let path = store.path(id);
            let prepared = atomic::Prepared::write(&path, &id.to_string(), write)?;
            let records = answers(key.as_ref(), id, serde_json::Value::Bool(replaced));
            let (written, tag) = store.land(id, prepared, None, &records)?;
            let version = store.written(id, &written, tag);
            match parsed {
                Some(workbook) => {
                    let identity = FileIdentity::of(&written);
                    store.remember(id, identity, workbook, Kept::default());
                }
                None => store.forget(id),
            }
            Ok(Versioned {
                value: replaced,
                version,
            })
        })
        .await
    }

    /// [`StoreError::PreconditionFailed`] unless `precondition` (if any)
    /// holds for the workbook of `id` as it is now; called holding its turn.
    fn check(
        &self,
        id: SpreadsheetId,
        precondition: Option<&Precondition>,
    ) -> Result<(), StoreError> {
        match precondition {
            Some(precondition) if !precondition.holds(self.current(id)?) => {
                Err(StoreError::PreconditionFailed)
            }
            _ => Ok(()),
        }
    }

    /// Removes the workbook, after any write in flight has finished, if
    /// `precondition` (if any) holds then; writes queued behind it then
    /// find no spreadsheet (404).
    pub async fn remove(
        &self,
        id: SpreadsheetId,
        precondition: Option<Precondition>,
    ) -> Result<(), StoreError> {
        if !self.named(id) {
            return Err(StoreError::NotFound);
        }
        self.with_whole_turn(id, move |store| {
            if let Some(precondition) = &precondition {
                match store.current(id)? {
                    Current::Absent => return Err(StoreError::NotFound),
                    current if !precondition.holds(current) => {
                        return Err(StoreError::PreconditionFailed);
                    }
                    _ => {}
                }
            }
            match fs::remove_file(store.path(id)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(StoreError::NotFound);
                }
                Err(e) => return Err(e.into()),
            }
            store.forget_all(id);
            versions::remove_all(&store.inner.dir, id)?;
            // Held until here: a writer of another process that waited for
            // it finds no workbook once it has it.
            remove_lock_file(&store.inner.dir, id)?;
            sync_dir(&store.inner.dir)
        })
        .await
    }

    /// Runs `job` on its own once the writes in flight for `id` have
    /// finished, holding the spreadsheet's turn and its cross-process lock;
    /// writes queued meanwhile run after it.
    async fn with_whole_turn<T: Send + 'static>(
        &self,
        id: SpreadsheetId,
        job: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (place, deadline) = self.join_queue(id)?;
        let turn = tokio::time::timeout_at(deadline.into(), place.committer().lock_owned())
            .await
            .map_err(|_| StoreError::Busy)?;
        let store = self.clone();
        blocking(move || {
            let _turn = turn;
            let _across_processes = store.lock_across_processes(id, deadline)?;
            job(&store)
        })
        .await
    }
}

/// The answer to remember under a claimed key, if any, for a write of `id`.
fn answers(
    key: Option<&Claimed>,
    id: SpreadsheetId,
    value: serde_json::Value,
) -> Vec<(Key, Answer)> {
    let answer = |value| Answer {
        spreadsheet: id.to_string(),
        value,
        etag: None,
    };
    key.map(|claimed| (claimed.key().clone(), answer(value)))
        .into_iter()
        .collect()
}

fn not_regular(id: SpreadsheetId) -> StoreError {
    tracing::warn!(
        spreadsheet = %id,
        "the spreadsheet's file is a symbolic link or not a regular file: not served; \
         replace it with the workbook itself"
    );
    StoreError::NotRegular
}

/// A counted resource that blocking code waits for: a semaphore for
/// threads, with a deadline.
struct Turns {
    free: Mutex<usize>,
    freed: std::sync::Condvar,
}

/// A turn taken; given back when dropped.
struct Turn<'a>(&'a Turns);

impl Turns {
    fn new(count: usize) -> Turns {
        Turns {
            free: Mutex::new(count.max(1)),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Waits for a turn until `deadline`.
    fn take(&self, deadline: Instant) -> Option<Turn<'_>> {
        let free = locked(&self.free);
        let wait = deadline.saturating_duration_since(Instant::now());
        let (mut free, _) = self
            .freed
            .wait_timeout_while(free, wait, |free| *free == 0)
            .unwrap_or_else(|p| p.into_inner());
        if *free == 0 {
            return None;
        }
        *free -= 1;
        Some(Turn(self))
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *locked(&self.0.free) += 1;
        self.0.freed.notify_one();
    }
}

/// Removes the lock files of spreadsheets that have no workbook (removed by
/// hand, or by a version that left them), unless some process holds them.
fn remove_orphan_lock_files(dir: &Path) -> Result<(), StoreError> {
    for entry in fs::read_dir(dir.join(LOCK_DIR))? {
        let name = entry?.file_name();
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".lock"))
            .and_then(|id| SpreadsheetId::parse(id).ok())
        else {
            continue;
        };
        if fs::symlink_metadata(dir.join(id.file_name())).is_ok() {
            continue;
        }
        if let Some(_lock) = try_lock_exclusive(dir, &id.to_string())? {
            remove_lock_file(dir, id)?;
        }
    }
    Ok(())
}

/// Takes a queued edit back when dropped, unless a committer took it.
struct Withdraw<'a>(&'a queue::Place, u64);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.0.withdraw(self.1);
    }
}

/// Runs blocking file work off the async runtime.
async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| StoreError::Job(e.to_string()))?
}

/// Locks `mutex`, also after a thread panicked holding it: the store's
/// shared state stays consistent between statements, so it is usable.
fn locked<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes `.sheetd-tmp-<id>-*` files whose spreadsheet nobody is writing:
/// a writer holds the spreadsheet's lock for as long as its temp file exists.
/// Removes the file at `path`; one that is not there is no error (another
/// process, or the discarding thread, removed it first).
fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

fn remove_leftover_temp_files(dir: &Path) -> Result<(), StoreError> {
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TEMP_PREFIX)) else {
            continue;
        };
        let Some(id) = rest.get(..36).and_then(|id| SpreadsheetId::parse(id).ok()) else {
            continue;
        };
        if let Some(_lock) = try_lock_exclusive(dir, &id.to_string())? {
            match fs::remove_file(dir.join(&name)) {
                Ok(()) => tracing::info!(file = ?name, "removed a temp file left by a crash"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cell, Sheet};

    #[tokio::test]
    async fn a_listing_hashes_a_file_once_per_version() {
        let dir = tempfile::tempdir().unwrap();
        let limits = crate::Config::with_data_dir(dir.path()).store_limits();
        let store = Store::open(dir.path(), limits).unwrap();
        let id = SpreadsheetId::new_random();
        let workbook = Workbook {
            sheets: vec![Sheet::new("S", vec![vec![Cell::Text("name".into())]])],
            ..Workbook::default()
        };
        store.create_from_model(id, &workbook).unwrap();
        let path = store.path(id);
        let listed_tag = |store: Store| async move {
            let (page, _) = store.list(0, 10, |_| true).await.unwrap();
            page[0].tag
        };
        let first = listed_tag(store.clone()).await;
        assert_eq!(first, Some(Tag::of(&fs::read(&path).unwrap())));

        // A tag planted for the file's identity is what the next listing
        // gives: it did not read the file again.
        let identity = FileIdentity::of(&fs::symlink_metadata(&path).unwrap());
        let planted = Tag::of(b"planted");
        locked(&store.inner.tags).insert(id, identity, planted, false);
        assert_eq!(listed_tag(store.clone()).await, Some(planted));

        // A new version of the file is hashed again.
        fs::write(&path, b"another version").unwrap();
        let again = listed_tag(store.clone()).await;
        assert_eq!(again, Some(Tag::of(b"another version")));
    }
}
