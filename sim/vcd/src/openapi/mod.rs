//! A validator of JSON bodies against the CloudAPI Swagger 2.0 spec:
//! definitions (`$ref`, `allOf`, required properties, types, enums, item
//! and range limits, arrays and maps) and the request body each operation
//! takes. Strict on properties the spec does not declare; lenient on
//! `null`, which VCD sends for absent optional fields. vcdsim's tests and
//! its clients' tests use it to hold both sides of the wire to the spec;
//! the simulator itself never needs the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Properties later API versions add to the 37.2 definitions, as VMware's
/// published reference for those versions lists them: (first version,
/// definition, property, schema). vcdsim's handlers refuse them below
/// that version (`api/alb_virtual_service_versions.rs`).
const ADDED_AFTER_37_2: &[(&str, &str, &str, &str)] = &[(
    "38.0",
    "EdgeLoadBalancerVirtualService",
    "nonCriticalLoggingEnabled",
    r#"{"type": "boolean"}"#,
)];

/// `major.minor` as numbers, so `38.10` sorts after `38.9`.
fn version_key(version: &str) -> (u32, u32) {
    let (major, minor) = version.split_once('.').unwrap_or((version, "0"));
    (major.parse().unwrap_or(0), minor.parse().unwrap_or(0))
}

/// One operation of the spec.
#[derive(Clone)]
struct Operation {
    method: String,
    /// The path under `basePath`, split at `/`, every `{…}` as `{}`.
    segments: Vec<String>,
    /// The schema of the `in: body` parameter, and whether it is required.
    body: Option<(Value, bool)>,
}

/// The spec's definitions and operations, indexed for validation.
#[derive(Clone)]
pub struct Spec {
    definitions: BTreeMap<String, Value>,
    base_path: String,
    operations: Vec<Operation>,
}

/// A path's segments, with every template parameter as `{}` so that
/// `{id}` in a route matches `{poolId}` in the spec.
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
    /// Where the spec is read from: `VCDSIM_OPENAPI`, else the shared copy
    /// beside the repository (`../../../shared/vcd-openapi/cloudapi-37.2.yaml`
    /// from this crate).
    pub fn default_path() -> PathBuf {
        std::env::var_os("VCDSIM_OPENAPI")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../../shared/vcd-openapi/cloudapi-37.2.yaml")
            })
    }

    /// Reads and indexes the spec at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let spec: Value = serde_yaml_ng::from_str(&text)
            .map_err(|e| format!("{} is not valid YAML: {e}", path.display()))?;
        let definitions = spec["definitions"]
            .as_object()
            .ok_or_else(|| format!("{} has no definitions", path.display()))?
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
                    .map(|p| (p["schema"].clone(), p["required"] == true));
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

    /// The spec as API `version` defines it: the 37.2 file plus the
    /// properties versions up to `version` add ([`ADDED_AFTER_37_2`]).
    pub fn at_version(&self, version: &str) -> Spec {
        let mut spec = self.clone();
        for (since, definition, property, schema) in ADDED_AFTER_37_2 {
            if version_key(version) < version_key(since) {
                continue;
            }
            let schema: Value = serde_json::from_str(schema).expect("a schema in JSON");
            let Some(found) = spec.definitions.get_mut(*definition) else {
                continue;
            };
            match found.get_mut("allOf").and_then(Value::as_array_mut) {
                Some(parts) => parts.push(json!({"properties": {*property: schema}})),
                None => {
                    if let Some(properties) = found["properties"].as_object_mut() {
                        properties.insert((*property).to_string(), schema);
                    }
                }
            }
        }
        spec
    }

    /// Checks `value` against the definition named `definition` (a response
    /// body, say), adding one line per violation to `errors`, each starting
    /// with `what`.
    pub fn check(&self, definition: &str, value: &Value, what: &str, errors: &mut Vec<String>) {
        let schema = json!({"$ref": format!("#/definitions/{definition}")});
        self.validate(&schema, value, &format!("{what} ({definition})"), errors);
    }

    /// Checks a request body sent to `method template`, where `template`
    /// is a route such as `/cloudapi/1.0.0/loadBalancer/pools/{id}` (any
    /// `{…}` matches any `{…}` of the spec's path under its `basePath`),
    /// against the body that operation takes. Each error names the JSON
    /// path (`$.healthMonitors[0]`) and what is wrong there: a property the
    /// spec does not define, a wrong type, a value outside an enum, a
    /// missing required property. An operation the spec lacks, or one
    /// that takes no body, is an error too.
    pub fn check_request(
        &self,
        method: &str,
        template: &str,
        body: &Value,
    ) -> Result<(), Vec<String>> {
        let what = format!("{} {template}", method.to_ascii_uppercase());
        let Some(path) = template.strip_prefix(&self.base_path) else {
            return Err(vec![format!(
                "{what}: not under the spec's basePath {}",
                self.base_path
            )]);
        };
        let wanted = segments(path);
        let operation = self
            .operations
            .iter()
            .find(|o| o.method.eq_ignore_ascii_case(method) && o.segments == wanted)
            .ok_or_else(|| vec![format!("{what}: the spec defines no such operation")])?;
        let Some((schema, required)) = &operation.body else {
            return Err(vec![format!("{what}: the operation takes no request body")]);
        };
        if body.is_null() {
            return match required {
                true => Err(vec![format!("{what}: the request body is missing")]),
                false => Ok(()),
            };
        }
        let mut errors = Vec::new();
        self.validate(schema, body, "$", &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into_iter().map(|e| format!("{what}: {e}")).collect())
        }
    }

    /// The definition a `$ref` names.
    fn reference<'a>(&'a self, schema: &'a Value) -> Option<&'a str> {
        let reference = schema.get("$ref")?.as_str()?;
        Some(
            reference
                .rsplit("#/definitions/")
                .next()
                .unwrap_or(reference),
        )
    }

    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match self.reference(schema) {
            Some(name) => self.resolve(
                self.definitions
                    .get(name)
                    .unwrap_or_else(|| panic!("unknown definition {name}")),
            ),
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

    /// `{type: object, properties: {}}` is how the spec writes "any JSON".
    fn is_any(schema: &Value) -> bool {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.is_empty())
    }

    fn validate(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let class = self.reference(schema);
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
        if Self::is_any(schema) {
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
            Some("integer" | "number") => Self::check_range(schema, value, at, errors),
            Some("array") => match value.as_array() {
                Some(items) => {
                    let limit = schema.get("maxItems").and_then(Value::as_u64);
                    if let Some(max) = limit.filter(|max| items.len() as u64 > *max) {
                        errors.push(format!("{at}: {} items, at most {max}", items.len()));
                    }
                    for (i, item) in items.iter().enumerate() {
                        self.validate(&schema["items"], item, &format!("{at}[{i}]"), errors);
                    }
                }
                None => errors.push(format!("{at}: expected an array, got {value}")),
            },
            _ if has_shape || kind == Some("object") => {
                self.validate_object(schema, class, value, at, errors)
            }
            _ => {}
        }
    }

    fn check_range(schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let number = value.as_f64().unwrap_or_default();
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            errors.push(format!("{at}: {value} is below the minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            errors.push(format!("{at}: {value} is above the maximum {max}"));
        }
    }

    fn validate_object(
        &self,
        schema: &Value,
        class: Option<&str>,
        value: &Value,
        at: &str,
        errors: &mut Vec<String>,
    ) {
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
                None => errors.push(format!(
                    "{at}.{key}: property {key} is not defined by {}",
                    class.unwrap_or("the spec")
                )),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
