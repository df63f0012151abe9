// Prints calamine's formula range start and the formulas of given cells (row, col 0-based absolute).
use calamine::{open_workbook, Reader, Xlsx};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut wb: Xlsx<_> = open_workbook(&a[1]).unwrap();
    let s = wb.sheet_names()[0].clone();
    let fr = wb.worksheet_formula(&s).unwrap();
    let vr = wb.worksheet_range(&s).unwrap();
    println!("formula start {:?} end {:?}; value start {:?}", fr.start(), fr.end(), vr.start());
    for rc in a[2..].chunks(2) {
        let (r, c): (u32, u32) = (rc[0].parse().unwrap(), rc[1].parse().unwrap());
        println!("({r},{c}) f={:?} v={:?}", fr.get_value((r, c)), vr.get_value((r, c)));
    }
}
