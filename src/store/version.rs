//! Versions of a workbook file, for conditional requests (contract §11.5):
//! the tag that names a version (the BLAKE3 hash of the file's bytes), the
//! preconditions a write can carry, and the tags already computed, by file
//! identity, so that no request hashes a file that has not changed.
//!
//! The tag is a content hash, not the file's length and time: two servers
//! sharing a data directory give the same file the same tag, and a file put
//! back as it was gets its old tag again. It is computed where the store
//! reads a file's bytes anyway (to parse it) or writes them; the HTTP layer
//! turns it into `ETag` and reads the `If-*` headers into a
//! [`Precondition`].

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::time::SystemTime;

use super::cache::FileIdentity;
use crate::model::SpreadsheetId;

/// The BLAKE3 hash of a workbook file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag([u8; 32]);

impl Tag {
    /// The tag of `bytes`.
    pub fn of(bytes: &[u8]) -> Tag {
        Tag(*blake3::hash(bytes).as_bytes())
    }

    /// The tag of what `reader` gives, read to its end.
    pub fn read(reader: impl Read) -> std::io::Result<Tag> {
        let mut hasher = blake3::Hasher::new();
        hasher.update_reader(reader)?;
        Ok(Tag::from(hasher))
    }

    /// The hash in lower-case hex: what `b3sum` prints for the file.
    pub fn hex(&self) -> String {
        crate::hex::encode(&self.0)
    }

    /// The tag whose [`Tag::hex`] is `text` (either letter case).
    pub fn from_hex(text: &str) -> Option<Tag> {
        crate::hex::decode(text).map(Tag)
    }
}

impl From<blake3::Hasher> for Tag {
    /// The tag of the bytes given to `hasher`.
    fn from(hasher: blake3::Hasher) -> Tag {
        Tag::from(hasher.finalize())
    }
}

impl From<blake3::Hash> for Tag {
    fn from(hash: blake3::Hash) -> Tag {
        Tag(*hash.as_bytes())
    }
}

/// Written as an HTTP entity tag: the hex, quoted.
impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.hex())
    }
}

/// One version of a workbook file: its tag and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    pub tag: Tag,
    pub modified: SystemTime,
    /// The version before it was modified within the same whole second, so
    /// an HTTP date (whole seconds) cannot tell the two apart.
    pub shares_second: bool,
}

impl Version {
    /// The version of the file `meta` describes, hashed as `tag`;
    /// `shares_second` as [`Known::shares_second`] tells.
    pub fn new(tag: Tag, meta: &std::fs::Metadata, shares_second: bool) -> Version {
        Version {
            tag,
            modified: super::cache::FileIdentity::of(meta).modified(),
            shares_second,
        }
    }

    /// Whether this version is not the one a client was told was modified
    /// at `since` (an HTTP date, whole seconds): it was modified in a
    /// later second, or in that second after another version was (which
    /// the date cannot tell from it: counted as changed, so that
    /// `If-Unmodified-Since` fails rather than let a write through over a
    /// change the client has not seen, and `If-Modified-Since` answers
    /// the rows rather than 304).
    pub fn modified_since(&self, since: SystemTime) -> bool {
        match whole_seconds(self.modified).cmp(&whole_seconds(since)) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => self.shares_second,
            std::cmp::Ordering::Less => false,
        }
    }
}

/// A value and the version of the workbook it left (a write) or was
/// taken from (a read).
#[derive(Debug)]
pub struct Versioned<T> {
    pub value: T,
    pub version: Version,
}

/// An entity tag as a request names it: quoted, weak (`W/"…"`) or strong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub weak: bool,
    /// With its quotes, as [`Tag`] displays.
    pub opaque: String,
}

/// The tags a request names: any version (`*`), or these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tags {
    Any,
    List(Vec<Named>),
}

impl Tags {
    /// Strong comparison (RFC 9110 §8.8.3.2): a weak tag never matches;
    /// `*` matches any version.
    pub fn match_strong(&self, tag: &Tag) -> bool {
        let tag = tag.to_string();
        match self {
            Tags::Any => true,
            Tags::List(named) => named.iter().any(|n| !n.weak && n.opaque == tag),
        }
    }

