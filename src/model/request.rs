//! Request bodies and queries, checked and turned into types.
//!
//! Everything that can be judged without the sheet is judged here: the shape
//! of the body, unknown fields, value rules, filter syntax. Column names are
//! resolved later, against the sheet's header (see `sheet`).

use serde_json::{Map, Value};

use super::filter::{FilterExpr, parse_filter};
use super::problems::Problems;
use super::value::Cell;

/// The most rows one read returns (contract §4.3).
pub const MAX_LIMIT: usize = 100_000;
/// The number of rows a read returns when no `limit` is given.
pub const DEFAULT_LIMIT: usize = 1000;

/// One row of an insert: its place in `data` and its cells by column name.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRow {
    pub index: usize,
    pub cells: Vec<(String, Cell)>,
}

/// `POST` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertRows {
    pub rows: Vec<NewRow>,
}

/// Which rows an update or delete addresses.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    /// Rows satisfying every expression.
    Filter(Vec<FilterExpr>),
    /// One row, by the number the sheet shows for it.
    Row(u64),
}

/// `PATCH` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateRows {
    pub selector: Selector,
    pub data: Vec<(String, Cell)>,
}

/// `DELETE` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteRows {
    pub selector: Selector,
}

/// `GET` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadQuery {
    pub filters: Vec<FilterExpr>,
    pub limit: usize,
    pub offset: usize,
}

impl InsertRows {
    pub fn from_json(body: Value) -> Result<InsertRows, Problems> {
        let mut problems = Problems::new();
        let body = object_body(body, &["data"], &mut problems)?;
        let mut rows = Vec::new();
        match body.get("data") {
            None => problems.push("data", "is required"),
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let field = format!("data[{index}]");
                    let Value::Object(map) = item else {
                        problems.push(field, "must be an object");
                        continue;
                    };
                    let cells = cells_from_json(map, &field, &mut problems);
                    let sets_nothing = map.values().all(|v| v.is_null() || v.as_str() == Some(""));
                    if sets_nothing {
                        problems.push(field, "must set at least one non-null value");
                    }
                    rows.push(NewRow { index, cells });
                }
            }
            Some(_) => problems.push("data", "must be an array"),
        }
        problems.into_result(InsertRows { rows })
    }
}

impl InsertRows {
    /// Refuses a batch of more than `max` rows.
    pub fn at_most(self, max: usize) -> Result<InsertRows, Problems> {
        if self.rows.len() > max {
            let rule = format!(
                "holds {} rows; one request may insert at most {max}",
                self.rows.len()
            );
            return Err(Problems::one("data", rule));
        }
        Ok(self)
    }
}

impl UpdateRows {
    pub fn from_json(body: Value) -> Result<UpdateRows, Problems> {
        let mut problems = Problems::new();
        let body = object_body(body, &["type", "filter", "row", "data"], &mut problems)?;
        let selector = selector_from_json(&body, &mut problems);
        let data = match body.get("data") {
            None => {
                problems.push("data", "is required");
                Vec::new()
            }
            Some(Value::Object(map)) if map.is_empty() => {
                problems.push("data", "must set at least one column");
                Vec::new()
            }
            Some(Value::Object(map)) => cells_from_json(map, "data", &mut problems),
            Some(_) => {
                problems.push("data", "must be an object of column names to values");
                Vec::new()
            }
        };
        match selector {
            Some(selector) if problems.is_empty() => Ok(UpdateRows { selector, data }),
            _ => Err(problems),
        }
    }
}

impl DeleteRows {
    pub fn from_json(body: Value) -> Result<DeleteRows, Problems> {
        let mut problems = Problems::new();
        let body = object_body(body, &["type", "filter", "row"], &mut problems)?;
        match selector_from_json(&body, &mut problems) {
            Some(selector) if problems.is_empty() => Ok(DeleteRows { selector }),
            _ => Err(problems),
        }
    }
}

impl ReadQuery {
    /// From the decoded query pairs, in the order they were given.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<ReadQuery, Problems> {
        let mut problems = Problems::new();
        let mut query = ReadQuery {
            filters: Vec::new(),
            limit: DEFAULT_LIMIT,
            offset: 0,
        };
        for (name, value) in pairs {
            match name.as_str() {
                "filter" => match parse_filter("filter", value) {
                    Ok(filter) => query.filters.push(filter),
                    Err(rule) => problems.push("filter", rule),
                },
                "limit" => match value.parse::<usize>() {
                    Ok(limit) if limit <= MAX_LIMIT => query.limit = limit,
                    _ => {
                        problems.push("limit", format!("must be an integer from 0 to {MAX_LIMIT}"))
                    }
                },
                "offset" => match value.parse::<usize>() {
                    Ok(offset) => query.offset = offset,
                    Err(_) => problems.push("offset", "must be an integer of 0 or more"),
                },
                other => problems.push(other, "is not a known query parameter"),
            }
        }
        problems.into_result(query)
    }
}

/// The body as an object, with every field outside `known` reported.
fn object_body(
    body: Value,
    known: &[&str],
    problems: &mut Problems,
) -> Result<Map<String, Value>, Problems> {
    let Value::Object(map) = body else {
        return Err(Problems::one("body", "must be a JSON object"));
    };
    for key in map.keys().filter(|key| !known.contains(&key.as_str())) {
        problems.push(key.as_str(), "is not a known field");
    }
    Ok(map)
}

/// Converts each value of `map`, reporting bad ones under `<field>.<column>`.
fn cells_from_json(
    map: &Map<String, Value>,
    field: &str,
    problems: &mut Problems,
) -> Vec<(String, Cell)> {
    let mut cells = Vec::with_capacity(map.len());
    for (column, value) in map {
        if column.is_empty() {
            problems.push(field, "a column name must not be empty");
            continue;
        }
        match Cell::from_json(value) {
            Ok(cell) => cells.push((column.clone(), cell)),
            Err(rule) => problems.push(format!("{field}.{column}"), rule),
        }
    }
    cells
}

