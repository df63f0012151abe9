//! The queries of the routes: the parameters each takes, checked; an
//! unknown parameter, or a single one given twice, is a problem (§9).

use std::collections::{HashMap, HashSet};

use super::{Rejected, checked};
use crate::model::filter::{FilterExpr, check_filter_count, parse_filter};
use crate::model::problems::Problems;
use crate::model::render::{Dates, Rendering, Values};

/// The most rows one read returns (contract §4.3).
pub const MAX_LIMIT: usize = 100_000;
/// The number of rows a read returns when no `limit` is given.
pub const DEFAULT_LIMIT: usize = 1000;

/// `GET` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadQuery {
    pub filters: Vec<FilterExpr>,
    pub limit: usize,
    pub offset: usize,
    /// Sort keys, most significant first (§10.1 `order`).
    pub order: Vec<Order>,
    /// The columns each row shows, when given (§10.1 `columns`).
    pub columns: Option<Vec<String>>,
    /// The answer's format, when the query names one (§10.1 `format`).
    pub format: Option<Format>,
    /// The header row, when the query names it (§11.1 `header_row`).
    pub header_row: Option<std::num::NonZeroU32>,
    /// How cells are shown (§11.3 `values`, `dates`).
    pub rendering: Rendering,
}

/// One sort key of a read: `column.asc` or `column.desc`.
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub column: String,
    pub descending: bool,
}

/// The format of a read's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
}

/// What `order` must look like.
const ORDER_RULE: &str = "must be column.asc or column.desc (several: separated by commas)";

/// `order`'s value as sort keys, and whether any key was malformed (the
/// others are kept, to be checked against the sheet); a key splits at its
/// last dot, so a column name may hold dots (`v1.2.asc`).
fn parse_order(value: &str) -> (Vec<Order>, bool) {
    let keys: Vec<&str> = value.split(',').collect();
    let order: Vec<Order> = keys
        .iter()
        .filter_map(|key| match key.rsplit_once('.') {
            Some((column, "asc")) if !column.is_empty() => Some(Order {
                column: column.to_owned(),
                descending: false,
            }),
            Some((column, "desc")) if !column.is_empty() => Some(Order {
                column: column.to_owned(),
                descending: true,
            }),
            _ => None,
        })
        .collect();
    let malformed = order.len() < keys.len();
    (order, malformed)
}

/// `columns`' value as column names.
fn parse_columns(value: &str) -> Result<Vec<String>, &'static str> {
    let names: Vec<String> = value.split(',').map(str::to_owned).collect();
    if names.iter().any(String::is_empty) {
        return Err("must name one or more columns separated by commas");
    }
    let mut seen = HashSet::new();
    if !names.iter().all(|name| seen.insert(name)) {
        return Err("must name each column once");
    }
    Ok(names)
}

impl ReadQuery {
    /// From the decoded query pairs, in the order they were given.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<ReadQuery, Rejected<ReadQuery>> {
        let mut problems = Problems::new();
        let mut query = ReadQuery {
            filters: Vec::new(),
            limit: DEFAULT_LIMIT,
            offset: 0,
            order: Vec::new(),
            columns: None,
            format: None,
            header_row: None,
            rendering: Rendering::default(),
        };
        // Over the budget, no expression is parsed: one problem says so.
        let filters = pairs.iter().filter(|(name, _)| name == "filter").count();
        let too_many_filters = match check_filter_count(filters) {
            Ok(()) => false,
            Err(rule) => {
                problems.push("filter", rule);
                true
            }
        };
        let single = [
            "limit",
            "offset",
            "order",
            "columns",
            "format",
            "header_row",
            "values",
            "dates",
        ];
        for_each_parameter(
            pairs,
            &single,
            &["filter"],
            &mut problems,
            |name, value, problems| {
                match name {
                    "filter" if too_many_filters => {}
                    "filter" => match parse_filter("filter", value) {
                        Ok(filter) => query.filters.push(filter),
                        Err(rule) => problems.push("filter", rule),
                    },
                    "order" => {
                        let (order, malformed) = parse_order(value);
                        if malformed {
                            problems.push("order", ORDER_RULE);
                        }
                        // The well-formed keys are still checked against the sheet.
                        query.order = order;
                    }
                    "columns" => match parse_columns(value) {
                        Ok(columns) => query.columns = Some(columns),
                        Err(rule) => problems.push("columns", rule),
                    },
                    "format" => match value {
                        "json" => query.format = Some(Format::Json),
                        "csv" => query.format = Some(Format::Csv),
                        _ => problems.push("format", "must be json or csv"),
                    },
                    "header_row" => {
                        query.header_row = row_number("header_row", value, problems)
                            .and_then(|row| std::num::NonZeroU32::new(row as u32));
                    }
                    "values" => match Values::parse(value) {
                        Some(values) => query.rendering.values = values,
                        None => problems.push("values", Values::RULE),
                    },
                    "dates" => match Dates::parse(value) {
                        Some(dates) => query.rendering.dates = dates,
                        None => problems.push("dates", Dates::RULE),
                    },
                    _ => paging(name, value, &mut query.limit, &mut query.offset, problems),
                }
            },
        );
        checked(query, problems)
    }
}

