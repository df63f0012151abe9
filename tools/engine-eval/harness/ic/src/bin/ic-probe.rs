//! API / behaviour probes for ironcalc_base 0.9.1.
use common::{Engine, V};
use ironcalc_base::expressions::types::CellReferenceIndex;
use ic::Ic;

fn show(e: &mut Ic, s: usize, r: u32, c: u32) -> String {
    let f = e.m.get_cell_formula(s as u32, r as i32 + 1, c as i32 + 1).ok().flatten().unwrap_or_default();
    format!("{} -> {}", f, e.get(s, r, c).show())
}
fn rc(a: &str) -> (u32, u32) {
    ((a[1..].parse::<u32>().unwrap() - 1), (a.as_bytes()[0] - b'A') as u32)
}

fn main() {
    let mut e = Ic::create();
    let s = e.add_sheet("Sheet1").unwrap();
    let o = e.add_sheet("Orders").unwrap();
    for r in 1..=5u32 {
        e.set_value(s, r, 1, &V::Num(r as f64)).unwrap();
        e.set_value(s, r, 2, &V::Num(10.0)).unwrap();
        e.set_value(o, r, 3, &V::Num(r as f64)).unwrap();
    }
    e.set_value(s, 0, 0, &V::Str("hdr".into())).unwrap();
    let cases: Vec<(&str, &str)> = vec![
        ("D2", "B2*C2"), ("D3", "B3*C3"), ("D4", "B4*C4"), ("D5", "B5*C5"),
        ("E1", "SUM(Orders!D2:D100)"), ("E2", "1/0"), ("E3", "A1&\"x\""), ("E4", "B2>1"),
        ("E5", "FOOBAR(1)"), ("E6", "1+*2"), ("E7", "SUM(1,"), ("E8", "[1]Sheet1!A1"),
        ("E9", "NoSuchSheet!A1"), ("E10", "_xlfn.CONCAT(\"a\",\"b\")"), ("E11", "RAND()"),
        ("E12", "SUM(D2:D5)"), ("E13", "$B$3+B4"), ("E14", "ROUND(2.5,0)"),
        ("E15", "'C:\\x\\[book.xlsx]Sheet1'!A1"),
    ];
    for (a, f) in &cases {
        let (row, col) = rc(a);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.set_formula(s, row, col, f)));
        println!("set {a} = {f}: {r:?}");
    }
    println!("evaluate: {:?}", e.recalc());
    for (a, _) in &cases {
        let (row, col) = rc(a);
        println!("  {a}: {}", show(&mut e, s, row, col));
    }
    // no change report: only evaluate() (full). Time one evaluate here is trivial.
    // (a) fill-down: extend_to / extend_copied_value
    println!("extend_to(D2 -> D9) = {:?}", e.m.extend_to(0, 2, 4, 9, 4));
    for f in ["=B2*C2", "=SUM(Orders!D2:D100)", "=$B$2*C2+B$2", "=B1"] {
        let src = CellReferenceIndex { sheet: 0, row: 2, column: 4 };
        let down = CellReferenceIndex { sheet: 0, row: 5, column: 4 };
        let up = CellReferenceIndex { sheet: 0, row: 1, column: 4 };
        println!("fill {f} from D2: to D5 -> {:?}; to D1 -> {:?}", e.m.extend_copied_value(f, &src, &down), e.m.extend_copied_value(f, &src, &up));
    }
    // (b) delete / insert rows on the model
    println!("delete_rows(sheet0, row 3, 1): {:?}", e.m.delete_rows(0, 3, 1));
    e.recalc().unwrap();
    for a in ["D2", "D3", "D4", "E11", "E12", "E13"] {
        let (row, col) = rc(a);
        println!("  {a}: {}", show(&mut e, s, row, col));
    }
    println!("insert_rows(sheet0, row 2, 1): {:?}", e.m.insert_rows(0, 2, 1));
    e.recalc().unwrap();
    for a in ["D3", "D4", "E13", "E14"] {
        let (row, col) = rc(a);
        println!("  {a}: {}", show(&mut e, s, row, col));
    }
    // volatile: RAND changes on each evaluate?
    let a = e.get(s, 10, 4);
    e.recalc().unwrap();
    println!("RAND across evaluate(): {:?} -> {:?}", a, e.get(s, 10, 4));
}
