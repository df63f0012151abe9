//! Formulas written through the API (§11.4), checked before they are
//! stored: the engine must parse each one, and each sheet it names must
//! be a sheet of the workbook. A formula that fails is a 400 naming the
//! field and the reason, and nothing is written.

use crate::model::formula::{References, references, same_sheet};
use crate::model::{Problems, Workbook};

use super::ironcalc::FormulaParser;

/// The problems of the formulas `formulas` (each with its request field,
/// `data[0].total`, and its text without `=`) written into sheet `sheet`.
pub fn formula_problems<'a>(
    workbook: &Workbook,
    sheet: usize,
    formulas: impl IntoIterator<Item = (String, &'a str)>,
) -> Problems {
    let mut problems = Problems::new();
    let mut parser = None;
    for (field, expr) in formulas {
        let parser = parser.get_or_insert_with(|| FormulaParser::new(workbook, sheet));
        if let Some(rule) = formula_problem(workbook, parser.as_mut(), expr) {
            problems.push(field, format!("formula {rule}"));
        }
    }
    problems
}

/// What is wrong with one formula, if anything.
fn formula_problem(
    workbook: &Workbook,
    parser: Option<&mut FormulaParser>,
    expr: &str,
) -> Option<String> {
    // A panic in the engine's parser refuses the formula, never the service.
    let parsed = match parser {
        Some(parser) => {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.problem(expr)))
                .unwrap_or_else(|_| Some("cannot be parsed".to_owned()))
        }
        None => Some("cannot be parsed: the sheet is not known to the engine".to_owned()),
    };
    if parsed.is_some() {
        return parsed;
    }
    let References::Areas(areas) = references(expr) else {
        return None;
    };
    areas
        .iter()
        .filter_map(|area| area.sheet.as_deref())
        .find(|name| !workbook.sheets.iter().any(|s| same_sheet(&s.name, name)))
        .map(|name| format!("refers to sheet {name:?}, which the workbook does not have"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cell, Sheet};

    fn workbook() -> Workbook {
        let rows = vec![
            vec![Cell::Text("a".into()), Cell::Text("b".into())],
            vec![Cell::Number(1.0), Cell::Number(2.0)],
        ];
        let mut workbook = Workbook::default();
        workbook.sheets.push(Sheet::new("Data", rows));
        workbook.sheets.push(Sheet::new("My Sheet", Vec::new()));
        workbook
    }

    fn problem(expr: &str) -> Option<String> {
        let workbook = workbook();
        let mut parser = FormulaParser::new(&workbook, 0);
        formula_problem(&workbook, parser.as_mut(), expr)
    }

    #[test]
    fn formulas_the_engine_parses_pass() {
        for expr in [
            "A2*B2",
            "SUM(A2:B2)",
            "'My Sheet'!A1+Data!B2",
            "IF(A2>1,\"big\",\"small\")",
            "{1,2;3,4}",
            "A:A",
            "NOSUCHFUNCTION(1)",
        ] {
            assert_eq!(problem(expr), None, "{expr}");
        }
    }

    #[test]
    fn formulas_the_engine_cannot_parse_are_refused() {
        for expr in ["1+", "SUM(1,2", "(1", "1)", "A1 +* 2", "\"open"] {
            let rule = problem(expr).unwrap_or_else(|| panic!("{expr} passed"));
            assert!(rule.starts_with("cannot be parsed"), "{expr}: {rule}");
        }
    }

    #[test]
    fn a_sheet_the_workbook_lacks_is_refused() {
        assert_eq!(
            problem("Nope!A1*2"),
            Some("refers to sheet \"Nope\", which the workbook does not have".into())
        );
        assert_eq!(problem("data!A1"), None, "sheet names ignore case");
    }
}
