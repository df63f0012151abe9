//! Request bodies and queries, checked and turned into types.
//!
//! Each body is described once: the `*Body` types below are what serde
//! reads a request into *and* what the OpenAPI document shows (utoipa's
//! `ToSchema`). They take any JSON value in each field, so that the checks
//! after them can name every problem at once instead of serde's first; the
//! schema annotations say what the checks accept.
//!
//! Everything that can be judged without the sheet is judged here: the shape
//! of the body, unknown fields, value rules, filter syntax and the filter
//! budgets (`filter::MAX_FILTERS` and the others). Column names are
//! resolved later, against the sheet's header (see `sheet`); a request with
//! problems here still carries what could be read of it ([`Rejected`]), so
//! that the sheet can add the problems only it can see.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::{
    ArrayBuilder, ArrayItems, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};

use super::filter::{FilterExpr, check_filter_count, parse_filter, parse_filter_object};
use super::header::ROW_KEY;
use super::problems::Problems;
use super::render::{Dates, Rendering, Values};
use super::value::{Cell, MAX_TEXT_CHARS, fits_in_a_cell};
use super::workbook::MAX_SHEETS;

/// The most rows one read returns (contract §4.3).
pub const MAX_LIMIT: usize = 100_000;
/// The number of rows a read returns when no `limit` is given.
pub const DEFAULT_LIMIT: usize = 1000;

/// A new workbook: its sheets, each with its header row.
// `POST /v1/spreadsheets` or `PUT /v1/spreadsheets/{id}` with a JSON body,
// contract §10.3.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateBody {
    /// The sheets, in order, each `{"name": …, "columns": [names]}`.
    #[schema(schema_with = sheets_schema, required = true)]
    sheets: Option<Value>,
    #[serde(flatten)]
    #[schema(ignore)]
    unknown: Map<String, Value>,
}

fn sheets_schema() -> Schema {
    ArrayBuilder::new()
        .items(sheet_schema())
        .min_items(Some(1))
        .max_items(Some(MAX_SHEETS))
        .into()
}

/// A sheet of a new workbook, or a sheet to add: `{"name", "columns"}`.
fn sheet_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("name", sheet_name_schema())
        .property("columns", columns_schema())
        .required("name")
        .required("columns")
        .additional_properties(Some(
            utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
        ))
}

fn text_schema(min: usize) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(min))
}

/// A sheet name: none of [ ] : * ? / \ and no apostrophe at either end.
fn sheet_name_schema() -> Schema {
    text_schema(1)
        .max_length(Some(MAX_SHEET_NAME))
        .pattern(Some(r"^[^\[\]:*?/\\']([^\[\]:*?/\\]*[^\[\]:*?/\\'])?$"))
        .into()
}

/// A header row: distinct, non-empty column names. The column limits
/// (16,384 names of at most 32,767 UTF-16 code units) are checked, and
/// told, but not declared: a generator would build bodies over the size
/// limit to break them.
fn columns_schema() -> Schema {
    ArrayBuilder::new()
        .items(text_schema(1))
        .min_items(Some(1))
        .unique_items(true)
        .into()
}

/// A sheet to add, last, with its header row.
// `POST /v1/data/{id}`, contract §10.3.
#[derive(Debug, ToSchema)]
#[expect(
    dead_code,
    reason = "a schema only: the body is read as any JSON object, to name every problem"
)]
pub struct SheetBody {
    /// The new sheet's name, not taken by another sheet (ignoring case).
    #[schema(schema_with = sheet_name_schema, required = true)]
    name: Option<Value>,
    /// The header row's column names, in order.
    #[schema(schema_with = columns_schema, required = true)]
    columns: Option<Value>,
}

/// The longest sheet name the xlsx format takes.
pub const MAX_SHEET_NAME: usize = 31;

/// The characters a sheet name may not hold.
const SHEET_NAME_FORBIDDEN: [char; 7] = ['[', ']', ':', '*', '?', '/', '\\'];

/// A new workbook's sheets, from a `CreateBody`: names and header rows.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWorkbook {
    pub sheets: Vec<NewSheet>,
}

/// A new sheet: its name and its header row.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSheet {
    pub name: String,
    pub columns: Vec<String>,
}

