//! The small engine interface a sheetd-like service would own, plus the
//! engine-independent parts of the evaluation: the calamine loader, the corpus
//! comparison and the synthetic benchmark. Rows/columns are 0-based here.

use calamine::{open_workbook, Data, Reader, Xlsx};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

#[derive(Clone, Debug, PartialEq)]
pub enum V {
    Num(f64),
    Str(String),
    Bool(bool),
    Err(String),
    Empty,
}

impl V {
    pub fn kind(&self) -> &'static str {
        match self {
            V::Num(_) => "num",
            V::Str(_) => "str",
            V::Bool(_) => "bool",
            V::Err(_) => "err",
            V::Empty => "empty",
        }
    }
    pub fn show(&self) -> String {
        match self {
            V::Num(n) => format!("{n}"),
            V::Str(s) => format!("{s:?}"),
            V::Bool(b) => format!("{b}"),
            V::Err(e) => e.clone(),
            V::Empty => "<empty>".into(),
        }
    }
}

/// What sheetd would put in front of any formula engine.
pub trait Engine: Sized {
    const NAME: &'static str;
    fn create() -> Self;
    /// Adds a sheet, returns its index.
    fn add_sheet(&mut self, name: &str) -> Result<usize, String>;
    fn set_value(&mut self, sheet: usize, row: u32, col: u32, v: &V) -> Result<(), String>;
    /// `formula` without the leading '='.
    fn set_formula(&mut self, sheet: usize, row: u32, col: u32, formula: &str) -> Result<(), String>;
    /// Numbers for a block (engines may override with a bulk path).
    fn set_numbers(&mut self, sheet: usize, row0: u32, col0: u32, rows: &[Vec<f64>]) -> Result<(), String> {
        for (r, row) in rows.iter().enumerate() {
            for (c, n) in row.iter().enumerate() {
                self.set_value(sheet, row0 + r as u32, col0 + c as u32, &V::Num(*n))?;
            }
        }
        Ok(())
    }
    /// Formulas for a column block (engines may override with a bulk path).
    fn set_formula_column(&mut self, sheet: usize, row0: u32, col: u32, formulas: &[String]) -> Result<(), String> {
        for (r, f) in formulas.iter().enumerate() {
            self.set_formula(sheet, row0 + r as u32, col, f)?;
        }
        Ok(())
    }
    /// Recalculates; returns the number of cells the engine reports as changed,
    /// or None when the engine does not report changes.
    fn recalc(&mut self) -> Result<Option<usize>, String>;
    fn get(&mut self, sheet: usize, row: u32, col: u32) -> V;
}

pub struct LoadedSheet {
    pub name: String,
    /// (row, col) -> value for non-formula cells
    pub values: Vec<(u32, u32, V)>,
    /// (row, col, formula text, cached value)
    pub formulas: Vec<(u32, u32, String, V)>,
}

fn from_data(d: &Data) -> V {
    match d {
        Data::Int(i) => V::Num(*i as f64),
        Data::Float(f) => V::Num(*f),
        Data::String(s) => V::Str(s.clone()),
        Data::Bool(b) => V::Bool(*b),
        Data::DateTime(dt) => V::Num(dt.as_f64()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => V::Str(s.clone()),
        Data::Error(e) => V::Err(e.to_string()),
        Data::Empty => V::Empty,
    }
}

pub fn load(path: &str) -> Result<Vec<LoadedSheet>, String> {
    let mut wb: Xlsx<_> = open_workbook(path).map_err(|e| format!("open: {e}"))?;
    let names = wb.sheet_names().to_vec();
    let mut out = Vec::new();
    for name in names {
        let range = wb.worksheet_range(&name).ok();
        let franges = wb.worksheet_formula(&name).ok();
        let mut vals: HashMap<(u32, u32), V> = HashMap::new();
        if let Some(r) = &range {
            if let Some((sr, sc)) = r.start() {
                for (rr, cc, d) in r.used_cells() {
                    vals.insert((sr + rr as u32, sc + cc as u32), from_data(d));
                }
            }
        }
        let mut formulas = Vec::new();
        if let Some(fr) = &franges {
            if let Some((sr, sc)) = fr.start() {
                for (rr, cc, f) in fr.used_cells() {
                    if f.is_empty() {
                        continue;
                    }
                    let pos = (sr + rr as u32, sc + cc as u32);
                    let cached = vals.remove(&pos).unwrap_or(V::Empty);
                    formulas.push((pos.0, pos.1, f.clone(), cached));
                }
            }
        }
        let mut values: Vec<(u32, u32, V)> = vals.into_iter().map(|((r, c), v)| (r, c, v)).collect();
        values.sort_by_key(|(r, c, _)| (*r, *c));
        formulas.sort_by_key(|(r, c, _, _)| (*r, *c));
        out.push(LoadedSheet { name, values, formulas });
    }
    Ok(out)
}

/// Function-call names in a formula (upper-cased, `_xlfn.`/`_xlws.` kept).
pub fn function_names(formula: &str) -> Vec<String> {
    let b = formula.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let ch = b[i];
        if ch == b'"' {
            in_str = !in_str;
            i += 1;
            continue;
        }
        if in_str {
            i += 1;
            continue;
        }
        if ch.is_ascii_alphabetic() || ch == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && b[i] == b'(' && (start == 0 || !matches!(b[start - 1], b'!' | b'\'')) {
                out.push(formula[start..i].to_ascii_uppercase());
            }
            continue;
        }
        i += 1;
    }
    out
}

