//! New workbooks and sheets (`POST /v1/spreadsheets` with JSON, `PUT`,
//! `POST /v1/data/{id}`): their bodies, checked.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};

use super::{body_of, report_unknown};
use crate::model::header::ROW_KEY;
use crate::model::problems::Problems;
use crate::model::value::{Cell, MAX_TEXT_CHARS, fits_in_a_cell};
use crate::model::workbook::MAX_SHEETS;

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

/// A sheet name: none of [ ] : * ? / \ nor a control character, and no
/// apostrophe at either end.
fn sheet_name_schema() -> Schema {
    const NOT: &str = r"\[\]:*?/\\\x00-\x1f\x7f-\x9f\uFFFE\uFFFF";
    text_schema(1)
        .max_length(Some(MAX_SHEET_NAME))
        .pattern(Some(format!("^[^{NOT}']([^{NOT}]*[^{NOT}'])?$")))
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
    pub fn workbook(&self) -> crate::model::Workbook {
        crate::model::Workbook {
            sheets: self.sheets.iter().map(NewSheet::sheet).collect(),
            ..crate::model::Workbook::default()
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
    pub fn sheet(&self) -> crate::model::Sheet {
        let header = self.columns.iter().map(|c| Cell::Text(c.clone())).collect();
        crate::model::Sheet::new(&self.name, vec![header])
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
            if columns.len() > crate::model::workbook::MAX_COLUMNS {
                problems.push(
                    at("columns"),
                    format!(
                        "a sheet has at most {} columns",
                        crate::model::workbook::MAX_COLUMNS
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
    // A control character (or U+FFFE, U+FFFF) has no place in XML 1.0: the
    // workbook part naming the sheet would open in no other reader.
    if name
        .chars()
        .any(|c| c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}')
    {
        return Some("must not hold a control character".into());
    }
    if name.starts_with('\'') || name.ends_with('\'') {
        return Some("must not begin or end with an apostrophe".into());
    }
    None
}