/// Takes a `limit` or `offset` parameter, as rows and listings page.
fn paging(name: &str, value: &str, limit: &mut usize, offset: &mut usize, problems: &mut Problems) {
    match name {
        "limit" => match parse_limit(value) {
            Ok(value) => *limit = value,
            Err(rule) => problems.push("limit", rule),
        },
        "offset" => match parse_offset(value) {
            Ok(value) => *offset = value,
            Err(rule) => problems.push("offset", rule),
        },
        _ => {}
    }
}

/// `limit`'s value: 0 to [`MAX_LIMIT`].
fn parse_limit(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(limit) if limit <= MAX_LIMIT => Ok(limit),
        _ => Err(format!("must be an integer from 0 to {MAX_LIMIT}")),
    }
}

/// The largest `offset`: the largest signed 64-bit integer, what the
/// OpenAPI document's `int64` allows.
pub const MAX_OFFSET: u64 = i64::MAX as u64;

/// `offset`'s value: 0 to [`MAX_OFFSET`].
fn parse_offset(value: &str) -> Result<usize, String> {
    match value.parse::<u64>() {
        Ok(offset) if offset <= MAX_OFFSET => Ok(usize::try_from(offset).unwrap_or(usize::MAX)),
        _ => Err(format!("must be an integer from 0 to {MAX_OFFSET}")),
    }
}

/// `GET /v1/spreadsheets` (§10.3): a page of the workbooks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListQuery {
    pub limit: usize,
    pub offset: usize,
}

impl ListQuery {
    /// `limit` and `offset`, each at most once, as for rows; nothing else.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<ListQuery, Problems> {
        let mut query = ListQuery {
            limit: DEFAULT_LIMIT,
            offset: 0,
        };
        let mut problems = Problems::new();
        let single = ["limit", "offset"];
        for_each_parameter(
            pairs,
            &single,
            &[],
            &mut problems,
            |name, value, problems| {
                paging(name, value, &mut query.limit, &mut query.offset, problems);
            },
        );
        problems.into_result(query)
    }
}

/// The query of `POST` rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InsertQuery {
    /// Upsert on this column (§10.2).
    pub on_conflict: Option<String>,
    /// Insert as new sheet rows before this row (§11.2).
    pub before: Option<u64>,
    /// The header row (§11.1).
    pub header_row: Option<u64>,
}

/// The query of `POST` rows: `on_conflict=<column>` (§10.2) or
/// `before=<row>` (§11.2), each at most once; nothing else.
pub fn insert_query_from_pairs(pairs: &[(String, String)]) -> Result<InsertQuery, Problems> {
    let mut problems = Problems::new();
    let mut query = InsertQuery::default();
    for_each_parameter(
        pairs,
        &["on_conflict", "before", "header_row"],
        &[],
        &mut problems,
        |name, value, problems| match (name, value) {
            ("on_conflict", "") => problems.push("on_conflict", "must name a column"),
            ("on_conflict", value) => query.on_conflict = Some(value.to_owned()),
            ("before", value) => query.before = row_number("before", value, problems),
            (_, value) => query.header_row = row_number("header_row", value, problems),
        },
    );
    if query.on_conflict.is_some() && query.before.is_some() {
        problems.push(
            "before",
            "cannot be combined with on_conflict: an upsert appends its new rows",
        );
    }
    problems.into_result(query)
}

/// The query of `PATCH` and `DELETE` rows: `header_row=<row>` (§11.1), at
/// most once; nothing else.
pub fn header_row_from_pairs(pairs: &[(String, String)]) -> Result<Option<u64>, Problems> {
    let mut problems = Problems::new();
    let mut header_row = None;
    for_each_parameter(
        pairs,
        &["header_row"],
        &[],
        &mut problems,
        |name, value, problems| header_row = row_number(name, value, problems),
    );
    problems.into_result(header_row)
}

/// A row number parameter's value: an integer of 1 or more.
fn row_number(name: &str, value: &str, problems: &mut Problems) -> Option<u64> {
    let number = value
        .parse::<u64>()
        .ok()
        .filter(|&row| (1..=1_048_576).contains(&row));
    if number.is_none() {
        problems.push(name, "must be a row number (an integer from 1 to 1048576)");
    }
    number
}

/// Calls `take` with each parameter of the query that `single` names, at
/// its first occurrence, and each that `repeated` names, at every one
/// (§9): a single-valued one given again is reported once as given twice,
/// any other name once as not known. In the order they were given, so
/// that problems are named in it.
fn for_each_parameter<'a>(
    pairs: &'a [(String, String)],
    single: &[&str],
    repeated: &[&str],
    problems: &mut Problems,
    mut take: impl FnMut(&'a str, &'a str, &mut Problems),
) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (name, value) in pairs {
        let name = name.as_str();
        let count = seen.entry(name).or_default();
        *count += 1;
        match *count {
            _ if repeated.contains(&name) => take(name, value, problems),
            1 if single.contains(&name) => take(name, value, problems),
            1 => problems.push(name, "is not a known query parameter"),
            2 if single.contains(&name) => problems.push(name, "must be given at most once"),
            _ => {}
        }
    }
}

/// Refuses every query parameter: for the routes that take none (§9).
pub fn no_query_parameters(pairs: &[(String, String)]) -> Result<(), Problems> {
    let mut problems = Problems::new();
    for_each_parameter(pairs, &[], &[], &mut problems, |_, _, _| {});
    problems.into_result(())
}