const VOLATILE: &[&str] = &["RAND", "RANDBETWEEN", "NOW", "TODAY", "OFFSET", "INDIRECT", "INFO", "CELL", "RANDARRAY"];

fn num_eq(a: f64, b: f64) -> bool {
    let d = (a - b).abs();
    d <= 1e-9 * a.abs().max(b.abs()) || d < 1e-12
}

pub fn same(cached: &V, got: &V) -> bool {
    match (cached, got) {
        (V::Num(a), V::Num(b)) => num_eq(*a, *b),
        (V::Str(a), V::Str(b)) => a == b,
        (V::Bool(a), V::Bool(b)) => a == b,
        (V::Err(a), V::Err(b)) => a == b,
        // A formula that yields an empty reference: Excel caches 0 or "".
        (V::Num(a), V::Empty) => *a == 0.0,
        (V::Str(a), V::Empty) => a.is_empty(),
        (V::Empty, V::Str(b)) => b.is_empty(),
        (V::Empty, V::Empty) => true,
        _ => false,
    }
}

/// Is `name` known to engine E? Probed by evaluating `NAME(1)` and `NAME()` in
/// a fresh engine: both yielding #NAME? means the function is unknown.
pub fn known_function<E: Engine>(cache: &mut HashMap<String, bool>, name: &str) -> bool {
    if let Some(k) = cache.get(name) {
        return *k;
    }
    let probe = |f: String| -> bool {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut e = E::create();
            let s = e.add_sheet("Sheet1").ok()?;
            if e.set_formula(s, 0, 0, &f).is_err() {
                return Some(false);
            }
            e.recalc().ok()?;
            Some(!matches!(e.get(s, 0, 0), V::Err(ref x) if x == "#NAME?"))
        }));
        matches!(r, Ok(Some(true)))
    };
    let k = probe(format!("{name}(1)")) || probe(format!("{name}()")) || probe(format!("{name}(1,1)"));
    cache.insert(name.to_string(), k);
    k
}

/// Runs one workbook through engine E; prints JSON lines on stdout.
pub fn corpus_file<E: Engine>(path: &str) {
    let t0 = Instant::now();
    let sheets = match load(path) {
        Ok(s) => s,
        Err(e) => {
            println!("{}", json!({"file": path, "phase": "load_error", "error": e}));
            return;
        }
    };
    let nform: usize = sheets.iter().map(|s| s.formulas.len()).sum();
    let ncached: usize = sheets
        .iter()
        .map(|s| s.formulas.iter().filter(|f| f.3 != V::Empty).count())
        .sum();
    println!("{}", json!({"file": path, "phase": "loaded", "formula_cells": nform, "with_cached": ncached}));
    if nform == 0 {
        return;
    }
    let mut e = E::create();
    let mut idx = Vec::new();
    let mut set_errors: BTreeMap<String, usize> = BTreeMap::new();
    for s in &sheets {
        match e.add_sheet(&s.name) {
            Ok(i) => idx.push(Some(i)),
            Err(err) => {
                *set_errors.entry(format!("add_sheet: {err}")).or_default() += 1;
                idx.push(None)
            }
        }
    }
    for (s, i) in sheets.iter().zip(&idx) {
        let Some(i) = *i else { continue };
        for (r, c, v) in &s.values {
            if let Err(err) = e.set_value(i, *r, *c, v) {
                *set_errors.entry(format!("set_value: {}", trunc(&err))).or_default() += 1;
            }
        }
    }
    let mut formula_set_failed: HashMap<(usize, u32, u32), String> = HashMap::new();
    for (si, (s, i)) in sheets.iter().zip(&idx).enumerate() {
        let Some(i) = *i else { continue };
        for (r, c, f, _) in &s.formulas {
            if let Err(err) = e.set_formula(i, *r, *c, f) {
                formula_set_failed.insert((si, *r, *c), trunc(&err));
            }
        }
    }
    let t_load = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let rec = e.recalc();
    let t_eval = t1.elapsed().as_secs_f64();
    if let Err(err) = &rec {
        println!("{}", json!({"file": path, "phase": "recalc_error", "error": trunc(err)}));
    }
    let mut known: HashMap<String, bool> = HashMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut samples = Vec::new();
    for (si, (s, i)) in sheets.iter().zip(&idx).enumerate() {
        for (r, c, f, cached) in &s.formulas {
            if *cached == V::Empty {
                *counts.entry("skip:no_cached_value".into()).or_default() += 1;
                continue;
            }
            let Some(i) = *i else {
                *counts.entry("fail:sheet_not_added".into()).or_default() += 1;
                continue;
            };
            let fnames = function_names(f);
            let reason: String = if let Some(err) = formula_set_failed.get(&(si, *r, *c)) {
                let _ = err;
                let unknown: Vec<&String> = fnames.iter().filter(|n| !known_function::<E>(&mut known, n)).collect();
                if let Some(u) = unknown.first() {
                    format!("fail:unsupported_function:{u}")
                } else {
                    "fail:set_formula_rejected".into()
                }
            } else if rec.is_err() {
                "fail:recalc_error".into()
            } else {
                let got = e.get(i, *r, *c);
                if same(cached, &got) {
                    "ok".into()
                } else {
                    let unknown: Vec<&String> = fnames.iter().filter(|n| !known_function::<E>(&mut known, n)).collect();
                    let why = if let (V::Err(g), Some(u)) = (&got, unknown.first()) {
                        let _ = g;
                        format!("fail:unsupported_function:{u}")
                    } else if fnames.iter().any(|n| VOLATILE.contains(&n.trim_start_matches("_XLFN.").as_ref())) {
                        "diff:volatile_function".into()
                    } else if let V::Err(g) = &got {
                        if matches!(cached, V::Err(_)) {
                            format!("diff:other_error:{}->{}", cached.show(), g)
                        } else {
                            format!("fail:engine_error:{g}")
                        }
                    } else if cached.kind() == got.kind() {
                        format!("diff:value_{}", got.kind())
                    } else {
                        format!("diff:type_{}->{}", cached.kind(), got.kind())
                    };
                    if samples.len() < 40 {
                        samples.push(json!({"sheet": s.name, "row": r + 1, "col": c + 1, "formula": f,
                            "cached": cached.show(), "got": got.show(), "reason": why}));
                    }
                    why
                }
            };
            *counts.entry(reason).or_default() += 1;
        }
    }
    println!(
        "{}",
        json!({"file": path, "phase": "done", "formula_cells": nform, "counts": counts,
               "set_errors": set_errors, "formulas_rejected": formula_set_failed.len(),
               "t_load": t_load, "t_eval": t_eval, "samples": samples})
    );
}

