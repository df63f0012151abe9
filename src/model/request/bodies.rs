//! The bodies of the row routes: what serde reads each into (and the
//! OpenAPI document shows, through `ToSchema`), and the checks that turn
//! them into row requests (`rows`), naming every problem at once.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::{
    ArrayBuilder, ArrayItems, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};

use super::queries::MAX_LIMIT;
use super::{Rejected, body_of, body_of_object, checked, report_unknown};
use crate::model::filter::{FilterExpr, check_filter_count, parse_filter, parse_filter_object};
use crate::model::header::ROW_KEY;
use crate::model::problems::Problems;
use crate::model::value::{Cell, MAX_TEXT_CHARS, fits_in_a_cell};

use super::rows::{DeleteRows, InsertRows, NewRow, RowValues, Selector, UpdateRows};

/// Rows to insert.
// `POST /v1/data/{id}/{sheet}`, contract §4.1.
#[derive(Debug, Deserialize, ToSchema)]
pub struct InsertBody {
    /// Rows to append, each an object of column name → value that sets at
    /// least one non-null value.
    #[schema(schema_with = rows_schema, required = true)]
    data: Option<Value>,
    #[serde(flatten)]
    #[schema(ignore)]
    unknown: Map<String, Value>,
}

/// Which rows to update, and the values to set.
// `PATCH /v1/data/{id}/{sheet}`, contract §4.2, and §10.2 `type: rows`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct UpdateBody {
    #[schema(value_type = UpdateType, required = true)]
    r#type: Option<Value>,
    /// With `type: filter`: `column:operator:value`, or a non-empty array of
    /// them that must all hold.
    #[schema(schema_with = filter_schema)]
    filter: Option<Value>,
    /// With `type: row`: the row number, as the spreadsheet app shows it.
    #[schema(value_type = Option<u64>, minimum = 1)]
    row: Option<Value>,
    /// With `type: rows` and `data` an object (v1.2): the numbers of the
    /// rows to set to `data`, as the sheet stands before the request.
    #[schema(value_type = Option<Vec<u64>>)]
    rows: Option<Value>,
    /// Column name → new value; only these cells change, `null` clears one.
    /// With `type: rows` and no `rows`, an array of such objects, each with
    /// `_row`, the number of the row it sets.
    #[schema(schema_with = update_data_schema, required = true)]
    data: Option<Value>,
    #[serde(flatten)]
    #[schema(ignore)]
    unknown: Map<String, Value>,
}

/// How an update picks its rows.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum UpdateType {
    /// The rows matching `filter`, all set to `data`.
    Filter,
    /// The one row numbered `row`, set to `data`.
    Row,
    /// The rows numbered in `rows`, each set to `data` (v1.2); without
    /// `rows`, each row of `data` by its `_row`, with its own values (v1.1).
    Rows,
}

/// Which rows to delete.
// `DELETE /v1/data/{id}/{sheet}`, contract §4.4.
#[derive(Debug, Deserialize, ToSchema)]
pub struct DeleteBody {
    #[schema(value_type = SelectorType, required = true)]
    r#type: Option<Value>,
    /// With `type: filter`: `column:operator:value`, or a non-empty array of
    /// them that must all hold.
    #[schema(schema_with = filter_schema)]
    filter: Option<Value>,
    /// With `type: row`: the row number, as the spreadsheet app shows it.
    #[schema(value_type = Option<u64>, minimum = 1)]
    row: Option<Value>,
    /// With `type: rows` (v1.2): the numbers of the rows to delete, as the
    /// sheet stands before the request; all or nothing.
    #[schema(value_type = Option<Vec<u64>>)]
    rows: Option<Value>,
    #[serde(flatten)]
    #[schema(ignore)]
    unknown: Map<String, Value>,
}

/// How an update or delete picks its rows.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SelectorType {
    /// The rows matching `filter`.
    Filter,
    /// The one row numbered `row`.
    Row,
    /// The rows numbered in `rows` (v1.2).
    Rows,
}

/// A cell value: text (`YYYY/MM/DD`, `YYYY/MM/DD HH:MM[:SS]`, ISO 8601
/// dates and date-times and `HH:MM[:SS]` times make dates and times), a
/// number, a boolean, null for an empty cell, or a formula object (§11.4).
fn cell_value_schema() -> Schema {
    let scalar = ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([
            Type::String,
            Type::Number,
            Type::Boolean,
            Type::Null,
        ]))
        .description(Some(
            "text (YYYY/MM/DD or YYYY/MM/DD HH:MM[:SS] makes a date or date-time, as do ISO 8601 \
             2024-06-23, 2024-06-23T10:00[:SS[.fff]] with an optional Z or offset converted to UTC; \
             HH:MM or HH:MM:SS makes a time of day), number, boolean, or null",
        ));
    OneOfBuilder::new()
        .item(scalar)
        .item(formula_schema())
        .into()
}

