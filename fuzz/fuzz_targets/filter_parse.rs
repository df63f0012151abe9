//! The filter language: parse, bind against a header, match rows. Never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sheetd::model::Cell;
use sheetd::model::filter::parse_filter;
use sheetd::model::header::Header;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(expr) = parse_filter("filter", s) else {
        return;
    };

    // Columns: a..f, a duplicate ("dup" twice, ambiguous), an empty name,
    // names with ':' and non-ASCII text.
    let names = ["num", "text", "date", "flag", "blank", "dup", "dup", "", "a:b", "städt"];
    let header = Header::from_names(names.iter().map(|n| n.to_string()));
    let Ok(bound) = expr.bind(Some(&header)) else {
        // Also the "no header" path.
        let _ = expr.bind(None);
        return;
    };

    // The operand text (after the second ':') as a cell value, so the fuzzer
    // controls both sides of comparisons and `like` matching.
    let operand = s.splitn(3, ':').nth(2).unwrap_or("");
    let as_number = operand.trim().parse::<f64>().ok();

    let text = |t: &str| Cell::Text(t.to_owned());
    let mut rows: Vec<Vec<Cell>> = vec![
        vec![
            Cell::Number(30.0),
            text("Berlin"),
            Cell::DateTime(45306.0), // 2024-01-15
            Cell::Bool(true),
            Cell::Empty,
            text("x"),
            text("y"),
            text("hidden"),
            text("colon"),
            text("Ärger"),
        ],
        vec![
            Cell::Number(-0.0),
            text(""),
            Cell::DateTime(0.5), // a time of day
            Cell::Bool(false),
            Cell::Empty,
        ],
        vec![
            Cell::Number(f64::MAX),
            text("ǅ İstanbul ß"),
            Cell::DateTime(2_958_465.999_99), // 9999-12-31 23:59:59.999
            Cell::Duration(1.25),
            Cell::Error("#DIV/0!".into()),
            Cell::Number(f64::MIN_POSITIVE),
            Cell::DateTime(-1.0),
            Cell::Number(1e-300),
            Cell::DateTime(60.0), // Excel's 1900-02-29
            Cell::Number(9_007_199_254_740_993.0),
        ],
        vec![Cell::Number(f64::NAN), Cell::Number(f64::INFINITY), Cell::DateTime(f64::NAN)],
        vec![], // a row shorter than the column
        vec![text(s), text(operand), Cell::Bool(operand.eq_ignore_ascii_case("true"))],
    ];
    if let Some(n) = as_number {
        rows.push(vec![
            Cell::Number(n),
            text(operand),
            Cell::DateTime(n),
            Cell::Bool(n != 0.0),
            Cell::Duration(n),
            Cell::DateTime(-n),
            Cell::Number(n.next_up()),
            Cell::DateTime(n + 1.0 / 86_400.0),
            Cell::Number(n * 1e10),
            Cell::DateTime(n * 1e10),
        ]);
    }
    for row in &rows {
        let _ = bound.matches(row);
    }
});
