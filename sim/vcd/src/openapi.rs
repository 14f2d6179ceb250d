//! A validator for JSON bodies against the CloudAPI Swagger 2.0 spec:
//! definitions (`$ref`, `allOf`, required properties, types, enums, arrays
//! and maps) and the request body each operation takes. Strict on
//! properties the spec does not declare; lenient on `null`, which VCD sends
//! for absent optional fields. Tests of vcdsim and of its clients use it to
//! hold both sides of the wire to the spec.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Value, json};

/// Where the spec is read from: `VCDSIM_OPENAPI`, else the copy beside the
/// repository.
pub fn default_path() -> PathBuf {
    std::env::var_os("VCDSIM_OPENAPI")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/vcd-openapi/cloudapi-37.2.yaml")
        })
}

/// One operation that takes a JSON body.
struct Operation {
    method: String,
    /// The path under `basePath`, split at `/`.
    segments: Vec<String>,
    body: Option<Value>,
}

/// The spec's definitions and the request body of each operation.
pub struct Spec {
    definitions: BTreeMap<String, Value>,
    base_path: String,
    operations: Vec<Operation>,
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s.starts_with('{') {
                "{}".to_string()
            } else {
                s.to_string()
            }
        })
        .collect()
}

impl Spec {
    /// The spec at [`default_path`]; `None` (and a line saying the checks
    /// are skipped) when it is absent.
    pub fn load() -> Option<Self> {
        let path = default_path();
        if !path.exists() {
            eprintln!(
                "conformance: SKIPPED, the CloudAPI spec is absent at {} (set VCDSIM_OPENAPI)",
                path.display()
            );
            return None;
        }
        Some(Self::load_from(&path).unwrap_or_else(|e| panic!("{e}")))
    }

    /// Reads and indexes the spec at `path`.
    pub fn load_from(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let spec: Value = serde_yaml_ng::from_str(&text)
            .map_err(|e| format!("{} is not valid YAML: {e}", path.display()))?;
        let definitions = spec["definitions"]
            .as_object()
            .ok_or("the spec has no definitions")?
            .clone()
            .into_iter()
            .collect();
        let mut operations = Vec::new();
        for (path, item) in spec["paths"].as_object().into_iter().flatten() {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let body = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|p| p["in"] == "body")
                    .map(|p| p["schema"].clone());
                operations.push(Operation {
                    method: method.to_ascii_uppercase(),
                    segments: segments(path),
                    body,
                });
            }
        }
        Ok(Self {
            definitions,
            base_path: spec["basePath"].as_str().unwrap_or("/cloudapi").to_string(),
            operations,
        })
    }

    /// Checks a request body sent to `method template` (a route such as
    /// `/cloudapi/1.0.0/loadBalancer/pools/{id}`) against the body the
    /// operation takes. Paths outside `basePath` are not the spec's business.
    pub fn check_request(
        &self,
        method: &str,
        template: &str,
        body: &Value,
        errors: &mut Vec<String>,
    ) {
        let Some(path) = template.strip_prefix(&self.base_path) else {
            return;
        };
        let wanted = segments(path);
        let what = format!("{method} {template} request");
        match self
            .operations
            .iter()
            .find(|o| o.method == method && o.segments == wanted)
        {
            None => errors.push(format!("{what}: the spec has no such operation")),
            Some(Operation { body: None, .. }) if !body.is_null() => {
                errors.push(format!("{what}: the operation takes no body"))
            }
            Some(Operation { body: None, .. }) => {}
            Some(Operation {
                body: Some(schema), ..
            }) => self.validate(schema, body, &what, errors),
        }
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
