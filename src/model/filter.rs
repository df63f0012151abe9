//! The filter language: `<column>:<operator>:<value>` (contract §3).
//!
//! Parsing turns the text into a [`FilterExpr`] without looking at any sheet;
//! [`FilterExpr::bind`] then resolves the column against a header, and the
//! resulting [`BoundFilter`] decides whether a row matches.
//!
//! What one request's filters may cost is bounded here (issue 15): the
//! budgets below are checked while parsing, and an `in` list becomes sets
//! ([`InList`]) so that a row costs one lookup, not one comparison per value.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::header::Header;
use super::problems::Problems;
use super::value::{Cell, DateKind, DateParse, DateSyntax, date_kind, parse_date};
use super::written::{parse_iso, parse_time};

/// Every operator, as the error message lists them.
const OPERATORS: &str = "eq|neq|gt|gte|lt|lte|like|ilike|in|is";

// ---------------------------------------------------------------------------
// Budgets: what one request's filters may hold. Beyond any of them the
// request is a 400 naming the field (`filter`, `filter[3]`) and the limit.
// They bound the work a filter asks for before a row is read: parsing is
// linear in the expression's bytes, matching costs one lookup per row and
// expression, and a request's expressions are matched while it holds the
// spreadsheet's write turn.

/// The most filter expressions one request may give: repeated `filter`
/// query parameters, or the items of a body's `filter` array. Real queries
/// use a handful; each one is checked on every row.
pub const MAX_FILTERS: usize = 100;
/// The most values one `in` list may hold (`status:in:a,b,…`). An `in`
/// list is matched through sets, so its size costs memory and parse time
/// (about 50 ms for 100,000 values), not time per row.
pub const MAX_IN_VALUES: usize = 100_000;
/// The most bytes (UTF-8) one filter expression may have: 1 MiB, room for
/// 100,000 `in` values of up to 9 characters. A query string cannot come
/// near it (the HTTP layer refuses request lines over 64 KiB); a JSON body
/// can.
pub const MAX_FILTER_BYTES: usize = 1 << 20;

/// `Err` with the rule broken when `count` expressions are more than
/// [`MAX_FILTERS`]; reported under `filter`.
pub fn check_filter_count(count: usize) -> Result<(), String> {
    if count > MAX_FILTERS {
        Err(format!(
            "has {count} expressions; one request may have at most {MAX_FILTERS}"
        ))
    } else {
        Ok(())
    }
}

/// A parsed filter expression, not yet tied to a sheet.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterExpr {
    /// Where the expression came from in the request (`filter`, `filter[2]`).
    pub field: String,
    pub column: String,
    pub op: Op,
}

/// An operator with its parsed operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Eq(Operand),
    Neq(Operand),
    Gt(Operand),
    Gte(Operand),
    Lt(Operand),
    Lte(Operand),
    Like(Pattern),
    ILike(Pattern),
    In(InList),
    IsNull,
    IsNotNull,
    IsTrue,
    IsFalse,
}

/// A filter value, with the typed readings a cell may compare against.
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    text: String,
    number: Option<f64>,
    date: Option<f64>,
    /// A time of day (`12:30`, `12:30:15`) as a fraction of a day (§11.4).
    time: Option<f64>,
    boolean: Option<bool>,
}

impl Operand {
    fn new(text: &str) -> Operand {
        let number = text.parse::<f64>().ok().filter(|n| n.is_finite());
        let date = match (parse_date(text, DateSyntax::Filter), parse_iso(text)) {
            (DateParse::Valid(serial, _), _) | (_, DateParse::Valid(serial, _)) => Some(serial),
            _ => None,
        };
        let time = match parse_time(text) {
            DateParse::Valid(serial, _) => Some(serial),
            _ => None,
        };
        let boolean = match text.to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        Operand {
            text: text.to_owned(),
            number,
            date,
            time,
            boolean,
        }
    }

    /// Whether the value reads as text only: no number, date or time
    /// (what a text cell is ordered against, §11.4).
    fn is_text(&self) -> bool {
        self.number.is_none() && self.date.is_none() && self.time.is_none()
    }
}

/// Whether a cell holds a time of day alone (a date-like cell below
/// serial 1): it compares with times, as well as dates.
fn is_time_of_day(cell: &Cell) -> bool {
    matches!(cell, Cell::DateTime(serial) if date_kind(*serial) == DateKind::TimeOfDay)
}

/// An `in` list, held as the readings `equals` compares a cell with, so
/// that a cell is looked up once instead of compared with every value. It
/// matches exactly the cells that equal at least one of its values (the
/// tests compare the two on generated cells and values):
///
/// - an empty cell equals only the empty value;
/// - a number cell equals a value that reads as the same number (`-0`
///   equals `0`), or a value that is no number and has the cell's text;
/// - a date cell likewise with dates, to the second;
/// - a boolean cell likewise with `true`/`false` in any case;
/// - any other cell (text, error, duration) equals a value with its text.
#[derive(Debug, Clone, PartialEq)]
pub struct InList {
    /// The bits of each value that reads as a number, `-0` as `0`.
    numbers: HashSet<u64>,
    /// Each value that reads as a date, in whole seconds (`to_seconds`).
    seconds: HashSet<i64>,
    /// Each value that reads as a time of day, likewise.
    times: HashSet<i64>,
    /// Whether a value reads as `true`, and as `false`.
    has_true: bool,
    has_false: bool,
    /// Whether the empty value is in the list.
    has_empty: bool,
    /// Every value's text, with the kinds of cell that compare with it as
    /// text: the kinds whose reading it lacks (text cells always do).
    texts: HashMap<String, AsText>,
    /// The kinds of cell some value compares with as text: a number cell
    /// need not be formatted when every value reads as a number.
    any_as_text: AsText,
}

