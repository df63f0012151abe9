//! `--moves`: rows move, and everything moves with them (§11.2, issue 24).
//!
//! For every usable sheet of every workbook (a header and at least 3 data
//! rows, as [`Sheet::data_row_count`] counts them), two operations, each on
//! a fresh copy of the workbook read once: the middle data row deleted
//! (`Workbook::delete_rows` with `Selector::Row`), and one row inserted
//! before it (`Workbook::insert_before`). Each goes as `Store::commit`
//! takes an edit (`src/store/commit.rs`, `attempt`): the calculator is
//! built before the edit when the workbook has formulas, the edit is
//! applied, `xlsx::carried_rows_moved` moves what the file carries, the
//! formulas are recalculated, and the workbook is written.
//!
//! Each operation ends as done, refused (the 409 the server would answer:
//! the edit's or the carried move's conflict, or the writer's refusal) or
//! error (anything else after a successful read, a panic included: a 5xx).
//! For a done operation the packages before and after are compared feature
//! by feature ([`compare`]); the written workbooks go to `--out` for
//! LibreOffice.
//!
//! [`Sheet::data_row_count`]: sheetd::model::Sheet::data_row_count

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Cursor;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sheetd::model::header::Header;
use sheetd::model::request::{DeleteRows, InsertRows, Selector};
use sheetd::model::{Error, Workbook};

use crate::engine::Calc;
use crate::features::{self, Inventory};

/// The text of the inserted row's cell.
const INSERTED: &str = "sheetd-corpus-insert";

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Delete,
    Insert,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Delete => "delete",
            Op::Insert => "insert",
        }
    }
}

/// How one operation ended.
enum Ending {
    Done(Vec<Verdict>),
    Refused(String),
    Error(String),
    /// No column of the header can be addressed by name: no insert made.
    NoColumn,
}

/// One operation on one sheet.
struct Outcome {
    sheet: String,
    /// The sheet's 1-based row number the operation deleted or inserted before.
    row: u32,
    op: Op,
    ending: Ending,
}

/// Per feature of the original, what became of its instances.
#[derive(Default, Clone)]
struct Verdict {
    feature: &'static str,
    /// The same after the operation (nothing to move).
    same: usize,
    /// Moved exactly as the rows did (references and anchors shifted).
    moved: usize,
    /// Still there, with other numbers than a plain shift gives
    /// (a `#REF!`, a shrunk range, an anchor's offset): examples kept.
    changed: Vec<String>,
    /// Gone with the deleted row: every cell it was placed on was deleted.
    gone_with_row: usize,
    /// Gone otherwise.
    lost: Vec<String>,
}

/// What a file gave: its operations, or why none was made.
enum FileResult {
    Unreadable(String),
    /// The read panicked (a 5xx on every request to the file).
    ReadPanic(String),
    Ops(Vec<Outcome>),
}

