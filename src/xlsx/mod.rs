//! The xlsx format: bytes ⇄ [`Workbook`](crate::model::Workbook).
//!
//! A pure layer, synchronous and free of the store's concerns (files, locks,
//! caching), so that fuzz targets, benchmarks and tools use exactly what the
//! server uses. calamine reads the cell values ([`read`]); one pass over the
//! package reads what calamine does not expose ([`package`], with the styles
//! of [`styles`]); rust_xlsxwriter writes the workbook back ([`write`]).

/// What a rewrite carries, read from the package.
mod carry;
/// The last save kept in compressed chunks, for the next save to make in
/// part.
mod chunked;
/// Cells the writer cannot write as the model holds them, put right after.
mod fix;
/// Which formula texts the writer writes otherwise than they are.
mod future;
/// The writer's package with what a rewrite carries put back.
mod merge;
/// Relationships and content types, read and written.
mod opc;
/// One pass over the package for what calamine does not expose.
mod package;
/// Cell values, with calamine.
mod read;
/// Worksheets calamine refuses but spreadsheet apps open, put right.
mod repair;
/// Rich text runs of shared and inline strings.
mod rich;
/// The children of `<worksheet>`: schema order, writer, anchoring.
mod sheet_children;
/// What the file carries beyond the model, moved with rows.
mod shift;
/// The writer's cells pointing at the file's own cell formats.
mod stand_in;
/// `styles.xml` → cell formats, and cell formats → writer formats.
mod styles;
/// XML as a tree of owned events, for the parts a row move rewrites.
mod tree;
/// The workbook written back, with rust_xlsxwriter.
mod write;
/// XML helpers every reader and the merge share.
mod xml;

pub use chunked::{KeptWrite, with_row_numbers};
pub use package::{MAX_UNPACKED_BYTES, sheet_names};

use crate::model::value::FIRST_SERIAL_AFTER_LEAP_DAY;

/// Days between the 1900 and the 1904 date systems' day zero, for dates
/// from 1900/03/01 on (before it, the systems are a day closer).
const DAYS_1900_TO_1904: f64 = 1462.0;

/// A 1904 workbook's date serial as the model counts dates (the 1900
/// system's serial of the same day).
fn from_1904(serial: f64) -> f64 {
    let model = serial + DAYS_1900_TO_1904;
    match model < FIRST_SERIAL_AFTER_LEAP_DAY {
        true => model - 1.0,
        false => model,
    }
}

/// The serial of the model's date `model` in a 1904 workbook: the inverse
/// of [`from_1904`] (the 1900 system's 29 February 1900 becomes 1 March).
fn to_1904(model: f64) -> f64 {
    match model < FIRST_SERIAL_AFTER_LEAP_DAY {
        true => model + 1.0 - DAYS_1900_TO_1904,
        false => model - DAYS_1900_TO_1904,
    }
}
pub use read::read_workbook;
pub use shift::carried_rows_moved;
pub use write::{Rewrite, write_workbook};

/// Why bytes are no readable workbook, said for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReadError(pub String);

/// A reader's failure (calamine's, the zip's, the XML parser's) as a
/// [`ReadError`].
fn unreadable(error: impl std::fmt::Display) -> ReadError {
    ReadError(error.to_string())
}

/// Why a workbook could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The workbook holds something the format or the writer cannot take;
    /// the text says what, in the user's terms.
    #[error("the workbook cannot be rewritten: {0}")]
    Refused(String),
    /// Writing the output (or the writer's temporary files) failed.
    #[error("writing the workbook: {0}")]
    Io(#[from] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_1904_workbooks_skip_the_1900_leap_day_that_never_was() {
        // 1900/01/01, 1900/02/28, 1900/03/01, 1904/01/01.
        for (in_1904, model) in [
            (-1460.0, 1.0),
            (-1402.0, 59.0),
            (-1401.0, 61.0),
            (0.0, 1462.0),
        ] {
            assert_eq!(from_1904(in_1904), model, "{in_1904}");
            assert_eq!(to_1904(model), in_1904, "{model}");
        }
        assert_eq!(from_1904(-1402.5), 58.5, "a time on 1900/02/27");
        assert_eq!(to_1904(58.5), -1402.5);
    }
}
