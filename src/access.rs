//! Who may do what (contract §11.7): the tokens a server accepts, what each
//! may reach (workbooks, and optionally sheets or tables) and what it may
//! do there.
//!
//! Tokens come from `--token`/`--read-token` (every permission, or `read`,
//! on everything) and from `--tokens-file`, a TOML file that holds the
//! SHA-256 of each secret, never the secret. The file is read again on
//! SIGHUP and when it changes; a file that does not parse leaves the
//! tokens as they were, and the log says why.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::model::formula::same_sheet;
use crate::model::source::Source;
use crate::model::value::days_from_civil;
use crate::model::{SpreadsheetId, Workbook};

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    Read,
    Insert,
    Update,
    Delete,
    /// Upload, replace and remove workbooks; add sheets.
    Manage,
}

impl Permission {
    const ALL: [Permission; 5] = [
        Permission::Read,
        Permission::Insert,
        Permission::Update,
        Permission::Delete,
        Permission::Manage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Permission::Read => "read",
            Permission::Insert => "insert",
            Permission::Update => "update",
            Permission::Delete => "delete",
            Permission::Manage => "manage",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// One token: its name, the hash of its secret, its reach and permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub name: String,
    /// The SHA-256 of its secret.
    secret: SecretHash,
    /// `None`: every workbook.
    spreadsheets: Option<Vec<SpreadsheetId>>,
    /// `None`: every sheet and table of the workbooks it reaches.
    sheets: Option<Vec<String>>,
    can: u8,
    expires: Option<SystemTime>,
}

impl Grant {
    /// A token given on the command line: `can` on every workbook.
    pub fn everywhere(name: &str, secret: &str, can: &[Permission]) -> Grant {
        Grant {
            name: name.to_owned(),
            secret: SecretHash::of(secret),
            spreadsheets: None,
            sheets: None,
            can: can.iter().fold(0, |bits, p| bits | p.bit()),
            expires: None,
        }
    }

    pub fn may(&self, permission: Permission) -> bool {
        self.can & permission.bit() != 0
    }

    /// The permissions it has, by name, for error details.
    pub fn permissions(&self) -> Vec<&'static str> {
        Permission::ALL
            .into_iter()
            .filter(|p| self.may(*p))
            .map(Permission::name)
            .collect()
    }

    pub fn reaches(&self, id: SpreadsheetId) -> bool {
        self.spreadsheets
            .as_ref()
            .is_none_or(|ids| ids.contains(&id))
    }

    /// Whether it reaches every workbook (`spreadsheets = ["*"]`), so also
    /// one it creates.
    pub fn reaches_every_workbook(&self) -> bool {
        self.spreadsheets.is_none()
    }

    /// Whether it may reach the sheet or table a request names, before the
    /// workbook is read: every one, or one it lists, in any letter case
    /// (as requests name sheets). Which one the name leads to is checked
    /// once the workbook is read ([`Grant::reaches_source`]).
    pub fn reaches_sheet(&self, name: &str) -> bool {
        self.sheets
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| same_sheet(n, name)))
    }

    /// Whether it reaches the rows `source` of `workbook`, where a
    /// request's name led: a sheet it lists reaches the sheet and its
    /// tables, a table it lists that table (each name it lists resolved as
    /// a request's name is, so `stock` for the sheet `Stock` is that sheet,
    /// and a table named like another sheet is still that table).
    pub fn reaches_source(&self, workbook: &Workbook, source: &Source) -> bool {
        self.reaches_rows(workbook, source.sheet, source.region.table)
    }

    /// Whether it reaches sheet `sheet` of `workbook` (by its index), or
    /// its table `table` (by its index among the sheet's): see
    /// [`Grant::reaches_source`].
    pub fn reaches_rows(&self, workbook: &Workbook, sheet: usize, table: Option<usize>) -> bool {
        let Some(names) = &self.sheets else {
            return true;
        };
        names.iter().any(|name| match workbook.named(name) {
            Some((named, None)) => named == sheet,
            Some((named, named_table)) => named == sheet && named_table == table,
            None => false,
        })
    }

    /// Whether it lists `name` among its sheets and tables, exactly (for
    /// listings made without reading a workbook).
    pub fn lists_sheet(&self, name: &str) -> bool {
        self.sheets
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }

    /// Whether it reaches whole workbooks, not only some of their sheets.
    pub fn reaches_whole_workbooks(&self) -> bool {
        self.sheets.is_none()
    }

    fn expired(&self, now: SystemTime) -> bool {
        self.expires.is_some_and(|expires| expires <= now)
    }
}

