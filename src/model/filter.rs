//! The filter language: `<column>:<operator>:<value>` (contract §3).
//!
//! Parsing turns the text into a [`FilterExpr`] without looking at any sheet;
//! [`FilterExpr::bind`] then resolves the column against a header, and the
//! resulting [`BoundFilter`] decides whether a row matches.

use std::cmp::Ordering;

use super::header::Header;
use super::value::{Cell, DateParse, DateSyntax, parse_date};

/// Every operator, as the error message lists them.
const OPERATORS: &str = "eq|neq|gt|gte|lt|lte|like|ilike|in|is";

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
    In(Vec<Operand>),
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
    boolean: Option<bool>,
}

impl Operand {
    fn new(text: &str) -> Operand {
        let number = text.parse::<f64>().ok().filter(|n| n.is_finite());
        let date = match parse_date(text, DateSyntax::Filter) {
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
            boolean,
        }
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

/// Parses one expression; `Err` holds the rule it breaks.
pub fn parse_filter(field: &str, expr: &str) -> Result<FilterExpr, String> {
    let mut parts = expr.splitn(3, ':');
    let (Some(column), Some(operator), Some(value)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!(
            "{expr:?} is not a filter expression (column:operator:value)"
        ));
    };
    if column.is_empty() {
        return Err(format!("{expr:?} names no column"));
    }
    let op = match operator {
        "eq" => Op::Eq(Operand::new(value)),
        "neq" => Op::Neq(Operand::new(value)),
        "gt" => Op::Gt(Operand::new(value)),
        "gte" => Op::Gte(Operand::new(value)),
        "lt" => Op::Lt(Operand::new(value)),
        "lte" => Op::Lte(Operand::new(value)),
        "like" => Op::Like(Pattern::new(value, false)),
        "ilike" => Op::ILike(Pattern::new(value, true)),
        "in" => Op::In(value.split(',').map(Operand::new).collect()),
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
    };
    Ok(FilterExpr {
        field: field.to_owned(),
        column: column.to_owned(),
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
            Some(header) => header.resolve(&self.column),
            None => Err("is not a column of the sheet"),
        }
        .map_err(|rule| format!("column {:?} {rule}", self.column))?;
        Ok(BoundFilter {
            column,
            op: &self.op,
        })
    }
}

impl BoundFilter<'_> {
    /// Whether the row's cells satisfy this filter.
    pub fn matches(&self, row: &[Cell]) -> bool {
        let cell = row.get(self.column).map_or(&Cell::Empty, Cell::value);
        match self.op {
            Op::Eq(operand) => equals(cell, operand),
            Op::Neq(operand) => !equals(cell, operand),
            Op::Gt(operand) => compare(cell, operand) == Some(Ordering::Greater),
            Op::Gte(operand) => matches!(
                compare(cell, operand),
                Some(Ordering::Greater | Ordering::Equal)
            ),
            Op::Lt(operand) => compare(cell, operand) == Some(Ordering::Less),
            Op::Lte(operand) => matches!(
                compare(cell, operand),
                Some(Ordering::Less | Ordering::Equal)
            ),
            Op::Like(pattern) => pattern.matches(&cell.text_form()),
            Op::ILike(pattern) => pattern.matches(&cell.text_form().to_lowercase()),
            Op::In(operands) => operands.iter().any(|operand| equals(cell, operand)),
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
/// second), booleans as booleans, everything else by its text. An empty cell
/// has no order.
fn compare(cell: &Cell, operand: &Operand) -> Option<Ordering> {
    match (cell, operand) {
        (c, _) if c.is_blank() => None,
        (
            Cell::Number(n),
            Operand {
                number: Some(v), ..
            },
        ) => n.partial_cmp(v),
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

fn to_seconds(serial: f64) -> i64 {
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
}