fn trunc(s: &str) -> String {
    s.chars().take(120).collect()
}

pub fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|x| x.parse().unwrap_or(0)))
        })
        .unwrap_or(0)
}

/// Synthetic benchmark: Sheet1 has a header row and `n` data rows with 10 numeric
/// columns A..J; column K holds `=B{r}*C{r}`. Summary!A1 holds SUM over K.
/// (The brief's `=B*C` column is put in K because A..J already hold numbers; the
/// SUM therefore reads K instead of D.)
pub fn bench<E: Engine>(n: u32) {
    let t0 = Instant::now();
    let mut e = E::create();
    let s1 = e.add_sheet("Sheet1").unwrap();
    let s2 = e.add_sheet("Summary").unwrap();
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|r| (0..10).map(|c| ((r as f64) * 10.0 + c as f64) % 97.0 + 1.0).collect())
        .collect();
    e.set_numbers(s1, 1, 0, &rows).unwrap();
    let formulas: Vec<String> = (0..n).map(|r| format!("B{}*C{}", r + 2, r + 2)).collect();
    e.set_formula_column(s1, 1, 10, &formulas).unwrap();
    e.set_formula(s2, 0, 0, &format!("SUM(Sheet1!K2:K{})", n + 1)).unwrap();
    let t_build = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let ch = e.recalc().unwrap();
    let t_eval = t1.elapsed().as_secs_f64();
    let expected: f64 = rows.iter().map(|r| r[1] * r[2]).sum();
    let got = e.get(s2, 0, 0);
    assert!(matches!(got, V::Num(x) if num_eq(x, expected)), "first sum {got:?} vs {expected}");
    // one-cell update, 5 times, report the median
    let mut times = Vec::new();
    let mut changed = None;
    let mut exp = expected;
    for k in 0..5u32 {
        let r = n / 2 + k;
        let old = rows[r as usize][1];
        let newv = 1000.0 + k as f64;
        let t = Instant::now();
        e.set_value(s1, r + 1, 1, &V::Num(newv)).unwrap();
        changed = e.recalc().unwrap();
        let dt = t.elapsed().as_secs_f64();
        exp += (newv - old) * rows[r as usize][2];
        let got = e.get(s2, 0, 0);
        assert!(matches!(got, V::Num(x) if num_eq(x, exp)), "sum after update {got:?} vs {exp}");
        let gk = e.get(s1, r + 1, 10);
        assert!(matches!(gk, V::Num(x) if num_eq(x, newv * rows[r as usize][2])), "K after update {gk:?}");
        times.push(dt);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{}",
        json!({"engine": E::NAME, "rows": n, "build_s": t_build, "first_eval_s": t_eval,
               "build_plus_eval_s": t_build + t_eval, "first_eval_changed": ch,
               "update_median_s": times[2], "update_all_s": times, "update_changed": changed,
               "vmhwm_kb": rss_kb()})
    );
}