/// Which kinds of cell compare with a value as text, for lack of a typed
/// reading of the value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct AsText {
    numbers: bool,
    dates: bool,
    /// Time-of-day cells: for a value with neither a time nor a date reading.
    times: bool,
    booleans: bool,
}

impl AsText {
    fn of(operand: &Operand) -> AsText {
        AsText {
            numbers: operand.number.is_none(),
            dates: operand.date.is_none(),
            times: operand.date.is_none() && operand.time.is_none(),
            booleans: operand.boolean.is_none(),
        }
    }

    fn or(self, other: AsText) -> AsText {
        AsText {
            numbers: self.numbers || other.numbers,
            dates: self.dates || other.dates,
            times: self.times || other.times,
            booleans: self.booleans || other.booleans,
        }
    }
}

impl InList {
    fn new(operands: impl Iterator<Item = Operand>) -> InList {
        let mut list = InList {
            numbers: HashSet::new(),
            seconds: HashSet::new(),
            times: HashSet::new(),
            has_true: false,
            has_false: false,
            has_empty: false,
            texts: HashMap::new(),
            any_as_text: AsText::default(),
        };
        for operand in operands {
            if let Some(number) = operand.number {
                list.numbers.insert(number_key(number));
            }
            if let Some(date) = operand.date {
                list.seconds.insert(to_seconds(date));
            }
            if let Some(time) = operand.time {
                list.times.insert(to_seconds(time));
            }
            match operand.boolean {
                Some(true) => list.has_true = true,
                Some(false) => list.has_false = true,
                None => {}
            }
            list.has_empty |= operand.text.is_empty();
            let as_text = AsText::of(&operand);
            list.any_as_text = list.any_as_text.or(as_text);
            // The readings follow from the text: a text given twice has the
            // same ones both times.
            list.texts.insert(operand.text, as_text);
        }
        list
    }

    /// Whether `cell` (a value, as [`Cell::value`] gives it) equals one of
    /// the list's values, as `equals` decides.
    fn contains(&self, cell: &Cell) -> bool {
        if cell.is_blank() {
            return self.has_empty;
        }
        match cell {
            Cell::DateTime(d) if is_time_of_day(cell) => {
                let seconds = to_seconds(*d);
                self.times.contains(&seconds)
                    || self.seconds.contains(&seconds)
                    || (self.any_as_text.times && self.text_for(cell, |k| k.times))
            }
            Cell::Number(n) => {
                self.numbers.contains(&number_key(*n))
                    || (self.any_as_text.numbers && self.text_for(cell, |k| k.numbers))
            }
            Cell::DateTime(d) | Cell::Timestamp(d) => {
                self.seconds.contains(&to_seconds(*d))
                    || (self.any_as_text.dates && self.text_for(cell, |k| k.dates))
            }
            // The text of a boolean cell (`true`, `false`) always reads as
            // a boolean, so the second test never holds today; it is there
            // so that the rule stays the one `equals` has.
            Cell::Bool(b) => {
                (if *b { self.has_true } else { self.has_false })
                    || (self.any_as_text.booleans && self.text_for(cell, |k| k.booleans))
            }
            _ => self.texts.contains_key(cell.text_form().as_ref()),
        }
    }

    /// Whether a value with the cell's text compares with this kind of
    /// cell as text.
    fn text_for(&self, cell: &Cell, kind: fn(AsText) -> bool) -> bool {
        self.texts
            .get(cell.text_form().as_ref())
            .is_some_and(|&as_text| kind(as_text))
    }
}

/// A number as a set key: equal numbers give equal keys (`-0.0 == 0.0`).
/// Values are finite, so a NaN cell's key is never in a set.
pub(super) fn number_key(n: f64) -> u64 {
    if n == 0.0 {
        0.0_f64.to_bits()
    } else {
        n.to_bits()
    }
}

/// A `like` pattern: the text between the `*`s.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    parts: Vec<String>,
}

impl Pattern {
    fn new(pattern: &str, fold_case: bool) -> Pattern {
        let pattern = if fold_case {
            pattern.to_lowercase()
        } else {
            pattern.to_owned()
        };
        Pattern {
            parts: pattern.split('*').map(str::to_owned).collect(),
        }
    }