/// What a presented secret is.
#[derive(Debug)]
pub enum Presented {
    Valid(Arc<Grant>),
    Expired,
    Unknown,
}

/// The tokens a server accepts, kept current with the tokens file.
#[derive(Debug)]
pub struct Keyring {
    /// `--token` and `--read-token`.
    fixed: Vec<Arc<Grant>>,
    file: Option<PathBuf>,
    from_file: RwLock<Vec<Arc<Grant>>>,
    /// The file's length and modification time when last read.
    seen: Mutex<Option<(u64, SystemTime)>>,
}

impl Keyring {
    /// The tokens of the command line and of `file`. A file that cannot be
    /// read or parsed is a start-up error, and so is one that holds no
    /// token when the command line gives none: a server that refuses
    /// every request.
    pub fn new(fixed: Vec<Grant>, file: Option<&Path>) -> Result<Keyring, String> {
        let keyring = Keyring {
            fixed: fixed.into_iter().map(Arc::new).collect(),
            file: file.map(Path::to_path_buf),
            from_file: RwLock::new(Vec::new()),
            seen: Mutex::new(None),
        };
        keyring.reload()?;
        if let Some(path) = file
            && keyring.refuses_everyone()
        {
            return Err(format!(
                "the tokens file {} holds no token, and no other token is given: \
                 every request would be refused",
                path.display()
            ));
        }
        Ok(keyring)
    }

    /// Whether tokens are required and there is none.
    fn refuses_everyone(&self) -> bool {
        let from_file = self.from_file.read().unwrap_or_else(|e| e.into_inner());
        self.required() && self.fixed.is_empty() && from_file.is_empty()
    }

    /// Whether requests must carry a token.
    pub fn required(&self) -> bool {
        !self.fixed.is_empty() || self.file.is_some()
    }

    /// The grant of a presented secret, compared by its hash in time that
    /// does not depend on where the hashes differ.
    pub fn find(&self, secret: &str) -> Presented {
        let hash = SecretHash::of(secret);
        let from_file = self.from_file.read().unwrap_or_else(|e| e.into_inner());
        let found = self
            .fixed
            .iter()
            .chain(from_file.iter())
            .find(|grant| grant.secret.same_in_constant_time(&hash));
        match found {
            None => Presented::Unknown,
            Some(grant) if grant.expired(SystemTime::now()) => Presented::Expired,
            Some(grant) => Presented::Valid(grant.clone()),
        }
    }

