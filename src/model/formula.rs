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
}
