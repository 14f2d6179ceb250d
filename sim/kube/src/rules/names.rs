//! Name and label syntax checks shared by every kind.

use crate::error::FieldError;
use serde_json::Value;

/// Which DNS-style syntax a kind's object names must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// Lowercase alphanumerics, `-` and `.`, up to 253 characters (most kinds).
    Subdomain,
    /// Lowercase alphanumerics and `-`, up to 63 characters (namespaces).
    Label,
    /// Like `Label` but starting with a letter (services).
    Rfc1035Label,
}

impl NameRule {
    pub fn check(self, name: &str) -> Result<(), String> {
        let (max, dots, letter_first) = match self {
            Self::Subdomain => (253, true, false),
            Self::Label => (63, false, false),
            Self::Rfc1035Label => (63, false, true),
        };
        let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        let parts_ok = |part: &str| {
            !part.is_empty()
                && part.chars().all(|c| alnum(c) || c == '-')
                && part.starts_with(alnum)
                && part.ends_with(alnum)
        };
        let ok = name.len() <= max
            && if dots {
                name.split('.').all(parts_ok)
            } else {
                parts_ok(name)
            }
            && (!letter_first || name.starts_with(|c: char| c.is_ascii_lowercase()));
        if ok {
            Ok(())
        } else {
            Err(match self {
                Self::Subdomain => "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                Self::Label => "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                Self::Rfc1035Label => "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            }
            .to_string())
        }
    }
}

/// A qualified name part: up to 63 of `[A-Za-z0-9-_.]`, alphanumeric at both ends.
fn qualified_part_ok(part: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    part.len() <= 63
        && part.starts_with(alnum)
        && part.ends_with(alnum)
        && part
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

fn label_key_ok(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => {
            NameRule::Subdomain.check(prefix).is_ok() && qualified_part_ok(name)
        }
        None => qualified_part_ok(key),
    }
}

/// Checks `metadata.labels` keys and values, and that annotations are strings.
pub fn check_labels_and_annotations(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let meta = object.get("metadata");
    if let Some(labels) = meta
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
    {
        for (key, value) in labels {
            if !label_key_ok(key) {
                errors.push(FieldError::invalid(
                    "metadata.labels",
                    format!("\"{key}\""),
                    "name part must consist of alphanumeric characters, '-', '_' or '.'",
                ));
            }
            match value.as_str() {
                Some(v) if v.is_empty() || qualified_part_ok(v) => {}
                _ => errors.push(FieldError::invalid(
                    "metadata.labels",
                    value,
                    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'",
                )),
            }
        }
    }
    if let Some(annotations) = meta
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
    {
        for (key, value) in annotations {
            if !value.is_string() {
                errors.push(FieldError::invalid(
                    format!("metadata.annotations[{key}]"),
                    value,
                    "must be a string",
                ));
            }
        }
    }
    errors
}