    /// Reads the tokens file again; on any problem keeps the tokens it had.
    pub fn reload(&self) -> Result<(), String> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let stamp = file_stamp(path);
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("the tokens file {} cannot be read: {e}", path.display()))?;
        let grants = parse_tokens(&text)
            .map_err(|e| format!("the tokens file {} is not valid: {e}", path.display()))?;
        *self.from_file.write().unwrap_or_else(|e| e.into_inner()) =
            grants.into_iter().map(Arc::new).collect();
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = stamp;
        Ok(())
    }

    /// Reads the file again if it changed since it was last read.
    fn reload_if_changed(&self) {
        let Some(path) = &self.file else { return };
        let stamp = file_stamp(path);
        let seen = *self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if stamp.is_some() && stamp != seen {
            self.reload_logged("it changed");
        }
    }

    fn reload_logged(&self, why: &str) {
        match self.reload() {
            // Emptied, the file revokes every token: done, and told.
            Ok(()) if self.refuses_everyone() => tracing::warn!(
                why,
                "tokens file read again: it holds no token, every request is refused"
            ),
            Ok(()) => tracing::info!(why, "tokens file read again"),
            Err(problem) => {
                // Not again for the same file: it is read once it changes.
                if let Some(path) = &self.file {
                    *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = file_stamp(path);
                }
                tracing::error!(%problem, "tokens file not read; the previous tokens stay");
            }
        }
    }

    /// Keeps the tokens current: reads the file again on SIGHUP, and when
    /// its length or modification time changes (looked at every `every`).
    pub fn watch(self: &Arc<Self>, every: Duration) {
        if self.file.is_none() {
            return;
        }
        let keyring = self.clone();
        tokio::spawn(async move {
            let mut hangups =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
            let mut ticks = tokio::time::interval(every);
            loop {
                let hangup = async {
                    match hangups.as_mut() {
                        Some(signal) => signal.recv().await,
                        None => std::future::pending().await,
                    }
                };
                // Reading the file is blocking I/O: off the runtime's threads.
                let keyring = keyring.clone();
                let reload = tokio::select! {
                    _ = ticks.tick() => tokio::task::spawn_blocking(move || keyring.reload_if_changed()),
                    _ = hangup => tokio::task::spawn_blocking(move || keyring.reload_logged("SIGHUP")),
                };
                let _ = reload.await;
            }
        });
    }
}

fn file_stamp(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// The tokens file's form.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    tokens: Vec<TokenEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    name: String,
    sha256: String,
    spreadsheets: Vec<String>,
    sheets: Option<Vec<String>>,
    can: Vec<String>,
    expires: Option<Expiry>,
}

/// An expiry as TOML writes a date-time, bare or quoted (the contract's
/// example quotes it).
#[derive(Deserialize)]
#[serde(untagged)]
enum Expiry {
    Datetime(toml::value::Datetime),
    Text(String),
}

/// The tokens of a tokens file; the first problem found, naming the token.
pub fn parse_tokens(text: &str) -> Result<Vec<Grant>, String> {
    let file: TokensFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut grants: Vec<Grant> = Vec::with_capacity(file.tokens.len());
    for (index, entry) in file.tokens.into_iter().enumerate() {
        let named = |problem: String| format!("tokens[{index}] ({:?}): {problem}", entry.name);
        let grant = grant_of(&entry).map_err(named)?;
        if let Some(other) = grants.iter().find(|g| g.name == grant.name) {
            return Err(named(format!("the name {:?} is taken", other.name)));
        }
        if grants.iter().any(|g| g.secret == grant.secret) {
            return Err(named("its sha256 is another token's".into()));
        }
        grants.push(grant);
    }
    Ok(grants)
}

fn grant_of(entry: &TokenEntry) -> Result<Grant, String> {
    if entry.name.trim().is_empty() {
        return Err("name must not be empty".into());
    }
    let secret = SecretHash::from_hex(&entry.sha256)
        .ok_or("sha256 must be 64 hex digits (the SHA-256 of the secret)")?;
    let spreadsheets = if entry.spreadsheets.iter().any(|s| s == "*") {
        None
    } else {
        let ids = entry
            .spreadsheets
            .iter()
            .map(|s| SpreadsheetId::parse(s).map_err(|rule| format!("spreadsheets: {s:?} {rule}")));
        Some(ids.collect::<Result<Vec<_>, _>>()?)
    };
    let mut can = 0;
    for name in &entry.can {
        let permission = Permission::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                format!("can: {name:?} must be one of read, insert, update, delete or manage")
            })?;
        can |= permission.bit();
    }
    let expires = match &entry.expires {
        None => None,
        Some(Expiry::Datetime(datetime)) => Some(system_time(datetime)),
        Some(Expiry::Text(text)) => Some(
            text.parse()
                .map_err(|_| "must be an RFC 3339 date-time".to_owned())
                .and_then(|datetime| system_time(&datetime)),
        ),
    }
    .transpose()
    .map_err(|e| format!("expires: {e}"))?;
    Ok(Grant {
        name: entry.name.clone(),
        secret,
        spreadsheets,
        sheets: entry.sheets.clone(),
        can,
        expires,
    })
}

