//! What a formula may refer to, read from its text without evaluating it.
//!
//! The answers err on the side of "it may": deleting rows is refused when a
//! formula could refer to cells that would move, so a false "may" costs a
//! refused delete, while a false "may not" would leave a formula pointing at
//! the wrong data.

/// Whether the formula could refer to any cell or range: true unless every
/// identifier in it (outside string literals) is a function name or a
/// boolean literal and it has no range, sheet or name reference.
pub fn may_refer_to_cells(formula: &str) -> bool {
    let code = without_string_literals(formula);
    if code.contains(['!', ':', '[']) {
        return true;
    }
    let mut chars = code.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !(c.is_alphabetic() || c == '_' || c == '$') {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, next)) = chars.peek() {
            if next.is_alphanumeric() || matches!(next, '_' | '.' | '$') {
                end = i + next.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        let word = code[start..end].to_ascii_uppercase();
        let is_call = code[end..].trim_start().starts_with('(');
        let reference_function = matches!(word.as_str(), "INDIRECT" | "OFFSET");
        if (is_call && !reference_function)
            || (!is_call && matches!(word.as_str(), "TRUE" | "FALSE"))
        {
            continue;
        }
        // A cell (A1, $B$2), a defined name, or a function that builds references.
        return true;
    }
    false
}

/// The formula with the text of every `"…"` literal removed (`""` inside a
/// literal is an escaped quote).
fn without_string_literals(formula: &str) -> String {
    let mut out = String::with_capacity(formula.len());
    let mut in_string = false;
    for c in formula.chars() {
        if c == '"' {
            in_string = !in_string;
            out.push('"');
        } else if !in_string {
            out.push(c);
        }
    }
    out
}