pub fn run(
    files: &[PathBuf],
    out: Option<&Path>,
    show: usize,
    timeout: Duration,
    tsv: Option<&Path>,
) {
    let started = Instant::now();
    let mut report = Report::default();
    for file in files {
        let result = match std::fs::read(file) {
            Ok(bytes) => file_in_time(bytes, file, out, timeout),
            Err(e) => FileResult::Unreadable(e.to_string()),
        };
        report.add(file, result);
    }
    report.print(show);
    println!(
        "\nwall time of the run: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = tsv
        && let Err(e) = std::fs::write(path, report.tsv())
    {
        eprintln!("cannot write {}: {e}", path.display());
    }
}

/// Messages sent by a file's thread.
enum Message {
    Unreadable(String),
    /// Read; the operations to come: (sheet, row, op).
    Planned(Vec<(String, u32, Op)>),
    Done(Outcome),
}

/// [`measure_file`] on a thread of its own; an operation (or the read)
/// that takes longer than `timeout` ends the file: the operations not
/// finished are errors ("timed out").
fn file_in_time(bytes: Vec<u8>, file: &Path, out: Option<&Path>, timeout: Duration) -> FileResult {
    let (send, receive) = mpsc::channel();
    let out = out.map(|dir| (dir.to_owned(), file.to_owned()));
    std::thread::spawn(move || {
        let send_panic = send.clone();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
            measure_file(&bytes, out.as_ref(), &send)
        }));
        if let Err(panic) = result {
            let _ = send_panic.send(Message::Unreadable(format!("panic: {}", message(&*panic))));
        }
    });
    let mut planned = None;
    let mut outcomes = Vec::new();
    loop {
        match receive.recv_timeout(timeout) {
            Ok(Message::Unreadable(why)) if planned.is_none() => {
                return if why.starts_with("panic: ") {
                    FileResult::ReadPanic(why)
                } else {
                    FileResult::Unreadable(why)
                };
            }
            Ok(Message::Unreadable(why)) => {
                // A panic outside an operation's own guard, after the read.
                eprintln!("panic after the read of {}: {why}", file.display());
                break;
            }
            Ok(Message::Planned(ops)) => planned = Some(ops),
            Ok(Message::Done(outcome)) => outcomes.push(outcome),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                eprintln!("timed out: {}", file.display());
                break;
            }
        }
    }
    let Some(planned) = planned else {
        return FileResult::ReadPanic("timed out or panicked in the read".into());
    };
    // Operations that did not report: timed out, or lost to a panic.
    for (sheet, row, op) in planned {
        if !outcomes
            .iter()
            .any(|o| o.sheet == sheet && o.row == row && o.op == op)
        {
            outcomes.push(Outcome {
                sheet,
                row,
                op,
                ending: Ending::Error("timed out or no answer".into()),
            });
        }
    }
    FileResult::Ops(outcomes)
}

fn message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

/// The usable sheets: (index, 1-based number of the middle data row).
fn usable_sheets(workbook: &Workbook) -> Vec<(usize, u32)> {
    workbook
        .sheets
        .iter()
        .enumerate()
        .filter_map(|(index, sheet)| {
            let source = workbook.source(&sheet.name, None).ok()?;
            let header = Header::of(sheet, &source.region)?;
            let rows = sheet.data_row_count(&source.region);
            (rows >= 3).then(|| (index, (header.row + 1 + rows / 2) as u32 + 1))
        })
        .collect()
}

fn measure_file(original: &[u8], out: Option<&(PathBuf, PathBuf)>, send: &mpsc::Sender<Message>) {
    let workbook = match sheetd::xlsx::read_workbook(original, 50_000_000) {
        Ok(workbook) => workbook,
        Err(e) => {
            let _ = send.send(Message::Unreadable(e.to_string()));
            return;
        }
    };
    let usable = usable_sheets(&workbook);
    let planned = usable
        .iter()
        .flat_map(|&(index, row)| {
            let name = workbook.sheets[index].name.clone();
            [Op::Delete, Op::Insert].map(|op| (name.clone(), row, op))
        })
        .collect();
    let _ = send.send(Message::Planned(planned));
    let before = features::inventory(original);
    for (index, row) in usable {
        let sheet = workbook.sheets[index].name.clone();
        for op in [Op::Delete, Op::Insert] {
            let ending = std::panic::catch_unwind(AssertUnwindSafe(|| {
                operation(&workbook, &before, index, row, op, out)
            }))
            .unwrap_or_else(|panic| Ending::Error(format!("panic: {}", message(&*panic))));
            let outcome = Outcome {
                sheet: sheet.clone(),
                row,
                op,
                ending,
            };
            let _ = send.send(Message::Done(outcome));
        }
    }
}

