//! Label and field selectors, parsed from query strings and matched against objects.

use crate::error::ApiError;
use crate::object::{get_path, labels};
use crate::resources::ResourceType;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum LabelRequirement {
    Exists(String),
    NotExists(String),
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

/// A parsed `labelSelector`: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<LabelRequirement>);

/// Splits at commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn parse_set(text: &str) -> Option<Vec<String>> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_string()).collect())
}

fn parse_requirement(term: &str) -> Option<LabelRequirement> {
    use LabelRequirement as R;
    if let Some(key) = term.strip_prefix('!') {
        return Some(R::NotExists(key.trim().to_string()));
    }
    let key_end = term
        .find(|c: char| c.is_whitespace() || "=!<>(".contains(c))
        .unwrap_or(term.len());
    let key = term[..key_end].to_string();
    if key.is_empty() {
        return None;
    }
    let rest = term[key_end..].trim_start();
    if rest.is_empty() {
        return Some(R::Exists(key));
    }
    let value = |op: &str| rest[op.len()..].trim().to_string();
    if rest.starts_with("==") {
        Some(R::Equals(key, value("==")))
    } else if rest.starts_with("!=") {
        Some(R::NotEquals(key, value("!=")))
    } else if rest.starts_with('=') {
        Some(R::Equals(key, value("=")))
    } else if rest.starts_with('>') {
        value(">").parse().ok().map(|n| R::GreaterThan(key, n))
    } else if rest.starts_with('<') {
        value("<").parse().ok().map(|n| R::LessThan(key, n))
    } else if let Some(set) = rest.strip_prefix("notin") {
        parse_set(set).map(|values| R::NotIn(key, values))
    } else if let Some(set) = rest.strip_prefix("in") {
        parse_set(set).map(|values| R::In(key, values))
    } else {
        None
    }
}

impl LabelSelector {
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        split_terms(text)
            .into_iter()
            .map(|term| {
                parse_requirement(term).ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "unable to parse requirement: found '{term}', expected a label selector requirement"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    pub fn matches(&self, object: &Value) -> bool {
        let labels = labels(object);
        let get = |key: &str| labels.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        self.0.iter().all(|req| match req {
            LabelRequirement::Exists(k) => get(k).is_some(),
            LabelRequirement::NotExists(k) => get(k).is_none(),
            LabelRequirement::Equals(k, v) => get(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            LabelRequirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelRequirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            LabelRequirement::GreaterThan(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            LabelRequirement::LessThan(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
struct FieldRequirement {
    path: &'static str,
    value: String,
    equal: bool,
}

/// A parsed `fieldSelector` over the fields a resource supports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<FieldRequirement>);

impl FieldSelector {
    pub fn parse(text: &str, resource: &ResourceType) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for term in split_terms(text) {
            let (label, value, equal) = if let Some((l, v)) = term.split_once("!=") {
                (l, v, false)
            } else if let Some((l, v)) = term.split_once("==") {
                (l, v, true)
            } else if let Some((l, v)) = term.split_once('=') {
                (l, v, true)
            } else {
                return Err(ApiError::BadRequest(format!(
                    "invalid selector: '{text}'; can't understand '{term}'"
                )));
            };
            let label = label.trim();
            let path = resource.field_path(label).ok_or_else(|| {
                ApiError::BadRequest(format!("field label not supported: {label}"))
            })?;
            requirements.push(FieldRequirement {
                path,
                value: value.trim().to_string(),
                equal,
            });
        }
        Ok(Self(requirements))
    }

    /// Matches against the served form; a missing field reads as "".
    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|req| {
            let actual = match get_path(object, req.path) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            (actual == req.value) == req.equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({"metadata": {"labels": labels}})
    }

    #[test]
    fn set_based_and_equality_requirements_combine() {
        let selector = LabelSelector::parse("app in (web, api),tier!=db,!legacy,env").unwrap();
        assert!(selector.matches(&labelled(json!({"app": "web", "env": "prod"}))));
        assert!(!selector.matches(&labelled(json!({"app": "web"}))));
        assert!(!selector.matches(&labelled(json!({"app": "web", "env": "x", "legacy": "1"}))));
        assert!(!selector.matches(&labelled(json!({"app": "web", "env": "x", "tier": "db"}))));
        let notin = LabelSelector::parse("app notin (web)").unwrap();
        assert!(notin.matches(&labelled(json!({}))));
        assert!(!notin.matches(&labelled(json!({"app": "web"}))));
    }

    #[test]
    fn malformed_selectors_are_rejected() {
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("=x").is_err());
    }
}
