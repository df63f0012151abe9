//! Values as people write them (contract §11.4): ISO 8601 dates and
//! date-times, times of day, and formulas given as `{"formula": "=…"}`.
//!
//! [`super::value`] keeps the rules of §2 and asks here for what v1.2 adds;
//! the filter language reads the same dates and times ([`super::filter`]).
//! Whether the formula engine can parse a formula is judged by `calc`,
//! against the workbook; what the text alone tells is judged here.

use serde_json::{Map, Value};

use super::formula::names_another_workbook;
use super::request::{InsertRows, UpdateRows};
use super::value::{Cell, DateKind, DateParse, Formula, days_in_month, serial_from_date};

/// The longest formula text a cell may hold, in characters (the xlsx
/// format's limit, without the `=`).
pub const MAX_FORMULA_CHARS: usize = 8_192;

/// The serial number of 10000-01-01: the first day a cell cannot hold.
const FIRST_SERIAL_PAST_9999: f64 = 2_958_466.0;

/// Reads an ISO 8601 date (`2024-06-23`) or date-time (`2024-06-23T10:00`,
/// `2024-06-23 10:00:00.250`, `2024-06-23T10:00:00+02:00`). A fraction of a
/// second is kept to the millisecond; a `Z` or an offset (`+02:00`,
/// `-0500`, `+02`) is converted to UTC, since a cell holds no time zone.
/// A date-time is [`DateKind::DateTime`] also at midnight, as the `/`
/// forms are.
pub fn parse_iso(s: &str) -> DateParse {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return DateParse::NotADate;
    }
    let (Some(year), Some(month), Some(day)) = (digits(b, 0, 4), digits(b, 5, 7), digits(b, 8, 10))
    else {
        return DateParse::NotADate;
    };
    let mut seconds = 0.0;
    let mut offset = 0.0;
    let kind = if b.len() == 10 {
        DateKind::Date
    } else {
        if b[10] != b'T' && b[10] != b' ' {
            return DateParse::NotADate;
        }
        let Some((time, rest)) = time_at(b, 11) else {
            return DateParse::NotADate;
        };
        let Some(zone) = zone_offset(&b[rest..]) else {
            return DateParse::NotADate;
        };
        match (time, zone) {
            (Err(rule), _) | (_, Err(rule)) => return DateParse::Invalid(rule),
            (Ok(time), Ok(zone)) => (seconds, offset) = (time, zone),
        }
        DateKind::DateTime
    };
    if month == 0 || month > 12 || day == 0 || day > days_in_month(year, month) {
        return DateParse::Invalid("is not a real date");
    }
    if !(1900..=9999).contains(&year) {
        return DateParse::Invalid(OUT_OF_RANGE);
    }
    let days = serial_from_date(year, month, day) as f64;
    let serial = days + (seconds - offset) / 86_400.0;
    if !(1.0..FIRST_SERIAL_PAST_9999).contains(&serial) {
        return DateParse::Invalid(OUT_OF_RANGE);
    }
    DateParse::Valid(serial, kind)
}

const OUT_OF_RANGE: &str = "is a date outside 1900/01/01 to 9999/12/31, which a cell cannot hold";

/// Reads a time of day, `HH:MM` or `HH:MM:SS` (00:00 to 23:59:59), as the
/// fraction of a day a time cell holds ([`DateKind::TimeOfDay`]).
pub fn parse_time(s: &str) -> DateParse {
    let b = s.as_bytes();
    if !matches!(b.len(), 5 | 8) {
        return DateParse::NotADate;
    }
    // A bare time outside 00:00–23:59:59 (`24:00`, `25:00`) is text
    // (§11.4: everything else is text); only inside a date-time is an
    // impossible time refused.
    match time_at(b, 0) {
        Some((Ok(seconds), end)) if end == b.len() => {
            DateParse::Valid(seconds / 86_400.0, DateKind::TimeOfDay)
        }
        _ => DateParse::NotADate,
    }
}

