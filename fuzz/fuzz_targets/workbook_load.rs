//! xlsx bytes → Workbook. Errors are fine; panics, aborts and OOMs are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sheetd::model::request::ReadQuery;

fuzz_target!(|data: &[u8]| {
    let Ok(workbook) = sheetd::xlsx::read_workbook(data, 10_000_000) else {
        return;
    };
    // What a GET does next with a parsed sheet: find the header, read rows.
    let query = ReadQuery::from_pairs(&[]).expect("no pairs is a valid query");
    for sheet in &workbook.sheets {
        let _ = sheet.data_row_count();
        let _ = sheet.read(&query);
    }
});
