//! The formula engine: IronCalc (`ironcalc_base`), behind [`Engine`].
//!
//! IronCalc counts rows and columns from 1 and names sheets by index; the
//! workbook's sheets, defined names and tables are given to it before any
//! cell, so that formulas naming them parse.

use ironcalc_base::Model;
use ironcalc_base::cell::CellValue;
use ironcalc_base::expressions::lexer::{Lexer, LexerMode};
use ironcalc_base::expressions::parser::{Node, Parser, new_parser_english};
use ironcalc_base::expressions::token::TokenType;
use ironcalc_base::expressions::types::CellReferenceRC;
use ironcalc_base::language::get_default_language;
use ironcalc_base::locale::get_default_locale;
use ironcalc_base::types::{CellType, DefinedName, Table, TableColumn, TableStyleInfo};

use super::{At, Computed, Engine, Input};
use crate::model::Workbook;
use crate::model::formula::{MAX_NESTING, cell_name, nesting, rows_bounded};
use crate::model::layout::Range;

pub struct IronCalc {
    model: Model<'static>,
    /// References stop at this row (`model::formula::rows_bounded`).
    last_row: u32,
}

impl IronCalc {
    /// An engine with the workbook's sheets, names and tables, and no cells
    /// yet. `None` when IronCalc refuses them (a sheet name it rejects).
    pub fn new(workbook: &Workbook, last_row: u32) -> Option<IronCalc> {
        let mut model = Model::new_empty("sheetd", "en", "UTC", "en").ok()?;
        for (index, sheet) in workbook.sheets.iter().enumerate() {
            if index == 0 {
                model.rename_sheet_by_index(0, &sheet.name).ok()?;
            } else {
                model.add_sheet(&sheet.name).ok()?;
            }
        }
        // IronCalc's names stand for references only: a name for a value
        // or a formula (`Rate` = `0.2`) stands for a cell of a sheet of the
        // engine's own that holds it.
        let computed: Vec<String> = workbook
            .names
            .iter()
            .filter(|name| !is_reference(&name.refers_to))
            .map(|name| rows_bounded(&name.refers_to, last_row))
            .collect();
        if !computed.is_empty() {
            model.add_sheet(NAMES_SHEET).ok()?;
        }
        let mut book = model.workbook;
        let sheet_ids: Vec<u32> = book.worksheets.iter().map(|w| w.sheet_id).collect();
        let mut cells = 0;
        for name in &workbook.names {
            let formula = if is_reference(&name.refers_to) {
                rows_bounded(&name.refers_to, last_row)
            } else {
                cells += 1;
                format!("'{NAMES_SHEET}'!$A${cells}")
            };
            book.defined_names.push(DefinedName {
                name: name.name.clone(),
                formula,
                sheet_id: name.scope.and_then(|i| sheet_ids.get(i).copied()),
            });
        }
        for sheet in &workbook.sheets {
            for table in &sheet.layout.tables {
                book.tables
                    .insert(table.name.clone(), table_of(&sheet.name, table));
            }
        }
        let mut model = Model::from_workbook(book, "en").ok()?;
        let names_sheet = workbook.sheets.len() as u32;
        for (row, formula) in (1..).zip(computed) {
            // A formula IronCalc refuses (or is not given: too deep to
            // parse) leaves the cell empty: the names' readers then
            // disagree with the file and are kept.
            if nesting(&formula) <= MAX_NESTING {
                let _ = model.update_cell_with_formula(names_sheet, row, 1, format!("={formula}"));
            }
        }
        Some(IronCalc { model, last_row })
    }
}

/// The engine's own sheet for the values of names that are no reference.
const NAMES_SHEET: &str = "sheetd defined names";

/// Whether a name's text is a reference and nothing else: `Data!$A$2:$A$9`,
/// `'My Sheet'!B2`, `$1:$3`, `Data!C:C`.
fn is_reference(text: &str) -> bool {
    let place = match text.rfind('!') {
        Some(at) => &text[at + 1..],
        None => text,
    };
    let sheet = text.len() > place.len();
    let part = |p: &str| {
        let p: String = p.chars().filter(|&c| c != '$').collect();
        let letters = p.chars().take_while(char::is_ascii_alphabetic).count();
        let digits = &p[letters..];
        (letters <= 3 && digits.chars().all(|c| c.is_ascii_digit()))
            .then_some((letters > 0, !digits.is_empty()))
    };
    let mut ends = place.split(':');
    let shapes: Option<Vec<(bool, bool)>> = ends.by_ref().take(2).map(part).collect();
    match shapes.as_deref() {
        // One cell: a name without a sheet could be a word, not a cell.
        Some([(true, true)]) => sheet || !place.chars().any(|c| c.is_ascii_lowercase()),
        Some([a, b]) => ends.next().is_none() && a == b && (a.0 || a.1),
        _ => false,
    }
}

