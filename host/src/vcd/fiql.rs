//! FIQL filters for CloudAPI lists and the legacy query service. Values are
//! backslash-escaped where FIQL gives a character meaning (`( ) , ; \`);
//! percent-encoding of the whole filter is left to the URL encoder.
//!
//! A `*` in a value is VCD's wildcard and cannot be escaped, so callers that
//! look an object up by name also compare the name exactly on the result.

use std::fmt;

/// A FIQL filter for a `filter` query parameter: comparisons with
/// escaped values, joined by AND (`;`) and OR (`,`). Displays as its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    text: String,
    /// The top level is an OR, which binds looser than AND.
    is_or: bool,
}

fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '(' | ')' | ',' | ';' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Filter {
    fn compare(field: &str, op: &str, value: &str) -> Self {
        Self {
            text: format!("{field}{op}{}", escape(value)),
            is_or: false,
        }
    }

    /// `field==value`. VCD compares case-sensitively unless `value` holds
    /// the `*` wildcard.
    pub fn eq(field: &str, value: &str) -> Self {
        Self::compare(field, "==", value)
    }

    /// `field!=value`.
    pub fn ne(field: &str, value: &str) -> Self {
        Self::compare(field, "!=", value)
    }

    /// Both must hold (`;`).
    pub fn and(self, other: Filter) -> Self {
        Self {
            text: format!("{};{}", self.grouped(), other.grouped()),
            is_or: false,
        }
    }

    /// Either may hold (`,`).
    pub fn or(self, other: Filter) -> Self {
        Self {
            text: format!("{},{}", self.text, other.text),
            is_or: true,
        }
    }

    fn grouped(self) -> String {
        if self.is_or {
            format!("({})", self.text)
        } else {
            self.text
        }
    }

    /// The filter text, before URL encoding.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::Filter;

    #[test]
    fn special_characters_in_values_are_escaped() {
        let filter = Filter::eq("name", "a,b;c(d)e\\f");
        assert_eq!(filter.as_str(), r"name==a\,b\;c\(d\)e\\f");
    }

    #[test]
    fn and_and_or_compose() {
        let filter = Filter::eq("scope", "TENANT").and(Filter::eq("name", "x"));
        assert_eq!(filter.as_str(), "scope==TENANT;name==x");
        let either = Filter::eq("a", "1").or(Filter::eq("b", "2"));
        assert_eq!(either.as_str(), "a==1,b==2");
        let both = either.and(Filter::ne("c", "3"));
        assert_eq!(both.as_str(), "(a==1,b==2);c!=3");
    }
}
