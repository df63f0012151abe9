//! How a cell looks: number format, font, fill, borders and alignment, as
//! plain data. The store reads these from a package's `styles.xml` and
//! writes them back; the model only carries them along with the cells.
//!
//! Enumerated settings (border styles, alignments, underline kinds) keep
//! the names the xlsx format gives them (`"thin"`, `"center"`, `"single"`),
//! so a reader needs no translation and the writer maps them in one place.

use super::value::{Cell, DATE_TIME_CODE, DateKind, date_kind};

/// A colour as a workbook names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// `0xRRGGBB`.
    Rgb(u32),
    /// An index into the workbook theme's palette, and a tint in
    /// thousandths: −1000 (black) … 0 (the theme colour) … 1000 (white).
    Theme(u8, i16),
}

/// Everything one cell format holds. The default is the workbook's
/// default format: General, the default font, no fill, no borders.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellFormat {
    /// The number format code (`"#,##0.00"`, `"yyyy-mm-dd"`); `None` is General.
    pub num_format: Option<String>,
    pub font: Font,
    pub fill: Fill,
    pub borders: Borders,
    pub alignment: Alignment,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Font {
    pub name: Option<String>,
    /// In points.
    pub size: Option<f64>,
    pub bold: bool,
    pub italic: bool,
    /// `"single"`, `"double"`, `"singleAccounting"`, `"doubleAccounting"`.
    pub underline: Option<String>,
    pub strikethrough: bool,
    pub color: Option<Color>,
    /// `"superscript"` or `"subscript"`; `None` is the baseline.
    pub script: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fill {
    /// `"solid"`, `"gray125"`, `"lightGrid"`…; `None` is no fill.
    pub pattern: Option<String>,
    pub foreground: Option<Color>,
    pub background: Option<Color>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Borders {
    pub left: Border,
    pub right: Border,
    pub top: Border,
    pub bottom: Border,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Border {
    /// `"thin"`, `"medium"`, `"dashed"`, `"double"`…; `None` is no border.
    pub style: Option<String>,
    pub color: Option<Color>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Alignment {
    /// `"left"`, `"center"`, `"right"`, `"fill"`, `"justify"`…
    pub horizontal: Option<String>,
    /// `"top"`, `"center"`, `"bottom"`, `"justify"`, `"distributed"`.
    pub vertical: Option<String>,
    pub wrap: bool,
    pub shrink: bool,
    pub indent: u8,
    /// Degrees, as the xlsx format counts them: 0–90 up, 91–180 down, 255
    /// stacked.
    pub rotation: u16,
}

impl CellFormat {
    /// Whether the format's number format shows a date or a time.
    pub fn shows_date(&self) -> bool {
        self.num_format.as_deref().is_some_and(is_date_format)
    }

    /// What the number format shows of a date-like value.
    pub fn date_parts(&self) -> DateParts {
        self.num_format
            .as_deref()
            .map(date_parts)
            .unwrap_or_default()
    }

    /// Whether the number format is the contract's date-time format, whose
    /// dates read back with their time also at midnight (§9).
    pub fn is_date_time_code(&self) -> bool {
        self.num_format.as_deref() == Some(DATE_TIME_CODE)
    }
}

/// Whether a number format code shows a date or time: it has a date or time
/// token outside quoted text, escapes and `[colour]`/`[$-locale]` brackets.
/// (`[h]` and `[mm]` elapsed-time brackets count as time.)
pub fn is_date_format(code: &str) -> bool {
    let parts = date_parts(code);
    parts.date || parts.time
}

/// The number format a value needs in a cell whose number format shows
/// a date or a time (`shows`) but not as the value's kind would be shown
/// (§9: a new value takes the formats around it only where they fit): a
/// boolean is `TRUE` or `FALSE`, not a date (`General`); a date alone
/// shows its day, not `00:00` (`yyyy/mm/dd`); a time of day alone, or a
/// duration, shows as a time, not a day of 1899 (`hh:mm:ss`,
/// `[h]:mm:ss`). `None` when the format fits, or shows no date or time.
/// (Numbers and timestamps the writer fits itself.)
pub fn misfit_code(cell: &Cell, shows: DateParts) -> Option<&'static str> {
    if !(shows.date || shows.time) {
        return None;
    }
    match cell {
        Cell::Bool(_) => Some("General"),
        Cell::DateTime(serial) => match date_kind(*serial) {
            DateKind::Date if !shows.date => Some("yyyy/mm/dd"),
            DateKind::TimeOfDay if shows.date => Some("hh:mm:ss"),
            _ => None,
        },
        Cell::Duration(_) if shows.date => Some("[h]:mm:ss"),
        _ => None,
    }
}

/// The number format code a cell is written with instead of its cell
/// format's, when the value's kind does not fit that format (§2, §9): the
/// writer writes it so, and `values=formatted` shows it so.
/// - Where the cell format shows no date or time, a date-like value gets
///   the contract's code for its kind (`yyyy/mm/dd`, [`DATE_TIME_CODE`],
///   `hh:mm:ss`, `[h]:mm:ss`).
/// - Where it shows one: a number gets `General`, so that it reads back as
///   a number; a timestamp gets [`DATE_TIME_CODE`] unless the format
///   already shows a date with a nonzero time (`exact`: the format is that
///   code); a date in a cell of that code gets `yyyy/mm/dd`; a value
///   [`misfit_code`] names gets its code, unless the file has the cell so
///   (`kept`).
///
/// The reader takes the cells of [`DATE_TIME_CODE`] for timestamps, so the
/// cells of a file always fit and keep their format.
pub fn written_code(
    cell: &Cell,
    shows: DateParts,
    exact: bool,
    kept: bool,
) -> Option<&'static str> {
    if shows.date || shows.time {
        if let Some(code) = misfit_code(cell, shows).filter(|_| !kept) {
            return Some(code);
        }
        return match cell {
            Cell::Number(_) => Some("General"),
            Cell::Timestamp(serial) => {
                let keeps_time =
                    shows.date && shows.time && date_kind(*serial) == DateKind::DateTime;
                (!exact && !keeps_time).then_some(DATE_TIME_CODE)
            }
            Cell::DateTime(serial) if exact && date_kind(*serial) == DateKind::Date => {
                Some("yyyy/mm/dd")
            }
            _ => None,
        };
    }
    let serial = match cell.value() {
        Cell::DateTime(serial) => *serial,
        Cell::Timestamp(_) => return Some(DATE_TIME_CODE),
        Cell::Duration(_) => return Some("[h]:mm:ss"),
        _ => return None,
    };
    Some(match date_kind(serial) {
        DateKind::Date => "yyyy/mm/dd",
        DateKind::DateTime => DATE_TIME_CODE,
        DateKind::TimeOfDay => "hh:mm:ss",
    })
}

/// Which parts of a date-like value a number format code shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateParts {
    /// A year, month or day.
    pub date: bool,
    /// An hour, minute or second.
    pub time: bool,
}

/// What `code` shows of a date-like value. `m` is a minute next to an `h`
/// or `s` token and a month elsewhere, as spreadsheet apps read it; here
/// a code with hours or seconds counts its `m` as minutes. Only the first
/// section (up to `;`) counts, as calamine reads it: the two must agree on
/// which numbers are dates.
pub fn date_parts(code: &str) -> DateParts {
    let mut parts = DateParts::default();
    let mut month_or_minute = false;
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        match c.to_ascii_lowercase() {
            '"' => {
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                }
            }
            '\\' | '_' | '*' => {
                chars.next();
            }
            ';' => break,
            '[' => {
                let inner: String = chars.by_ref().take_while(|&c| c != ']').collect();
                let lower = inner.to_ascii_lowercase();
                if !lower.is_empty() && lower.chars().all(|c| matches!(c, 'h' | 'm' | 's')) {
                    parts.time = true;
                }
            }
            'y' | 'd' => parts.date = true,
            'h' | 's' => parts.time = true,
            // `AM/PM` and `A/P` show the half of the day: a time (an `a`
            // before `m`, `p` or `/`, as calamine reads it).
            'a' => {
                let next = chars
                    .as_str()
                    .chars()
                    .next()
                    .map(|c| c.to_ascii_lowercase());
                if matches!(next, Some('m' | 'p' | '/')) {
                    parts.time = true;
                }
            }
            'm' => month_or_minute = true,
            _ => {}
        }
    }
    if month_or_minute && !parts.time {
        parts.date = true;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_a_date_or_time_format_does_not_fit_gets_one_that_does() {
        let time = date_parts("hh:mm");
        let date = date_parts("yyyy/mm/dd");
        let elapsed = date_parts("[h]:mm:ss");
        let general = date_parts("0.00");
        let day = Cell::DateTime(45306.0);
        let noon = Cell::DateTime(0.5);
        assert_eq!(misfit_code(&day, time), Some("yyyy/mm/dd"));
        assert_eq!(misfit_code(&day, elapsed), Some("yyyy/mm/dd"));
        assert_eq!(misfit_code(&day, date), None);
        assert_eq!(misfit_code(&noon, date), Some("hh:mm:ss"));
        assert_eq!(misfit_code(&noon, time), None);
        assert_eq!(
            misfit_code(&Cell::DateTime(45306.5), time),
            None,
            "a date-time shown as its time"
        );
        assert_eq!(misfit_code(&Cell::Bool(true), date), Some("General"));
        assert_eq!(misfit_code(&Cell::Duration(1.5), date), Some("[h]:mm:ss"));
        assert_eq!(misfit_code(&Cell::Duration(1.5), elapsed), None);
        assert_eq!(misfit_code(&Cell::Bool(true), general), None);
        assert_eq!(misfit_code(&Cell::Text("x".into()), date), None);
    }

    #[test]
    fn recognises_date_formats() {
        for code in [
            "yyyy-mm-dd",
            "dd/mm/yyyy hh:mm",
            "[h]:mm:ss",
            "mmm d",
            "h:mm AM/PM",
        ] {
            assert!(is_date_format(code), "{code}");
        }
        for code in [
            "General",
            "#,##0.00",
            "\"€\"#,##0.00",
            "0.0%",
            "[Red]0.00",
            "[$-409]#,##0",
            "0.00\\h",
        ] {
            assert!(!is_date_format(code), "{code}");
        }
    }

    #[test]
    fn tells_dates_from_times() {
        let parts = |date, time| DateParts { date, time };
        for (code, expected) in [
            ("yyyy/mm/dd", parts(true, false)),
            ("yyyy/mm/dd hh:mm:ss", parts(true, true)),
            ("mmm yyyy", parts(true, false)),
            ("mmmm", parts(true, false)),
            ("hh:mm", parts(false, true)),
            ("mm:ss", parts(false, true)),
            ("[h]:mm", parts(false, true)),
            ("d/m/yy h:mm AM/PM", parts(true, true)),
            ("\"day\" 0", parts(false, false)),
            ("A/P", parts(false, true)),
            ("am/pm", parts(false, true)),
            ("\"a/p\" 0", parts(false, false)),
            ("0.00;[Red]yyyy", parts(false, false)),
        ] {
            assert_eq!(date_parts(code), expected, "{code}");
        }
    }
}