/// One operation on a fresh copy, as `Store::commit` makes it.
fn operation(
    workbook: &Workbook,
    before: &Result<Inventory, String>,
    index: usize,
    row: u32,
    op: Op,
    out: Option<&(PathBuf, PathBuf)>,
) -> Ending {
    let mut workbook = workbook.clone();
    let name = workbook.sheets[index].name.clone();
    if !workbook.unkept.is_empty() {
        // The commit refuses every write that would lose a part.
        return Ending::Refused(format!(
            "the workbook has {}, which a rewrite would remove",
            workbook.unkept.join(" and ")
        ));
    }
    let insert = match op {
        Op::Delete => None,
        Op::Insert => match insert_request(&workbook, index) {
            Some(request) => Some(request),
            None => return Ending::NoColumn,
        },
    };
    let (mut calc, calculator) = Calc::build(&mut workbook);
    let edited = workbook
        .source(&name, None)
        .and_then(|source| match insert {
            None => workbook.delete_rows(
                &source,
                &DeleteRows {
                    selector: Selector::Row(u64::from(row)),
                },
            ),
            Some(request) => workbook.insert_before(&source, request, u64::from(row)),
        });
    match edited {
        Ok(_) => {}
        Err(Error::Conflict(why)) => return Ending::Refused(why),
        Err(e) => return Ending::Error(format!("the edit: {e}")),
    }
    if let Err(e) = sheetd::xlsx::carried_rows_moved(&mut workbook) {
        return Ending::Refused(e.to_string());
    }
    workbook.unkept.clear();
    calc.recalculate(&mut workbook, calculator);
    let mut written = Cursor::new(Vec::new());
    match sheetd::xlsx::write_workbook(&workbook, &mut written) {
        Ok(()) => {}
        Err(e @ sheetd::xlsx::WriteError::Refused(_)) => return Ending::Refused(e.to_string()),
        Err(e) => return Ending::Error(e.to_string()),
    }
    let written = written.into_inner();
    if let Some((dir, file)) = out {
        keep(dir, file, index, op, &written);
    }
    let before = match before {
        Ok(before) => before,
        Err(e) => return Ending::Error(format!("inventory of the original: {e}")),
    };
    match features::inventory(&written) {
        Ok(after) => Ending::Done(compare(before, &after, &name, row, op)),
        Err(e) => Ending::Error(format!("inventory of the written file: {e}")),
    }
}

/// One row whose first addressable column holds [`INSERTED`].
pub(super) fn insert_request(workbook: &Workbook, index: usize) -> Option<InsertRows> {
    let sheet = &workbook.sheets[index];
    let source = workbook.source(&sheet.name, None).ok()?;
    let header = Header::of(sheet, &source.region)?;
    // Any column can be named now: by its letter when it has no name.
    let column = header.all().first()?;
    let body = serde_json::json!({"data": [{ &column.name: INSERTED }]}).to_string();
    InsertRows::from_json(body.as_bytes(), 1000).ok()
}

/// Saves a written workbook as `<original stem>.s<sheet index>.<op>.<ext>`.
fn keep(dir: &Path, original: &Path, index: usize, op: Op, written: &[u8]) {
    let stem = original
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let ext = original
        .extension()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let name = format!("{stem}.s{index:02}.{}.{ext}", op.name());
    if let Err(e) =
        std::fs::create_dir_all(dir).and_then(|()| std::fs::write(dir.join(name), written))
    {
        eprintln!("cannot keep {}: {e}", original.display());
    }
}

// ---------------------------------------------------------------------------
// The comparison

/// Features whose fingerprint begins with a row number.
const ROW_FEATURES: &[&str] = &[
    "outline collapse",
    "row formats",
    "row heights",
    "hidden rows",
    "row outline levels",
];

