//! Cell values and the rules between JSON and cells (contract §2).
//!
//! Dates are kept as Excel serial numbers of the 1900 date system (the reader
//! converts 1904 workbooks on the way in), so that comparing two dates is
//! comparing two numbers and the writer can store them unchanged.

use std::borrow::Cow;

use serde_json::Value;

use super::written;

/// The longest text a cell may hold, in UTF-16 code units (the xlsx format's limit).
pub const MAX_TEXT_CHARS: usize = 32_767;
/// The number format of a date-time cell (contract §2). A date cell of this
/// format reads back as a date-time also at midnight (§9).
pub const DATE_TIME_CODE: &str = "yyyy/mm/dd hh:mm:ss";
/// The largest integer magnitude a numeric cell (an f64) holds exactly.
pub const MAX_EXACT_INTEGER: u64 = 1 << 53;

/// One cell of a sheet.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Cell {
    #[default]
    Empty,
    Number(f64),
    Text(String),
    Bool(bool),
    /// A date, date-time or time of day, as an Excel serial number; read
    /// back as a date when its time of day is zero (contract §2).
    DateTime(f64),
    /// A date with a time of day that is shown with its time, also at
    /// midnight: a date-time sent through the API, or a cell whose format
    /// shows both (contract §9: a date-time reads back as a date-time).
    Timestamp(f64),
    /// A duration (`[h]:mm:ss`), as a number of days.
    Duration(f64),
    /// An error value such as `#DIV/0!`, by its text.
    Error(String),
    /// A formula with the result cached in the file.
    Formula(Box<Formula>),
}

/// A formula (without the leading `=`) and its cached result.
#[derive(Debug, Clone, PartialEq)]
pub struct Formula {
    pub expr: String,
    pub cached: Cell,
    /// Whether `cached` is what the formula computes now (see `crate::calc`).
    pub freshness: Freshness,
}

/// How a formula's cached result relates to its inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Freshness {
    /// Recomputed by sheetd's formula engine on every write (and, until
    /// the first, as the file had it).
    #[default]
    Computed,
    /// The engine does not compute it as the file's producer did (an
    /// unknown function, an external reference, a disagreement): its cached
    /// result is kept, and the engine uses that value, while its inputs stay
    /// as they were.
    Kept,
    /// An input of a kept formula changed, or the formula depends on one
    /// that did: its result is unknown until a spreadsheet app recalculates
    /// the file. It has no cached result, reads as `null`, and is written
    /// without a value.
    Stale,
}

impl Formula {
    /// A formula as a file holds it: computed, with its cached result.
    pub fn new(expr: impl Into<String>, cached: Cell) -> Formula {
        Formula {
            expr: expr.into(),
            cached,
            freshness: Freshness::Computed,
        }
    }
}

/// The kind of a date-like cell, decided by its serial number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateKind {
    Date,
    DateTime,
    TimeOfDay,
}

impl Cell {
    /// The value a reader sees: the cached result for a formula.
    pub fn value(&self) -> &Cell {
        match self {
            Cell::Formula(formula) => &formula.cached,
            other => other,
        }
    }

    /// True when the cell holds nothing at all (no value, no formula).
    pub fn is_blank(&self) -> bool {
        match self {
            Cell::Empty => true,
            Cell::Text(text) => text.is_empty(),
            _ => false,
        }
    }

    /// True when the value a reader sees is empty.
    pub fn is_empty_value(&self) -> bool {
        self.value().is_blank()
    }

    /// Turns a JSON value from a request into a cell; `Err` holds the rule broken.
    pub fn from_json(value: &Value) -> Result<Cell, String> {
        match value {
            Value::Null => Ok(Cell::Empty),
            Value::Bool(b) => Ok(Cell::Bool(*b)),
            Value::Number(n) => number_from_json(n),
            Value::String(s) => text_from_json(s),
            Value::Object(object) => super::written::formula_from_json(object),
            Value::Array(_) => Err("must not be an object or array".into()),
        }
    }