impl NewWorkbook {
    pub fn from_json(json: &[u8]) -> Result<NewWorkbook, Problems> {
        let body: CreateBody = body_of(json)?;
        let mut problems = Problems::new();
        report_unknown(&body.unknown, &mut problems);
        let mut sheets = Vec::new();
        match &body.sheets {
            Some(Value::Array(items)) if items.len() > MAX_SHEETS => {
                problems.push("sheets", format!("must hold at most {MAX_SHEETS} sheets"));
            }
            Some(Value::Array(items)) if !items.is_empty() => {
                let mut seen = HashSet::new();
                for (i, item) in items.iter().enumerate() {
                    let field = format!("sheets[{i}]");
                    // Spreadsheet apps compare sheet names ignoring case.
                    if let Some(name) = item.get("name").and_then(Value::as_str)
                        && !seen.insert(name.to_lowercase())
                    {
                        let rule = format!("{name:?} is given twice (ignoring case)");
                        problems.push(format!("{field}.name"), rule);
                    }
                    sheets.extend(new_sheet(item, &field, &mut problems));
                }
            }
            None | Some(Value::Null) => problems.push("sheets", "is required"),
            Some(_) => problems.push("sheets", "must be a non-empty array of {name and columns}"),
        }
        problems.into_result(NewWorkbook { sheets })
    }

    /// The workbook: each sheet with its header row, in order.
    pub fn workbook(&self) -> super::Workbook {
        super::Workbook {
            sheets: self.sheets.iter().map(NewSheet::sheet).collect(),
            ..super::Workbook::default()
        }
    }
}

impl NewSheet {
    /// Checks the body of `POST /v1/data/{id}` (§10.3).
    pub fn from_json(json: &[u8]) -> Result<NewSheet, Problems> {
        let body: Value = body_of(json)?;
        let mut problems = Problems::new();
        match new_sheet(&body, "", &mut problems) {
            Some(sheet) if problems.is_empty() => Ok(sheet),
            _ => Err(problems),
        }
    }

    /// The sheet, holding its header row.
    pub fn sheet(&self) -> super::Sheet {
        let header = self.columns.iter().map(|c| Cell::Text(c.clone())).collect();
        super::Sheet::new(&self.name, vec![header])
    }
}

/// One sheet of a `CreateBody`, or a `SheetBody` (`field` empty), if it
/// is valid; its problems otherwise.
fn new_sheet(item: &Value, field: &str, problems: &mut Problems) -> Option<NewSheet> {
    let at = |key: &str| match field {
        "" => key.to_owned(),
        _ => format!("{field}.{key}"),
    };
    let Value::Object(map) = item else {
        problems.push(field, "must be an object with name and columns");
        return None;
    };
    for key in map
        .keys()
        .filter(|k| !matches!(k.as_str(), "name" | "columns"))
    {
        problems.push(at(key), "is not a known field");
    }
    let name = match map.get("name") {
        Some(Value::String(name)) => match sheet_name_problem(name) {
            None => Some(name.clone()),
            Some(rule) => {
                problems.push(at("name"), rule);
                None
            }
        },
        None | Some(Value::Null) => {
            problems.push(at("name"), "is required");
            None
        }
        Some(_) => {
            problems.push(at("name"), "must be a string");
            None
        }
    };
    let columns = match map.get("columns") {
        Some(Value::Array(columns)) if !columns.is_empty() => {
            let mut names = Vec::new();
            for (j, column) in columns.iter().enumerate() {
                let at = at(&format!("columns[{j}]"));
                match column {
                    Value::String(c) if c.is_empty() => problems.push(at, "must not be empty"),
                    Value::String(c) if !fits_in_a_cell(c) => problems.push(
                        at,
                        format!("must be at most {MAX_TEXT_CHARS} UTF-16 code units"),
                    ),
                    Value::String(c) if names.contains(c) => {
                        problems.push(at, format!("{c:?} is given twice"));
                    }
                    Value::String(c) if c == ROW_KEY => {
                        problems.push(at, "must not be _row (each row's number is read under it)");
                    }
                    Value::String(c) => names.push(c.clone()),
                    _ => problems.push(at, "must be a string"),
                }
            }
            if columns.len() > super::workbook::MAX_COLUMNS {
                problems.push(
                    at("columns"),
                    format!(
                        "a sheet has at most {} columns",
                        super::workbook::MAX_COLUMNS
                    ),
                );
            }
            Some(names)
        }
        None | Some(Value::Null) => {
            problems.push(at("columns"), "is required");
            None
        }
        Some(_) => {
            problems.push(at("columns"), "must be a non-empty array of column names");
            None
        }
    };
    Some(NewSheet {
        name: name?,
        columns: columns?,
    })
}