/// Per feature of `before`, what became of its instances after the
/// operation `op` at `row` of sheet `target`. An instance is matched, in
/// this order, with an instance of `after` that is it moved as the rows
/// moved (see [`shifted`]), that is it unchanged, or that differs from it
/// only in its numbers and cell references ([`shape`]); one left over is
/// gone with its row when the operation deleted every cell it was placed on
/// ([`on_row_only`]), else lost.
fn compare(before: &Inventory, after: &Inventory, target: &str, row: u32, op: Op) -> Vec<Verdict> {
    let mut verdicts: BTreeMap<&'static str, Verdict> = BTreeMap::new();
    for ((feature, scope), fingerprints) in &before.features {
        let verdict = verdicts.entry(feature).or_insert_with(|| Verdict {
            feature,
            ..Verdict::default()
        });
        let mut left: Vec<&String> = after
            .features
            .get(&(*feature, scope.clone()))
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let row_feature = ROW_FEATURES.contains(feature);
        let own = scope == target;
        let mut unmatched = Vec::new();
        // Moved as the rows moved.
        for fingerprint in fingerprints {
            let moved = shifted(fingerprint, own, row_feature, target, row, op);
            let found = moved
                .as_ref()
                .and_then(|m| left.iter().position(|a| *a == m));
            match found {
                Some(at) => {
                    left.swap_remove(at);
                    if moved.as_deref() == Some(fingerprint.as_str()) {
                        verdict.same += 1;
                    } else {
                        verdict.moved += 1;
                    }
                }
                None => unmatched.push(fingerprint),
            }
        }
        // Unchanged.
        let mut still = Vec::new();
        for fingerprint in unmatched {
            match left.iter().position(|a| *a == fingerprint) {
                Some(at) => {
                    left.swap_remove(at);
                    verdict.same += 1;
                }
                None => still.push(fingerprint),
            }
        }
        // Gone with the deleted row, else changed only in numbers and
        // references.
        for fingerprint in still {
            if op == Op::Delete && own && on_row_only(fingerprint, row_feature, row) {
                verdict.gone_with_row += 1;
                continue;
            }
            let wanted = shape(fingerprint);
            match left.iter().position(|a| shape(a) == wanted) {
                Some(at) => {
                    let a = left.swap_remove(at);
                    verdict
                        .changed
                        .push(format!("{scope}: {} → {}", cut(fingerprint), cut(a)));
                }
                None => verdict.lost.push(format!("{scope}: {}", cut(fingerprint))),
            }
        }
    }
    verdicts.into_values().collect()
}

fn cut(text: &str) -> String {
    const MAX: usize = 300;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// A cell reference found in a fingerprint: where it is, its sheet (when
/// qualified), its row and where the row's digits are.
struct Reference<'a> {
    sheet: Option<&'a str>,
    digits: std::ops::Range<usize>,
    row: u32,
}

/// The A1 references of `text` (`B7`, `$B$7`, `Sheet!B7`, `'A b'!$B7`):
/// 1–3 upper-case letters, then digits, not inside a longer word.
fn references(text: &str) -> Vec<Reference<'_>> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let mut found: Vec<Reference<'_>> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if !text.is_char_boundary(i) {
            i += 1;
            continue;
        }
        if i > 0 && (word(bytes[i - 1]) || (bytes[i - 1] == b'$' && i > 1 && word(bytes[i - 2]))) {
            i += 1;
            continue;
        }
        let mut j = i;
        if bytes.get(j) == Some(&b'$') {
            j += 1;
        }
        // Upper-case column letters, as files write references; a colour
        // (`rgb="FF536872"`) is not one.
        let letters = bytes[j..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase())
            .count();
        if !(1..=3).contains(&letters) || text[..start].ends_with("rgb=\"") {
            i += 1;
            continue;
        }
        j += letters;
        if bytes.get(j) == Some(&b'$') {
            j += 1;
        }
        let digits = bytes[j..].iter().take_while(|b| b.is_ascii_digit()).count();
        let end = j + digits;
        if digits == 0 || bytes.get(end).is_some_and(|&b| word(b) || b == b'(') {
            i += 1;
            continue;
        }
        let Ok(row) = text[j..end].parse::<u32>() else {
            i = end;
            continue;
        };
        // The end of a range `Sheet!A1:B7` is on the sheet of its start.
        let sheet = match found.last() {
            Some(previous)
                if start > 0 && previous.digits.end == start - 1 && bytes[start - 1] == b':' =>
            {
                previous.sheet
            }
            _ => sheet_before(text, start),
        };
        found.push(Reference {
            sheet,
            digits: j..end,
            row,
        });
        i = end;
    }
    found
}

/// The sheet name qualifying a reference that starts at `at` (`Name!` or
/// `'Na me'!` just before it).
fn sheet_before(text: &str, at: usize) -> Option<&str> {
    let head = text[..at].strip_suffix('!')?;
    if let Some(quoted) = head.strip_suffix('\'') {
        let open = quoted.rfind('\'')?;
        return Some(&quoted[open + 1..]);
    }
    let start = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |i| {
            i + head[i..].chars().next().map_or(1, char::len_utf8)
        });
    Some(&head[start..])
}

