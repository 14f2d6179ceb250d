//! ConfigMaps and Secrets: key syntax, `immutable`, and Secret `stringData`.

use super::{Endpoint, KindRules, Peers, check};
use crate::error::FieldError;
use k8s_openapi::ByteString;
use serde_json::Value;

pub struct ConfigMapRules;
pub struct SecretRules;

const DATA_FIELDS: [&str; 2] = ["data", "binaryData"];

fn key_ok(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 253
        && key != "."
        && key != ".."
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn check_keys(object: &Value, fields: &[&str]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for field in fields {
        if let Some(map) = object.get(*field).and_then(Value::as_object) {
            for key in map.keys().filter(|k| !key_ok(k)) {
                errors.push(FieldError::invalid(
                    format!("{field}[{key}]"),
                    format!("\"{key}\""),
                    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                ));
            }
        }
    }
    errors
}

/// Once `immutable: true` is stored, data and the flag itself may not change.
fn check_immutable(old: &Value, new: &Value, fields: &[&str]) -> Vec<FieldError> {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let mut errors = Vec::new();
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errors.push(FieldError::immutable("immutable", "false"));
    }
    for field in fields {
        if old.get(*field) != new.get(*field) {
            errors.push(FieldError::forbidden(
                *field,
                "field is immutable when `immutable` is set",
            ));
        }
    }
    errors
}

impl KindRules for ConfigMapRules {
    fn prepare_create(&self, object: &mut Value, _peers: &Peers) -> Result<(), Vec<FieldError>> {
        check(check_keys(object, &DATA_FIELDS))
    }

    fn prepare_update(
        &self,
        old: &Value,
        new: &mut Value,
        _endpoint: Endpoint,
        _peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        let mut errors = check_keys(new, &DATA_FIELDS);
        errors.extend(check_immutable(old, new, &DATA_FIELDS));
        check(errors)
    }
}

/// Folds write-only `stringData` into base64 `data`, as the API server does.
fn fold_string_data(object: &mut Value) {
    let Some(string_data) = object
        .as_object_mut()
        .and_then(|map| map.remove("stringData"))
    else {
        return;
    };
    let Some(entries) = string_data.as_object() else {
        return;
    };
    let data = crate::object::map_entry(object, "data");
    for (key, value) in entries {
        let text = value.as_str().unwrap_or_default();
        let encoded =
            serde_json::to_value(ByteString(text.as_bytes().to_vec())).unwrap_or(Value::Null);
        data.insert(key.clone(), encoded);
    }
}

fn default_type(object: &mut Value) {
    if let Some(map) = object.as_object_mut() {
        map.entry("type")
            .or_insert_with(|| Value::String("Opaque".into()));
    }
}

fn check_secret_data(object: &Value) -> Vec<FieldError> {
    let mut errors = check_keys(object, &["data"]);
    if let Some(data) = object.get("data").and_then(Value::as_object) {
        for (key, value) in data {
            if serde_json::from_value::<ByteString>(value.clone()).is_err() {
                errors.push(FieldError::invalid(
                    format!("data[{key}]"),
                    value,
                    "must be base64-encoded",
                ));
            }
        }
    }
    errors
}

impl KindRules for SecretRules {
    fn prepare_create(&self, object: &mut Value, _peers: &Peers) -> Result<(), Vec<FieldError>> {
        fold_string_data(object);
        default_type(object);
        check(check_secret_data(object))
    }

    fn prepare_update(
        &self,
        old: &Value,
        new: &mut Value,
        _endpoint: Endpoint,
        _peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        fold_string_data(new);
        default_type(new);
        let mut errors = check_secret_data(new);
        if old.get("type") != new.get("type") {
            errors.push(FieldError::immutable(
                "type",
                new.get("type").unwrap_or(&Value::Null),
            ));
        }
        errors.extend(check_immutable(old, new, &["data"]));
        check(errors)
    }
}