fn table_of(sheet: &str, table: &crate::model::layout::Table) -> Table {
    let columns = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, column)| TableColumn {
            id: i as u32 + 1,
            name: column.name.clone(),
            totals_row_label: column.total_label.clone(),
            header_row_dxf_id: None,
            data_dxf_id: None,
            totals_row_dxf_id: None,
            totals_row_function: column.total_function.clone(),
        })
        .collect();
    Table {
        name: table.name.clone(),
        display_name: table.name.clone(),
        sheet_name: sheet.to_owned(),
        reference: a1_range(&table.range),
        totals_row_count: u32::from(table.totals_row),
        header_row_count: u32::from(table.header_row),
        header_row_dxf_id: None,
        data_dxf_id: None,
        totals_row_dxf_id: None,
        columns,
        style_info: TableStyleInfo {
            name: table.style.clone(),
            show_first_column: table.first_column,
            show_last_column: table.last_column,
            show_row_stripes: table.banded_rows,
            show_column_stripes: table.banded_columns,
        },
        has_filters: table.autofilter,
    }
}

/// `A1:D6` for a 0-based range.
fn a1_range(range: &Range) -> String {
    let first = cell_name(range.first_row, u32::from(range.first_column));
    let last = cell_name(range.last_row, u32::from(range.last_column));
    format!("{first}:{last}")
}

/// IronCalc's place for a cell.
fn place((sheet, row, column): At) -> (u32, i32, i32) {
    (sheet as u32, row as i32 + 1, column as i32 + 1)
}

impl Engine for IronCalc {
    fn set(&mut self, at: At, input: Input<'_>) {
        let (sheet, row, column) = place(at);
        let model = &mut self.model;
        // A refusal (a formula IronCalc cannot store) leaves the cell as
        // it was; the formula's result then disagrees and is kept.
        let _ = match input {
            Input::Empty => model
                .workbook
                .worksheet_mut(sheet)
                .and_then(|w| w.cell_clear_contents(row, column)),
            Input::Number(n) => model.update_cell_with_number(sheet, row, column, n),
            Input::Text(text) => model.update_cell_with_text(sheet, row, column, text),
            Input::Bool(b) => model.update_cell_with_bool(sheet, row, column, b),
            // Errors have no typed setter: typed in, `#N/A` is the error.
            Input::Error(error) => model.set_user_input(sheet, row, column, error.to_owned()),
            // Too deep for IronCalc to parse without overflowing the
            // stack: an error, so the file's result is kept (or, with none,
            // the formula is stale).
            Input::Formula(expr) if nesting(expr) > MAX_NESTING => {
                model.set_user_input(sheet, row, column, "#N/A".to_owned())
            }
            Input::Formula(expr) => model.update_cell_with_formula(
                sheet,
                row,
                column,
                format!(
                    "={}",
                    rows_bounded(&without_sheets_of_ref_errors(expr), self.last_row)
                ),
            ),
        };
    }

    fn recalculate(&mut self) {
        self.model.evaluate();
    }

    fn value(&self, at: At) -> Computed {
        let (sheet, row, column) = place(at);
        let is_error = matches!(
            self.model.get_cell_type(sheet, row, column),
            Ok(CellType::ErrorValue)
        );
        match self.model.get_cell_value_by_index(sheet, row, column) {
            Ok(CellValue::Number(n)) => Computed::Number(n),
            Ok(CellValue::Boolean(b)) => Computed::Bool(b),
            Ok(CellValue::String(text)) if is_error => Computed::Error(text),
            Ok(CellValue::String(text)) => Computed::Text(text),
            Ok(CellValue::None) => Computed::Empty,
            Err(_) => Computed::Error(super::ENGINE_FAILED.to_owned()),
        }
    }
}

/// The formula with `Data!#REF!` (what a spreadsheet app writes for a
/// reference to deleted cells) written `#REF!`, which is the same to a
/// spreadsheet app and the only form IronCalc parses.
fn without_sheets_of_ref_errors(expr: &str) -> std::borrow::Cow<'_, str> {
    const QUALIFIED: &str = "!#REF!";
    if !expr.contains(QUALIFIED) {
        return expr.into();
    }
    let mut out = String::with_capacity(expr.len());
    let mut rest = expr;
    while let Some(at) = rest.find(QUALIFIED) {
        let before = &rest[..at];
        out.push_str(&before[..sheet_name_start(before)]);
        out.push_str("#REF!");
        rest = &rest[at + QUALIFIED.len()..];
    }
    out.push_str(rest);
    out.into()
}