/// `{"formula": "=B2*C2"}`: a formula cell, computed before the answer.
fn formula_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .title(Some("Formula"))
        .description(Some(
            "a formula cell; its result is computed before the answer. A formula the engine \
             cannot parse, or one naming another workbook or a missing sheet, is a 400",
        ))
        .property(
            "formula",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(8193))
                .examples([serde_json::json!("=B2*C2")]),
        )
        .required("formula")
        .additional_properties(Some(
            utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
        ))
}

/// Column name → cell value, at least one entry.
fn values_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(cell_value_schema()))
        .min_properties(Some(1))
        .into()
}

/// `data` of an update: the values, or with `type: rows` an array of rows
/// each with `_row`.
fn update_data_schema() -> Schema {
    let row = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "_row",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1)),
        )
        .required("_row")
        .additional_properties(Some(cell_value_schema()))
        .min_properties(Some(2));
    OneOfBuilder::new()
        .item(values_schema())
        .item(ArrayBuilder::new().items(row).min_items(Some(1)))
        .into()
}

fn rows_schema() -> Schema {
    ArrayBuilder::new()
        .items(ArrayItems::RefOrSchema(Box::new(values_schema().into())))
        .into()
}

fn filter_schema() -> Schema {
    let expression = || {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "column:operator:value; the column may be in double quotes (\"Report ID : W1\":eq:x, a \" inside doubled)",
            ))
    };
    let either = OneOfBuilder::new()
        .item(expression())
        .item(filter_object_schema());
    OneOfBuilder::new()
        .item(expression())
        .item(ArrayBuilder::new().items(either).min_items(Some(1)))
        .item(filter_object_schema())
        .into()
}

/// `{"column": "…", "op": "eq", "value": "…"}` (§11.4).
fn filter_object_schema() -> ObjectBuilder {
    let operators = [
        "eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "in", "is",
    ];
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .title(Some("FilterObject"))
        .description(Some("a filter on any column, no quoting needed"))
        .property(
            "column",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1)),
        )
        .property(
            "op",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(operators)),
        )
        .property(
            "value",
            ObjectBuilder::new()
                .schema_type(SchemaType::from_iter([
                    Type::String,
                    Type::Number,
                    Type::Boolean,
                ]))
                .description(Some(
                    "the value; for in the comma-separated list; for is null|notnull|true|false",
                )),
        )
        .required("column")
        .required("op")
        .required("value")
        .additional_properties(Some(
            utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
        ))
}

impl InsertRows {
    /// Checks an insert body of at most `max_rows` rows.
    pub fn from_json(json: &[u8], max_rows: usize) -> Result<InsertRows, Rejected<InsertRows>> {
        InsertRows::from_body(body_of(json), max_rows)
    }

    /// [`InsertRows::from_json`] for a body already parsed: a batch's
    /// operation without its own fields.
    pub fn from_object(
        fields: Map<String, Value>,
        max_rows: usize,
    ) -> Result<InsertRows, Rejected<InsertRows>> {
        InsertRows::from_body(body_of_object(fields), max_rows)
    }

    fn from_body(
        body: Result<InsertBody, Problems>,
        max_rows: usize,
    ) -> Result<InsertRows, Rejected<InsertRows>> {
        let body = body.map_err(|problems| Rejected {
            partial: InsertRows { rows: Vec::new() },
            problems,
        })?;
        let mut problems = Problems::new();
        report_unknown(&body.unknown, &mut problems);
        let mut rows = Vec::new();
        match body.data {
            None | Some(Value::Null) => problems.push("data", "is required"),
            Some(Value::Array(items)) if items.len() > max_rows => problems.push(
                "data",
                format!(
                    "holds {} rows; one request may insert at most {max_rows}",
                    items.len()
                ),
            ),
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
        checked(InsertRows { rows }, problems)
    }
}

impl UpdateRows {
    pub fn from_json(json: &[u8]) -> Result<UpdateRows, Rejected<UpdateRows>> {
        UpdateRows::from_body(body_of(json))
    }

    /// [`UpdateRows::from_json`] for a body already parsed.
    pub fn from_object(fields: Map<String, Value>) -> Result<UpdateRows, Rejected<UpdateRows>> {
        UpdateRows::from_body(body_of_object(fields))
    }