    /// The JSON a reader gets for this cell.
    pub fn to_json(&self) -> Value {
        match self.value() {
            Cell::Empty => Value::Null,
            Cell::Number(n) => number_to_json(*n),
            Cell::Text(text) if text.is_empty() => Value::Null,
            Cell::Text(text) | Cell::Error(text) => Value::String(text.clone()),
            Cell::Bool(b) => Value::Bool(*b),
            other => Value::String(other.text_form().into_owned()),
        }
    }

    /// The cell's value as text: what text comparisons and header names use.
    pub fn text_form(&self) -> Cow<'_, str> {
        match self.value() {
            Cell::Empty => Cow::Borrowed(""),
            Cell::Number(n) => Cow::Owned(format_number(*n)),
            Cell::Text(text) | Cell::Error(text) => Cow::Borrowed(text),
            Cell::Bool(true) => Cow::Borrowed("true"),
            Cell::Bool(false) => Cow::Borrowed("false"),
            Cell::DateTime(serial) => Cow::Owned(format_date_time(*serial)),
            Cell::Timestamp(serial) => Cow::Owned(format_timestamp(*serial)),
            Cell::Duration(days) => Cow::Owned(format_duration(*days)),
            Cell::Formula(_) => unreachable!("value() never returns a formula"),
        }
    }
}

fn number_from_json(n: &serde_json::Number) -> Result<Cell, String> {
    // The number keeps its literal (serde_json's `arbitrary_precision`), so
    // an integer too large for u64 is still told from a float: `1e30` is a
    // float and kept, `1000000000000000000000000000000` is refused (§9).
    let literal = n.to_string();
    let is_integer = !literal.contains(['.', 'e', 'E']);
    let float = n.as_f64().filter(|f| f.is_finite());
    if is_integer && !integer_fits(&literal) {
        return Err("is an integer beyond 2^53 (a cell cannot hold it exactly)".into());
    }
    float
        .map(Cell::Number)
        .ok_or_else(|| "is not a number a cell can hold".into())
}

/// Whether an integer literal's magnitude is at most 2^53.
fn integer_fits(literal: &str) -> bool {
    let digits = literal.trim_start_matches('-');
    digits.len() <= 16 && digits.parse::<u64>().is_ok_and(|n| n <= MAX_EXACT_INTEGER)
}

fn text_from_json(s: &str) -> Result<Cell, String> {
    if s.is_empty() {
        return Ok(Cell::Empty);
    }
    // The `/` forms of §2, then ISO 8601 and times of day (§11.4).
    let parsed = match parse_date(s, DateSyntax::Value) {
        DateParse::NotADate => match written::parse_iso(s) {
            DateParse::NotADate => written::parse_time(s),
            iso => iso,
        },
        slash => slash,
    };
    match parsed {
        DateParse::NotADate => {}
        DateParse::Valid(serial, DateKind::DateTime) => return Ok(Cell::Timestamp(serial)),
        DateParse::Valid(serial, _) => return Ok(Cell::DateTime(serial)),
        DateParse::Invalid(rule) => return Err(rule.into()),
    }
    if !fits_in_a_cell(s) {
        return Err(too_long());
    }
    Ok(Cell::Text(s.to_owned()))
}

/// Whether `s` fits the xlsx limit of a cell's text, which counts UTF-16
/// code units (an emoji is two), as the writer does.
pub fn fits_in_a_cell(s: &str) -> bool {
    s.len() <= MAX_TEXT_CHARS || s.encode_utf16().count() <= MAX_TEXT_CHARS
}

/// The rule a text over [`MAX_TEXT_CHARS`] breaks.
pub fn too_long() -> String {
    format!("is longer than {MAX_TEXT_CHARS} UTF-16 code units (the xlsx limit of a cell)")
}