/// Where the sheet name that `text` ends with starts: a quoted name (a
/// doubled quote inside it is a quote) or a plain one.
fn sheet_name_start(text: &str) -> usize {
    let bytes = text.as_bytes();
    if bytes.last() != Some(&b'\'') {
        return text
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
    }
    let mut i = bytes.len() - 1;
    while i > 0 {
        i -= 1;
        if bytes[i] == b'\'' {
            if i > 0 && bytes[i - 1] == b'\'' {
                i -= 1;
                continue;
            }
            return i;
        }
    }
    0
}

/// IronCalc's parser for the formulas written into one sheet of a
/// workbook, with the workbook's sheets, names and tables known to it:
/// built once for a request, whatever the number of its formulas.
pub struct FormulaParser {
    parser: Parser<'static>,
    context: CellReferenceRC,
}

impl FormulaParser {
    /// `None` when the workbook has no sheet `sheet`.
    pub fn new(workbook: &Workbook, sheet: usize) -> Option<FormulaParser> {
        let worksheets: Vec<String> = workbook.sheets.iter().map(|s| s.name.clone()).collect();
        let names = workbook
            .names
            .iter()
            .map(|name| {
                let scope = name.scope.map(|index| index as u32);
                (name.name.clone(), scope, name.refers_to.clone())
            })
            .collect();
        let tables = workbook
            .sheets
            .iter()
            .flat_map(|s| {
                s.layout
                    .tables
                    .iter()
                    .map(|t| (t.name.clone(), table_of(&s.name, t)))
            })
            .collect();
        let context = CellReferenceRC {
            sheet: workbook.sheets.get(sheet)?.name.clone(),
            column: 1,
            row: 1,
        };
        Some(FormulaParser {
            parser: new_parser_english(worksheets, names, tables),
            context,
        })
    }

    /// Why IronCalc cannot parse `expr` (a formula without `=`); `None`
    /// when it parses. The formula is parsed in parentheses too, so that
    /// text left over after a whole expression (`1 2`) is found: the
    /// parser stops at the end of an expression.
    pub fn problem(&mut self, expr: &str) -> Option<String> {
        if nesting(expr) > MAX_NESTING {
            return Some(format!(
                "nests more than {MAX_NESTING} levels deep (parentheses, braces, brackets and operators), \
                 more than the engine reads"
            ));
        }
        if let Some(at) = unopened_parenthesis(expr) {
            return Some(format!(
                "cannot be parsed at character {at}: a ) closes no ("
            ));
        }
        for (text, shift) in [(expr.to_owned(), 0), (format!("({expr})"), 1)] {
            if let Node::ParseErrorKind {
                message, position, ..
            } = self.parser.parse(&text, &self.context)
            {
                // 1-based, counting the `=`.
                let at = (position + 1)
                    .saturating_sub(shift)
                    .clamp(1, expr.chars().count() + 1);
                return Some(format!("cannot be parsed at character {at}: {message}"));
            }
        }
        None
    }
}

/// Where (1-based, counting the `=`) a `)` of `expr` closes no `(`: the
/// parser stops before it, as at the end of the formula.
fn unopened_parenthesis(expr: &str) -> Option<usize> {
    let mut lexer = Lexer::new(
        expr,
        LexerMode::A1,
        get_default_locale(),
        get_default_language(),
    );
    let mut depth = 0_i64;
    loop {
        match lexer.next_token() {
            TokenType::EOF | TokenType::Illegal(_) => return None,
            TokenType::LeftParenthesis => depth += 1,
            TokenType::RightParenthesis if depth == 0 => {
                return Some(lexer.get_position() as usize + 1);
            }
            TokenType::RightParenthesis => depth -= 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_references() {
        for text in ["Data!$A$2:$A$9", "'My Sheet'!B2", "$1:$3", "Data!C:C", "A1"] {
            assert!(is_reference(text), "{text}");
        }
        for text in [
            "0.2",
            "Data!$A$1*2",
            "SUM(Data!A:A)",
            "\"text\"",
            "Data!A1:B",
            "#REF!",
        ] {
            assert!(!is_reference(text), "{text}");
        }
    }

    #[test]
    fn qualified_ref_errors_lose_their_sheet() {
        let cases = [
            ("Orders!#REF!", "#REF!"),
            ("SUM(Orders!#REF!)+B2", "SUM(#REF!)+B2"),
            ("'My ''x'' Sheet'!#REF!*2", "#REF!*2"),
            ("1+'a b'!#REF!+Data!A1", "1+#REF!+Data!A1"),
            ("Tabl\u{e9}!#REF!", "#REF!"),
            ("A1+B2", "A1+B2"),
        ];
        for (expr, expected) in cases {
            assert_eq!(without_sheets_of_ref_errors(expr), expected, "{expr}");
        }
    }
}