/// The sheet part of each sheet-qualified reference in a formula: `Data`
/// in `Data!A1`, `My Sheet` in `'My Sheet'!A1`, `Alpha:Gamma` in a 3D
/// reference.
pub fn sheet_prefixes(formula: &str) -> impl Iterator<Item = &str> {
    formula.match_indices('!').filter_map(move |(at, _)| {
        let before = &formula[..at];
        if let Some(quoted) = before.strip_suffix('\'') {
            // A quoted name runs back to the quote that opens it ('' is a quote inside).
            let open = quoted.rfind('\'')?;
            return Some(&quoted[open + 1..]);
        }
        let start = before
            .rfind(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$')))
            .map_or(0, |i| i + 1);
        Some(&before[start..])
    })
}

/// The formula as it reads copied `rows` down and `columns` right (negative:
/// up, left), as a spreadsheet app copies it: every relative reference
/// moves (`B2` → `B3`), a `$` part stays (`$B$2`), whole rows and columns
/// move along their axis (`1:3`, `A:C`), and a reference moved off the
/// grid becomes `#REF!`. Text literals, quoted sheet names and brackets
/// (structured references, external workbooks) are left as they are.
pub fn shifted(formula: &str, rows: i64, columns: i64) -> String {
    let chars: Vec<char> = formula.chars().collect();
    let mut out = String::with_capacity(formula.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let end = match c {
            '"' | '\'' => quoted_end(&chars, i),
            '[' => bracket_end(&chars, i),
            c if c.is_alphanumeric() || matches!(c, '$' | '_' | '.') => {
                let mut end = i;
                while end < chars.len()
                    && (chars[end].is_alphanumeric() || matches!(chars[end], '$' | '_' | '.'))
                {
                    end += 1;
                }
                let word: String = chars[i..end].iter().collect();
                let after = chars.get(end).copied();
                let before = i.checked_sub(1).map(|b| chars[b]);
                let in_range = after == Some(':') || before == Some(':');
                let called = after == Some('(');
                match (!called)
                    .then(|| moved(&word, rows, columns, in_range))
                    .flatten()
                {
                    Some(moved) => out.push_str(&moved),
                    None => out.push_str(&word),
                }
                i = end;
                continue;
            }
            _ => i + 1,
        };
        out.extend(&chars[i..end]);
        i = end;
    }
    out
}

/// The end (exclusive) of the literal or quoted name that opens at
/// `start` (a doubled quote is a quote inside it).
fn quoted_end(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let mut i = start + 1;
    while i < chars.len() {
        if chars[i] == quote {
            if chars.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

/// The end (exclusive) of the bracketed part that opens at `start`.
fn bracket_end(chars: &[char], start: usize) -> usize {
    let mut depth = 0;
    for (i, c) in chars.iter().enumerate().skip(start) {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    chars.len()
}

/// `word` moved, when it is a reference: a cell (`$B2`), or next to a `:`
/// a whole column (`C`) or row (`3`). `None` when it is something else (a
/// name, a number, a function).
fn moved(word: &str, rows: i64, columns: i64, in_range: bool) -> Option<String> {
    const LAST_ROW: i64 = 1_048_576;
    const LAST_COLUMN: i64 = 16_384;
    let (column_fixed, rest) = match word.strip_prefix('$') {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    let letters = rest.chars().take_while(char::is_ascii_alphabetic).count();
    let (column_text, rest) = rest.split_at(letters);
    let (row_fixed, row_text) = match rest.strip_prefix('$') {
        Some(digits) => (true, digits),
        None => (false, rest),
    };
    let digits_only = !row_text.is_empty() && row_text.chars().all(|c| c.is_ascii_digit());
    let column = (letters > 0 && letters <= 3).then(|| {
        column_text.chars().fold(0i64, |n, c| {
            n * 26 + i64::from(c.to_ascii_uppercase() as u8 - b'A' + 1)
        })
    });
    let row = digits_only.then(|| row_text.parse::<i64>().ok()).flatten();
    let shift = |value: i64, by: i64, fixed: bool, last: i64| match fixed {
        true => Some(value),
        false => Some(value + by).filter(|v| (1..=last).contains(v)),
    };
    let column_name = |n: i64| {
        let mut name = Vec::new();
        let mut n = n;
        while n > 0 {
            name.push((b'A' + ((n - 1) % 26) as u8) as char);
            n = (n - 1) / 26;
        }
        name.iter().rev().collect::<String>()
    };
    let dollar = |fixed: bool| if fixed { "$" } else { "" };
    let text = match (column, row) {
        (Some(c), Some(r)) if c <= LAST_COLUMN && r <= LAST_ROW => {
            match (
                shift(c, columns, column_fixed, LAST_COLUMN),
                shift(r, rows, row_fixed, LAST_ROW),
            ) {
                (Some(c), Some(r)) => format!(
                    "{}{}{}{r}",
                    dollar(column_fixed),
                    column_name(c),
                    dollar(row_fixed)
                ),
                _ => "#REF!".to_owned(),
            }
        }
        (Some(c), None) if in_range && rest.is_empty() && c <= LAST_COLUMN => {
            match shift(c, columns, column_fixed, LAST_COLUMN) {
                Some(c) => format!("{}{}", dollar(column_fixed), column_name(c)),
                None => "#REF!".to_owned(),
            }
        }
        (None, Some(r)) if in_range && letters == 0 => {
            let fixed = column_fixed || row_fixed;
            match shift(r, rows, fixed, LAST_ROW) {
                Some(r) => format!("{}{r}", dollar(fixed)),
                None => "#REF!".to_owned(),
            }
        }
        _ => return None,
    };
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_without_references() {
        for formula in [
            "TRUE()",
            "FALSE()",
            "1+2",
            "\"a\"&\"b\"",
            "1/0",
            "PI()*2",
            "TRUE",
            "\"A1:B2!\"&\"x\"",
        ] {
            assert!(!may_refer_to_cells(formula), "{formula}");
        }
    }

    #[test]
    fn formulas_with_references() {
        for formula in [
            "A1",
            "$B$2*2",
            "SUM(A:A)",
            "SUM(1:3)",
            "Data!A1",
            "'My Sheet'!A1",
            "INDIRECT(\"A\"&1)",
            "OFFSET(x,1,1)",
            "Rate*2",
            "SUM(Table1[Amount])",
            "ROW()+A2",
        ] {
            assert!(may_refer_to_cells(formula), "{formula}");
        }
    }

    #[test]
    fn sheet_prefixes_of_references() {
        let formula = "SUM(Alpha:Gamma!A2)+'My Sheet'!B1+Data!$C$3";
        let prefixes: Vec<_> = sheet_prefixes(formula).collect();
        assert_eq!(prefixes, ["Alpha:Gamma", "My Sheet", "Data"]);
    }

    #[test]
    fn shifted_formulas_move_their_relative_references() {
        let cases = [
            ("B2*C2", 3, 0, "B5*C5"),
            ("$B$2*C2+B$2+$C2", 3, 2, "$B$2*E5+D$2+$C5"),
            ("SUM(A2:A10)", 1, 0, "SUM(A3:A11)"),
            ("SUM(A:A)+SUM(2:3)", 2, 1, "SUM(B:B)+SUM(4:5)"),
            ("Data!B2+'My Sheet'!C3", 1, 0, "Data!B3+'My Sheet'!C4"),
            ("\"B2\"&B2", 1, 0, "\"B2\"&B3"),
            ("LOG10(B2)+ATAN2(1,2)", 1, 0, "LOG10(B3)+ATAN2(1,2)"),
            ("Table1[Amount]*B2", 1, 0, "Table1[Amount]*B3"),
            ("TEXT(C25, B25)", 3, 0, "TEXT(C28, B28)"),
            ("B2", -2, 0, "#REF!"),
            ("Rate*1.5+2", 5, 5, "Rate*1.5+2"),
        ];
        for (formula, rows, columns, expected) in cases {
            assert_eq!(shifted(formula, rows, columns), expected, "{formula}");
        }
    }
}
