//! formualizer 0.13 behind the common::Engine interface.
use common::{Engine, V};
use formualizer::common::{ExcelError, ExcelErrorKind, LiteralValue};
use formualizer::workbook::{Workbook, WorkbookConfig};

pub struct Fz {
    pub wb: Workbook,
    pub sheets: Vec<String>,
}

pub fn to_lit(v: &V) -> LiteralValue {
    match v {
        V::Num(n) => LiteralValue::Number(*n),
        V::Str(s) => LiteralValue::Text(s.clone()),
        V::Bool(b) => LiteralValue::Boolean(*b),
        V::Err(e) => LiteralValue::Error(ExcelError::new(ExcelErrorKind::try_parse(e).unwrap_or(ExcelErrorKind::Value))),
        V::Empty => LiteralValue::Empty,
    }
}

pub fn from_lit(v: &LiteralValue) -> V {
    match v {
        LiteralValue::Int(i) => V::Num(*i as f64),
        LiteralValue::Number(n) => V::Num(*n),
        LiteralValue::Text(s) => V::Str(s.clone()),
        LiteralValue::Boolean(b) => V::Bool(*b),
        LiteralValue::Array(a) => a.first().and_then(|r| r.first()).map(from_lit).unwrap_or(V::Empty),
        LiteralValue::Empty | LiteralValue::Pending => V::Empty,
        LiteralValue::Error(e) => V::Err(e.kind.to_string()),
        other => other.as_serial_number().map(V::Num).unwrap_or(V::Str(format!("{other:?}"))),
    }
}

impl Engine for Fz {
    const NAME: &'static str = "formualizer 0.13.0";
    fn create() -> Self {
        // Interactive defaults (deferred graph build, malformed formulas coerced
        // to #ERROR!) without the undo change log, which sheetd does not need.
        let mut cfg = WorkbookConfig::interactive();
        cfg.enable_changelog = false;
        Fz { wb: Workbook::new_with_config(cfg), sheets: Vec::new() }
    }
    fn add_sheet(&mut self, name: &str) -> Result<usize, String> {
        self.wb.add_sheet(name).map_err(|e| e.to_string())?;
        self.sheets.push(name.to_string());
        Ok(self.sheets.len() - 1)
    }
    fn set_value(&mut self, sheet: usize, row: u32, col: u32, v: &V) -> Result<(), String> {
        self.wb.set_value(&self.sheets[sheet], row + 1, col + 1, to_lit(v)).map_err(|e| e.to_string())
    }
    fn set_formula(&mut self, sheet: usize, row: u32, col: u32, f: &str) -> Result<(), String> {
        self.wb.set_formula(&self.sheets[sheet], row + 1, col + 1, &format!("={f}")).map_err(|e| e.to_string())
    }
    fn set_numbers(&mut self, sheet: usize, row0: u32, col0: u32, rows: &[Vec<f64>]) -> Result<(), String> {
        let lit: Vec<Vec<LiteralValue>> = rows.iter().map(|r| r.iter().map(|n| LiteralValue::Number(*n)).collect()).collect();
        self.wb.set_values(&self.sheets[sheet], row0 + 1, col0 + 1, &lit).map_err(|e| e.to_string())
    }
    fn set_formula_column(&mut self, sheet: usize, row0: u32, col: u32, formulas: &[String]) -> Result<(), String> {
        let rows: Vec<Vec<String>> = formulas.iter().map(|f| vec![format!("={f}")]).collect();
        self.wb.set_formulas(&self.sheets[sheet], row0 + 1, col + 1, &rows).map_err(|e| e.to_string())
    }
    fn recalc(&mut self) -> Result<Option<usize>, String> {
        let (_res, delta) = self.wb.evaluate_all_with_delta().map_err(|e| e.to_string())?;
        Ok(Some(delta.changed_cells.len()))
    }
    fn get(&mut self, sheet: usize, row: u32, col: u32) -> V {
        self.wb.get_value(&self.sheets[sheet], row + 1, col + 1).map(|v| from_lit(&v)).unwrap_or(V::Empty)
    }
}