fn number_to_json(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() <= MAX_EXACT_INTEGER as f64 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// `30` for 30.0, `2.5` for 2.5: integral numbers without a fraction.
pub fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() <= MAX_EXACT_INTEGER as f64 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

// ---------------------------------------------------------------------------
// Dates

/// Which spellings of a date a parser accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateSyntax {
    /// Request values: `YYYY/MM/DD`, optionally ` HH:MM` or ` HH:MM:SS`.
    Value,
    /// Filter values: the above, and ISO `YYYY-MM-DD` with ` ` or `T` before the time.
    Filter,
}

/// What a string turned out to be when read as a date.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DateParse {
    /// It does not have a date's shape: it is just text.
    NotADate,
    /// A real date (and time), as a serial number, and whether a time was given.
    Valid(f64, DateKind),
    /// It has a date's shape but is no real date; the rule it breaks.
    Invalid(&'static str),
}

/// Reads `s` as a date of the given syntax.
pub fn parse_date(s: &str, syntax: DateSyntax) -> DateParse {
    let b = s.as_bytes();
    if !matches!(b.len(), 10 | 16 | 19) {
        return DateParse::NotADate;
    }
    let number = |from: usize, to: usize| -> Option<u32> {
        let part = &b[from..to];
        if part.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(part).ok()?.parse().ok()
        } else {
            None
        }
    };
    let date_sep = b[4];
    let date_sep_ok = match syntax {
        DateSyntax::Value => date_sep == b'/',
        DateSyntax::Filter => date_sep == b'/' || date_sep == b'-',
    };
    if !date_sep_ok || b[7] != date_sep {
        return DateParse::NotADate;
    }
    let (Some(year), Some(month), Some(day)) = (number(0, 4), number(5, 7), number(8, 10)) else {
        return DateParse::NotADate;
    };
    let (mut hour, mut minute, mut second) = (0, 0, 0);
    if b.len() > 10 {
        let time_sep_ok = b[10] == b' ' || (syntax == DateSyntax::Filter && b[10] == b'T');
        let (Some(h), Some(m)) = (number(11, 13), number(14, 16)) else {
            return DateParse::NotADate;
        };
        if !time_sep_ok || b[13] != b':' {
            return DateParse::NotADate;
        }
        (hour, minute) = (h, m);
        if b.len() == 19 {
            let Some(s) = number(17, 19) else {
                return DateParse::NotADate;
            };
            if b[16] != b':' {
                return DateParse::NotADate;
            }
            second = s;
        }
    }
    if month == 0 || month > 12 || day == 0 || day > days_in_month(year, month) {
        return DateParse::Invalid("is not a real date");
    }
    if hour > 23 || minute > 59 || second > 59 {
        return DateParse::Invalid("is not a real time of day");
    }
    if !(1900..=9999).contains(&year) {
        return DateParse::Invalid(
            "is a date outside 1900/01/01 to 9999/12/31, which a cell cannot hold",
        );
    }
    let days = serial_from_date(year, month, day) as f64;
    let seconds = f64::from(hour * 3600 + minute * 60 + second);
    let kind = if b.len() > 10 {
        DateKind::DateTime
    } else {
        DateKind::Date
    };
    DateParse::Valid(days + seconds / 86_400.0, kind)
}

