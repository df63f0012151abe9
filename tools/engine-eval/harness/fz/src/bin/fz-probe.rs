//! API / behaviour probes for formualizer 0.13.
use common::{Engine, V};
use formualizer::common::LiteralValue;
use formualizer::eval::engine::graph::editor::reference_adjuster::{ReferenceAdjuster, RelativeReferenceAdjuster, ShiftOperation};
use formualizer::parse::parser::parse;
use formualizer::parse::pretty::canonical_formula;
use fz::Fz;

fn show(e: &mut Fz, s: usize, r: u32, c: u32) -> String {
    let f = e.wb.get_formula(&e.sheets[s], r + 1, c + 1).unwrap_or_default();
    format!("{} -> {}", f, e.get(s, r, c).show())
}

fn main() {
    let mut e = Fz::create();
    let s = e.add_sheet("Sheet1").unwrap();
    let o = e.add_sheet("Orders").unwrap();
    for r in 1..=5u32 {
        e.set_value(s, r, 1, &V::Num(r as f64)).unwrap(); // B
        e.set_value(s, r, 2, &V::Num(10.0)).unwrap(); // C
        e.set_value(o, r, 3, &V::Num(r as f64)).unwrap(); // Orders!D
    }
    e.set_value(s, 0, 0, &V::Str("hdr".into())).unwrap();
    let cases: Vec<(&str, &str)> = vec![
        ("D2", "B2*C2"), ("D3", "B3*C3"), ("D4", "B4*C4"), ("D5", "B5*C5"),
        ("E1", "SUM(Orders!D2:D100)"), ("E2", "1/0"), ("E3", "A1&\"x\""), ("E4", "B2>1"),
        ("E5", "FOOBAR(1)"), ("E6", "1+*2"), ("E7", "SUM(1,"), ("E10", "_xlfn.CONCAT(\"a\",\"b\")"), ("E11", "RAND()"),
        ("E12", "SUM(D2:D5)"), ("E13", "$B$3+B4"), ("E14", "ROUND(2.5,0)"),
    ];
    for (addr, f) in &cases {
        let col = (addr.as_bytes()[0] - b'A') as u32;
        let row: u32 = addr[1..].parse::<u32>().unwrap() - 1;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.set_formula(s, row, col, f)));
        println!("set {addr} = {f}: {:?}", r.map(|x| x.map_err(|e| e.chars().take(100).collect::<String>())));
    }
    println!("first recalc: changed={:?}", e.recalc());
    for (addr, _) in &cases {
        let col = (addr.as_bytes()[0] - b'A') as u32;
        let row: u32 = addr[1..].parse::<u32>().unwrap() - 1;
        println!("  {addr}: {}", show(&mut e, s, row, col));
    }
    // external / missing-sheet references, each in a fresh workbook next to =1+1
    for f in ["[1]Sheet1!A1", "NoSuchSheet!A1", "'C:\\x\\[book.xlsx]Sheet1'!A1"] {
        let mut w = Fz::create();
        let s = w.add_sheet("Sheet1").unwrap();
        w.set_formula(s, 0, 1, "1+1").unwrap();
        let set = w.set_formula(s, 0, 0, f);
        let rc = w.recalc();
        println!("fresh wb: A1={f}: set={set:?} recalc={rc:?} A1={} B1(=1+1)={}", w.get(s,0,0).show(), w.get(s,0,1).show());
    }
    // incremental: change B3 -> which cells does the engine report?
    e.set_value(s, 2, 1, &V::Num(100.0)).unwrap();
    let (_r, delta) = e.wb.evaluate_all_with_delta().unwrap();
    let cells: Vec<_> = delta.changed_cells.iter().map(|p| p.to_excel_1based()).collect();
    println!("after B3=100: changed cells (sheet_id,row,col) = {cells:?}");
    // a second recalc with no edit
    let (_r, delta) = e.wb.evaluate_all_with_delta().unwrap();
    println!("recalc without edits: {} changed", delta.changed_cells.len());

    // volatile: RAND under the default volatile level and under OnRecalc
    for lvl in [None, Some(formualizer::eval::traits::VolatileLevel::OnRecalc)] {
        let mut w = Fz::create();
        let s = w.add_sheet("Sheet1").unwrap();
        if let Some(l) = lvl { w.wb.engine_mut().set_volatile_level(l); }
        w.set_formula(s, 0, 0, "RAND()").unwrap();
        w.set_formula(s, 0, 1, "NOW()").unwrap();
        w.recalc().unwrap();
        let a = (w.get(s, 0, 0), w.get(s, 0, 1));
        w.set_value(s, 5, 5, &V::Num(1.0)).unwrap();
        let ch = w.recalc().unwrap();
        let b = (w.get(s, 0, 0), w.get(s, 0, 1));
        println!("volatile level {lvl:?}: RAND/NOW before {a:?} after an unrelated edit {b:?}; changed={ch:?}");
    }
    // (a) fill-down with the parser + RelativeReferenceAdjuster
    for f in ["=B2*C2", "=SUM(Orders!D2:D100)", "=$B$2*C2+B$2", "=B1"] {
        let ast = parse(f).unwrap();
        let moved = RelativeReferenceAdjuster::new(3, 0).adjust_formula(&ast);
        let up = RelativeReferenceAdjuster::new(-5, 0).adjust_formula(&ast);
        println!("fill {f} down 3 rows -> {} ; up 5 rows -> {}", canonical_formula(&moved), canonical_formula(&up));
    }
    // (b) ReferenceAdjuster on a parsed formula (context-free: every ref binds to sheet_id)
    let sid = e.wb.engine().sheet_id("Sheet1").unwrap();
    for f in ["=B2*C2", "=B4*C4", "=SUM(B2:B5)", "=SUM(B3:B3)", "=B5"] {
        let ast = parse(f).unwrap();
        let adj = ReferenceAdjuster::new().adjust_ast(&ast, &ShiftOperation::DeleteRows { sheet_id: sid, start: 2, count: 1 });
        println!("delete row 3 (0-based start 2): {f} -> {}", canonical_formula(&adj));
    }
    // engine-level delete_rows / insert_rows on the workbook
    let r = e.wb.engine_mut().delete_rows("Sheet1", 3, 1);
    println!("engine.delete_rows(Sheet1, 3, 1): {:?}", r.as_ref().map(|_| "ok").map_err(|e| format!("{e:?}")));
    println!("recalc: {:?}", e.recalc());
    for a in ["D2", "D3", "D4", "E12", "E13"] {
        let col = (a.as_bytes()[0] - b'A') as u32;
        let row: u32 = a[1..].parse::<u32>().unwrap() - 1;
        println!("  {a}: {}", show(&mut e, s, row, col));
    }
    let r = e.wb.engine_mut().insert_rows("Sheet1", 2, 1);
    println!("engine.insert_rows(Sheet1, before 2, 1): {:?}", r.as_ref().map(|_| "ok").map_err(|e| format!("{e:?}")));
    e.recalc().unwrap();
    for a in ["D3", "D4", "E13", "E14"] {
        let col = (a.as_bytes()[0] - b'A') as u32;
        let row: u32 = a[1..].parse::<u32>().unwrap() - 1;
        println!("  {a}: {}", show(&mut e, s, row, col));
    }
    // reading typed values
    let v = e.wb.get_value("Sheet1", 2, 5);
    println!("raw get_value(E2) = {v:?}");
    let _ = LiteralValue::Empty;
}