/// A TOML date-time with its offset (RFC 3339) as a point in time.
fn system_time(datetime: &toml::value::Datetime) -> Result<SystemTime, String> {
    let (Some(date), Some(time), Some(offset)) = (datetime.date, datetime.time, datetime.offset)
    else {
        return Err("must be a date and time with its offset (2027-01-01T00:00:00Z)".into());
    };
    let days = days_from_civil(i64::from(date.year), date.month.into(), date.day.into());
    let offset_minutes = match offset {
        toml::value::Offset::Z => 0,
        toml::value::Offset::Custom { minutes } => i64::from(minutes),
    };
    let seconds = days * 86_400
        + i64::from(time.hour) * 3600
        + i64::from(time.minute) * 60
        + i64::from(time.second)
        - offset_minutes * 60;
    u64::try_from(seconds)
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
        .map_err(|_| "must be after 1970".into())
}

/// The lower-case hex form of a secret's SHA-256, as the tokens file
/// holds it.
pub fn sha256_hex(secret: &str) -> String {
    crate::hex::encode(&SecretHash::of(secret).0)
}

/// The SHA-256 of a token's secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SecretHash([u8; 32]);

impl SecretHash {
    fn of(secret: &str) -> SecretHash {
        SecretHash(Sha256::digest(secret.as_bytes()).into())
    }

    /// The hash the tokens file gives as 64 hex digits.
    fn from_hex(text: &str) -> Option<SecretHash> {
        crate::hex::decode(text).map(SecretHash)
    }

    /// Whether `other` is the same hash, compared in time that does not
    /// depend on where they differ.
    fn same_in_constant_time(&self, other: &SecretHash) -> bool {
        let diff = self
            .0
            .iter()
            .zip(&other.0)
            .fold(0, |diff, (a, b)| diff | (a ^ b));
        diff == 0
    }
}