    /// Whole-text match; `*` stands for any run of characters.
    fn matches(&self, text: &str) -> bool {
        let (first, rest) = self.parts.split_first().expect("split yields a part");
        let Some((last, middle)) = rest.split_last() else {
            return text == first;
        };
        if text.len() < first.len() + last.len()
            || !text.starts_with(first.as_str())
            || !text.ends_with(last.as_str())
        {
            return false;
        }
        let mut remaining = &text[first.len()..text.len() - last.len()];
        for part in middle {
            match remaining.find(part.as_str()) {
                Some(at) => remaining = &remaining[at + part.len()..],
                None => return false,
            }
        }
        true
    }
}

/// Parses one expression; `Err` holds the rule it breaks. The column may
/// be written in double quotes (`"Report ID : W1":eq:x`, a `"` inside
/// doubled), so that a name holding `:` can be filtered (§11.4); else it
/// ends at the first `:`, and the operator at the second.
pub fn parse_filter(field: &str, expr: &str) -> Result<FilterExpr, String> {
    if expr.len() > MAX_FILTER_BYTES {
        return Err(too_big(expr.len()));
    }
    let malformed = || format!("{expr:?} is not a filter expression (column:operator:value)");
    let (column, rest) = match expr.strip_prefix('"') {
        Some(quoted) => quoted_column(quoted).ok_or_else(|| {
            format!(
                "{expr:?} is not a filter expression (\"column\":operator:value: the quotes must close before the first : and a \" inside them is doubled)"
            )
        })?,
        None => {
            let (column, rest) = expr.split_once(':').ok_or_else(malformed)?;
            (column.to_owned(), rest)
        }
    };
    let (operator, value) = rest.split_once(':').ok_or_else(malformed)?;
    if column.is_empty() {
        return Err(format!("{expr:?} names no column"));
    }
    Ok(FilterExpr {
        field: field.to_owned(),
        column,
        op: parse_op(operator, value)?,
    })
}

fn too_big(bytes: usize) -> String {
    format!(
        "is {bytes} bytes long; one filter expression may have at most {MAX_FILTER_BYTES} bytes (1 MiB)"
    )
}

/// The column name in quotes at the start of `text` (its opening `"`
/// taken off), `""` read as `"`, and what follows the `:` after its
/// closing quote. `None` when the quotes do not close, or no `:` follows.
fn quoted_column(text: &str) -> Option<(String, &str)> {
    let mut name = String::new();
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        if c != '"' {
            name.push(c);
            continue;
        }
        let after = &text[at + 1..];
        if after.starts_with('"') {
            name.push('"');
            chars.next();
            continue;
        }
        return Some((name, after.strip_prefix(':')?));
    }
    None
}

/// An operator and its value, as the expression or a filter object gives them.
fn parse_op(operator: &str, value: &str) -> Result<Op, String> {
    Ok(match operator {
        "eq" => Op::Eq(Operand::new(value)),
        "neq" => Op::Neq(Operand::new(value)),
        "gt" => Op::Gt(Operand::new(value)),
        "gte" => Op::Gte(Operand::new(value)),
        "lt" => Op::Lt(Operand::new(value)),
        "lte" => Op::Lte(Operand::new(value)),
        "like" => Op::Like(Pattern::new(value, false)),
        "ilike" => Op::ILike(Pattern::new(value, true)),
        "in" => {
            let count = value.bytes().filter(|&b| b == b',').count() + 1;
            if count > MAX_IN_VALUES {
                return Err(format!(
                    "in lists {count} values; one in list may have at most {MAX_IN_VALUES}"
                ));
            }
            Op::In(InList::new(value.split(',').map(Operand::new)))
        }
        "is" => match value {
            "null" => Op::IsNull,
            "notnull" => Op::IsNotNull,
            "true" => Op::IsTrue,
            "false" => Op::IsFalse,
            _ => {
                return Err(format!(
                    "operator is takes null|notnull|true|false (not {value:?})"
                ));
            }
        },
        _ => return Err(format!("unknown operator {operator:?} (use {OPERATORS})")),
    })
}

/// The keys of a filter object.
const OBJECT_KEYS: &str = "column|op|value";

/// A filter written as an object in a JSON body (§11.4), `{"column":
/// "Report ID : W1", "op": "eq", "value": "x"}`: any column, no quoting.
/// The value may be text, a number or a boolean (read as their text).
/// Each problem is named by its key (`filter[1].op`); `None` when there
/// is one.
pub fn parse_filter_object(
    field: &str,
    object: &Map<String, Value>,
    problems: &mut Problems,
) -> Option<FilterExpr> {
    let found = problems.iter().count();
    for key in object.keys() {
        if !["column", "op", "value"].contains(&key.as_str()) {
            problems.push(
                format!("{field}.{key}"),
                format!("is not a key of a filter object ({OBJECT_KEYS})"),
            );
        }
    }
    let mut text = |key: &str, rule: &str, scalars: bool| -> Option<String> {
        let text = match object.get(key) {
            None => {
                problems.push(format!("{field}.{key}"), "is required");
                return None;
            }
            Some(Value::String(text)) => text.clone(),
            Some(Value::Number(n)) if scalars => n.to_string(),
            Some(Value::Bool(b)) if scalars => b.to_string(),
            Some(_) => {
                problems.push(format!("{field}.{key}"), rule);
                return None;
            }
        };
        if text.len() > MAX_FILTER_BYTES {
            problems.push(format!("{field}.{key}"), too_big(text.len()));
            return None;
        }
        Some(text)
    };
    let column = text("column", "must be a column name", false);
    let op = text("op", &format!("must be an operator ({OPERATORS})"), false);
    let value = text("value", "must be text or a number or a boolean", true);
    if column.as_deref() == Some("") {
        problems.push(format!("{field}.column"), "must not be empty");
    }
    let (Some(column), Some(operator), Some(value)) = (column, op, value) else {
        return None;
    };
    let op = parse_op(&operator, &value)
        .map_err(|rule| {
            let key = if operator == "in" || operator == "is" {
                "value"
            } else {
                "op"
            };
            problems.push(format!("{field}.{key}"), rule);
        })
        .ok()?;
    (problems.iter().count() == found).then(|| FilterExpr {
        field: field.to_owned(),
        column,
        op,
    })
}

