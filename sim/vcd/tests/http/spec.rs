//! A validator for JSON bodies against the definitions of the CloudAPI
//! Swagger 2.0 spec: `$ref`, `allOf`, required properties, types, enums,
//! arrays and maps. Strict on properties the spec does not declare; lenient
//! on `null`, which VCD sends for absent optional fields.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Value, json};

fn spec_path() -> PathBuf {
    std::env::var_os("VCDSIM_OPENAPI")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/vcd-openapi/cloudapi-37.2.yaml")
        })
}

pub struct Spec {
    definitions: BTreeMap<String, Value>,
}

impl Spec {
    pub fn load() -> Option<Self> {
        let path = spec_path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!(
                "conformance: SKIPPED, the CloudAPI spec is absent at {} (set VCDSIM_OPENAPI)",
                path.display()
            );
            return None;
        };
        let spec: Value = serde_yaml_ng::from_str(&text).expect("the spec is valid YAML");
        let definitions = spec["definitions"]
            .as_object()
            .expect("definitions")
            .clone()
            .into_iter()
            .collect();
        Some(Self { definitions })
    }

    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference
                    .rsplit("#/definitions/")
                    .next()
                    .unwrap_or(reference);
                self.resolve(
                    self.definitions
                        .get(name)
                        .unwrap_or_else(|| panic!("unknown definition {name}")),
                )
            }
            None => schema,
        }
    }

    /// Properties and required names of an object schema, through allOf.
    fn shape(
        &self,
        schema: &Value,
        properties: &mut BTreeMap<String, Value>,
        required: &mut BTreeSet<String>,
    ) {
        let schema = self.resolve(schema);
        for part in schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.shape(part, properties, required);
        }
        if let Some(own) = schema.get("properties").and_then(Value::as_object) {
            properties.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            required.insert(name.as_str().unwrap_or_default().to_string());
        }
    }

    fn validate(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let schema = self.resolve(schema);
        if value.is_null() {
            return; // VCD sends null for absent optional fields.
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            if !allowed.contains(value) {
                errors.push(format!("{at}: {value} is not one of {allowed:?}"));
            }
            return;
        }
        // `{type: object, properties: {}}` is how the spec writes "any JSON value".
        if schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.is_empty())
        {
            return;
        }
        let kind = schema.get("type").and_then(Value::as_str);
        let has_shape = schema.get("properties").is_some() || schema.get("allOf").is_some();
        match kind {
            Some("string") if !value.is_string() => {
                errors.push(format!("{at}: expected a string, got {value}"))
            }
            Some("boolean") if !value.is_boolean() => {
                errors.push(format!("{at}: expected a boolean, got {value}"))
            }
            Some("integer") if !(value.is_i64() || value.is_u64()) => {
                errors.push(format!("{at}: expected an integer, got {value}"))
            }
            Some("number") if !value.is_number() => {
                errors.push(format!("{at}: expected a number, got {value}"))
            }
            Some("array") => match value.as_array() {
                Some(items) => {
                    for (i, item) in items.iter().enumerate() {
                        self.validate(&schema["items"], item, &format!("{at}[{i}]"), errors);
                    }
                }
                None => errors.push(format!("{at}: expected an array, got {value}")),
            },
            _ if has_shape || kind == Some("object") => {
                self.validate_object(schema, value, at, errors)
            }
            _ => {}
        }
    }

    fn validate_object(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let Some(object) = value.as_object() else {
            errors.push(format!("{at}: expected an object, got {value}"));
            return;
        };
        let (mut properties, mut required) = (BTreeMap::new(), BTreeSet::new());
        self.shape(schema, &mut properties, &mut required);
        if properties.is_empty() {
            if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                for (key, item) in object {
                    self.validate(values, item, &format!("{at}.{key}"), errors);
                }
            }
            return; // a free-form object
        }
        for name in &required {
            if object.get(name).is_none_or(Value::is_null) {
                errors.push(format!("{at}: required property {name} is missing"));
            }
        }
        for (key, item) in object {
            match properties.get(key) {
                Some(property) => self.validate(property, item, &format!("{at}.{key}"), errors),
                None => errors.push(format!("{at}: property {key} is not in the spec")),
            }
        }
    }

    pub fn check(&self, definition: &str, value: &Value, what: &str, errors: &mut Vec<String>) {
        let schema = json!({"$ref": format!("#/definitions/{definition}")});
        self.validate(&schema, value, &format!("{what} ({definition})"), errors);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Spec;

    #[test]
    fn the_validator_catches_what_it_should() {
        let Some(spec) = Spec::load() else {
            return;
        };
        let mut errors = Vec::new();
        spec.check(
            "EntityReference",
            &json!({"name": "a", "id": "b"}),
            "ok",
            &mut errors,
        );
        assert!(errors.is_empty(), "{errors:?}");
        spec.check(
            "EntityReference",
            &json!({"name": 1, "bogus": true}),
            "bad",
            &mut errors,
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        errors.clear();
        spec.check("Error", &json!({"message": "m"}), "missing", &mut errors);
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors.clear();
        spec.check(
            "GatewayUsedIpAddress",
            &json!({"category": "NOPE"}),
            "enum",
            &mut errors,
        );
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
}