/// A new random secret (244 random bits, as 64 hex digits) and the
/// tokens-file entry for it,
/// for `sheetd token`.
pub fn new_token(name: &str) -> (String, String) {
    let secret = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let entry = format!(
        "[[tokens]]\nname = {name:?}\nsha256 = \"{}\"\nspreadsheets = [\"*\"]\ncan = [\"read\"]\n",
        sha256_hex(&secret)
    );
    (secret, entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0b1e3a5c-7d2f-4a8e-9c61-3f0d2b7e4a19";

    fn file(entry: &str) -> String {
        format!("[[tokens]]\n{entry}")
    }

    #[test]
    fn a_token_reaches_what_it_lists_and_may_what_it_can() {
        let text = file(&format!(
            "name = \"form\"\nsha256 = \"{}\"\nspreadsheets = [\"{ID}\"]\nsheets = [\"Orders\"]\ncan = [\"insert\"]\n",
            sha256_hex("s3cret")
        ));
        let grants = parse_tokens(&text).unwrap();
        let keyring = Keyring {
            fixed: grants.into_iter().map(Arc::new).collect(),
            file: None,
            from_file: RwLock::new(Vec::new()),
            seen: Mutex::new(None),
        };
        let Presented::Valid(grant) = keyring.find("s3cret") else {
            panic!("the secret is known");
        };
        assert!(grant.may(Permission::Insert) && !grant.may(Permission::Read));
        assert!(grant.reaches(SpreadsheetId::parse(ID).unwrap()));
        assert!(
            !grant.reaches(SpreadsheetId::parse("5ee7d000-0000-4000-8000-000000000001").unwrap())
        );
        assert!(grant.reaches_sheet("Orders") && grant.reaches_sheet("orders"));
        assert!(grant.lists_sheet("Orders") && !grant.lists_sheet("orders"));
        assert!(!grant.reaches_sheet("Order"));
        assert!(matches!(keyring.find("s3cret "), Presented::Unknown));
    }

    #[test]
    fn expiry_is_read_as_rfc_3339() {
        let text = file(&format!(
            "name = \"old\"\nsha256 = \"{}\"\nspreadsheets = [\"*\"]\ncan = [\"read\"]\nexpires = \"2021-01-01T01:00:00+01:00\"\n",
            sha256_hex("x")
        ));
        let grant = &parse_tokens(&text).unwrap()[0];
        assert_eq!(
            grant.expires,
            Some(UNIX_EPOCH + Duration::from_secs(1_609_459_200))
        );
        assert!(grant.expired(SystemTime::now()));
    }

    #[test]
    fn a_bad_entry_is_named() {
        let bad_hash =
            file("name = \"a\"\nsha256 = \"ABC\"\nspreadsheets = [\"*\"]\ncan = [\"read\"]\n");
        assert!(
            parse_tokens(&bad_hash)
                .unwrap_err()
                .contains("tokens[0] (\"a\"): sha256")
        );
        let bad_can = file(&format!(
            "name = \"a\"\nsha256 = \"{}\"\nspreadsheets = [\"*\"]\ncan = [\"write\"]\n",
            sha256_hex("x")
        ));
        assert!(
            parse_tokens(&bad_can)
                .unwrap_err()
                .contains("can: \"write\"")
        );
        let unknown_field = file(&format!(
            "name = \"a\"\nsha256 = \"{}\"\nspreadsheets = [\"*\"]\ncan = [\"read\"]\nsheet = [\"x\"]\n",
            sha256_hex("x")
        ));
        assert!(parse_tokens(&unknown_field).is_err());
    }

    #[test]
    fn a_new_token_is_found_by_its_entry() {
        let (secret, entry) = new_token("cli");
        let grant = &parse_tokens(&entry).unwrap()[0];
        assert_eq!(grant.secret, SecretHash::of(&secret));
        assert_eq!(secret.len(), 64);
    }

    #[test]
    fn a_broken_file_keeps_the_tokens_there_were() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let good = file(&format!(
            "name = \"a\"\nsha256 = \"{}\"\nspreadsheets = [\"*\"]\ncan = [\"read\"]\n",
            sha256_hex("x")
        ));
        std::fs::write(&path, good).unwrap();
        let keyring = Keyring::new(Vec::new(), Some(&path)).unwrap();
        std::fs::write(&path, "[[tokens]]\nname = ").unwrap();
        assert!(keyring.reload().is_err());
        assert!(matches!(keyring.find("x"), Presented::Valid(_)));
        // And a file that cannot be read at start is a start-up error.
        std::fs::remove_file(&path).unwrap();
        assert!(Keyring::new(Vec::new(), Some(&path)).is_err());
    }

    #[test]
    fn a_file_without_tokens_is_a_start_up_error_unless_others_are_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        for empty in ["", "# [[tokens]]\n# name = \"a\"\n"] {
            std::fs::write(&path, empty).unwrap();
            let problem = Keyring::new(Vec::new(), Some(&path)).err().unwrap();
            assert!(problem.contains("holds no token"), "{problem}");
        }
        let fixed = Grant::everywhere("cli", "secret", &[Permission::Read]);
        let keyring = Keyring::new(vec![fixed], Some(&path)).unwrap();
        assert!(matches!(keyring.find("secret"), Presented::Valid(_)));
    }
}
