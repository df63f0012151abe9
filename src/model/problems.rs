//! Validation problems with the field path they belong to.
//!
//! Validation gathers every problem of a request instead of stopping at the
//! first one; the HTTP layer turns the whole list into one 400 whose message
//! is `field: rule` pairs joined by `", "` (contract §5).

use std::fmt;

/// One broken rule: `data[3].age` + `must not be an object or array`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub field: String,
    pub rule: String,
}

/// Every problem found in one request, in the order they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems(Vec<Problem>);

impl Problems {
    pub fn new() -> Self {
        Self::default()
    }

    /// A list holding a single problem.
    pub fn one(field: impl Into<String>, rule: impl Into<String>) -> Self {
        let mut problems = Self::new();
        problems.push(field, rule);
        problems
    }

    pub fn push(&mut self, field: impl Into<String>, rule: impl Into<String>) {
        self.0.push(Problem {
            field: field.into(),
            rule: rule.into(),
        });
    }

    pub fn extend(&mut self, other: Problems) {
        self.0.extend(other.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Problem> {
        self.0.iter()
    }

    /// `Ok(value)` when nothing was found, else the problems.
    pub fn into_result<T>(self, value: T) -> Result<T, Problems> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}: {}", problem.field, problem.rule)?;
        }
        Ok(())
    }
}

impl std::error::Error for Problems {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_join_with_comma_space() {
        let mut problems = Problems::one("data", "is required");
        problems.push("type", "must be one of filter or row");
        assert_eq!(
            problems.to_string(),
            "data: is required, type: must be one of filter or row"
        );
    }
}