/// A filter tied to a column of a sheet.
#[derive(Debug, Clone)]
pub struct BoundFilter<'a> {
    column: usize,
    op: &'a Op,
}

impl FilterExpr {
    /// Resolves the column against `header`; `Err` holds the rule broken.
    pub fn bind(&self, header: Option<&Header>) -> Result<BoundFilter<'_>, String> {
        let column = match header {
            Some(header) => header.resolve_explained(&self.column),
            None => Err("is not a column of the sheet".to_owned()),
        }
        .map_err(|rule| format!("column {:?} {rule}", self.column))?;
        Ok(BoundFilter {
            column,
            op: &self.op,
        })
    }
}

impl BoundFilter<'_> {
    /// The 0-based column whose cells it reads.
    pub fn column(&self) -> usize {
        self.column
    }

    /// The number an `eq` filter looks for, if its value is one.
    pub fn equal_number(&self) -> Option<f64> {
        match self.op {
            Op::Eq(operand) => operand.number,
            _ => None,
        }
    }

    /// Whether the row's cells satisfy this filter.
    pub fn matches(&self, row: &[Cell]) -> bool {
        let cell = row.get(self.column).map_or(&Cell::Empty, Cell::value);
        match self.op {
            Op::Eq(operand) => equals(cell, operand),
            Op::Neq(operand) => !equals(cell, operand),
            Op::Gt(operand) => order(cell, operand) == Some(Ordering::Greater),
            Op::Gte(operand) => matches!(
                order(cell, operand),
                Some(Ordering::Greater | Ordering::Equal)
            ),
            Op::Lt(operand) => order(cell, operand) == Some(Ordering::Less),
            Op::Lte(operand) => {
                matches!(order(cell, operand), Some(Ordering::Less | Ordering::Equal))
            }
            Op::Like(pattern) => pattern.matches(&cell.text_form()),
            Op::ILike(pattern) => pattern.matches(&cell.text_form().to_lowercase()),
            Op::In(list) => list.contains(cell),
            Op::IsNull => cell.is_blank(),
            Op::IsNotNull => !cell.is_blank(),
            Op::IsTrue => *cell == Cell::Bool(true),
            Op::IsFalse => *cell == Cell::Bool(false),
        }
    }
}

/// An empty cell equals only the empty value; others compare as [`compare`] says.
fn equals(cell: &Cell, operand: &Operand) -> bool {
    if cell.is_blank() {
        operand.text.is_empty()
    } else {
        compare(cell, operand) == Some(Ordering::Equal)
    }
}

/// Typed by the cell: numbers numerically, dates chronologically (to the
/// second), times of day likewise with times (or dates), booleans as
/// booleans, everything else by its text. An empty cell has no order.
/// What `eq`, `neq` and `in` go by.
fn compare(cell: &Cell, operand: &Operand) -> Option<Ordering> {
    match (cell, operand) {
        (c, _) if c.is_blank() => None,
        (
            Cell::Number(n),
            Operand {
                number: Some(v), ..
            },
        ) => n.partial_cmp(v),
        (Cell::DateTime(d), Operand { time: Some(v), .. }) if is_time_of_day(cell) => {
            Some(to_seconds(*d).cmp(&to_seconds(*v)))
        }
        (Cell::DateTime(d) | Cell::Timestamp(d), Operand { date: Some(v), .. }) => {
            Some(to_seconds(*d).cmp(&to_seconds(*v)))
        }
        (
            Cell::Bool(b),
            Operand {
                boolean: Some(v), ..
            },
        ) => Some(b.cmp(v)),
        (c, _) => Some(c.text_form().as_ref().cmp(operand.text.as_str())),
    }
}