/// `type` with its `filter` or `row` (contract §4.2 and §4.4).
fn selector_from_json(body: &Map<String, Value>, problems: &mut Problems) -> Option<Selector> {
    let filter = body.get("filter");
    let row = body.get("row");
    match body.get("type").map(Value::as_str) {
        None => {
            problems.push("type", "is required");
            None
        }
        Some(Some("filter")) => {
            if row.is_some() {
                problems.push("row", "is not allowed when type is filter");
            }
            match filter {
                None => {
                    problems.push("filter", "is required when type is filter");
                    None
                }
                Some(filter) => filters_from_json(filter, problems).map(Selector::Filter),
            }
        }
        Some(Some("row")) => {
            if filter.is_some() {
                problems.push("filter", "is not allowed when type is row");
            }
            match row {
                None => {
                    problems.push("row", "is required when type is row");
                    None
                }
                Some(row) => match row.as_u64() {
                    Some(n) if n >= 1 => Some(Selector::Row(n)),
                    _ => {
                        problems.push("row", "must be a row number (an integer of 1 or more)");
                        None
                    }
                },
            }
        }
        Some(_) => {
            problems.push("type", "must be one of filter or row");
            None
        }
    }
}

/// A filter expression, or a non-empty array of them.
fn filters_from_json(filter: &Value, problems: &mut Problems) -> Option<Vec<FilterExpr>> {
    let parse =
        |field: String, expr: &str, problems: &mut Problems| match parse_filter(&field, expr) {
            Ok(filter) => Some(filter),
            Err(rule) => {
                problems.push(field, rule);
                None
            }
        };
    match filter {
        Value::String(expr) => parse("filter".into(), expr, problems).map(|f| vec![f]),
        Value::Array(items) if items.is_empty() => {
            problems.push("filter", "must not be an empty array");
            None
        }
        Value::Array(items) => {
            let mut filters = Vec::with_capacity(items.len());
            let mut all_parsed = true;
            for (i, item) in items.iter().enumerate() {
                let field = format!("filter[{i}]");
                let parsed = match item {
                    Value::String(expr) => parse(field, expr, problems),
                    _ => {
                        problems.push(field, "must be a filter expression string");
                        None
                    }
                };
                match parsed {
                    Some(f) => filters.push(f),
                    None => all_parsed = false,
                }
            }
            all_parsed.then_some(filters)
        }
        _ => {
            problems.push("filter", "must be a filter expression or an array of them");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn insert_error(body: Value) -> String {
        InsertRows::from_json(body).unwrap_err().to_string()
    }

    fn update_error(body: Value) -> String {
        UpdateRows::from_json(body).unwrap_err().to_string()
    }

    #[test]
    fn insert_gathers_every_problem() {
        assert_eq!(
            insert_error(json!({"data": [{"a": 1}, 5, {"a": null}, {"b": {"x": 1}}], "extra": 1})),
            "extra: is not a known field, data[1]: must be an object, \
             data[2]: must set at least one non-null value, \
             data[3].b: must not be an object or array"
        );
        assert_eq!(insert_error(json!({})), "data: is required");
        assert_eq!(insert_error(json!([])), "body: must be a JSON object");
        assert_eq!(insert_error(json!({"data": {}})), "data: must be an array");
    }

    #[test]
    fn insert_accepts_an_empty_batch() {
        assert_eq!(
            InsertRows::from_json(json!({"data": []})).unwrap().rows,
            vec![]
        );
    }

    #[test]
    fn update_requires_type_and_data() {
        assert_eq!(
            update_error(json!({})),
            "type: is required, data: is required"
        );
        assert_eq!(
            update_error(json!({"type": "x", "data": {"a": 1}})),
            "type: must be one of filter or row"
        );
        assert_eq!(
            update_error(json!({"type": "row", "row": 2, "filter": "a:eq:1", "data": {"a": 1}})),
            "filter: is not allowed when type is row"
        );
        assert_eq!(
            update_error(json!({"type": "filter", "row": 2, "filter": "a:eq:1", "data": {}})),
            "row: is not allowed when type is filter, data: must set at least one column"
        );
        assert_eq!(
            update_error(json!({"type": "row", "row": 0, "data": {"a": 1}})),
            "row: must be a row number (an integer of 1 or more)"
        );
        assert_eq!(
            update_error(json!({"type": "filter", "filter": [], "data": {"a": 1}})),
            "filter: must not be an empty array"
        );
        assert_eq!(
            update_error(json!({"type": "filter", "fliter": "a:eq:1", "data": {"a": 1}})),
            "fliter: is not a known field, filter: is required when type is filter"
        );
    }

    #[test]
    fn update_reports_filter_array_positions() {
        assert_eq!(
            update_error(json!({"type": "filter", "filter": ["a:eq:1", "b", 3], "data": {"a": 1}})),
            "filter[1]: \"b\" is not a filter expression (column:operator:value), \
             filter[2]: must be a filter expression string"
        );
    }

    #[test]
    fn read_query_checks_limit_and_unknown_parameters() {
        let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let q = ReadQuery::from_pairs(&pairs(&[("limit", "0"), ("filter", "a:eq:1")])).unwrap();
        assert_eq!((q.limit, q.offset, q.filters.len()), (0, 0, 1));
        assert_eq!(
            ReadQuery::from_pairs(&pairs(&[("limit", "100001"), ("offest", "1")]))
                .unwrap_err()
                .to_string(),
            "limit: must be an integer from 0 to 100000, offest: is not a known query parameter"
        );
    }
}