/// Where row `r` goes: `None` when it is the deleted row.
fn row_moved(r: u32, row: u32, op: Op) -> Option<u32> {
    match op {
        Op::Delete if r == row => None,
        Op::Delete if r > row => Some(r - 1),
        Op::Insert if r >= row => Some(r + 1),
        _ => Some(r),
    }
}

/// `fingerprint` as it reads after the rows moved, as far as a plain shift
/// tells: every reference to the sheet's rows, a drawing anchor's 0-based
/// `<row>`, a row feature's leading row number. A range with the deleted
/// row at its end shrinks; `None` when a single reference or a row feature
/// was on the deleted row.
fn shifted(
    fingerprint: &str,
    own: bool,
    row_feature: bool,
    target: &str,
    row: u32,
    op: Op,
) -> Option<String> {
    if row_feature {
        if !own {
            return Some(fingerprint.to_owned());
        }
        let (number, rest) = fingerprint.split_once(' ').unwrap_or((fingerprint, ""));
        let r: u32 = number.parse().ok()?;
        let moved = row_moved(r, row, op)?;
        return Some(if fingerprint.contains(' ') {
            format!("{moved} {rest}")
        } else {
            moved.to_string()
        });
    }
    let mut out = String::with_capacity(fingerprint.len());
    let mut copied = 0;
    let refs = references(fingerprint);
    for (k, reference) in refs.iter().enumerate() {
        let ours = match reference.sheet {
            Some(sheet) => sheet == target,
            None => own,
        };
        if !ours {
            continue;
        }
        // The end of a range `A1:B7` keeps the deleted row's place by
        // moving up; its start stays.
        let is_end = k > 0
            && fingerprint[..reference.digits.start]
                .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '$')
                .ends_with(':');
        let is_start = fingerprint[reference.digits.end..].starts_with(':');
        let r = reference.row;
        let moved = match (op, row_moved(r, row, op)) {
            (_, Some(moved)) => moved,
            (Op::Delete, None) if is_end => r - 1,
            (Op::Delete, None) if is_start => r,
            _ => return None,
        };
        out.push_str(&fingerprint[copied..reference.digits.start]);
        out.push_str(&moved.to_string());
        copied = reference.digits.end;
    }
    out.push_str(&fingerprint[copied..]);
    if own && out.contains("<row>\"") {
        out = anchors_moved(&out, row, op);
    }
    Some(out)
}

