//! Which formula texts rust_xlsxwriter writes otherwise than they are.
//!
//! The writer's `Formula::new` looks for functions Excel added after 2007
//! ("future" functions: `CONCAT`, `XLOOKUP`, `STDEV.S`…). In a text without
//! `_xlfn.` it prefixes each with `_xlfn.` (as Excel's files have them); and
//! when one of them returns an array (`XLOOKUP`, `FILTER`, `SORT`…), it
//! writes the formula as a dynamic array (`<c cm="1"><f t="array">`),
//! whatever the file had. It has no setting for either, and does not say
//! what it did, so [`writer_rewrites`] asks it about each function a text
//! calls; the fix pass writes those formulas as their file has them.

use std::collections::HashMap;

use rust_xlsxwriter::Formula;

/// Whether the writer would write the formula `text` otherwise than it
/// stands, or as a dynamic array: it calls a future function. A text with
/// `_xlfn.` is copied as it is, but may still become a dynamic array; the
/// writer does not say which of its functions return arrays, so any future
/// function counts (the fix pass then writes the formula as it was, which
/// changes nothing when the writer would not have). `known` remembers the
/// names already asked about.
pub(super) fn writer_rewrites(text: &str, known: &mut HashMap<String, bool>) -> bool {
    called_functions(text).any(|name| match known.get(name) {
        Some(&future) => future,
        None => {
            let future = is_future_function(name);
            known.insert(name.to_owned(), future);
            future
        }
    })
}

/// Whether the writer takes `name` for a future function: it writes a call
/// of it with an `_xlfn.` prefix (or `_xlfn._xlws.` for `FILTER` and
/// `SORT`), the way a text that has the prefix already is written.
fn is_future_function(name: &str) -> bool {
    let bare = Formula::new(format!("{name}()"));
    bare == Formula::new(format!("_xlfn.{name}()"))
        || bare == Formula::new(format!("_xlfn._xlws.{name}()"))
}

/// The names of the functions `text` calls, outside its string literals,
/// as the writer finds them: a run of capitals, digits and dots before a
/// `(` (so in `_xlfn.CONCAT(` the name is `CONCAT`).
fn called_functions(text: &str) -> impl Iterator<Item = &str> {
    let mut in_string = false;
    let mut start = None;
    text.char_indices().filter_map(move |(at, c)| {
        if c == '"' {
            in_string = !in_string;
            start = None;
            return None;
        }
        if in_string {
            return None;
        }
        if c.is_ascii_uppercase() || c.is_ascii_digit() || c == '.' {
            if start.is_none() && c != '.' {
                start = Some(at);
            }
            return None;
        }
        let name = start.take().map(|from| &text[from..at]);
        name.filter(|_| c == '(')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_added_after_2007_are_rewritten_older_ones_are_not() {
        let mut known = HashMap::new();
        let mut rewrites = |text: &str| writer_rewrites(text, &mut known);
        assert!(rewrites("CONCAT(A1,B1)"));
        assert!(rewrites("XLOOKUP(A1,B:B,C:C)"));
        assert!(rewrites("_xlfn.XLOOKUP(A1,B:B,C:C)"));
        assert!(rewrites("SUM(_xlfn._xlws.FILTER(A:A,B:B>1))"));
        assert!(rewrites("_xlfn.STDEV.S(A1:A9)"));
        assert!(!rewrites("SUM(A1:A9)+VLOOKUP(A1,B:C,2,FALSE)"));
        assert!(
            !rewrites("\"XLOOKUP(\"&A1"),
            "a call inside a string is text"
        );
        assert!(!rewrites("Sheet1.XLOOKUP"), "a name without a call");
        assert!(!rewrites("{1,2;3,4}"));
    }

    #[test]
    fn called_functions_are_found_as_the_writer_finds_them() {
        let names: Vec<&str> =
            called_functions("IF(_xlfn.STDEV.S(A1:A3)>1,\"SUM(\",LEN(B1))").collect();
        assert_eq!(names, ["IF", "STDEV.S", "LEN"]);
    }
}
