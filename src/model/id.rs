//! Spreadsheet identifiers: a UUID in its hyphenated 36-character form.

use std::fmt;

use uuid::Uuid;

/// The id of one spreadsheet; its file is `<lower-case hyphenated uuid>.xlsx`.
/// Ordered as its lower-case hyphenated text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpreadsheetId(Uuid);

impl SpreadsheetId {
    /// Parses a path segment; any letter case, but only the hyphenated form.
    pub fn parse(text: &str) -> Result<SpreadsheetId, &'static str> {
        const RULE: &str = "must be a UUID in its hyphenated 36-character form";
        if text.len() != 36 {
            return Err(RULE);
        }
        Uuid::try_parse(text).map(SpreadsheetId).map_err(|_| RULE)
    }

    /// A new random id.
    pub fn new_random() -> SpreadsheetId {
        SpreadsheetId(Uuid::new_v4())
    }

    pub const fn from_uuid(uuid: Uuid) -> SpreadsheetId {
        SpreadsheetId(uuid)
    }

    /// The workbook's file name in the data directory.
    pub fn file_name(&self) -> String {
        format!("{self}.xlsx")
    }
}

impl fmt::Display for SpreadsheetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_any_case_hyphenated_only() {
        let id = SpreadsheetId::parse("6F9619FF-8B86-D011-B42D-00C04FC964FF").unwrap();
        assert_eq!(id.file_name(), "6f9619ff-8b86-d011-b42d-00c04fc964ff.xlsx");
        assert!(SpreadsheetId::parse("6f9619ff8b86d011b42d00c04fc964ff").is_err());
        assert!(SpreadsheetId::parse("{6f9619ff-8b86-d011-b42d-00c04fc964f}").is_err());
        assert!(SpreadsheetId::parse("not-a-uuid").is_err());
    }
}