/// The number of the ASCII digits `b[from..to]`, if they are all digits.
fn digits(b: &[u8], from: usize, to: usize) -> Option<u32> {
    let part = b.get(from..to)?;
    if !part.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(part.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0')))
}

/// The time of day written from `b[at]`: `HH:MM`, then optionally `:SS`
/// and a fraction of a second (`.5`, `.250`), as seconds rounded to the
/// millisecond, and where it ends. `None` when it has no time's shape;
/// `Some((Err(rule), _))` when it has one but is no real time.
fn time_at(b: &[u8], at: usize) -> Option<(Result<f64, &'static str>, usize)> {
    let hour = digits(b, at, at + 2)?;
    if b.get(at + 2) != Some(&b':') {
        return None;
    }
    let minute = digits(b, at + 3, at + 5)?;
    let mut end = at + 5;
    let mut second = 0;
    let mut millis = 0.0;
    if b.get(end) == Some(&b':') {
        second = digits(b, end + 1, end + 3)?;
        end += 3;
        if b.get(end) == Some(&b'.') {
            let count = b[end + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if count == 0 || count > 9 {
                return None;
            }
            let fraction = std::str::from_utf8(&b[end..end + 1 + count]).ok()?;
            millis = (fraction.parse::<f64>().ok()? * 1000.0).round();
            end += 1 + count;
        }
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Some((Err("is not a real time of day"), end));
    }
    let seconds = f64::from(hour * 3600 + minute * 60 + second) + millis / 1000.0;
    Some((Ok(seconds), end))
}

/// The offset from UTC in seconds that `zone` gives (empty: none, `Z`,
/// `+HH:MM`, `+HHMM`, `+HH`, or with `-`). `None` when it is no zone.
fn zone_offset(zone: &[u8]) -> Option<Result<f64, &'static str>> {
    let sign = match zone.first() {
        None => return Some(Ok(0.0)),
        Some(b'Z' | b'z') if zone.len() == 1 => return Some(Ok(0.0)),
        Some(b'+') => 1.0,
        Some(b'-') => -1.0,
        Some(_) => return None,
    };
    let hours = digits(zone, 1, 3)?;
    let minutes = match &zone[3..] {
        [] => 0,
        [b':', _, _] => digits(zone, 4, 6)?,
        [_, _] => digits(zone, 3, 5)?,
        _ => return None,
    };
    if hours > 23 || minutes > 59 {
        return Some(Err("has an offset from UTC that is no real one"));
    }
    Some(Ok(sign * f64::from(hours * 3600 + minutes * 60)))
}

/// A formula cell from `{"formula": "=B2*C2"}` (the `=` may be left out);
/// `Err` holds the rule broken. Its result is unknown until the engine
/// computes it, which it does before the write is answered. A formula
/// naming another workbook is refused: sheetd cannot read one.
pub fn formula_from_json(object: &Map<String, Value>) -> Result<Cell, String> {
    let Some(formula) = object.get("formula") else {
        // As §2 has it: only a formula object is a value.
        return Err("must not be an object or array".into());
    };
    if let Some(other) = object.keys().find(|key| *key != "formula") {
        return Err(format!(
            "is a formula object, which holds \"formula\" and nothing else (not {other:?})"
        ));
    }
    let Value::String(text) = formula else {
        return Err("formula must be the formula's text (\"=B2*C2\")".into());
    };
    let expr = text.strip_prefix('=').unwrap_or(text).trim();
    if expr.is_empty() {
        return Err("formula is empty".into());
    }
    if expr.chars().count() > MAX_FORMULA_CHARS {
        return Err(format!(
            "formula is longer than {MAX_FORMULA_CHARS} characters (the xlsx limit of a formula)"
        ));
    }
    if names_another_workbook(expr) {
        return Err(
            "formula refers to another workbook; a formula written through sheetd reads this workbook only"
                .into(),
        );
    }
    Ok(Cell::Formula(Box::new(Formula::new(expr, Cell::Empty))))
}

/// The formula texts of cells, each with the request field it came from.
fn formulas_of<'a>(
    field: impl Fn(&str) -> String + 'a,
    cells: &'a [(String, Cell)],
) -> impl Iterator<Item = (String, &'a str)> + 'a {
    cells.iter().filter_map(move |(column, cell)| match cell {
        Cell::Formula(formula) => Some((field(column), formula.expr.as_str())),
        _ => None,
    })
}

impl InsertRows {
    /// The formulas the rows write, by field (`data[2].total`), for the
    /// engine to check against the workbook (`calc::formula_problems`).
    pub fn formulas(&self) -> Vec<(String, &str)> {
        self.rows
            .iter()
            .flat_map(|row| {
                let index = row.index;
                formulas_of(move |column| format!("data[{index}].{column}"), &row.cells)
            })
            .collect()
    }
}

impl UpdateRows {
    /// The formulas the update writes, by field (`data.total`, or
    /// `data[1].total` for `type: rows`).
    pub fn formulas(&self) -> Vec<(String, &str)> {
        let mut found: Vec<(String, &str)> =
            formulas_of(|column| format!("data.{column}"), &self.data).collect();
        for row in &self.rows {
            let field = row.field.as_str();
            found.extend(formulas_of(
                move |column| format!("{field}.{column}"),
                &row.cells,
            ));
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(serial: f64) -> DateParse {
        DateParse::Valid(serial, DateKind::DateTime)
    }

    #[test]
    fn iso_dates_and_date_times_read_as_the_slash_forms_do() {
        assert_eq!(
            parse_iso("2024-01-15"),
            DateParse::Valid(45306.0, DateKind::Date)
        );
        assert_eq!(parse_iso("2024-01-15T12:00"), at(45306.5));
        assert_eq!(parse_iso("2024-01-15 12:00:00"), at(45306.5));
        assert_eq!(parse_iso("2024-01-15T00:00:00"), at(45306.0));
        assert_eq!(
            parse_iso("2024-01-15T12:00:00.250"),
            at(45306.5 + 0.25 / 86_400.0)
        );
        // Kept to the millisecond.
        assert_eq!(
            parse_iso("2024-01-15T12:00:00.0004"),
            at(45306.5),
            "below a millisecond"
        );
    }

    #[test]
    fn zones_are_converted_to_utc() {
        assert_eq!(parse_iso("2024-01-15T12:00Z"), at(45306.5));
        assert_eq!(
            parse_iso("2024-01-15T12:00:00+02:00"),
            at(45306.5 - 2.0 / 24.0)
        );
        assert_eq!(
            parse_iso("2024-01-15T12:00:00-0500"),
            at(45306.5 + 5.0 / 24.0)
        );
        assert_eq!(parse_iso("2024-01-15T12:00+01"), at(45306.5 - 1.0 / 24.0));
        // Across midnight, into the day before.
        assert_eq!(
            parse_iso("2024-01-15T01:00:00+02:00"),
            at(45306.0 - 1.0 / 24.0)
        );
    }

    #[test]
    fn impossible_iso_dates_and_times_are_rejected() {
        let rule = |s| match parse_iso(s) {
            DateParse::Invalid(rule) => rule,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(rule("2023-02-30"), "is not a real date");
        assert_eq!(rule("2024-13-01T10:00"), "is not a real date");
        assert_eq!(rule("2024-01-15T24:00"), "is not a real time of day");
        assert_eq!(
            rule("2024-01-15T10:00+25:00"),
            "has an offset from UTC that is no real one"
        );
        assert!(rule("1899-12-31").contains("outside"));
        assert!(rule("1900-01-01T00:30+01:00").contains("outside"));
    }

    #[test]
    fn other_shapes_are_text() {
        for text in [
            "2024-1-15",
            "2024-01-15T",
            "2024-01-15T10",
            "2024-01-15X10:00",
            "2024-01-15T10:00 UTC",
            "2024-01-15T10:00:00.",
            "2024-01-15Z",
            "24-01-15",
            "2024/01/15",
            "2024-01-15T10:00+2",
        ] {
            assert_eq!(parse_iso(text), DateParse::NotADate, "{text}");
        }
    }

    #[test]
    fn times_of_day_are_fractions_of_a_day() {
        assert_eq!(
            parse_time("12:30"),
            DateParse::Valid(0.5208333333333334, DateKind::TimeOfDay)
        );
        assert_eq!(
            parse_time("00:00"),
            DateParse::Valid(0.0, DateKind::TimeOfDay)
        );
        assert_eq!(
            parse_time("23:59:59"),
            DateParse::Valid(86_399.0 / 86_400.0, DateKind::TimeOfDay)
        );
        for text in [
            "24:00",
            "10:60:00",
            "23:59:60",
            "9:30",
            "12:3",
            "12:30:5",
            "12-30",
            "12:30:00.5",
            "ab:cd",
        ] {
            assert_eq!(parse_time(text), DateParse::NotADate, "{text}");
        }
    }

    fn formula(value: Value) -> Result<Cell, String> {
        match value {
            Value::Object(map) => formula_from_json(&map),
            _ => unreachable!(),
        }
    }

    #[test]
    fn formula_objects_make_formula_cells() {
        let cell = formula(json!({"formula": "=B2*C2"})).unwrap();
        assert_eq!(
            cell,
            Cell::Formula(Box::new(Formula::new("B2*C2", Cell::Empty)))
        );
        assert_eq!(
            formula(json!({"formula": "SUM(A1:A3)"})).unwrap(),
            Cell::Formula(Box::new(Formula::new("SUM(A1:A3)", Cell::Empty)))
        );
    }

    #[test]
    fn bad_formula_objects_are_refused_with_the_reason() {
        assert_eq!(
            formula(json!({"formula": "="})).unwrap_err(),
            "formula is empty"
        );
        assert!(formula(json!({"formula": 3})).unwrap_err().contains("text"));
        assert!(
            formula(json!({"formula": "=1", "x": 1}))
                .unwrap_err()
                .contains("nothing else")
        );
        assert_eq!(
            formula(json!({"a": 1})).unwrap_err(),
            "must not be an object or array"
        );
        for external in [
            "=[1]Sheet1!A1",
            "='[book.xlsx]Data'!A1*2",
            "=SUM([2]Data!A1:A3)",
        ] {
            assert!(
                formula(json!({ "formula": external }))
                    .unwrap_err()
                    .contains("another workbook"),
                "{external}"
            );
        }
        let long = format!("={}", "1+".repeat(MAX_FORMULA_CHARS / 2) + "1");
        assert!(
            formula(json!({ "formula": long }))
                .unwrap_err()
                .contains("8192")
        );
    }
}