    /// Weak comparison, for reads: `W/"x"` matches `"x"`.
    pub fn match_weak(&self, tag: &Tag) -> bool {
        let tag = tag.to_string();
        match self {
            Tags::Any => true,
            Tags::List(named) => named.iter().any(|n| n.opaque == tag),
        }
    }
}

/// Where a workbook stands when a write takes its turn.
#[derive(Debug, Clone, Copy)]
pub enum Current {
    /// No file has the spreadsheet's id.
    Absent,
    /// The file is this version.
    File(Version),
    /// An earlier edit of the same commit changed the workbook: the file
    /// about to be written is a version no request can have seen.
    Changed,
}

/// What a write requires of the workbook's version, checked when it takes
/// its turn, after every write queued before it (RFC 9110 §13.2.2 order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Precondition {
    /// The write goes on only if the workbook is one of these versions.
    pub if_match: Option<Tags>,
    /// … or, without `if_match`, has not changed since this time.
    pub if_unmodified_since: Option<SystemTime>,
    /// The write goes on only if the workbook is none of these versions
    /// (`*`: only if there is no workbook).
    pub if_none_match: Option<Tags>,
}

impl Precondition {
    /// Whether nothing is required.
    pub fn is_empty(&self) -> bool {
        *self == Precondition::default()
    }

    /// Whether a write requiring this may go on with the workbook at
    /// `current`.
    pub fn holds(&self, current: Current) -> bool {
        let matched = match (&self.if_match, current) {
            (None, _) => None,
            (Some(_), Current::Absent) => Some(false),
            (Some(tags), Current::Changed) => Some(*tags == Tags::Any),
            (Some(tags), Current::File(version)) => Some(tags.match_strong(&version.tag)),
        };
        let unmodified = || match (self.if_unmodified_since, current) {
            // Ignored without a modification time (RFC 9110 §13.1.4).
            (None, _) | (_, Current::Absent) => true,
            (Some(since), Current::File(version)) => !version.modified_since(since),
            (Some(since), Current::Changed) => !later(SystemTime::now(), since),
        };
        if !matched.unwrap_or_else(unmodified) {
            return false;
        }
        match (&self.if_none_match, current) {
            (None, _) | (Some(_), Current::Absent) => true,
            (Some(tags), Current::Changed) => *tags != Tags::Any,
            (Some(tags), Current::File(version)) => !tags.match_weak(&version.tag),
        }
    }
}

/// Whether `time` is later than `since` by a whole second or more: HTTP
/// dates have no fractions, so a file modified within the second a client
/// was told counts as that second.
pub fn later(time: SystemTime, since: SystemTime) -> bool {
    whole_seconds(time) > whole_seconds(since)
}