/// Drawing anchors' `<row>"N"</row>` (0-based) moved.
fn anchors_moved(text: &str, row: u32, op: Op) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<row>\"") {
        let (head, tail) = rest.split_at(at + "<row>\"".len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let moved = tail[..digits]
            .parse::<u32>()
            .ok()
            .and_then(|r| row_moved(r + 1, row, op))
            .map(|r| (r - 1).to_string());
        out.push_str(moved.as_deref().unwrap_or(&tail[..digits]));
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// `fingerprint` with every cell reference and `#REF!` as `@`, a range or
/// a list of them as one `@`, and every other number as `#`: what stays of
/// an element whose places moved.
fn shape(fingerprint: &str) -> String {
    let refs = references(fingerprint);
    let mut text = String::with_capacity(fingerprint.len());
    let mut copied = 0;
    for reference in &refs {
        let start = fingerprint[..reference.digits.start]
            .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '$')
            .len();
        text.push_str(&fingerprint[copied..start]);
        text.push('@');
        copied = reference.digits.end;
    }
    text.push_str(&fingerprint[copied..]);
    let mut text = text.replace("#REF!", "@");
    for pattern in ["@:@", "@ @"] {
        while text.contains(pattern) {
            text = text.replace(pattern, "@");
        }
    }
    // A sparkline group that lost the sparkline of a deleted row keeps its
    // shape.
    while let Some(at) = text.find("</sparkline><sparkline>") {
        let end = at + "</sparkline>".len();
        let open = text[..at].rfind("<sparkline>").unwrap_or(0);
        let one = text[open..end].to_owned();
        if text[end..].starts_with(&one) {
            text.replace_range(end..end + one.len(), "");
        } else {
            // Different neighbours: compared as they are.
            break;
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// Whether every cell an instance is placed on (its `sqref`, `ref` or
/// `<sqref>`, a note's cell, a row feature's row) lies on the deleted row.
fn on_row_only(fingerprint: &str, row_feature: bool, row: u32) -> bool {
    if row_feature {
        return fingerprint
            .split(' ')
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            == Some(row);
    }
    let mut places: Vec<&str> = Vec::new();
    for key in ["sqref=\"", "ref=\"", "<sqref>\""] {
        let mut rest = fingerprint;
        while let Some(at) = rest.find(key) {
            let tail = &rest[at + key.len()..];
            let end = tail.find('"').unwrap_or(tail.len());
            places.push(&tail[..end]);
            rest = &tail[end..];
        }
    }
    if places.is_empty() {
        // A note: `B7 "author" "text"`.
        if let Some(first) = fingerprint.split(' ').next()
            && references(first).len() == 1
        {
            places.push(first);
        }
    }
    !places.is_empty()
        && places.iter().all(|place| {
            let refs = references(place);
            !refs.is_empty() && refs.iter().all(|r| r.row == row)
        })
}

// ---------------------------------------------------------------------------
// The report

#[derive(Default)]
struct Report {
    files: usize,
    unreadable: Vec<(PathBuf, String)>,
    read_panics: Vec<(PathBuf, String)>,
    /// Files read with no usable sheet.
    no_usable: usize,
    /// Files with at least one operation.
    measured: usize,
    sheets: usize,
    ops: Vec<(PathBuf, Outcome)>,
}

/// The kind of a refusal, by its text.
fn refusal_kind(why: &str) -> &'static str {
    if why.contains("array formula") {
        "array formula cut"
    } else if why.contains("pivot table") {
        "pivot table cut"
    } else if why.contains("3D reference") {
        "3D reference spanning the sheet"
    } else if why.contains("cannot be rewritten") || why.contains("which a rewrite would remove") {
        "writer refusal"
    } else {
        "other"
    }
}

impl Report {
    fn add(&mut self, file: &Path, result: FileResult) {
        self.files += 1;
        match result {
            FileResult::Unreadable(why) => self.unreadable.push((file.into(), why)),
            FileResult::ReadPanic(why) => self.read_panics.push((file.into(), why)),
            FileResult::Ops(ops) if ops.is_empty() => self.no_usable += 1,
            FileResult::Ops(mut ops) => {
                self.measured += 1;
                ops.sort_by(|a, b| (a.row, &a.sheet, a.op).cmp(&(b.row, &b.sheet, b.op)));
                self.sheets += ops.iter().filter(|o| o.op == Op::Delete).count();
                self.ops.extend(ops.into_iter().map(|o| (file.into(), o)));
            }
        }
    }

    fn print(&self, show: usize) {
        println!("workbooks:                       {}", self.files);
        println!("unreadable:                      {}", self.unreadable.len());
        println!(
            "read panicked or timed out:      {}",
            self.read_panics.len()
        );
        println!("no usable sheet (header + 3 data rows): {}", self.no_usable);
        println!(
            "workbooks measured:              {} ({} usable sheets)",
            self.measured, self.sheets
        );
        for op in [Op::Delete, Op::Insert] {
            self.print_op(op, show);
        }
        for (file, why) in &self.read_panics {
            println!("read panic {}: {why}", file.display());
        }
        for (file, why) in self.unreadable.iter().take(show) {
            println!("unreadable {}: {why}", file.display());
        }
    }

    fn print_op(&self, op: Op, show: usize) {
        let ops: Vec<&(PathBuf, Outcome)> = self.ops.iter().filter(|(_, o)| o.op == op).collect();
        let count = |f: &dyn Fn(&Ending) -> bool| ops.iter().filter(|(_, o)| f(&o.ending)).count();
        let done = count(&|e| matches!(e, Ending::Done(_)));
        let refused = count(&|e| matches!(e, Ending::Refused(_)));
        let errors = count(&|e| matches!(e, Ending::Error(_)));
        let no_column = count(&|e| matches!(e, Ending::NoColumn));
        let made = ops.len() - no_column;
        println!("\n{} of the middle data row:", op.name());
        println!(
            "  operations:        {made} (+{no_column} sheets with no column to insert under)"
        );
        println!("  done:              {done}");
        println!(
            "  refused:           {refused} ({:.2}%; 1 in {})",
            100.0 * refused as f64 / made.max(1) as f64,
            made.checked_div(refused)
                .map_or_else(|| "∞".to_owned(), |n| n.to_string())
        );
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, o) in &ops {
            if let Ending::Refused(why) = &o.ending {
                *kinds.entry(refusal_kind(why)).or_default() += 1;
            }
        }
        for (kind, n) in &kinds {
            println!("    {n:>5}  {kind}");
        }
        println!("  errors:            {errors}");
        let mut features: BTreeMap<&str, [usize; 6]> = BTreeMap::new();
        let mut all_kept = 0;
        for (_, o) in &ops {
            if let Ending::Done(verdicts) = &o.ending {
                if verdicts.iter().all(|v| v.lost.is_empty()) {
                    all_kept += 1;
                }
                for v in verdicts {
                    let entry = features.entry(v.feature).or_default();
                    entry[0] += 1;
                    entry[1] += usize::from(!v.lost.is_empty());
                    entry[2] += v.moved;
                    entry[3] += v.changed.len();
                    entry[4] += v.gone_with_row;
                    entry[5] += v.lost.len();
                }
            }
        }
        println!("  done, every feature kept: {all_kept} of {done}");
        println!(
            "\n  {:<28} {:>6} {:>6} | instances: {:>7} {:>7} {:>7} {:>6}",
            "feature", "files", "losing", "moved", "changed", "w/ row", "lost"
        );
        for (feature, n) in &features {
            println!(
                "  {feature:<28} {:>6} {:>6} | {:>18} {:>7} {:>7} {:>6}",
                n[0], n[1], n[2], n[3], n[4], n[5]
            );
        }
        for (file, o) in &ops {
            let (what, why) = match &o.ending {
                Ending::Refused(why) => ("refused", why),
                Ending::Error(why) => ("error", why),
                _ => continue,
            };
            println!(
                "  {what} {} [{} row {}]: {why}",
                file.display(),
                o.sheet,
                o.row
            );
        }
        let mut shown: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (file, o) in &ops {
            let Ending::Done(verdicts) = &o.ending else {
                continue;
            };
            for v in verdicts {
                for (what, list) in [("lost", &v.lost), ("changed", &v.changed)] {
                    for example in list {
                        let n = shown.entry((v.feature, what)).or_default();
                        *n += 1;
                        if what == "lost" || *n <= show {
                            println!(
                                "  {what} {} {} [{} row {}]: {example}",
                                v.feature,
                                file.display(),
                                o.sheet,
                                o.row
                            );
                        }
                    }
                }
            }
        }
    }

    /// One line per operation.
    fn tsv(&self) -> String {
        let mut out = String::from("file\tsheet\trow\top\toutcome\tkind\tlost\tdetail\n");
        for (file, o) in &self.ops {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            let (outcome, kind, lost, detail) = match &o.ending {
                Ending::Done(verdicts) => {
                    let lost: Vec<&str> = verdicts
                        .iter()
                        .filter(|v| !v.lost.is_empty())
                        .map(|v| v.feature)
                        .collect();
                    ("done", "", lost.join(","), String::new())
                }
                Ending::Refused(why) => ("refused", refusal_kind(why), String::new(), why.clone()),
                Ending::Error(why) => ("error", "", String::new(), why.clone()),
                Ending::NoColumn => ("no column", "", String::new(), String::new()),
            };
            let _ = writeln!(
                out,
                "{name}\t{}\t{}\t{}\t{outcome}\t{kind}\t{lost}\t{}",
                crate::engine::tsv_field(&o.sheet),
                o.row,
                o.op.name(),
                crate::engine::tsv_field(&detail)
            );
        }
        out
    }
}