/// Why `name` cannot name a sheet of an xlsx file, if it cannot.
pub fn sheet_name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.chars().count() > MAX_SHEET_NAME {
        return Some(format!("must be 1 to {MAX_SHEET_NAME} characters long"));
    }
    // The xlsx format counts UTF-16 code units, which JSON Schema's
    // `maxLength` (characters) cannot say.
    if name.encode_utf16().count() > MAX_SHEET_NAME {
        return Some(format!(
            "must take at most {MAX_SHEET_NAME} UTF-16 code units (an emoji takes two)"
        ));
    }
    if name.eq_ignore_ascii_case("History") {
        return Some("must not be History (Excel keeps that name for itself)".into());
    }
    if name.contains(SHEET_NAME_FORBIDDEN) {
        return Some("must not hold any of [ ] : * ? / \\".into());
    }
    if name.starts_with('\'') || name.ends_with('\'') {
        return Some("must not begin or end with an apostrophe".into());
    }
    None
}

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

/// The names of the body schemas, whose objects allow no other fields.
pub const BODY_SCHEMAS: [&str; 5] = [
    "InsertBody",
    "UpdateBody",
    "DeleteBody",
    "CreateBody",
    "SheetBody",
];

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

/// A request that broke rules checkable without the sheet: its problems,
/// and what could be read of it (the well-formed cells and filters).
#[derive(Debug)]
pub struct Rejected<T> {
    pub partial: T,
    pub problems: Problems,
}

impl<T> From<Rejected<T>> for Problems {
    fn from(rejected: Rejected<T>) -> Problems {
        rejected.problems
    }
}

/// `Ok(value)` when nothing was found, else `value` rejected with the problems.
fn checked<T>(value: T, problems: Problems) -> Result<T, Rejected<T>> {
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(Rejected {
            partial: value,
            problems,
        })
    }
}

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
    /// Rows by the numbers the sheet shows for them (`type: rows` with
    /// `rows`, §11.2), each once.
    Numbers(Vec<u64>),
    /// Rows by number, each with its own values (`PATCH` with `type:
    /// rows`, §10.2); the values are in [`UpdateRows::rows`].
    Rows,
}

/// `PATCH` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateRows {
    pub selector: Selector,
    pub data: Vec<(String, Cell)>,
    /// With [`Selector::Rows`]: each row's number and values.
    pub rows: Vec<RowValues>,
}

/// One row of a `type: rows` update: its number and what to set.
#[derive(Debug, Clone, PartialEq)]
pub struct RowValues {
    /// Where it came from in the request (`data[2]`).
    pub field: String,
    pub row: u64,
    pub cells: Vec<(String, Cell)>,
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

/// Reads a body (JSON text) into its `*Body` type; only a body that is no
/// JSON object fails. Read from the text, not from a parsed `Value`: a
/// `Value` read again turns `1000000000000000000000000000000000000000`
/// into `1e39`, and the rule for integers beyond 2^53 needs the literal.
fn body_of<B: for<'de> Deserialize<'de>>(json: &[u8]) -> Result<B, Problems> {
    if json.trim_ascii_start().first() != Some(&b'{') {
        return Err(Problems::one("body", "must be a JSON object"));
    }
    serde_json::from_slice(json)
        .map_err(|e| Problems::one("body", format!("could not be read ({e})")))
}

/// Reports every field of `unknown` as not known.
fn report_unknown(unknown: &Map<String, Value>, problems: &mut Problems) {
    for key in unknown.keys() {
        problems.push(key.as_str(), "is not a known field");
    }
}

impl InsertRows {
    /// Checks an insert body of at most `max_rows` rows.
    pub fn from_json(json: &[u8], max_rows: usize) -> Result<InsertRows, Rejected<InsertRows>> {
        let body: InsertBody = body_of(json).map_err(|problems| Rejected {
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
        let body: UpdateBody = body_of(json).map_err(|problems| Rejected {
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
        let body: DeleteBody = body_of(json).map_err(|problems| Rejected {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::filter::{MAX_FILTER_BYTES, MAX_FILTERS, MAX_IN_VALUES};
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
            update_error(
                json!({"type": "filter", "filter": vec!["a:eq:1"; 20_001], "data": {"a": 1}})
            ),
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
        assert!(
            ReadQuery::from_pairs(&pairs(&[("filter", "a:eq:1"), ("filter", "b:eq:2")])).is_ok()
        );
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
}