/// The whole seconds since the epoch of `time` (0 before it).
pub(super) fn whole_seconds(time: SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The tag of each spreadsheet's file, by the identity the file had when
/// it was hashed: a few dozen bytes a spreadsheet, never evicted (the
/// store drops a spreadsheet's when it removes the workbook).
#[derive(Default)]
pub struct Known(HashMap<SpreadsheetId, KnownFile>);

/// The file of a spreadsheet last hashed.
struct KnownFile {
    identity: FileIdentity,
    tag: Tag,
    /// The file known before it was modified in the same whole second.
    shares_second: bool,
}

impl Known {
    /// The tag of the file of `id` with `identity`, if it was hashed.
    pub fn get(&self, id: SpreadsheetId, identity: FileIdentity) -> Option<Tag> {
        let known = self.0.get(&id)?;
        (known.identity == identity).then_some(known.tag)
    }

    /// Whether the file of `id` with `identity` was modified in the same
    /// whole second as the file of `id` known before it (as far as this
    /// process knows: a file it never hashed does not count).
    pub fn shares_second(&self, id: SpreadsheetId, identity: FileIdentity) -> bool {
        self.0
            .get(&id)
            .is_some_and(|known| known.identity == identity && known.shares_second)
    }

    /// Whether a file of `id` was hashed.
    pub fn knows(&self, id: SpreadsheetId) -> bool {
        self.0.contains_key(&id)
    }

    /// Keeps `tag` for the file of `id` with `identity`; `first_shares`
    /// says whether it shares its whole second with the version before it
    /// when no file of `id` was known before.
    pub fn insert(
        &mut self,
        id: SpreadsheetId,
        identity: FileIdentity,
        tag: Tag,
        first_shares: bool,
    ) {
        let shares_second = match self.0.get(&id) {
            Some(known) if known.identity == identity => known.shares_second,
            Some(known) => known.identity.modified_second() == identity.modified_second(),
            None => first_shares,
        };
        let known = KnownFile {
            identity,
            tag,
            shares_second,
        };
        self.0.insert(id, known);
    }

    pub fn remove(&mut self, id: SpreadsheetId) {
        self.0.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn version(byte: u8, at: u64) -> Version {
        Version {
            tag: Tag::of(&[byte]),
            modified: std::time::UNIX_EPOCH + Duration::from_secs(at),
            shares_second: false,
        }
    }

    fn named(tag: &Tag, weak: bool) -> Named {
        Named {
            weak,
            opaque: tag.to_string(),
        }
    }

    fn if_match(tags: Tags) -> Precondition {
        Precondition {
            if_match: Some(tags),
            ..Precondition::default()
        }
    }

    #[test]
    fn the_tag_is_the_quoted_blake3_hash_of_the_bytes() {
        // BLAKE3's published hash of "abc".
        assert_eq!(
            Tag::of(b"abc").to_string(),
            "\"6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85\""
        );
        let read = Tag::read(std::io::Cursor::new(vec![7u8; 200_000])).unwrap();
        assert_eq!(read, Tag::of(&vec![7u8; 200_000]));
    }

    #[test]
    fn if_match_compares_strongly_and_fails_once_the_workbook_changed() {
        let v = version(1, 100);
        let current = Current::File(v);
        assert!(if_match(Tags::List(vec![named(&v.tag, false)])).holds(current));
        assert!(!if_match(Tags::List(vec![named(&v.tag, true)])).holds(current));
        assert!(!if_match(Tags::List(vec![named(&version(2, 1).tag, false)])).holds(current));
        assert!(if_match(Tags::Any).holds(current));
        assert!(!if_match(Tags::List(vec![named(&v.tag, false)])).holds(Current::Changed));
        assert!(if_match(Tags::Any).holds(Current::Changed));
        assert!(!if_match(Tags::Any).holds(Current::Absent));
    }

    #[test]
    fn if_unmodified_since_counts_whole_seconds_and_yields_to_if_match() {
        let v = version(1, 100);
        let since = |at: u64| Precondition {
            if_unmodified_since: Some(std::time::UNIX_EPOCH + Duration::from_millis(at)),
            ..Precondition::default()
        };
        assert!(since(100_000).holds(Current::File(v)));
        assert!(since(100_999).holds(Current::File(v)));
        assert!(!since(99_999).holds(Current::File(v)));
        assert!(since(1).holds(Current::Absent), "ignored without a file");
        let both = Precondition {
            if_match: Some(Tags::Any),
            ..since(1)
        };
        assert!(both.holds(Current::File(v)), "If-Match decides alone");
        let after_another = Version {
            shares_second: true,
            ..v
        };
        assert!(
            !since(100_000).holds(Current::File(after_another)),
            "a date the version shares with the one before it cannot name it"
        );
        assert!(since(101_000).holds(Current::File(after_another)));
    }

    #[test]
    fn if_none_match_star_holds_only_without_a_workbook() {
        let none = Precondition {
            if_none_match: Some(Tags::Any),
            ..Precondition::default()
        };
        assert!(none.holds(Current::Absent));
        assert!(!none.holds(Current::File(version(1, 1))));
    }
}
