//! ironcalc_base 0.9.1 behind the common::Engine interface.
use common::{Engine, V};
use ironcalc_base::types::CellType;
use ironcalc_base::cell::CellValue;
use ironcalc_base::Model;

pub struct Ic {
    pub m: Model<'static>,
    pub n: usize,
}

impl Engine for Ic {
    const NAME: &'static str = "ironcalc_base 0.9.1";
    fn create() -> Self {
        Ic { m: Model::new_empty("wb", "en", "UTC", "en").unwrap(), n: 0 }
    }
    fn add_sheet(&mut self, name: &str) -> Result<usize, String> {
        // new_empty creates "Sheet1": rename it for the first sheet.
        if self.n == 0 {
            self.m.rename_sheet_by_index(0, name)?;
        } else {
            self.m.add_sheet(name)?;
        }
        self.n += 1;
        Ok(self.n - 1)
    }
    fn set_value(&mut self, sheet: usize, row: u32, col: u32, v: &V) -> Result<(), String> {
        let (s, r, c) = (sheet as u32, row as i32 + 1, col as i32 + 1);
        match v {
            V::Num(n) => self.m.update_cell_with_number(s, r, c, *n),
            V::Str(t) => self.m.update_cell_with_text(s, r, c, t),
            V::Bool(b) => self.m.update_cell_with_bool(s, r, c, *b),
            // no typed setter for errors: user input "#DIV/0!" is parsed as an error
            V::Err(e) => self.m.set_user_input(s, r, c, e.clone()),
            V::Empty => Ok(()),
        }
    }
    fn set_formula(&mut self, sheet: usize, row: u32, col: u32, f: &str) -> Result<(), String> {
        self.m.update_cell_with_formula(sheet as u32, row as i32 + 1, col as i32 + 1, format!("={f}"))
    }
    fn recalc(&mut self) -> Result<Option<usize>, String> {
        self.m.evaluate();
        Ok(None)
    }
    fn get(&mut self, sheet: usize, row: u32, col: u32) -> V {
        let (s, r, c) = (sheet as u32, row as i32 + 1, col as i32 + 1);
        let is_err = matches!(self.m.get_cell_type(s, r, c), Ok(CellType::ErrorValue));
        match self.m.get_cell_value_by_index(s, r, c) {
            Ok(CellValue::Number(n)) => V::Num(n),
            Ok(CellValue::Boolean(b)) => V::Bool(b),
            Ok(CellValue::String(t)) if is_err => V::Err(t),
            Ok(CellValue::String(t)) => V::Str(t),
            Ok(CellValue::None) => V::Empty,
            Err(e) => V::Err(format!("harness:{e}")),
        }
    }
}