    fn from_body(body: Result<UpdateBody, Problems>) -> Result<UpdateRows, Rejected<UpdateRows>> {
        let body = body.map_err(|problems| Rejected {
            partial: UpdateRows {
                selector: Selector::Filter(Vec::new()),
                data: Vec::new(),
                rows: Vec::new(),
            },
            problems,
        })?;
        let mut problems = Problems::new();
        report_unknown(&body.unknown, &mut problems);
        let rows_type = body.r#type.as_ref().and_then(Value::as_str) == Some("rows");
        if rows_type && body.rows.is_none() {
            return rows_update(&body, problems);
        }
        let selector = selector_from_json(
            body.r#type.as_ref(),
            body.filter.as_ref(),
            body.row.as_ref(),
            body.rows.as_ref(),
            "must be one of filter or row or rows",
            &mut problems,
        );
        let data = match body.data {
            None | Some(Value::Null) => {
                problems.push("data", "is required");
                Vec::new()
            }
            Some(Value::Object(map)) if map.is_empty() => {
                problems.push("data", "must set at least one column");
                Vec::new()
            }
            Some(Value::Object(map)) => cells_from_json(&map, "data", &mut problems),
            Some(_) => {
                problems.push("data", "must be an object of column names to values");
                Vec::new()
            }
        };
        checked(
            UpdateRows {
                selector,
                data,
                rows: Vec::new(),
            },
            problems,
        )
    }
}

/// `{"type": "rows", "data": [{"_row": 5, "age": 30}, …]}` (§10.2): each
/// row by number with its own values; a row given twice is a problem.
fn rows_update(
    body: &UpdateBody,
    mut problems: Problems,
) -> Result<UpdateRows, Rejected<UpdateRows>> {
    for (field, given) in [("filter", &body.filter), ("row", &body.row)] {
        if given.is_some() {
            problems.push(field, "is not allowed when type is rows");
        }
    }
    let mut rows = Vec::new();
    match &body.data {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut seen = HashMap::new();
            for (i, item) in items.iter().enumerate() {
                let field = format!("data[{i}]");
                let Value::Object(map) = item else {
                    problems.push(field, "must be an object with _row and the values to set");
                    continue;
                };
                let row = match map.get(ROW_KEY).map(Value::as_u64) {
                    None => {
                        problems.push(format!("{field}._row"), "is required");
                        None
                    }
                    Some(Some(n)) if n >= 1 => Some(n),
                    Some(_) => {
                        let rule = "must be a row number (an integer of 1 or more)";
                        problems.push(format!("{field}._row"), rule);
                        None
                    }
                };
                let mut values = map.clone();
                values.remove(ROW_KEY);
                if values.is_empty() {
                    problems.push(field.clone(), "must set at least one column");
                }
                let cells = cells_from_json(&values, &field, &mut problems);
                let Some(row) = row else { continue };
                if let Some(first) = seen.insert(row, i) {
                    let rule = format!("row {row} is given twice (also in data[{first}])");
                    problems.push(format!("{field}._row"), rule);
                }
                rows.push(RowValues { field, row, cells });
            }
        }
        None | Some(Value::Null) => problems.push("data", "is required"),
        Some(_) => problems.push(
            "data",
            "must be a non-empty array of rows when type is rows: objects with _row and the values to set",
        ),
    }
    checked(
        UpdateRows {
            selector: Selector::Rows,
            data: Vec::new(),
            rows,
        },
        problems,
    )
}

impl DeleteRows {
    pub fn from_json(json: &[u8]) -> Result<DeleteRows, Rejected<DeleteRows>> {
        DeleteRows::from_body(body_of(json))
    }

    /// [`DeleteRows::from_json`] for a body already parsed.
    pub fn from_object(fields: Map<String, Value>) -> Result<DeleteRows, Rejected<DeleteRows>> {
        DeleteRows::from_body(body_of_object(fields))
    }

    fn from_body(body: Result<DeleteBody, Problems>) -> Result<DeleteRows, Rejected<DeleteRows>> {
        let body = body.map_err(|problems| Rejected {
            partial: DeleteRows {
                selector: Selector::Filter(Vec::new()),
            },
            problems,
        })?;
        let mut problems = Problems::new();
        report_unknown(&body.unknown, &mut problems);
        let selector = selector_from_json(
            body.r#type.as_ref(),
            body.filter.as_ref(),
            body.row.as_ref(),
            body.rows.as_ref(),
            "must be one of filter or row or rows",
            &mut problems,
        );
        checked(DeleteRows { selector }, problems)
    }
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
        if column == ROW_KEY {
            problems.push(
                format!("{field}.{ROW_KEY}"),
                "is the row number: no write sets it",
            );
            continue;
        }
        if !fits_in_a_cell(column) {
            // It would become a header cell on a blank sheet.
            problems.push(
                field,
                format!("a column name must be at most {MAX_TEXT_CHARS} UTF-16 code units"),
            );
            continue;
        }
        match Cell::from_json(value) {
            Ok(cell) => cells.push((column.clone(), cell)),
            Err(rule) => problems.push(format!("{field}.{column}"), rule),
        }
    }
    cells
}

