//! The benchmarks' workbook: `rows` x 10 columns of text, numbers, dates
//! and booleans, as rust_xlsxwriter writes it.

const COLUMNS: [&str; 10] = [
    "id", "name", "city", "amount", "joined", "active", "qty", "note", "code", "score",
];

/// Writes an `rows` x 10 workbook with rust_xlsxwriter: the benchmark's
/// data, and (timed) the floor.
pub fn write_workbook(rows: usize) -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let date = rust_xlsxwriter::Format::new().set_num_format("yyyy/mm/dd");
    let sheet = book.add_worksheet().set_name("Data").unwrap();
    for (c, name) in COLUMNS.iter().enumerate() {
        sheet.write_string(0, c as u16, *name).unwrap();
    }
    for i in 0..rows {
        let r = i as u32 + 1;
        sheet.write_number(r, 0, i as f64).unwrap();
        sheet.write_string(r, 1, format!("name {i}")).unwrap();
        sheet
            .write_string(r, 2, ["Berlin", "Paris", "Lima", "Oslo"][i % 4])
            .unwrap();
        sheet.write_number(r, 3, i as f64 * 1.25).unwrap();
        sheet
            .write_number_with_format(r, 4, 45000.0 + (i % 1000) as f64, &date)
            .unwrap();
        sheet.write_boolean(r, 5, i % 2 == 0).unwrap();
        sheet.write_number(r, 6, (i % 97) as f64).unwrap();
        sheet
            .write_string(r, 7, "some free text in a note")
            .unwrap();
        sheet.write_string(r, 8, format!("C-{i:06}")).unwrap();
        sheet.write_number(r, 9, (i % 1000) as f64 / 10.0).unwrap();
    }
    book.save_to_buffer().unwrap()
}
