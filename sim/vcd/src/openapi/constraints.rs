//! The walk of a value along its schema, and the wording of each broken
//! constraint: the JSON path, what was found, the keyword and its bound
//! (`$.members: 101 items, maxItems 100`). The generator of violations
//! (`violations.rs`) words what it expects with the same functions.

use std::fmt;

use serde_json::Value;

use super::{Spec, property};

/// A constraint keyword of the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Constraint {
    Type,
    Enum,
    Required,
    MaxItems,
    MinItems,
    MaxLength,
    MinLength,
    Minimum,
    Maximum,
    Pattern,
}

impl Constraint {
    /// The keyword as the spec spells it.
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Type => "type",
            Self::Enum => "enum",
            Self::Required => "required",
            Self::MaxItems => "maxItems",
            Self::MinItems => "minItems",
            Self::MaxLength => "maxLength",
            Self::MinLength => "minLength",
            Self::Minimum => "minimum",
            Self::Maximum => "maximum",
            Self::Pattern => "pattern",
        }
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// A value as a message quotes it: JSON, cut at 80 characters.
fn quote(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

pub(super) fn items(at: &str, count: usize, kind: Constraint, bound: &Value) -> String {
    format!("{at}: {count} items, {kind} {bound}")
}

pub(super) fn length(at: &str, count: usize, kind: Constraint, bound: &Value) -> String {
    format!("{at}: {count} characters, {kind} {bound}")
}

/// `minimum` (or `maximum`) broken; `exclusive` when the spec's
/// `exclusiveMinimum` (`exclusiveMaximum`) is true, so the bound itself
/// is out.
pub(super) fn range(
    at: &str,
    value: &Value,
    kind: Constraint,
    bound: &Value,
    exclusive: bool,
) -> String {
    let (side, exclusive_keyword) = match kind {
        Constraint::Minimum => ("below", "exclusiveMinimum"),
        _ => ("above", "exclusiveMaximum"),
    };
    match exclusive {
        true => format!("{at}: {value} is not {side} {kind} {bound} ({exclusive_keyword})"),
        false => format!("{at}: {value} is {side} {kind} {bound}"),
    }
}

pub(super) fn not_in_enum(at: &str, value: &Value, allowed: &Value) -> String {
    format!("{at}: {} is not one of {allowed} (enum)", quote(value))
}

/// `at` is the path of the missing property itself.
pub(super) fn required(at: &str) -> String {
    format!("{at}: required property missing (required)")
}

pub(super) fn mismatch(at: &str, value: &Value, pattern: &str) -> String {
    format!(
        "{at}: {} does not match pattern {pattern} (pattern)",
        quote(value)
    )
}

fn wrong_type(at: &str, expected: &str, value: &Value) -> String {
    format!("{at}: expected {expected}, got {} (type)", quote(value))
}

/// Whether `number` breaks the `minimum` (`maximum`) of `schema`.
pub(super) fn out_of_range(
    schema: &Value,
    number: f64,
    kind: Constraint,
) -> Option<(&Value, bool)> {
    let (keyword, exclusive) = match kind {
        Constraint::Minimum => ("minimum", "exclusiveMinimum"),
        _ => ("maximum", "exclusiveMaximum"),
    };
    let bound = schema.get(keyword)?;
    let limit = bound.as_f64()?;
    let exclusive = schema.get(exclusive) == Some(&Value::Bool(true));
    let out = match (kind, exclusive) {
        (Constraint::Minimum, false) => number < limit,
        (Constraint::Minimum, true) => number <= limit,
        (_, false) => number > limit,
        (_, true) => number >= limit,
    };
    out.then_some((bound, exclusive))
}

impl Spec {
    /// Checks `value` against `schema` at the JSON path `at` (a buffer
    /// the walk extends and restores). `strict` also refuses properties
    /// the schema does not define.
    pub(super) fn validate(
        &self,
        schema: &Value,
        value: &Value,
        at: &mut String,
        strict: bool,
        errors: &mut Vec<String>,
    ) {
        let class = self.reference(schema);
        let schema = self.resolve(schema);
        if value.is_null() {
            return; // VCD sends null for absent optional fields.
        }
        if let Some(allowed) = schema.get("enum").filter(|e| e.is_array()) {
            if !allowed.as_array().is_some_and(|a| a.contains(value)) {
                errors.push(not_in_enum(at, value, allowed));
            }
            return;
        }
        if Self::is_any(schema) {
            return;
        }
        let kind = schema.get("type").and_then(Value::as_str);
        let has_shape = schema.get("properties").is_some() || schema.get("allOf").is_some();
        match kind {
            Some("string") => match value.as_str() {
                Some(text) => self.check_string(schema, value, text, at, errors),
                None => errors.push(wrong_type(at, "a string", value)),
            },
            Some("boolean") if !value.is_boolean() => {
                errors.push(wrong_type(at, "a boolean", value))
            }
            Some("integer") if !(value.is_i64() || value.is_u64()) => {
                errors.push(wrong_type(at, "an integer", value))
            }
            Some("number") if !value.is_number() => errors.push(wrong_type(at, "a number", value)),
            Some("integer" | "number") => {
                let number = value.as_f64().unwrap_or_default();
                for kind in [Constraint::Minimum, Constraint::Maximum] {
                    if let Some((bound, exclusive)) = out_of_range(schema, number, kind) {
                        errors.push(range(at, value, kind, bound, exclusive));
                    }
                }
            }
            Some("array") => match value.as_array() {
                Some(list) => {
                    self.check_count(schema, list.len(), at, errors);
                    let len = at.len();
                    for (i, item) in list.iter().enumerate() {
                        use std::fmt::Write;
                        let _ = write!(at, "[{i}]");
                        self.validate(&schema["items"], item, at, strict, errors);
                        at.truncate(len);
                    }
                }
                None => errors.push(wrong_type(at, "an array", value)),
            },
            _ if has_shape || kind == Some("object") => {
                self.validate_object(schema, class, value, at, strict, errors)
            }
            _ => {}
        }
    }

    fn check_count(&self, schema: &Value, count: usize, at: &str, errors: &mut Vec<String>) {
        if let Some(max) = schema
            .get("maxItems")
            .filter(|m| m.as_u64() < Some(count as u64))
        {
            errors.push(items(at, count, Constraint::MaxItems, max));
        }
        if let Some(min) = schema
            .get("minItems")
            .filter(|m| m.as_u64() > Some(count as u64))
        {
            errors.push(items(at, count, Constraint::MinItems, min));
        }
    }

    fn check_string(
        &self,
        schema: &Value,
        value: &Value,
        text: &str,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        let limits = [Constraint::MaxLength, Constraint::MinLength]
            .map(|kind| (kind, schema.get(kind.keyword()).filter(|b| b.is_u64())));
        if limits.iter().any(|(_, bound)| bound.is_some()) {
            let count = text.chars().count() as u64;
            for (kind, bound) in limits {
                let Some(bound) = bound else { continue };
                let limit = bound.as_u64().unwrap_or_default();
                let broken = match kind {
                    Constraint::MaxLength => count > limit,
                    _ => count < limit,
                };
                if broken {
                    errors.push(length(at, count as usize, kind, bound));
                }
            }
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && let Some(Some(regex)) = self.patterns.get(pattern)
            && !regex.is_match(text)
        {
            errors.push(mismatch(at, value, pattern));
        }
    }

    fn validate_object(
        &self,
        schema: &Value,
        class: Option<&str>,
        value: &Value,
        at: &mut String,
        strict: bool,
        errors: &mut Vec<String>,
    ) {
        let Some(object) = value.as_object() else {
            errors.push(wrong_type(at, "an object", value));
            return;
        };
        let (mut properties, mut required_names) = (Vec::new(), Vec::new());
        self.shape(schema, &mut properties, &mut required_names);
        let len = at.len();
        if properties.is_empty() {
            if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                for (key, item) in object {
                    at.push('.');
                    at.push_str(key);
                    self.validate(values, item, at, strict, errors);
                    at.truncate(len);
                }
            }
            return; // a free-form object
        }
        for name in &required_names {
            if object.get(*name).is_none_or(Value::is_null) {
                errors.push(required(&format!("{at}.{name}")));
            }
        }
        for (key, item) in object {
            at.push('.');
            at.push_str(key);
            match property(&properties, key) {
                Some(property) => self.validate(property, item, at, strict, errors),
                None if strict => errors.push(format!(
                    "{at}: property {key} is not defined by {}",
                    class.unwrap_or("the spec")
                )),
                None => {}
            }
            at.truncate(len);
        }
    }
}