/// `type` with its `filter` or `row` (contract §4.2 and §4.4). When they
/// are not valid, an empty filter list stands in, so that the filters that
/// could be read are still checked against the sheet. `types` is the rule
/// for a `type` that is none of the request's types.
fn selector_from_json(
    kind: Option<&Value>,
    filter: Option<&Value>,
    row: Option<&Value>,
    numbers: Option<&Value>,
    types: &'static str,
    problems: &mut Problems,
) -> Selector {
    let nothing = || Selector::Filter(Vec::new());
    let kind = kind.filter(|v| !v.is_null()).map(Value::as_str);
    if numbers.is_some() && kind != Some(Some("rows")) {
        problems.push("rows", "is allowed only when type is rows");
    }
    match kind {
        None => {
            problems.push("type", "is required");
            filter.map_or_else(nothing, |f| {
                Selector::Filter(filters_from_json(f, problems))
            })
        }
        Some(Some("filter")) => {
            if row.is_some() {
                problems.push("row", "is not allowed when type is filter");
            }
            match filter {
                None => {
                    problems.push("filter", "is required when type is filter");
                    nothing()
                }
                Some(filter) => Selector::Filter(filters_from_json(filter, problems)),
            }
        }
        Some(Some("row")) => {
            if filter.is_some() {
                problems.push("filter", "is not allowed when type is row");
            }
            match row.map(Value::as_u64) {
                None => {
                    problems.push("row", "is required when type is row");
                    nothing()
                }
                Some(Some(n)) if n >= 1 => Selector::Row(n),
                Some(_) => {
                    problems.push("row", "must be a row number (an integer of 1 or more)");
                    nothing()
                }
            }
        }
        Some(Some("rows")) => {
            for (field, given) in [("filter", filter), ("row", row)] {
                if given.is_some() {
                    problems.push(field, "is not allowed when type is rows");
                }
            }
            match numbers {
                None => {
                    problems.push("rows", "is required when type is rows");
                    nothing()
                }
                Some(numbers) => Selector::Numbers(row_numbers(numbers, problems)),
            }
        }
        Some(_) => {
            problems.push("type", types);
            nothing()
        }
    }
}

/// `rows` of a `type: rows` delete or update (§11.2): a non-empty array of
/// row numbers, each at most once, as many as one read may return.
fn row_numbers(numbers: &Value, problems: &mut Problems) -> Vec<u64> {
    let Value::Array(items) = numbers else {
        problems.push("rows", "must be an array of row numbers");
        return Vec::new();
    };
    if items.is_empty() {
        problems.push("rows", "must name at least one row");
    }
    if items.len() > MAX_LIMIT {
        problems.push(
            "rows",
            format!(
                "names {} rows; at most {MAX_LIMIT} are allowed",
                items.len()
            ),
        );
        return Vec::new();
    }
    let mut seen = HashSet::new();
    let mut found = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item.as_u64().filter(|&n| n >= 1) {
            Some(n) if !seen.insert(n) => {
                problems.push(format!("rows[{index}]"), format!("names row {n} again"));
            }
            Some(n) => found.push(n),
            None => problems.push(
                format!("rows[{index}]"),
                "must be a row number (an integer of 1 or more)",
            ),
        }
    }
    found
}

/// A filter expression, or a non-empty array of them: the ones that parse.
fn filters_from_json(filter: &Value, problems: &mut Problems) -> Vec<FilterExpr> {
    let mut parse = |field: String, expr: &Value| match expr {
        Value::String(expr) => match parse_filter(&field, expr) {
            Ok(filter) => Some(filter),
            Err(rule) => {
                problems.push(field, rule);
                None
            }
        },
        Value::Object(object) => parse_filter_object(&field, object, problems),
        _ => {
            problems.push(
                field,
                "must be a filter expression string or a filter object",
            );
            None
        }
    };
    match filter {
        Value::String(_) | Value::Object(_) => parse("filter".into(), filter).into_iter().collect(),
        Value::Array(items) if items.is_empty() => {
            problems.push("filter", "must not be an empty array");
            Vec::new()
        }
        Value::Array(items) => match check_filter_count(items.len()) {
            // Over the budget, no expression is parsed: one problem says so.
            Err(rule) => {
                problems.push("filter", rule);
                Vec::new()
            }
            Ok(()) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| parse(format!("filter[{i}]"), item))
                .collect(),
        },
        _ => {
            problems.push("filter", "must be a filter expression or an array of them");
            Vec::new()
        }
    }
}