/// How a cell orders against a value for `gt`, `gte`, `lt` and `lte`
/// (§11.4, replacing §3's text fallback): only a value of the cell's own
/// kind orders it — a number a number, a date a date, a time of day (or a
/// duration) a time, a boolean `true`/`false`, text a value that reads as
/// none of number, date or time. Any other pair has no order, so that
/// `age:gt:40` never matches a cell holding `n/a`. Empty and error cells
/// have none either.
fn order(cell: &Cell, operand: &Operand) -> Option<Ordering> {
    let seconds = |d: f64, v: f64| Some(to_seconds(d).cmp(&to_seconds(v)));
    match cell {
        c if c.is_blank() => None,
        Cell::Number(n) => n.partial_cmp(&operand.number?),
        Cell::DateTime(d) if is_time_of_day(cell) => seconds(*d, operand.time?),
        Cell::DateTime(d) | Cell::Timestamp(d) => seconds(*d, operand.date?),
        Cell::Duration(d) => seconds(*d, operand.time?),
        Cell::Bool(b) => Some(b.cmp(&operand.boolean?)),
        Cell::Text(text) if operand.is_text() => Some(text.as_str().cmp(operand.text.as_str())),
        _ => None,
    }
}

/// A date's serial number to the second, as dates compare.
pub(super) fn to_seconds(serial: f64) -> i64 {
    (serial * 86_400.0).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(expr: &str, cell: Cell) -> bool {
        let filter = parse_filter("filter", expr).expect("valid filter");
        let header = Header::from_names(["c".to_owned()]);
        let bound = filter.bind(Some(&header)).expect("column exists");
        bound.matches(&[cell])
    }

    fn text(s: &str) -> Cell {
        Cell::Text(s.into())
    }

    #[test]
    fn split_at_first_two_colons() {
        let f = parse_filter("filter", "time:eq:12:30").expect("valid");
        assert_eq!(f.column, "time");
        assert!(matches("c:eq:12:30", text("12:30")));
    }

    #[test]
    fn rejects_malformed_and_unknown() {
        assert!(parse_filter("filter", "age").is_err());
        assert!(parse_filter("filter", "age:eq").is_err());
        assert!(parse_filter("filter", ":eq:1").is_err());
        assert_eq!(
            parse_filter("filter", "age:EQ:1").unwrap_err(),
            "unknown operator \"EQ\" (use eq|neq|gt|gte|lt|lte|like|ilike|in|is)"
        );
        assert!(parse_filter("filter", "age:is:empty").is_err());
    }

    #[test]
    fn numbers_compare_numerically() {
        assert!(matches("c:eq:30.0", Cell::Number(30.0)));
        assert!(matches("c:gt:9", Cell::Number(10.0)));
        assert!(!matches("c:gt:9", text("10")), "text compares as text");
        assert!(matches("c:lte:10", Cell::Number(10.0)));
    }

    #[test]
    fn dates_compare_chronologically() {
        let jan15 = Cell::DateTime(45306.0);
        assert!(matches("c:eq:2024/01/15", jan15.clone()));
        assert!(matches("c:eq:2024-01-15", jan15.clone()));
        assert!(matches("c:gt:2023/12/31 23:59", jan15.clone()));
        assert!(matches("c:lt:2024-01-15T00:00:01", jan15));
    }

    #[test]
    fn booleans_compare_in_any_case() {
        assert!(matches("c:eq:TRUE", Cell::Bool(true)));
        assert!(matches("c:is:false", Cell::Bool(false)));
        assert!(!matches("c:is:true", text("true")));
    }

    #[test]
    fn empty_cells() {
        assert!(matches("c:eq:", Cell::Empty));
        assert!(!matches("c:eq:", text("x")));
        assert!(matches("c:neq:done", Cell::Empty));
        assert!(!matches("c:gt:0", Cell::Empty));
        assert!(!matches("c:lt:zzz", Cell::Empty));
        assert!(matches("c:is:null", Cell::Empty));
        assert!(matches("c:is:notnull", text("x")));
    }

    #[test]
    fn like_matches_whole_text() {
        assert!(matches("c:like:B*n", text("Berlin")));
        assert!(!matches("c:like:B*", text("aBerlin")));
        assert!(!matches("c:like:b*", text("Berlin")));
        assert!(matches("c:ilike:b*N", text("Berlin")));
        assert!(matches("c:like:*er*", text("Berlin")));
        assert!(matches("c:like:a*a", text("aa")));
        assert!(!matches("c:like:a*a", text("a")));
        assert!(matches("c:like:3*", Cell::Number(30.0)));
    }

    #[test]
    fn in_matches_any_value() {
        assert!(matches("c:in:open,pending", text("pending")));
        assert!(!matches("c:in:open,pending", text("closed")));
        assert!(matches("c:in:1,2", Cell::Number(2.0)));
    }

    #[test]
    fn text_orders_by_code_point() {
        assert!(matches("c:lt:b", text("a")));
        assert!(matches("c:lt:a", text("B")));
    }

    #[test]
    fn in_compares_as_eq_does_for_every_kind_of_cell() {
        assert!(matches("c:in:x,-0", Cell::Number(0.0)));
        assert!(matches("c:in:x,0", Cell::Number(-0.0)));
        assert!(matches("c:in:x,3e1", Cell::Number(30.0)));
        assert!(matches("c:in:x,-0e0", Cell::Number(0.0)));
        assert!(!matches("c:in:x,30", text("30.0")), "text compares as text");
        assert!(matches("c:in:x,2024-01-15", Cell::DateTime(45306.0)));
        assert!(matches("c:in:x,2024/01/15 00:00", Cell::Timestamp(45306.0)));
        assert!(!matches("c:in:x,2024/01/16", Cell::DateTime(45306.0)));
        // A time of day is no date value: it compares as text.
        assert!(matches("c:in:x,12:30:00", Cell::DateTime(0.5208333333)));
        assert!(matches("c:in:x,FALSE", Cell::Bool(false)));
        assert!(!matches("c:in:x,true", Cell::Bool(false)));
        assert!(matches("c:in:x,#N/A", Cell::Error("#N/A".into())));
        assert!(matches("c:in:x,30:15:00", Cell::Duration(1.2604166667)));
        let formula = Cell::Formula(Box::new(Formula::new("1+1", Cell::Number(2.0))));
        assert!(matches("c:in:x,2", formula));
        assert!(matches("c:in:x,", Cell::Empty));
        assert!(matches("c:in:,x", text("")));
        assert!(!matches("c:in:x,y", Cell::Empty));
        assert!(!matches("c:in:x,", text("y")));
    }

    #[test]
    fn ordering_compares_only_values_of_the_cells_kind() {
        // Numbers with numbers: text never orders against a number.
        assert!(!matches("c:gt:40", text("n/a")));
        assert!(!matches("c:lt:40", text("n/a")));
        assert!(!matches("c:gt:abc", Cell::Number(50.0)));
        assert!(!matches("c:lte:abc", Cell::Number(50.0)));
        assert!(matches("c:gt:40", Cell::Number(41.0)));
        // Dates with dates.
        assert!(!matches("c:gt:40", Cell::DateTime(45306.0)));
        assert!(!matches("c:lt:zzz", Cell::DateTime(45306.0)));
        assert!(matches("c:gt:2024-01-14", Cell::DateTime(45306.0)));
        assert!(!matches("c:gt:2024-01-14", text("2024-01-15")));
        // Text with text.
        assert!(matches("c:gte:b", text("b")));
        assert!(!matches("c:gt:1", text("2")));
        // Booleans with booleans, and never with text.
        assert!(matches("c:gt:false", Cell::Bool(true)));
        assert!(!matches("c:gt:a", Cell::Bool(true)));
        // Errors have no order.
        assert!(!matches("c:gt:#", Cell::Error("#N/A".into())));
        // A formula orders by its cached value.
        let formula = Cell::Formula(Box::new(Formula::new("1+1", Cell::Number(2.0))));
        assert!(matches("c:lt:3", formula));
        // eq still falls back to text.
        assert!(matches("c:eq:n/a", text("n/a")));
        assert!(matches("c:neq:40", text("n/a")));
    }

    #[test]
    fn times_of_day_compare_with_times() {
        let half_past_noon = Cell::DateTime(0.5208333333333334);
        assert!(matches("c:eq:12:30", half_past_noon.clone()));
        assert!(matches("c:eq:12:30:00", half_past_noon.clone()));
        assert!(matches("c:gt:12:00", half_past_noon.clone()));
        assert!(matches("c:lt:12:30:01", half_past_noon.clone()));
        assert!(!matches("c:gt:12:30", half_past_noon.clone()));
        assert!(matches("c:in:08:00,12:30", half_past_noon.clone()));
        // A date is no time of day: a time orders no date cell.
        assert!(!matches("c:gt:12:00", Cell::DateTime(45306.5)));
        // Text holding a time compares as text, as before.
        assert!(matches("c:eq:12:30", text("12:30")));
    }

    #[test]
    fn iso_date_times_with_zones_filter_dates() {
        let noon = Cell::Timestamp(45306.5);
        assert!(matches("c:eq:2024-01-15T12:00:00Z", noon.clone()));
        assert!(matches("c:eq:2024-01-15T14:00:00+02:00", noon.clone()));
        assert!(matches("c:lt:2024-01-15T12:00:00.500", noon));
    }

    #[test]
    fn a_quoted_column_may_hold_colons_and_quotes() {
        let f = parse_filter("filter", r#""Report ID : W1":eq:x:y"#).expect("valid");
        assert_eq!(f.column, "Report ID : W1");
        assert_eq!(f.op, Op::Eq(Operand::new("x:y")));
        let f = parse_filter("filter", r#""say ""hi"":":like:a*"#).expect("valid");
        assert_eq!(f.column, r#"say "hi":"#);
        let f = parse_filter("filter", r#""plain":is:null"#).expect("valid");
        assert_eq!((f.column.as_str(), &f.op), ("plain", &Op::IsNull));
        for bad in [r#""open:eq:x"#, r#""a"eq:x"#, r#""a":eq"#, r#""":eq:x"#] {
            assert!(parse_filter("filter", bad).is_err(), "{bad}");
        }
        // Unquoted, a quote inside a name is just a character.
        assert_eq!(
            parse_filter("filter", r#"a"b:eq:1"#).unwrap().column,
            r#"a"b"#
        );
    }

    fn object(value: serde_json::Value) -> Result<FilterExpr, String> {
        let mut problems = Problems::new();
        let serde_json::Value::Object(map) = value else {
            unreachable!()
        };
        parse_filter_object("filter[1]", &map, &mut problems).ok_or_else(|| {
            problems
                .iter()
                .map(|p| format!("{}: {}", p.field, p.rule))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    #[test]
    fn filter_objects_name_any_column() {
        use serde_json::json;
        let f = object(json!({"column": "Report ID : W1", "op": "eq", "value": "x"})).unwrap();
        assert_eq!(f.column, "Report ID : W1");
        assert_eq!(f.field, "filter[1]");
        assert_eq!(f.op, Op::Eq(Operand::new("x")));
        let f = object(json!({"column": "age", "op": "gt", "value": 40})).unwrap();
        assert_eq!(f.op, Op::Gt(Operand::new("40")));
        let f = object(json!({"column": "ok", "op": "is", "value": "true"})).unwrap();
        assert_eq!(f.op, Op::IsTrue);
    }

    #[test]
    fn filter_objects_name_each_problem_by_key() {
        use serde_json::json;
        assert_eq!(
            object(json!({"column": "a", "value": "x", "opp": "eq"})).unwrap_err(),
            "filter[1].opp: is not a key of a filter object (column|op|value), filter[1].op: is required"
        );
        assert_eq!(
            object(json!({"column": "a", "op": "EQ", "value": "x"})).unwrap_err(),
            "filter[1].op: unknown operator \"EQ\" (use eq|neq|gt|gte|lt|lte|like|ilike|in|is)"
        );
        assert_eq!(
            object(json!({"column": 3, "op": "is", "value": "maybe"})).unwrap_err(),
            "filter[1].column: must be a column name"
        );
        assert_eq!(
            object(json!({"column": "a", "op": "is", "value": "maybe"})).unwrap_err(),
            "filter[1].value: operator is takes null|notnull|true|false (not \"maybe\")"
        );
        assert_eq!(
            object(json!({"column": "", "op": "eq", "value": null})).unwrap_err(),
            "filter[1].value: must be text or a number or a boolean, filter[1].column: must not be empty"
        );
    }

    #[test]
    fn filters_over_budget_are_refused_with_the_limit() {
        assert_eq!(check_filter_count(MAX_FILTERS), Ok(()));
        assert_eq!(
            check_filter_count(MAX_FILTERS + 1),
            Err("has 101 expressions; one request may have at most 100".into())
        );

        let values = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        assert!(parse_filter("filter", &format!("c:in:{}", values(MAX_IN_VALUES))).is_ok());
        assert_eq!(
            parse_filter("filter", &format!("c:in:{}", values(MAX_IN_VALUES + 1))).unwrap_err(),
            "in lists 100001 values; one in list may have at most 100000"
        );
        // Empty values count: `a,,` is three.
        let commas = format!("c:in:{}", ",".repeat(MAX_IN_VALUES));
        assert!(parse_filter("filter", &commas).is_err());

        let at_limit = format!("c:eq:{}", "x".repeat(MAX_FILTER_BYTES - 5));
        assert_eq!(at_limit.len(), MAX_FILTER_BYTES);
        assert!(parse_filter("filter", &at_limit).is_ok());
        assert_eq!(
            parse_filter("filter", &format!("{at_limit}x")).unwrap_err(),
            "is 1048577 bytes long; one filter expression may have at most 1048576 bytes (1 MiB)"
        );
    }

    // --- The set matcher against the linear one ---------------------------

    use proptest::prelude::*;
    use proptest::sample::Index;

    use crate::model::value::{Formula, format_date_time, format_number};

    /// Numbers as cells hold them, with the corners of equality: both
    /// zeros, integers, fractions, extremes (and NaN and the infinities,
    /// which no cell should hold, but which must not match wrongly either).
    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            (-50_i32..50).prop_map(f64::from),
            (-400_i32..400).prop_map(|i| f64::from(i) / 8.0),
            any::<f64>(),
        ]
    }

    /// Serial numbers: whole days, times of day, seconds and fractions of
    /// a second around the rounding to whole seconds.
    fn serial() -> impl Strategy<Value = f64> {
        prop_oneof![
            (1_u32..2_958_466).prop_map(f64::from),
            (45_300_u32..45_310).prop_map(f64::from),
            (0_u32..172_800).prop_map(|s| 45_306.0 + f64::from(s) / 86_400.0),
            (0_u32..20_000).prop_map(|ms| 45_306.0 + f64::from(ms) / 86_400_000.0),
            -2.0..3.0,
            0.0..3e6,
        ]
    }

    /// Text that looks like the other kinds' readings, and text that does not.
    fn text_like() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 .:/#-]{0,8}",
            "-?[0-9]{1,3}(\\.[0-9]{0,2})?(e[0-9])?",
            "20[0-9]{2}[/-]0[1-9][/-][0-2][0-9]([ T][0-2][0-9]:[0-5][0-9](:[0-5][0-9])?)?",
            "(?i:true|false)",
            "[😀é]{1,3}",
            Just(String::new()),
            Just("inf".to_owned()),
            Just("NaN".to_owned()),
        ]
    }

    fn value_cell() -> impl Strategy<Value = Cell> {
        prop_oneof![
            Just(Cell::Empty),
            number().prop_map(Cell::Number),
            serial().prop_map(Cell::DateTime),
            serial().prop_map(Cell::Timestamp),
            any::<bool>().prop_map(Cell::Bool),
            serial().prop_map(Cell::Duration),
            text_like().prop_map(Cell::Text),
            "#[A-Z/0!]{1,5}".prop_map(Cell::Error),
        ]
    }

    /// Any cell, a formula's cached value included.
    fn cell() -> impl Strategy<Value = Cell> {
        prop_oneof![
            4 => value_cell(),
            1 => value_cell().prop_map(|cached| {
                Cell::Formula(Box::new(Formula::new("A1", cached)))
            }),
        ]
    }

    /// Values as a client writes them: the other kinds' spellings, and the
    /// text forms of generated cells (so that lists often hold a match).
    fn operand_texts(cells: Vec<Cell>) -> impl Strategy<Value = Vec<String>> {
        let spelled = prop_oneof![
            text_like(),
            number().prop_map(|n| n.to_string()),
            number().prop_map(|n| format!("{n:e}")),
            number().prop_map(format_number),
            serial().prop_map(format_date_time),
            serial().prop_map(|d| format_date_time(d).replace('/', "-")),
        ];
        let forms: Vec<String> = cells.iter().map(|c| c.text_form().into_owned()).collect();
        let picked = prop::collection::vec(any::<Index>(), 0..6)
            .prop_map(move |picks| picks.iter().map(|i| i.get(&forms).clone()).collect());
        (prop::collection::vec(spelled, 0..8), picked).prop_map(|(mut a, b): (Vec<_>, Vec<_>)| {
            a.extend(b);
            a
        })
    }

    fn cells_and_operands() -> impl Strategy<Value = (Vec<Cell>, Vec<String>)> {
        prop::collection::vec(cell(), 1..12)
            .prop_flat_map(|cells| (Just(cells.clone()), operand_texts(cells)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The set matcher and the comparison with each value in turn (what
        /// `in` did before it had sets) agree on every cell.
        #[test]
        fn in_list_matches_exactly_what_equals_matches((cells, texts) in cells_and_operands()) {
            let operands: Vec<Operand> = texts.iter().map(|t| Operand::new(t)).collect();
            let list = InList::new(operands.iter().cloned());
            for cell in &cells {
                let value = cell.value();
                let linear = operands.iter().any(|operand| equals(value, operand));
                prop_assert_eq!(list.contains(value), linear, "cell {:?}, values {:?}", cell, texts);
            }
        }

        /// The same through the parser and a bound filter, for values
        /// without commas.
        #[test]
        fn in_filter_matches_as_its_eq_filters_together((cells, texts) in cells_and_operands()) {
            let texts: Vec<String> = texts.into_iter().filter(|t| !t.contains(',')).collect();
            prop_assume!(!texts.is_empty());
            let header = Header::from_names(["c".to_owned()]);
            let in_filter = parse_filter("filter", &format!("c:in:{}", texts.join(","))).unwrap();
            let eq_filters: Vec<FilterExpr> = texts
                .iter()
                .map(|t| parse_filter("filter", &format!("c:eq:{t}")).unwrap())
                .collect();
            let bound = in_filter.bind(Some(&header)).unwrap();
            for cell in &cells {
                let row = std::slice::from_ref(cell);
                let any_eq = eq_filters
                    .iter()
                    .any(|f| f.bind(Some(&header)).unwrap().matches(row));
                prop_assert_eq!(bound.matches(row), any_eq, "cell {:?}, values {:?}", cell, texts);
            }
        }
    }

    /// The cost of a 100,000-value `in` list on 10,000 rows, by set and by
    /// comparison with each value: `cargo test --release --lib
    /// in_list_timing -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn in_list_timing() {
        use std::time::Instant;
        let cells: Vec<Cell> = (0..10_000).map(|i| text(&format!("n{i}"))).collect();
        let values: Vec<String> = (0..MAX_IN_VALUES).map(|i| format!("n{}", 2 * i)).collect();
        let expr = format!("c:in:{}", values.join(","));

        let start = Instant::now();
        let filter = parse_filter("filter", &expr).expect("valid");
        let parsed = start.elapsed();
        let header = Header::from_names(["c".to_owned()]);
        let bound = filter.bind(Some(&header)).expect("column exists");
        let start = Instant::now();
        let by_set = cells
            .iter()
            .filter(|c| bound.matches(std::slice::from_ref(*c)))
            .count();
        let matched = start.elapsed();

        let operands: Vec<Operand> = values.iter().map(|v| Operand::new(v)).collect();
        let start = Instant::now();
        let linear = cells
            .iter()
            .filter(|c| operands.iter().any(|o| equals(c, o)))
            .count();
        let compared = start.elapsed();
        assert_eq!((by_set, linear), (5000, 5000));
        println!(
            "parse {parsed:?}, match by set {matched:?}, match by comparing each value {compared:?}"
        );
    }
}
