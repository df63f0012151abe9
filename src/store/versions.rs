//! Earlier versions of each workbook (contract §11.7, `--keep-versions`).
//!
//! When a write replaces a workbook's file, the file it replaces is first
//! linked (a hard link: no copy) into `.sheetd-versions/<id>/`, named by
//! when it was replaced and by its tag, and the oldest beyond the limit are
//! dropped: renamed `.gone-…` at once, and unlinked by the store's
//! discarding thread (freeing a large file's blocks would slow the write;
//! the write unlinks them itself only when that thread is behind). A version keeps the file's bytes and times as they were.
//! Versions are not workbooks (the listing reads only the data directory's
//! own files), and go with their workbook when it is removed.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::version::Tag;
use crate::model::SpreadsheetId;

/// The directory, in the data directory, that holds every workbook's
/// versions.
pub const VERSIONS_DIR: &str = ".sheetd-versions";

/// One kept version.
#[derive(Debug, Clone)]
pub struct Kept {
    pub tag: Tag,
    /// When the file of that version was last written.
    pub modified: SystemTime,
    pub bytes: u64,
    pub path: PathBuf,
}

/// The directory of one workbook's versions.
fn dir(data_dir: &Path, id: SpreadsheetId) -> PathBuf {
    data_dir.join(VERSIONS_DIR).join(id.to_string())
}

/// Links `file`, the version `tag` of workbook `id` about to be replaced,
/// among its versions, then keeps only the newest `limit` of them. A
/// version already kept is not kept twice. The versions dropped are
/// renamed out of the listing, not unlinked: their paths are returned for
/// the caller to unlink when it has time.
pub fn keep(
    data_dir: &Path,
    id: SpreadsheetId,
    file: &Path,
    tag: Tag,
    limit: usize,
) -> std::io::Result<Vec<PathBuf>> {
    if limit == 0 {
        return drop_all(data_dir, id);
    }
    let dir = dir(data_dir, id);
    fs::create_dir_all(&dir)?;
    let kept = list(data_dir, id)?;
    if kept.first().is_some_and(|newest| newest.tag == tag) {
        return Ok(Vec::new());
    }
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let name = format!("{:020}-{}.xlsx", since.as_nanos(), tag.hex());
    fs::hard_link(file, dir.join(&name))?;
    // The new one is the newest: of those there were, `limit - 1` stay.
    Ok(dropped(&dir, kept.get(limit - 1..).unwrap_or_default()))
}

/// Drops every version kept of workbook `id` (`--keep-versions 0`, after a
/// run that kept some); gives their paths, as [`keep`] does.
pub fn drop_all(data_dir: &Path, id: SpreadsheetId) -> std::io::Result<Vec<PathBuf>> {
    let kept = list(data_dir, id)?;
    Ok(dropped(&dir(data_dir, id), &kept))
}

/// Renames the versions `old` out of the listing of `dir`; gives the new
/// paths.
fn dropped(dir: &Path, old: &[Kept]) -> Vec<PathBuf> {
    let mut dropped = Vec::new();
    for old in old {
        let name = old.path.file_name().unwrap_or_default().to_string_lossy();
        let gone = dir.join(format!("{GONE}{name}"));
        match fs::rename(&old.path, &gone) {
            Ok(()) => dropped.push(gone),
            // Still listed: the next write drops it again.
            Err(error) => {
                tracing::warn!(path = %old.path.display(), %error, "an old version was not dropped")
            }
        }
    }
    dropped
}

/// The start of the name of a version dropped but not yet unlinked.
const GONE: &str = ".gone-";

