//! How the writer's cells point at the file's own cell formats.
//!
//! rust_xlsxwriter writes its own `styles.xml`, with the formats it can
//! express. When the file's styles part is carried whole (every record as
//! the file has it, see [`super::merge`]), the writer is given, for each of
//! the file's cell formats, a stand-in: a format whose only setting is a
//! number format code naming the file's format by its index. The stand-ins
//! of the file's formats are registered first, in the file's order, so the
//! writer gives each the file's own index and its cells' `s` attributes
//! need no renumbering. Stand-ins the writer meets later come after them,
//! and the merge turns each into a copy of the file's format it names: one
//! that also names a number format (a date written into a General cell),
//! and the file's format 0 named outright, for a cell of that format under
//! a formatted row or column (given no format, the writer would give it
//! the row's or column's).

use rust_xlsxwriter::Format;

/// What every stand-in's number format code begins with.
const PREFIX: &str = "sheetd-format:";

/// The stand-in for the file's cell format `index`, with the number
/// format `code` in place of its own when given.
pub fn stand_in(index: u32, code: Option<&str>) -> Format {
    Format::new().set_num_format(name(index, code))
}

/// The number format code of [`stand_in`]`(index, code)`.
fn name(index: u32, code: Option<&str>) -> String {
    match code {
        Some(code) => format!("{PREFIX}{index}:{code}"),
        None => format!("{PREFIX}{index}"),
    }
}

/// The file's cell format a stand-in's number format `code` names, and the
/// number format it puts in place of the format's own; `None` for a code
/// that is no stand-in's.
pub fn named_by(code: &str) -> Option<(u32, Option<&str>)> {
    let rest = code.strip_prefix(PREFIX)?;
    let (index, code) = match rest.split_once(':') {
        Some((index, code)) => (index, Some(code)),
        None => (rest, None),
    };
    Some((index.parse().ok()?, code))
}

/// Registers the stand-ins of the file's cell formats `1..count` with
/// `book`, so that each gets the file's index (index 0 is the writer's
/// default format, and a cell of the file's format 0 is written without
/// one).
pub fn register(book: &mut rust_xlsxwriter::Workbook, count: usize) {
    for index in 1..count as u32 {
        book.register_format(&stand_in(index, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stand_in_names_its_format_and_number_format() {
        assert_eq!(named_by(&name(7, None)), Some((7, None)));
        assert_eq!(
            named_by(&name(0, Some("yyyy/mm/dd hh:mm:ss"))),
            Some((0, Some("yyyy/mm/dd hh:mm:ss")))
        );
        assert_eq!(named_by("#,##0.00"), None);
        assert_eq!(named_by("sheetd-format:x"), None);
    }
}
