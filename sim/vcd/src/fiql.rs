//! FIQL filters as VCD accepts them: `==` (a `*` wildcard makes it a
//! case-insensitive glob), `!=`, `=lt=`, `=le=`, `=gt=`, `=ge=`; `;` is AND
//! (binds tighter), `,` is OR, parentheses group, `\` escapes a special
//! character inside a value. Fields are dotted paths into the JSON item.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    Compare {
        field: String,
        op: Op,
        value: String,
    },
    And(Vec<Filter>),
    Or(Vec<Filter>),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("QueryParseException: Cannot parse the supplied filter: {0}")]
pub struct FiqlError(String);

const OPERATORS: [(&str, Op); 6] = [
    ("==", Op::Eq),
    ("!=", Op::Ne),
    ("=lt=", Op::Lt),
    ("=le=", Op::Le),
    ("=gt=", Op::Gt),
    ("=ge=", Op::Ge),
];

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    source: &'a str,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> FiqlError {
        FiqlError(format!("{what} at {} in '{}'", self.pos, self.source))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn or(&mut self) -> Result<Filter, FiqlError> {
        let mut terms = vec![self.and()?];
        while self.peek() == Some(',') {
            self.pos += 1;
            terms.push(self.and()?);
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            Filter::Or(terms)
        })
    }

    fn and(&mut self) -> Result<Filter, FiqlError> {
        let mut terms = vec![self.term()?];
        while self.peek() == Some(';') {
            self.pos += 1;
            terms.push(self.term()?);
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            Filter::And(terms)
        })
    }

    fn term(&mut self) -> Result<Filter, FiqlError> {
        if self.peek() == Some('(') {
            self.pos += 1;
            let inner = self.or()?;
            if self.peek() != Some(')') {
                return Err(self.error("missing ')'"));
            }
            self.pos += 1;
            return Ok(inner);
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            self.pos += 1;
        }
        let field: String = self.chars[start..self.pos].iter().collect();
        if field.is_empty() {
            return Err(self.error("expected a field name"));
        }
        let rest: String = self.chars[self.pos..].iter().collect();
        let (text, op) = OPERATORS
            .iter()
            .find(|(text, _)| rest.starts_with(text))
            .ok_or_else(|| self.error("expected an operator"))?;
        self.pos += text.chars().count();
        let mut value = String::new();
        while let Some(c) = self.peek() {
            match c {
                '\\' => {
                    self.pos += 1;
                    value.push(self.peek().ok_or_else(|| self.error("dangling escape"))?);
                }
                ';' | ',' | ')' => break,
                '(' => return Err(self.error("unescaped '(' in a value")),
                _ => value.push(c),
            }
            self.pos += 1;
        }
        Ok(Filter::Compare {
            field,
            op: op.clone(),
            value,
        })
    }
}

impl Filter {
    pub fn parse(text: &str) -> Result<Self, FiqlError> {
        let mut parser = Parser {
            chars: text.chars().collect(),
            pos: 0,
            source: text,
        };
        let filter = parser.or()?;
        if parser.pos != parser.chars.len() {
            return Err(parser.error("unexpected character"));
        }
        Ok(filter)
    }

    /// Takes `field==value` out of the top-level AND (pseudo-fields such as
    /// `gatewayId` that select a scope rather than match items). Returns the
    /// value and what remains of the filter.
    pub fn take_equality(self, name: &str) -> (Option<String>, Option<Filter>) {
        let is_it =
            |f: &Filter| matches!(f, Filter::Compare { field, op: Op::Eq, .. } if field == name);
        let value_of = |f: Filter| match f {
            Filter::Compare { value, .. } => Some(value),
            _ => None,
        };
        match self {
            compare @ Filter::Compare { .. } if is_it(&compare) => (value_of(compare), None),
            Filter::And(terms) => {
                let (taken, rest): (Vec<_>, Vec<_>) = terms.into_iter().partition(is_it);
                let value = taken.into_iter().next().and_then(value_of);
                let rest = match rest.len() {
                    0 => None,
                    1 => rest.into_iter().next(),
                    _ => Some(Filter::And(rest)),
                };
                (value, rest)
            }
            other => (None, Some(other)),
        }
    }

    pub fn matches(&self, item: &Value) -> bool {
        match self {
            Filter::And(terms) => terms.iter().all(|t| t.matches(item)),
            Filter::Or(terms) => terms.iter().any(|t| t.matches(item)),
            Filter::Compare { field, op, value } => compare(lookup(item, field), op, value),
        }
    }
}

/// Follows a dotted path; `None` when absent or null.
pub fn lookup<'a>(item: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(item, |value, key| value.get(key))
        .filter(|v| !v.is_null())
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn compare(actual: Option<&Value>, op: &Op, expected: &str) -> bool {
    let Some(actual) = actual else {
        return matches!(op, Op::Ne) || (matches!(op, Op::Eq) && expected == "null");
    };
    let text = as_text(actual);
    match op {
        Op::Eq => equals(&text, expected),
        Op::Ne => !equals(&text, expected),
        _ => {
            let ordering = match (text.parse::<f64>(), expected.parse::<f64>()) {
                (Ok(a), Ok(b)) => a.partial_cmp(&b),
                _ => Some(text.as_str().cmp(expected)),
            };
            let Some(ordering) = ordering else {
                return false;
            };
            match op {
                Op::Lt => ordering.is_lt(),
                Op::Le => ordering.is_le(),
                Op::Gt => ordering.is_gt(),
                _ => ordering.is_ge(),
            }
        }
    }
}

fn equals(actual: &str, expected: &str) -> bool {
    if expected.contains('*') {
        glob(&actual.to_lowercase(), &expected.to_lowercase())
    } else {
        actual == expected
    }
}

/// `*` matches any run of characters.
fn glob(text: &str, pattern: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matches(filter: &str, item: &Value) -> bool {
        Filter::parse(filter).unwrap().matches(item)
    }

    #[test]
    fn operators_and_combinators() {
        let item = json!({"name": "Web-1", "gatewayRef": {"id": "g1"}, "port": 8080});
        assert!(matches("name==Web-1", &item));
        assert!(!matches("name==web-1", &item));
        assert!(matches("name==web*", &item));
        assert!(matches("name==*EB*", &item));
        assert!(matches("gatewayRef.id==g1;name==Web-1", &item));
        assert!(!matches("gatewayRef.id==g2;name==Web-1", &item));
        assert!(matches("gatewayRef.id==g2,name==Web-1", &item));
        assert!(matches("(name==x,name==Web-1);port=gt=80", &item));
        assert!(matches("port=le=8080;port=ge=8080;port!=1", &item));
        assert!(!matches("missing==x", &item));
        assert!(matches("missing!=x", &item));
    }

    #[test]
    fn escapes_and_errors() {
        let item = json!({"name": "VM,1"});
        assert!(matches("name==VM\\,1", &item));
        for bad in ["", "name", "name=x", "(name==x", "name==x)", "==x"] {
            assert!(Filter::parse(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn pseudo_fields_are_taken_out() {
        let filter = Filter::parse("gatewayId==g1;ipType==IPV4").unwrap();
        let (gateway, rest) = filter.take_equality("gatewayId");
        assert_eq!(gateway.as_deref(), Some("g1"));
        assert_eq!(rest, Some(Filter::parse("ipType==IPV4").unwrap()));
        let (none, rest) = Filter::parse("a==1,b==2").unwrap().take_equality("a");
        assert!(none.is_none() && rest.is_some());
    }
}
