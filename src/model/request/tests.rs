//! Checks of request bodies and queries.

use super::*;
use crate::model::filter::{MAX_FILTER_BYTES, MAX_FILTERS, MAX_IN_VALUES};
use crate::model::value::MAX_TEXT_CHARS;
use serde_json::json;

fn text(body: Value) -> Vec<u8> {
    body.to_string().into_bytes()
}

fn insert_error(body: Value) -> String {
    InsertRows::from_json(&text(body), 100)
        .unwrap_err()
        .problems
        .to_string()
}

fn update_error(body: Value) -> String {
    UpdateRows::from_json(&text(body))
        .unwrap_err()
        .problems
        .to_string()
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
        InsertRows::from_json(&text(json!({"data": []})), 100)
            .unwrap()
            .rows,
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
        "type: must be one of filter or row or rows"
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
         filter[2]: must be a filter expression string or a filter object"
    );
}

#[test]
fn a_rejected_request_keeps_what_could_be_read() {
    let rejected =
        InsertRows::from_json(&text(json!({"data": [{"a": {}, "b": 1}, {"c": 2}]})), 100)
            .unwrap_err();
    assert_eq!(
        rejected.problems.to_string(),
        "data[0].a: must not be an object or array"
    );
    let columns: Vec<_> = rejected
        .partial
        .rows
        .iter()
        .flat_map(|row| row.cells.iter().map(|(name, _)| name.as_str()))
        .collect();
    assert_eq!(columns, ["b", "c"]);

    let rejected =
        DeleteRows::from_json(&text(json!({"type": "filter", "filter": ["a:eq:1", "b"]})))
            .unwrap_err();
    let Selector::Filter(filters) = rejected.partial.selector else {
        panic!("a filter selector")
    };
    assert_eq!(filters.len(), 1);
}

#[test]
fn insert_refuses_too_many_rows() {
    assert_eq!(
        InsertRows::from_json(&text(json!({"data": [{"a": 1}, {"a": 2}]})), 1)
            .unwrap_err()
            .problems
            .to_string(),
        "data: holds 2 rows; one request may insert at most 1"
    );
}

/// 20,000 emoji: 20,000 characters, 40,000 UTF-16 code units.
fn emoji() -> String {
    "😀".repeat(20_000)
}

#[test]
fn text_and_column_names_are_measured_in_utf16_code_units() {
    assert_eq!(
        insert_error(json!({"data": [{"name": "ok"}, {"name": emoji()}]})),
        "data[1].name: is longer than 32767 UTF-16 code units (the xlsx limit of a cell)"
    );
    // On a blank sheet, keys become the header's cells.
    assert_eq!(
        insert_error(json!({"data": [{ emoji(): 1 }]})),
        "data[0]: a column name must be at most 32767 UTF-16 code units"
    );
    assert_eq!(
        update_error(json!({"type": "row", "row": 2, "data": {"name": emoji()}})),
        "data.name: is longer than 32767 UTF-16 code units (the xlsx limit of a cell)"
    );
    assert_eq!(
        update_error(json!({"type": "row", "row": 2, "data": { emoji(): 1 }})),
        "data: a column name must be at most 32767 UTF-16 code units"
    );
    let fits = "😀".repeat(MAX_TEXT_CHARS / 2);
    assert!(InsertRows::from_json(&text(json!({"data": [{ fits.clone(): fits }]})), 1).is_ok());
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn filter_count_is_budgeted_in_queries_and_bodies() {
    let query = |n: usize| {
        let mut p = vec![("limit", "1"); 1];
        p.extend(std::iter::repeat_n(("filter", "a:eq:1"), n));
        ReadQuery::from_pairs(&pairs(&p))
    };
    assert_eq!(query(MAX_FILTERS).unwrap().filters.len(), MAX_FILTERS);
    let rejected = query(MAX_FILTERS + 1).unwrap_err();
    assert_eq!(
        rejected.problems.to_string(),
        "filter: has 101 expressions; one request may have at most 100"
    );
    assert!(rejected.partial.filters.is_empty(), "none parsed");

    let body = |n: usize| text(json!({"type": "filter", "filter": vec!["a:eq:1"; n]}));
    assert!(DeleteRows::from_json(&body(MAX_FILTERS)).is_ok());
    assert_eq!(
        DeleteRows::from_json(&body(MAX_FILTERS + 1))
            .unwrap_err()
            .problems
            .to_string(),
        "filter: has 101 expressions; one request may have at most 100"
    );
    assert_eq!(
        update_error(json!({"type": "filter", "filter": vec!["a:eq:1"; 20_001], "data": {"a": 1}})),
        "filter: has 20001 expressions; one request may have at most 100"
    );
}

#[test]
fn in_values_and_expression_bytes_are_budgeted_per_expression() {
    let values = (0..=MAX_IN_VALUES)
        .map(|i| i.to_string())
        .collect::<Vec<_>>();
    let big_in = format!("a:in:{}", values.join(","));
    let long = format!("a:eq:{}", "x".repeat(MAX_FILTER_BYTES));
    assert_eq!(
        update_error(
            json!({"type": "filter", "filter": ["a:eq:1", big_in, long], "data": {"a": 1}})
        ),
        "filter[1]: in lists 100001 values; one in list may have at most 100000, \
         filter[2]: is 1048581 bytes long; one filter expression may have at most 1048576 bytes (1 MiB)"
    );
    assert_eq!(
        DeleteRows::from_json(&text(json!({"type": "filter", "filter": big_in})))
            .unwrap_err()
            .problems
            .to_string(),
        "filter: in lists 100001 values; one in list may have at most 100000"
    );
    assert_eq!(
        ReadQuery::from_pairs(&pairs(&[("filter", &big_in)]))
            .unwrap_err()
            .problems
            .to_string(),
        "filter: in lists 100001 values; one in list may have at most 100000"
    );
}

#[test]
fn single_valued_parameters_may_not_repeat() {
    let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
        p.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        ReadQuery::from_pairs(&pairs(&[("limit", "1"), ("limit", "2"), ("limit", "3")]))
            .unwrap_err()
            .problems
            .to_string(),
        "limit: must be given at most once"
    );
    assert!(ReadQuery::from_pairs(&pairs(&[("filter", "a:eq:1"), ("filter", "b:eq:2")])).is_ok());
    assert_eq!(
        no_query_parameters(&pairs(&[("dry_run", "true"), ("dry_run", "1")]))
            .unwrap_err()
            .to_string(),
        "dry_run: is not a known query parameter"
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
            .problems
            .to_string(),
        "limit: must be an integer from 0 to 100000, offest: is not a known query parameter"
    );
}