/// The versions kept of workbook `id`, newest first.
pub fn list(data_dir: &Path, id: SpreadsheetId) -> std::io::Result<Vec<Kept>> {
    let entries = match fs::read_dir(dir(data_dir, id)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut kept = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some((order, tag)) = name.to_str().and_then(parse_name) else {
            // A version dropped (`.gone-…`) among them.
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        kept.push((
            order,
            Kept {
                tag,
                modified: meta.modified().unwrap_or(UNIX_EPOCH),
                bytes: meta.len(),
                path: entry.path(),
            },
        ));
    }
    kept.sort_by_key(|(order, _)| std::cmp::Reverse(*order));
    Ok(kept.into_iter().map(|(_, kept)| kept).collect())
}

/// The kept version of workbook `id` whose tag is `tag`.
pub fn find(data_dir: &Path, id: SpreadsheetId, tag: Tag) -> std::io::Result<Option<Kept>> {
    Ok(list(data_dir, id)?.into_iter().find(|kept| kept.tag == tag))
}

/// Removes every version of workbook `id` (and the versions directory,
/// once it holds no workbook's).
pub fn remove_all(data_dir: &Path, id: SpreadsheetId) -> std::io::Result<()> {
    match fs::remove_dir_all(dir(data_dir, id)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    // Fails while another workbook has versions: then it stays.
    let _ = fs::remove_dir(data_dir.join(VERSIONS_DIR));
    Ok(())
}

/// Removes the versions of workbooks whose file is gone (removed by hand
/// while sheetd was not running), and the versions dropped but not yet
/// unlinked when it stopped, at start-up.
pub fn remove_orphans(data_dir: &Path) -> std::io::Result<()> {
    let entries = match fs::read_dir(data_dir.join(VERSIONS_DIR)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let name = entry?.file_name();
        let Some(id) = name.to_str().and_then(|n| SpreadsheetId::parse(n).ok()) else {
            continue;
        };
        if fs::symlink_metadata(data_dir.join(id.file_name())).is_err() {
            remove_all(data_dir, id)?;
        } else {
            remove_dropped(data_dir, id)?;
        }
    }
    Ok(())
}

/// Unlinks the versions of workbook `id` that were dropped ([`keep`]) but
/// not yet unlinked.
fn remove_dropped(data_dir: &Path, id: SpreadsheetId) -> std::io::Result<()> {
    let entries = match fs::read_dir(dir(data_dir, id)) {
        Ok(entries) => entries,
        // Removed meanwhile (by another process sharing the directory), or
        // not a directory: nothing of sheetd's to remove.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        if !entry.file_name().to_string_lossy().starts_with(GONE) {
            continue;
        }
        super::remove_if_present(&entry.path())?;
    }
    Ok(())
}

/// `<nanoseconds>-<tag>.xlsx`: its order and tag.
fn parse_name(name: &str) -> Option<(u128, Tag)> {
    let (order, rest) = name.strip_suffix(".xlsx")?.split_once('-')?;
    Some((order.parse().ok()?, Tag::from_hex(rest)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> SpreadsheetId {
        SpreadsheetId::parse("0b1e3a5c-7d2f-4a8e-9c61-3f0d2b7e4a19").unwrap()
    }

    #[test]
    fn versions_are_links_newest_first_and_the_oldest_go() {
        let data = tempfile::tempdir().unwrap();
        let file = data.path().join(id().file_name());
        let mut tags = Vec::new();
        let mut dropped = Vec::new();
        for content in ["one", "two", "three"] {
            fs::write(&file, content).unwrap();
            let tag = Tag::of(content.as_bytes());
            dropped.extend(keep(data.path(), id(), &file, tag, 2).unwrap());
            // Kept again (no write in between): not twice.
            assert!(keep(data.path(), id(), &file, tag, 2).unwrap().is_empty());
            tags.push(tag);
            fs::remove_file(&file).unwrap();
        }
        let kept = list(data.path(), id()).unwrap();
        let kept_tags: Vec<Tag> = kept.iter().map(|k| k.tag).collect();
        assert_eq!(kept_tags, [tags[2], tags[1]]);
        assert_eq!(fs::read(&kept[0].path).unwrap(), b"three");
        assert!(find(data.path(), id(), tags[0]).unwrap().is_none());
        // The oldest is out of the listing, its bytes still on disk for the
        // caller to unlink; one the caller never unlinked goes at start-up.
        assert_eq!(dropped.len(), 1);
        assert_eq!(fs::read(&dropped[0]).unwrap(), b"one");
        fs::write(&file, "four").unwrap();
        remove_orphans(data.path()).unwrap();
        assert!(!dropped[0].exists());
        assert_eq!(list(data.path(), id()).unwrap().len(), 2);
        fs::remove_file(&file).unwrap();
        remove_all(data.path(), id()).unwrap();
        assert!(list(data.path(), id()).unwrap().is_empty());
    }

    #[test]
    fn keeping_none_drops_those_an_earlier_limit_kept() {
        let data = tempfile::tempdir().unwrap();
        let file = data.path().join(id().file_name());
        for content in ["one", "two"] {
            fs::write(&file, content).unwrap();
            keep(data.path(), id(), &file, Tag::of(content.as_bytes()), 5).unwrap();
        }
        assert_eq!(list(data.path(), id()).unwrap().len(), 2);
        let dropped = keep(data.path(), id(), &file, Tag::of(b"two"), 0).unwrap();
        assert_eq!(dropped.len(), 2);
        assert!(list(data.path(), id()).unwrap().is_empty());
        assert!(
            drop_all(tempfile::tempdir().unwrap().path(), id())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_version_costs_no_copy() {
        use std::os::unix::fs::MetadataExt;
        let data = tempfile::tempdir().unwrap();
        let file = data.path().join("book.xlsx");
        fs::write(&file, "bytes").unwrap();
        keep(data.path(), id(), &file, Tag::of(b"bytes"), 10).unwrap();
        let kept = &list(data.path(), id()).unwrap()[0];
        assert_eq!(
            fs::metadata(&kept.path).unwrap().ino(),
            fs::metadata(&file).unwrap().ino()
        );
    }
}