fn is_leap_year(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

pub(super) fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (inverse of `days_from_civil`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Serial 0 of the 1900 date system is 1899-12-30 for every date from
/// 1900-03-01 on; before that Excel counts a 29 February 1900 that never was.
const UNIX_DAYS_OF_SERIAL_ZERO: i64 = -25_569;

pub(super) fn serial_from_date(year: u32, month: u32, day: u32) -> i64 {
    let n = days_from_civil(i64::from(year), month, day) - UNIX_DAYS_OF_SERIAL_ZERO;
    if n < 61 { n - 1 } else { n }
}

fn date_from_serial(serial: i64) -> (i64, u32, u32) {
    match serial {
        60 => (1900, 2, 29),
        s if s < 60 => civil_from_days(s + 1 + UNIX_DAYS_OF_SERIAL_ZERO),
        s => civil_from_days(s + UNIX_DAYS_OF_SERIAL_ZERO),
    }
}

/// Splits a serial into whole days and seconds of the day, rounded to the second.
fn split_serial(serial: f64) -> (i64, i64) {
    let seconds = (serial * 86_400.0).round() as i64;
    (seconds.div_euclid(86_400), seconds.rem_euclid(86_400))
}

/// The kind a date cell shows: a time of day below serial 1, a date when the
/// time is midnight, else a date and time.
/// The 1900 date system's first serial after the 29 February 1900 it
/// counts (which never was; Excel kept Lotus 1-2-3's error): before it,
/// a serial is a day more than the days since 1899/12/31.
pub const FIRST_SERIAL_AFTER_LEAP_DAY: f64 = 61.0;

pub fn date_kind(serial: f64) -> DateKind {
    match split_serial(serial) {
        (0, _) => DateKind::TimeOfDay,
        (_, 0) => DateKind::Date,
        _ => DateKind::DateTime,
    }
}

/// `YYYY/MM/DD`, `YYYY/MM/DD HH:MM:SS` or `HH:MM:SS`, as contract §2 says.
pub fn format_date_time(serial: f64) -> String {
    let (days, seconds) = split_serial(serial);
    let time = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    );
    if days <= 0 {
        return time;
    }
    let (y, m, d) = date_from_serial(days);
    if seconds == 0 {
        format!("{y:04}/{m:02}/{d:02}")
    } else {
        format!("{y:04}/{m:02}/{d:02} {time}")
    }
}

/// `YYYY/MM/DD HH:MM:SS`, also at midnight.
pub fn format_timestamp(serial: f64) -> String {
    let (days, seconds) = split_serial(serial);
    let (y, m, d) = date_from_serial(days.max(0));
    format!(
        "{y:04}/{m:02}/{d:02} {:02}:{:02}:{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

/// `HH:MM:SS` with as many hours as it takes (`30:15:00`).
pub fn format_duration(days: f64) -> String {
    let seconds = (days * 86_400.0).round() as i64;
    let sign = if seconds < 0 { "-" } else { "" };
    let s = seconds.abs();
    format!("{sign}{:02}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cell(v: Value) -> Result<Cell, String> {
        Cell::from_json(&v)
    }

    #[test]
    fn date_strings_become_date_cells() {
        assert_eq!(cell(json!("2024/01/15")), Ok(Cell::DateTime(45306.0)));
        assert_eq!(cell(json!("1900/01/01")), Ok(Cell::DateTime(1.0)));
        assert_eq!(cell(json!("1900/03/01")), Ok(Cell::DateTime(61.0)));
        assert_eq!(
            cell(json!("2024/01/15 12:00")),
            Ok(Cell::Timestamp(45306.5))
        );
        assert_eq!(
            cell(json!("2024/01/15 00:00")),
            Ok(Cell::Timestamp(45306.0))
        );
    }

    #[test]
    fn impossible_dates_and_times_are_rejected() {
        assert_eq!(cell(json!("2023/02/30")), Err("is not a real date".into()));
        assert_eq!(cell(json!("2024/13/01")), Err("is not a real date".into()));
        assert_eq!(
            cell(json!("2024/01/15 25:00")),
            Err("is not a real time of day".into())
        );
        assert!(cell(json!("1899/12/31")).is_err());
    }

    #[test]
    fn other_strings_stay_text_verbatim() {
        assert_eq!(cell(json!("=1+1")), Ok(Cell::Text("=1+1".into())));
        assert_eq!(
            cell(json!("2024-01-15 noon")),
            Ok(Cell::Text("2024-01-15 noon".into()))
        );
        assert_eq!(cell(json!("2024/1/5")), Ok(Cell::Text("2024/1/5".into())));
        assert_eq!(cell(json!("")), Ok(Cell::Empty));
    }

    #[test]
    fn integers_beyond_two_to_the_53_are_rejected() {
        assert_eq!(
            cell(json!(9_007_199_254_740_992_u64)),
            Ok(Cell::Number(9_007_199_254_740_992.0))
        );
        assert!(cell(json!(9_007_199_254_740_993_u64)).is_err());
        assert!(cell(json!(-9_007_199_254_740_993_i64)).is_err());
    }

    #[test]
    fn text_longer_than_the_cell_limit_is_rejected() {
        assert!(cell(json!("x".repeat(MAX_TEXT_CHARS))).is_ok());
        assert_eq!(
            cell(json!("x".repeat(MAX_TEXT_CHARS + 1))),
            Err("is longer than 32767 UTF-16 code units (the xlsx limit of a cell)".into())
        );
        // An emoji is two UTF-16 code units: the writer's count, not chars.
        let half = MAX_TEXT_CHARS / 2;
        assert!(cell(json!("😀".repeat(half))).is_ok());
        assert!(cell(json!("😀".repeat(half + 1))).is_err());
    }

    fn parsed(literal: &str) -> Result<Cell, String> {
        cell(serde_json::from_str(literal).unwrap())
    }

    #[test]
    fn integer_literals_beyond_two_to_the_53_are_rejected_however_large() {
        let rule = Err("is an integer beyond 2^53 (a cell cannot hold it exactly)".to_string());
        assert_eq!(parsed("18446744073709551616"), rule);
        assert_eq!(parsed("1000000000000000000000000000000"), rule);
        assert_eq!(parsed("-9007199254740993"), rule);
        assert_eq!(
            parsed("9007199254740992"),
            Ok(Cell::Number(9_007_199_254_740_992.0))
        );
        // Floats are not integer literals: stored as the nearest double.
        assert_eq!(parsed("1e30"), Ok(Cell::Number(1e30)));
        assert_eq!(parsed("30.0"), Ok(Cell::Number(30.0)));
        assert_eq!(parsed("-0"), Ok(Cell::Number(0.0)));
    }

    #[test]
    fn objects_and_arrays_are_rejected() {
        assert!(cell(json!({"a": 1})).is_err());
        assert!(cell(json!([1])).is_err());
    }

    #[test]
    fn cells_render_as_contract_json() {
        assert_eq!(Cell::Number(30.0).to_json(), json!(30));
        assert_eq!(Cell::Number(2.5).to_json(), json!(2.5));
        assert_eq!(Cell::DateTime(45306.0).to_json(), json!("2024/01/15"));
        assert_eq!(
            Cell::DateTime(45306.5).to_json(),
            json!("2024/01/15 12:00:00")
        );
        assert_eq!(Cell::DateTime(0.5208333333).to_json(), json!("12:30:00"));
        assert_eq!(
            Cell::Timestamp(45306.0).to_json(),
            json!("2024/01/15 00:00:00")
        );
        assert_eq!(Cell::Duration(1.2604166667).to_json(), json!("30:15:00"));
        assert_eq!(Cell::DateTime(60.0).to_json(), json!("1900/02/29"));
        assert_eq!(Cell::DateTime(59.0).to_json(), json!("1900/02/28"));
        assert_eq!(Cell::Error("#DIV/0!".into()).to_json(), json!("#DIV/0!"));
        let formula = Cell::Formula(Box::new(Formula::new("1+1", Cell::Number(2.0))));
        assert_eq!(formula.to_json(), json!(2));
    }

    #[test]
    fn serials_round_trip_through_dates() {
        for serial in [1, 59, 61, 365, 45306, 2_958_465] {
            let (y, m, d) = date_from_serial(serial);
            assert_eq!(serial_from_date(y as u32, m, d), serial, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn filter_syntax_accepts_iso_dates() {
        assert_eq!(
            parse_date("2024-01-15", DateSyntax::Filter),
            DateParse::Valid(45306.0, DateKind::Date)
        );
        assert_eq!(
            parse_date("2024-01-15T12:00", DateSyntax::Filter),
            DateParse::Valid(45306.5, DateKind::DateTime)
        );
        assert_eq!(
            parse_date("2024-01-15", DateSyntax::Value),
            DateParse::NotADate
        );
    }
}
