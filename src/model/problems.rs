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

    /// Adds a problem. A `", "` inside its field or rule (user text: a
    /// column named `Last, First`) gets a no-break space, so that the `", "`
    /// joining problems stays unambiguous (contract §5) and the text reads
    /// the same.
    pub fn push(&mut self, field: impl Into<String>, rule: impl Into<String>) {
        self.0.push(Problem {
            field: unambiguous(field.into()),
            rule: unambiguous(rule.into()),
        });
    }

    pub fn extend(&mut self, other: Problems) {
        self.0.extend(other.0);
    }

    /// The problems of a part of a request, named under `field`: `data`
    /// of `operations[1]` becomes `operations[1].data`.
    pub fn within(self, field: &str) -> Problems {
        let named = self.0.into_iter().map(|problem| Problem {
            field: match problem.field.as_str() {
                "" => field.to_owned(),
                own => format!("{field}.{own}"),
            },
            rule: problem.rule,
        });
        Problems(named.collect())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Problem> {
        self.0.iter()
    }

    /// Both values, or the problems of either, the first's first: two
    /// parts of a request checked apart are answered together.
    pub fn both<A, B>(a: Result<A, Problems>, b: Result<B, Problems>) -> Result<(A, B), Problems> {
        match (a, b) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            (a, b) => {
                let mut problems = a.err().unwrap_or_default();
                problems.extend(b.err().unwrap_or_default());
                Err(problems)
            }
        }
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

/// `text` with every `", "` written `",\u{a0}"`.
fn unambiguous(text: String) -> String {
    if text.contains(", ") {
        text.replace(", ", ",\u{a0}")
    } else {
        text
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

    #[test]
    fn problems_within_a_part_are_named_under_it() {
        let mut problems = Problems::one("data[0].qty", "is not a column of the sheet");
        problems.push("", "must be an object");
        assert_eq!(
            problems.within("operations[2]").to_string(),
            "operations[2].data[0].qty: is not a column of the sheet, operations[2]: must be an object"
        );
    }

    #[test]
    fn a_comma_inside_one_problem_never_reads_as_a_separator() {
        let mut problems = Problems::one("data[0].Last, First", "is not a column of the sheet");
        problems.push("filter", "column \"a, b\" is not a column of the sheet");
        let text = problems.to_string();
        assert_eq!(text.split(", ").count(), 2, "{text}");
        assert!(text.starts_with("data[0].Last,\u{a0}First: "), "{text}");
    }
}
